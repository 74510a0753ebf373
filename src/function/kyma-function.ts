/**
 * KymaFunction: one Function, declared as code.
 */
import * as path from 'node:path';
import { ApiObject, Chart, JsonPatch, Lazy } from 'cdk8s';
import { EnvValue, k8s } from 'cdk8s-plus-27';
import { Construct, IConstruct } from 'constructs';
import {
  Function as FunctionResource,
  FunctionProps,
  FunctionSpec,
  FunctionSpecEnv,
  FunctionSpecEnvValueFromResourceFieldRefDivisor,
  FunctionSpecResourceConfigurationBuildResourcesLimits,
  FunctionSpecResourceConfigurationBuildResourcesRequests,
  FunctionSpecResourceConfigurationFunctionResourcesLimits,
  FunctionSpecResourceConfigurationFunctionResourcesRequests,
  FunctionSpecRuntime,
  FunctionSpecSourceGitRepositoryAuthType,
  toJson_FunctionProps,
  toJson_FunctionSpec,
} from '../../imports/serverless.kyma-project.io';
import { _work } from '../api/_work';
import { withValueFromDefaults } from '../api/controller-fixed-point';
import { validateFunction } from '../api/function-rules';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api/function-schema';
import { FUNCTION_LABEL, FUNCTION_POD_LABEL, OBJECT_KINDS_ANNOTATION, groupKindOf, objectKindsValue } from '../api/labels';
import {
  ACCEPT_WARNINGS_ANNOTATION, HandlerWarning, _parsePythonHandlers, _preparePythonParser, describeHandlerProblem, handlerCodeProblems, isAccepted,
} from '../api/handler-code';
import { cpuMillis, parseQuantity, sizeBytes } from '../api/quantity';
import { ServerlessRelease, releaseFacts } from '../api/release';
import { RuntimeFamily, runtimeFamily } from '../api/runtimes';
import { Violation } from '../api/validator';
import { EndpointTarget } from '../exposure/exposure';
import { FunctionNamespace, PodSecurityLevel } from '../namespace/function-namespace';
import { PolicyRuleId, checkPolicies } from '../policy/policy';
import { _onStackRelease, releaseOf } from '../stack/release-scope';
import { DECLARED_AS_METADATA, DECLARED_FOLDER_METADATA, DECLARED_IN_METADATA } from './_declared';
import { UNRESOLVED, holdsNoToken, inResolvedForm, metadataJson, resolvedJson, resolvesAsBuiltIn } from './_resolved-json';
import type { ExposeOptions, FunctionEndpoint, IExposable } from './endpoint';
import type { FunctionScaledObject, KedaScaleOptions } from './keda';
import { BuildResources, FunctionResources, ResourceConfiguration } from './resources';
import { FunctionRuntime } from './runtime';
import { FunctionSource, FunctionSourceConfig } from './source';
import type { FunctionSubscription, SubscribeOptions } from './subscription';
import { _renderedAsValidated, rememberValidFunction } from './_valid-at-synth';

/*
 * The modules of what a Function may have beside its object, required when a Function first has
 * one: most have none, and these modules load the rules of APIRules, Subscriptions and KEDA.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const endpointModule = () => require('./endpoint') as typeof import('./endpoint');
const kedaModule = () => require('./keda') as typeof import('./keda');
const subscriptionModule = () => require('./subscription') as typeof import('./subscription');
/* eslint-enable @typescript-eslint/no-require-imports */

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

/**
 * Bounds of the CPU-based autoscaler of a Function: under release 1.11.1 the Function Controller
 * creates it from `spec.scaleConfig`; under 1.13.0, whose controller creates none, the
 * KymaFunction writes it beside the Function.
 */
export interface FunctionScale {
  /** The fewest Pods; at least 1. */
  readonly minReplicas: number;
  /** The most Pods; at least `minReplicas`. When they are equal, no autoscaler is created: `minReplicas` Pods run. */
  readonly maxReplicas: number;
}

/** The CPU utilisation a Function's autoscaler aims at when no stack gives one, in percent (the stack's default). */
export const DEFAULT_TARGET_CPU_UTILIZATION_PERCENTAGE = 50;

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
   * Resources of the build Job (`spec.resourceConfiguration.build`). Release 1.11.1 only: release
   * 1.13.0 builds no image, and synth fails for a Function that gives them under it.
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
   * Bounds of a CPU-based autoscaler. Cannot be used together with `replicas` or `keda`.
   *
   * Under release 1.11.1 the Function gets `spec.scaleConfig` and the Function Controller runs a
   * HorizontalPodAutoscaler between the bounds. Release 1.13.0's controller creates none (it
   * ignores `scaleConfig`), so under it the KymaFunction writes an `autoscaling/v2`
   * HorizontalPodAutoscaler itself, named after the Function, on the Function's scale
   * subresource, aiming at the stack's `targetCpuUtilizationPercentage`; the Function then has no
   * `scaleConfig` and no `replicas` (the autoscaler sets them). The utilisation is a share of the
   * Pods' CPU request: presets request CPU, explicit `resources` must too. When the bounds are
   * equal, `minReplicas` Pods run and there is no autoscaler, under either release.
   *
   * @default - no autoscaler: `replicas` Pods
   * @see https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
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
   * An image instead of the runtime's default one: under release 1.11.1 the base image the build
   * starts from, under 1.13.0 the image the Function's Pods run (it must keep the runtime's
   * contract: install the dependencies and serve the handler).
   *
   * @default - the runtime's image of the stack's release
   */
  readonly runtimeImageOverride?: string;

  /**
   * Warnings about the handler code that the Function accepts, so that synth does not fail for
   * them: `undeclaredImport` (`HandlerWarning.UNDECLARED_IMPORT`) for every module the handler
   * imports that its dependencies file does not declare and the runtime image does not provide,
   * or `undeclaredImport:<module>` for one (accept it when a declared package brings the module along).
   * Written into the Function's annotation `cdk8s-kyma-serverless/accept-warnings`, which
   * `kyma-serverless validate` reads.
   *
   * @default - none: every warning fails synth
   */
  readonly acceptWarnings?: string[];

  /**
   * The security context of the Function's container (`spec.containerSecurityContext`), release
   * 1.13.0 only: synth fails for it under 1.11.1, whose controller sets the container's context itself.
   *
   * The controller merges it field by field into its own: `privileged: false`,
   * `allowPrivilegeEscalation: false`, `readOnlyRootFilesystem: true`, `runAsNonRoot: true` and
   * `capabilities: { drop: ['ALL'] }`; a field given here replaces that field (so `capabilities`
   * replaces the whole `drop: ['ALL']`). In a FunctionNamespace, which enforces Pod Security
   * `restricted` under 1.13.0, synth fails for a context that `restricted` refuses.
   *
   * @default - the controller's context above
   * @see https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
   */
  readonly containerSecurityContext?: k8s.SecurityContext;

  /**
   * The security context of the Function's Pods (`spec.podSecurityContext`), release 1.13.0 only:
   * synth fails for it under 1.11.1.
   *
   * The controller merges it field by field into its own: `runAsUser: 1000`, `runAsGroup: 1000`,
   * `fsGroup: 1000`, `supplementalGroups: [1000]` and `seccompProfile: { type: 'RuntimeDefault' }`;
   * a field given here replaces that field. In a FunctionNamespace, which enforces Pod Security
   * `restricted` under 1.13.0, synth fails for a context that `restricted` refuses.
   *
   * @default - the controller's context above
   * @see https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
   */
  readonly podSecurityContext?: k8s.PodSecurityContext;
}

type Json = Record<string, any>;

/** The spec's JSON that a Function's object writes, and whether validation checked that very object. */
interface PlainSpec {
  readonly json: Json;
  readonly validated: boolean;
}

/** The union classes of a Function's spec: its quantities, whose instances hold their `value` alone. */
const QUANTITY_CLASSES: ReadonlySet<object> = new Set([
  FunctionSpecEnvValueFromResourceFieldRefDivisor,
  FunctionSpecResourceConfigurationBuildResourcesLimits, FunctionSpecResourceConfigurationBuildResourcesRequests,
  FunctionSpecResourceConfigurationFunctionResourcesLimits, FunctionSpecResourceConfigurationFunctionResourcesRequests,
].map(union => union.prototype));

/** A Function's spec as rendered for a revision of its props and a release, and its JSON once built. */
interface RenderedSpec {
  readonly revision: number;
  readonly release: ServerlessRelease;
  readonly spec: FunctionSpec;
  /** `toJson_FunctionSpec` of the spec, with the release's fields the generated class does not know. */
  json?: Json;
  /** Whether the spec holds no token and its JSON is what the object renders of it (see `plainSpecJson`). */
  plain?: boolean;
  /** Whether validation checked the JSON. */
  checked?: boolean;
  /** Whether the JSON was handed to the object's render, which gives it away: the next one is built anew. */
  handedOut: boolean;
}

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

/** The entries of `spec.env`, in the order of the variables. */
function envVars(env: ReadonlyMap<string, EnvValue>): FunctionSpecEnv[] {
  const vars: FunctionSpecEnv[] = [];
  env.forEach((value, name) => vars.push(envVar(name, value)));
  return vars;
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

/**
 * Whether a release's Function CRD has `spec.containerSecurityContext` and `spec.podSecurityContext`:
 * the buildless releases, whose controller merges them into its own defaults.
 */
function hasSecurityContexts(release: ServerlessRelease): boolean {
  return !releaseFacts(release).buildsImages;
}

/** The container security context release 1.13.0's controller starts from (`containerSecurityContext()` in its deployment.go). */
const CONTROLLER_CONTAINER_CONTEXT: Json = {
  privileged: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true,
};
/** The Pod security context release 1.13.0's controller starts from (`podSecurityContext()` in its deployment.go). */
const CONTROLLER_POD_CONTEXT: Json = {
  runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, supplementalGroups: [1000], seccompProfile: { type: 'RuntimeDefault' },
};

/**
 * What Pod Security `restricted` refuses in the Pod the controller runs for given security
 * contexts, which it merges field by field into its own. Checked by the policy check of
 * `kyma-serverless validate` on that Pod; each violation named by the prop and field it comes from.
 */
function restrictedViolations(container: Json | undefined, pod: Json | undefined): Array<{ prop: string; field: string; message: string }> {
  const containerContext = { ...CONTROLLER_CONTAINER_CONTEXT, ...container };
  const podContext = { ...CONTROLLER_POD_CONTEXT, ...pod };
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'function' },
    spec: { securityContext: podContext, containers: [{ name: 'function', securityContext: containerContext }] },
  };
  const containerPath = 'spec.containers[0].securityContext.';
  return checkPolicies([object])
    .filter(v => v.rule === PolicyRuleId.PSS_RESTRICTED || v.rule === PolicyRuleId.NO_PRIVILEGED || v.rule === PolicyRuleId.NO_HOST_NAMESPACES)
    .filter(v => v.path.startsWith(containerPath) || v.path.startsWith('spec.securityContext.'))
    .map(v => {
      const field = v.path.startsWith(containerPath) ? v.path.slice(containerPath.length) : v.path.slice('spec.securityContext.'.length);
      const key = field.split('.')[0];
      // A field of the container's context comes from the Pod's when the container gives none (runAsNonRoot, seccompProfile).
      const prop = v.path.startsWith(containerPath) && (container?.[key] !== undefined || pod?.[key] === undefined)
        ? 'containerSecurityContext' : 'podSecurityContext';
      return { prop, field, message: v.message.replace(/^container function: /, '') };
    });
}

/** The construct id of the HorizontalPodAutoscaler a Function with `scale` gets under a release whose controller creates none. */
const AUTOSCALER_ID = 'Autoscaler';

/**
 * The Function object: what the class generated from the 1.11.1 CRD (`imports/`) is and renders,
 * its kind, its props and its `toJson` (cdk8s's, then `toJson_FunctionProps`), without that
 * class's constructor, which copies the props into new objects (a Function is made thousands of
 * times). That CRD has no security contexts; they are added to its JSON here (in key order, as
 * every other field).
 */
class FunctionObject extends ApiObject {
  /** Whether JSON patches were added: cdk8s applies them in its own toJson. */
  private patched = false;

  constructor(scope: Construct, id: string, private readonly given: FunctionProps, private readonly extraSpec: () => Json,
    private readonly objectKinds: () => string | undefined, private readonly plainSpec: () => PlainSpec | undefined) {
    // The props the generated class gives cdk8s's ApiObject: `{ ...Function.GVK, ...props }`.
    super(scope, id, { apiVersion: FunctionResource.GVK.apiVersion, kind: FunctionResource.GVK.kind, metadata: given.metadata, spec: given.spec });
  }

  public override addJsonPatch(...ops: JsonPatch[]): void {
    this.patched = true;
    super.addJsonPatch(...ops);
  }

  public override toJson(): any {
    const plain = this.plainJson();
    if (plain !== undefined) return plain;
    const json = this.builtInJson() ?? this.generatedJson();
    // The same keys in the same order as `{ ...json, metadata, spec }`: the rendered object has both (spec is never undefined).
    return json.metadata !== undefined && json.spec !== undefined && Object.keys(json).length === 4
      ? {
        apiVersion: json.apiVersion,
        kind: json.kind,
        metadata: withObjectKinds(json.metadata, this.objectKinds()),
        spec: withExtraSpec(json.spec, this.extraSpec()),
      }
      : { ...json, metadata: withObjectKinds(json.metadata, this.objectKinds()), spec: withExtraSpec(json.spec, this.extraSpec()) };
  }

  /**
   * What {@link toJson} returns, without resolving the spec when it holds no token: its JSON, as
   * the KymaFunction built it for validation (`undefined` otherwise).
   */
  private plainJson(): any {
    if (this.patched || !resolvesAsBuiltIn(this)) return undefined;
    const metadata = metadataJson(this.metadata);
    if (metadata === UNRESOLVED || metadata === undefined) return undefined;
    const spec = this.plainSpec();
    if (spec === undefined) return undefined;
    const { apiVersion, kind } = FunctionResource.GVK;
    const json = { apiVersion, kind, metadata: withObjectKinds(metadata, this.objectKinds()), spec: spec.json };
    if (spec.validated) _renderedAsValidated(json, this);
    return json;
  }

  /** What the generated class's toJson returns: cdk8s's ApiObject.toJson, then toJson_FunctionProps. */
  private generatedJson(): any {
    _work.functionJsons++;
    return { ...FunctionResource.GVK, ...toJson_FunctionProps(super.toJson()) };
  }

  /**
   * What {@link generatedJson} returns, without cdk8s's generic resolution of the spec, whose
   * tokens are known: `undefined` when cdk8s must resolve it (a resolver of the app's own, a JSON
   * patch, a token in the props).
   */
  private builtInJson(): any {
    if (this.patched || !resolvesAsBuiltIn(this)) return undefined;
    // The data cdk8s resolves: the props the generated class was given, with the metadata rendered
    // (without cdk8s's walk when it holds what resolvedJson knows: most of a Function's render).
    const metadata = metadataJson(this.metadata);
    if (metadata === UNRESOLVED) {
      const data = resolvedJson({ apiVersion: this.apiVersion, kind: this.kind, metadata: this.metadata.toJson(), spec: this.given.spec });
      if (data === UNRESOLVED) return undefined;
      _work.functionJsons++;
      return { ...FunctionResource.GVK, ...toJson_FunctionProps(data as FunctionProps) };
    }
    const spec = resolvedJson(this.given.spec);
    if (spec === UNRESOLVED) return undefined;
    _work.functionJsons++;
    // toJson_FunctionProps({ metadata, spec }), which drops either when undefined.
    const json: Json = { apiVersion: FunctionResource.GVK.apiVersion, kind: FunctionResource.GVK.kind };
    if (metadata !== undefined) json.metadata = metadata;
    const specJson = toJson_FunctionSpec(spec as FunctionSpec);
    if (specJson !== undefined) json.spec = specJson;
    return json;
  }
}

/** A Function's metadata with {@link OBJECT_KINDS_ANNOTATION}, when it has such objects, among its annotations in key order. */
function withObjectKinds(metadata: any, kinds: string | undefined): any {
  if (kinds === undefined) return metadata;
  const annotations = Object.fromEntries(Object.entries({ ...metadata.annotations, [OBJECT_KINDS_ANNOTATION]: kinds })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return Object.fromEntries(Object.entries({ ...metadata, annotations }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A Function's spec as JSON with fields the generated class does not know, keys sorted as cdk8s sorts them. */
function withExtraSpec(spec: Json, extra: Json): Json {
  const given = Object.entries(extra).filter(([, value]) => value !== undefined);
  if (!given.length) return spec;
  return Object.fromEntries([...Object.entries(spec), ...given].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The Functions of each app (by its root construct), by namespace and name: two of the same name in a namespace are an error. */
const FUNCTIONS_BY_NAME = new WeakMap<IConstruct, Map<string, Map<string, KymaFunction[]>>>();

/**
 * The inline Python handlers of each app's Functions (by its root construct), in construction order,
 * and how many of them were parsed: the first check of a handler parses all of them not parsed
 * yet, in one round trip to the parser.
 */
const HANDLERS_OF_APP = new WeakMap<IConstruct, { readonly handlers: { readonly runtime: string; readonly source: string }[]; parsed: number }>();

/**
 * A Function (`serverless.kyma-project.io/v1alpha2`): a runtime and a source, which the
 * Function Controller runs behind a Service of the same name: under release 1.11.1 from an image
 * it builds, under 1.13.0 on the runtime's image, which installs the dependencies at Pod start.
 *
 * The Function is checked and rendered for the release of its stack (its FunctionNamespace's,
 * see `releaseOf`): every rule of that release's Function API is checked at synth, so a Function
 * that synthesizes is one the cluster accepts and the controller runs. All problems of a Function
 * are reported together, each with the construct path, the prop, the value and how to fix it.
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
  /** The Function object (`serverless.kyma-project.io/v1alpha2` `Function`). */
  public readonly apiObject: ApiObject;

  private readonly env = new Map<string, EnvValue>();
  private readonly secretMounts: SecretMount[] = [];
  private readonly props: KymaFunctionProps;
  private readonly source?: FunctionSourceConfig;
  private readonly problems: string[] = [];
  private readonly endpoints: FunctionEndpoint[] = [];
  private readonly subscriptions: FunctionSubscription[] = [];
  private eventingAccess?: ApiObject;
  /** The app's Functions of this name in this namespace, this one among them (the list FUNCTIONS_BY_NAME holds). */
  private sameNamed: readonly KymaFunction[] = [];
  /** The spec last rendered, the revision of the props and the release it was rendered from, and its JSON. */
  private rendered?: RenderedSpec;
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
      this.problems.push(`'scale' (${abbreviated(props.scale)}) and 'keda' cannot be used together: with 'scale' the Function gets an `
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
    const chart = Chart.of(this);
    if (this.source?.gitRepository && FunctionNamespace.isFunctionNamespace(chart) && chart.name === this.namespace) chart._addGitFunction();

    const env = props.env;
    if (env) for (const name of Object.keys(env)) this.addEnv(name, env[name]);
    for (const mount of props.secretMounts ?? []) this.addSecretMount(mount);

    this.apiObject = new FunctionObject(this, 'Resource', {
      metadata: {
        name: this.name,
        ...(props.namespace !== undefined ? { namespace: props.namespace } : {}),
        ...(this.source?.sha256 || props.acceptWarnings?.length ? {
          annotations: {
            ...(this.source?.sha256 ? { [SOURCE_SHA256_ANNOTATION]: this.source.sha256 } : {}),
            ...(props.acceptWarnings?.length ? { [ACCEPT_WARNINGS_ANNOTATION]: [...props.acceptWarnings].sort().join(',') } : {}),
          },
        } : {}),
      },
      spec: Lazy.any({ produce: () => this._toKube() }) as unknown as FunctionSpec,
    }, () => this.extraSpecJson(releaseOf(this)), () => this.objectKinds(), () => this.plainSpecJson());
    if (props.keda) {
      this.scaledObject = new (kedaModule().FunctionScaledObject)(this, 'ScaledObject', {
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
    // The tree is decided before synth: here, and again whenever a stack created later changes the release of the app's Functions.
    this.syncAutoscaler(releaseOf(this));
    if (props.scale && props.scale.minReplicas !== props.scale.maxReplicas) _onStackRelease(this, () => this.syncAutoscaler(releaseOf(this)));
    const inline = this.source?.inline;
    if (inline && runtimeFamily(this.runtime.name) === RuntimeFamily.PYTHON) {
      const root = this.node.root;
      let app = HANDLERS_OF_APP.get(root);
      if (!app) HANDLERS_OF_APP.set(root, app = { handlers: [], parsed: 0 });
      app.handlers.push({ runtime: this.runtime.name, source: inline.source });
      _preparePythonParser([inline.source]);
    }
    if (this.namespace !== undefined) {
      const root = this.node.root;
      let byNamespace = FUNCTIONS_BY_NAME.get(root);
      if (!byNamespace) FUNCTIONS_BY_NAME.set(root, byNamespace = new Map());
      let byName = byNamespace.get(this.namespace);
      if (!byName) byNamespace.set(this.namespace, byName = new Map());
      const namesakes = byName.get(this.name);
      if (namesakes) namesakes.push(this);
      else byName.set(this.name, [this]);
      this.sameNamed = byName.get(this.name)!;
    }
    this.node.addValidation({ validate: () => this.validateFunction() });
  }

  /**
   * The HorizontalPodAutoscaler the KymaFunction writes for `scale` under a release whose
   * controller creates none (1.13.0); `undefined` otherwise.
   */
  public get autoscaler(): ApiObject | undefined {
    return this.node.tryFindChild(AUTOSCALER_ID) as ApiObject | undefined;
  }

  /**
   * The CPU utilisation the autoscaler of `scale` aims at, in percent: that of the stack of the
   * enclosing FunctionNamespace, or {@link DEFAULT_TARGET_CPU_UTILIZATION_PERCENTAGE} without one.
   */
  public get targetCpuUtilizationPercentage(): number {
    const chart = Chart.of(this);
    const stack = FunctionNamespace.isFunctionNamespace(chart) ? chart.stack : undefined;
    return stack?.targetCpuUtilizationPercentage ?? DEFAULT_TARGET_CPU_UTILIZATION_PERCENTAGE;
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
    const endpoint = new (endpointModule().FunctionEndpoint)(this, n === 1 ? 'Endpoint' : `Endpoint${n}`, {
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
    const subscription = new (subscriptionModule().FunctionSubscription)(this, n === 1 ? 'Subscription' : `Subscription${n}`, {
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
    return this.renderedFor(releaseOf(this)).spec;
  }

  /** The spec rendered for a release: once per revision, since synth validates the spec and then writes it. */
  private renderedFor(release: ServerlessRelease): RenderedSpec {
    if (this.rendered?.revision !== this.revision || this.rendered.release !== release) {
      this.rendered = { revision: this.revision, release, spec: this.renderSpec(release), handedOut: false };
    }
    return this.rendered;
  }

  /**
   * The spec as JSON, with the fields of the release the generated class does not know: what
   * validation checks (`toJson_FunctionSpec` of the spec), built once per revision and release
   * and then shared with the Function's object (see {@link plainSpecJson}).
   */
  private specJson(release: ServerlessRelease): Json {
    const rendered = this.renderedFor(release);
    if (rendered.json === undefined || rendered.handedOut) {
      _work.functionJsons++;
      const json = toJson_FunctionSpec(rendered.spec)!;
      // What the object renders, resolving the spec with cdk8s's built-in resolvers and sorting its keys
      // (toJson_FunctionSpec of resolvedJson of the spec), is this JSON when the spec holds no token and
      // the JSON is already in that form: `toJson_FunctionSpec` builds its fields in sorted order, and
      // copies maps (labels, quantities) in theirs.
      rendered.plain = holdsNoToken(rendered.spec, QUANTITY_CLASSES) && inResolvedForm(json);
      rendered.json = withExtraSpec(json, this.extraSpecJson(release));
      rendered.checked = false;
      rendered.handedOut = false;
    }
    return rendered.json;
  }

  /**
   * The spec of the Function's object, when {@link specJson} is what the object renders of it: that
   * JSON, the very object validation checked when it did, handed over once (a later render builds
   * it again). `undefined` when the object must resolve its spec, or its chart renders objects
   * itself (and may change them after).
   */
  private plainSpecJson(): PlainSpec | undefined {
    if (this.apiObject.chart.toJson !== Chart.prototype.toJson) return undefined;
    const json = this.specJson(releaseOf(this));
    const rendered = this.rendered!;
    if (!rendered.plain) return undefined;
    rendered.handedOut = true;
    return { json, validated: rendered.checked === true };
  }

  /**
   * The kinds of the objects written beside the Function and labelled with its name (its endpoints,
   * Subscriptions, policies, autoscaler, ScaledObject), for {@link OBJECT_KINDS_ANNOTATION}.
   */
  private objectKinds(): string | undefined {
    // Most Functions hold nothing but their object, which has no children: nothing to look for.
    const children = this.node.children;
    if (children.length === 1 && children[0] === this.apiObject && !this.apiObject.node.children.length) return undefined;
    const kinds: string[] = [];
    for (const c of this.node.findAll()) {
      if (c !== this.apiObject && ApiObject.isApiObject(c) && c.metadata.getLabel(FUNCTION_LABEL) === this.name) kinds.push(groupKindOf(c.apiVersion, c.kind));
    }
    return kinds.length ? objectKindsValue(kinds) : undefined;
  }

  /** The fields of the spec the generated class does not know: the security contexts, in the releases that have them. */
  private extraSpecJson(release: ServerlessRelease): Json {
    if (!hasSecurityContexts(release)) return {};
    return {
      containerSecurityContext: k8s.toJson_SecurityContext(this.props.containerSecurityContext),
      podSecurityContext: k8s.toJson_PodSecurityContext(this.props.podSecurityContext),
    };
  }

  /**
   * Adds or removes the HorizontalPodAutoscaler of `scale` as the release asks: under a release
   * whose controller creates none, a Function whose bounds differ gets one.
   */
  private syncAutoscaler(release: ServerlessRelease): void {
    const scale = this.props.scale;
    const wanted = scale !== undefined && scale.minReplicas !== scale.maxReplicas && !releaseFacts(release).buildsImages;
    const present = this.node.tryFindChild(AUTOSCALER_ID);
    if (!wanted) {
      if (present) this.node.tryRemoveChild(AUTOSCALER_ID);
      return;
    }
    if (present) return;
    new k8s.KubeHorizontalPodAutoscalerV2(this, AUTOSCALER_ID, {
      metadata: {
        name: this.name,
        ...(this.props.namespace !== undefined ? { namespace: this.props.namespace } : {}),
        // The function-name label lets `kyma-serverless status` find it beside the controller's
        // children; without the controller's managed-by label and owner, the build-mode clean-up keeps it.
        labels: { [FUNCTION_LABEL]: this.name, [FUNCTION_POD_LABEL]: this.name },
      },
      spec: {
        // The Function's scale subresource: the autoscaler sets spec.replicas, the controller scales the Deployment to it.
        scaleTargetRef: { apiVersion: FUNCTION_API_VERSION, kind: FUNCTION_KIND, name: this.name },
        minReplicas: scale.minReplicas,
        maxReplicas: scale.maxReplicas,
        metrics: [{
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: this.targetCpuUtilizationPercentage } },
        }],
      },
    });
  }

  private renderSpec(release: ServerlessRelease): FunctionSpec {
    _work.functionRenders++;
    const props = this.props;
    const source = this.source ?? { inline: { source: '' } };
    const autoscaled = props.scale !== undefined && props.scale.minReplicas !== props.scale.maxReplicas;
    // Under 1.13.0 the controller ignores scaleConfig (and the release's rules refuse it): the autoscaler is ours, beside the Function.
    const scaleConfig = releaseFacts(release).buildsImages && props.scale ? { minReplicas: props.scale.minReplicas, maxReplicas: props.scale.maxReplicas } : undefined;
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
      env: this.env.size ? envVars(this.env) : undefined,
      secretMounts: this.secretMounts.length ? this.secretMounts.map(m => ({ ...m })) : undefined,
      resourceConfiguration: props.resources || props.buildResources ? {
        function: props.resources && resourceBlock(props.resources.config,
          FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString, FunctionSpecResourceConfigurationFunctionResourcesLimits.fromString),
        build_: props.buildResources && resourceBlock(props.buildResources.config,
          FunctionSpecResourceConfigurationBuildResourcesRequests.fromString, FunctionSpecResourceConfigurationBuildResourcesLimits.fromString),
      } : undefined,
      // With an autoscaler, the autoscaler (the controller's HPA, or KEDA) owns `replicas` (through the scale subresource).
      replicas: autoscaled || props.keda ? undefined : this.replicas,
      scaleConfig,
      labels: undefinedIfEmpty(props.labels),
      annotations: undefinedIfEmpty(props.annotations),
    };
  }

  /** Every problem of the Function, as `'prop' (field): message; how to fix it`. */
  private validateFunction(): string[] {
    const problems = [...this.problems];
    const namesakes = this.sameNamed.length > 1 ? this.sameNamed.filter(f => f !== this) : [];
    if (namesakes.length) {
      problems.push(`'name' (${this.name}): ${namesakes.map(f => f.node.path).join(', ')} is a Function of the same name in namespace ${this.namespace}, `
        + 'and the cluster keeps one: give one of them another name (its construct id, or \'name\') or namespace');
    }
    // The Function as synth renders it, built without cdk8s's token resolution (the spec holds
    // no tokens): resolving every Function twice per synth costs seconds with thousands of them.
    // The rules read only the name and namespace of the metadata; the spec's JSON is built once,
    // and is the object's own spec when it holds no token (see plainSpecJson). JSON patches added
    // to the ApiObject are applied at synth only: GitOpsApp checks the Function again when they change it.
    const release = releaseOf(this);
    const object = {
      apiVersion: this.apiObject.apiVersion,
      kind: this.apiObject.kind,
      metadata: { name: this.name, namespace: this.namespace },
      spec: this.specJson(release),
    };
    const releaseProblems = this.releaseProblems(release);
    problems.push(...releaseProblems.map(p => p.message));
    const reported = releaseProblems.flatMap(p => (p.field ? [p.field] : []));
    const violations = validateFunction(object, { release });
    const rendered = this.renderedFor(release);
    if (rendered.json === object.spec) rendered.checked = true;
    _work.functionValidations++;
    if (!violations.length) rememberValidFunction(this.node.root, object, release);
    const folder = violations.length ? this.node.metadata.find(m => m.type === DECLARED_FOLDER_METADATA)?.data as string | undefined : undefined;
    /** Problems of a function folder's handler or dependencies file, named by that file rather than function.yaml. */
    const ofFolderFiles: string[] = [];
    for (const violation of violations) {
      // A source that could not be read renders a placeholder; its problem is already reported.
      if (!this.source && violation.path.startsWith('spec.source')) continue;
      // A field whose problem with the release is reported above, in the words of the release.
      if (reported.some(field => violation.path === field || violation.path.startsWith(`${field}.`))) continue;
      if (folder !== undefined && violation.rule === 'inlineSourceSize') {
        ofFolderFiles.push(this.folderSizeProblem(folder, violation, object.spec.source?.inline));
        continue;
      }
      problems.push(this.describe(violation, object));
    }
    problems.push(...this.limitRangeProblems());
    problems.push(...this.podSecurityProblems(release));
    // Problems of a folder's handler code name its files themselves, not the folder's function.yaml.
    const code = this.handlerCodeProblems(release);
    if (!problems.length && !ofFolderFiles.length && !code.length) return [];
    const declaredIn = this.node.metadata.find(m => m.type === DECLARED_IN_METADATA)?.data;
    const inFolder = this.source?.directory !== undefined;
    return [...(declaredIn ? problems.map(p => `${String(declaredIn)}: ${p}`) : problems), ...ofFolderFiles,
      ...(declaredIn && !inFolder ? code.map(p => `${String(declaredIn)}: ${p}`) : code)];
  }

  /** The problems of inline handler code: the file (in its folder) and line, what the runtime would say, and the fix. */
  private handlerCodeProblems(release: ServerlessRelease): string[] {
    const inline = this.source?.inline;
    if (!inline) return [];
    const accepted = this.props.acceptWarnings ?? [];
    const invalid = accepted.filter(a => !Object.values(HandlerWarning).some(w => a === w || a.startsWith(`${w}:`)));
    if (invalid.length) {
      return [`'acceptWarnings' (${invalid.join(', ')}): unknown warning: give ${Object.values(HandlerWarning).join(', ')}, or <warning>:<module>`];
    }
    const app = HANDLERS_OF_APP.get(this.node.root);
    if (app && app.parsed < app.handlers.length) {
      _parsePythonHandlers(app.handlers.slice(app.parsed));
      app.parsed = app.handlers.length;
    }
    const problems = handlerCodeProblems({ runtime: this.runtime.name, source: inline.source, dependencies: inline.dependencies, release });
    // Most handlers have none: nothing to filter or word.
    if (!problems.length) return [];
    const directory = this.source?.directory;
    return problems
      .filter(p => !isAccepted(p, accepted))
      .map(p => (directory ? describeHandlerProblem(p, path.join(directory, p.file))
        : `'source' (spec.source.inline): ${describeHandlerProblem(p).replace('acceptWarnings: [', 'the prop acceptWarnings: [')}`));
  }

  /**
   * A source too large for the release, read from a function folder: named by the file at fault
   * (the larger of the two when they count together), with the fixes a folder has — it cannot
   * name a Git repository.
   */
  private folderSizeProblem(folder: string, violation: Violation, inline: { source?: string; dependencies?: string } | undefined): string {
    const { handler, dependencies } = this.runtime.files;
    const bytes = (text: string | undefined) => Buffer.byteLength(text ?? '', 'utf8');
    const file = violation.path.endsWith('.dependencies') ? dependencies
      : violation.path.endsWith('.source') || bytes(inline?.source) >= bytes(inline?.dependencies) ? handler : dependencies;
    const fix = `a function folder's ${handler} and ${dependencies} are its inline source, so make ${file} smaller `
      + (file === handler ? `(declare the packages it bundles in ${dependencies} instead of pasting their code, and load large data at run time)`
        : '(keep only the packages the handler needs)')
      + ', or declare the Function in TypeScript with FunctionSource.fromGitRepository, which a function folder cannot use';
    return `${path.join(folder, file)}: ${this.describe({ ...violation, hint: fix }, { spec: {} })}`;
  }

  private describe(violation: Violation, object: unknown): string {
    let message = violation.message;
    const generic = /^Invalid value: "(object|array)": /.exec(message);
    if (generic) message = `Invalid value: ${abbreviated(valueAt(object, violation.path))}: ${message.slice(generic[0].length)}`;
    const where = violation.path ? ` (${violation.path})` : '';
    return `'${this.propOf(violation.path)}'${where}: ${message}${violation.hint ? `; ${violation.hint}` : ''}`;
  }

  /**
   * What the Function asks that its release does not have, in the words of the release: a runtime
   * of another release, build resources where nothing builds, security contexts where the CRD has
   * none, an autoscaler the KymaFunction cannot write. Each with the field it is about, whose
   * schema violations it replaces.
   */
  private releaseProblems(release: ServerlessRelease): Array<{ readonly field?: string; readonly message: string }> {
    const props = this.props;
    const facts = releaseFacts(release);
    const problems: Array<{ field?: string; message: string }> = [];
    const runtimes = facts.runtimes as readonly string[];
    if (!runtimes.includes(this.runtime.name) && this.runtime.releases.length) {
      const having = this.runtime.releases;
      problems.push({
        field: 'spec.runtime',
        message: `'runtime' (spec.runtime): "${this.runtime.name}" is a runtime of release ${having.join(' and ')}, not of release ${release}, `
          + `the release of the Function's stack: set the stack's 'release' to ServerlessRelease.V${having[having.length - 1].replace(/\./g, '_')}, `
          + `or use one of ${runtimes.join(', ')}`,
      });
    }
    if (facts.buildsImages) {
      for (const prop of ['containerSecurityContext', 'podSecurityContext'] as const) {
        if (props[prop] === undefined) continue;
        problems.push({
          field: `spec.${prop}`,
          message: `'${prop}' (${abbreviated(prop === 'containerSecurityContext' ? k8s.toJson_SecurityContext(props[prop] as k8s.SecurityContext)
            : k8s.toJson_PodSecurityContext(props[prop] as k8s.PodSecurityContext))}): release ${release} has no spec.${prop} `
            + `(its controller sets the ${prop === 'containerSecurityContext' ? 'container\'s' : 'Pod\'s'} security context itself): `
            + 'use release 1.13.0 (the stack\'s \'release\'), or remove it',
        });
      }
      return problems;
    }
    if (props.buildResources) {
      problems.push({
        field: 'spec.resourceConfiguration.build',
        message: `'buildResources' (${abbreviated(props.buildResources.config)}): release ${release} builds no image; remove buildResources`,
      });
    }
    const scale = props.scale;
    if (scale) {
      // Under this release scale renders no scaleConfig, whose schema checks the bounds: the autoscaler's bounds are checked here.
      const wholeAtLeast = (value: number, least: number) => Number.isInteger(value) && value >= least && value <= 2 ** 31 - 1;
      if (!wholeAtLeast(scale.minReplicas, 1)) {
        problems.push({ field: 'spec.replicas', message: `'scale.minReplicas' (${scale.minReplicas}): must be a whole number of at least 1: raise the number` });
      } else if (!wholeAtLeast(scale.maxReplicas, scale.minReplicas)) {
        problems.push({
          field: 'spec.replicas',
          message: `'scale.maxReplicas' (${scale.maxReplicas}) must be a whole number of at least 'scale.minReplicas' (${scale.minReplicas}): swap the bounds or raise maxReplicas`,
        });
      } else if (scale.minReplicas !== scale.maxReplicas) {
        problems.push(...this.autoscalerCpuProblems().map(message => ({ message })));
      }
    }
    return problems;
  }

  /**
   * The autoscaler of `scale` aims at a share of the Pods' CPU request: explicit `resources` must
   * request CPU (a limit alone is the request too), unless the enclosing FunctionNamespace's
   * LimitRange gives a default request. Presets and the controller's default preset request CPU.
   */
  private autoscalerCpuProblems(): string[] {
    const explicit = this.props.resources?.config.resources;
    const chart = Chart.of(this);
    if (!explicit || (FunctionNamespace.isFunctionNamespace(chart) && chart.name === this.namespace)) return [];
    if (explicit.requests?.cpu !== undefined || explicit.limits?.cpu !== undefined) return [];
    return [`'scale' (${abbreviated(this.props.scale)}): the HorizontalPodAutoscaler aims at a share of the Pods' CPU request, and 'resources' requests no cpu; `
      + 'give \'resources\' a cpu request, use a preset, or add the Function to a FunctionNamespace (its LimitRange requests a default)'];
  }

  /**
   * Security contexts that Pod Security `restricted` refuses, in a FunctionNamespace that enforces
   * it: the Pod the controller would run, with the contexts merged as it merges them, checked by
   * the policy check of `kyma-serverless validate`. The Deployment would be created and its Pods refused.
   */
  private podSecurityProblems(release: ServerlessRelease): string[] {
    const props = this.props;
    if (!hasSecurityContexts(release) || (props.containerSecurityContext === undefined && props.podSecurityContext === undefined)) return [];
    const chart = Chart.of(this);
    if (!FunctionNamespace.isFunctionNamespace(chart) || chart.name !== this.namespace || chart.podSecurityEnforce !== PodSecurityLevel.RESTRICTED) return [];
    return restrictedViolations(k8s.toJson_SecurityContext(props.containerSecurityContext), k8s.toJson_PodSecurityContext(props.podSecurityContext))
      .map(({ prop, field, message }) => `'${prop}' (${field}): ${message}, which Pod Security restricted refuses, and namespace ${chart.name} enforces it: `
        + 'the controller\'s Deployment would get no Pods; remove it, or keep the controller\'s default');
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
      ['spec.containerSecurityContext', 'containerSecurityContext'],
      ['spec.podSecurityContext', 'podSecurityContext'],
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
      if (!kedaModule().usesPodResources(trigger) || explicit.requests?.[resource] !== undefined || explicit.limits?.[resource] !== undefined) return [];
      return [`'keda.triggers[${i}]' (${resource}): the Function's Pods request no ${resource} ('resources' sets none), and KEDA scales on their use `
        + `as a share of the request; give 'resources' a ${resource} request, use a preset, or add the Function to a FunctionNamespace (its LimitRange requests a default)`];
    });
  }

  /** Explicit resources above the maximum of the enclosing FunctionNamespace's LimitRange. */
  private limitRangeProblems(): string[] {
    // Only explicit requests and limits are compared with the maximum: without them there is nothing to look at.
    if (!this.props.resources?.config.resources && !this.props.buildResources?.config.resources) return [];
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
