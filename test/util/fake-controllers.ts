/**
 * The cluster's controllers, played on the fake API server: what makes a Deployment available, a
 * Job complete or failed, and a webhook configuration hold its CA bundle. The fake itself only
 * stores what it is sent.
 *
 * Each hook writes the status (or field) a controller would, with {@link FakeKubeApi.put}, so the
 * writes are not seen as field managers. {@link FakeControllers.start} plays them all: every
 * workload, Job and webhook configuration written from then on is made ready after a delay.
 *
 * @example
 * const controllers = new FakeControllers(api);
 * controllers.start({ delayMs: 20, failJobs: job => job.metadata?.name === 'broken' });
 * ...
 * controllers.rollOut(objectPath(DEPLOYMENTS, 'web', 'shop'));   // or one object, by hand
 * controllers.stop();
 */
import { FakeKubeApi, KubeObject, WatchEvent } from './fake-kube-api';

/** A base64 PEM-looking CA bundle, as the webhook writes it. */
export const FAKE_CA_BUNDLE = Buffer.from('-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n').toString('base64');

/** Options of {@link FakeControllers.start}. */
export interface ControllerOptions {
  /**
   * How long after a write the controllers act.
   *
   * @default 0 (on the next turn of the event loop)
   */
  readonly delayMs?: number;
  /**
   * Objects the controllers leave alone (a Deployment that never becomes available).
   *
   * @default - none
   */
  readonly ignore?: (object: KubeObject) => boolean;
  /**
   * Jobs that fail rather than complete.
   *
   * @default - none
   */
  readonly failJobs?: (job: KubeObject) => boolean;
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastTransitionTime: now() });
const WORKLOADS = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet']);
const WEBHOOK_CONFIGURATIONS = new Set(['admissionregistration.k8s.io/MutatingWebhookConfiguration', 'admissionregistration.k8s.io/ValidatingWebhookConfiguration']);
const groupKind = (o: KubeObject) => `${o.apiVersion?.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}`;

/** Plays the Deployment, StatefulSet, DaemonSet and Job controllers and the webhook's CA injection. */
export class FakeControllers {
  private readonly timers = new Set<NodeJS.Timeout>();
  private listener?: (event: WatchEvent) => void;

  constructor(private readonly api: FakeKubeApi) {}

  /**
   * Marks a Deployment, StatefulSet or DaemonSet rolled out: its current generation observed, every
   * replica updated, ready and available.
   *
   * @param path the object's API path
   * @returns the object as stored
   */
  public rollOut(path: string): KubeObject {
    return this.change(path, o => {
      const replicas = o.spec?.replicas ?? 1;
      const observedGeneration = o.metadata?.generation;
      switch (o.kind) {
        case 'StatefulSet':
          o.status = {
            observedGeneration, replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas, currentReplicas: replicas,
            currentRevision: `${o.metadata?.name}-1`, updateRevision: `${o.metadata?.name}-1`,
          };
          break;
        case 'DaemonSet':
          o.status = { observedGeneration, desiredNumberScheduled: 1, currentNumberScheduled: 1, updatedNumberScheduled: 1, numberReady: 1, numberAvailable: 1 };
          break;
        default:
          o.status = {
            observedGeneration, replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas,
            conditions: [
              condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
              condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${o.metadata?.name}-5d8f7c" has successfully progressed.`),
            ],
          };
      }
    });
  }

  /**
   * Writes the status of a Deployment whose Pods do not become ready: observed, updated, not available.
   *
   * @param path the Deployment's API path
   */
  public stall(path: string): KubeObject {
    return this.change(path, o => {
      const replicas = o.spec?.replicas ?? 1;
      o.status = {
        observedGeneration: o.metadata?.generation, replicas, updatedReplicas: replicas, unavailableReplicas: replicas,
        conditions: [
          condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
          condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${o.metadata?.name}-5d8f7c" is progressing.`),
        ],
      };
    });
  }

  /** Marks a Job complete. */
  public completeJob(path: string): KubeObject {
    return this.change(path, o => {
      o.status = { succeeded: 1, completionTime: now(), conditions: [condition('Complete', 'True', '', '')] };
    });
  }

  /** Marks a Job failed, with the Job controller's reason and message. */
  public failJob(path: string, reason = 'BackoffLimitExceeded', message = 'Job has reached the specified backoff limit'): KubeObject {
    return this.change(path, o => {
      o.status = { failed: (o.spec?.backoffLimit ?? 6) + 1, conditions: [condition('Failed', 'True', reason, message)] };
    });
  }

  /** Writes a CA bundle into every webhook of a Mutating/ValidatingWebhookConfiguration, as the webhook server does at start-up. */
  public injectCaBundle(path: string, caBundle = FAKE_CA_BUNDLE): KubeObject {
    return this.change(path, o => {
      for (const webhook of o.webhooks ?? []) webhook.clientConfig = { ...webhook.clientConfig, caBundle };
    });
  }

  /** From now on, makes every workload, Job and webhook configuration written ready (or a Job failed) after `delayMs`. */
  public start(options: ControllerOptions = {}): void {
    this.stop();
    this.listener = event => {
      if (event.type === 'DELETED') return;
      const object = event.object;
      if (options.ignore?.(object)) return;
      const kind = groupKind(object);
      const path = this.api.pathOf(object);
      let act: (() => void) | undefined;
      if (WORKLOADS.has(kind) && object.status?.observedGeneration !== object.metadata?.generation) act = () => this.rollOut(path);
      else if (kind === 'batch/Job' && !object.status?.conditions?.length) {
        act = () => (options.failJobs?.(object) ? this.failJob(path) : this.completeJob(path));
      } else if (WEBHOOK_CONFIGURATIONS.has(kind) && (object.webhooks ?? []).some((w: any) => w.clientConfig?.service && !w.clientConfig.caBundle)) {
        act = () => this.injectCaBundle(path);
      }
      if (!act) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        // The object may be gone, or made ready by hand, in the meantime.
        if (this.api.get(path)) act!();
      }, options.delayMs ?? 0);
      this.timers.add(timer);
    };
    this.api.events.on('change', this.listener);
  }

  /** Stops playing the controllers. */
  public stop(): void {
    if (this.listener) this.api.events.off('change', this.listener);
    this.listener = undefined;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private change(path: string, edit: (object: KubeObject) => void): KubeObject {
    const object = this.api.get(path);
    if (!object) throw new Error(`FakeControllers: no object at ${path}`);
    edit(object);
    return this.api.put(object);
  }
}
