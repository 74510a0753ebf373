/**
 * What `preflight` reports: each check's id, outcome, detail and fix, and the whole run's. Shared by
 * the checks of the cluster (`index.ts`) and of what the manifests declare to reach Functions (`reach.ts`).
 */
import { ServerlessRelease } from '../../api/release';

/** What a check concluded. */
export enum CheckStatus {
  /** The cluster is ready in this respect. */
  PASS = 'pass',
  /** Something must change before the stack or its Functions work; the check says what. */
  FAIL = 'fail',
  /** The check does not apply (for example, registry checks with `--external-registry`). */
  SKIP = 'skip',
  /** Works today, but needs a change before a date: never fails the run (a runtime near or past its end of support). */
  WARN = 'warn',
}

/** The checks, by the id `-o json` gives them. */
export enum CheckId {
  /** The API server is Kubernetes 1.27 or later. */
  SERVER_VERSION = 'server-version',
  /** Istio's sidecar injector webhook is installed. */
  ISTIO_INJECTOR = 'istio-injector',
  /** A Function namespace exists and is labelled `istio-injection=enabled`. */
  NAMESPACE_INJECTION = 'namespace-injection',
  /** A Function namespace's LimitRanges allow the largest build preset's limits. */
  LIMIT_RANGE = 'limitrange',
  /** A Function namespace's ResourceQuotas leave room for one build Job of the default build preset. */
  QUOTA = 'quota',
  /** A default StorageClass exists for the internal registry's volume. */
  STORAGE_CLASS = 'storage-class',
  /** No other Service holds the internal registry's NodePort. */
  NODE_PORT = 'node-port',
  /** The Function CRD is absent, or serves and stores `v1alpha2`. */
  FUNCTION_CRD = 'function-crd',
  /** The stack's PriorityClass is absent, or has the stack's value. */
  PRIORITY_CLASS = 'priority-class',
  /** The manifests hold APIRules: Kyma's APIRule CRD serves their version (`v2`). */
  APIRULE_CRD = 'apirule-crd',
  /** The manifests hold VirtualServices, Istio Gateways, RequestAuthentications or AuthorizationPolicies: Istio's CRD of each serves their version. */
  ISTIO_CRD = 'istio-crd',
  /** The manifests hold HTTPRoutes (or Gateway API Gateways): the Gateway API's CRD serves their version (`v1`). */
  GATEWAY_API_CRD = 'gateway-api-crd',
  /** The manifests hold Subscriptions: Kyma's Subscription CRD serves their version (`v1alpha2`). */
  EVENTING_CRD = 'eventing-crd',
  /** The manifests hold cert-manager Certificates or issuers: cert-manager's CRD of each serves their version. */
  CERT_MANAGER_CRD = 'cert-manager-crd',
  /** The manifests hold ScaledObjects (Functions with `keda`): KEDA's ScaledObject CRD serves their version (`v1alpha1`). */
  KEDA_CRD = 'keda-crd',
  /** The manifests hold ServiceMonitors, PodMonitors or PrometheusRules (the stack's `monitoring`): the Prometheus Operator's CRD of each serves their version. */
  PROMETHEUS_OPERATOR_CRD = 'prometheus-operator-crd',
  /** An Istio Gateway that APIRules or VirtualServices of the manifests name exists, or the manifests create it. */
  ISTIO_GATEWAY = 'istio-gateway',
  /** A Gateway that HTTPRoutes of the manifests name as parent exists (or the manifests create it), and admits them. */
  GATEWAY_API_GATEWAY = 'gateway-api-gateway',
  /** The manifests hold Subscriptions: the Service of the eventing publisher proxy the controller hands Functions exists. */
  PUBLISHER_PROXY = 'publisher-proxy',
  /**
   * Under a buildless release (1.13.0): a Function namespace's NetworkPolicies let Function Pods reach the package
   * registry (and DNS) to install dependencies at start, or the namespace holds the `serverless-package-registry-config` Secret.
   */
  PACKAGE_REGISTRY = 'package-registry',
  /**
   * Functions in the cluster on a runtime past its end of support, or near it while their release has a newer one
   * (see `runtimeNotice`): a warning, in the report only when there are some.
   */
  RUNTIME_SUPPORT = 'runtime-support',
}

/** Where `preflight` read the release it checks for. */
export enum ReleaseSource {
  /** `--release`. */
  GIVEN = 'given',
  /** The Function CRD in the manifests (`--manifests`, or `dist`). */
  MANIFESTS = 'manifests',
  /** The cluster's Function CRD: its `cdk8s-kyma-serverless/release` annotation, else its shape. */
  CLUSTER = 'cluster',
  /** None of them: 1.11.1. */
  DEFAULT = 'default',
}

/** The outcome of one check. */
export interface CheckResult {
  /** Which check this is. */
  readonly id: CheckId;
  /** The Function namespace, for the checks made once per namespace. */
  readonly namespace?: string;
  /** A short name for people, such as `limitrange team-b`. */
  readonly title: string;
  /** Pass, fail or skip. */
  readonly status: CheckStatus;
  /** What was found. */
  readonly detail: string;
  /** For a failure: a command to run or a prop to set. */
  readonly fix?: string;
}

/** The release `preflight` checks for. */
export interface PreflightRelease {
  /** The release: it decides the checks (build Jobs and a registry under 1.11.1, package registry egress under 1.13.0). */
  readonly release: ServerlessRelease;
  /** Where it was read. */
  readonly source: ReleaseSource;
  /** The file of the Function CRD it was read from, when {@link source} is the manifests. */
  readonly file?: string;
  /** The release of the cluster's Function CRD, when the cluster has one. */
  readonly cluster?: ServerlessRelease;
}

/** The outcome of every check. */
export interface PreflightReport {
  /** True when no check failed. */
  readonly ok: boolean;
  /** The Serverless release the checks were chosen for, and where it was read. */
  readonly release: PreflightRelease;
  /** The checks, in a fixed order. */
  readonly checks: readonly CheckResult[];
}

/**
 * A passed check.
 *
 * @internal
 */
export const pass = (id: CheckId, title: string, detail: string, namespace?: string): CheckResult =>
  ({ id, ...(namespace === undefined ? {} : { namespace }), title, status: CheckStatus.PASS, detail });

/**
 * A check that does not apply.
 *
 * @internal
 */
export const skip = (id: CheckId, title: string, detail: string, namespace?: string): CheckResult =>
  ({ id, ...(namespace === undefined ? {} : { namespace }), title, status: CheckStatus.SKIP, detail });

/**
 * A failed check, and its fix.
 *
 * @internal
 */
export const fail = (id: CheckId, title: string, detail: string, fix: string, namespace?: string): CheckResult =>
  ({ id, ...(namespace === undefined ? {} : { namespace }), title, status: CheckStatus.FAIL, detail, fix });

/**
 * A check that passes today but asks for a change before a date: it never fails the run.
 *
 * @internal
 */
export const warn = (id: CheckId, title: string, detail: string, fix: string, namespace?: string): CheckResult =>
  ({ id, ...(namespace === undefined ? {} : { namespace }), title, status: CheckStatus.WARN, detail, fix });
