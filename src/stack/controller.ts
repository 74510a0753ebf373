/**
 * The Function Controller of release 1.11.1: its Deployment, identity, permissions and configuration;
 * and what every release's controller shares (names, selector, options).
 */
import { Duration, Size } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import { Construct, IConstruct } from 'constructs';
import { FUNCTION_GROUP } from '../api/function-schema';
import { isDns1123Label } from '../api/names';
import type { ResourcePreset } from '../api/presets';
import { BUILD_MIN_REQUEST, BuildProfile, FUNCTION_MIN_REQUEST, FunctionProfile } from '../api/profiles';
import { PACKAGE_REGISTRY_CONFIG_SECRET } from '../api/runtime-contract';
import { DEFAULT_PUBLISHER_PROXY_ADDRESS } from '../api/subscription-schema';
import { FUNCTION_RECONCILER } from './_metrics-names';
import { clusterScoped, httpProbe, resourceRequirements, restrictedContainer, restrictedPod } from './_util';
import { ContainerResources } from './container-resources';

import { LogLevel } from '../log-level';
import { stringifyYaml } from '../_yaml';

/** Log formats the controller understands. */
export enum LogFormat {
  JSON = 'json',
  CONSOLE = 'console',
}

/** Names of the controller's objects. They match upstream's, so docs and tools find them. */
export const CONTROLLER_NAMES = {
  deployment: 'serverless-ctrl-mngr',
  serviceAccount: 'serverless-controller-manager',
  clusterRole: 'serverless',
  leaderElection: 'serverless-leader-election',
  leaderElectionId: 'serverless-controller-leader-election-helper',
  logConfig: 'serverless-configuration',
  functionServiceAccount: 'serverless-function',
  packageRegistrySecret: PACKAGE_REGISTRY_CONFIG_SECRET,
} as const;

/** Labels the controller's Pods carry, which the NetworkPolicies select on. */
export const CONTROLLER_POD_NETWORK_LABELS = {
  'networking.serverless.kyma-project.io/to-apiserver': 'allowed',
  'networking.serverless.kyma-project.io/from-serverless': 'allowed',
} as const;

/** The Deployment selector: upstream's, because a Deployment's selector can never change. */
export const CONTROLLER_SELECTOR = {
  'app': 'serverless',
  'app.kubernetes.io/name': 'serverless',
  'app.kubernetes.io/instance': 'serverless',
} as const;

/**
 * The namespaces Kubernetes itself creates besides `default`: the controller copies no registry
 * credentials, Dockerfiles or ServiceAccounts into them (see `excludedNamespaces`).
 */
export const EXCLUDED_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

/** What the stack, its namespaces and its monitoring need of a release's controller. */
export interface IFunctionController extends IConstruct {
  /** Controller replicas. */
  readonly replicas: number;
  /** Namespaces besides the stack's that the controller copies nothing into, and so cannot run Functions in. */
  readonly excludedNamespaces: string[];
  /** The Service in front of the controller's metrics (port `http-metrics`, 8080). */
  readonly metricsService: k8s.KubeService;
  /** The name of the controller-runtime reconciler of Functions: the `controller` label of its metrics. */
  readonly functionReconciler: string;
}

/**
 * Settings of the controller that a stack exposes. `buildExecutorArgs`, `excludedNamespaces` and
 * `resyncPeriod` are settings of the build pipeline (1.11.1); a stack of release 1.13.0 refuses them.
 */
export interface FunctionControllerOptions {
  /**
   * Controller replicas. Leader election is always on, so only one reconciles at a time; more
   * replicas only shorten fail-over, and add a PodDisruptionBudget.
   *
   * @default 1
   */
  readonly replicas?: number;

  /**
   * Resources of the controller container.
   *
   * @default - requests 10m CPU / 32Mi, limits 600m CPU / 1Gi (upstream's)
   */
  readonly resources?: ContainerResources;

  /**
   * OTLP endpoint Functions send traces to (`TRACE_COLLECTOR_ENDPOINT` in Function Pods).
   *
   * @default 'http://telemetry-otlp-traces.kyma-system.svc.cluster.local:4318/v1/traces'
   */
  readonly traceCollectorEndpoint?: string;

  /**
   * Eventing publisher proxy Functions publish to (`PUBLISHER_PROXY_ADDRESS` in Function Pods).
   *
   * @default 'http://eventing-publisher-proxy.kyma-system.svc.cluster.local/publish'
   */
  readonly publisherProxyAddress?: string;

  /**
   * Arguments of the kaniko executor in build Jobs.
   *
   * @default - upstream's: `--insecure`, `--skip-tls-verify`, `--skip-unused-stages`, `--log-format=text`,
   * `--cache=true`, `--use-new-run`, `--compressed-caching=false`
   */
  readonly buildExecutorArgs?: string[];

  /**
   * Namespaces, besides the stack's own, that the controller copies nothing into: it copies the
   * registry credentials Secret, the runtime Dockerfile ConfigMaps and the Function ServiceAccount
   * into every other namespace, so that Functions can be built and run there. Functions cannot run
   * in these namespaces.
   *
   * @default EXCLUDED_NAMESPACES: kube-system, kube-public and kube-node-lease (upstream excludes
   * only its own namespace, and so copies the registry credentials into kube-system)
   * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces
   */
  readonly excludedNamespaces?: string[];

  /**
   * How often the controller re-syncs the registry Secret, runtime ConfigMaps and the Function
   * ServiceAccount into every namespace.
   *
   * @default Duration.minutes(5)
   */
  readonly resyncPeriod?: Duration;

  /**
   * How often a ready Function is reconciled again (and its Git repository checked).
   *
   * @default Duration.minutes(5)
   */
  readonly functionReadyRequeue?: Duration;
}

/** Everything the controller construct needs. */
export interface FunctionControllerProps extends FunctionControllerOptions {
  readonly namespace: string;
  readonly image: string;
  readonly buildExecutorImage: string;
  readonly repoFetcherImage: string;
  readonly priorityClassName: string;
  readonly registrySecretName: string;
  readonly functionPresets: { readonly [profile: string]: ResourcePreset };
  readonly defaultFunctionPreset: FunctionProfile;
  readonly buildPresets: { readonly [profile: string]: ResourcePreset };
  readonly defaultBuildPreset: BuildProfile;
  readonly targetCpuUtilizationPercentage: number;
  readonly maxSimultaneousBuilds: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

const DEFAULT_BUILD_EXECUTOR_ARGS = [
  '--insecure', '--skip-tls-verify', '--skip-unused-stages', '--log-format=text', '--cache=true', '--use-new-run',
  '--compressed-caching=false',
];

/** Presets as the controllers' resource configuration writes them. @internal */
export function presetTable(presets: { readonly [name: string]: ResourcePreset }) {
  return Object.fromEntries(Object.entries(presets).map(([name, p]) => [name, {
    requestCpu: p.requestCpu.amount,
    requestMemory: p.requestMemory.asString(),
    limitCpu: p.limitCpu.amount,
    limitMemory: p.limitMemory.asString(),
  }]));
}

/**
 * The YAML the controller reads from `APP_FUNCTION_RESOURCE_CONFIG`. The minimum keys are
 * `minRequestedCPU`/`minRequestedMemory`, the ones the controller's config struct declares;
 * upstream's chart writes `minRequestCpu`, which the controller ignores, leaving no minimum.
 */
export function resourceConfigYaml(props: Pick<FunctionControllerProps,
'functionPresets' | 'defaultFunctionPreset' | 'buildPresets' | 'defaultBuildPreset'>): string {
  return stringifyYaml({
    function: {
      resources: {
        minRequestedCPU: FUNCTION_MIN_REQUEST.cpu,
        minRequestedMemory: FUNCTION_MIN_REQUEST.memory,
        defaultPreset: props.defaultFunctionPreset,
        presets: presetTable(props.functionPresets),
      },
    },
    buildJob: {
      resources: {
        minRequestedCPU: BUILD_MIN_REQUEST.cpu,
        minRequestedMemory: BUILD_MIN_REQUEST.memory,
        defaultPreset: props.defaultBuildPreset,
        presets: presetTable(props.buildPresets),
      },
    },
  });
}

/**
 * The leader-election Role of a controller and its binding: both releases' controllers hold one
 * Lease in their own namespace (controller-runtime 0.22's lock).
 *
 * @internal
 */
export function leaderElectionRbac(scope: Construct, labels: { readonly [key: string]: string }, subjects: k8s.Subject[]): void {
  const names = CONTROLLER_NAMES;
  const leaderRole = new k8s.KubeRole(scope, 'LeaderElectionRole', {
    metadata: { name: names.leaderElection, labels: { ...labels } },
    rules: [
      // The lock is a Lease; RBAC cannot restrict create by name.
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      // Renewing and taking over the lock: only this one Lease.
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [names.leaderElectionId],
        verbs: ['get', 'update'],
      },
      // Leadership changes are recorded as Events on the Lease.
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  });
  new k8s.KubeRoleBinding(scope, 'LeaderElectionRoleBinding', {
    metadata: { name: names.leaderElection, labels: { ...labels } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leaderRole.name },
    subjects,
  });
}

/**
 * A duration as the controllers' Go configuration reads it: whole minutes as `5m`, else seconds.
 *
 * @internal
 */
export function goDuration(d: Duration): string {
  const seconds = d.toSeconds();
  return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}

/** The labels of every object of a controller. */
const CONTROLLER_LABELS = { 'app.kubernetes.io/name': 'serverless', 'app.kubernetes.io/component': 'controller' };

/** What a controller's container gets of the configuration its release writes. */
export interface ControllerConfiguration {
  /** The container's environment, in order. */
  readonly env: { readonly [name: string]: string };
  /** Pod annotations besides the two every controller Pod has. */
  readonly podAnnotations?: { readonly [key: string]: string };
  /** The mounts of the configuration (a writable /tmp follows them). */
  readonly volumeMounts: k8s.VolumeMount[];
  /** The volumes of the configuration (the /tmp emptyDir follows them). */
  readonly volumes: k8s.Volume[];
}

/**
 * What differs between the controllers of the releases; the rest of their objects is one shape
 * ({@link controllerObjects}): a ServiceAccount, a ClusterRole and its binding, the leader-election
 * Role, the configuration, a Deployment of one `manager` container, a metrics Service and, with
 * more than one replica, a disruption budget, all under the 1.11.1 names and selector.
 *
 * @internal
 */
export interface ControllerShape {
  /** Writes the ClusterRole, with the rules of what the release's binary calls, each with its comment. */
  readonly clusterRole: (scope: Construct, metadata: k8s.ObjectMeta) => k8s.KubeClusterRole;
  /** Writes the release's configuration objects (after the RBAC) and says what the container gets of them. */
  readonly configure: (labels: { readonly [key: string]: string }) => ControllerConfiguration;
  /** The container's requests and limits when the props give none. */
  readonly defaultResources: ContainerResources;
  /** The port of the metrics (named `http-metrics`) and of the health checks (named `health`). */
  readonly metricsPort: number;
  readonly healthPort: number;
  readonly livenessProbe: k8s.Probe;
  readonly readinessProbe: k8s.Probe;
}

/** What the props of every release's controller give its objects. */
type ControllerBasics = Pick<FunctionControllerProps, 'namespace' | 'image' | 'priorityClassName' | 'replicas' | 'resources'>;

/**
 * The objects of a controller of any release, in one shape, with what differs taken from `shape`.
 *
 * @returns the metrics Service
 * @internal
 */
export function controllerObjects(scope: Construct, props: ControllerBasics, shape: ControllerShape): k8s.KubeService {
  const replicas = props.replicas ?? 1;
  const names = CONTROLLER_NAMES;
  const labels = CONTROLLER_LABELS;

  const serviceAccount = new k8s.KubeServiceAccount(scope, 'ServiceAccount', {
    metadata: { name: names.serviceAccount, labels },
  });
  const subjects = [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: props.namespace }];

  const clusterRole = clusterScoped(shape.clusterRole(scope, { name: names.clusterRole, labels }));
  clusterScoped(new k8s.KubeClusterRoleBinding(scope, 'ClusterRoleBinding', {
    metadata: { name: names.clusterRole, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole.name },
    subjects,
  }));

  // Leader election is always on: even with one replica, a rolling update briefly runs two
  // controllers. controller-runtime 0.22's lock is a Lease in the controller's own namespace.
  leaderElectionRbac(scope, labels, subjects);

  const configuration = shape.configure(labels);

  new k8s.KubeDeployment(scope, 'Deployment', {
    metadata: { name: names.deployment, labels },
    spec: {
      replicas,
      // The 1.11.1 controller's selector, which a Deployment can never change: a move of release updates it in place.
      selector: { matchLabels: { ...CONTROLLER_SELECTOR } },
      template: {
        metadata: {
          labels: {
            ...CONTROLLER_SELECTOR,
            ...labels,
            'kyma-project.io/module': 'serverless',
            'kyma-project.io/component': 'controller',
            ...CONTROLLER_POD_NETWORK_LABELS,
          },
          annotations: { 'sidecar.istio.io/inject': 'false', 'prometheus.io/scrape': 'false', ...configuration.podAnnotations },
        },
        spec: {
          serviceAccountName: serviceAccount.name,
          automountServiceAccountToken: true,
          priorityClassName: props.priorityClassName,
          terminationGracePeriodSeconds: 10,
          securityContext: restrictedPod(1000),
          containers: [{
            name: 'manager',
            image: props.image,
            imagePullPolicy: 'IfNotPresent',
            command: ['/app/manager'],
            env: Object.entries(configuration.env).map(([name, value]) => ({ name, value })),
            ports: [
              { name: 'http-metrics', containerPort: shape.metricsPort, protocol: 'TCP' },
              { name: 'health', containerPort: shape.healthPort, protocol: 'TCP' },
            ],
            livenessProbe: shape.livenessProbe,
            readinessProbe: shape.readinessProbe,
            resources: resourceRequirements(props.resources ?? shape.defaultResources),
            securityContext: restrictedContainer(),
            volumeMounts: [
              ...configuration.volumeMounts,
              // Git clones and HOME need a writable directory under a read-only root file system.
              { name: 'tmpdir', mountPath: '/tmp' },
            ],
          }],
          volumes: [...configuration.volumes, { name: 'tmpdir', emptyDir: {} }],
        },
      },
    },
  });

  const metricsService = new k8s.KubeService(scope, 'MetricsService', {
    metadata: {
      name: names.serviceAccount,
      labels,
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(shape.metricsPort), 'prometheus.io/path': '/metrics' },
    },
    spec: {
      type: 'ClusterIP',
      selector: { ...CONTROLLER_SELECTOR },
      // Upstream also exposes 443 -> 8443, where the manager serves nothing.
      ports: [{ name: 'http-metrics', port: shape.metricsPort, targetPort: k8s.IntOrString.fromNumber(shape.metricsPort), protocol: 'TCP' }],
    },
  });

  if (replicas > 1) {
    new k8s.KubePodDisruptionBudget(scope, 'DisruptionBudget', {
      metadata: { name: names.deployment, labels },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: { ...CONTROLLER_SELECTOR } } },
    });
  }
  return metricsService;
}

/**
 * The Function Controller (upstream's `function-controller` image): it turns Functions into
 * ConfigMaps, build Jobs, Deployments, Services and HorizontalPodAutoscalers.
 */
export class FunctionController extends Construct implements IFunctionController {
  /** Controller replicas. */
  public readonly replicas: number;
  /** The `controller` label of the Function reconciler's metrics. */
  public readonly functionReconciler = FUNCTION_RECONCILER;
  /** Namespaces besides the stack's that the controller copies nothing into, and so cannot run Functions in. */
  public readonly excludedNamespaces: string[];
  /** The Service in front of the controller's metrics (port `http-metrics`, 8080). */
  public readonly metricsService: k8s.KubeService;

  constructor(scope: Construct, id: string, props: FunctionControllerProps) {
    super(scope, id);
    this.replicas = props.replicas ?? 1;
    this.excludedNamespaces = [...(props.excludedNamespaces ?? EXCLUDED_NAMESPACES)].sort();
    for (const name of this.excludedNamespaces) {
      if (!isDns1123Label(name)) throw new Error(`'controller.excludedNamespaces' holds ${JSON.stringify(name)}, which is no namespace name: give DNS-1123 labels such as kube-system`);
    }
    const names = CONTROLLER_NAMES;
    const resync = goDuration(props.resyncPeriod ?? Duration.minutes(5));
    this.metricsService = controllerObjects(this, props, {
      // What the 1.11.1 binary calls. Upstream's leader-election Role lacks the Leases its lock uses.
      clusterRole: (scope, metadata) => new k8s.KubeClusterRole(scope, 'ClusterRole', { metadata, rules: [
        // Inline sources become ConfigMaps; runtime Dockerfiles are copied to every namespace,
        // and the base ones get a finalizer. Old source ConfigMaps are removed in bulk.
        { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'update', 'watch'] },
        // The registry Secret is copied to every namespace and removed from them on deletion.
        { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'] },
        // The Function ServiceAccount is copied to every namespace (never deleted by the controller).
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create', 'get', 'list', 'update', 'watch'] },
        // Each Function gets a Service named after it.
        { apiGroups: [''], resources: ['services'], verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'] },
        // Namespaces are watched so new ones get the copies above.
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
        // Status changes are also reported as Events on the Function (core/v1 recorder).
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        // Each Function runs as a Deployment; old ones are removed in bulk.
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'deletecollection', 'get', 'list', 'update', 'watch'] },
        // Each Function image is built by a Job; finished and failed ones are removed in bulk.
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'deletecollection', 'get', 'list', 'update', 'watch'] },
        // Functions with scaleConfig get a CPU-based HPA on their scale subresource.
        {
          apiGroups: ['autoscaling'],
          resources: ['horizontalpodautoscalers'],
          verbs: ['create', 'deletecollection', 'get', 'list', 'update', 'watch'],
        },
        // The Functions themselves.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions'], verbs: ['get', 'list', 'watch'] },
        // Progress is written to the status subresource.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions/status'], verbs: ['get', 'update'] },
        // Children are created with blocking owner references to their Function; clusters with
        // the OwnerReferencesPermissionEnforcement admission plugin require this.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions/finalizers'], verbs: ['update'] },
      ] }),
      configure: labels => {
        const logConfig = new k8s.KubeConfigMap(this, 'LogConfig', {
          metadata: { name: names.logConfig, labels },
          data: { 'log-config.yaml': stringifyYaml({ logFormat: props.logFormat, logLevel: props.logLevel }) },
        });
        const env: Record<string, string> = {
          APP_METRICS_ADDRESS: ':8080',
          APP_HEALTHZ_ADDRESS: ':8090',
          APP_HEALTHZ_LIVENESS_TIMEOUT: '10s',
          APP_LEADER_ELECTION_ENABLED: 'true',
          APP_LEADER_ELECTION_ID: names.leaderElectionId,
          APP_LOG_CONFIG_PATH: '/appconfig/log-config.yaml',
          APP_KUBERNETES_BASE_NAMESPACE: props.namespace,
          APP_KUBERNETES_BASE_DEFAULT_SECRET_NAME: props.registrySecretName,
          APP_KUBERNETES_EXCLUDED_NAMESPACES: [...new Set([props.namespace, ...this.excludedNamespaces])].join(','),
          APP_KUBERNETES_CONFIG_MAP_REQUEUE_DURATION: resync,
          APP_KUBERNETES_SECRET_REQUEUE_DURATION: resync,
          APP_KUBERNETES_SERVICE_ACCOUNT_REQUEUE_DURATION: resync,
          APP_FUNCTION_TRACE_COLLECTOR_ENDPOINT: props.traceCollectorEndpoint
            ?? 'http://telemetry-otlp-traces.kyma-system.svc.cluster.local:4318/v1/traces',
          APP_FUNCTION_PUBLISHER_PROXY_ADDRESS: props.publisherProxyAddress ?? DEFAULT_PUBLISHER_PROXY_ADDRESS,
          APP_FUNCTION_IMAGE_REGISTRY_DEFAULT_DOCKER_CONFIG_SECRET_NAME: props.registrySecretName,
          APP_FUNCTION_PACKAGE_REGISTRY_CONFIG_SECRET_NAME: names.packageRegistrySecret,
          APP_FUNCTION_IMAGE_PULL_ACCOUNT_NAME: names.functionServiceAccount,
          APP_FUNCTION_TARGET_CPU_UTILIZATION_PERCENTAGE: String(props.targetCpuUtilizationPercentage),
          APP_FUNCTION_REQUEUE_DURATION: '5m',
          APP_FUNCTION_FUNCTION_READY_REQUEUE_DURATION: goDuration(props.functionReadyRequeue ?? Duration.minutes(5)),
          APP_FUNCTION_BUILD_EXECUTOR_ARGS: (props.buildExecutorArgs ?? DEFAULT_BUILD_EXECUTOR_ARGS).join(','),
          APP_FUNCTION_BUILD_EXECUTOR_IMAGE: props.buildExecutorImage,
          APP_FUNCTION_BUILD_REPO_FETCHER_IMAGE: props.repoFetcherImage,
          APP_FUNCTION_BUILD_MAX_SIMULTANEOUS_JOBS: String(props.maxSimultaneousBuilds),
          APP_FUNCTION_RESOURCE_CONFIG: resourceConfigYaml(props),
          // GODEBUG is deliberately absent: the image sets the FIPS value its binary insists on.
        };
        return {
          env,
          volumeMounts: [{ name: 'configuration', mountPath: '/appconfig' }],
          volumes: [{ name: 'configuration', configMap: { name: logConfig.name } }],
        };
      },
      defaultResources: { requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(32), limitCpu: Cpu.millis(600), limitMemory: Size.gibibytes(1) },
      metricsPort: 8080,
      healthPort: 8090,
      livenessProbe: httpProbe('/healthz/', 8090, {
        initialDelaySeconds: 50, timeoutSeconds: 60, periodSeconds: 120, failureThreshold: 3, successThreshold: 1,
      }),
      readinessProbe: httpProbe('/readyz/', 8090, {
        initialDelaySeconds: 10, timeoutSeconds: 10, periodSeconds: 30, failureThreshold: 3, successThreshold: 1,
      }),
    });
  }
}
