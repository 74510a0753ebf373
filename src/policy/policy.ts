/**
 * The security and reliability baseline as code: rules every object we ship keeps, checked by
 * `kyma-serverless validate` and at every `npm run synth`, on the stack's objects and on the
 * user's own (Functions, namespaces, workloads) alike.
 *
 * A rule that upstream software cannot keep is excepted on the object itself, with the
 * annotation {@link POLICY_EXCEPTIONS_ANNOTATION}, per container and with the reason, so the
 * exception is as small as possible and visible in Git and in the cluster.
 */
import { isObject as isJsonObject } from '../api/_json';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api/function-schema';
import { isImageReference } from '../api/names';

/** The rules of the baseline. */
export enum PolicyRuleId {
  /** Pod Security Standards `restricted` (1.27): non-root, seccomp, capabilities, no escalation, volume types, host ports. */
  PSS_RESTRICTED = 'pss-restricted',
  /** Containers run with a read-only root file system. */
  READ_ONLY_ROOT_FILESYSTEM = 'read-only-root-filesystem',
  /** Containers request and limit CPU and memory. */
  CONTAINER_RESOURCES = 'container-resources',
  /** Long-running containers have liveness and readiness probes. */
  PROBES = 'probes',
  /** The stack's Pods carry its PriorityClass. */
  PRIORITY_CLASS = 'priority-class',
  /** Replicated workloads have a PodDisruptionBudget. */
  DISRUPTION_BUDGET = 'disruption-budget',
  /** RBAC rules name their groups, resources and verbs: no `*`. */
  RBAC_WILDCARD = 'rbac-wildcard',
  /** RBAC rules grant no `escalate`, `bind` or `impersonate`, and bind no built-in admin role. */
  RBAC_ESCALATION = 'rbac-escalation',
  /** Secrets in Git hold no data. */
  SECRET_DATA_IN_GIT = 'secret-data-in-git',
  /** Images are pinned: a tag other than `latest`, or a digest. */
  IMAGE_PINNED = 'image-pinned',
  /** No hostPath volumes. */
  NO_HOST_PATH = 'no-host-path',
  /** No host network, PID or IPC namespace. */
  NO_HOST_NAMESPACES = 'no-host-namespaces',
  /** No privileged containers. */
  NO_PRIVILEGED = 'no-privileged',
  /** Namespaces enforce a Pod Security level. */
  NAMESPACE_POD_SECURITY = 'namespace-pod-security',
}

/** A rule of the baseline, for docs and reports. */
export interface PolicyRule {
  readonly id: PolicyRuleId;
  /** What it requires. */
  readonly requires: string;
  /** How to fix an object that breaks it. */
  readonly fix: string;
}

/** Every rule of the baseline. */
export const POLICY_RULES: readonly PolicyRule[] = [
  {
    id: PolicyRuleId.PSS_RESTRICTED,
    requires: 'runAsNonRoot, a non-zero runAsUser, seccomp RuntimeDefault or Localhost, capabilities drop ALL (add at most NET_BIND_SERVICE), '
      + 'allowPrivilegeEscalation false, only configMap/csi/downwardAPI/emptyDir/ephemeral/persistentVolumeClaim/projected/secret volumes, no hostPort',
    fix: 'set the Pod and container securityContext as restrictedPod()/restrictedContainer() do, or add a policy exception with the reason',
  },
  {
    id: PolicyRuleId.READ_ONLY_ROOT_FILESYSTEM,
    requires: 'securityContext.readOnlyRootFilesystem: true on every container',
    fix: 'set readOnlyRootFilesystem: true and mount an emptyDir where the program writes',
  },
  {
    id: PolicyRuleId.CONTAINER_RESOURCES,
    requires: 'requests and limits of CPU and memory on every container, init containers included',
    fix: 'set resources.requests and resources.limits for cpu and memory',
  },
  {
    id: PolicyRuleId.PROBES,
    requires: 'a livenessProbe and a readinessProbe on every container of a Deployment, StatefulSet or DaemonSet',
    fix: 'add an HTTP, gRPC, TCP or exec probe for each',
  },
  {
    id: PolicyRuleId.PRIORITY_CLASS,
    requires: 'priorityClassName on every Pod template of the stack (labelled app.kubernetes.io/part-of: serverless)',
    fix: 'set priorityClassName: serverless-priority',
  },
  {
    id: PolicyRuleId.DISRUPTION_BUDGET,
    requires: 'a PodDisruptionBudget selecting the Pods of every Deployment or StatefulSet with more than one replica',
    fix: 'add a PodDisruptionBudget with maxUnavailable: 1 and the workload\'s selector',
  },
  {
    id: PolicyRuleId.RBAC_WILDCARD,
    requires: 'no `*` in apiGroups, resources, resourceNames, verbs or nonResourceURLs of a Role or ClusterRole',
    fix: 'name the groups, resources and verbs the program calls',
  },
  {
    id: PolicyRuleId.RBAC_ESCALATION,
    requires: 'no escalate, bind or impersonate verbs, and no binding to cluster-admin, admin or edit',
    fix: 'grant the permissions the program needs in a Role of its own',
  },
  {
    id: PolicyRuleId.SECRET_DATA_IN_GIT,
    requires: 'no Secret with data or stringData in the output, which is committed',
    fix: 'create the Secret in the cluster (SealedSecrets, External Secrets) and reference it by name',
  },
  {
    id: PolicyRuleId.IMAGE_PINNED,
    requires: 'every image (and a Function\'s runtimeImageOverride) with a tag other than latest, or a digest',
    fix: 'pin a version tag such as :1.11.1, or a @sha256: digest',
  },
  {
    id: PolicyRuleId.NO_HOST_PATH,
    requires: 'no hostPath volumes',
    fix: 'use a PersistentVolumeClaim, emptyDir or ConfigMap',
  },
  {
    id: PolicyRuleId.NO_HOST_NAMESPACES,
    requires: 'hostNetwork, hostPID and hostIPC unset or false',
    fix: 'remove hostNetwork/hostPID/hostIPC; expose ports through a Service',
  },
  {
    id: PolicyRuleId.NO_PRIVILEGED,
    requires: 'securityContext.privileged unset or false on every container',
    fix: 'remove privileged: true; add the one capability needed, if any, with a policy exception',
  },
  {
    id: PolicyRuleId.NAMESPACE_POD_SECURITY,
    requires: 'the label pod-security.kubernetes.io/enforce: baseline or restricted on every Namespace',
    fix: 'label the Namespace (FunctionNamespace and ServerlessStack do)',
  },
];

const FIX = new Map(POLICY_RULES.map(r => [r.id, r.fix]));

/**
 * The annotation that excepts an object from rules, as JSON: a list of `{ rule, container?, reason }`.
 * An exception with a `container` covers that container only.
 */
export const POLICY_EXCEPTIONS_ANNOTATION = 'cdk8s-kyma-serverless/policy-exceptions';

/** An exception from one rule, for one object or one of its containers. */
export interface PolicyException {
  /** The rule. */
  readonly rule: PolicyRuleId;
  /**
   * The container it covers.
   *
   * @default - the whole object
   */
  readonly container?: string;
  /** Why upstream software cannot keep the rule. */
  readonly reason: string;
}

/**
 * The annotations that record exceptions on an object.
 *
 * @param exceptions the exceptions, each with its reason
 */
export function policyExceptions(exceptions: readonly PolicyException[]): { [key: string]: string } {
  return { [POLICY_EXCEPTIONS_ANNOTATION]: JSON.stringify(exceptions) };
}

/** One object breaking one rule. */
export interface PolicyViolation {
  /** The index of the object in the list checked. */
  readonly index: number;
  readonly rule: PolicyRuleId;
  /** The field, such as `spec.template.spec.containers[0].securityContext.runAsNonRoot`. */
  readonly path: string;
  /** What is wrong. */
  readonly message: string;
  /** How to fix it. */
  readonly fix: string;
  /** The container, when the rule is about one. */
  readonly container?: string;
  /** The recorded reason, when an exception covers the violation: it does not fail the check. */
  readonly excepted?: string;
}

type Json = { [key: string]: any };

const POD_TEMPLATE_PATHS: { readonly [kind: string]: readonly string[] } = {
  Pod: ['spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};
const LONG_RUNNING = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);
const RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
const ADMIN_ROLES = new Set(['cluster-admin', 'admin', 'edit']);
const ENFORCED_LEVELS = new Set(['baseline', 'restricted']);
const STACK_LABEL = { key: 'app.kubernetes.io/part-of', value: 'serverless' } as const;

/** Whether a value is a JSON object, whose fields the checks read freely. */
function isObject(value: unknown): value is Json {
  return isJsonObject<any>(value);
}

function at(object: Json, path: readonly string[]): unknown {
  let value: unknown = object;
  for (const key of path) value = isObject(value) ? value[key] : undefined;
  return value;
}

/** Whether an image reference is pinned: a digest, or a tag other than `latest`. */
export function isPinnedImage(image: string): boolean {
  if (/@sha256:[a-f0-9]{64}$/.test(image)) return true;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  return colon > 0 && lastSegment.slice(colon + 1) !== 'latest';
}

function exceptionsOf(object: Json): PolicyException[] {
  const text = object.metadata?.annotations?.[POLICY_EXCEPTIONS_ANNOTATION];
  if (typeof text !== 'string') return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) ? parsed.filter((e): e is PolicyException => isObject(e) && typeof e.rule === 'string' && typeof e.reason === 'string') : [];
  } catch {
    return [];
  }
}

class Checker {
  public readonly violations: PolicyViolation[] = [];
  private index = 0;
  private exceptions: PolicyException[] = [];

  public object(index: number, object: Json): void {
    this.index = index;
    this.exceptions = exceptionsOf(object);
  }

  public add(rule: PolicyRuleId, path: string, message: string, container?: string): void {
    const exception = this.exceptions.find(e => e.rule === rule && (e.container === undefined || e.container === container));
    this.violations.push({ index: this.index, rule, path, message, fix: FIX.get(rule)!, container, excepted: exception?.reason });
  }
}

function checkImage(check: Checker, image: unknown, path: string, container?: string): void {
  if (typeof image !== 'string' || image === '') return;
  if (!isPinnedImage(image)) check.add(PolicyRuleId.IMAGE_PINNED, path, `image ${image} is not pinned to a version`, container);
}

function checkPodSpec(check: Checker, object: Json, spec: Json, base: string): void {
  const podContext: Json = isObject(spec.securityContext) ? spec.securityContext : {};
  for (const key of ['hostNetwork', 'hostPID', 'hostIPC']) {
    if (spec[key] === true) check.add(PolicyRuleId.NO_HOST_NAMESPACES, `${base}.${key}`, `${key} is true`);
  }
  if (podContext.runAsUser === 0) check.add(PolicyRuleId.PSS_RESTRICTED, `${base}.securityContext.runAsUser`, 'the Pod runs as root (runAsUser 0)');
  const podSeccomp = podContext.seccompProfile?.type;
  (Array.isArray(spec.volumes) ? spec.volumes : []).forEach((volume: unknown, i: number) => {
    if (!isObject(volume)) return;
    const where = `${base}.volumes[${i}]`;
    if (volume.hostPath !== undefined) {
      check.add(PolicyRuleId.NO_HOST_PATH, `${where}.hostPath`, `volume ${volume.name} mounts a path of the node`);
      return;
    }
    const type = Object.keys(volume).find(k => k !== 'name');
    if (type !== undefined && !RESTRICTED_VOLUMES.includes(type)) {
      check.add(PolicyRuleId.PSS_RESTRICTED, where, `volume ${volume.name} is of type ${type}, which restricted does not allow`);
    }
  });
  if (object.metadata?.labels?.[STACK_LABEL.key] === STACK_LABEL.value && !spec.priorityClassName) {
    check.add(PolicyRuleId.PRIORITY_CLASS, `${base}.priorityClassName`, 'a Pod of the stack without the stack\'s PriorityClass');
  }
  const groups = [['initContainers', false], ['containers', LONG_RUNNING.has(object.kind)], ['ephemeralContainers', false]] as const;
  for (const [group, needsProbes] of groups) {
    (Array.isArray(spec[group]) ? spec[group] : []).forEach((container: unknown, i: number) => {
      if (!isObject(container)) return;
      const name = typeof container.name === 'string' ? container.name : undefined;
      const where = `${base}.${group}[${i}]`;
      const ctx: Json = isObject(container.securityContext) ? container.securityContext : {};
      const add = (rule: PolicyRuleId, field: string, message: string) => check.add(rule, `${where}.${field}`, `container ${name}: ${message}`, name);
      checkImage(check, container.image, `${where}.image`, name);
      if (ctx.privileged === true) add(PolicyRuleId.NO_PRIVILEGED, 'securityContext.privileged', 'runs privileged');
      if (ctx.allowPrivilegeEscalation !== false) add(PolicyRuleId.PSS_RESTRICTED, 'securityContext.allowPrivilegeEscalation', 'allowPrivilegeEscalation is not false');
      if ((ctx.runAsNonRoot ?? podContext.runAsNonRoot) !== true) add(PolicyRuleId.PSS_RESTRICTED, 'securityContext.runAsNonRoot', 'runAsNonRoot is not true');
      if (ctx.runAsUser === 0) add(PolicyRuleId.PSS_RESTRICTED, 'securityContext.runAsUser', 'runs as root (runAsUser 0)');
      const seccomp = ctx.seccompProfile?.type ?? podSeccomp;
      if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') add(PolicyRuleId.PSS_RESTRICTED, 'securityContext.seccompProfile', `seccomp profile is ${seccomp ?? 'unset'}`);
      const capabilities: Json = isObject(ctx.capabilities) ? ctx.capabilities : {};
      if (!Array.isArray(capabilities.drop) || !capabilities.drop.includes('ALL')) add(PolicyRuleId.PSS_RESTRICTED, 'securityContext.capabilities.drop', 'does not drop ALL capabilities');
      const added = (Array.isArray(capabilities.add) ? capabilities.add : []).filter((c: unknown) => c !== 'NET_BIND_SERVICE');
      if (added.length) add(PolicyRuleId.PSS_RESTRICTED, 'securityContext.capabilities.add', `adds ${added.join(', ')}`);
      if ((Array.isArray(container.ports) ? container.ports : []).some((p: unknown) => isObject(p) && p.hostPort)) {
        add(PolicyRuleId.PSS_RESTRICTED, 'ports', 'uses a hostPort');
      }
      if (group !== 'ephemeralContainers') {
        if (ctx.readOnlyRootFilesystem !== true) add(PolicyRuleId.READ_ONLY_ROOT_FILESYSTEM, 'securityContext.readOnlyRootFilesystem', 'the root file system is writable');
        const missing = ['requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'].filter(r => at(container, ['resources', ...r.split('.')]) === undefined);
        if (missing.length) add(PolicyRuleId.CONTAINER_RESOURCES, 'resources', `no ${missing.join(', ')}`);
      }
      if (needsProbes) {
        const missing = ['livenessProbe', 'readinessProbe'].filter(p => !isObject(container[p]));
        if (missing.length) add(PolicyRuleId.PROBES, missing[0], `no ${missing.join(' and ')}`);
      }
    });
  }
}

function selects(selector: unknown, labels: Json | undefined): boolean {
  if (!isObject(selector) || !labels) return false;
  const wanted = isObject(selector.matchLabels) ? selector.matchLabels : {};
  if (Object.keys(wanted).length === 0 && !Array.isArray(selector.matchExpressions)) return false;
  return Object.entries(wanted).every(([k, v]) => labels[k] === v);
}

/**
 * Checks objects against every rule of the baseline.
 *
 * @param objects the manifests of one output folder (budgets are matched to workloads within it)
 * @returns every violation, in object order; those an exception covers carry its reason in `excepted`
 */
export function checkPolicies(objects: readonly unknown[]): PolicyViolation[] {
  const check = new Checker();
  const budgets = objects.filter((o): o is Json => isObject(o) && o.kind === 'PodDisruptionBudget');
  objects.forEach((value, index) => {
    if (!isObject(value) || typeof value.kind !== 'string') return;
    const object = value;
    check.object(index, object);
    const podPath = POD_TEMPLATE_PATHS[object.kind];
    const podSpec = podPath && at(object, podPath);
    if (isObject(podSpec)) checkPodSpec(check, object, podSpec, podPath.join('.'));

    if ((object.kind === 'Deployment' || object.kind === 'StatefulSet') && (object.spec?.replicas ?? 1) > 1) {
      const labels = object.spec?.template?.metadata?.labels;
      const covered = budgets.some(b => (b.metadata?.namespace ?? '') === (object.metadata?.namespace ?? '') && selects(b.spec?.selector, labels));
      if (!covered) check.add(PolicyRuleId.DISRUPTION_BUDGET, 'spec.replicas', `${object.spec.replicas} replicas and no PodDisruptionBudget selects their Pods`);
    }

    if (object.kind === 'Role' || object.kind === 'ClusterRole') {
      (Array.isArray(object.rules) ? object.rules : []).forEach((rule: unknown, i: number) => {
        if (!isObject(rule)) return;
        for (const field of ['apiGroups', 'resources', 'resourceNames', 'verbs', 'nonResourceURLs']) {
          if (Array.isArray(rule[field]) && rule[field].some((v: unknown) => typeof v === 'string' && v.includes('*'))) {
            check.add(PolicyRuleId.RBAC_WILDCARD, `rules[${i}].${field}`, `${field} holds a wildcard`);
          }
        }
        const dangerous = (Array.isArray(rule.verbs) ? rule.verbs : []).filter((v: unknown) => v === 'escalate' || v === 'bind' || v === 'impersonate');
        if (dangerous.length) check.add(PolicyRuleId.RBAC_ESCALATION, `rules[${i}].verbs`, `grants ${dangerous.join(', ')}`);
      });
    }
    if ((object.kind === 'RoleBinding' || object.kind === 'ClusterRoleBinding') && object.roleRef?.kind === 'ClusterRole' && ADMIN_ROLES.has(object.roleRef?.name)) {
      check.add(PolicyRuleId.RBAC_ESCALATION, 'roleRef.name', `binds the built-in ClusterRole ${object.roleRef.name}`);
    }

    if (object.kind === 'Secret' && object.apiVersion === 'v1') {
      for (const field of ['data', 'stringData']) {
        if (isObject(object[field]) && Object.keys(object[field]).length) check.add(PolicyRuleId.SECRET_DATA_IN_GIT, field, `holds ${Object.keys(object[field]).join(', ')}`);
      }
    }

    if (object.apiVersion === FUNCTION_API_VERSION && object.kind === FUNCTION_KIND) {
      const override = object.spec?.runtimeImageOverride;
      // An override that is no image reference at all is the Function API's to report.
      if (typeof override === 'string' && override !== '' && isImageReference(override)) checkImage(check, override, 'spec.runtimeImageOverride');
    }

    if (object.kind === 'Namespace' && object.apiVersion === 'v1') {
      const level = object.metadata?.labels?.['pod-security.kubernetes.io/enforce'];
      if (!ENFORCED_LEVELS.has(level)) {
        check.add(PolicyRuleId.NAMESPACE_POD_SECURITY, 'metadata.labels', `enforces ${level ? `Pod Security level ${level}` : 'no Pod Security level'}`);
      }
    }
  });
  return check.violations;
}
