/**
 * How a Function is reached, for `status`: its endpoints (APIRules, VirtualServices, HTTPRoutes) and
 * its Subscriptions, which synth labels `cdk8s-kyma-serverless/function` with its name, whether each
 * is ready from its status, and how they change the Function's progress. Pure: no I/O.
 */
import { ConditionStatus } from '../../api/function-status';
import { URL_ANNOTATION, objectKindsOf } from '../../api/labels';
import { CustomKind, crdNameOf } from '../_reach-kinds';
import { FunctionProgress, PipelineStage, ProgressState, StepState } from './model';
import { FunctionChildren, FunctionResource, ParentReference, ReachResource, ResourceCondition, ownReach, time } from './resources';

/** The kinds of a Function's endpoints. */
export enum EndpointKind {
  /** A Kyma APIRule (`gateway.kyma-project.io/v2`). */
  API_RULE = 'APIRule',
  /** A Gateway API HTTPRoute (`gateway.networking.k8s.io/v1`). */
  HTTP_ROUTE = 'HTTPRoute',
  /** An Istio VirtualService (`networking.istio.io/v1beta1`). */
  VIRTUAL_SERVICE = 'VirtualService',
}

/** Where an endpoint or a Subscription is. */
export enum ReachState {
  /** Its controller says it is in place. */
  READY = 'ready',
  /** Not yet: its controller has not processed it, or a failure may still be the Function's missing Service. */
  PENDING = 'pending',
  /** Its controller refused it: it will not become ready without a change. */
  FAILED = 'failed',
}

/** One endpoint of a Function, as `--output json` prints it. */
export interface EndpointStatus {
  readonly kind: EndpointKind;
  readonly name: string;
  /** The URL synth wrote into its annotation `cdk8s-kyma-serverless/url`. */
  readonly url?: string;
  /** Whether it is ready (`state` is `ready`). */
  readonly ready: boolean;
  readonly state: ReachState;
  /** What needs attention: why it is not ready, or the warnings of a ready one. */
  readonly message?: string;
}

/** One Subscription of a Function, as `--output json` prints it. */
export interface SubscriptionStatus {
  readonly name: string;
  /** `spec.types`. */
  readonly types: readonly string[];
  /** `spec.sink`. */
  readonly sink?: string;
  /** `status.ready`: whether the eventing manager delivers its events. */
  readonly ready: boolean;
  /** `ready`, else `pending`: a Subscription is never judged failed (see {@link functionReach}). */
  readonly state: ReachState;
  /** Why it is not ready: the reason and message of its False condition. */
  readonly message?: string;
}

/**
 * A kind of the objects synth wrote beside a Function (its annotation
 * `cdk8s-kyma-serverless/object-kinds`) that the cluster does not serve: none of them can exist.
 */
export interface MissingKind {
  /** `APIRule`. */
  readonly kind: string;
  /** The CRD the cluster lacks: `apirules.gateway.kyma-project.io`. */
  readonly crd: string;
  /** Who installs it: `Kyma's api-gateway module`. */
  readonly provider: string;
  /** How to install it: `add Kyma's api-gateway module (kyma alpha add module api-gateway)`. */
  readonly fix: string;
}

/** A Function's endpoints and Subscriptions, and the kinds of them the cluster lacks. */
export interface FunctionReach {
  /** Sorted by kind, then name. */
  readonly endpoints: readonly EndpointStatus[];
  /** Sorted by name. */
  readonly subscriptions: readonly SubscriptionStatus[];
  /** The kinds its annotation names that the cluster does not serve, in the order status lists kinds; left out when none. */
  readonly missingKinds?: readonly MissingKind[];
}

/** What `status` says of a Function whose objects of a kind cannot exist: `its APIRule cannot exist: the cluster does not serve ...; add ...`. */
export function missingKindMessage(missing: MissingKind): string {
  return `its ${missing.kind} cannot exist: the cluster does not serve ${missing.crd}; ${missing.fix}`;
}

/**
 * The kinds that a Function needs (its annotation `cdk8s-kyma-serverless/object-kinds`, which synth
 * writes) and the cluster does not serve. A Function without the annotation needs none: a kind the
 * cluster lacks is then none of its business, and `status` says nothing of it.
 *
 * @param fn the Function
 * @param unserved the kinds the cluster answered 404 for, in the order status lists kinds
 */
export function missingKindsOf(fn: FunctionResource, unserved: readonly CustomKind[]): MissingKind[] {
  const needed = new Set(objectKindsOf(fn.metadata?.annotations));
  return unserved.filter(k => needed.has(`${k.kind}.${k.group}`))
    .map(k => ({ kind: k.kind, crd: crdNameOf(k), provider: k.provider.name, fix: k.provider.fix }));
}

/** What an object's status says, before the Function's own readiness is weighed. */
interface Verdict {
  readonly state: ReachState;
  readonly message?: string;
  /**
   * On a failure that the Function's missing Service can explain: when it was recorded (`''` when
   * not known). Such a failure counts only once the Function is ready, and only when recorded after.
   */
  readonly recordedAt?: string;
}

const TRUE = ConditionStatus.TRUE as string;
const FALSE = ConditionStatus.FALSE as string;

/** `Reason: message` of a condition, on one line. */
function explain(condition: ResourceCondition | undefined): string {
  const message = condition?.message?.replace(/\s+/g, ' ').trim();
  return [condition?.reason, message].filter(Boolean).join(': ');
}

/** An APIRule v2: `status.state` Ready; Error or Warning with `status.description`; no status yet is pending. */
function apiRuleVerdict(rule: ReachResource): Verdict {
  const { state, description, lastProcessedTime } = rule.status ?? {};
  const said = [state, description?.replace(/\s+/g, ' ').trim()].filter(Boolean).join(': ');
  switch (state) {
    case undefined:
    case '':
      return { state: ReachState.PENDING, message: 'no status yet: the API Gateway controller has not processed it' };
    case 'Ready':
      return { state: ReachState.READY };
    case 'Error':
    case 'Warning':
      // The controller validates the Function's Service and Pods: before they exist, it fails and tries again.
      return { state: ReachState.FAILED, message: said, recordedAt: lastProcessedTime ?? '' };
    default:
      return { state: ReachState.PENDING, message: said };
  }
}

/**
 * An HTTPRoute: ready when, for every parent in `spec.parentRefs`, a Gateway controller has set
 * `Accepted` and `ResolvedRefs` True for the route's current generation.
 */
function httpRouteVerdict(route: ReachResource): Verdict {
  const verdicts = (route.spec?.parentRefs ?? []).map(ref => parentVerdict(route, ref));
  return verdicts.find(v => v.state === ReachState.FAILED) ?? verdicts.find(v => v.state === ReachState.PENDING) ?? { state: ReachState.READY };
}

function parentVerdict(route: ReachResource, ref: ParentReference): Verdict {
  const routeNamespace = route.metadata?.namespace;
  const kind = ref.kind ?? 'Gateway';
  const namespace = ref.namespace ?? routeNamespace;
  const parent = `${kind} ${namespace}/${ref.name}${ref.sectionName ? ` (listener ${ref.sectionName})` : ''}`;
  const entry = (route.status?.parents ?? []).find(({ parentRef: p }) => p !== undefined && p.name === ref.name
    && (p.namespace ?? routeNamespace) === namespace && (p.kind ?? 'Gateway') === kind && p.sectionName === ref.sectionName);
  if (!entry) return { state: ReachState.PENDING, message: `no status from ${parent} yet: no Gateway controller has taken the route` };
  const condition = (type: string) => entry.conditions?.find(c => c.type === type);
  const accepted = condition('Accepted');
  const resolved = condition('ResolvedRefs');
  const generation = route.metadata?.generation;
  const behind = [accepted, resolved].find(c => c?.observedGeneration !== undefined && generation !== undefined && c.observedGeneration < generation);
  if (behind) return { state: ReachState.PENDING, message: `${parent} has not processed generation ${generation} yet` };
  if (accepted?.status === FALSE) return { state: ReachState.FAILED, message: `${parent} does not accept it: ${explain(accepted)}` };
  if (resolved?.status === FALSE) {
    // BackendNotFound: the Function's Service does not exist yet.
    const recordedAt = resolved.reason === 'BackendNotFound' ? resolved.lastTransitionTime ?? '' : undefined;
    return { state: ReachState.FAILED, message: `${parent} cannot resolve its references: ${explain(resolved)}`, recordedAt };
  }
  const waiting = ([['Accepted', accepted], ['ResolvedRefs', resolved]] as const).find(([, c]) => c?.status !== TRUE);
  if (!waiting) return { state: ReachState.READY };
  const [type, c] = waiting;
  return { state: ReachState.PENDING, message: `${parent}: ${type} is ${c?.status ?? 'not set'}${explain(c) ? ` (${explain(c)})` : ''}` };
}

/**
 * A VirtualService: Istio writes a status only with its status feature on. Without one, an applied
 * VirtualService is ready; with one, `status.observedGeneration`, the `Reconciled` condition and
 * the analyzers' `validationMessages` (ERROR fails it, WARNING is shown) say more.
 */
function virtualServiceVerdict(service: ReachResource): Verdict {
  const status = service.status;
  const generation = service.metadata?.generation;
  const observed = status?.observedGeneration === undefined ? undefined : Number(status.observedGeneration);
  if (observed !== undefined && generation !== undefined && observed < generation) {
    return { state: ReachState.PENDING, message: `Istio has not processed generation ${generation} yet (the status is of generation ${observed})` };
  }
  const messages = status?.validationMessages ?? [];
  const analysis = (level: string) => messages.filter(m => m.level === level)
    .map(m => [m.type?.code, m.type?.name].filter(Boolean).join(' ') + (m.documentationUrl ? ` (${m.documentationUrl})` : ''));
  const errors = analysis('ERROR');
  // Istio's analyzers flag destinations that do not exist, such as the Function's Service before it is created.
  if (errors.length) return { state: ReachState.FAILED, message: `Istio's analysis: ${errors.join(', ')}`, recordedAt: '' };
  const reconciled = status?.conditions?.find(c => c.type === 'Reconciled');
  if (reconciled && reconciled.status !== TRUE) {
    return { state: ReachState.PENDING, message: `Reconciled is ${reconciled.status}${explain(reconciled) ? ` (${explain(reconciled)})` : ''}` };
  }
  const warnings = analysis('WARNING');
  return { state: ReachState.READY, ...(warnings.length ? { message: `Istio's analysis: ${warnings.join(', ')}` } : {}) };
}

/** A Subscription: `status.ready`, else the reason and message of its False condition. */
function subscriptionVerdict(subscription: ReachResource): Verdict {
  const status = subscription.status;
  if (status?.ready === true) return { state: ReachState.READY };
  if (!status) return { state: ReachState.PENDING, message: 'no status yet: the eventing manager has not processed it' };
  const failed = status.conditions?.find(c => c.status === FALSE);
  if (!failed) return { state: ReachState.PENDING, message: 'not ready yet' };
  const message = failed.message?.replace(/\s+/g, ' ').trim();
  return { state: ReachState.PENDING, message: [failed.reason ?? failed.type, message].filter(Boolean).join(': ') };
}

/**
 * Weighs a failure the Function's missing Service can explain against the Function's readiness: it
 * counts once the Function is ready, and only when recorded after the Function became ready.
 */
function settle(verdict: Verdict, readySince: string | undefined): Verdict {
  if (verdict.state !== ReachState.FAILED || verdict.recordedAt === undefined) return verdict;
  if (readySince === undefined) {
    return { state: ReachState.PENDING, message: `${verdict.message} (judged once the Function is ready: until then its Service may be missing)` };
  }
  if (verdict.recordedAt && readySince && time(verdict.recordedAt) <= time(readySince)) {
    return { state: ReachState.PENDING, message: `${verdict.message} (from before the Function was ready: waiting for the controller to try again)` };
  }
  return verdict;
}

const VERDICTS: ReadonlyArray<{ kind: EndpointKind; items: (c: FunctionChildren) => readonly ReachResource[] | undefined; verdict: (o: ReachResource) => Verdict }> = [
  { kind: EndpointKind.API_RULE, items: c => c.apiRules, verdict: apiRuleVerdict },
  { kind: EndpointKind.HTTP_ROUTE, items: c => c.httpRoutes, verdict: httpRouteVerdict },
  { kind: EndpointKind.VIRTUAL_SERVICE, items: c => c.virtualServices, verdict: virtualServiceVerdict },
];

/**
 * A Function's endpoints and Subscriptions: its own objects (labelled `cdk8s-kyma-serverless/function`
 * with its name, in its namespace) of each kind that was listed, each judged from its status.
 *
 * - APIRule: `status.state` `Ready` is ready; `Error` and `Warning` fail, with `status.description`;
 *   no status yet, `Processing` or `Deleting` is pending.
 * - HTTPRoute: ready when every parent of `spec.parentRefs` has `Accepted` and `ResolvedRefs` True
 *   for the current generation; a False one fails; no status for a parent yet is pending.
 * - VirtualService: ready once applied (Istio writes no status unless its status feature is on);
 *   with a status, not `Reconciled` yet or of an older generation is pending, and an ERROR of
 *   Istio's analysis fails.
 * - Subscription: `status.ready` true is ready; anything else is pending, with its False condition's
 *   reason and message. Never failed: the eventing manager validates the sink, the Function's
 *   Service, which exists only once the Function is deployed, and keeps trying.
 *
 * Failures the Function's missing Service can explain (an APIRule in Error or Warning, an HTTPRoute's
 * BackendNotFound, an ERROR of Istio's analysis) count only once the Function is ready and when
 * recorded after that (`lastProcessedTime`, the condition's `lastTransitionTime`): until then they
 * are pending, since their controllers try again.
 *
 * @param fn the Function
 * @param children the objects listed, of every kind; a kind left out shows nothing
 * @param readySince when the Function became ready (its Running condition's `lastTransitionTime`,
 * `''` when not known); undefined while it is not ready
 * @param unserved the kinds the cluster does not serve (see {@link missingKindsOf})
 */
export function functionReach(fn: FunctionResource, children: FunctionChildren, readySince?: string, unserved: readonly CustomKind[] = []): FunctionReach {
  const endpoints = VERDICTS.flatMap(({ kind, items, verdict }) => (ownReach(fn, items(children)) ?? []).map((o): EndpointStatus => {
    const { state, message } = settle(verdict(o), readySince);
    const url = o.metadata?.annotations?.[URL_ANNOTATION];
    return { kind, name: o.metadata?.name ?? '', ...(url ? { url } : {}), ready: state === ReachState.READY, state, ...(message ? { message } : {}) };
  }));
  const subscriptions = (ownReach(fn, children.subscriptions) ?? []).map((o): SubscriptionStatus => {
    const { state, message } = subscriptionVerdict(o);
    return {
      name: o.metadata?.name ?? '',
      types: [...(o.spec?.types ?? [])],
      ...(o.spec?.sink ? { sink: o.spec.sink } : {}),
      ready: o.status?.ready === true,
      state,
      ...(message ? { message } : {}),
    };
  });
  const missingKinds = missingKindsOf(fn, unserved);
  return { endpoints, subscriptions, ...(missingKinds.length ? { missingKinds } : {}) };
}

/**
 * The Function's progress with its endpoints and Subscriptions weighed in: a last step, `reach`,
 * done when they are all ready. A Function whose pipeline is ready is ready only once they are
 * (until then it is progressing at stage `reach`, with the first one not ready as its message); one
 * that failed makes the Function failed at stage `reach`, and so does a kind of them the cluster
 * does not serve (whatever the pipeline's progress, unless it failed: none of them can ever exist).
 * A Function without endpoints, Subscriptions or missing kinds keeps its progress as it is.
 *
 * @param progress the Function's progress through the controller's pipeline
 * @param reach its endpoints and Subscriptions
 */
export function withReach(progress: FunctionProgress, reach: FunctionReach): FunctionProgress {
  const items = [
    ...(reach.missingKinds ?? []).map(m => ({ state: ReachState.FAILED, says: missingKindMessage(m) })),
    ...reach.endpoints.map(e => ({ state: e.state, says: `${e.kind} ${e.name}: ${e.message ?? 'not ready'}` })),
    ...reach.subscriptions.map(s => ({ state: s.state, says: `Subscription ${s.name}: ${s.message ?? 'not ready'}` })),
  ];
  if (!items.length) return progress;
  const failed = items.find(i => i.state === ReachState.FAILED);
  const waiting = items.find(i => i.state !== ReachState.READY);
  // An idle Function is deployed too: its endpoints and Subscriptions are judged as a ready one's.
  const pipelineReady = progress.state === ProgressState.READY || progress.state === ProgressState.IDLE;
  const step = failed ? StepState.FAILED : !waiting ? StepState.DONE : pipelineReady ? StepState.IN_PROGRESS : StepState.PENDING;
  const steps = [...progress.steps, { stage: PipelineStage.REACH, state: step }];
  if (progress.state === ProgressState.FAILED) return { ...progress, steps };
  if (failed) return { stage: PipelineStage.REACH, state: ProgressState.FAILED, message: failed.says, steps };
  if (!pipelineReady || !waiting) return { ...progress, steps };
  return { stage: PipelineStage.REACH, state: ProgressState.PROGRESSING, message: waiting.says, steps };
}

/**
 * The lines `status` prints after its table for the kinds that some Functions need and the cluster
 * does not serve: one per kind, naming its CRD, the Functions and how to install it.
 *
 * @param reports the Functions' reports (their `missingKinds`)
 * @returns no lines when no Function misses a kind
 */
export function missingKindLines(reports: readonly { readonly namespace: string; readonly name: string; readonly missingKinds?: readonly MissingKind[] }[]): string[] {
  const byCrd = new Map<string, { missing: MissingKind; functions: string[] }>();
  for (const r of reports) {
    for (const missing of r.missingKinds ?? []) {
      const entry = byCrd.get(missing.crd) ?? { missing, functions: [] };
      byCrd.set(missing.crd, entry);
      entry.functions.push(`${r.namespace}/${r.name}`);
    }
  }
  return [...byCrd.values()].map(({ missing: { kind, crd, fix }, functions }) => {
    const count = functions.length === 1 ? '1 Function' : `${functions.length} Functions`;
    return `The cluster does not serve ${crd}, so the ${kind}s of ${count} cannot exist (${functions.join(', ')}): ${fix}`;
  });
}
