/**
 * ServerlessStack: the whole Kyma Serverless stack in one chart.
 */
import { ApiObject, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  BUILD_MIN_REQUEST, BuildProfile, DEFAULT_BUILD_PRESETS, DEFAULT_FUNCTION_PRESETS, DEFAULT_RELEASE, FUNCTION_CRD_NAME, FUNCTION_MIN_REQUEST,
  FunctionProfile, RELEASE_ANNOTATION, ResourcePreset, ServerlessRelease, functionCrdSpec, isDns1123Label, presetProblems,
} from '../api';
import { ReplacementOptIn } from '../policy/replacement';
import { clusterScoped, requireInteger } from './_util';
import { FunctionController, FunctionControllerOptions, LogFormat, LogLevel } from './controller';
import { ExposureGateway, StackExposureOptions, exposureProblems } from './exposure';
import { ResolvedImages, ServerlessImages, resolveImages } from './images';
import { MonitoringOptions, ServerlessMonitoring } from './monitoring';
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

// The annotation on the Function CRD that names the stack's release lives in src/api, which the
// command line's checks (src/policy) read too; exported here as well, where it was first.
export { RELEASE_ANNOTATION } from '../api';

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
   * The upstream release whose images the stack uses. Its configuration and objects are
   * those of 1.11.1; other versions are at your own risk.
   *
   * @default '1.11.1'
   */
  readonly version?: string;

  /**
   * Images to use instead of upstream's.
   *
   * @default - upstream's images of `version`
   */
  readonly images?: ServerlessImages;

  /**
   * Controller settings: replicas, resources, endpoints, build arguments.
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
  readonly functionPresets?: { readonly [P in FunctionProfile]?: ResourcePreset };

  /**
   * The preset of Functions that name neither a preset nor resources.
   *
   * @default FunctionProfile.L
   */
  readonly defaultFunctionPreset?: FunctionProfile;

  /**
   * Values of the build Job presets. Given presets replace upstream's of the same name.
   *
   * @default - upstream's local-dev, slow, normal and fast
   */
  readonly buildPresets?: { readonly [P in BuildProfile]?: ResourcePreset };

  /**
   * The build preset of Functions that name neither a build preset nor build resources.
   *
   * @default BuildProfile.NORMAL
   */
  readonly defaultBuildPreset?: BuildProfile;

  /**
   * CPU utilisation the HorizontalPodAutoscalers of scaled Functions aim at, in percent.
   *
   * @default 50
   */
  readonly targetCpuUtilizationPercentage?: number;

  /**
   * How many build Jobs may run at once in the whole cluster; more wait.
   *
   * @default 5
   */
  readonly maxSimultaneousBuilds?: number;

  /**
   * Where Function images are pushed and pulled.
   *
   * @default Registry.internal()
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
 * The Kyma Serverless stack, wire-compatible with upstream release 1.11.1: the Function CRD,
 * the Function Controller with its RBAC and configuration, the runtime Dockerfiles, the Docker
 * registry (internal by default), our admission webhook and NetworkPolicies, in their own namespace;
 * with `monitoring`, also what the Prometheus Operator needs to watch it, and a Grafana dashboard.
 *
 * @example
 * new ServerlessStack(app, 'serverless');
 */
export class ServerlessStack extends Chart {
  /** The upstream release the stack deploys. */
  public readonly release: ServerlessRelease;
  /** The namespace the stack runs in. */
  public readonly namespace: string;
  /** The upstream release the stack deploys. */
  public readonly version: string;
  /** Every image the stack uses. */
  public readonly images: ResolvedImages;
  /** Function presets, upstream's merged with the given ones. */
  public readonly functionPresets: { readonly [P in FunctionProfile]: ResourcePreset };
  /** The default Function preset. */
  public readonly defaultFunctionPreset: FunctionProfile;
  /** Build presets, upstream's merged with the given ones. */
  public readonly buildPresets: { readonly [P in BuildProfile]: ResourcePreset };
  /** The default build preset. */
  public readonly defaultBuildPreset: BuildProfile;
  /** Where Function images go. */
  public readonly registry: Registry;
  /** The Function CRD. */
  public readonly crd: ApiObject;
  /** The controller. */
  public readonly controller: FunctionController;
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
    const targetCpu = props.targetCpuUtilizationPercentage ?? 50;
    requireInteger('targetCpuUtilizationPercentage', targetCpu, 1, 100);
    const maxBuilds = props.maxSimultaneousBuilds ?? 5;
    requireInteger('maxSimultaneousBuilds', maxBuilds, 1);
    requireInteger('controller.replicas', props.controller?.replicas ?? 1, 1);

    this.release = release;
    _markRelease(this, this.release, true);
    this.namespace = namespace;
    this.version = version;
    this.images = resolveImages(version, props.images);
    this.functionPresets = { ...DEFAULT_FUNCTION_PRESETS, ...props.functionPresets };
    this.defaultFunctionPreset = props.defaultFunctionPreset ?? FunctionProfile.L;
    this.buildPresets = { ...DEFAULT_BUILD_PRESETS, ...props.buildPresets };
    this.defaultBuildPreset = props.defaultBuildPreset ?? BuildProfile.NORMAL;
    this.registry = props.registry ?? Registry.internal();
    const problems = [
      ...Object.entries(this.functionPresets).flatMap(([name, p]) => presetProblems(`functionPresets.${name}`, p, FUNCTION_MIN_REQUEST)),
      ...Object.entries(this.buildPresets).flatMap(([name, p]) => presetProblems(`buildPresets.${name}`, p, BUILD_MIN_REQUEST)),
    ];
    if (problems.length) throw new Error(problems.join('\n'));

    clusterScoped(new k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name: namespace,
        labels: {
          // The registry's storage-ownership init container needs root with CHOWN (baseline);
          // everything else is restricted, which warn and audit report on.
          'pod-security.kubernetes.io/enforce': 'baseline',
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
      spec: functionCrdSpec(),
    }));

    clusterScoped(new k8s.KubePriorityClass(this, 'PriorityClass', {
      metadata: { name: PRIORITY_CLASS_NAME, labels: { 'app.kubernetes.io/name': 'serverless' } },
      value: PRIORITY_CLASS_VALUE,
      globalDefault: false,
      description: 'Scheduling priority of Serverless components: they must not wait behind unschedulable user workloads.',
    }));

    this.controller = new FunctionController(this, 'Controller', {
      ...props.controller,
      namespace,
      image: this.images.controller,
      buildExecutorImage: this.images.buildExecutor,
      repoFetcherImage: this.images.buildInit,
      priorityClassName: PRIORITY_CLASS_NAME,
      registrySecretName: this.registry.secretName,
      functionPresets: this.functionPresets,
      defaultFunctionPreset: this.defaultFunctionPreset,
      buildPresets: this.buildPresets,
      defaultBuildPreset: this.defaultBuildPreset,
      targetCpuUtilizationPercentage: targetCpu,
      maxSimultaneousBuilds: maxBuilds,
      logLevel: props.logLevel ?? LogLevel.INFO,
      logFormat: props.logFormat ?? LogFormat.JSON,
    });

    new FunctionRuntimes(this, 'Runtimes', { images: this.images.runtimes, registrySecretName: this.registry.secretName });

    const monitoring = props.monitoring && (props.monitoring.enabled ?? true) ? props.monitoring : undefined;
    const registryMetrics = this.registry._bind(this, {
      namespace, images: this.images, priorityClassName: PRIORITY_CLASS_NAME, monitoring: monitoring !== undefined,
    });

    if (props.webhook?.enabled ?? true) {
      this.webhook = new AdmissionWebhook(this, 'Webhook', {
        ...props.webhook,
        namespace,
        image: this.images.webhook,
        nodeImage: this.images.nodejs,
        priorityClassName: PRIORITY_CLASS_NAME,
        defaults: { replicas: 1, functionProfile: this.defaultFunctionPreset, buildProfile: this.defaultBuildPreset },
        logLevel: props.logLevel ?? LogLevel.INFO,
      });
    }

    if (props.networkPolicies ?? true) {
      new ServerlessNetworkPolicies(this, 'NetworkPolicies', {
        webhook: this.webhook !== undefined,
        prometheus: monitoring ? { namespace: monitoring.prometheusNamespace, registry: registryMetrics !== undefined } : undefined,
      });
    }

    if (monitoring) {
      this.monitoring = new ServerlessMonitoring(this, 'Monitoring', {
        ...monitoring,
        namespace,
        controllerService: this.controller.metricsService,
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
}
