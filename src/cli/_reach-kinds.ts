/**
 * The custom kinds that reach Functions (endpoints, subscriptions, the gateways they attach to and
 * the certificates of their hosts) or scale them (KEDA's ScaledObjects), and those that watch the
 * stack (the Prometheus Operator's), as synth writes them: `status` lists the former and
 * `preflight` checks that a cluster serves them all. Their CRDs come from other projects (Kyma's
 * API Gateway and Eventing modules, Istio, the Gateway API, cert-manager, KEDA, the Prometheus
 * Operator), so a cluster may not serve them at all. Each kind names its {@link KindProvider}: the
 * one table of who installs which CRD and how, from which `preflight` and `status` both name it.
 */

/**
 * The project whose installation brings the CRDs of some kinds: the one place `preflight` and
 * `status` (and through them the docs) take its name and how to get it from.
 */
export interface KindProvider {
  /** For messages: `Kyma's api-gateway module`. */
  readonly name: string;
  /** How to install it, as a fix: `add Kyma's api-gateway module (kyma alpha add module api-gateway)`. */
  readonly fix: string;
}

/** Kyma's API Gateway module: the APIRule CRD, and the Kyma Gateway APIRules name by default. */
export const KYMA_API_GATEWAY_MODULE: KindProvider = {
  name: 'Kyma\'s api-gateway module', fix: 'add Kyma\'s api-gateway module (kyma alpha add module api-gateway)',
};

/** Kyma's Eventing module: the Subscription CRD, the eventing manager and the publisher proxy. */
export const KYMA_EVENTING_MODULE: KindProvider = {
  name: 'Kyma\'s eventing module',
  fix: 'add Kyma\'s eventing module and a backend for it (kyma alpha add module eventing; kyma alpha add module nats)',
};

/** Istio, or Kyma's istio module. */
export const ISTIO: KindProvider = {
  name: 'Istio', fix: 'install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio)',
};

/** The Gateway API's standard CRDs. */
export const GATEWAY_API: KindProvider = {
  name: 'the Gateway API CRDs',
  fix: 'install the Gateway API CRDs (kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml)',
};

/** cert-manager. */
export const CERT_MANAGER: KindProvider = {
  name: 'cert-manager',
  fix: 'install cert-manager (helm install cert-manager jetstack/cert-manager -n cert-manager --create-namespace --set crds.enabled=true)',
};

/** KEDA. */
export const KEDA: KindProvider = {
  name: 'KEDA',
  fix: 'install KEDA (helm repo add kedacore https://kedacore.github.io/charts && helm install keda kedacore/keda -n keda --create-namespace)',
};

/** The Prometheus Operator. */
export const PROMETHEUS_OPERATOR: KindProvider = {
  name: 'the Prometheus Operator',
  fix: 'install the Prometheus Operator with kube-prometheus-stack, which also runs the kube-state-metrics the alerts read '
    + '(helm install prometheus prometheus-community/kube-prometheus-stack -n monitoring --create-namespace), '
    + 'or set the ServerlessStack\'s monitoring.enabled to false',
};

/** A kind served by a CRD, in the version synth writes it. */
export interface CustomKind {
  /** The API group, such as `gateway.kyma-project.io`. */
  readonly group: string;
  /** The version synth writes, such as `v2`. */
  readonly version: string;
  /** The resource's name in paths, such as `apirules`. */
  readonly plural: string;
  readonly kind: string;
  /** Who installs its CRD. */
  readonly provider: KindProvider;
}

/** Kyma's APIRule, reconciled by the API Gateway module (3.0 or later serves `v2`). */
export const API_RULE: CustomKind = {
  group: 'gateway.kyma-project.io', version: 'v2', plural: 'apirules', kind: 'APIRule', provider: KYMA_API_GATEWAY_MODULE,
};

/** Istio's VirtualService, in the version synth writes (Istio 1.22 and later serve `v1` too). */
export const VIRTUAL_SERVICE: CustomKind = {
  group: 'networking.istio.io', version: 'v1beta1', plural: 'virtualservices', kind: 'VirtualService', provider: ISTIO,
};

/** Istio's Gateway, which APIRules and gateway-bound VirtualServices name as `namespace/name`. */
export const ISTIO_GATEWAY: CustomKind = { group: 'networking.istio.io', version: 'v1beta1', plural: 'gateways', kind: 'Gateway', provider: ISTIO };

/** Istio's RequestAuthentication, for JWT endpoints. */
export const REQUEST_AUTHENTICATION: CustomKind = {
  group: 'security.istio.io', version: 'v1', plural: 'requestauthentications', kind: 'RequestAuthentication', provider: ISTIO,
};

/** Istio's AuthorizationPolicy, for JWT endpoints. */
export const AUTHORIZATION_POLICY: CustomKind = {
  group: 'security.istio.io', version: 'v1', plural: 'authorizationpolicies', kind: 'AuthorizationPolicy', provider: ISTIO,
};

/** The Gateway API's HTTPRoute (GA in `v1` since Gateway API 1.0). */
export const HTTP_ROUTE: CustomKind = {
  group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes', kind: 'HTTPRoute', provider: GATEWAY_API,
};

/** The Gateway API's Gateway, which HTTPRoutes name in `spec.parentRefs`. */
export const GATEWAY_API_GATEWAY: CustomKind = {
  group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gateways', kind: 'Gateway', provider: GATEWAY_API,
};

/** Kyma's Subscription, reconciled by the Eventing module's eventing manager. */
export const SUBSCRIPTION: CustomKind = {
  group: 'eventing.kyma-project.io', version: 'v1alpha2', plural: 'subscriptions', kind: 'Subscription', provider: KYMA_EVENTING_MODULE,
};

/** cert-manager's Certificate. */
export const CERTIFICATE: CustomKind = {
  group: 'cert-manager.io', version: 'v1', plural: 'certificates', kind: 'Certificate', provider: CERT_MANAGER,
};

/** cert-manager's Issuer. */
export const ISSUER: CustomKind = { group: 'cert-manager.io', version: 'v1', plural: 'issuers', kind: 'Issuer', provider: CERT_MANAGER };

/** cert-manager's ClusterIssuer. */
export const CLUSTER_ISSUER: CustomKind = {
  group: 'cert-manager.io', version: 'v1', plural: 'clusterissuers', kind: 'ClusterIssuer', provider: CERT_MANAGER,
};

/** KEDA's ScaledObject, which scales a Function through its scale subresource (KEDA 2 serves `v1alpha1`). */
export const SCALED_OBJECT: CustomKind = { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects', kind: 'ScaledObject', provider: KEDA };

/** The Prometheus Operator's ServiceMonitor, of the stack's `monitoring`. */
export const SERVICE_MONITOR: CustomKind = {
  group: 'monitoring.coreos.com', version: 'v1', plural: 'servicemonitors', kind: 'ServiceMonitor', provider: PROMETHEUS_OPERATOR,
};

/** The Prometheus Operator's PodMonitor, of the stack's `monitoring` (the internal registry). */
export const POD_MONITOR: CustomKind = {
  group: 'monitoring.coreos.com', version: 'v1', plural: 'podmonitors', kind: 'PodMonitor', provider: PROMETHEUS_OPERATOR,
};

/** The Prometheus Operator's PrometheusRule, the alerts of the stack's `monitoring`. */
export const PROMETHEUS_RULE: CustomKind = {
  group: 'monitoring.coreos.com', version: 'v1', plural: 'prometheusrules', kind: 'PrometheusRule', provider: PROMETHEUS_OPERATOR,
};

/** The name of a kind's CRD: `apirules.gateway.kyma-project.io`. */
export function crdNameOf(kind: Pick<CustomKind, 'group' | 'plural'>): string {
  return `${kind.plural}.${kind.group}`;
}

/** `gateway.kyma-project.io/v2`. */
export function apiVersionOf(kind: Pick<CustomKind, 'group' | 'version'>): string {
  return `${kind.group}/${kind.version}`;
}
