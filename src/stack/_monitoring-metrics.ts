/**
 * The metrics the stack's alerts and dashboard read, each with the program that exports it. An
 * expression may use no other metric: a test parses every expression and checks its names here.
 */

/** Who exports a metric. */
export enum MetricSource {
  /** Prometheus itself: the synthetic series of every scrape target. */
  PROMETHEUS = 'Prometheus: the synthetic series of every scrape target (here the stack\'s ServiceMonitors and PodMonitor)',
  /**
   * controller-runtime v0.22.5, the manager of the 1.11.1 Function Controller (`cmd/manager/main.go`,
   * metrics on `APP_METRICS_ADDRESS` :8080): `pkg/internal/controller/metrics/metrics.go` and
   * `pkg/internal/metrics/workqueue.go`, labelled by controller (`function-controller`,
   * `configmap-controller`, `namespace-controller`, `secret-controller`, `serviceaccount-controller`).
   */
  CONTROLLER_RUNTIME = 'controller-runtime v0.22.5 in the 1.11.1 Function Controller '
    + '(pkg/internal/controller/metrics/metrics.go, pkg/internal/metrics/workqueue.go)',
  /**
   * The 1.11.1 Function Controller's own collector
   * (`components/serverless/internal/controllers/serverless/metrics/function_metrics.go`): the time
   * from a Function's creation to each condition, for first-generation Functions only. Its
   * `namespace` label is the Function's, which Prometheus keeps as `exported_namespace`.
   */
  FUNCTION_CONTROLLER = 'the 1.11.1 Function Controller (components/serverless/internal/controllers/serverless/metrics/function_metrics.go)',
  /**
   * The 1.13.0 Function Controller's own collector
   * (`components/buildless-serverless/internal/controller/metrics/metrics.go`): the time from a change of a
   * Function's spec to each condition it reaches (`state`), by runtime and source.
   */
  BUILDLESS_FUNCTION_CONTROLLER = 'the 1.13.0 Function Controller (components/buildless-serverless/internal/controller/metrics/metrics.go)',
  /** Our admission webhook (`src/webhook/metrics.ts`, `/metrics` on 8080). */
  WEBHOOK = 'our admission webhook (src/webhook/metrics.ts)',
  /** The kubelet's `/metrics` (kube-prometheus-stack scrapes it), labelled by `namespace` and `persistentvolumeclaim`. */
  KUBELET = 'the kubelet (volume stats of mounted PersistentVolumeClaims)',
  /**
   * kube-state-metrics: build Jobs are those a Function owns (`kube_job_owner`), a Function's
   * Deployment the one it owns (`kube_deployment_owner`, kube-state-metrics 2.18 and later).
   */
  KUBE_STATE_METRICS = 'kube-state-metrics 2.18 or later (kube-prometheus-stack installs it)',
}

/** Prometheus' metric types, as far as the expressions care. */
export enum MetricType {
  COUNTER = 'counter',
  GAUGE = 'gauge',
  /** Read through its `_bucket`, `_sum` and `_count` series. */
  HISTOGRAM = 'histogram',
}

/** A metric an expression may read. */
export interface KnownMetric {
  /** Its name; a histogram's base name. */
  readonly name: string;
  readonly type: MetricType;
  readonly source: MetricSource;
}

const metric = (name: string, type: MetricType, source: MetricSource): KnownMetric => ({ name, type, source });

/** Every metric the alerts and the dashboard read, by source. */
export const KNOWN_METRICS: readonly KnownMetric[] = [
  metric('up', MetricType.GAUGE, MetricSource.PROMETHEUS),

  metric('controller_runtime_reconcile_total', MetricType.COUNTER, MetricSource.CONTROLLER_RUNTIME),
  metric('controller_runtime_reconcile_errors_total', MetricType.COUNTER, MetricSource.CONTROLLER_RUNTIME),
  metric('controller_runtime_reconcile_time_seconds', MetricType.HISTOGRAM, MetricSource.CONTROLLER_RUNTIME),
  metric('workqueue_depth', MetricType.GAUGE, MetricSource.CONTROLLER_RUNTIME),

  metric('function_running_status_duration_millisecond', MetricType.GAUGE, MetricSource.FUNCTION_CONTROLLER),
  metric('serverless_function_state_reach_time_seconds', MetricType.HISTOGRAM, MetricSource.BUILDLESS_FUNCTION_CONTROLLER),

  metric('kyma_serverless_webhook_requests_total', MetricType.COUNTER, MetricSource.WEBHOOK),
  metric('kyma_serverless_webhook_request_duration_seconds', MetricType.HISTOGRAM, MetricSource.WEBHOOK),
  metric('kyma_serverless_webhook_certificate_expiry_timestamp_seconds', MetricType.GAUGE, MetricSource.WEBHOOK),

  metric('kubelet_volume_stats_used_bytes', MetricType.GAUGE, MetricSource.KUBELET),
  metric('kubelet_volume_stats_capacity_bytes', MetricType.GAUGE, MetricSource.KUBELET),

  metric('kube_job_owner', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_job_failed', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_job_complete', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_job_status_active', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_job_status_start_time', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_job_status_completion_time', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_deployment_owner', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
  metric('kube_deployment_status_condition', MetricType.GAUGE, MetricSource.KUBE_STATE_METRICS),
];

/** The series names a metric is read by: a histogram's `_bucket`, `_sum` and `_count`, else its name. */
export function seriesNames(known: KnownMetric): string[] {
  return known.type === MetricType.HISTOGRAM ? ['_bucket', '_sum', '_count'].map(suffix => `${known.name}${suffix}`) : [known.name];
}
