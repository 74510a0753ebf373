/**
 * What `status` reads from the cluster, as JSON: a Function, the objects the Function controller
 * creates for it, and how a Function picks its own objects out of a list of them.
 */
import { FunctionChildLabel } from '../../api/function-status';

/** A condition of a Function (or of a Job or Deployment), as JSON. */
export interface ResourceCondition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/** The metadata fields the status reads. */
export interface ResourceMetadata {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly labels?: { readonly [key: string]: string };
}

/** A Function as JSON, with the fields the status reads. */
export interface FunctionResource {
  readonly metadata?: ResourceMetadata;
  readonly spec?: {
    readonly runtime?: string;
    readonly source?: {
      readonly inline?: { readonly source?: string; readonly dependencies?: string };
      readonly gitRepository?: { readonly url?: string; readonly baseDir?: string; readonly reference?: string };
    };
    readonly replicas?: number;
    readonly scaleConfig?: { readonly minReplicas?: number; readonly maxReplicas?: number };
  };
  readonly status?: {
    readonly conditions?: readonly ResourceCondition[];
    /** Not written by the 1.11.1 controller; honoured when a later one writes it. */
    readonly observedGeneration?: number;
    /** The runtime the status is of. */
    readonly runtime?: string;
    /** Git Functions: the baseDir and reference the sources were fetched from. */
    readonly baseDir?: string;
    readonly reference?: string;
    readonly replicas?: number;
  };
}

/** An object the controller created for a Function (ConfigMap, Job, Deployment, Service, HPA), as JSON. */
export interface ChildResource {
  readonly metadata?: ResourceMetadata;
  /** ConfigMaps: the inline Function's `source` and `dependencies`. */
  readonly data?: { readonly [key: string]: string };
  readonly spec?: { readonly replicas?: number };
  readonly status?: {
    readonly conditions?: readonly ResourceCondition[];
    /** Jobs: set when the Job succeeded. */
    readonly completionTime?: string;
    readonly active?: number;
    readonly succeeded?: number;
    readonly failed?: number;
    /** Deployments. */
    readonly replicas?: number;
    readonly readyReplicas?: number;
  };
}

/**
 * The objects of the controller, per kind. They may include other Functions' objects: each
 * Function picks its own by the {@link FunctionChildLabel} labels. A kind left out is one that could
 * not be listed; the progress then comes from the conditions alone.
 */
export interface FunctionChildren {
  /** @default - not known */
  readonly configMaps?: readonly ChildResource[];
  /** @default - not known */
  readonly jobs?: readonly ChildResource[];
  /** @default - not known */
  readonly deployments?: readonly ChildResource[];
  /** @default - not known */
  readonly services?: readonly ChildResource[];
  /** @default - not known */
  readonly horizontalPodAutoscalers?: readonly ChildResource[];
}

/**
 * A timestamp of the API, in milliseconds since the epoch; 0 when missing or not a time.
 *
 * @internal
 */
export const time = (value: string | undefined): number => (value ? Date.parse(value) || 0 : 0);

/**
 * The Function's own objects of a kind, oldest first: its name's label, its namespace, and its uid where labelled.
 *
 * Any object labelled with the Function's name qualifies, not only the controller's.
 *
 * @returns `undefined` when the kind is not known
 * @internal
 */
export function ownChildren<T extends { readonly metadata?: ResourceMetadata }>(fn: FunctionResource, items: readonly T[] | undefined): T[] | undefined {
  if (!items) return undefined;
  const { name, namespace, uid } = fn.metadata ?? {};
  const matches = (actual: string | undefined, expected: string | undefined) => expected === undefined || actual === undefined || actual === expected;
  return items
    .filter(child => child.metadata?.labels?.[FunctionChildLabel.FUNCTION_NAME] === name
      && matches(child.metadata?.namespace, namespace)
      && matches(child.metadata?.labels?.[FunctionChildLabel.UUID], uid))
    .sort((a, b) => time(a.metadata?.creationTimestamp) - time(b.metadata?.creationTimestamp)
      || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

/**
 * The newest of a Function's own objects of a kind (see {@link ownChildren}).
 *
 * @internal
 */
export const newest = <T>(items: readonly T[] | undefined): T | undefined => items?.[items.length - 1];
