/**
 * Monitoring of the stack with the Prometheus Operator: what Prometheus scrapes (ServiceMonitors
 * and a PodMonitor), the alerts it evaluates (a PrometheusRule), and a Grafana dashboard.
 */
import { ApiObject, Duration } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type * as prometheusOperator from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { isDns1123Label, isLabelValue, qualifiedNameProblems } from '../api/names';
import { METRICS_PORT_NAME } from './_metrics-names';
import { dashboardFileName, dashboardJson } from './_monitoring-dashboard';
import { MonitoringScope, ServerlessAlert, alertGroups, runbookReference, runbookUrl } from './_monitoring-rules';
import { AlertThresholds } from './alert-thresholds';
import { promDuration } from './_promql';
import { requireInteger } from './_util';

export { AlertSeverity, ServerlessAlert } from './_monitoring-rules';

/** The label (and value) Grafana's dashboard sidecar finds dashboards by, in kube-prometheus-stack's default configuration. */
export const GRAFANA_DASHBOARD_LABEL = { key: 'grafana_dashboard', value: '1' } as const;

export { METRICS_PORT_NAME };

/** The alerts, and their thresholds where they are a matter of taste. */
export interface MonitoringAlertOptions {
  /**
   * Render the PrometheusRule with the alerts.
   *
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * Labels added to every alert, such as `team: platform`, for Alertmanager's routes. Each alert sets
   * its own `severity` (`critical` or `warning`), which these cannot replace.
   *
   * @default - none
   */
  readonly labels?: { readonly [name: string]: string };

  /**
   * Where the alerts' runbooks are published: each alert's `runbook_url` is this URL with
   * `#<alert name in lower case>`. The runbooks are `docs/monitoring.md` of this package, one
   * section per alert, named after it (`node_modules/cdk8s-kyma-serverless/docs/monitoring.md` in
   * every install); give the URL where your wiki or Git server shows that file, or a copy of it.
   *
   * @default - no `runbook_url`: each alert's description ends with where its runbook is
   * ("Runbook: <alert> in docs/monitoring.md of cdk8s-kyma-serverless")
   */
  readonly runbookBaseUrl?: string;

  /**
   * How long a Function's builds may keep failing, or its Deployment stay unavailable, before
   * `KymaServerlessFunctionNotReady` fires.
   *
   * @default Duration.minutes(30)
   */
  readonly functionNotReadyFor?: Duration;

  /**
   * The share of the build Jobs that finished in the last hour which must have failed (across at
   * least two Functions) for `KymaServerlessBuildJobsFailing` to fire, in percent.
   *
   * @default 50
   */
  readonly buildFailurePercent?: number;

  /**
   * The 99th percentile of the webhook's answers above which `KymaServerlessWebhookLatencyHigh`
   * fires. Must be shorter than the webhook's `timeout`.
   *
   * @default Duration.seconds(1)
   */
  readonly webhookLatency?: Duration;

  /**
   * How long before the webhook's serving certificate expires `KymaServerlessWebhookCertificateExpiring`
   * fires. Keep it shorter than the certificates' `renewBefore` (30 days by default), so that it
   * fires only when a renewal has failed.
   *
   * @default Duration.days(14)
   */
  readonly certificateExpiry?: Duration;

  /**
   * How full, in percent, the internal registry's volume may be before `KymaServerlessRegistryVolumeFilling` fires.
   *
   * @default 85
   */
  readonly registryVolumeUsagePercent?: number;
}

/** The Grafana dashboard. */
export interface MonitoringDashboardOptions {
  /**
   * Render the dashboard's ConfigMap.
   *
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * Labels of the ConfigMap, which Grafana's dashboard sidecar finds it by (its `label` and
   * `labelValue` settings). Given labels replace the default.
   *
   * @default { grafana_dashboard: '1' }
   * @see https://github.com/grafana/helm-charts/tree/main/charts/grafana#sidecar-for-dashboards
   */
  readonly labels?: { readonly [key: string]: string };

  /**
   * The namespace of the ConfigMap. kube-prometheus-stack's sidecar reads only Grafana's own
   * namespace unless its `searchNamespace` says otherwise; the namespace must exist.
   *
   * @default - the stack's namespace
   */
  readonly namespace?: string;
}

/** Monitoring of the stack with the Prometheus Operator. */
export interface MonitoringOptions {
  /**
   * Render the monitoring objects. The cluster then needs the Prometheus Operator's CRDs
   * (kube-prometheus-stack installs them); `kyma-serverless preflight` checks for them.
   *
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * Labels on the ServiceMonitors, the PodMonitor and the PrometheusRule, which your Prometheus
   * selects them by (its `serviceMonitorSelector`, `podMonitorSelector` and `ruleSelector`).
   * kube-prometheus-stack installed as the Helm release `prometheus` selects `release: prometheus`.
   *
   * @default - none: Prometheus must select them without labels
   * @see https://prometheus-operator.dev/docs/developer/troubleshooting/#overview-of-servicemonitor-tagging-and-related-elements
   */
  readonly selectorLabels?: { readonly [key: string]: string };

  /**
   * How often Prometheus scrapes the stack's targets.
   *
   * @default - Prometheus' own scrape interval
   */
  readonly scrapeInterval?: Duration;

  /**
   * The namespace Prometheus runs in: the stack's NetworkPolicies let every Pod of it reach the
   * metrics ports (8080, and the internal registry's 5001).
   *
   * @default - Pods labelled `networking.kyma-project.io/metrics-scraping: allowed`, in any namespace
   */
  readonly prometheusNamespace?: string;

  /**
   * The alerts.
   *
   * @default - every alert, with the default thresholds
   */
  readonly alerts?: MonitoringAlertOptions;

  /**
   * The Grafana dashboard.
   *
   * @default - a ConfigMap labelled `grafana_dashboard: "1"` in the stack's namespace
   */
  readonly dashboards?: MonitoringDashboardOptions;
}

/** The internal registry's Pods as a PodMonitor selects them. */
export interface RegistryMetricsTarget {
  /** The registry's name, which its PodMonitor takes. */
  readonly name: string;
  /** The labels of the registry's Pods. */
  readonly podSelector: { readonly [key: string]: string };
  /** The name of the container port that serves the metrics. */
  readonly portName: string;
  /** The registry's PersistentVolumeClaim, whose volume stats the kubelet exports. */
  readonly claimName: string;
}

/** Props of {@link ServerlessMonitoring}. */
export interface ServerlessMonitoringProps extends MonitoringOptions {
  /** The stack's namespace. */
  readonly namespace: string;

  /** The controller's metrics Service (port `http-metrics`). */
  readonly controllerService: ApiObject;

  /**
   * The `controller` label of the controller's Function reconciler (the release's controller says it).
   *
   * @default 'function-controller' (1.11.1's)
   */
  readonly functionReconciler?: string;

  /**
   * Whether the stack's release builds images. Without builds (1.13.0) there is no build alert, panel or series.
   *
   * @default true
   */
  readonly builds?: boolean;

  /**
   * The webhook's Service (port `http-metrics`).
   *
   * @default - no webhook: nothing of it is scraped or alerted on
   */
  readonly webhookService?: ApiObject;

  /**
   * How long the API server waits for the webhook.
   *
   * @default Duration.seconds(10)
   */
  readonly webhookTimeout?: Duration;

  /**
   * The internal registry.
   *
   * @default - an external registry: nothing of it is scraped or alerted on
   */
  readonly registry?: RegistryMetricsTarget;
}

/** Prometheus label names: what alert labels may be called. */
const PROMETHEUS_LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function labelProblems(prop: string, labels: { readonly [key: string]: string } | undefined): string[] {
  return Object.entries(labels ?? {}).flatMap(([key, value]) => [
    ...qualifiedNameProblems(key).map(p => `'${prop}' key '${key}' ${p}`),
    ...(isLabelValue(value) ? [] : [
      `'${prop}.${key}' (${value}) must be a label value: at most 63 letters, digits, '-', '_' and '.', starting and ending alphanumeric`,
    ]),
  ]);
}

function wholeSeconds(prop: string, duration: Duration, min: number): number {
  const seconds = duration.toSeconds({ integral: false });
  requireInteger(`${prop} (seconds)`, seconds, min);
  return seconds;
}

/**
 * What Prometheus needs to watch the stack, in the stack's namespace:
 * - a ServiceMonitor each for the controller and the webhook (Service port `http-metrics`, 8080),
 *   and a PodMonitor for the internal registry (its debug listener, 5001);
 * - a PrometheusRule with the alerts, each naming its runbook (a section of `docs/monitoring.md`), or
 *   linking it with `alerts.runbookBaseUrl`;
 * - a ConfigMap with a Grafana dashboard for Grafana's sidecar.
 *
 * The alerts about Functions and builds read kube-state-metrics (2.18 or later), and the registry's
 * volume alert the kubelet's volume stats: kube-prometheus-stack scrapes both.
 */
export class ServerlessMonitoring extends Construct {
  /** The resolved thresholds of the alerts. */
  public readonly thresholds: AlertThresholds;
  /** The base URL of the alerts' runbooks, when they link one. */
  public readonly runbookBaseUrl?: string;
  /** The PrometheusRule; undefined when the alerts are off. */
  public readonly rules?: ApiObject;
  /** The dashboard's ConfigMap; undefined when the dashboard is off. */
  public readonly dashboard?: ApiObject;

  constructor(scope: Construct, id: string, props: ServerlessMonitoringProps) {
    super(scope, id);
    const alerts = props.alerts ?? {};
    const dashboards = props.dashboards ?? {};
    this.runbookBaseUrl = alerts.runbookBaseUrl;
    this.thresholds = {
      functionNotReadyFor: alerts.functionNotReadyFor ?? Duration.minutes(30),
      buildFailurePercent: alerts.buildFailurePercent ?? 50,
      webhookLatency: alerts.webhookLatency ?? Duration.seconds(1),
      certificateExpiry: alerts.certificateExpiry ?? Duration.days(14),
      registryVolumeUsagePercent: alerts.registryVolumeUsagePercent ?? 85,
    };
    this.checkProps(props);

    const scopeOf: MonitoringScope = {
      namespace: props.namespace,
      controllerJob: props.controllerService.name,
      webhookJob: props.webhookService?.name,
      registry: props.registry ? { job: `${props.namespace}/${props.registry.name}`, claim: props.registry.claimName } : undefined,
      reconciler: props.functionReconciler,
      builds: props.builds,
    };
    // Prometheus finds the monitors and the rules by the selector labels.
    const labels = (component: string) => ({
      'app.kubernetes.io/name': 'serverless', 'app.kubernetes.io/component': component, ...props.selectorLabels,
    });
    const endpoint = {
      port: METRICS_PORT_NAME,
      path: '/metrics',
      scheme: 'http' as const,
      ...(props.scrapeInterval ? { interval: promDuration(props.scrapeInterval) } : {}),
    };

    // Loaded only here: stacks without monitoring do not pay for the models at every synth.
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { ServiceMonitor } = require('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor') as typeof prometheusOperator;
    const { PodMonitor } = require('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor') as typeof prometheusOperator;
    const { PrometheusRule } = require('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule') as typeof prometheusOperator;
    /* eslint-enable @typescript-eslint/no-require-imports */

    // Named after the Service it scrapes, whose name is the `job` label of its targets.
    const serviceMonitor = (cid: string, service: ApiObject) => {
      const selector = ['app.kubernetes.io/name', 'app.kubernetes.io/component'].map(key => [key, service.metadata.getLabel(key)!]);
      const monitor = new ServiceMonitor({
        metadata: { name: service.name, namespace: props.namespace, labels: labels('monitoring') },
        spec: {
          selector: { matchLabels: Object.fromEntries(selector) },
          namespaceSelector: { matchNames: [props.namespace] },
          endpoints: [endpoint],
        },
      });
      monitor.validate();
      new ApiObject(this, cid, monitor.toJSON());
    };
    serviceMonitor('ControllerMonitor', props.controllerService);
    if (props.webhookService) serviceMonitor('WebhookMonitor', props.webhookService);

    if (props.registry) {
      // The job label of a PodMonitor's targets is `<namespace>/<name>`: the registry's alerts select it so.
      const monitor = new PodMonitor({
        metadata: { name: props.registry.name, namespace: props.namespace, labels: labels('monitoring') },
        spec: {
          selector: { matchLabels: { ...props.registry.podSelector } },
          namespaceSelector: { matchNames: [props.namespace] },
          podMetricsEndpoints: [{ ...endpoint, port: props.registry.portName }],
        },
      });
      monitor.validate();
      new ApiObject(this, 'RegistryMonitor', monitor.toJSON());
    }

    if (alerts.enabled ?? true) {
      const rule = new PrometheusRule({
        metadata: { namespace: props.namespace, labels: labels('alerts') },
        spec: {
          groups: alertGroups(scopeOf, this.thresholds).map(group => ({
            name: group.name,
            rules: group.rules.map(r => ({
              alert: r.alert,
              expr: r.expr,
              for: r.for,
              labels: { ...alerts.labels, severity: r.severity, ...r.labels },
              annotations: this.annotationsOf(r),
            })),
          })),
        },
      });
      rule.validate();
      this.rules = new ApiObject(this, 'Rules', rule.toJSON());
    }

    if (dashboards.enabled ?? true) {
      this.dashboard = new k8s.KubeConfigMap(this, 'Dashboard', {
        metadata: {
          namespace: dashboards.namespace ?? props.namespace,
          labels: { ...(dashboards.labels ?? { [GRAFANA_DASHBOARD_LABEL.key]: GRAFANA_DASHBOARD_LABEL.value }) },
        },
        data: { [dashboardFileName(props.namespace)]: dashboardJson(scopeOf) },
      });
    }
  }

  /** The annotations of an alert: what it says, and its runbook's URL, or where its runbook is. */
  private annotationsOf(rule: { readonly alert: ServerlessAlert; readonly summary: string; readonly description: string }): { [name: string]: string } {
    if (this.runbookBaseUrl === undefined) return { summary: rule.summary, description: `${rule.description} ${runbookReference(rule.alert)}` };
    return { summary: rule.summary, description: rule.description, runbook_url: runbookUrl(this.runbookBaseUrl, rule.alert) };
  }

  /** Throws, naming every prop, when the options contradict themselves or the stack. */
  private checkProps(props: ServerlessMonitoringProps): void {
    const alerts = props.alerts ?? {};
    const t = this.thresholds;
    const problems: string[] = [
      ...labelProblems('monitoring.selectorLabels', props.selectorLabels),
      ...labelProblems('monitoring.dashboards.labels', props.dashboards?.labels),
    ];
    for (const [prop, namespace] of [['prometheusNamespace', props.prometheusNamespace], ['dashboards.namespace', props.dashboards?.namespace]]) {
      if (namespace !== undefined && !isDns1123Label(namespace)) {
        problems.push(`'monitoring.${prop}' (${namespace}) must be a DNS-1123 label: at most 63 lower-case letters, digits and '-'`);
      }
    }
    for (const key of Object.keys(alerts.labels ?? {})) {
      if (!PROMETHEUS_LABEL_NAME.test(key)) {
        problems.push(`'monitoring.alerts.labels' key '${key}' must be a Prometheus label name: letters, digits and '_', not starting with a digit`);
      }
      if (key === 'severity') {
        problems.push('\'monitoring.alerts.labels\' cannot set \'severity\': each alert sets its own (critical or warning); route on it in Alertmanager');
      }
    }
    let url: URL | undefined;
    try {
      url = this.runbookBaseUrl === undefined ? undefined : new URL(this.runbookBaseUrl);
    } catch {
      url = undefined;
    }
    if (this.runbookBaseUrl !== undefined && (!url || !['http:', 'https:'].includes(url.protocol) || url.hash)) {
      problems.push(`'monitoring.alerts.runbookBaseUrl' (${this.runbookBaseUrl}) must be an http or https URL without '#': `
        + 'each alert adds \'#<its name>\'');
    }
    if (problems.length) throw new Error(problems.join('\n'));

    if (props.scrapeInterval) wholeSeconds('monitoring.scrapeInterval', props.scrapeInterval, 1);
    wholeSeconds('monitoring.alerts.functionNotReadyFor', t.functionNotReadyFor, 60);
    wholeSeconds('monitoring.alerts.certificateExpiry', t.certificateExpiry, 3600);
    requireInteger('monitoring.alerts.buildFailurePercent', t.buildFailurePercent, 0, 99);
    requireInteger('monitoring.alerts.registryVolumeUsagePercent', t.registryVolumeUsagePercent, 1, 99);
    const latency = t.webhookLatency.toMilliseconds();
    requireInteger('monitoring.alerts.webhookLatency (milliseconds)', latency, 1);
    const timeout = props.webhookTimeout ?? Duration.seconds(10);
    if (props.webhookService && latency >= timeout.toMilliseconds()) {
      throw new Error(`'monitoring.alerts.webhookLatency' (${latency} ms) must be shorter than 'webhook.timeout' (${timeout.toSeconds()} s): `
        + 'the API server gives up on the webhook by then');
    }
  }
}
