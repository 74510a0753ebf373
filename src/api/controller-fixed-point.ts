/**
 * Where the 1.11.1 Function Controller and the API server disagree about a Function's Deployment.
 *
 * On every reconcile the controller builds the Deployment it wants from the Function and compares
 * it with the one the API server stored. Most fields it compares by value, but `env` it compares by
 * the Go string form of each `valueFrom` (`envsEqual` in upstream's
 * `components/serverless/internal/controllers/serverless/utils.go`). The API server fills in
 * defaults when it stores a Pod template, so a field the Function leaves out, and the API server
 * defaults, reads differently on the two sides for ever: the controller updates the Deployment
 * about once a second (the API server stores nothing new, so its generation stays), sets `Running`
 * to Unknown with `DeploymentUpdated`, and never goes on to create the Service.
 *
 * A Function is a fixed point when it already holds every such default: then what the controller
 * builds equals what the API server stores. Synth writes Functions that way, the defaulting webhook
 * and our CRD's schema fill the defaults in, `validate` names a Function that lacks one, and
 * `status` explains a Function stuck in the loop. Found with the real 1.11.1 controller against a
 * real API server; `fieldRef.apiVersion` is the only such field it showed.
 */
import { isObject } from './_json';

/** What the API server writes into `env[].valueFrom.fieldRef.apiVersion` when it is left out. */
export const FIELD_REF_API_VERSION = 'v1';

/** A field of a Function that the API server defaults in its Deployment, and that the Function leaves out. */
export interface ServerDefaultedField {
  /** The field's path in the Function, such as `spec.env[1].valueFrom.fieldRef.apiVersion`. */
  readonly path: string;
  /** The environment variable it belongs to. */
  readonly env: string;
  /** What the API server writes there. */
  readonly value: string;
}

/** Whether a `fieldRef` lacks the `apiVersion` the API server would write into the Deployment. */
function lacksApiVersion(fieldRef: unknown): fieldRef is { [key: string]: unknown } {
  return isObject(fieldRef) && (fieldRef.apiVersion === undefined || fieldRef.apiVersion === null || fieldRef.apiVersion === '');
}

/**
 * The fields of a Function's `spec.env` that the API server defaults in the Deployment and the
 * 1.11.1 controller compares as text: each one keeps the controller updating the Deployment for ever.
 *
 * @param env `spec.env` of a Function (anything else gives no fields)
 * @returns one entry per field left out, in the order of `env`
 */
export function serverDefaultedFields(env: unknown): ServerDefaultedField[] {
  if (!Array.isArray(env)) return [];
  return env.flatMap((variable, i) => (isObject(variable) && isObject(variable.valueFrom) && lacksApiVersion(variable.valueFrom.fieldRef)
    ? [{ path: `spec.env[${i}].valueFrom.fieldRef.apiVersion`, env: String(variable.name), value: FIELD_REF_API_VERSION }]
    : []));
}

/**
 * Fills in a `fieldRef`'s `apiVersion` the way the API server does, so that the Function's env
 * reads the same as its Deployment's.
 *
 * @param fieldRef a `valueFrom.fieldRef`
 * @returns a copy with `apiVersion`, or the same object when it has one (or is no object)
 */
export function withFieldRefDefaults<T>(fieldRef: T): T {
  return lacksApiVersion(fieldRef) ? { ...fieldRef, apiVersion: FIELD_REF_API_VERSION } as T : fieldRef;
}

/**
 * Fills in every field of a Function's `spec.env` that the API server defaults in the Deployment
 * (see {@link serverDefaultedFields}).
 *
 * @param env `spec.env` of a Function
 * @returns a copy with the defaults, or `env` itself when nothing is missing (or it is no list)
 */
export function withServerDefaults<T>(env: T): T {
  if (!serverDefaultedFields(env).length) return env;
  return (env as unknown as unknown[]).map(variable => (isObject(variable) && isObject(variable.valueFrom)
    ? { ...variable, valueFrom: { ...variable.valueFrom, fieldRef: withFieldRefDefaults(variable.valueFrom.fieldRef) } }
    : variable)) as unknown as T;
}
