/**
 * What `preflight` reports: each check's id, outcome, detail and fix, and the whole run's. Shared by
 * the checks of the cluster (`index.ts`) and of what the manifests declare to reach Functions (`reach.ts`).
 */

/** What a check concluded. */
export enum CheckStatus {
  /** The cluster is ready in this respect. */
  PASS = 'pass',
  /** Something must change before the stack or its Functions work; the check says what. */
  FAIL = 'fail',
  /** The check does not apply (for example, registry checks with `--external-registry`). */
  SKIP = 'skip',
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

/** The outcome of every check. */
export interface PreflightReport {
  /** True when no check failed. */
  readonly ok: boolean;
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
