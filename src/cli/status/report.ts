/**
 * The report `status` gives of one Function, as `--output json` prints it: where it is in the
 * pipeline (see `model.ts`), how it is reached (see `reach.ts`), and what it is made of. Pure: no I/O.
 */
import { FunctionConditionType } from '../../api/function-status';
import { ServerlessRelease } from '../../api/release';
import { FunctionProgress, ProgressState, functionProgress, functionRelease, scaledObjectOf } from './model';
import { CustomKind } from '../_reach-kinds';
import { EndpointStatus, MissingKind, SubscriptionStatus, functionReach, withReach } from './reach';
import { ChildResource, FunctionChildren, FunctionResource, ResourceCondition, newest, ownChildren } from './resources';

/** The status of one Function, as `--output json` prints it. */
export interface FunctionStatusReport extends FunctionProgress {
  readonly namespace: string;
  readonly name: string;
  /** `spec.runtime`. */
  readonly runtime?: string;
  /** `metadata.generation`. */
  readonly generation?: number;
  /** `metadata.creationTimestamp`. */
  readonly created?: string;
  /** The Function's conditions as the controller wrote them. */
  readonly conditions: readonly ResourceCondition[];
  /** The names of the Function's newest objects of each kind the controller created, and of the ScaledObject that scales it. */
  readonly objects: {
    readonly configMap?: string;
    readonly job?: string;
    readonly deployment?: string;
    readonly service?: string;
    readonly horizontalPodAutoscaler?: string;
    /** KEDA's ScaledObject, of a Function with `keda`. */
    readonly scaledObject?: string;
  };
  /**
   * The release whose controller writes the status (see {@link functionRelease}); only a release
   * other than the default is named.
   */
  readonly release?: ServerlessRelease;
  /** A Git Function under 1.13.0: the commit the controller resolved and runs, once recorded. */
  readonly commit?: string;
  /** The Deployment's desired and ready replicas, once it exists. */
  readonly replicas?: { readonly desired: number; readonly ready: number };
  /** Its APIRules, HTTPRoutes and VirtualServices (none when their kinds are not served). */
  readonly endpoints: readonly EndpointStatus[];
  /** Its Subscriptions (none when their kind is not served). */
  readonly subscriptions: readonly SubscriptionStatus[];
  /**
   * The kinds of the objects synth wrote beside it (its annotation `cdk8s-kyma-serverless/object-kinds`)
   * that the cluster does not serve, so that none of them can exist: each fails it at stage `reach`.
   * Left out when there are none.
   */
  readonly missingKinds?: readonly MissingKind[];
}

/**
 * A Function's status report: its {@link functionProgress} with its endpoints and Subscriptions
 * weighed in ({@link withReach}), its name, runtime, conditions and objects.
 *
 * @param fn the Function
 * @param children the controller's objects, and those synth emits to reach it (see {@link FunctionChildren})
 * @param clusterRelease the release of the cluster's Function CRD, when it could be read
 * @param unserved the kinds that reach or scale Functions that the cluster does not serve (it answered 404 for them)
 */
export function statusReport(
  fn: FunctionResource, children: FunctionChildren = {}, clusterRelease?: ServerlessRelease, unserved: readonly CustomKind[] = [],
): FunctionStatusReport {
  const release = functionRelease(fn, clusterRelease);
  const name = (items?: readonly ChildResource[]) => newest(ownChildren(fn, items))?.metadata?.name;
  const deployment = newest(ownChildren(fn, children.deployments));
  const objects = {
    configMap: name(children.configMaps),
    job: name(children.jobs),
    deployment: deployment?.metadata?.name,
    service: name(children.services),
    horizontalPodAutoscaler: name(children.horizontalPodAutoscalers),
    scaledObject: scaledObjectOf(fn, children)?.metadata?.name,
  };
  const progress = functionProgress(fn, children, release);
  const running = fn.status?.conditions?.find(c => c.type === FunctionConditionType.RUNNING);
  const deployed = progress.state === ProgressState.READY || progress.state === ProgressState.IDLE;
  const reach = functionReach(fn, children, deployed ? running?.lastTransitionTime ?? '' : undefined, unserved);
  return {
    namespace: fn.metadata?.namespace ?? '',
    name: fn.metadata?.name ?? '',
    ...(fn.spec?.runtime ? { runtime: fn.spec.runtime } : {}),
    ...(fn.metadata?.generation !== undefined ? { generation: fn.metadata.generation } : {}),
    ...(fn.metadata?.creationTimestamp ? { created: fn.metadata.creationTimestamp } : {}),
    ...withReach(progress, reach),
    conditions: (fn.status?.conditions ?? []).map(c => ({ ...c })),
    objects: Object.fromEntries(Object.entries(objects).filter(([, v]) => v !== undefined)),
    ...(release !== ServerlessRelease.V1_11_1 ? { release } : {}),
    ...(fn.status?.gitRepository?.commit ? { commit: fn.status.gitRepository.commit } : {}),
    ...(deployment ? { replicas: { desired: deployment.spec?.replicas ?? 1, ready: deployment.status?.readyReplicas ?? 0 } } : {}),
    endpoints: reach.endpoints,
    subscriptions: reach.subscriptions,
    ...(reach.missingKinds ? { missingKinds: reach.missingKinds } : {}),
  };
}
