/**
 * Where the 1.11.1 Function Controller and the API server disagree about a Function's Deployment.
 *
 * On every reconcile the controller builds the Deployment it wants from the Function and compares
 * it with the one the API server stored. Most fields it compares by value, but `env` it compares by
 * the Go string form of each `valueFrom` (`envsEqual` in upstream's
 * `components/serverless/internal/controllers/serverless/utils.go`). A field the Function leaves out
 * and the stored Deployment holds reads differently on the two sides for ever: the controller
 * updates the Deployment about once a second (the API server stores nothing new, so its generation
 * stays), sets `Running` to Unknown with `DeploymentUpdated`, and never goes on to the Service.
 *
 * Two such fields showed up with the real 1.11.1 controller against a real API server:
 * - `fieldRef.apiVersion`, which the API server defaults to `v1`;
 * - `resourceFieldRef.divisor`, which the stored Deployment holds as `"0"` (an unset quantity) and
 *   the controller's own copy holds as no quantity at all, which print differently.
 *
 * A Function is a fixed point when it gives both: then what the controller builds equals what the
 * API server stores. Synth writes Functions that way, the defaulting webhook and our CRD's schema fill
 * them in, `validate` names a Function that lacks one, and `status` explains a Function stuck in
 * the loop.
 */
import { isObject, showJson } from './_json';

/** What the API server writes into `env[].valueFrom.fieldRef.apiVersion` when it is left out. */
export const FIELD_REF_API_VERSION = 'v1';

/** `env[].valueFrom.resourceFieldRef.divisor` when it is left out: 1, the unit Kubernetes assumes. */
export const RESOURCE_FIELD_REF_DIVISOR = '1';

/** One field of an env source that the Function must give for the controller's comparison to settle. */
interface ComparedDefault {
  /** The source in `valueFrom`. */
  readonly source: 'fieldRef' | 'resourceFieldRef';
  readonly field: 'apiVersion' | 'divisor';
  /** What the Function should hold. */
  readonly value: string;
  /** What the variable does without it, for messages. */
  readonly without: string;
  /** Why the two sides differ, for messages. */
  readonly why: string;
}

const COMPARED_DEFAULTS: readonly ComparedDefault[] = [
  {
    source: 'fieldRef', field: 'apiVersion', value: FIELD_REF_API_VERSION,
    without: 'selects a Pod field without apiVersion', why: `the API server stores apiVersion "${FIELD_REF_API_VERSION}" in the Function's Deployment`,
  },
  {
    source: 'resourceFieldRef', field: 'divisor', value: RESOURCE_FIELD_REF_DIVISOR,
    without: 'selects a resource without divisor', why: 'the Function\'s Deployment holds divisor "0" where the Function has none',
  },
];

/** A field of a Function's env that the API server fills in the Deployment, and that the Function leaves out. */
export interface ServerDefaultedField {
  /** The field's path in the Function, such as `spec.env[1].valueFrom.fieldRef.apiVersion`. */
  readonly path: string;
  /** The environment variable it belongs to. */
  readonly env: string;
  /** The value to give it. */
  readonly value: string;
  /** What is wrong: the variable, what it leaves out, and why the two sides differ. */
  readonly cause: string;
}

/** Whether a source lacks the field (absent, null or empty). */
function lacks(source: unknown, field: string): source is { [key: string]: unknown } {
  return isObject(source) && (source[field] === undefined || source[field] === null || source[field] === '');
}

/**
 * The fields of a Function's `spec.env` that the stored Deployment holds and the Function leaves out,
 * while the 1.11.1 controller compares env as text: each one keeps it updating the Deployment for ever.
 *
 * @param env `spec.env` of a Function (anything else gives no fields)
 * @returns one entry per field left out, in the order of `env`
 */
export function serverDefaultedFields(env: unknown): ServerDefaultedField[] {
  if (!Array.isArray(env)) return [];
  const fields: ServerDefaultedField[] = [];
  // Without a list per variable: most have no valueFrom.
  env.forEach((variable, i) => {
    if (!isObject(variable) || !isObject(variable.valueFrom)) return;
    const valueFrom = variable.valueFrom;
    // The name as the message shows it; the schema's check reports a name that is no string.
    const name = typeof variable.name === 'string' ? variable.name : showJson(variable.name);
    for (const d of COMPARED_DEFAULTS) {
      if (!lacks(valueFrom[d.source], d.field)) continue;
      fields.push({ path: `spec.env[${i}].valueFrom.${d.source}.${d.field}`, env: name, value: d.value, cause: `env ${JSON.stringify(name)} ${d.without}; ${d.why}` });
    }
  });
  return fields;
}

/**
 * Fills in what the controller's comparison needs in one `valueFrom` (see {@link serverDefaultedFields}).
 *
 * @param valueFrom an env var's `valueFrom`
 * @returns a copy with the fields filled in, or the same object when nothing is missing (or it is no object)
 */
export function withValueFromDefaults<T>(valueFrom: T): T {
  if (!isObject(valueFrom)) return valueFrom;
  const missing = COMPARED_DEFAULTS.filter(d => lacks(valueFrom[d.source], d.field));
  if (!missing.length) return valueFrom;
  const result: { [key: string]: unknown } = { ...valueFrom };
  for (const d of missing) result[d.source] = { ...(result[d.source] as object), [d.field]: d.value };
  return result as T;
}

/**
 * Fills in every field of a Function's `spec.env` that the controller's comparison needs (see
 * {@link serverDefaultedFields}).
 *
 * @param env `spec.env` of a Function
 * @returns a copy with the fields filled in, or `env` itself when nothing is missing (or it is no list)
 */
export function withServerDefaults<T>(env: T): T {
  if (!serverDefaultedFields(env).length) return env;
  return (env as unknown as unknown[]).map(variable => (isObject(variable) && isObject(variable.valueFrom)
    ? { ...variable, valueFrom: withValueFromDefaults(variable.valueFrom) }
    : variable)) as unknown as T;
}
