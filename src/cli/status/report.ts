/**
 * The report `status` gives of one Function, as `--output json` prints it: where it is in the
 * pipeline (see `model.ts`), and what it is made of. Pure: no I/O.
 */
import { FunctionProgress, functionProgress } from './model';
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
  /** The names of the Function's newest objects of each kind the controller created. */
  readonly objects: {
    readonly configMap?: string;
    readonly job?: string;
    readonly deployment?: string;
    readonly service?: string;
    readonly horizontalPodAutoscaler?: string;
  };
  /** The Deployment's desired and ready replicas, once it exists. */
  readonly replicas?: { readonly desired: number; readonly ready: number };
}

/**
 * A Function's status report: its {@link functionProgress} with its name, runtime, conditions and objects.
 *
 * @param fn the Function
 * @param children the controller's objects (see {@link FunctionChildren})
 */
export function statusReport(fn: FunctionResource, children: FunctionChildren = {}): FunctionStatusReport {
  const name = (items?: readonly ChildResource[]) => newest(ownChildren(fn, items))?.metadata?.name;
  const deployment = newest(ownChildren(fn, children.deployments));
  const objects = {
    configMap: name(children.configMaps),
    job: name(children.jobs),
    deployment: deployment?.metadata?.name,
    service: name(children.services),
    horizontalPodAutoscaler: name(children.horizontalPodAutoscalers),
  };
  return {
    namespace: fn.metadata?.namespace ?? '',
    name: fn.metadata?.name ?? '',
    ...(fn.spec?.runtime ? { runtime: fn.spec.runtime } : {}),
    ...(fn.metadata?.generation !== undefined ? { generation: fn.metadata.generation } : {}),
    ...(fn.metadata?.creationTimestamp ? { created: fn.metadata.creationTimestamp } : {}),
    ...functionProgress(fn, children),
    conditions: (fn.status?.conditions ?? []).map(c => ({ ...c })),
    objects: Object.fromEntries(Object.entries(objects).filter(([, v]) => v !== undefined)),
    ...(deployment ? { replicas: { desired: deployment.spec?.replicas ?? 1, ready: deployment.status?.readyReplicas ?? 0 } } : {}),
  };
}
