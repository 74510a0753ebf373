/**
 * Apply order for GitOps tools: Argo CD sync waves and sync options on every object.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api/function-schema';

/** The annotation that orders objects in an Argo CD sync. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/** The annotation that holds per-object Argo CD sync options. */
export const SYNC_OPTIONS_ANNOTATION = 'argocd.argoproj.io/sync-options';

/** The Argo CD sync waves of the output, in apply order. */
export enum SyncWave {
  /** CustomResourceDefinitions, Namespaces and PriorityClasses: what other objects need to exist. */
  FOUNDATION = '-2',
  /**
   * The stack and the namespaces' policies: RBAC, controller, registry, LimitRanges, and the Istio
   * policies that guard Functions' endpoints (in place before any route leads to a Function).
   */
  SYSTEM = '-1',
  /**
   * Functions, once their CRD and the controller are there, and what routes requests and events to
   * them (APIRules, VirtualServices, HTTPRoutes, Subscriptions). They share a wave because Argo CD
   * starts a wave only once every object of the one before is healthy: in a later wave, the routes
   * of healthy Functions would wait for a Function that fails. Their controllers wait for, or
   * retry until, the Function's Service.
   */
  FUNCTIONS = '0',
  /**
   * What scales Functions (KEDA ScaledObjects, and the HorizontalPodAutoscalers synth writes under
   * 1.13.0), once they run. Routes are in {@link SyncWave.FUNCTIONS}.
   */
  ROUTES = '1',
}

const FOUNDATION_KINDS = new Set(['CustomResourceDefinition', 'Namespace', 'PriorityClass']);

/** Groups of the custom resources we emit besides Functions: their CRDs come from other modules. */
const CUSTOM_GROUPS = new Set([
  'gateway.kyma-project.io', 'eventing.kyma-project.io', 'networking.istio.io', 'security.istio.io', 'gateway.networking.k8s.io', 'cert-manager.io',
  'keda.sh',
  'monitoring.coreos.com',
]);

/** Kinds that route requests or events to Functions. */
const ROUTE_KINDS = new Set([
  'gateway.kyma-project.io/APIRule', 'networking.istio.io/VirtualService', 'gateway.networking.k8s.io/HTTPRoute', 'eventing.kyma-project.io/Subscription',
]);

/**
 * Kinds that scale Functions through their scale subresource. They come after the Functions: their
 * target exists then, and has run once at the CRD's default of 1 replica (Argo CD starts a wave once
 * the previous one is healthy). A Function that switches from `scale` to `keda` drops its
 * `scaleConfig` in the wave before, which gives the controller time to delete its own
 * HorizontalPodAutoscaler, since KEDA's webhook refuses a ScaledObject for a target another HPA scales.
 * The HorizontalPodAutoscalers synth writes under 1.13.0 (whose controller makes none) come after the
 * Functions too: before a Function exists and has its `status.podSelector`, Argo CD counts the HPA
 * that targets it Degraded (FailedGetScale, InvalidSelector), and the sync would stop at its wave.
 */
const SCALER_KINDS = new Set(['keda.sh/ScaledObject', 'autoscaling/HorizontalPodAutoscaler']);

/** An object's type, as a manifest or an ApiObject gives it. */
type Typed = { readonly apiVersion: string; readonly kind: string };

/** The group and kind of each apiVersion and kind met, as {@link groupKind} gives them (one each per kind an app writes). */
const groupKinds = new Map<string, Map<string, string>>();
/** The most apiVersions {@link groupKinds} keeps before it starts again empty (`validate` reads whatever a folder holds). */
const MAX_GROUP_KINDS = 1000;

/** `group/kind` of an object (`/kind` for the core group), found once per apiVersion and kind. */
function groupKind(object: Typed): string {
  const { apiVersion, kind } = object;
  let byKind = groupKinds.get(apiVersion);
  let written = byKind?.get(kind);
  if (written !== undefined) return written;
  written = `${apiVersion.includes('/') ? apiVersion.split('/')[0] : ''}/${kind}`;
  if (typeof apiVersion === 'string' && typeof kind === 'string') {
    if (!byKind) {
      if (groupKinds.size >= MAX_GROUP_KINDS) groupKinds.clear();
      groupKinds.set(apiVersion, byKind = new Map());
    }
    if (byKind.size < MAX_GROUP_KINDS) byKind.set(kind, written);
  }
  return written;
}

function isFunction(object: Typed): boolean {
  return object.apiVersion === FUNCTION_API_VERSION && object.kind === FUNCTION_KIND;
}

/** The sync wave of an object (an ApiObject, or a manifest read back: `kyma-serverless apply --prune` deletes in reverse wave order). */
export function syncWaveOf(object: Typed): SyncWave {
  if (FOUNDATION_KINDS.has(object.kind)) return SyncWave.FOUNDATION;
  if (isFunction(object)) return SyncWave.FUNCTIONS;
  const kind = groupKind(object);
  if (ROUTE_KINDS.has(kind)) return SyncWave.FUNCTIONS;
  if (SCALER_KINDS.has(kind)) return SyncWave.ROUTES;
  return SyncWave.SYSTEM;
}

/**
 * Whether an object reaches or scales Functions (an APIRule, VirtualService, HTTPRoute,
 * Subscription, KEDA ScaledObject or HorizontalPodAutoscaler): it needs the Functions, and the CRDs
 * of most come from a module the cluster may lack.
 */
export function reachesFunctions(object: Typed): boolean {
  const kind = groupKind(object);
  return ROUTE_KINDS.has(kind) || SCALER_KINDS.has(kind);
}

/** The Argo CD sync options an object needs, if any. */
export function syncOptionsOf(object: ApiObject): string[] {
  // Server-side apply owns fields per manager, and takes CRDs of any size (client-side apply's annotation holds 256 KiB).
  if (object.kind === 'CustomResourceDefinition') return ['ServerSideApply=true'];
  // A first sync dry-runs Functions before their CRD exists; the other custom resources' CRDs come from other modules.
  if (isFunction(object) || CUSTOM_GROUPS.has(groupKind(object).split('/')[0])) return ['SkipDryRunOnMissingResource=true'];
  return [];
}

/**
 * The sync options an object was given before, as its rendered metadata holds them. Rendering the
 * metadata of every object of an app costs more than the rest of this walk (0.2 s of 0.34 s with
 * 10,000 Functions), so an object whose annotations, as cdk8s keeps them until synth, have no such
 * key is not rendered: its rendered metadata cannot have one (cdk8s renders them from that object).
 */
function givenSyncOptions(object: ApiObject): string {
  const kept = (object.metadata as unknown as { readonly annotations?: unknown }).annotations;
  if (kept !== null && typeof kept === 'object' && !Object.prototype.hasOwnProperty.call(kept, SYNC_OPTIONS_ANNOTATION)) return '';
  return String(object.metadata.toJson().annotations?.[SYNC_OPTIONS_ANNOTATION] ?? '');
}

/**
 * Annotates every object under a scope with its Argo CD sync wave and sync options. Other tools
 * ignore these annotations, so the output stays usable with Flux and `kubectl apply`.
 *
 * @param scope usually the App, after every chart is added
 * @param constructs the constructs under it, itself included, when the caller has them
 */
export function addSyncAnnotations(scope: IConstruct, constructs: readonly IConstruct[] = scope.node.findAll()): void {
  for (let i = 0; i < constructs.length; i++) {
    const construct = constructs[i];
    if (!ApiObject.isApiObject(construct)) continue;
    construct.metadata.addAnnotation(SYNC_WAVE_ANNOTATION, syncWaveOf(construct));
    // Options set before (allowReplacement) are kept, after the ones of the kind (each kind's are distinct).
    const ofKind = syncOptionsOf(construct);
    const given = givenSyncOptions(construct);
    const options = given ? [...new Set([...ofKind, ...given.split(',').map(o => o.trim()).filter(Boolean)])] : ofKind;
    if (options.length) construct.metadata.addAnnotation(SYNC_OPTIONS_ANNOTATION, options.join(','));
  }
}
