/**
 * The stack's alerting rules, and the PromQL the dashboard shares with them.
 *
 * Every expression reads only metrics the programs really export; the comment beside each names
 * them and their source (the list, with the files they come from, is `_monitoring-metrics.ts`):
 * - `up`: Prometheus, per target of the stack's ServiceMonitors (`job` = the Service's name) and
 *   PodMonitor (`job` = `<namespace>/<name>`);
 * - `controller_runtime_*`, `workqueue_*`: controller-runtime v0.22.5 inside the 1.11.1 controller;
 * - `function_*_status_duration_millisecond`: the 1.11.1 controller's own collector;
 * - `kyma_serverless_webhook_*`: our webhook (`src/webhook/metrics.ts`);
 * - `kubelet_volume_stats_*`: the kubelet;
 * - `kube_job_*`, `kube_deployment_*`: kube-state-metrics (2.18 or later for `kube_deployment_owner`).
 */
import { Duration } from 'cdk8s';
import { WEBHOOK_PATHS } from '../webhook/config';
import { RequestResult } from '../webhook/metrics';
import { FUNCTION_RECONCILER } from './_metrics-names';
import { matchers, matchesOneOf, promDuration } from './_promql';
import { AlertThresholds } from './alert-thresholds';

/** The alerts of the stack, by the name Alertmanager shows; each has a runbook in `docs/monitoring.md`, a section named after it. */
export enum ServerlessAlert {
  /** No controller Pod can be scraped. */
  CONTROLLER_DOWN = 'KymaServerlessControllerDown',
  /** The controller runs, but its Function reconciler has reconciled nothing (not even its own health checks). */
  CONTROLLER_NOT_RECONCILING = 'KymaServerlessControllerNotReconciling',
  /** A reconciler of the controller fails more than a tenth of its reconciliations. */
  CONTROLLER_RECONCILE_ERRORS = 'KymaServerlessControllerReconcileErrors',
  /** Most build Jobs that finished in the last hour failed, across several Functions. */
  BUILD_JOBS_FAILING = 'KymaServerlessBuildJobsFailing',
  /** A Function's builds keep failing, or its Deployment has not been available, for long. */
  FUNCTION_NOT_READY = 'KymaServerlessFunctionNotReady',
  /** No webhook Pod can be scraped: with `failurePolicy: Fail`, no Function can be written. */
  WEBHOOK_DOWN = 'KymaServerlessWebhookDown',
  /** The webhook answers admission reviews with errors. */
  WEBHOOK_ERRORS = 'KymaServerlessWebhookErrors',
  /** The webhook answers admission reviews slowly. */
  WEBHOOK_LATENCY_HIGH = 'KymaServerlessWebhookLatencyHigh',
  /** The webhook's serving certificate expires soon: its renewal has failed. */
  WEBHOOK_CERTIFICATE_EXPIRING = 'KymaServerlessWebhookCertificateExpiring',
  /** The internal registry cannot be scraped. */
  REGISTRY_DOWN = 'KymaServerlessRegistryDown',
  /** The internal registry's volume is nearly full. */
  REGISTRY_VOLUME_FILLING = 'KymaServerlessRegistryVolumeFilling',
}

/** How bad an alert is, the `severity` label Alertmanager routes by. */
export enum AlertSeverity {
  /** Functions cannot be built, written or pulled: act now. */
  CRITICAL = 'critical',
  /** Something degrades or will break: act soon. */
  WARNING = 'warning',
}

/** What the stack's monitoring scrapes, as the label values Prometheus gives its series. */
export interface MonitoringScope {
  /** The stack's namespace: the `namespace` label of the stack's targets. */
  readonly namespace: string;
  /** The `job` label of the controller's targets: its metrics Service's name. */
  readonly controllerJob: string;
  /** The `job` label of the webhook's targets; undefined when the webhook is off. */
  readonly webhookJob?: string;
  /** The internal registry: its targets' `job` label and its PersistentVolumeClaim; undefined for an external one. */
  readonly registry?: { readonly job: string; readonly claim: string };
  /**
   * The `controller` label of the Function reconciler's series.
   *
   * @default FUNCTION_RECONCILER (1.11.1's)
   */
  readonly reconciler?: string;
  /**
   * Whether the release builds images: without builds (1.13.0) nothing reads build Jobs.
   *
   * @default true
   */
  readonly builds?: boolean;
}

/** One alerting rule. */
export interface AlertRule {
  readonly alert: ServerlessAlert;
  readonly expr: string;
  readonly for: string;
  readonly severity: AlertSeverity;
  /** Labels beyond `severity`, which tell rules of one alert apart. */
  readonly labels?: { readonly [name: string]: string };
  readonly summary: string;
  readonly description: string;
}

/** A group of rules Prometheus evaluates together. */
export interface AlertGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** The least number of Functions whose builds failed before {@link ServerlessAlert.BUILD_JOBS_FAILING} fires. */
export const BUILD_FAILURE_MIN_FUNCTIONS = 2;

export { FUNCTION_RECONCILER };

/** The admission paths of the webhook, the `path` label of its request series. */
const ADMISSION_PATHS = [WEBHOOK_PATHS.defaulting, WEBHOOK_PATHS.validation];

/** The results of an admission review that answered it; every other result of an admission path is a failure. */
const ANSWERED = [RequestResult.ALLOWED, RequestResult.DENIED];

/** Matchers of the controller's series. */
export const controllerSeries = (scope: MonitoringScope) => matchers({ namespace: scope.namespace, job: scope.controllerJob });

/** Matchers of the webhook's series. */
export const webhookSeries = (scope: MonitoringScope) => matchers({ namespace: scope.namespace, job: scope.webhookJob ?? '' });

/** Matchers of the webhook's admission requests. */
export const admissionSeries = (scope: MonitoringScope) => `${webhookSeries(scope)},${matchesOneOf('path', ADMISSION_PATHS)}`;

/** Matchers of the kubelet's stats of the internal registry's volume. */
export const registryVolumeSeries = (scope: MonitoringScope) =>
  matchers({ namespace: scope.namespace, persistentvolumeclaim: scope.registry?.claim ?? '' });

/**
 * Build Jobs, one series per Job with the Function's name as `owner_name`: the Jobs a Function
 * owns (the controller creates them with the Function as controller owner). kube-state-metrics'
 * `kube_job_owner`; deduplicated, as several kube-state-metrics replicas may report one Job.
 *
 * @param window when given, the Jobs that existed at any time of it, also those deleted since
 */
export function buildJobs(window?: string): string {
  const owner = 'kube_job_owner{owner_kind="Function",owner_is_controller="true"}';
  return `max by (namespace, job_name, owner_name) (${window ? `max_over_time(${owner}[${window}])` : owner})`;
}

/**
 * Build Jobs that failed at any time of the window, one series per Job, with `owner_name`:
 * kube-state-metrics' `kube_job_failed{condition="true"}` (1 once the Job has failed; the
 * controller deletes a failed build Job after five minutes and starts another) joined with {@link buildJobs}.
 */
export function failedBuildJobs(window: string): string {
  return `(max by (namespace, job_name) (max_over_time(kube_job_failed{condition="true"}[${window}])) == 1)`
    + ` * on (namespace, job_name) group_left (owner_name) ${buildJobs(window)}`;
}

/**
 * Build Jobs that succeeded within the window, one series per Job: kube-state-metrics'
 * `kube_job_status_completion_time` (set only when a Job succeeds) joined with {@link buildJobs}.
 */
export function succeededBuildJobs(window: Duration): string {
  const w = promDuration(window);
  return `(max by (namespace, job_name) (max_over_time(kube_job_status_completion_time[${w}])) > time() - ${window.toSeconds()})`
    + ` * on (namespace, job_name) group_left (owner_name) ${buildJobs(w)}`;
}

/** Build Jobs that have succeeded and still exist, with `owner_name`: kube-state-metrics' `kube_job_complete{condition="true"}`. */
export function succeededBuildJobsNow(): string {
  return `(max by (namespace, job_name) (kube_job_complete{condition="true"}) == 1) * on (namespace, job_name) group_left (owner_name) ${buildJobs()}`;
}

/** Build Jobs running now, with `owner_name`: kube-state-metrics' `kube_job_status_active`. */
export function activeBuildJobs(): string {
  return `(max by (namespace, job_name) (kube_job_status_active) > 0) * on (namespace, job_name) group_left (owner_name) ${buildJobs()}`;
}

/**
 * Function Deployments with their Available condition in a status (`true`, `false`), one series per
 * Function with `namespace` and `function`: kube-state-metrics' `kube_deployment_status_condition`
 * joined with `kube_deployment_owner` (2.18 and later) of Deployments a Function owns.
 */
export function functionDeployments(available: 'true' | 'false'): string {
  const owner = 'max by (namespace, deployment, owner_name) (kube_deployment_owner{owner_kind="Function"})';
  const condition = `(max by (namespace, deployment) (kube_deployment_status_condition{condition="Available",status="${available}"}) == 1)`;
  return byFunction(`${condition} * on (namespace, deployment) group_left (owner_name) ${owner}`);
}

/** One series per Function (`namespace`, `function`) of an expression with `owner_name`. */
export function byFunction(expression: string): string {
  return `max by (namespace, function) (label_replace(${expression}, "function", "$1", "owner_name", "(.+)"))`;
}

/** The file of this package that holds the runbooks, one `####` section per alert, named after it. */
export const RUNBOOKS_FILE = 'docs/monitoring.md';

/** The runbook of an alert where the runbooks are published: the anchor of its section. */
export function runbookUrl(baseUrl: string, alert: ServerlessAlert): string {
  return `${baseUrl}#${alert.toLowerCase()}`;
}

/** Where an alert without a runbook URL says its runbook is. */
export function runbookReference(alert: ServerlessAlert): string {
  return `Runbook: ${alert} in ${RUNBOOKS_FILE} of cdk8s-kyma-serverless`;
}

/**
 * The alerting rules of a stack: the controller's always; the webhook's and the registry's when
 * the stack runs them.
 */
export function alertGroups(scope: MonitoringScope, thresholds: AlertThresholds): AlertGroup[] {
  const controller = controllerSeries(scope);
  const reconciler = `${controller},controller="${scope.reconciler ?? FUNCTION_RECONCILER}"`;
  const builds = scope.builds ?? true;
  const groups: AlertGroup[] = [{
    name: 'kyma-serverless-controller',
    rules: [{
      alert: ServerlessAlert.CONTROLLER_DOWN,
      // up: Prometheus, one series per controller Pod its ServiceMonitor finds.
      expr: `absent(up{${controller}} == 1)`,
      for: '5m',
      severity: AlertSeverity.CRITICAL,
      summary: 'The Function Controller is down',
      description: `No Pod of the Function Controller in ${scope.namespace} can be scraped: no Function is ${builds ? 'built, ' : ''}deployed or updated.`,
    }, {
      alert: ServerlessAlert.CONTROLLER_NOT_RECONCILING,
      // controller_runtime_reconcile_total: controller-runtime v0.22.5 in the 1.11.1 and 1.13.0 controllers,
      // only on the leader (controllers start after leader election); every liveness probe (120 s; 30 s
      // under 1.13.0, when the queue is empty) makes the Function reconciler reconcile a health event, so a
      // working leader never counts 0 in 15 minutes.
      // up: Prometheus, one series per controller Pod.
      expr: `sum(rate(controller_runtime_reconcile_total{${reconciler}}[15m])) == 0`
        + ` or (absent(controller_runtime_reconcile_total{${reconciler}}) and on () sum(up{${controller}}) > 0)`,
      for: '15m',
      severity: AlertSeverity.CRITICAL,
      summary: 'The Function Controller reconciles no Functions',
      description: `The Function Controller in ${scope.namespace} runs, but its Function reconciler has reconciled nothing for 15 minutes: `
        + 'no replica leads, or the leader is stuck.',
    }, {
      alert: ServerlessAlert.CONTROLLER_RECONCILE_ERRORS,
      // controller_runtime_reconcile_errors_total, controller_runtime_reconcile_total: controller-runtime
      // v0.22.5 in the 1.11.1 controller, by controller (function, configmap, namespace, secret, serviceaccount).
      expr: `100 * sum by (controller) (rate(controller_runtime_reconcile_errors_total{${controller}}[15m]))`
        + ` / sum by (controller) (rate(controller_runtime_reconcile_total{${controller}}[15m])) > 10`,
      for: '15m',
      severity: AlertSeverity.WARNING,
      summary: 'A reconciler of the Function Controller keeps failing',
      description: `The {{ $labels.controller }} of the Function Controller in ${scope.namespace} failed {{ printf "%.0f" $value }}% of its `
        + 'reconciliations in the last 15 minutes.',
    }],
  }];

  const hour = Duration.hours(1);
  const failed = failedBuildJobs(promDuration(hour));
  const notReadyFor = promDuration(thresholds.functionNotReadyFor);
  const buildRules: AlertRule[] = [{
    alert: ServerlessAlert.BUILD_JOBS_FAILING,
    // kube_job_owner, kube_job_failed, kube_job_status_completion_time: kube-state-metrics, of the
    // Jobs Functions own (see failedBuildJobs and succeededBuildJobs).
    expr: `100 * count(${failed}) / (count(${failed}) + (count(${succeededBuildJobs(hour)}) or vector(0)))`
      + ` > ${thresholds.buildFailurePercent}`
      + ` and on () count(count by (namespace, owner_name) (${failed})) >= ${BUILD_FAILURE_MIN_FUNCTIONS}`,
    for: '5m',
    severity: AlertSeverity.WARNING,
    summary: 'Most Function builds fail',
    description: `{{ printf "%.0f" $value }}% of the build Jobs that finished in the last hour failed, across at least `
      + `${BUILD_FAILURE_MIN_FUNCTIONS} Functions: the registry, the build image or the nodes may be at fault rather than the Functions.`,
  }, {
    alert: ServerlessAlert.FUNCTION_NOT_READY,
    // kube_job_owner, kube_job_failed: kube-state-metrics (see failedBuildJobs); kube_job_complete:
    // kube-state-metrics, 1 for a Job that succeeded (see succeededBuildJobsNow: a fixed build ends the alert at once).
    expr: `${byFunction(failedBuildJobs('15m'))} unless on (namespace, function) ${byFunction(succeededBuildJobsNow())}`,
    for: notReadyFor,
    severity: AlertSeverity.WARNING,
    labels: { condition: 'BuildReady' },
    summary: 'A Function\'s builds keep failing',
    description: `The build Jobs of Function {{ $labels.namespace }}/{{ $labels.function }} have kept failing for ${notReadyFor}.`,
  }];
  groups.push({
    name: 'kyma-serverless-functions',
    // Only a release that builds images (1.11.1) has build Jobs to alert on.
    rules: [...(builds ? buildRules : []), {
      alert: ServerlessAlert.FUNCTION_NOT_READY,
      // kube_deployment_status_condition, kube_deployment_owner: kube-state-metrics (2.18 and later), of
      // the Deployment a Function owns (see functionDeployments).
      expr: functionDeployments('false'),
      for: notReadyFor,
      severity: AlertSeverity.WARNING,
      labels: { condition: 'Running' },
      summary: 'A Function is not running',
      description: `The Deployment of Function {{ $labels.namespace }}/{{ $labels.function }} has not been available for ${notReadyFor}.`,
    }],
  });

  if (scope.webhookJob) {
    const webhook = webhookSeries(scope);
    const admission = admissionSeries(scope);
    const latency = thresholds.webhookLatency.toMilliseconds() / 1000;
    const expiry = promDuration(thresholds.certificateExpiry);
    groups.push({
      name: 'kyma-serverless-webhook',
      rules: [{
        alert: ServerlessAlert.WEBHOOK_DOWN,
        // up: Prometheus, one series per webhook Pod its ServiceMonitor finds.
        expr: `absent(up{${webhook}} == 1)`,
        for: '5m',
        severity: AlertSeverity.CRITICAL,
        summary: 'The admission webhook is down',
        description: `No Pod of the admission webhook in ${scope.namespace} can be scraped; with failurePolicy Fail, the API server refuses `
          + 'every create and update of a Function.',
      }, {
        alert: ServerlessAlert.WEBHOOK_ERRORS,
        // kyma_serverless_webhook_requests_total: our webhook (src/webhook/metrics.ts), by path and result;
        // an admission review answered is allowed or denied, anything else failed.
        expr: `100 * sum(rate(kyma_serverless_webhook_requests_total{${admission},${matchesOneOf('result', ANSWERED, true)}}[5m]))`
          + ` / sum(rate(kyma_serverless_webhook_requests_total{${admission}}[5m])) > 5`,
        for: '10m',
        severity: AlertSeverity.WARNING,
        summary: 'The admission webhook fails admission reviews',
        description: `{{ printf "%.0f" $value }}% of the admission reviews the webhook in ${scope.namespace} received in the last 5 minutes `
          + 'failed (neither allowed nor denied): the API server refuses those Function writes.',
      }, {
        alert: ServerlessAlert.WEBHOOK_LATENCY_HIGH,
        // kyma_serverless_webhook_request_duration_seconds: our webhook's histogram (src/webhook/metrics.ts), by path.
        expr: `histogram_quantile(0.99, sum by (le, path) (rate(kyma_serverless_webhook_request_duration_seconds_bucket{${admission}}[5m])))`
          + ` > ${latency}`,
        for: '10m',
        severity: AlertSeverity.WARNING,
        summary: 'The admission webhook answers slowly',
        description: `The 99th percentile of the webhook's answers on {{ $labels.path }} took {{ $value | humanizeDuration }}, over ${latency} s: `
          + 'every Function write waits for it.',
      }, {
        alert: ServerlessAlert.WEBHOOK_CERTIFICATE_EXPIRING,
        // kyma_serverless_webhook_certificate_expiry_timestamp_seconds: our webhook (src/webhook/metrics.ts),
        // set from the certificate it serves; time(): the evaluation time.
        expr: `min(kyma_serverless_webhook_certificate_expiry_timestamp_seconds{${webhook}}) - time() < ${thresholds.certificateExpiry.toSeconds()}`,
        for: '15m',
        severity: AlertSeverity.WARNING,
        summary: 'The admission webhook\'s certificate expires soon',
        description: `A webhook Pod in ${scope.namespace} serves a certificate that expires within ${expiry} (in {{ $value | humanizeDuration }}): `
          + 'its renewal has failed. Once it expires, the API server refuses every Function write.',
      }],
    });
  }

  if (scope.registry) {
    const registry = matchers({ namespace: scope.namespace, job: scope.registry.job });
    const volume = registryVolumeSeries(scope);
    groups.push({
      name: 'kyma-serverless-registry',
      rules: [{
        alert: ServerlessAlert.REGISTRY_DOWN,
        // up: Prometheus, one series per registry Pod its PodMonitor finds.
        expr: `absent(up{${registry}} == 1)`,
        for: '5m',
        severity: AlertSeverity.CRITICAL,
        summary: 'The internal registry is down',
        description: `The internal registry in ${scope.namespace} cannot be scraped: builds cannot push Function images, and nodes cannot pull them.`,
      }, {
        alert: ServerlessAlert.REGISTRY_VOLUME_FILLING,
        // kubelet_volume_stats_used_bytes, kubelet_volume_stats_capacity_bytes: the kubelet of the node
        // that mounts the registry's PersistentVolumeClaim.
        expr: `100 * max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_used_bytes{${volume}})`
          + ` / max by (namespace, persistentvolumeclaim) (kubelet_volume_stats_capacity_bytes{${volume}})`
          + ` > ${thresholds.registryVolumeUsagePercent}`,
        for: '15m',
        severity: AlertSeverity.WARNING,
        summary: 'The internal registry\'s volume is nearly full',
        description: `The volume of the internal registry in ${scope.namespace} is {{ printf "%.0f" $value }}% full; when it is full, builds `
          + 'cannot push Function images.',
      }],
    });
  }
  return groups;
}
