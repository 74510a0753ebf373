/**
 * When an object `apply` applied is ready, as `kubectl rollout status` and the API server tell it:
 * CRDs Established, Namespaces Active, workloads rolled out, Jobs complete, webhook configurations
 * given their CA bundle. One object at a time, pure.
 */
import { parseApiVersion } from '../_rest';

/** Where an object is on its way to ready. */
export enum ReadinessState {
  READY = 'ready',
  /** Not yet: the message says what is missing. */
  WAITING = 'waiting',
  /** It will not become ready without a change (a failed Job, a rejected CRD name). */
  FAILED = 'failed',
}

/** Whether an object is ready, and why (not). */
export interface Readiness {
  readonly state: ReadinessState;
  /** What was seen: `Established`, `0 of 1 updated replicas available (...)`. */
  readonly message: string;
}

interface Condition { readonly type?: string; readonly status?: string; readonly reason?: string; readonly message?: string }

const conditionOf = (object: any, type: string): Condition | undefined =>
  ((object?.status?.conditions ?? []) as Condition[]).find(c => c.type === type);

/** `Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability.` */
function describeCondition(condition: Condition | undefined): string {
  if (!condition) return '';
  const why = [condition.reason, condition.message].filter(Boolean).join(': ');
  return `${condition.type}=${condition.status}${why ? ` ${why}` : ''}`;
}

const ready = (message: string): Readiness => ({ state: ReadinessState.READY, message });
const waiting = (message: string): Readiness => ({ state: ReadinessState.WAITING, message });
/** @internal */
export const failed = (message: string): Readiness => ({ state: ReadinessState.FAILED, message });

/** Whether the controller has seen the current spec: `observedGeneration` reached `generation`. */
function unobserved(object: any, controller: string): Readiness | undefined {
  const generation = object?.metadata?.generation;
  const observed = object?.status?.observedGeneration;
  if (generation === undefined || (observed !== undefined && observed >= generation)) return undefined;
  return waiting(observed === undefined
    ? `the ${controller} controller has not processed it yet`
    : `the ${controller} controller has processed generation ${observed} of ${generation}`);
}

function crdReadiness(crd: any): Readiness {
  const names = conditionOf(crd, 'NamesAccepted');
  const established = conditionOf(crd, 'Established');
  if (names?.status === 'False') {
    return failed(`its names are not accepted (${describeCondition(names)}): choose names no other CRD of the group uses`);
  }
  if (established?.status === 'True' && names?.status === 'True') return ready('Established');
  const seen = [names, established].filter(Boolean).map(describeCondition).join('; ');
  return waiting(`not Established yet${seen ? ` (${seen})` : ''}`);
}

function namespaceReadiness(namespace: any): Readiness {
  const phase = namespace?.status?.phase;
  if (phase === 'Active') return ready('Active');
  if (phase === 'Terminating') return failed('is being deleted (Terminating): wait until it is gone, then apply again');
  return waiting(phase ? `phase ${phase}` : 'no phase yet');
}

/** As `kubectl rollout status` judges a Deployment. */
function deploymentReadiness(deployment: any): Readiness {
  const progressing = conditionOf(deployment, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return failed(`its rollout exceeded the progress deadline (${describeCondition(progressing)})`);
  }
  const notSeen = unobserved(deployment, 'Deployment');
  if (notSeen) return notSeen;
  const status = deployment?.status ?? {};
  const want: number = deployment?.spec?.replicas ?? 1;
  const updated: number = status.updatedReplicas ?? 0;
  const available: number = status.availableReplicas ?? 0;
  const availableCondition = conditionOf(deployment, 'Available');
  const why = availableCondition?.status === 'False' ? ` (${describeCondition(availableCondition)})` : '';
  if (updated < want) return waiting(`${updated} of ${want} replicas updated${why}`);
  if ((status.replicas ?? 0) > updated) return waiting(`${status.replicas - updated} old replicas are pending termination`);
  if (available < updated) return waiting(`${available} of ${updated} updated replicas available${why}`);
  return ready(`${available} of ${want} replicas available`);
}

/** As `kubectl rollout status` judges a StatefulSet. */
function statefulSetReadiness(statefulSet: any): Readiness {
  const strategy = statefulSet?.spec?.updateStrategy;
  if (strategy?.type === 'OnDelete') return ready('updateStrategy OnDelete: its rollout is not waited for');
  const notSeen = unobserved(statefulSet, 'StatefulSet');
  if (notSeen) return notSeen;
  const status = statefulSet?.status ?? {};
  const want: number = statefulSet?.spec?.replicas ?? 1;
  const readyReplicas: number = status.readyReplicas ?? 0;
  if (readyReplicas < want) return waiting(`${readyReplicas} of ${want} replicas ready`);
  const partition: number = strategy?.rollingUpdate?.partition ?? 0;
  const updated: number = status.updatedReplicas ?? 0;
  if (partition > 0) {
    if (updated < want - partition) return waiting(`${updated} of ${want - partition} replicas updated (partition ${partition})`);
    return ready(`${readyReplicas} of ${want} replicas ready, ${updated} updated (partition ${partition})`);
  }
  if (status.updateRevision !== status.currentRevision) {
    return waiting(`rolling update: ${updated} of ${want} replicas at revision ${status.updateRevision}`);
  }
  return ready(`${readyReplicas} of ${want} replicas ready`);
}

/** As `kubectl rollout status` judges a DaemonSet. */
function daemonSetReadiness(daemonSet: any): Readiness {
  if (daemonSet?.spec?.updateStrategy?.type === 'OnDelete') return ready('updateStrategy OnDelete: its rollout is not waited for');
  const notSeen = unobserved(daemonSet, 'DaemonSet');
  if (notSeen) return notSeen;
  const status = daemonSet?.status ?? {};
  const desired: number = status.desiredNumberScheduled ?? 0;
  const updated: number = status.updatedNumberScheduled ?? 0;
  const available: number = status.numberAvailable ?? 0;
  if (updated < desired) return waiting(`${updated} of ${desired} Pods updated`);
  if (available < desired) return waiting(`${available} of ${desired} updated Pods available`);
  return ready(`${available} of ${desired} Pods available`);
}

function jobReadiness(job: any): Readiness {
  const complete = conditionOf(job, 'Complete');
  if (complete?.status === 'True') return ready('Complete');
  const jobFailed = conditionOf(job, 'Failed');
  if (jobFailed?.status === 'True') {
    return failed(`${describeCondition(jobFailed)}; see its Pods' logs: kubectl logs -n ${job?.metadata?.namespace} job/${job?.metadata?.name}`);
  }
  const status = job?.status ?? {};
  const counts = `${status.active ?? 0} active, ${status.succeeded ?? 0} succeeded, ${status.failed ?? 0} failed`;
  if (conditionOf(job, 'Suspended')?.status === 'True') return waiting(`suspended (${counts}): set spec.suspend to false`);
  return waiting(`not complete yet (${counts})`);
}

/** Webhooks that call a Service need its CA bundle, which the stack's webhook (or cert-manager) writes. */
function webhookConfigurationReadiness(configuration: any): Readiness | undefined {
  const viaService = ((configuration?.webhooks ?? []) as { name?: string; clientConfig?: { service?: unknown; caBundle?: string } }[])
    .filter(w => w.clientConfig?.service);
  if (!viaService.length) return undefined;
  const missing = viaService.filter(w => !w.clientConfig?.caBundle).map(w => w.name);
  if (missing.length) {
    return waiting(`no caBundle yet on ${missing.length === 1 ? 'webhook' : 'webhooks'} ${missing.join(', ')} `
      + '(the webhook server writes it at start-up, or cert-manager\'s CA injector)');
  }
  return ready(`caBundle set on ${viaService.length === 1 ? 'its webhook' : `all ${viaService.length} webhooks`}`);
}

/**
 * Whether an object as the API server returns it is ready, for the kinds apply waits for:
 * CustomResourceDefinitions (Established and NamesAccepted), Namespaces (Active), Deployments,
 * StatefulSets and DaemonSets (rolled out, as `kubectl rollout status` judges), Jobs (Complete;
 * Failed is a failure), and Mutating/ValidatingWebhookConfigurations whose webhooks call a Service
 * (a caBundle on each).
 *
 * @returns undefined for every other kind: it is ready once applied. PersistentVolumeClaims are
 * not waited for (with WaitForFirstConsumer they bind only once a Pod uses them), nor are custom
 * resources (their controllers define ready; for Functions, see `kyma-serverless status --watch`)
 */
export function readinessOf(object: any): Readiness | undefined {
  const { group } = parseApiVersion(String(object?.apiVersion ?? ''));
  switch (`${group}/${object?.kind}`) {
    case 'apiextensions.k8s.io/CustomResourceDefinition': return crdReadiness(object);
    case '/Namespace': return namespaceReadiness(object);
    case 'apps/Deployment': return deploymentReadiness(object);
    case 'apps/StatefulSet': return statefulSetReadiness(object);
    case 'apps/DaemonSet': return daemonSetReadiness(object);
    case 'batch/Job': return jobReadiness(object);
    case 'admissionregistration.k8s.io/MutatingWebhookConfiguration':
    case 'admissionregistration.k8s.io/ValidatingWebhookConfiguration':
      return webhookConfigurationReadiness(object);
    default: return undefined;
  }
}
