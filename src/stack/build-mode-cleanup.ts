/**
 * Moving a running system from 1.11.1 (build mode) to 1.13.0 (buildless): what build mode leaves
 * in the cluster that is not in Git, and the Job of the 1.13.0 stack that removes it.
 *
 * Upstream's 1.12+ controller cleans up nothing of build mode. What it leaves falls in two parts:
 * - objects of the 1.11.1 stack itself (the registry's Deployment, claim, Service and ConfigMap,
 *   the credentials Job and its RBAC, the `dockerfile-<runtime>` ConfigMaps, the
 *   `serverless-function` ServiceAccount): they are in the 1.11.1 manifests and not in the 1.13.0
 *   ones, so the sync's prune deletes them (Argo CD and Flux with prune on, `apply --prune`);
 * - objects the 1.11.1 controller and the credentials Job made in the cluster, which no sync knows:
 *   build Jobs, source ConfigMaps and HorizontalPodAutoscalers of every Function, the copies of the
 *   runtime ConfigMaps, of the registry Secret and of the ServiceAccount in every namespace, the
 *   registry credentials Secret, the finalizers the controller put on the base runtime ConfigMaps
 *   and on the registry Secret (which would hold their prune forever), and the `BuildReady`
 *   condition in Functions' status. {@link BuildModeCleanup} removes these, inside the cluster, so
 *   that Argo CD and Flux users (who never run the command line) end as clean as others.
 *
 * {@link buildModeRules} spells each of them once: the Job's program follows them, and
 * `kyma-serverless diff` lists the cluster's objects by them.
 */
import { Duration } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { FUNCTION_GROUP, FUNCTION_VERSION } from '../api/function-schema';
import { FUNCTION_CONTROLLER, FunctionChildLabel, FunctionConditionType } from '../api/function-status';
import { ServerlessRelease, releaseFacts } from '../api/release';
import { BUILD_MODE_CLEANUP_SCRIPT } from './_build-mode-cleanup-script';
import { clusterScoped, scriptJobTemplate, shortHash } from './_util';
import { CONTROLLER_NAMES } from './controller';
import { CREDENTIALS_LABEL, DEFAULT_REGISTRY_SECRET_NAME, INTERNAL_REGISTRY_NAME } from './registry';

/** The finalizer the 1.11.1 controller puts on each base `dockerfile-<runtime>` ConfigMap (it deletes the copies, then itself). */
export const RUNTIME_CONFIG_MAP_FINALIZER = 'serverless.kyma-project.io/deletion-hook';

/** The finalizer the 1.11.1 controller puts on the base registry Secret (it deletes the copies, then itself). */
export const REGISTRY_SECRET_FINALIZER = 'serverless.kyma-project.io/finalizer-registry-config';

/** The label the 1.11.1 controller puts on the base runtime ConfigMaps and their copies. */
export const RUNTIME_CONFIG_LABEL = { key: 'serverless.kyma-project.io/config', value: 'runtime' } as const;

/** The label of the `serverless-function` ServiceAccount and its copies. */
export const SERVICE_ACCOUNT_CONFIG_LABEL = { key: 'serverless.kyma-project.io/config', value: 'service-account' } as const;

/** Objects labelled so are the user's: the 1.11.1 controller never overwrites or deletes them, and neither does the clean-up. */
export const USER_MANAGED_LABEL = { key: FunctionChildLabel.MANAGED_BY, value: 'user' } as const;

/** The `app.kubernetes.io/managed-by` value of the registry Secret that the stack's credentials Job created. */
export const GENERATED_CREDENTIALS_MANAGER = 'serverless-registry-credentials-job';

/** The objects of the clean-up: their names and labels. */
export const BUILD_MODE_CLEANUP_NAME = 'serverless-build-mode-cleanup';

/** What the clean-up does with the objects of a rule. */
export enum LeftoverAction {
  /** Delete it (after removing the rule's finalizer). */
  DELETE = 'delete',
  /** Only remove the rule's finalizer: the sync prunes it, or it is the user's. */
  UNFINALIZE = 'unfinalize',
}

/** One kind of object build mode leaves behind, and how to tell it from anything else. */
export interface LeftoverRule {
  /** For people: `build Job`, `copy of the registry Secret`. */
  readonly what: string;
  readonly apiVersion: string;
  readonly plural: string;
  readonly kind: string;
  /**
   * Listed across namespaces by this selector; without one, read by {@link name} in each namespace
   * (so that RBAC can grant the Job that one name, never every Secret).
   */
  readonly labelSelector?: string;
  /** The one name, for rules read by name. */
  readonly name?: string;
  /** Only these names. */
  readonly names?: readonly string[];
  /** `stack`: only in the stack's namespace; `copies`: only outside it; `all`: anywhere. */
  readonly where: 'stack' | 'copies' | 'all';
  /** Labels the object must carry. */
  readonly labels?: { readonly [key: string]: string };
  /** Whether a Function must own it (a controller reference): the controller's children are, objects synth writes are not. */
  readonly ownedByFunction?: boolean;
  /** The finalizer of build mode to remove first. */
  readonly finalizer?: string;
  readonly action: LeftoverAction;
  /** For `delete`: labels that make it ours to delete; without them it is kept (its finalizer removed). */
  readonly oursIf?: { readonly [key: string]: string };
  /** Why an object of the rule is kept, for the log and for `diff`. */
  readonly keptBecause?: string;
}

/** What the clean-up follows: where the stack runs, which controller to wait for, and the rules. */
export interface BuildModeRules {
  /** The stack's namespace. */
  readonly namespace: string;
  /** The controller Deployment, and the image it must run everywhere before anything is deleted. */
  readonly controller: { readonly deployment: string; readonly image: string };
  readonly functionGroup: string;
  readonly functionVersion: string;
  /** Labels that make an object the user's: never touched. */
  readonly userLabels: { readonly [key: string]: string };
  /** The condition of Functions' status that no 1.13.0 controller writes or removes. */
  readonly staleCondition: string;
  /** How long to wait for the controller, and how often to look. */
  readonly waitSeconds: number;
  readonly pollSeconds: number;
  /** Applied in this order. */
  readonly leftovers: readonly LeftoverRule[];
}

/** What {@link buildModeRules} needs to know. */
export interface BuildModeRulesOptions {
  /** The stack's namespace. */
  readonly namespace: string;
  /**
   * The controller image of the 1.13.0 stack.
   *
   * @default - none: rules for reading the cluster only (`diff`), with no controller to wait for
   */
  readonly controllerImage?: string;
  /** @default 'serverless-ctrl-mngr' */
  readonly controllerDeployment?: string;
  /** @default 'serverless-registry-config-default' */
  readonly registrySecretName?: string;
  /** @default Duration.minutes(30) */
  readonly timeout?: Duration;
}

/**
 * The objects build mode leaves behind that no sync deletes, and what to do with each: the one
 * place their labels, names and finalizers are spelled (1.11.1's controller sources:
 * `internal/controllers/kubernetes/*_service.go`, `internal/controllers/serverless/*.go`).
 */
export function buildModeRules(options: BuildModeRulesOptions): BuildModeRules {
  const managedByController = `${FunctionChildLabel.MANAGED_BY}=${FUNCTION_CONTROLLER}`;
  const dockerfiles = releaseFacts(ServerlessRelease.V1_11_1).runtimes.map(runtime => `dockerfile-${runtime}`);
  const credentials = { [CREDENTIALS_LABEL.key]: CREDENTIALS_LABEL.value };
  const runtime = { [RUNTIME_CONFIG_LABEL.key]: RUNTIME_CONFIG_LABEL.value };
  const child = (what: string, apiVersion: string, plural: string, kind: string): LeftoverRule => ({
    what, apiVersion, plural, kind, labelSelector: managedByController, where: 'all', ownedByFunction: true, action: LeftoverAction.DELETE,
  });
  return {
    namespace: options.namespace,
    controller: { deployment: options.controllerDeployment ?? CONTROLLER_NAMES.deployment, image: options.controllerImage ?? '' },
    functionGroup: FUNCTION_GROUP,
    functionVersion: FUNCTION_VERSION,
    userLabels: { [USER_MANAGED_LABEL.key]: USER_MANAGED_LABEL.value },
    staleCondition: FunctionConditionType.BUILD_READY,
    waitSeconds: (options.timeout ?? Duration.minutes(30)).toSeconds(),
    pollSeconds: 5,
    leftovers: [
      child('build Job', 'batch/v1', 'jobs', 'Job'),
      child('source ConfigMap', 'v1', 'configmaps', 'ConfigMap'),
      child('HorizontalPodAutoscaler of the controller', 'autoscaling/v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler'),
      {
        what: 'copy of a runtime Dockerfile ConfigMap', apiVersion: 'v1', plural: 'configmaps', kind: 'ConfigMap',
        labelSelector: `${RUNTIME_CONFIG_LABEL.key}=${RUNTIME_CONFIG_LABEL.value}`, names: dockerfiles, where: 'copies', labels: runtime,
        action: LeftoverAction.DELETE,
      },
      {
        what: 'runtime Dockerfile ConfigMap', apiVersion: 'v1', plural: 'configmaps', kind: 'ConfigMap',
        labelSelector: `${RUNTIME_CONFIG_LABEL.key}=${RUNTIME_CONFIG_LABEL.value}`, names: dockerfiles, where: 'stack', labels: runtime,
        finalizer: RUNTIME_CONFIG_MAP_FINALIZER, action: LeftoverAction.UNFINALIZE,
        keptBecause: 'it is in the 1.11.1 manifests, so the sync prunes it (its finalizer no longer holds it)',
      },
      {
        what: 'copy of the registry Secret', apiVersion: 'v1', plural: 'secrets', kind: 'Secret',
        name: options.registrySecretName ?? DEFAULT_REGISTRY_SECRET_NAME, where: 'copies', labels: credentials, action: LeftoverAction.DELETE,
      },
      {
        what: 'registry credentials Secret', apiVersion: 'v1', plural: 'secrets', kind: 'Secret',
        name: options.registrySecretName ?? DEFAULT_REGISTRY_SECRET_NAME, where: 'stack', labels: credentials,
        finalizer: REGISTRY_SECRET_FINALIZER, action: LeftoverAction.DELETE,
        oursIf: { 'app.kubernetes.io/managed-by': GENERATED_CREDENTIALS_MANAGER },
        keptBecause: 'the stack\'s credentials Job did not create it (RegistryCredentials.fromExistingSecret or Registry.external): '
          + 'it is yours to delete',
      },
      {
        what: 'copy of the Function ServiceAccount', apiVersion: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount',
        name: CONTROLLER_NAMES.functionServiceAccount, where: 'copies', labels: { [SERVICE_ACCOUNT_CONFIG_LABEL.key]: SERVICE_ACCOUNT_CONFIG_LABEL.value },
        action: LeftoverAction.DELETE,
      },
    ],
  };
}

/** An object of the 1.11.1 stack itself, in its namespace, that the 1.13.0 stack no longer has. */
export interface BuildModeStackObject {
  readonly what: string;
  readonly apiVersion: string;
  readonly plural: string;
  readonly kind: string;
  /** Its name; or, for objects with generated names, {@link labelSelector}. */
  readonly name?: string;
  readonly labelSelector?: string;
}

/** The registry credentials Job's objects (see registry.ts: `serverless-registry-credentials`). */
const CREDENTIALS_JOB_NAME = 'serverless-registry-credentials';

/**
 * The 1.11.1 stack's own build-mode objects (the `dockerfile-<runtime>` ConfigMaps are among
 * {@link buildModeRules}): in the 1.11.1 manifests, not in the 1.13.0 ones, so the sync's prune
 * deletes them. `kyma-serverless diff` names those the cluster holds.
 */
export const BUILD_MODE_STACK_OBJECTS: readonly BuildModeStackObject[] = [
  { what: 'the internal registry', apiVersion: 'apps/v1', plural: 'deployments', kind: 'Deployment', name: INTERNAL_REGISTRY_NAME },
  { what: 'the internal registry\'s NodePort Service', apiVersion: 'v1', plural: 'services', kind: 'Service', name: INTERNAL_REGISTRY_NAME },
  {
    what: 'the internal registry\'s volume, with every image built', apiVersion: 'v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim',
    name: INTERNAL_REGISTRY_NAME,
  },
  { what: 'the internal registry\'s configuration', apiVersion: 'v1', plural: 'configmaps', kind: 'ConfigMap', name: `${INTERNAL_REGISTRY_NAME}-config` },
  { what: 'the Function ServiceAccount', apiVersion: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', name: CONTROLLER_NAMES.functionServiceAccount },
  { what: 'the registry credentials Job', apiVersion: 'batch/v1', plural: 'jobs', kind: 'Job', labelSelector: `app.kubernetes.io/name=${CREDENTIALS_JOB_NAME}` },
  { what: 'the credentials Job\'s program', apiVersion: 'v1', plural: 'configmaps', kind: 'ConfigMap', name: `${CREDENTIALS_JOB_NAME}-script` },
  { what: 'the credentials Job\'s identity', apiVersion: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', name: CREDENTIALS_JOB_NAME },
  { what: 'the credentials Job\'s permissions', apiVersion: 'rbac.authorization.k8s.io/v1', plural: 'roles', kind: 'Role', name: CREDENTIALS_JOB_NAME },
  {
    what: 'the credentials Job\'s permissions', apiVersion: 'rbac.authorization.k8s.io/v1', plural: 'rolebindings', kind: 'RoleBinding',
    name: CREDENTIALS_JOB_NAME,
  },
  {
    what: 'the registry\'s NetworkPolicy', apiVersion: 'networking.k8s.io/v1', plural: 'networkpolicies', kind: 'NetworkPolicy',
    name: 'kyma-project.io--serverless-allow-registry',
  },
];

/** Props of {@link BuildModeCleanup}. */
export interface BuildModeCleanupProps {
  /** The stack's namespace: the controller's, and where the Job runs. */
  readonly namespace: string;
  /** The Node.js image the Job runs its program on (the stack's `images.nodejs`). */
  readonly image: string;
  /**
   * The 1.13.0 controller image: nothing is deleted before the controller Deployment runs it in
   * every Pod, since a 1.11.1 controller would re-create the copies at once.
   */
  readonly controllerImage: string;
  /**
   * The controller Deployment.
   *
   * @default 'serverless-ctrl-mngr'
   */
  readonly controllerDeployment?: string;
  /**
   * The registry Secret of the 1.11.1 stack (its `registry`'s `secretName`), whose copies the
   * 1.11.1 controller made in every namespace.
   *
   * @default 'serverless-registry-config-default'
   */
  readonly registrySecretName?: string;
  /**
   * The PriorityClass of the Job's Pod.
   *
   * @default - none
   */
  readonly priorityClassName?: string;
  /**
   * How long the Job waits for the controller to run the 1.13.0 image before it gives up (and
   * fails, to be retried by the Job's back-off).
   *
   * @default Duration.minutes(30)
   */
  readonly timeout?: Duration;
}

/**
 * A Job, with its own ServiceAccount and least-privilege RBAC, that removes what 1.11.1's build
 * mode left in the cluster once the 1.13.0 controller runs (see {@link buildModeRules}); the 1.13.0
 * stack synthesizes it, so that a sync moves Argo CD and Flux users too.
 *
 * GitOps: the Job's name ends in a hash of its spec, so a new spec is a new Job (a Job's template
 * cannot change, and Flux would fail on it) and the same spec is the same Job: a later sync finds it
 * complete and in sync, and does not run it again. It has no TTL, for the same reason (a GitOps tool
 * would re-create a Job that deleted itself). Run again, it finds nothing and ends 0; on a fresh
 * 1.13.0 install it does the same.
 */
export class BuildModeCleanup extends Construct {
  /** The Job. */
  public readonly job: k8s.KubeJob;

  constructor(scope: Construct, id: string, props: BuildModeCleanupProps) {
    super(scope, id);
    const name = BUILD_MODE_CLEANUP_NAME;
    const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'cleanup' };
    const rules = buildModeRules(props);
    const registrySecret = rules.leftovers.find(r => r.kind === 'Secret')!.name!;
    const dockerfiles = rules.leftovers.find(r => r.where === 'stack' && r.kind === 'ConfigMap')!.names!;

    const serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', { metadata: { name, labels } });
    const clusterRole = clusterScoped(new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name, labels },
      rules: [
        // Build Jobs have generated names in every Function namespace: found by the controller's label
        // and a Function owner, since RBAC cannot narrow by label.
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'delete'] },
        // Source ConfigMaps likewise; and the runtime Dockerfile copies, listed by their label and kept by name.
        { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'delete'] },
        // The controller's HorizontalPodAutoscalers likewise (one synth writes has no Function owner and stays).
        { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['list', 'delete'] },
        // The copies of the registry Secret: read and deleted by their one name, never every Secret.
        { apiGroups: [''], resources: ['secrets'], resourceNames: [registrySecret], verbs: ['get', 'delete'] },
        // The copies of the Function ServiceAccount, by their one name.
        { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [CONTROLLER_NAMES.functionServiceAccount], verbs: ['get', 'delete'] },
        // The copies are looked for in every namespace.
        { apiGroups: [''], resources: ['namespaces'], verbs: ['list'] },
        // Functions whose status holds the BuildReady condition are found, and read again on a conflict...
        { apiGroups: [FUNCTION_GROUP], resources: ['functions'], verbs: ['get', 'list'] },
        // ...and the condition is dropped from their status.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions/status'], verbs: ['update'] },
      ],
    }));
    const clusterRoleBinding = clusterScoped(new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole.name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: props.namespace }],
    }));
    const role = new k8s.KubeRole(this, 'Role', {
      metadata: { name, labels },
      rules: [
        // Nothing is deleted until the controller Deployment runs the 1.13.0 image: that one Deployment...
        { apiGroups: ['apps'], resources: ['deployments'], resourceNames: [rules.controller.deployment], verbs: ['get'] },
        // ...and no Pod of its older ReplicaSets is left, terminating ones included.
        { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
        // The finalizer of the base runtime ConfigMaps is removed, so that prune can delete them once no
        // 1.11.1 controller handles it.
        { apiGroups: [''], resources: ['configmaps'], resourceNames: [...dockerfiles], verbs: ['update'] },
        // The finalizer of the registry Secret likewise, before it is deleted (or kept, when it is yours).
        { apiGroups: [''], resources: ['secrets'], resourceNames: [registrySecret], verbs: ['update'] },
      ],
    });
    const roleBinding = new k8s.KubeRoleBinding(this, 'RoleBinding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: props.namespace }],
    });
    const script = new k8s.KubeConfigMap(this, 'Script', {
      metadata: { name: `${name}-script`, labels },
      data: { 'cleanup.js': BUILD_MODE_CLEANUP_SCRIPT, 'rules.json': `${JSON.stringify(rules, undefined, 2)}\n` },
    });

    const template = scriptJobTemplate({
      labels, serviceAccountName: serviceAccount.name, priorityClassName: props.priorityClassName, image: props.image,
      containerName: 'cleanup', scriptConfigMap: script.name, scriptFile: 'cleanup.js', env: [{ name: 'RULES_FILE', value: '/script/rules.json' }],
    });
    this.job = new k8s.KubeJob(this, 'Resource', {
      // A Job's template cannot change: a new spec (or new rules) is a new Job, named by the hash of both.
      metadata: { name: `${name}-${shortHash(JSON.stringify({ template, rules }))}`, labels },
      spec: { backoffLimit: 4, template },
    });
    this.job.node.addDependency(clusterRoleBinding, roleBinding, script);
  }
}
