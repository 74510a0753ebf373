/**
 * What `status` reads from the cluster, as JSON: a Function, the objects the Function controller
 * creates for it, the objects synth emits beside it to reach it or to scale it, and how a Function
 * picks its own objects out of a list of them.
 */
import { FunctionChildLabel } from '../../api/function-status';
import { FUNCTION_LABEL } from '../../api/labels';

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
  readonly annotations?: { readonly [key: string]: string };
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
    /** The Function's environment variables, as the Function gives them. */
    readonly env?: readonly unknown[];
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
    /** Git Functions under 1.13.0: what the controller resolved, the commit recorded once the Deployment is ready. */
    readonly gitRepository?: { readonly url?: string; readonly baseDir?: string; readonly reference?: string; readonly commit?: string };
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

/** A Gateway API `parentRef`, and the `parentRef` of a route's status. */
export interface ParentReference {
  readonly group?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly sectionName?: string;
  readonly port?: number;
}

/**
 * An object synth emits to reach a Function (an APIRule, VirtualService, HTTPRoute or Subscription),
 * as JSON, with the fields the status reads.
 */
export interface ReachResource {
  readonly metadata?: ResourceMetadata;
  readonly spec?: {
    /** HTTPRoutes: the Gateways it attaches to. */
    readonly parentRefs?: readonly ParentReference[];
    /** Subscriptions: the event types. */
    readonly types?: readonly string[];
    /** Subscriptions: where events are delivered. */
    readonly sink?: string;
  };
  readonly status?: {
    /** APIRules (v2): `Processing`, `Deleting`, `Ready`, `Error` or `Warning`. */
    readonly state?: string;
    /** APIRules: why the state is what it is. */
    readonly description?: string;
    /** APIRules: when the API Gateway controller last processed it. */
    readonly lastProcessedTime?: string;
    /** Subscriptions: whether the eventing manager delivers its events. */
    readonly ready?: boolean;
    /** Subscriptions; VirtualServices, with Istio's status feature on (`Reconciled`). */
    readonly conditions?: readonly ResourceCondition[];
    /** HTTPRoutes: one entry per parent and Gateway controller. */
    readonly parents?: readonly {
      readonly parentRef?: ParentReference;
      readonly controllerName?: string;
      readonly conditions?: readonly (ResourceCondition & { readonly observedGeneration?: number })[];
    }[];
    /** VirtualServices, with Istio's status feature on: the analyzers' findings. */
    readonly validationMessages?: readonly {
      readonly level?: string;
      readonly type?: { readonly code?: string; readonly name?: string };
      readonly documentationUrl?: string;
    }[];
    /** VirtualServices, with Istio's status feature on: the generation the status is of (an int64, so JSON may give a string). */
    readonly observedGeneration?: number | string;
  };
}

/**
 * A KEDA ScaledObject (`keda.sh/v1alpha1`) that synth emits beside a Function with `keda`, as JSON,
 * with the fields the status reads.
 */
export interface ScaledObjectResource {
  readonly metadata?: ResourceMetadata;
  readonly spec?: {
    /** What it scales: the Function (`kind: Function`) of its name. */
    readonly scaleTargetRef?: { readonly apiVersion?: string; readonly kind?: string; readonly name?: string };
    readonly minReplicaCount?: number;
    readonly maxReplicaCount?: number;
  };
  readonly status?: {
    /** KEDA's `Ready`, `Active` (a trigger is active), `Fallback` and `Paused`; no lastTransitionTime. */
    readonly conditions?: readonly ResourceCondition[];
    /** When a trigger was last active. */
    readonly lastActiveTime?: string;
    /** The HorizontalPodAutoscaler KEDA runs for it. */
    readonly hpaName?: string;
  };
}

/**
 * The objects of Functions, per kind: those the controller creates, and those synth emits beside
 * a Function to reach it or to scale it. They may include other Functions' objects: each Function picks its own,
 * the controller's by the {@link FunctionChildLabel} labels, the others by the label
 * `cdk8s-kyma-serverless/function`. A kind left out is one that could not be listed (or whose CRD
 * is not installed): the progress then comes from the conditions alone, and the endpoints and
 * subscriptions of that kind are not shown.
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
  /**
   * Kyma APIRules (`gateway.kyma-project.io/v2`).
   *
   * @default - not known
   */
  readonly apiRules?: readonly ReachResource[];
  /**
   * Istio VirtualServices (`networking.istio.io/v1beta1`).
   *
   * @default - not known
   */
  readonly virtualServices?: readonly ReachResource[];
  /**
   * Gateway API HTTPRoutes (`gateway.networking.k8s.io/v1`).
   *
   * @default - not known
   */
  readonly httpRoutes?: readonly ReachResource[];
  /**
   * Kyma Subscriptions (`eventing.kyma-project.io/v1alpha2`).
   *
   * @default - not known
   */
  readonly subscriptions?: readonly ReachResource[];
  /**
   * KEDA ScaledObjects (`keda.sh/v1alpha1`), of Functions with `keda`.
   *
   * @default - not known
   */
  readonly scaledObjects?: readonly ScaledObjectResource[];
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

/**
 * The Function's own objects of a kind synth emits beside it (to reach it or to scale it): labelled
 * `cdk8s-kyma-serverless/function` with its name, in its namespace; sorted by name.
 *
 * @returns `undefined` when the kind is not known
 * @internal
 */
export function ownReach<T extends { readonly metadata?: ResourceMetadata }>(fn: FunctionResource, items: readonly T[] | undefined): T[] | undefined {
  if (!items) return undefined;
  const { name, namespace } = fn.metadata ?? {};
  return items
    .filter(o => o.metadata?.labels?.[FUNCTION_LABEL] === name && (namespace === undefined || o.metadata?.namespace === namespace))
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}
