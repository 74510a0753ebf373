/**
 * The pipeline model of `status`: where a Function is in the Function controller's pipeline
 * (source ConfigMap, build Job, Deployment, Service, HorizontalPodAutoscaler, ready), from its
 * conditions and from the objects the controller labels with the Function's name, and whether KEDA
 * scaled it to zero. Pure: no I/O.
 */
import { serverDefaultedFields } from '../../api/controller-fixed-point';
import { ConditionStatus, FunctionConditionReason, FunctionConditionType } from '../../api/function-status';
import { FUNCTION_KIND } from '../../api/function-schema';
import { FUNCTION_LABEL } from '../../api/labels';
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from '../../api/release';
import {
  ChildResource, FunctionChildren, FunctionResource, ResourceCondition, ScaledObjectResource, newest, ownChildren, ownReach, time,
} from './resources';

/** The steps of the pipeline, in order. */
export enum PipelineStage {
  /** Buildless releases (1.13.0): the spec is valid (and a Git Function's commit resolved): ConfigurationReady True. */
  CONFIGURED = 'configured',
  /** Inline sources in a ConfigMap, or Git sources fetched. */
  SOURCE = 'source',
  /** The build Job. */
  BUILD = 'build',
  /** The Function's Deployment. */
  DEPLOYMENT = 'deployment',
  /** The Service named after the Function. */
  SERVICE = 'service',
  /**
   * The HorizontalPodAutoscaler, only for a `scaleConfig` whose minReplicas and maxReplicas differ: the
   * controller's under 1.11.1; under 1.13.0, the one synth writes beside the Function (the controller makes none).
   */
  HPA = 'hpa',
  /** Every condition True: the Deployment is ready. */
  READY = 'ready',
  /**
   * The Function's endpoints (APIRules, VirtualServices, HTTPRoutes) and Subscriptions are ready;
   * only for a Function that has some (see `reach.ts`).
   */
  REACH = 'reach',
}

/** Where a Function is as a whole. */
export enum ProgressState {
  /** Every condition is True. */
  READY = 'ready',
  /** On its way (building is not a failure). */
  PROGRESSING = 'progressing',
  /** A condition is False, or the build Job failed. */
  FAILED = 'failed',
  /**
   * Built and deployed, and scaled to zero by KEDA (its ScaledObject): no Pods run until a trigger
   * is active. Done, like ready: nothing is on its way.
   */
  IDLE = 'idle',
}

/** Where one step of the pipeline is. */
export enum StepState {
  DONE = 'done',
  /** The step the Function is at. */
  IN_PROGRESS = 'in-progress',
  PENDING = 'pending',
  FAILED = 'failed',
}

/** One step of the pipeline and where it is. */
export interface PipelineStep {
  readonly stage: PipelineStage;
  readonly state: StepState;
}

/** Where a Function is in the pipeline, derived by {@link functionProgress}. */
export interface FunctionProgress {
  /** The first step not done: the one failed, or in progress; `ready` when ready or idle. */
  readonly stage: PipelineStage;
  readonly state: ProgressState;
  /** The reason of the condition that tells most: the False one, else the newest (idle: that of KEDA's `Active`). */
  readonly reason?: string;
  /** Its message, or what the status waits for. */
  readonly message?: string;
  /** That condition's lastTransitionTime (idle: when a trigger was last active). */
  readonly since?: string;
  /** Every step, in order; `hpa` only when the Function autoscales. */
  readonly steps: readonly PipelineStep[];
}

/**
 * The release of the controller that writes a Function's status: the cluster's (its Function
 * CRD's) when known; else told by the status: a BuildReady condition is 1.11.1's, an
 * observedGeneration or a gitRepository 1.13.0's; else the default.
 *
 * @param fn the Function
 * @param cluster the release of the cluster's Function CRD, when it could be read
 */
export function functionRelease(fn: FunctionResource, cluster?: ServerlessRelease): ServerlessRelease {
  if (cluster) return cluster;
  const status = fn.status;
  if (status?.conditions?.some(c => c.type === FunctionConditionType.BUILD_READY)) return ServerlessRelease.V1_11_1;
  if (status?.observedGeneration !== undefined || status?.gitRepository !== undefined) return ServerlessRelease.V1_13_0;
  return DEFAULT_RELEASE;
}

/**
 * The reason `status` gives a Function whose controller updates its Deployment on every reconcile
 * and never goes on (see {@link updateLoop}); not one the controller writes.
 */
export const DEPLOYMENT_UPDATE_LOOP = 'DeploymentUpdateLoop';

/** The annotation that makes the 1.11.1 controller check a Git Function's repository on every reconcile. */
const CONTINUOUS_GIT_CHECKOUT = 'serverless.kyma-project.io/continuousGitCheckout';

const R = FunctionConditionReason;
/** Running reasons the controller writes once the Deployment exists. */
const DEPLOYMENT_EXISTS: ReadonlySet<string> = new Set([
  R.DEPLOYMENT_CREATED, R.DEPLOYMENT_UPDATED, R.SERVICE_CREATED, R.SERVICE_UPDATED, R.SERVICE_FAILED,
  R.HORIZONTAL_POD_AUTOSCALER_CREATED, R.HORIZONTAL_POD_AUTOSCALER_UPDATED, R.DEPLOYMENT_WAITING, R.MIN_REPLICAS_NOT_AVAILABLE, R.DEPLOYMENT_READY,
]);
/** Running reasons the controller writes once the Service exists. */
const SERVICE_EXISTS: ReadonlySet<string> = new Set([
  R.SERVICE_CREATED, R.SERVICE_UPDATED, R.HORIZONTAL_POD_AUTOSCALER_CREATED, R.HORIZONTAL_POD_AUTOSCALER_UPDATED,
  R.DEPLOYMENT_WAITING, R.MIN_REPLICAS_NOT_AVAILABLE, R.DEPLOYMENT_READY,
]);
/** Running reasons the controller writes once the HPA (of an autoscaled Function) exists. */
const HPA_EXISTS: ReadonlySet<string> = new Set([
  R.HORIZONTAL_POD_AUTOSCALER_CREATED, R.HORIZONTAL_POD_AUTOSCALER_UPDATED, R.DEPLOYMENT_WAITING, R.MIN_REPLICAS_NOT_AVAILABLE, R.DEPLOYMENT_READY,
]);

/** The condition of a type; the controller keeps one per type. */
function conditionOf(fn: FunctionResource, type: FunctionConditionType): ResourceCondition | undefined {
  return fn.status?.conditions?.find(c => c.type === type);
}

const hasCondition = (object: ChildResource, type: string, status = ConditionStatus.TRUE) =>
  (object.status?.conditions ?? []).some(c => c.type === type && c.status === status);

/** A build Job's outcome: `Complete` (or a completionTime) for success, `Failed` for failure. */
function jobOutcome(job: ChildResource): 'succeeded' | 'failed' | 'running' {
  if (job.status?.completionTime || hasCondition(job, 'Complete')) return 'succeeded';
  if (hasCondition(job, 'Failed')) return 'failed';
  return 'running';
}

/** Whether a Function autoscales: the controller creates an HPA only when minReplicas and maxReplicas differ. */
export function autoscales(fn: FunctionResource): boolean {
  const scale = fn.spec?.scaleConfig;
  return scale?.minReplicas !== undefined && scale.maxReplicas !== undefined && scale.minReplicas !== scale.maxReplicas;
}

/** KEDA's condition of a ScaledObject that says whether a trigger is active. */
const KEDA_ACTIVE = 'Active';

/**
 * The Function's own KEDA ScaledObject (labelled `cdk8s-kyma-serverless/function` with its name, in
 * its namespace) that scales it: `spec.scaleTargetRef` names the Function.
 *
 * @returns `undefined` when it has none, or ScaledObjects are not known
 */
export function scaledObjectOf(fn: FunctionResource, children: FunctionChildren = {}): ScaledObjectResource | undefined {
  return ownReach(fn, children.scaledObjects)
    ?.find(o => o.spec?.scaleTargetRef?.kind === FUNCTION_KIND && o.spec.scaleTargetRef.name === fn.metadata?.name);
}

/**
 * The Pods the Function asks for: `spec.replicas` (the scale subresource KEDA and autoscalers
 * write), else its newest Deployment's.
 */
function desiredReplicas(fn: FunctionResource, children: FunctionChildren): number | undefined {
  return fn.spec?.replicas ?? newest(ownChildren(fn, children.deployments))?.spec?.replicas;
}

/** The status of a Function, as the controllers of both releases write it. */
type FunctionStatus = NonNullable<FunctionResource['status']>;

/**
 * Why the status describes an older spec than the Function's, if it does, the same for both
 * releases: the controller has not processed the current generation (when the status has
 * `observedGeneration`), or the runtime differs from the spec; else what the release's own check
 * of the sources says (`sourcesBehind`, given only a status with conditions).
 */
function behind(fn: FunctionResource, sourcesBehind: (status: FunctionStatus) => string | undefined): string | undefined {
  const generation = fn.metadata?.generation;
  const status = fn.status;
  if (status?.observedGeneration !== undefined && generation !== undefined && status.observedGeneration < generation) {
    return `waiting for the controller to process generation ${generation} (the status is of generation ${status.observedGeneration})`;
  }
  if (!status?.conditions?.length) return undefined;
  if (status.runtime && fn.spec?.runtime && status.runtime !== fn.spec.runtime) {
    return `waiting for the controller to switch the runtime to ${fn.spec.runtime} (the status is of ${status.runtime})`;
  }
  return sourcesBehind(status);
}

/**
 * Under 1.11.1, whether the inline ConfigMap's sources or the Git reference differ from the spec
 * (its status has no observedGeneration; right after an apply, its conditions still describe the
 * previous version).
 */
function builtSourcesBehind(fn: FunctionResource, status: FunctionStatus, configMap: ChildResource | undefined): string | undefined {
  const inline = fn.spec?.source?.inline;
  // The controller stores blank Node.js dependencies as `{}`: compare dependencies only when given.
  const data = configMap?.data;
  if (inline && data && (data.source !== inline.source || (inline.dependencies?.trim() && data.dependencies !== inline.dependencies))) {
    return `waiting for the controller to update ConfigMap ${configMap.metadata?.name} with the changed sources`;
  }
  const git = fn.spec?.source?.gitRepository;
  if (git && status.reference !== undefined && (status.reference !== git.reference || status.baseDir !== git.baseDir)) {
    // 1.11.1 checks a Git Function's repository at most once per functionReadyRequeue, even after its spec changed.
    return `waiting for the controller to fetch ${git.reference} ${git.baseDir} (the status is of ${status.reference} ${status.baseDir}; `
      + `the 1.11.1 controller checks the repository again only functionReadyRequeue (5 minutes by default) after its last check, unless the Function has the annotation ${CONTINUOUS_GIT_CHECKOUT}: "true")`;
  }
  return undefined;
}

/**
 * Where a Function is in the controller's pipeline: source ConfigMap → build Job → Deployment →
 * Service → HPA (when it autoscales) → ready.
 *
 * The Function is ready when all three conditions are True (as upstream's printer columns and
 * Busola read them), no newer build Job is running, and the status is of the current spec (see
 * the `behind` checks: observedGeneration where the controller writes it, the runtime, the inline
 * sources, the Git reference). Until then, each step is done when the controller's condition
 * says so or, between condition updates, when its object exists (found by the
 * {@link FunctionChildLabel} labels, never by name): the inline ConfigMap, a succeeded newest build
 * Job, the Deployment, the Service, the HPA. A step fails with a False condition
 * (ConfigurationReady; BuildReady; Running with DeploymentFailed or ServiceFailed) or a failed
 * newest build Job, unless the status is behind the spec.
 *
 * A Function whose controller is stuck updating its Deployment (see `updateLoop`: an env field the
 * API server defaults and the 1.11.1 controller compares as text) fails at the Deployment step,
 * with the reason {@link DEPLOYMENT_UPDATE_LOOP} and the fix, instead of deploying for ever.
 *
 * A Function KEDA scaled to zero is idle: it has a ScaledObject of its own that targets it (see
 * {@link scaledObjectOf}), asks for no Pods (`spec.replicas` 0, else its Deployment's), every step
 * before ready is done and none failed, and no trigger is active (KEDA's `Active` condition is not
 * True). Whatever the controller last said of a Deployment of no Pods, nothing is on its way. With
 * an active trigger it is progressing at ready: KEDA is starting its Pods.
 *
 * @param fn the Function
 * @param children the controller's objects, and the ScaledObjects; each kind left out is derived from the conditions alone
 * @returns the stage (the first step not done), the overall state, the condition that explains it and every step
 */
export function functionProgress(fn: FunctionResource, children: FunctionChildren = {}, release: ServerlessRelease = DEFAULT_RELEASE): FunctionProgress {
  if (!releaseFacts(release).buildsImages) return buildlessProgress(fn, children);
  const configured = conditionOf(fn, FunctionConditionType.CONFIGURATION_READY);
  const built = conditionOf(fn, FunctionConditionType.BUILD_READY);
  const running = conditionOf(fn, FunctionConditionType.RUNNING);
  const isTrue = (c?: ResourceCondition) => c?.status === ConditionStatus.TRUE;
  const isFalse = (c?: ResourceCondition) => c?.status === ConditionStatus.FALSE;
  const runningReason = running?.reason ?? '';

  const configMaps = ownChildren(fn, children.configMaps);
  const jobs = ownChildren(fn, children.jobs);
  const job = newest(jobs);
  const jobState = job && jobOutcome(job);
  const stale = behind(fn, status => builtSourcesBehind(fn, status, newest(configMaps)));
  const ready = !stale && isTrue(configured) && isTrue(built) && isTrue(running) && jobState !== 'running';
  const loop = stale ? undefined : updateLoop(fn, running, newest(ownChildren(fn, children.deployments)));
  // Known objects say whether they exist; else the Running reasons the controller writes after creating them.
  const exists = (items: readonly ChildResource[] | undefined, reasons: ReadonlySet<string>) => {
    const own = ownChildren(fn, items);
    return ready || (own ? own.length > 0 : isTrue(running) || reasons.has(runningReason));
  };

  type Step = { stage: PipelineStage; done: boolean; failed?: ResourceCondition };
  const steps: Step[] = [
    {
      stage: PipelineStage.SOURCE,
      done: ready || (!stale && (isTrue(configured) || (fn.spec?.source?.inline !== undefined && (configMaps?.length ?? 0) > 0))),
      failed: isFalse(configured) ? configured : undefined,
    },
    {
      stage: PipelineStage.BUILD,
      // A running newest Job is a (re)build in progress, whatever an older BuildReady says.
      done: ready || (job ? jobState === 'succeeded' : isTrue(built)),
      failed: isFalse(built) ? built : jobState === 'failed' ? failedJobCondition(job!) : undefined,
    },
    {
      stage: PipelineStage.DEPLOYMENT,
      done: exists(children.deployments, DEPLOYMENT_EXISTS) && !loop,
      failed: isFalse(running) && runningReason === R.DEPLOYMENT_FAILED ? running : loop,
    },
    {
      stage: PipelineStage.SERVICE,
      done: exists(children.services, SERVICE_EXISTS),
      failed: isFalse(running) && runningReason === R.SERVICE_FAILED ? running : undefined,
    },
    ...(autoscales(fn) ? [{ stage: PipelineStage.HPA, done: exists(children.horizontalPodAutoscalers, HPA_EXISTS) }] : []),
  ];
  // Running False for a reason of no step above (none at 1.11.1) fails the last step.
  const unexplained = isFalse(running) && !steps.some(s => s.failed === running) ? running : undefined;
  steps.push({ stage: PipelineStage.READY, done: ready, failed: unexplained });

  // A failure of an older spec may be gone with the current one: not a failure until the controller says so again.
  const failedStep = stale ? undefined : steps.find(s => s.failed);

  // Scaled to zero by KEDA, once built and deployed: idle, whatever the controller last said of a Deployment of no Pods.
  const scaledObject = scaledObjectOf(fn, children);
  if (scaledObject && !failedStep && !stale && desiredReplicas(fn, children) === 0 && steps.slice(0, -1).every(s => s.done)) {
    return scaledToZero(scaledObject, steps.map(s => s.stage));
  }

  const current = failedStep ?? steps.find(s => !s.done);
  const { explain, latest, early } = progressOf(fn, steps, failedStep, current, stale);
  return early ?? explain(latest!);
}

/**
 * A Function KEDA scaled to zero: idle while no trigger of its ScaledObject is active, and on its
 * way to ready (KEDA is starting its Pods) once one is.
 */
function scaledToZero(scaledObject: ScaledObjectResource, stages: readonly PipelineStage[]): FunctionProgress {
  const name = scaledObject.metadata?.name;
  const active = scaledObject.status?.conditions?.find(c => c.type === KEDA_ACTIVE);
  if (active?.status === ConditionStatus.TRUE) {
    return {
      stage: PipelineStage.READY,
      state: ProgressState.PROGRESSING,
      ...(active.reason ? { reason: active.reason } : {}),
      message: `a trigger of ScaledObject ${name} is active: KEDA is starting the Function's Pods`,
      steps: stages.map(stage => ({ stage, state: stage === PipelineStage.READY ? StepState.IN_PROGRESS : StepState.DONE })),
    };
  }
  return {
    stage: PipelineStage.READY,
    state: ProgressState.IDLE,
    ...(active?.reason ? { reason: active.reason } : {}),
    message: `scaled to zero by KEDA (ScaledObject ${name}): no Pods run until a trigger is active`,
    ...(scaledObject.status?.lastActiveTime ? { since: scaledObject.status.lastActiveTime } : {}),
    steps: stages.map(stage => ({ stage, state: StepState.DONE })),
  };
}

/**
 * Whether the 1.11.1 controller is stuck updating the Function's Deployment: Running is Unknown
 * with `DeploymentUpdated`, and the Function leaves out a field that the API server defaults in
 * the Deployment and the controller compares as text (see `serverDefaultedFields`). The controller
 * then updates the Deployment about once a second and never creates the Service. The Deployment's
 * generation does not show it: the API server stores nothing new.
 *
 * @returns the Running condition reworded with the cause and the fix, or `undefined`
 */
function updateLoop(fn: FunctionResource, running: ResourceCondition | undefined, deployment: ChildResource | undefined): ResourceCondition | undefined {
  if (running?.status !== ConditionStatus.UNKNOWN || running.reason !== R.DEPLOYMENT_UPDATED) return undefined;
  const fields = serverDefaultedFields(fn.spec?.env);
  if (!fields.length) return undefined;
  const name = deployment?.metadata?.name ?? running.message?.match(/^Deployment (\S+) updated/)?.[1];
  return {
    type: running.type,
    status: running.status,
    reason: DEPLOYMENT_UPDATE_LOOP,
    message: `the controller updates Deployment${name ? ` ${name}` : ''} on every reconcile and never creates the Service, as it compares env as text: `
      + `${fields.map(f => f.cause).join('; ')}. Fix: give ${fields.map(f => `${f.path}: ${f.value}`).join(', ')} and apply the Function again; `
      + 'kyma-serverless synth writes them, and the stack\'s webhook and CRD add them',
    lastTransitionTime: running.lastTransitionTime,
  };
}

/** The Failed condition of a failed build Job, worded as a Function condition. */
function failedJobCondition(job: ChildResource): ResourceCondition {
  const failed = job.status?.conditions?.find(c => c.type === 'Failed' && c.status === ConditionStatus.TRUE);
  return {
    type: 'Failed',
    status: ConditionStatus.FALSE,
    reason: failed?.reason ?? R.JOB_FAILED,
    message: `Job ${job.metadata?.name} failed${failed?.message ? `: ${failed.message}` : ''}`,
    lastTransitionTime: failed?.lastTransitionTime,
  };
}

/**
 * Under 1.13.0 (buildless), whether the Git commit the status is of differs from the spec's reference: the
 * controller resolves the reference to a commit itself, and records it once the Deployment is ready.
 */
function buildlessSourcesBehind(fn: FunctionResource, status: FunctionStatus): string | undefined {
  const git = fn.spec?.source?.gitRepository;
  const recorded = status.gitRepository;
  if (git && recorded?.reference !== undefined && (recorded.reference !== git.reference || (recorded.baseDir ?? '') !== (git.baseDir ?? ''))) {
    return `waiting for the controller to resolve ${git.reference} ${git.baseDir ?? ''} to a commit and roll the Deployment out `
      + `(the status is of ${recorded.reference} ${recorded.baseDir ?? ''}${recorded.commit ? `, commit ${recorded.commit.slice(0, 12)}` : ''}; `
      + 'the 1.13.0 controller checks the repository again every 5 minutes)';
  }
  return undefined;
}

/** Whether a Function has dependencies its Pods install at start: a Git source may, inline ones when given. */
function installsDependencies(fn: FunctionResource): boolean {
  const source = fn.spec?.source;
  if (source?.gitRepository) return true;
  const dependencies = source?.inline?.dependencies?.trim() ?? '';
  if (!dependencies || /^\{\s*\}$/.test(dependencies)) return false;
  try {
    const manifest = JSON.parse(dependencies) as { dependencies?: object };
    return manifest.dependencies === undefined || Object.keys(manifest.dependencies).length > 0;
  } catch {
    // requirements.txt: any line that is no comment.
    return dependencies.split('\n').some(line => line.trim() && !line.trim().startsWith('#'));
  }
}

/**
 * Where a Function is under a buildless release (1.13.0): configured → Deployment → Service →
 * HPA (when `scaleConfig` autoscales: synth writes it, the controller does not) → ready. No source
 * ConfigMap and no build Job: the runtime image installs the dependencies at every Pod start, so
 * a Deployment that is not ready yet says so when the Function has dependencies.
 */
function buildlessProgress(fn: FunctionResource, children: FunctionChildren): FunctionProgress {
  const configured = conditionOf(fn, FunctionConditionType.CONFIGURATION_READY);
  const running = conditionOf(fn, FunctionConditionType.RUNNING);
  const isTrue = (c?: ResourceCondition) => c?.status === ConditionStatus.TRUE;
  const isFalse = (c?: ResourceCondition) => c?.status === ConditionStatus.FALSE;
  const runningReason = running?.reason ?? '';
  const stale = behind(fn, status => buildlessSourcesBehind(fn, status));
  const ready = !stale && isTrue(configured) && isTrue(running);
  const deployment = newest(ownChildren(fn, children.deployments));
  const loop = stale ? undefined : updateLoop(fn, running, deployment);
  const exists = (items: readonly ChildResource[] | undefined, reasons: ReadonlySet<string>) => {
    const own = ownChildren(fn, items);
    return ready || (own ? own.length > 0 : isTrue(running) || reasons.has(runningReason));
  };
  // Synth's own HPA is labelled with the Function's name, by the controller's label or by ours.
  const hpas = children.horizontalPodAutoscalers?.filter(h => h.metadata?.labels?.[FUNCTION_LABEL] === fn.metadata?.name
    && (fn.metadata?.namespace === undefined || h.metadata?.namespace === fn.metadata.namespace));

  type Step = { stage: PipelineStage; done: boolean; failed?: ResourceCondition };
  const steps: Step[] = [
    { stage: PipelineStage.CONFIGURED, done: ready || (!stale && isTrue(configured)), failed: isFalse(configured) ? configured : undefined },
    {
      stage: PipelineStage.DEPLOYMENT,
      done: exists(children.deployments, DEPLOYMENT_EXISTS) && !loop,
      failed: isFalse(running) && runningReason === R.DEPLOYMENT_FAILED ? running : loop,
    },
    {
      stage: PipelineStage.SERVICE,
      done: exists(children.services, SERVICE_EXISTS),
      failed: isFalse(running) && runningReason === R.SERVICE_FAILED ? running : undefined,
    },
    // Not a step of the controller's: it does not hold the Function back from ready.
    ...(autoscales(fn) ? [{ stage: PipelineStage.HPA, done: ready || !!ownChildren(fn, children.horizontalPodAutoscalers)?.length || !!hpas?.length }] : []),
  ];
  const unexplained = isFalse(running) && !steps.some(s => s.failed === running) ? running : undefined;
  steps.push({ stage: PipelineStage.READY, done: ready, failed: unexplained });
  const failedStep = stale ? undefined : steps.find(s => s.failed);

  const scaledObject = scaledObjectOf(fn, children);
  if (scaledObject && !failedStep && !stale && desiredReplicas(fn, children) === 0 && steps.slice(0, -1).every(s => s.done)) {
    return scaledToZero(scaledObject, steps.map(s => s.stage));
  }
  // The HPA is synth's, not a step the controller takes: never the one a Function waits at.
  const current = failedStep ?? steps.find(s => !s.done && s.stage !== PipelineStage.HPA);
  const { explain, latest, early } = progressOf(fn, steps, failedStep, current, stale);
  if (early || !latest) return early!;
  // Waiting for Pods that install the dependencies before they serve: say so, it is the slow part of a start.
  const waitingForPods = !ready && current?.stage === PipelineStage.READY && (deployment ? (deployment.status?.readyReplicas ?? 0) < (deployment.spec?.replicas ?? 1)
    : runningReason === R.DEPLOYMENT_WAITING || runningReason === R.MIN_REPLICAS_NOT_AVAILABLE);
  if (waitingForPods && installsDependencies(fn)) {
    const installer = fn.spec?.runtime?.startsWith('python') ? 'pip install' : 'npm install';
    const logs = deployment?.metadata?.name ? ` (kubectl logs -n ${fn.metadata?.namespace} deployment/${deployment.metadata.name} shows it)` : '';
    return explain(latest, `${latest.message ? `${latest.message}: ` : ''}its Pods install the Function's dependencies (${installer}) at every start, `
      + `and are not ready until that is done${logs}`);
  }
  return explain(latest);
}

/** A step of a controller's pipeline, as the status models of both releases judge it. */
interface JudgedStep {
  readonly stage: PipelineStage;
  readonly done: boolean;
  readonly failed?: ResourceCondition;
}

/**
 * What a pipeline's steps and the Function's conditions tell, the same for both releases: `early`
 * when a failed step, a stale status or no condition at all decides it; else the condition the
 * controller wrote last (`latest`), and `explain` to word the progress from a condition.
 */
function progressOf(fn: FunctionResource, steps: readonly JudgedStep[], failedStep: JudgedStep | undefined, current: JudgedStep | undefined, stale: string | undefined): {
  readonly explain: (condition: ResourceCondition | undefined, message?: string) => FunctionProgress;
  readonly latest?: ResourceCondition;
  readonly early?: FunctionProgress;
} {
  const state = failedStep ? ProgressState.FAILED : current ? ProgressState.PROGRESSING : ProgressState.READY;
  const resultSteps = steps.map(s => ({
    stage: s.stage,
    state: s.failed && failedStep ? StepState.FAILED : s.done ? StepState.DONE : s === current ? StepState.IN_PROGRESS : StepState.PENDING,
  }));
  const explain = (condition: ResourceCondition | undefined, message?: string): FunctionProgress => ({
    stage: current?.stage ?? PipelineStage.READY,
    state,
    ...(condition?.reason ? { reason: condition.reason } : {}),
    ...(message ?? condition?.message ? { message: message ?? condition?.message } : {}),
    ...(condition?.lastTransitionTime ? { since: condition.lastTransitionTime } : {}),
    steps: resultSteps,
  });
  if (failedStep) return { explain, early: explain(failedStep.failed) };
  if (stale) return { explain, early: explain(undefined, stale) };
  const conditions = fn.status?.conditions ?? [];
  if (!conditions.length) return { explain, early: explain(undefined, 'waiting for the controller') };
  // The controller puts the condition it wrote last first; a later lastTransitionTime wins all the same.
  return { explain, latest: conditions.reduce((best, c) => (time(c.lastTransitionTime) > time(best.lastTransitionTime) ? c : best), conditions[0]) };
}
