/**
 * The custom kinds that reach Functions (endpoints, subscriptions, the gateways they attach to and
 * the certificates of their hosts) or scale them (KEDA's ScaledObjects), and those that watch the
 * stack (the Prometheus Operator's), as synth writes them: `status` lists the former and
 * `preflight` checks that a cluster serves them all. Their CRDs come from other projects (Kyma's
 * API Gateway and Eventing modules, Istio, the Gateway API, cert-manager, KEDA, the Prometheus
 * Operator), so a cluster may not serve them at all.
 */

/** A kind served by a CRD, in the version synth writes it. */
export interface CustomKind {
  /** The API group, such as `gateway.kyma-project.io`. */
  readonly group: string;
  /** The version synth writes, such as `v2`. */
  readonly version: string;
  /** The resource's name in paths, such as `apirules`. */
  readonly plural: string;
  readonly kind: string;
}

/** Kyma's APIRule, reconciled by the API Gateway module (3.0 or later serves `v2`). */
export const API_RULE: CustomKind = { group: 'gateway.kyma-project.io', version: 'v2', plural: 'apirules', kind: 'APIRule' };

/** Istio's VirtualService, in the version synth writes (Istio 1.22 and later serve `v1` too). */
export const VIRTUAL_SERVICE: CustomKind = { group: 'networking.istio.io', version: 'v1beta1', plural: 'virtualservices', kind: 'VirtualService' };

/** Istio's Gateway, which APIRules and gateway-bound VirtualServices name as `namespace/name`. */
export const ISTIO_GATEWAY: CustomKind = { group: 'networking.istio.io', version: 'v1beta1', plural: 'gateways', kind: 'Gateway' };

/** Istio's RequestAuthentication, for JWT endpoints. */
export const REQUEST_AUTHENTICATION: CustomKind = {
  group: 'security.istio.io', version: 'v1', plural: 'requestauthentications', kind: 'RequestAuthentication',
};

/** Istio's AuthorizationPolicy, for JWT endpoints. */
export const AUTHORIZATION_POLICY: CustomKind = {
  group: 'security.istio.io', version: 'v1', plural: 'authorizationpolicies', kind: 'AuthorizationPolicy',
};

/** The Gateway API's HTTPRoute (GA in `v1` since Gateway API 1.0). */
export const HTTP_ROUTE: CustomKind = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes', kind: 'HTTPRoute' };

/** The Gateway API's Gateway, which HTTPRoutes name in `spec.parentRefs`. */
export const GATEWAY_API_GATEWAY: CustomKind = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gateways', kind: 'Gateway' };

/** Kyma's Subscription, reconciled by the Eventing module's eventing manager. */
export const SUBSCRIPTION: CustomKind = { group: 'eventing.kyma-project.io', version: 'v1alpha2', plural: 'subscriptions', kind: 'Subscription' };

/** cert-manager's Certificate. */
export const CERTIFICATE: CustomKind = { group: 'cert-manager.io', version: 'v1', plural: 'certificates', kind: 'Certificate' };

/** cert-manager's Issuer. */
export const ISSUER: CustomKind = { group: 'cert-manager.io', version: 'v1', plural: 'issuers', kind: 'Issuer' };

/** cert-manager's ClusterIssuer. */
export const CLUSTER_ISSUER: CustomKind = { group: 'cert-manager.io', version: 'v1', plural: 'clusterissuers', kind: 'ClusterIssuer' };

/** KEDA's ScaledObject, which scales a Function through its scale subresource (KEDA 2 serves `v1alpha1`). */
export const SCALED_OBJECT: CustomKind = { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects', kind: 'ScaledObject' };

/** The Prometheus Operator's ServiceMonitor, of the stack's `monitoring`. */
export const SERVICE_MONITOR: CustomKind = { group: 'monitoring.coreos.com', version: 'v1', plural: 'servicemonitors', kind: 'ServiceMonitor' };

/** The Prometheus Operator's PodMonitor, of the stack's `monitoring` (the internal registry). */
export const POD_MONITOR: CustomKind = { group: 'monitoring.coreos.com', version: 'v1', plural: 'podmonitors', kind: 'PodMonitor' };

/** The Prometheus Operator's PrometheusRule, the alerts of the stack's `monitoring`. */
export const PROMETHEUS_RULE: CustomKind = { group: 'monitoring.coreos.com', version: 'v1', plural: 'prometheusrules', kind: 'PrometheusRule' };

/** The name of a kind's CRD: `apirules.gateway.kyma-project.io`. */
export function crdNameOf(kind: Pick<CustomKind, 'group' | 'plural'>): string {
  return `${kind.plural}.${kind.group}`;
}

/** `gateway.kyma-project.io/v2`. */
export function apiVersionOf(kind: Pick<CustomKind, 'group' | 'version'>): string {
  return `${kind.group}/${kind.version}`;
}
