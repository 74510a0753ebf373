/**
 * KymaFunction: one Function, declared as code.
 */
import { ApiObject, Chart, Lazy } from 'cdk8s';
import { EnvValue } from 'cdk8s-plus-27';
import { Construct, IConstruct } from 'constructs';
import {
  Function as FunctionResource,
  FunctionSpec,
  FunctionSpecEnv,
  FunctionSpecEnvValueFromResourceFieldRefDivisor,
  FunctionSpecResourceConfigurationBuildResourcesLimits,
  FunctionSpecResourceConfigurationBuildResourcesRequests,
  FunctionSpecResourceConfigurationFunctionResourcesLimits,
  FunctionSpecResourceConfigurationFunctionResourcesRequests,
  FunctionSpecRuntime,
  FunctionSpecSourceGitRepositoryAuthType,
  toJson_FunctionSpec,
} from '../../imports/serverless.kyma-project.io';
import {
  DEFAULT_RELEASE, FUNCTION_LABEL, FUNCTION_POD_LABEL, Violation, _rememberValidFunction, cpuMillis, parseQuantity, sizeBytes, validateFunction, withValueFromDefaults,
} from '../api';
import { FunctionNamespace } from '../namespace/function-namespace';
import { releaseOf } from '../stack/release-scope';
import { DECLARED_AS_METADATA, DECLARED_IN_METADATA } from './_declared';
import { ExposeOptions, FunctionEndpoint, IExposable } from './endpoint';
import { EndpointTarget } from './exposure';
import { FunctionScaledObject, KedaScaleOptions, usesPodResources } from './keda';
import { BuildResources, FunctionResources, ResourceConfiguration } from './resources';
import { FunctionRuntime } from './runtime';
import { FunctionSource, FunctionSourceConfig } from './source';
import { FunctionSubscription, SubscribeOptions } from './subscription';

/** The annotation that carries the SHA-256 of a source read from a folder, so that a code change shows in review. */
export const SOURCE_SHA256_ANNOTATION = 'cdk8s-kyma-serverless/source-sha256';

export { DECLARED_IN_METADATA };

/** A Secret mounted into the Function's container. */
export interface SecretMount {
  /** The Secret, in the Function's namespace. */
  readonly secretName: string;
  /** Where its keys appear as files; an absolute path other than `/tmp`. */
  readonly mountPath: string;
}

/** Bounds of the CPU-based autoscaler the controller creates for a Function. */
export interface FunctionScale {
  /** The fewest Pods; at least 1. */
  readonly minReplicas: number;
  /** The most Pods; at least `minReplicas`. When they are equal, no autoscaler is created. */
  readonly maxReplicas: number;
}

/** Props of {@link KymaFunction}. */
export interface KymaFunctionProps {
  /**
   * Name of the Function. The controller names the Function's Service after it, so it must be
   * a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter.
   *
   * @default - the construct id
   */
  readonly name?: string;

  /**
   * Namespace of the Function.
   *
   * @default - the namespace of the enclosing chart, such as a FunctionNamespace
   */
  readonly namespace?: string;

  /**
   * The runtime: language and version.
   *
   * @see https://kyma-project.io/#/serverless-manager/user/resources/06-10-function-cr
   */
  readonly runtime: FunctionRuntime;

  /** Where the code comes from. */
  readonly source: FunctionSource;

  /**
   * Environment variables of the Function's container, by name: plain values, or keys of
   * Secrets and ConfigMaps, or fields and resources of the Pod. Variables keep this order,
   * so a value can refer to an earlier one as `$(NAME)`.
   *
   * @default - none
   */
  readonly env?: { readonly [name: string]: EnvValue };

  /**
   * Secrets mounted as files into the Function's container.
   *
   * @default - none
   */
  readonly secretMounts?: SecretMount[];

  /**
   * Resources of the Function's Pods (`spec.resourceConfiguration.function`).
   *
   * @default - the stack's default Function preset
   */
  readonly resources?: FunctionResources;

  /**
   * Resources of the build Job (`spec.resourceConfiguration.build`).
   *
   * @default - the stack's default build preset
   */
  readonly buildResources?: BuildResources;

  /**
   * A fixed number of Pods. Cannot be used together with `scale` or `keda`; use 0 to stop the Function.
   *
   * @default 1
   */
  readonly replicas?: number;

  /**
   * Bounds of a CPU-based autoscaler (`spec.scaleConfig`): the Function Controller runs a
   * HorizontalPodAutoscaler between them. Cannot be used together with `replicas` or `keda`.
   *
   * @default - no autoscaler: `replicas` Pods
   */
  readonly scale?: FunctionScale;

  /**
   * Scaling by KEDA, down to zero Pods while no trigger is active: a KEDA `ScaledObject` that
   * scales the Function through its scale subresource, on Prometheus queries, a schedule, CPU or
   * any other scaler of KEDA. The cluster needs KEDA. Cannot be used together with `replicas` or
   * `scale` (KEDA refuses to scale a Function the controller's autoscaler scales).
   *
   * @default - no KEDA: `replicas` Pods, or the autoscaler of `scale`
   * @see https://keda.sh/docs/latest/reference/scaledobject-spec/
   */
  readonly keda?: KedaScaleOptions;

  /**
   * Labels added to the Function's Pods (`spec.labels`).
   *
   * @default - none
   */
  readonly labels?: { readonly [key: string]: string };

  /**
   * Annotations added to the Function's Pods (`spec.annotations`).
   *
   * @default - none
   */
  readonly annotations?: { readonly [key: string]: string };

  /**
   * A base image to build on instead of the runtime's default one.
   *
   * @default - the runtime's base image, from the stack's `dockerfile-<runtime>` ConfigMap
   */
  readonly runtimeImageOverride?: string;
}

type Json = Record<string, any>;

/**
 * Renders a cdk8s-plus EnvValue as an entry of `spec.env`, with the fields the controller's
 * comparison needs (`withValueFromDefaults`): without them it updates the Deployment for ever.
 */
function envVar(name: string, value: EnvValue): FunctionSpecEnv {
  const given = value.valueFrom as Json | undefined;
  if (!given) return { name, value: value.value as string | undefined };
  const keyRef = (ref: Json | undefined) => ref && { name: ref.name, key: ref.key, optional: ref.optional };
  const resourceRef = given.resourceFieldRef as Json | undefined;
  const from: Json = withValueFromDefaults({
    ...given,
    ...(resourceRef ? { resourceFieldRef: { ...resourceRef, divisor: resourceRef.divisor === undefined ? undefined : String(resourceRef.divisor.value) } } : {}),
  });
  return {
    name,
    valueFrom: {
      configMapKeyRef: keyRef(from.configMapKeyRef),
      secretKeyRef: keyRef(from.secretKeyRef),
      fieldRef: from.fieldRef && { fieldPath: from.fieldRef.fieldPath, apiVersion: from.fieldRef.apiVersion },
      resourceFieldRef: from.resourceFieldRef && {
        resource: from.resourceFieldRef.resource,
        containerName: from.resourceFieldRef.containerName,
        divisor: FunctionSpecEnvValueFromResourceFieldRefDivisor.fromString(from.resourceFieldRef.divisor),
      },
    },
  };
}

function quantities<T>(map: { readonly [resource: string]: string } | undefined, of: (q: string) => T): { [resource: string]: T } | undefined {
  return map && Object.fromEntries(Object.entries(map).map(([k, v]) => [k, of(v)]));
}

/**
 * Renders a resources choice as `resourceConfiguration.function` or `.build`; the two differ
 * only in the generated classes of their quantities.
 */
function resourceBlock<R, L>(config: ResourceConfiguration, request: (q: string) => R, limit: (q: string) => L) {
  return {
    profile: config.profile,
    resources: config.resources && {
      requests: quantities(config.resources.requests, request),
      limits: quantities(config.resources.limits, limit),
    },
  };
}

/** A plain copy of a map, or `undefined` when it is empty. */
function undefinedIfEmpty(value: { readonly [key: string]: string } | undefined): { [key: string]: string } | undefined {
  return value && Object.keys(value).length ? { ...value } : undefined;
}

/** The value at a field path such as `spec.env[0].name`. */
function valueAt(object: unknown, path: string): unknown {
  return path.split(/\.|\[(\d+)\]/).filter(Boolean)
    .reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Json)[key] : undefined), object);
}

function abbreviated(value: unknown): string {
  const json = JSON.stringify(value) ?? 'undefined';
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** The Functions of each app (by its root construct), by namespace and name: two of the same name in a namespace are an error. */
const FUNCTIONS_BY_NAME = new WeakMap<IConstruct, Map<string, KymaFunction[]>>();

/**
 * A Function (`serverless.kyma-project.io/v1alpha2`): a runtime and a source, which the
 * Function Controller builds into an image and runs behind a Service of the same name.
 *
 * Every rule of the Function API is checked at synth, so a Function that synthesizes is one the
 * cluster accepts and the controller builds. All problems of a Function are reported together,
 * each with the construct path, the prop, the value and how to fix it.
 *
 * @example
 * new KymaFunction(team, 'hello', {
 *   runtime: FunctionRuntime.NODEJS_22,
 *   source: FunctionSource.fromInline('exports.main = () => "hi"'),
 * });
 * @see https://kyma-project.io/#/serverless-manager/user/resources/06-10-function-cr
 */
export class KymaFunction extends Construct implements IExposable {
  /** Name of the Function, and of its Service. */
  public readonly name: string;
  /** Namespace of the Function, when it has one. */
  public readonly namespace?: string;
  /** The runtime. */
  public readonly runtime: FunctionRuntime;
  /** The number of Pods it starts with: `replicas`, or the minimum of its autoscaler (`scale`) or of KEDA (`keda`). */
  public readonly replicas: number;
  /** Bounds of the autoscaler, when it has one. */
  public readonly scale?: FunctionScale;
  /** The KEDA ScaledObject that scales it, when it has `keda`. */
  public readonly scaledObject?: FunctionScaledObject;
  /** The Function object. */
  public readonly apiObject: FunctionResource;

  private readonly env = new Map<string, EnvValue>();
  private readonly secretMounts: SecretMount[] = [];
  private readonly props: KymaFunctionProps;
  private readonly source?: FunctionSourceConfig;
  private readonly problems: string[] = [];
  private readonly endpoints: FunctionEndpoint[] = [];
  private readonly subscriptions: FunctionSubscription[] = [];
  private eventingAccess?: ApiObject;
  /** The spec last rendered, and the revision of the props it was rendered from. */
  private rendered?: { readonly revision: number; readonly spec: FunctionSpec };
  /** Bumped by everything that changes the spec after construction (`addEnv`, `addSecretMount`). */
  private revision = 0;

  constructor(scope: Construct, id: string, props: KymaFunctionProps) {
    super(scope, id);
    this.props = props;
    this.name = props.name ?? id;
    this.namespace = props.namespace ?? Chart.of(this).namespace;
    this.runtime = props.runtime;
    this.scale = props.scale;

    if (props.replicas !== undefined && props.scale) {
      this.problems.push(`'replicas' (${props.replicas}) and 'scale' (${abbreviated(props.scale)}) cannot be used together: `
        + 'give \'replicas\' for a fixed number of Pods, or \'scale\' for an autoscaler');
    }
    if (props.keda && props.scale) {
      this.problems.push(`'scale' (${abbreviated(props.scale)}) and 'keda' cannot be used together: with 'scale' the Function Controller runs an `
        + 'autoscaler of its own, and KEDA refuses to scale a Function another autoscaler scales; keep \'keda\' (KedaTrigger.cpu() scales on CPU too), or \'scale\'');
    }
    if (props.keda && props.replicas !== undefined) {
      this.problems.push(`'replicas' (${props.replicas}) and 'keda' cannot be used together: KEDA sets the Function's replicas, `
        + 'from \'keda.minReplicas\' to \'keda.maxReplicas\'; remove \'replicas\'');
    }
    if (this.namespace === undefined) {
      this.problems.push('\'namespace\' is not set, and the enclosing chart has no namespace: add the Function to a FunctionNamespace, or give \'namespace\'');
    }
    try {
      this.source = props.source.bind(props.runtime);
    } catch (e) {
      this.problems.push(`'source': ${(e as Error).message}`);
    }

    for (const [name, value] of Object.entries(props.env ?? {})) this.addEnv(name, value);
    for (const mount of props.secretMounts ?? []) this.addSecretMount(mount);

    this.apiObject = new FunctionResource(this, 'Resource', {
      metadata: {
        name: this.name,
        ...(props.namespace !== undefined ? { namespace: props.namespace } : {}),
        ...(this.source?.sha256 ? { annotations: { [SOURCE_SHA256_ANNOTATION]: this.source.sha256 } } : {}),
      },
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown as FunctionSpec,
    });
    if (props.keda) {
      this.scaledObject = new FunctionScaledObject(this, 'ScaledObject', {
        ...props.keda,
        functionName: this.name,
        namespace: this.namespace ?? '',
        labels: { [FUNCTION_LABEL]: this.name },
      });
      // Its problems name its options as props of the Function: 'keda.maxReplicas'.
      this.scaledObject.node.addMetadata(DECLARED_AS_METADATA, 'keda');
      this.problems.push(...this.podResourceProblems(props.keda));
    }
    this.replicas = props.replicas ?? props.scale?.minReplicas ?? this.scaledObject?.minReplicas ?? 1;
    if (this.namespace !== undefined) {
      const byName = FUNCTIONS_BY_NAME.get(this.node.root) ?? new Map<string, KymaFunction[]>();
      FUNCTIONS_BY_NAME.set(this.node.root, byName);
      const key = `${this.namespace}/${this.name}`;
      byName.set(key, [...byName.get(key) ?? [], this]);
    }
    this.node.addValidation({ validate: () => this.validateFunction() });
  }

  /**
   * Adds an environment variable to the Function's container.
   *
   * @param name the variable's name
   * @param value its value: plain, or from a Secret, ConfigMap, field or resource
   * @throws when the Function already has a variable of that name
   */
  public addEnv(name: string, value: EnvValue): void {
    if (this.env.has(name)) {
      throw new Error(`'env.${name}' is defined twice: give each variable once`);
    }
    this.env.set(name, value);
    this.revision++;
  }

  /**
   * Mounts a Secret as files into the Function's container.
   *
   * @param mount the Secret and where to mount it
   */
  public addSecretMount(mount: SecretMount): void {
    this.secretMounts.push({ secretName: mount.secretName, mountPath: mount.mountPath });
    this.revision++;
  }

  /**
   * Exposes the Function over HTTP outside the cluster: an APIRule, an Istio VirtualService or a
   * Gateway API HTTPRoute (`via`), for a host, paths and methods, with JWT or no authentication.
   * Problems of the options fail synth, each naming the option.
   *
   * @param options host, paths, auth (required: `EndpointAuth.jwt(...)` or an explicit
   * `EndpointAuth.none()`), CORS, timeout and `via` (default: the stack's `exposure.via`)
   * @returns the endpoint, with its `url`
   * @example
   * fn.expose({ host: 'orders', auth: EndpointAuth.jwt({ issuer: 'https://login.example.com', jwksUri: 'https://login.example.com/keys' }) });
   */
  public expose(options: ExposeOptions): FunctionEndpoint {
    const n = this.endpoints.length + 1;
    const endpoint = new FunctionEndpoint(this, n === 1 ? 'Endpoint' : `Endpoint${n}`, {
      ...options,
      target: this,
      name: n === 1 ? this.name : `${this.name}-${n}`,
    });
    this.endpoints.push(endpoint);
    this.admitEventing();
    return endpoint;
  }

  /**
   * Subscribes the Function to events of Kyma Eventing: a Subscription whose sink is the
   * Function's Service. Its source and event types are checked at synth with Kyma Eventing's
   * rules, each problem naming the option.
   *
   * @param options source, types, typeMatching and maxInFlightMessages
   * @returns the subscription
   * @example
   * fn.subscribe({ source: 'commerce', types: ['order.created.v1'] });
   */
  public subscribe(options: SubscribeOptions): FunctionSubscription {
    const n = this.subscriptions.length + 1;
    const subscription = new FunctionSubscription(this, n === 1 ? 'Subscription' : `Subscription${n}`, {
      ...options,
      functionName: this.name,
      namespace: this.namespace ?? '',
      name: n === 1 ? this.name : `${this.name}-${n}`,
      labels: { [FUNCTION_LABEL]: this.name },
    });
    this.subscriptions.push(subscription);
    this.admitEventing();
    return subscription;
  }

  /** @internal */
  public _endpointTarget(): Pick<EndpointTarget, 'namespace' | 'backends' | 'workloads' | 'labels'> {
    return {
      namespace: this.namespace ?? '',
      backends: [{ service: this.name, percent: 100 }],
      workloads: [this.name],
      labels: { [FUNCTION_LABEL]: this.name },
    };
  }

  /**
   * An endpoint through an APIRule, or with JWT, puts an ALLOW AuthorizationPolicy on the
   * Function's Pods, which then refuse every request the policy does not admit: also the
   * deliveries of Kyma Eventing. A subscribed Function with such an endpoint gets one more ALLOW
   * policy: POST requests to its in-cluster address, the Subscription's sink.
   */
  private admitEventing(): void {
    if (this.eventingAccess || !this.subscriptions.length || !this.endpoints.some(e => e.restrictsCallers)) return;
    const host = `${this.name}.${this.namespace}.svc.cluster.local`;
    this.eventingAccess = new ApiObject(this, 'EventingAccess', {
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: { name: `${this.name}-eventing`, labels: { [FUNCTION_LABEL]: this.name } },
      spec: {
        selector: { matchLabels: { [FUNCTION_POD_LABEL]: this.name, 'serverless.kyma-project.io/resource': 'deployment' } },
        action: 'ALLOW',
        rules: [{ to: [{ operation: { hosts: [host, `${host}:80`], methods: ['POST'] } }] }],
      },
    });
  }

  /**
   * The Function's `spec`.
   *
   * @internal
   */
  public _toKube(): FunctionSpec {
    // Rendered once per revision: synth validates the spec and then writes it.
    if (this.rendered?.revision !== this.revision) this.rendered = { revision: this.revision, spec: this.renderSpec() };
    return this.rendered.spec;
  }

  private renderSpec(): FunctionSpec {
    const props = this.props;
    const source = this.source ?? { inline: { source: '' } };
    const autoscaled = props.scale !== undefined && props.scale.minReplicas !== props.scale.maxReplicas;
    return {
      runtime: this.runtime.name as FunctionSpecRuntime,
      runtimeImageOverride: props.runtimeImageOverride,
      source: {
        inline: source.inline,
        gitRepository: source.gitRepository && {
          ...source.gitRepository,
          auth: source.gitRepository.auth && {
            type: source.gitRepository.auth.type as FunctionSpecSourceGitRepositoryAuthType,
            secretName: source.gitRepository.auth.secretName,
          },
        },
      },
      env: this.env.size ? [...this.env].map(([name, value]) => envVar(name, value)) : undefined,
      secretMounts: this.secretMounts.length ? this.secretMounts.map(m => ({ ...m })) : undefined,
      resourceConfiguration: props.resources || props.buildResources ? {
        function: props.resources && resourceBlock(props.resources.config,
          FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString, FunctionSpecResourceConfigurationFunctionResourcesLimits.fromString),
        build_: props.buildResources && resourceBlock(props.buildResources.config,
          FunctionSpecResourceConfigurationBuildResourcesRequests.fromString, FunctionSpecResourceConfigurationBuildResourcesLimits.fromString),
      } : undefined,
      // With an autoscaler, the autoscaler (the controller's HPA, or KEDA) owns `replicas` (through the scale subresource).
      replicas: autoscaled || props.keda ? undefined : this.replicas,
      scaleConfig: props.scale && { minReplicas: props.scale.minReplicas, maxReplicas: props.scale.maxReplicas },
      labels: undefinedIfEmpty(props.labels),
      annotations: undefinedIfEmpty(props.annotations),
    };
  }

  /** Every problem of the Function, as `'prop' (field): message; how to fix it`. */
  private validateFunction(): string[] {
    const problems = [...this.problems];
    const namesakes = (FUNCTIONS_BY_NAME.get(this.node.root)?.get(`${this.namespace}/${this.name}`) ?? []).filter(f => f !== this);
    if (namesakes.length) {
      problems.push(`'name' (${this.name}): ${namesakes.map(f => f.node.path).join(', ')} is a Function of the same name in namespace ${this.namespace}, `
        + 'and the cluster keeps one: give one of them another name (its construct id, or \'name\') or namespace');
    }
    // The Function as synth renders it, built without cdk8s's token resolution (the spec holds
    // no tokens): resolving every Function twice per synth costs seconds with thousands of them.
    // The rules read only the name and namespace of the metadata; toJson_FunctionSpec returns
    // fresh plain JSON. JSON patches added to the ApiObject are applied at synth only: GitOpsApp
    // checks the Function again when they change it.
    const object = {
      apiVersion: this.apiObject.apiVersion,
      kind: this.apiObject.kind,
      metadata: { name: this.name, namespace: this.namespace },
      spec: toJson_FunctionSpec(this._toKube()),
    };
    const release = releaseOf(this);
    const violations = validateFunction(object, { release });
    if (!violations.length && release === DEFAULT_RELEASE) _rememberValidFunction(object);
    for (const violation of violations) {
      // A source that could not be read renders a placeholder; its problem is already reported.
      if (!this.source && violation.path.startsWith('spec.source')) continue;
      problems.push(this.describe(violation, object));
    }
    problems.push(...this.limitRangeProblems());
    const declaredIn = this.node.metadata.find(m => m.type === DECLARED_IN_METADATA)?.data;
    return declaredIn ? problems.map(p => `${String(declaredIn)}: ${p}`) : problems;
  }

  private describe(violation: Violation, object: unknown): string {
    let message = violation.message;
    const generic = /^Invalid value: "(object|array)": /.exec(message);
    if (generic) message = `Invalid value: ${abbreviated(valueAt(object, violation.path))}: ${message.slice(generic[0].length)}`;
    const where = violation.path ? ` (${violation.path})` : '';
    return `'${this.propOf(violation.path)}'${where}: ${message}${violation.hint ? `; ${violation.hint}` : ''}`;
  }

  /** The prop a field of the Function comes from. */
  private propOf(path: string): string {
    if (path === 'spec.env') return 'env';
    const env = /^spec\.env\[(\d+)\]/.exec(path);
    if (env) return `env.${[...this.env.keys()][Number(env[1])]}`;
    const mount = /^spec\.secretMounts\[(\d+)\](\.\w+)?/.exec(path);
    if (mount) return `secretMounts[${mount[1]}]${mount[2] ?? ''}`;
    const scale = /^spec\.scaleConfig(\.\w+)?/.exec(path);
    if (scale) return `scale${scale[1] ?? ''}`;
    const prefixes: Array<[string, string]> = [
      ['metadata.name', 'name'],
      ['metadata.namespace', 'namespace'],
      ['spec.resourceConfiguration.function', 'resources'],
      ['spec.resourceConfiguration.build', 'buildResources'],
      ['spec.source', 'source'],
      ['spec.runtimeImageOverride', 'runtimeImageOverride'],
      ['spec.runtime', 'runtime'],
      ['spec.replicas', 'replicas'],
      ['spec.labels', 'labels'],
      ['spec.annotations', 'annotations'],
    ];
    return prefixes.find(([prefix]) => path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`))?.[1] ?? path;
  }

  /**
   * CPU and memory triggers of KEDA scale on the Pods' use as a share of their request: explicit
   * `resources` must request that resource (a limit alone is the request too), unless the
   * enclosing FunctionNamespace's LimitRange gives a default request. Presets request both.
   */
  private podResourceProblems(keda: KedaScaleOptions): string[] {
    const explicit = this.props.resources?.config.resources;
    const chart = Chart.of(this);
    const defaulted = FunctionNamespace.isFunctionNamespace(chart) && chart.name === this.namespace;
    if (!explicit || defaulted) return [];
    return (keda.triggers ?? []).flatMap((trigger, i) => {
      const resource = trigger.type;
      if (!usesPodResources(trigger) || explicit.requests?.[resource] !== undefined || explicit.limits?.[resource] !== undefined) return [];
      return [`'keda.triggers[${i}]' (${resource}): the Function's Pods request no ${resource} ('resources' sets none), and KEDA scales on their use `
        + `as a share of the request; give 'resources' a ${resource} request, use a preset, or add the Function to a FunctionNamespace (its LimitRange requests a default)`];
    });
  }

  /** Explicit resources above the maximum of the enclosing FunctionNamespace's LimitRange. */
  private limitRangeProblems(): string[] {
    const chart = Chart.of(this);
    if (!FunctionNamespace.isFunctionNamespace(chart) || chart.name !== this.namespace) return [];
    const max = chart.maxContainerResources;
    const problems: string[] = [];
    const blocks: Array<[string, ResourceConfiguration | undefined]> = [
      ['resources', this.props.resources?.config],
      ['buildResources', this.props.buildResources?.config],
    ];
    for (const [prop, config] of blocks) {
      for (const kind of ['requests', 'limits'] as const) {
        const map = config?.resources?.[kind] ?? {};
        const cpu = map.cpu === undefined ? undefined : parseQuantity(map.cpu);
        const memory = map.memory === undefined ? undefined : parseQuantity(map.memory);
        if (cpu !== undefined && Math.round(cpu * 1000) > cpuMillis(max.cpu)) {
          problems.push(`'${prop}' (${kind}.cpu ${map.cpu}): above ${max.cpu.amount}, the most the LimitRange of namespace ${chart.name} allows a container; lower it, or raise the stack's presets`);
        }
        if (memory !== undefined && memory > sizeBytes(max.memory)) {
          problems.push(`'${prop}' (${kind}.memory ${map.memory}): above ${max.memory.asString()}, the most the LimitRange of namespace ${chart.name} allows a container; lower it, or raise the stack's presets`);
        }
      }
    }
    return problems;
  }
}
