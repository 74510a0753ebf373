/**
 * Apply order for GitOps tools: Argo CD sync waves and sync options on every object.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api';

/** The annotation that orders objects in an Argo CD sync. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/** The annotation that holds per-object Argo CD sync options. */
export const SYNC_OPTIONS_ANNOTATION = 'argocd.argoproj.io/sync-options';

/** The Argo CD sync waves of the output, in apply order. */
export enum SyncWave {
  /** CustomResourceDefinitions, Namespaces and PriorityClasses: what other objects need to exist. */
  FOUNDATION = '-2',
  /** The stack and the namespaces' policies: RBAC, controller, registry, LimitRanges. */
  SYSTEM = '-1',
  /** Functions, once their CRD and the controller are there. */
  FUNCTIONS = '0',
}

const FOUNDATION_KINDS = new Set(['CustomResourceDefinition', 'Namespace', 'PriorityClass']);

function isFunction(object: ApiObject): boolean {
  return object.apiVersion === FUNCTION_API_VERSION && object.kind === FUNCTION_KIND;
}

/** The sync wave of an object. */
export function syncWaveOf(object: ApiObject): SyncWave {
  if (FOUNDATION_KINDS.has(object.kind)) return SyncWave.FOUNDATION;
  if (isFunction(object)) return SyncWave.FUNCTIONS;
  return SyncWave.SYSTEM;
}

/** The Argo CD sync options an object needs, if any. */
export function syncOptionsOf(object: ApiObject): string[] {
  // The Function CRD is larger than the 256 KiB annotation client-side apply keeps.
  if (object.kind === 'CustomResourceDefinition') return ['ServerSideApply=true'];
  // A first sync dry-runs Functions before their CRD exists.
  if (isFunction(object)) return ['SkipDryRunOnMissingResource=true'];
  return [];
}

/**
 * Annotates every object under a scope with its Argo CD sync wave and sync options. Other tools
 * ignore these annotations, so the output stays usable with Flux and `kubectl apply`.
 *
 * @param scope usually the App, after every chart is added
 */
export function addSyncAnnotations(scope: IConstruct): void {
  for (const construct of scope.node.findAll()) {
    if (!ApiObject.isApiObject(construct)) continue;
    construct.metadata.addAnnotation(SYNC_WAVE_ANNOTATION, syncWaveOf(construct));
    const options = syncOptionsOf(construct);
    if (options.length) construct.metadata.addAnnotation(SYNC_OPTIONS_ANNOTATION, options.join(','));
  }
}
