/**
 * ServerlessStack: the whole Kyma Serverless stack in one chart.
 */
import { ApiObject, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
// The modules of src/api, not its index, which loads every rule of every kind (and the handler parsers): the stack needs few.
import { FUNCTION_CRD_NAME, functionCrdSpec } from '../api/crd';
import { RELEASE_ANNOTATION } from '../api/crd-release';
import { isDns1123Label } from '../api/names';
import { DEFAULT_BUILD_PRESETS, DEFAULT_FUNCTION_PRESETS, ResourcePreset, presetProblems } from '../api/presets';
import { BUILD_MIN_REQUEST, BUILD_PROFILES, BuildProfile, FUNCTION_MIN_REQUEST, FUNCTION_PROFILES, FunctionProfile } from '../api/profiles';
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from '../api/release';
import type { ReplacementOptIn } from '../policy/replacement';
import { clusterScoped, requireInteger } from './_util';
// Types only: the buildless release's modules load when a stack has that release (see buildlessController).
import type { BuildlessFunctionController } from './buildless-controller';
import { LogLevel } from '../log-level';
import { FunctionController, FunctionControllerOptions, IFunctionController, LogFormat } from './controller';
import { ExposureGateway, StackExposureOptions, exposureProblems } from './exposure';
import { ResolvedImages, ServerlessImages, _buildImages, resolveImages } from './images';
// Types only: the monitoring modules load when a stack has monitoring (see the constructor).
import type { MonitoringOptions, RegistryMetricsTarget, ServerlessMonitoring } from './monitoring';
import { ServerlessNetworkPolicies } from './network-policies';
import { REGISTRY_STORAGE_REPLACEMENT, Registry } from './registry';
import { _markRelease } from './release-scope';
import { FunctionRuntimes } from './runtimes';
import { AdmissionWebhook, AdmissionWebhookOptions } from './webhook';

/** The namespace upstream installs the stack into. */
export const DEFAULT_SYSTEM_NAMESPACE = 'kyma-system';

/** The PriorityClass of the stack's Pods. */
export const PRIORITY_CLASS_NAME = 'serverless-priority';

/** Its value (upstream's); a PriorityClass's value cannot change once created. */
export const PRIORITY_CLASS_VALUE = 2000000;

/** The label on every object this package synthesizes. */
export const MANAGED_BY_LABEL = { key: 'app.kubernetes.io/managed-by', value: 'cdk8s-kyma-serverless' } as const;

/**
 * How the stack's objects opt in to being replaced when a change touches a field the API server
 * cannot change: `kyma-serverless synth`, `diff` and `apply` name these props, and what replacing costs.
 */
export const STACK_REPLACEMENT_OPT_INS: readonly ReplacementOptIn[] = [REGISTRY_STORAGE_REPLACEMENT];

/** Props of {@link ServerlessStack}. */
export interface ServerlessStackProps {
  /**
   * The upstream release to deploy: its controller, images, configuration, RBAC and Function CRD,
   * and the rules Functions are checked against. `V1_11_1` is the build-based pipeline (a Job
   * builds each Function's image into a registry); `V1_13_0` is upstream's current, buildless
   * release (the runtime image installs dependencies at Pod start). Changing it moves a running
   * system: see docs/moving-to-1.13.0.md.
   *
   * @default ServerlessRelease.V1_11_1
   */
  readonly release?: ServerlessRelease;

  /**
   * The namespace the stack runs in. The chart creates it.
   *
   * @default 'kyma-system'
   */
  readonly namespace?: string;

  /**
   * The tag of upstream's images the stack runs. The configuration and objects stay those of
   * `release`; a tag of another upstream version (a patch of the release) is at your own risk.
   *
   * @default - the release's own version, such as '1.11.1'
   */
  readonly version?: string;

  /**
   * Images to use instead of upstream's.
   *
   * @default - upstream's images of `version`
   */
  readonly images?: ServerlessImages;

  /**
   * Controller settings: replicas, resources, endpoints, build arguments. The settings of the
   * build pipeline (`buildExecutorArgs`, `excludedNamespaces`, `resyncPeriod`) are refused under
   * a release that builds nothing (1.13.0).
   *
   * @default - one replica with upstream's settings
   */
  readonly controller?: FunctionControllerOptions;

  /**
   * Values of the Function presets. Given presets replace upstream's of the same name; the
   * names are fixed by the Function API.
   *
   * @default - upstream's XS, S, M, L and XL
   * @see https://kyma-project.io/#/serverless-manager/user/technical-reference/07-80-available-presets
   */
  readonly functionPresets?: { readonly [profile: string]: ResourcePreset };

  /**
   * The preset of Functions that name neither a preset nor resources.
   *
   * @default FunctionProfile.L
   */
  readonly defaultFunctionPreset?: FunctionProfile;

  /**
   * Values of the build Job presets. Given presets replace upstream's of the same name. Only for
   * a release that builds images (1.11.1).
   *
   * @default - upstream's local-dev, slow, normal and fast
   */
  readonly buildPresets?: { readonly [profile: string]: ResourcePreset };

  /**
   * The build preset of Functions that name neither a build preset nor build resources. Only for
   * a release that builds images (1.11.1).
   *
   * @default BuildProfile.NORMAL
   */
  readonly defaultBuildPreset?: BuildProfile;

  /**
   * CPU utilisation the HorizontalPodAutoscalers of scaled Functions aim at, in percent. Under
   * 1.11.1 the controller creates those HPAs; under 1.13.0 the Function constructs write them
   * beside each Function with `scale`, reading `stack.targetCpuUtilizationPercentage`.
   *
   * @default 50
   */
  readonly targetCpuUtilizationPercentage?: number;

  /**
   * How many build Jobs may run at once in the whole cluster; more wait. Only for a release that
   * builds images (1.11.1).
   *
   * @default 5
   */
  readonly maxSimultaneousBuilds?: number;

  /**
   * Where Function images are pushed and pulled. Only for a release that builds images (1.11.1):
   * under 1.13.0 Function Pods run the runtime image, and there is no registry.
   *
   * @default - Registry.internal() under 1.11.1; none under 1.13.0
   */
  readonly registry?: Registry;

  /**
   * The admission webhook that fills in defaults and denies invalid Functions at apply time.
   *
   * @default - enabled: 2 replicas, self-managed certificates
   */
  readonly webhook?: AdmissionWebhookOptions;

  /**
   * Render the stack's NetworkPolicies.
   *
   * @default true
   */
  readonly networkPolicies?: boolean;

  /**
   * Monitoring with the Prometheus Operator: ServiceMonitors and a PodMonitor for the controller,
   * the webhook and the internal registry, a PrometheusRule with alerts that name their runbooks,
   * and a Grafana dashboard. Needs the Prometheus Operator's CRDs (kube-prometheus-stack installs
   * them), and kube-state-metrics 2.18 or later for the alerts about Functions and builds.
   *
   * @default - none: nothing is rendered, so clusters without the Prometheus Operator sync the stack
   */
  readonly monitoring?: MonitoringOptions;

  /**
   * Log level of the controller and the webhook.
   *
   * @default LogLevel.INFO
   */
  readonly logLevel?: LogLevel;

  /**
   * Log format of the controller.
   *
   * @default LogFormat.JSON
   */
  readonly logFormat?: LogFormat;

  /**
   * How Functions are exposed over HTTP by default, and the domain of short host names: with it,
   * `fn.expose({ host: 'orders', auth })` is enough. Optionally the stack also creates the Istio
   * Gateway for the domain.
   *
   * @default - none: every `expose()` names its `via` and a full host name
   */
  readonly exposure?: StackExposureOptions;

  /**
   * Labels added to every object of the chart.
   *
   * @default - none beyond the stack's own
   */
  readonly labels?: { readonly [key: string]: string };
}

/**
 * A prop of the stack that only a release that builds images reads, and why a buildless release
 * refuses it rather than dropping it.
 */
interface BuildOnlyProp {
  readonly prop: string;
  readonly given: (props: ServerlessStackProps) => unknown;
  readonly why: string;
}

/** The props of the build pipeline (1.11.1), which a buildless stack (1.13.0) refuses. */
const BUILD_ONLY_PROPS: readonly BuildOnlyProp[] = [
  { prop: 'registry', given: p => p.registry, why: 'nothing is built or pushed: Function Pods run the runtime image itself' },
  { prop: 'buildPresets', given: p => p.buildPresets, why: 'no build Job runs' },
  { prop: 'defaultBuildPreset', given: p => p.defaultBuildPreset, why: 'no build Job runs' },
  { prop: 'maxSimultaneousBuilds', given: p => p.maxSimultaneousBuilds, why: 'no build Job runs' },
  { prop: 'controller.buildExecutorArgs', given: p => p.controller?.buildExecutorArgs, why: 'no kaniko Job runs' },
  {
    prop: 'controller.excludedNamespaces',
    given: p => p.controller?.excludedNamespaces,
    why: 'the controller copies nothing into namespaces, and runs Functions in every one',
  },
  {
    prop: 'controller.resyncPeriod',
    given: p => p.controller?.resyncPeriod,
    why: 'there is no registry Secret, runtime Dockerfile or Function ServiceAccount to copy into namespaces',
  },
  { prop: 'monitoring.alerts.buildFailurePercent', given: p => p.monitoring?.alerts?.buildFailurePercent, why: 'there is no build alert' },
  {
    prop: 'monitoring.alerts.registryVolumeUsagePercent',
    given: p => p.monitoring?.alerts?.registryVolumeUsagePercent,
    why: 'there is no registry',
  },
];

/** A prop's value as an error message echoes it: scalars and lists as written, objects by their kind. */
function echo(value: unknown): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value.constructor?.name ?? 'object';
  return JSON.stringify(value);
}

/** Why the props contradict the release: the build pipeline's props under a release that builds nothing. */
function releaseProblems(release: ServerlessRelease, props: ServerlessStackProps): string[] {
  if (releaseFacts(release).buildsImages) return [];
  return BUILD_ONLY_PROPS.filter(p => p.given(props) !== undefined).map(p =>
    `'${p.prop}' (${echo(p.given(props))}) is a setting of the build pipeline, which release ${release} does not have: ${p.why}. `
    + `Remove it, or deploy release ${ServerlessRelease.V1_11_1}`);
}

/**
 * The Kyma Serverless stack of one upstream release (`release`): the Function CRD, the Function
 * Controller with its RBAC and configuration, our admission webhook and NetworkPolicies, in their
 * own namespace; under 1.11.1 (the default) also the runtime Dockerfiles and the Docker registry
 * (internal by default) of the build pipeline; with `monitoring`, also what the Prometheus Operator
 * needs to watch it, and a Grafana dashboard.
 *
 * @example
 * new ServerlessStack(app, 'serverless');
 * new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
 */
export class ServerlessStack extends Chart {
  /** The upstream release the stack deploys. */
  public readonly release: ServerlessRelease;
  /** The namespace the stack runs in (`namespace`, which the Chart's own `namespace` holds too). */
  public readonly systemNamespace: string;
  /** The tag of upstream's images the stack runs. */
  public readonly version: string;
  /** Every image the stack uses. */
  public readonly images: ResolvedImages;
  /** Function presets, upstream's merged with the given ones. */
  public readonly functionPresets: { readonly [profile: string]: ResourcePreset };
  /** The default Function preset. */
  public readonly defaultFunctionPreset: FunctionProfile;
  /** Build presets, upstream's merged with the given ones (read by a release that builds images). */
  public readonly buildPresets: { readonly [profile: string]: ResourcePreset };
  /** The default build preset. */
  public readonly defaultBuildPreset: BuildProfile;
  /** Where Function images go; `undefined` under a release that builds none (1.13.0). */
  public readonly registry?: Registry;
  /**
   * The CPU utilisation, in percent, the HorizontalPodAutoscalers of scaled Functions aim at: under
   * 1.13.0 the Function constructs write those HPAs with it.
   */
  public readonly targetCpuUtilizationPercentage: number;
  /** The Function CRD. */
  public readonly crd: ApiObject;
  /** The controller of the release: a `FunctionController` (1.11.1) or a `BuildlessFunctionController` (1.13.0). */
  public readonly controller: IFunctionController;
  /** The admission webhook; `undefined` when disabled. */
  public readonly webhook?: AdmissionWebhook;
  /** The exposure defaults of Functions in namespaces made with this stack, when set. */
  public readonly exposure?: StackExposureOptions;
  /** The Istio Gateway of the exposure domain, when the stack creates it. */
  public readonly exposureGateway?: ExposureGateway;
  /** The monitoring objects, when `monitoring` is on. */
  public readonly monitoring?: ServerlessMonitoring;

  constructor(scope: Construct, id: string, props: ServerlessStackProps = {}) {
    const namespace = props.namespace ?? DEFAULT_SYSTEM_NAMESPACE;
    const release = props.release ?? DEFAULT_RELEASE;
    const version = props.version ?? release;
    super(scope, id, {
      namespace,
      labels: {
        'app.kubernetes.io/part-of': 'serverless',
        [MANAGED_BY_LABEL.key]: MANAGED_BY_LABEL.value,
        'app.kubernetes.io/version': version,
        'kyma-project.io/module': 'serverless',
        ...props.labels,
      },
    });
    if (!isDns1123Label(namespace)) {
      throw new Error(`'namespace' (${namespace}) must be a DNS-1123 label: at most 63 lower-case letters, digits and '-'`);
    }
    const builds = releaseFacts(release).buildsImages;
    const contradictions = releaseProblems(release, props);
    if (contradictions.length) throw new Error(contradictions.join('\n'));
    const targetCpu = props.targetCpuUtilizationPercentage ?? 50;
    requireInteger('targetCpuUtilizationPercentage', targetCpu, 1, 100);
    const maxBuilds = props.maxSimultaneousBuilds ?? 5;
    requireInteger('maxSimultaneousBuilds', maxBuilds, 1);
    requireInteger('controller.replicas', props.controller?.replicas ?? 1, 1);

    this.release = release;
    _markRelease(this, this.release, true);
    this.systemNamespace = namespace;
    this.version = version;
    this.images = resolveImages(release, version, props.images);
    this.targetCpuUtilizationPercentage = targetCpu;
    this.functionPresets = { ...DEFAULT_FUNCTION_PRESETS, ...props.functionPresets };
    this.defaultFunctionPreset = props.defaultFunctionPreset ?? FunctionProfile.L;
    this.buildPresets = { ...DEFAULT_BUILD_PRESETS, ...props.buildPresets };
    this.defaultBuildPreset = props.defaultBuildPreset ?? BuildProfile.NORMAL;
    this.registry = builds ? props.registry ?? Registry.internal() : undefined;
    const problems = [
      // The props are maps by profile name (jsii has no maps keyed by an enum): a key that names no profile is a typo.
      ...Object.keys(props.functionPresets ?? {}).filter(name => !FUNCTION_PROFILES.includes(name))
        .map(name => `'functionPresets.${name}' names no function profile: use one of ${FUNCTION_PROFILES.join(', ')}`),
      ...Object.keys(props.buildPresets ?? {}).filter(name => !BUILD_PROFILES.includes(name))
        .map(name => `'buildPresets.${name}' names no build profile: use one of ${BUILD_PROFILES.join(', ')}`),
      ...Object.entries(this.functionPresets).flatMap(([name, p]) => presetProblems(`functionPresets.${name}`, p, FUNCTION_MIN_REQUEST)),
      ...(builds ? Object.entries(this.buildPresets).flatMap(([name, p]) => presetProblems(`buildPresets.${name}`, p, BUILD_MIN_REQUEST)) : []),
    ];
    if (problems.length) throw new Error(problems.join('\n'));

    clusterScoped(new k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name: namespace,
        labels: {
          // The registry's storage-ownership init container needs root with CHOWN (baseline);
          // everything else is restricted, which warn and audit report on. Without a registry
          // (1.13.0) every Pod of the namespace is restricted.
          'pod-security.kubernetes.io/enforce': builds ? 'baseline' : 'restricted',
          'pod-security.kubernetes.io/warn': 'restricted',
          'pod-security.kubernetes.io/audit': 'restricted',
          // The stack's Pods opt out one by one too; no sidecars in the system namespace.
          'istio-injection': 'disabled',
        },
      },
    }));

    // A plain ApiObject: the generated L1 class renames schema keywords (`openAPIV3Schema`,
    // `x-kubernetes-validations`) it does not know how to map, which would empty the schema.
    this.crd = clusterScoped(new ApiObject(this, 'FunctionCrd', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: FUNCTION_CRD_NAME,
        labels: { 'app.kubernetes.io/name': 'serverless', 'app.kubernetes.io/component': 'crd' },
        annotations: { [RELEASE_ANNOTATION]: release },
      },
      spec: functionCrdSpec(release),
    }));

    clusterScoped(new k8s.KubePriorityClass(this, 'PriorityClass', {
      metadata: { name: PRIORITY_CLASS_NAME, labels: { 'app.kubernetes.io/name': 'serverless' } },
      value: PRIORITY_CLASS_VALUE,
      globalDefault: false,
      description: 'Scheduling priority of Serverless components: they must not wait behind unschedulable user workloads.',
    }));

    const monitoring = props.monitoring && (props.monitoring.enabled ?? true) ? props.monitoring : undefined;
    // The release's controller, and under 1.11.1 the rest of its build pipeline: one method per kind of release.
    const pipeline = this.registry
      ? this.buildPipeline(props, this.registry, maxBuilds, monitoring !== undefined)
      : { controller: this.buildlessController(props), registryMetrics: undefined };
    this.controller = pipeline.controller;
    const registryMetrics = pipeline.registryMetrics;

    if (props.webhook?.enabled ?? true) {
      this.webhook = new AdmissionWebhook(this, 'Webhook', {
        ...props.webhook,
        namespace,
        image: this.images.webhook,
        nodeImage: this.images.nodejs,
        priorityClassName: PRIORITY_CLASS_NAME,
        defaults: { replicas: 1, functionProfile: this.defaultFunctionPreset, buildProfile: this.defaultBuildPreset },
        release,
        logLevel: props.logLevel ?? LogLevel.INFO,
      });
    }

    if (props.networkPolicies ?? true) {
      new ServerlessNetworkPolicies(this, 'NetworkPolicies', {
        webhook: this.webhook !== undefined,
        registry: builds,
        prometheus: monitoring ? { namespace: monitoring.prometheusNamespace, registry: registryMetrics !== undefined } : undefined,
      });
    }

    if (monitoring) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { ServerlessMonitoring: Monitoring } = require('./monitoring') as typeof import('./monitoring');
      this.monitoring = new Monitoring(this, 'Monitoring', {
        ...monitoring,
        namespace,
        controllerService: this.controller.metricsService,
        functionReconciler: this.controller.functionReconciler,
        builds,
        webhookService: this.webhook?.service,
        webhookTimeout: this.webhook?.timeout,
        registry: registryMetrics,
      });
    }

    if (props.exposure) {
      const exposureProblemList = exposureProblems(props.exposure);
      if (exposureProblemList.length) throw new Error(exposureProblemList.join('\n'));
      this.exposure = props.exposure;
      const gateway = props.exposure.gateway;
      if (gateway) this.exposureGateway = new ExposureGateway(this, 'ExposureGateway', { ...props.exposure, gateway });
    }
  }

  /**
   * The build pipeline of a release that builds images (1.11.1): its controller, the runtime
   * Dockerfiles and Function ServiceAccount it copies into namespaces, and the registry.
   */
  private buildPipeline(props: ServerlessStackProps, registry: Registry, maxBuilds: number, monitoring: boolean)
    : { controller: FunctionController; registryMetrics?: RegistryMetricsTarget } {
    const images = _buildImages(this.images);
    const controller = new FunctionController(this, 'Controller', {
      ...props.controller,
      namespace: this.systemNamespace,
      image: this.images.controller,
      buildExecutorImage: images.buildExecutor,
      repoFetcherImage: images.buildInit,
      priorityClassName: PRIORITY_CLASS_NAME,
      registrySecretName: registry.secretName,
      functionPresets: this.functionPresets,
      defaultFunctionPreset: this.defaultFunctionPreset,
      buildPresets: this.buildPresets,
      defaultBuildPreset: this.defaultBuildPreset,
      targetCpuUtilizationPercentage: this.targetCpuUtilizationPercentage,
      maxSimultaneousBuilds: maxBuilds,
      logLevel: props.logLevel ?? LogLevel.INFO,
      logFormat: props.logFormat ?? LogFormat.JSON,
    });

    new FunctionRuntimes(this, 'Runtimes', { images: images.runtimes, registrySecretName: registry.secretName });

    const registryMetrics = registry._bind(this, { namespace: this.systemNamespace, images, priorityClassName: PRIORITY_CLASS_NAME, monitoring });
    return { controller, registryMetrics };
  }

  /** The controller of a buildless release (1.13.0): nothing else runs Functions. */
  private buildlessController(props: ServerlessStackProps): BuildlessFunctionController {
    const functionInit = this.images.functionInit;
    if (!functionInit) throw new Error(`Release ${this.release} has no image that clones Git repositories into Function Pods`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { BuildlessFunctionController: Controller } = require('./buildless-controller') as typeof import('./buildless-controller');
    const controller = new Controller(this, 'Controller', {
      ...props.controller,
      namespace: this.systemNamespace,
      image: this.images.controller,
      functionInitImage: functionInit,
      runtimeImages: this.images.runtimes,
      priorityClassName: PRIORITY_CLASS_NAME,
      functionPresets: this.functionPresets,
      defaultFunctionPreset: this.defaultFunctionPreset,
      logLevel: props.logLevel ?? LogLevel.INFO,
      logFormat: props.logFormat ?? LogFormat.JSON,
    });
    // What build mode left behind when this stack replaces a 1.11.1 one: removed in the cluster,
    // so that Argo CD and Flux users, who never run our command line, end clean too.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { BuildModeCleanup } = require('./build-mode-cleanup') as typeof import('./build-mode-cleanup');
    new BuildModeCleanup(this, 'BuildModeCleanup', {
      namespace: this.systemNamespace, image: this.images.nodejs, controllerImage: this.images.controller, priorityClassName: PRIORITY_CLASS_NAME,
    });
    return controller;
  }
}
