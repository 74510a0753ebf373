/**
 * NetworkPolicies of the stack's namespace, equivalent to (and never looser than) 1.11.1's.
 */
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { CONTROLLER_POD_NETWORK_LABELS } from './controller';
import { WEBHOOK_PORT } from '../webhook/config';
import { INTERNAL_REGISTRY_METRICS_PORT, INTERNAL_REGISTRY_PORT } from './registry';
import { WEBHOOK_SELECTOR } from './webhook';

const MODULE = { 'kyma-project.io/module': 'serverless' };

function tcpUdp(port: number): k8s.NetworkPolicyPort[] {
  return [
    { protocol: 'UDP', port: k8s.IntOrString.fromNumber(port) },
    { protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) },
  ];
}

/** The label of Pods that may scrape the stack's metrics ports (upstream's). */
export const METRICS_SCRAPING_LABEL = { key: 'networking.kyma-project.io/metrics-scraping', value: 'allowed' } as const;

/** Who may scrape the stack's metrics ports from outside its namespace: Prometheus. */
export interface PrometheusScrapingOptions {
  /**
   * The namespace Prometheus runs in; every Pod of it may scrape.
   *
   * @default - Pods labelled `networking.kyma-project.io/metrics-scraping: allowed`, in any namespace
   */
  readonly namespace?: string;

  /**
   * Open the internal registry's metrics port (5001) too.
   *
   * @default false
   */
  readonly registry?: boolean;
}

/** Props of {@link ServerlessNetworkPolicies}. */
export interface ServerlessNetworkPoliciesProps {
  /**
   * Open the admission webhook's HTTPS port.
   *
   * @default false
   */
  readonly webhook?: boolean;

  /**
   * Open the internal registry's port (5000) to pushes and pulls: for a release that builds images.
   * Without it (1.13.0) nothing is pushed or pulled in the stack's namespace.
   *
   * @default true
   */
  readonly registry?: boolean;

  /**
   * Let Prometheus scrape the metrics ports from other namespaces (the stack's `monitoring`).
   *
   * @default - only the Pods upstream's metrics policy allows, in the stack's namespace
   */
  readonly prometheus?: PrometheusScrapingOptions;
}

/**
 * A default deny for every Pod of the stack's namespace, then five NetworkPolicies that allow what
 * the stack needs, named as upstream names them so they replace rather than duplicate:
 * - the controller may reach anything (Git servers, registries, the API server; under 1.13.0 it
 *   still resolves Git Functions' commits itself);
 * - metrics ports are open to scrapers labelled `networking.kyma-project.io/metrics-scraping: allowed`;
 * - with `registry` (1.11.1), the registry accepts pushes and pulls on 5000 from anywhere (build
 *   Jobs, kubelets via the NodePort);
 * - labelled Pods may reach the API server on 443 and 6443 (upstream allows only 443, which
 *   misses clusters whose CNI sees the endpoint port after DNAT);
 * - every stack Pod may resolve DNS;
 * - with the webhook, a sixth: its HTTPS port is open to the API server (whose address no
 *   selector can name, so to any source);
 * - with `prometheus` (the stack's `monitoring`), a seventh: Prometheus, in its own namespace, may
 *   reach the metrics ports (8080, and the internal registry's 5001).
 * They only restrict traffic where the CNI enforces NetworkPolicy.
 */
export class ServerlessNetworkPolicies extends Construct {
  constructor(scope: Construct, id: string, props: ServerlessNetworkPoliciesProps = {}) {
    super(scope, id);
    const policy = (cid: string, name: string, purpose: string, spec: k8s.NetworkPolicySpec) =>
      new k8s.KubeNetworkPolicy(this, cid, {
        metadata: { name: `kyma-project.io--serverless-${name}`, labels: { purpose } },
        spec,
      });

    // Everything not allowed below is denied, in and out, for every Pod of the namespace.
    policy('DefaultDeny', 'default-deny', 'default-deny', {
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
    });

    policy('AllowEgress', 'allow-egress', 'fn-code-fetching', {
      podSelector: { matchLabels: { ...MODULE, 'networking.serverless.kyma-project.io/from-serverless': CONTROLLER_POD_NETWORK_LABELS['networking.serverless.kyma-project.io/from-serverless'] } },
      policyTypes: ['Egress'],
      egress: [{}],
    });

    policy('AllowMetrics', 'allow-metrics', 'metrics', {
      podSelector: { matchLabels: MODULE },
      policyTypes: ['Ingress'],
      ingress: [{
        from: [
          { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rma' } } },
          { podSelector: { matchLabels: { [METRICS_SCRAPING_LABEL.key]: METRICS_SCRAPING_LABEL.value } } },
        ],
        ports: [{ protocol: 'TCP', port: k8s.IntOrString.fromNumber(8080) }],
      }],
    });

    if (props.registry ?? true) {
      policy('AllowRegistry', 'allow-registry', 'registry', {
        podSelector: { matchLabels: { ...MODULE, 'app.kubernetes.io/name': 'docker-registry' } },
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ protocol: 'TCP', port: k8s.IntOrString.fromNumber(INTERNAL_REGISTRY_PORT) }] }],
      });
    }

    policy('AllowToApiServer', 'allow-to-apiserver', 'apiserver', {
      podSelector: { matchLabels: { 'networking.serverless.kyma-project.io/to-apiserver': 'allowed' } },
      policyTypes: ['Egress'],
      egress: [{
        ports: [
          { protocol: 'TCP', port: k8s.IntOrString.fromNumber(443) },
          { protocol: 'TCP', port: k8s.IntOrString.fromNumber(6443) },
        ],
      }],
    });

    const kubeSystem = { namespaceSelector: { matchLabels: { 'gardener.cloud/purpose': 'kube-system' } } };
    policy('AllowDns', 'to-dns', 'dns', {
      podSelector: { matchLabels: MODULE },
      policyTypes: ['Egress'],
      egress: [
        { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: tcpUdp(53) },
        { to: [{ ...kubeSystem, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: tcpUdp(8053) },
        { to: [{ ...kubeSystem, podSelector: { matchLabels: { 'k8s-app': 'node-local-dns' } } }], ports: tcpUdp(53) },
      ],
    });

    if (props.webhook) {
      policy('AllowWebhook', 'allow-webhook', 'webhook', {
        podSelector: { matchLabels: { ...WEBHOOK_SELECTOR } },
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ protocol: 'TCP', port: k8s.IntOrString.fromNumber(WEBHOOK_PORT) }] }],
      });
    }

    if (props.prometheus) {
      const { namespace, registry } = props.prometheus;
      const from: k8s.NetworkPolicyPeer = namespace
        ? { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } }
        : { namespaceSelector: {}, podSelector: { matchLabels: { [METRICS_SCRAPING_LABEL.key]: METRICS_SCRAPING_LABEL.value } } };
      policy('AllowPrometheus', 'allow-prometheus', 'metrics', {
        podSelector: { matchLabels: MODULE },
        policyTypes: ['Ingress'],
        ingress: [{
          from: [from],
          ports: [8080, ...(registry ? [INTERNAL_REGISTRY_METRICS_PORT] : [])]
            .map(port => ({ protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) })),
        }],
      });
    }
  }
}
