/**
 * Monitoring of the stack with the Prometheus Operator: what Prometheus scrapes (ServiceMonitors
 * and a PodMonitor).
 */
import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import type * as prometheusOperator from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { isDns1123Label, isLabelValue, qualifiedNameProblems } from '../api';
import { promDuration } from './_promql';
import { requireInteger } from './_util';

/** The name of the port the stack's workloads serve Prometheus metrics on. */
export const METRICS_PORT_NAME = 'http-metrics';

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
   * Labels on the ServiceMonitors and the PodMonitor, which your Prometheus selects them by (its
   * `serviceMonitorSelector` and `podMonitorSelector`).
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
   * The webhook's Service (port `http-metrics`).
   *
   * @default - no webhook: nothing of it is scraped
   */
  readonly webhookService?: ApiObject;

  /**
   * The internal registry.
   *
   * @default - an external registry: nothing of it is scraped
   */
  readonly registry?: RegistryMetricsTarget;
}

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
 * What Prometheus needs to watch the stack, in the stack's namespace: a ServiceMonitor each for
 * the controller and the webhook (Service port `http-metrics`, 8080), and a PodMonitor for the
 * internal registry (its debug listener, 5001).
 */
export class ServerlessMonitoring extends Construct {
  constructor(scope: Construct, id: string, props: ServerlessMonitoringProps) {
    super(scope, id);
    this.checkProps(props);

    // Prometheus finds the monitors by the selector labels.
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
  }

  /** Throws, naming every prop, when the options are not usable. */
  private checkProps(props: ServerlessMonitoringProps): void {
    const problems: string[] = labelProblems('monitoring.selectorLabels', props.selectorLabels);
    const namespace = props.prometheusNamespace;
    if (namespace !== undefined && !isDns1123Label(namespace)) {
      problems.push(`'monitoring.prometheusNamespace' (${namespace}) must be a DNS-1123 label: at most 63 lower-case letters, digits and '-'`);
    }
    if (problems.length) throw new Error(problems.join('\n'));

    if (props.scrapeInterval) wholeSeconds('monitoring.scrapeInterval', props.scrapeInterval, 1);
  }
}
