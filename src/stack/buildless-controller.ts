/**
 * The Function Controller of release 1.13.0 (upstream's `function-buildless-controller`): its
 * Deployment, identity, least-privilege RBAC and its two configuration files.
 */
import { createHash } from 'node:crypto';
import { Duration, Size } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { FUNCTION_GROUP } from '../api/function-schema';
import type { ResourcePreset } from '../api/presets';
import { FUNCTION_MIN_REQUEST, FunctionProfile } from '../api/profiles';
import { ServerlessRelease, releaseFacts } from '../api/release';
import { DEFAULT_PUBLISHER_PROXY_ADDRESS } from '../api/subscription-schema';
import { LogLevel } from '../log-level';
import { stringifyYaml } from '../_yaml';
import { httpProbe } from './_util';
import {
  CONTROLLER_NAMES, FunctionControllerOptions, IFunctionController, LogFormat, controllerObjects, goDuration, presetTable,
} from './controller';

/**
 * Names of the 1.13.0 controller's configuration, as upstream's 1.13.0 chart names them. Every other
 * object keeps its 1.11.1 name (`CONTROLLER_NAMES`), so that moving a stack from 1.11.1 updates it in place.
 */
export const BUILDLESS_CONTROLLER_NAMES = {
  /** The ConfigMap holding `function-config.yaml`, the controller's configuration. */
  functionConfig: 'serverless-config',
  /** Its key: the file the controller reads from `APP_FUNCTION_CONFIG_PATH`. */
  functionConfigFile: 'function-config.yaml',
  /** The ConfigMap holding `log-config.yaml`, which the controller watches and applies without a restart. */
  logConfig: 'serverless-log-config',
  /** Its key: the file the controller reads from `APP_LOG_CONFIG_PATH`. */
  logConfigFile: 'log-config.yaml',
} as const;

/** Where the controller's container mounts its two configuration files. */
const FUNCTION_CONFIG_DIR = '/appconfig';
const LOG_CONFIG_DIR = '/logconfig';

/** The controller's metrics and health ports (upstream's). */
const METRICS_PORT = 8080;
const HEALTHZ_PORT = 8090;

/**
 * How long the liveness check waits for the reconciler, each of its two steps (`healthzLivenessTimeout`):
 * upstream's default. The probe's own timeout must outlast both steps.
 */
const HEALTHZ_LIVENESS_TIMEOUT = Duration.seconds(10);

/**
 * The name of the 1.13.0 controller's Function reconciler, the `controller` label of its
 * controller-runtime metrics: `Named("function")` in `internal/controller/function_controller.go`
 * (it replaces the `Named("function-controller")` before it).
 */
export const BUILDLESS_FUNCTION_RECONCILER = 'function';

/** Everything the 1.13.0 controller construct needs. */
export interface BuildlessFunctionControllerProps extends FunctionControllerOptions {
  /** The stack's namespace (also where the leader-election Lease lives). */
  readonly namespace: string;
  /** The controller's image. */
  readonly image: string;
  /** The init container that clones Git Functions' repositories into their Pods (`images.repoFetcher`). */
  readonly functionInitImage: string;
  /** The image of each runtime of 1.13.0. */
  readonly runtimeImages: { readonly [runtime: string]: string };
  /** The stack's PriorityClass. */
  readonly priorityClassName: string;
  /** Function presets. */
  readonly functionPresets: { readonly [profile: string]: ResourcePreset };
  /** The preset of Functions that name none. */
  readonly defaultFunctionPreset: FunctionProfile;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/**
 * The keys of `function-config.yaml` as the 1.13.0 binary reads them (`internal/config/function_config.go`,
 * go-yaml v3): every key upstream's chart writes, under the name the Go struct declares where the two
 * differ (see `BUILDLESS_CONFIG_RENAMES`), plus the leader-election id our Role names.
 */
export function buildlessFunctionConfig(props: BuildlessFunctionControllerProps): Record<string, unknown> {
  const images: Record<string, string> = { repoFetcher: props.functionInitImage };
  for (const runtime of releaseFacts(ServerlessRelease.V1_13_0).runtimes) {
    const image = props.runtimeImages[runtime];
    if (!image) throw new Error(`No image was given for runtime '${runtime}' of release 1.13.0`);
    images[runtime] = image;
  }
  return {
    metricsPort: `:${METRICS_PORT}`,
    // Always on: even with one replica, a rolling update briefly runs two controllers.
    leaderElectionEnabled: true,
    // Upstream leaves it at the binary's default, which is this; written so that the Role's resourceNames and the lock cannot drift.
    leaderElectionID: CONTROLLER_NAMES.leaderElectionId,
    // The struct nests these under `healthz` (a field without a yaml tag); upstream's chart writes them at the top, where they are ignored.
    healthz: { healthzPort: `:${HEALTHZ_PORT}`, healthzLivenessTimeout: `${HEALTHZ_LIVENESS_TIMEOUT.toSeconds()}s` },
    images,
    packageRegistryConfigSecretName: CONTROLLER_NAMES.packageRegistrySecret,
    functionTraceCollectorEndpoint: props.traceCollectorEndpoint ?? 'http://telemetry-otlp-traces.kyma-system.svc.cluster.local:4318/v1/traces',
    functionPublisherProxyAddress: props.publisherProxyAddress ?? DEFAULT_PUBLISHER_PROXY_ADDRESS,
    functionReadyRequeueDuration: goDuration(props.functionReadyRequeue ?? Duration.minutes(5)),
    resourcesConfiguration: {
      function: {
        resources: {
          // The struct's tag is `minRequestCPU`; upstream's chart writes `minRequestCpu`, which the binary ignores (no CPU minimum).
          minRequestCPU: FUNCTION_MIN_REQUEST.cpu,
          minRequestMemory: FUNCTION_MIN_REQUEST.memory,
          defaultPreset: props.defaultFunctionPreset,
          presets: presetTable(props.functionPresets),
        },
      },
    },
  };
}

/**
 * Where our `function-config.yaml` departs from upstream 1.13.0's chart, key path by key path: the
 * chart's key, and ours (or `undefined` where we leave a key out), with the reason.
 */
export const BUILDLESS_CONFIG_RENAMES: readonly { readonly upstream: string; readonly ours?: string; readonly why: string }[] = [
  { upstream: 'healthzPort', ours: 'healthz.healthzPort', why: 'the Go struct nests it under healthz (a field without a yaml tag)' },
  { upstream: 'healthzLivenessTimeout', ours: 'healthz.healthzLivenessTimeout', why: 'the Go struct nests it under healthz' },
  {
    upstream: 'resourcesConfiguration.function.resources.minRequestCpu',
    ours: 'resourcesConfiguration.function.resources.minRequestCPU',
    why: 'the Go struct tag is minRequestCPU; the chart\'s spelling is ignored, leaving no CPU minimum',
  },
  { upstream: 'secretMutatingWebhookPort', why: 'upstream writes it empty: the manager registers no webhook, so nothing listens on it' },
];

/**
 * The Function Controller of release 1.13.0: it runs each Function as a Deployment of the runtime
 * image (which installs the dependencies at every Pod start) and a Service, nothing else. Its
 * Deployment, ServiceAccount, RBAC objects and metrics Service keep the names and the selector of
 * the 1.11.1 controller, so that moving a stack to 1.13.0 updates them in place.
 */
export class BuildlessFunctionController extends Construct implements IFunctionController {
  /** Controller replicas. */
  public readonly replicas: number;
  /** None: the 1.13.0 controller copies nothing into namespaces, and runs Functions in any of them. */
  public readonly excludedNamespaces: string[] = [];
  /** The Service in front of the controller's metrics (port `http-metrics`, 8080). */
  public readonly metricsService: k8s.KubeService;
  /** The `controller` label of the Function reconciler's metrics. */
  public readonly functionReconciler = BUILDLESS_FUNCTION_RECONCILER;
  /** The controller's configuration (`function-config.yaml`), as written. */
  public readonly functionConfig: Record<string, unknown>;

  constructor(scope: Construct, id: string, props: BuildlessFunctionControllerProps) {
    super(scope, id);
    this.replicas = props.replicas ?? 1;
    this.functionConfig = buildlessFunctionConfig(props);
    const functionConfigText = stringifyYaml(this.functionConfig);
    this.metricsService = controllerObjects(this, props, {
      // What the 1.13.0 binary calls, read from its source (components/buildless-serverless at 1.13.0) and
      // seen on a real API server. Its client reads Functions and Secrets uncached (cmd/main.go DisableFor),
      // Deployments and Services from its informers. Upstream's ClusterRole grants more: create, delete and
      // patch of Functions, delete and patch of Deployments, delete of Services, and list, watch, update and
      // delete of every Secret, which no code of 1.13.0 calls.
      clusterRole: (scope, metadata) => new k8s.KubeClusterRole(scope, 'ClusterRole', { metadata, rules: [
        // The informer behind For(&Function{}) lists and watches Functions; the reconciler and the eject endpoint get each one uncached.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions'], verbs: ['get', 'list', 'watch'] },
        // Progress is written with Status().Update (fsm.go); nothing reads the subresource.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions/status'], verbs: ['update'] },
        // Deployments and Services get a blocking controller reference to their Function (SetControllerReference);
        // clusters with the OwnerReferencesPermissionEnforcement admission plugin require this.
        { apiGroups: [FUNCTION_GROUP], resources: ['functions/finalizers'], verbs: ['update'] },
        // Each Function runs as a Deployment: Owns() lists and watches them, handle_deployment.go creates and updates,
        // and delete_deployments.go removes duplicates with DeleteAllOf (a delete of the collection).
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'deletecollection', 'list', 'update', 'watch'] },
        // Each Function gets a Service named after it: Owns() lists and watches them, handle_service.go creates and updates.
        { apiGroups: [''], resources: ['services'], verbs: ['create', 'list', 'update', 'watch'] },
        // A Git Function's credentials Secret is read by name, uncached, to resolve the commit (git_auth.go); never listed.
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
        // Status changes are also reported as Events on the Function (the manager's core/v1 event recorder).
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      ] }),
      configure: labels => {
        const functionConfig = new k8s.KubeConfigMap(this, 'FunctionConfig', {
          metadata: { name: BUILDLESS_CONTROLLER_NAMES.functionConfig, labels },
          data: { [BUILDLESS_CONTROLLER_NAMES.functionConfigFile]: functionConfigText },
        });
        const logConfig = new k8s.KubeConfigMap(this, 'LogConfig', {
          metadata: { name: BUILDLESS_CONTROLLER_NAMES.logConfig, labels },
          data: { [BUILDLESS_CONTROLLER_NAMES.logConfigFile]: stringifyYaml({ logFormat: props.logFormat, logLevel: props.logLevel }) },
        });
        const env: Record<string, string> = {
          APP_FUNCTION_CONFIG_PATH: `${FUNCTION_CONFIG_DIR}/${BUILDLESS_CONTROLLER_NAMES.functionConfigFile}`,
          APP_LOG_CONFIG_PATH: `${LOG_CONFIG_DIR}/${BUILDLESS_CONTROLLER_NAMES.logConfigFile}`,
          APP_KYMA_FIPS_MODE_ENABLED: 'false',
          // The binary is built with GOFIPS140; upstream's chart sets the same value as its image, so a
          // runtime that drops the image's environment still gets it.
          GODEBUG: 'fips140=off,tlsmlkem=0',
          // The image is FROM scratch, without a user database: client-go's kubeconfig lookup fails
          // without HOME, which not every container runtime sets. /tmp is a writable emptyDir.
          HOME: '/tmp',
        };
        return {
          env,
          // The binary reads function-config.yaml once, at start: a change must restart it.
          podAnnotations: { 'checksum/config': createHash('sha256').update(functionConfigText).digest('hex') },
          volumeMounts: [
            { name: 'configuration', mountPath: FUNCTION_CONFIG_DIR, readOnly: true },
            { name: 'log-configuration', mountPath: LOG_CONFIG_DIR, readOnly: true },
          ],
          volumes: [
            { name: 'configuration', configMap: { name: functionConfig.name } },
            { name: 'log-configuration', configMap: { name: logConfig.name } },
          ],
        };
      },
      defaultResources: { requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(64), limitCpu: Cpu.millis(500), limitMemory: Size.gibibytes(1) },
      metricsPort: METRICS_PORT,
      healthPort: HEALTHZ_PORT,
      // The check sends an event through the reconciler and waits for it, up to healthzLivenessTimeout
      // twice: the probe's timeout outlasts that (upstream's chart leaves Kubernetes' 1 s).
      livenessProbe: httpProbe('/healthz', HEALTHZ_PORT, {
        initialDelaySeconds: 15, timeoutSeconds: 2 * HEALTHZ_LIVENESS_TIMEOUT.toSeconds() + 5, periodSeconds: 30,
        failureThreshold: 3, successThreshold: 1,
      }),
      readinessProbe: httpProbe('/readyz', HEALTHZ_PORT, {
        initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, failureThreshold: 3, successThreshold: 1,
      }),
    });
  }
}
