/**
 * The stack's Grafana dashboard, generated from code: the same input gives the same JSON, with
 * sorted keys, sequential panel ids and a uid derived from the stack's namespace.
 *
 * Its queries read the metrics of the alerts (`_monitoring-rules.ts`, whose helpers they share);
 * the comment beside each names the metrics' source.
 */
import { createHash } from 'node:crypto';
import { Duration } from 'cdk8s';
import {
  MonitoringScope, activeBuildJobs, admissionSeries, buildJobs, byFunction, controllerSeries, failedBuildJobs, functionDeployments,
  registryVolumeSeries, succeededBuildJobs, webhookSeries,
} from './_monitoring-rules';

/** One query of a panel. */
interface Target {
  readonly expr: string;
  readonly legendFormat: string;
}

/** A panel: its type, title, unit and queries; the layout comes from its row. */
interface Panel {
  readonly type: 'timeseries' | 'stat';
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly targets: readonly Target[];
}

/** A row of panels, each as wide as the row allows. */
interface Row {
  readonly title: string;
  readonly panels: readonly Panel[];
}

/** The Grafana dashboard JSON model's version these dashboards are written in (Grafana 10 and later). */
const SCHEMA_VERSION = 39;

/** Grafana's grid is 24 units wide. */
const GRID_WIDTH = 24;
const PANEL_HEIGHT = 8;

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/**
 * The rows of a stack's dashboard: Functions and builds, the controller, and the webhook and registry
 * when the stack runs them. A release that builds nothing (1.13.0) has no build row or build series.
 */
function rows(scope: MonitoringScope): Row[] {
  return (scope.builds ?? true) ? buildRows(scope) : buildlessRows(scope);
}

/** The rows of a stack of release 1.13.0: Functions, the controller, the webhook. */
function buildlessRows(scope: MonitoringScope): Row[] {
  const controller = controllerSeries(scope);
  return [{
    title: 'Functions',
    panels: [{
      type: 'timeseries',
      title: 'Functions by state',
      description: 'Functions whose Deployment is available or not (kube-state-metrics: Deployments a Function owns).',
      unit: 'none',
      targets: [
        // kube_deployment_status_condition, kube_deployment_owner: kube-state-metrics 2.18 and later.
        { expr: `count(${functionDeployments('true')}) or vector(0)`, legendFormat: 'running' },
        { expr: `count(${functionDeployments('false')}) or vector(0)`, legendFormat: 'not available' },
      ],
    }, {
      type: 'timeseries',
      title: 'Time to reach a condition (99th percentile)',
      description: 'How long Functions took, from a change of their spec, to reach each condition (the controller\'s own histogram).',
      unit: 's',
      targets: [
        // serverless_function_state_reach_time_seconds: the 1.13.0 controller's histogram, by state (condition).
        {
          expr: 'histogram_quantile(0.99, sum by (state, le) '
            + `(rate(serverless_function_state_reach_time_seconds_bucket{${controller}}[$__rate_interval])))`,
          legendFormat: '{{state}}',
        },
      ],
    }],
  }, controllerRow(scope), ...webhookRows(scope)];
}

/** The rows of a stack of a release that builds images (1.11.1). */
function buildRows(scope: MonitoringScope): Row[] {
  const controller = controllerSeries(scope);
  const hour = Duration.hours(1);
  const result: Row[] = [{
    title: 'Functions',
    panels: [{
      type: 'timeseries',
      title: 'Functions by state',
      description: 'Functions whose Deployment is available or not, whose build runs, and whose last build failed '
        + '(kube-state-metrics: Jobs and Deployments a Function owns).',
      unit: 'none',
      targets: [
        // kube_deployment_status_condition, kube_deployment_owner: kube-state-metrics 2.18 and later.
        { expr: `count(${functionDeployments('true')}) or vector(0)`, legendFormat: 'running' },
        { expr: `count(${functionDeployments('false')}) or vector(0)`, legendFormat: 'not available' },
        // kube_job_status_active, kube_job_owner: kube-state-metrics.
        { expr: `count(${byFunction(activeBuildJobs())}) or vector(0)`, legendFormat: 'building' },
        // kube_job_failed, kube_job_owner: kube-state-metrics.
        { expr: `count(${byFunction(failedBuildJobs('5m'))}) or vector(0)`, legendFormat: 'build failed' },
      ],
    }, {
      type: 'timeseries',
      title: 'Time from creation to running',
      description: 'How long each Function took from creation until it first ran (the controller\'s own gauge: first generation only, '
        + 'since the controller started).',
      unit: 's',
      targets: [
        // function_running_status_duration_millisecond: the 1.11.1 controller; its namespace label is the Function's (exported_namespace).
        { expr: `function_running_status_duration_millisecond{${controller}} / 1000`, legendFormat: '{{exported_namespace}}/{{name}}' },
      ],
    }],
  }, {
    title: 'Builds',
    panels: [{
      type: 'timeseries',
      title: 'Build Jobs in the last hour',
      description: 'Build Jobs that succeeded and failed in the hour before each point (kube-state-metrics).',
      unit: 'none',
      targets: [
        // kube_job_status_completion_time, kube_job_owner: kube-state-metrics.
        { expr: `count(${succeededBuildJobs(hour)}) or vector(0)`, legendFormat: 'succeeded' },
        // kube_job_failed, kube_job_owner: kube-state-metrics.
        { expr: `count(${failedBuildJobs('1h')}) or vector(0)`, legendFormat: 'failed' },
      ],
    }, {
      type: 'timeseries',
      title: 'Build time',
      description: 'How long each build Job that succeeded ran, by Function (kube-state-metrics).',
      unit: 's',
      targets: [
        // kube_job_status_completion_time, kube_job_status_start_time, kube_job_owner: kube-state-metrics.
        {
          expr: `max by (namespace, owner_name) ((max by (namespace, job_name) (kube_job_status_completion_time)`
            + ` - max by (namespace, job_name) (kube_job_status_start_time)) * on (namespace, job_name) group_left (owner_name) ${buildJobs()})`,
          legendFormat: '{{namespace}}/{{owner_name}}',
        },
      ],
    }],
  }, controllerRow(scope), ...webhookRows(scope)];

  if (scope.registry) {
    const volume = registryVolumeSeries(scope);
    result.push({
      title: 'Registry',
      panels: [{
        type: 'timeseries',
        title: 'Registry volume used',
        description: 'The share of the internal registry\'s volume in use (the kubelet\'s volume stats).',
        unit: 'percent',
        targets: [
          // kubelet_volume_stats_used_bytes, kubelet_volume_stats_capacity_bytes: the kubelet.
          {
            expr: `100 * max(kubelet_volume_stats_used_bytes{${volume}}) / max(kubelet_volume_stats_capacity_bytes{${volume}})`,
            legendFormat: 'used',
          },
        ],
      }],
    });
  }
  return result;
}

/** The controller's row: the same for every release (controller-runtime v0.22.5 in both). */
function controllerRow(scope: MonitoringScope): Row {
  const controller = controllerSeries(scope);
  return {
    title: 'Controller',
    panels: [{
      type: 'timeseries',
      title: 'Reconciliations',
      description: 'Reconciliations per second, by reconciler and result (controller-runtime).',
      unit: 'ops',
      targets: [
        // controller_runtime_reconcile_total: controller-runtime v0.22.5 in the 1.11.1 controller.
        {
          expr: `sum by (controller, result) (rate(controller_runtime_reconcile_total{${controller}}[$__rate_interval]))`,
          legendFormat: '{{controller}} {{result}}',
        },
      ],
    }, {
      type: 'timeseries',
      title: 'Reconcile time (99th percentile)',
      description: 'How long reconciliations take, by reconciler (controller-runtime).',
      unit: 's',
      targets: [
        // controller_runtime_reconcile_time_seconds: controller-runtime v0.22.5's histogram.
        {
          expr: 'histogram_quantile(0.99, sum by (controller, le) '
            + `(rate(controller_runtime_reconcile_time_seconds_bucket{${controller}}[$__rate_interval])))`,
          legendFormat: '{{controller}}',
        },
      ],
    }, {
      type: 'timeseries',
      title: 'Work queue depth',
      description: 'Requests waiting for each reconciler (controller-runtime).',
      unit: 'none',
      targets: [
        // workqueue_depth: controller-runtime v0.22.5.
        { expr: `sum by (name) (workqueue_depth{${controller}})`, legendFormat: '{{name}}' },
      ],
    }],
  };
}

/** The webhook's row, when the stack runs the webhook. */
function webhookRows(scope: MonitoringScope): Row[] {
  if (!scope.webhookJob) return [];
  const admission = admissionSeries(scope);
  return [{
    title: 'Admission webhook',
    panels: [{
      type: 'timeseries',
      title: 'Admission reviews',
      description: 'Admission reviews per second, by path and result (allowed, denied, or a failure).',
      unit: 'reqps',
      targets: [
        // kyma_serverless_webhook_requests_total: our webhook (src/webhook/metrics.ts).
        {
          expr: `sum by (path, result) (rate(kyma_serverless_webhook_requests_total{${admission}}[$__rate_interval]))`,
          legendFormat: '{{path}} {{result}}',
        },
      ],
    }, {
      type: 'timeseries',
      title: 'Admission latency',
      description: 'The median and the 99th percentile of the time to answer an admission review, by path.',
      unit: 's',
      targets: [0.5, 0.99].map(q => ({
        // kyma_serverless_webhook_request_duration_seconds: our webhook's histogram (src/webhook/metrics.ts).
        expr: `histogram_quantile(${q}, sum by (path, le) `
          + `(rate(kyma_serverless_webhook_request_duration_seconds_bucket{${admission}}[$__rate_interval])))`,
        legendFormat: `p${q * 100} {{path}}`,
      })),
    }, {
      type: 'stat',
      title: 'Certificate expires in',
      description: 'Time left until the serving certificate the webhook serves expires (the earliest of its Pods).',
      unit: 's',
      targets: [
        // kyma_serverless_webhook_certificate_expiry_timestamp_seconds: our webhook (src/webhook/metrics.ts).
        { expr: `min(kyma_serverless_webhook_certificate_expiry_timestamp_seconds{${webhookSeries(scope)}}) - time()`, legendFormat: 'expires in' },
      ],
    }],
  }];
}

/** A Grafana uid: at most 40 characters, the same for the same namespace. */
function dashboardUid(namespace: string): string {
  const uid = `kyma-serverless-${namespace}`;
  return uid.length <= 40 ? uid : `kyma-serverless-${createHash('sha256').update(namespace).digest('hex').slice(0, 16)}`;
}

/** A copy of a JSON value with every object's keys sorted, so the text does not depend on the order they were written in. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map(key => [key, sortKeys((value as Record<string, unknown>)[key])]));
  }
  return value;
}

/** The dashboard's file name in its ConfigMap, which Grafana's sidecar writes it to (one per stack namespace). */
export function dashboardFileName(namespace: string): string {
  return `kyma-serverless-${namespace}.json`;
}

/**
 * The dashboard of a stack, as the JSON Grafana imports: pretty-printed, keys sorted.
 *
 * @param scope what the stack's monitoring scrapes
 */
export function dashboardJson(scope: MonitoringScope): string {
  let id = 0;
  let y = 0;
  const panels: object[] = [];
  for (const row of rows(scope)) {
    panels.push({ id: ++id, type: 'row', title: row.title, collapsed: false, panels: [], gridPos: { h: 1, w: GRID_WIDTH, x: 0, y: y++ } });
    const width = GRID_WIDTH / row.panels.length;
    row.panels.forEach((panel, i) => {
      panels.push({
        id: ++id,
        type: panel.type,
        title: panel.title,
        description: panel.description,
        datasource: DATASOURCE,
        gridPos: { h: PANEL_HEIGHT, w: width, x: i * width, y },
        fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
        options: panel.type === 'stat'
          ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false } }
          : { legend: { displayMode: 'list', placement: 'bottom' } },
        targets: panel.targets.map((target, t) => ({
          refId: String.fromCharCode(65 + t), datasource: DATASOURCE, expr: target.expr, legendFormat: target.legendFormat,
        })),
      });
    });
    y += PANEL_HEIGHT;
  }
  const dashboard = {
    uid: dashboardUid(scope.namespace),
    title: `Kyma Serverless (${scope.namespace})`,
    description: 'Functions, builds, the Function Controller, the admission webhook and the registry of the Kyma Serverless stack.',
    tags: ['kyma', 'serverless'],
    editable: false,
    graphTooltip: 1,
    refresh: '1m',
    schemaVersion: SCHEMA_VERSION,
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    templating: {
      list: [{
        name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', hide: 0, current: {}, options: [], refresh: 1, regex: '',
      }],
    },
    annotations: { list: [] },
    links: [],
    panels,
  };
  return `${JSON.stringify(sortKeys(dashboard), undefined, 2)}\n`;
}
