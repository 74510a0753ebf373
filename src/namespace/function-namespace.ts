/**
 * FunctionNamespace: a namespace that Functions can run in.
 */
import { Chart, JsonPatch, Size } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  BuildProfile, DEFAULT_BUILD_PRESETS, DEFAULT_FUNCTION_PRESETS, DEFAULT_RELEASE, FunctionProfile, ResourcePreset, ServerlessRelease, cpuMillis,
  isDns1123Label, maxCpu, maxSize, sizeBytes,
} from '../api';
import type { IAppliedAfter } from '../gitops/gitops-app';
import { _markRelease } from '../stack/release-scope';
import { MANAGED_BY_LABEL, ServerlessStack } from '../stack/serverless-stack';

/**
 * The resources of the init container that clones Git sources in build Jobs (fixed by the
 * controller at 1.11.1).
 */
export const REPO_FETCHER_LIMITS = { cpu: Cpu.millis(200), memory: Size.mebibytes(256) } as const;

/** A ResourceQuota for a Function namespace. Omitted fields are not limited. */
export interface FunctionNamespaceQuota {
  /**
   * Sum of CPU requests of all Pods.
   *
   * @default - not limited
   */
  readonly requestsCpu?: Cpu;
  /**
   * Sum of memory requests of all Pods.
   *
   * @default - not limited
   */
  readonly requestsMemory?: Size;
  /**
   * Sum of CPU limits of all Pods.
   *
   * @default - not limited
   */
  readonly limitsCpu?: Cpu;
  /**
   * Sum of memory limits of all Pods.
   *
   * @default - not limited
   */
  readonly limitsMemory?: Size;
  /**
   * Number of Pods.
   *
   * @default - not limited
   */
  readonly pods?: number;
}

/** Props of {@link FunctionNamespace}. */
export interface FunctionNamespaceProps {
  /**
   * Name of the namespace.
   *
   * @default - the construct id
   */
  readonly name?: string;

  /**
   * The stack whose presets the namespace must fit. Its largest build and Function presets
   * set the LimitRange's maximum, its default Function preset the LimitRange's defaults.
   *
   * @default - upstream's default presets
   */
  readonly stack?: ServerlessStack;

  /**
   * The release of the stack that runs the namespace's Functions: they are checked against its
   * rules. Give it only without `stack`; with one, it is the stack's.
   *
   * @default - the stack's release, or ServerlessRelease.V1_11_1 without a stack
   */
  readonly release?: ServerlessRelease;

  /**
   * A ResourceQuota for the namespace. It must leave room for at least one build Job of the
   * largest build preset.
   *
   * @default - no ResourceQuota
   */
  readonly quota?: FunctionNamespaceQuota;

  /**
   * Labels added to every object of the chart.
   *
   * @default - none beyond the namespace's own
   */
  readonly labels?: { readonly [key: string]: string };
}

/** The largest requests and limits among presets, one dimension at a time. */
function envelope(presets: readonly ResourcePreset[]): ResourcePreset {
  return presets.reduce((a, b) => ({
    requestCpu: maxCpu(a.requestCpu, b.requestCpu),
    requestMemory: maxSize(a.requestMemory, b.requestMemory),
    limitCpu: maxCpu(a.limitCpu, b.limitCpu),
    limitMemory: maxSize(a.limitMemory, b.limitMemory),
  }));
}

const FUNCTION_NAMESPACE_SYMBOL = Symbol.for('cdk8s-kyma-serverless.FunctionNamespace');

const q = (amount: string) => k8s.Quantity.fromString(amount);

/**
 * A namespace for Functions: labelled `istio-injection: enabled` (Function Pods rely on the
 * sidecar), with a LimitRange that every build Job and Function preset fits in, and an
 * optional ResourceQuota. Functions and other objects created inside this chart land in it.
 *
 * @example
 * const team = new FunctionNamespace(app, 'team-a');
 */
export class FunctionNamespace extends Chart implements IAppliedAfter {
  /**
   * Whether a construct is a FunctionNamespace. (`instanceof` cannot tell: `Chart` answers it
   * for every chart.)
   */
  public static isFunctionNamespace(x: unknown): x is FunctionNamespace {
    return x !== null && typeof x === 'object' && FUNCTION_NAMESPACE_SYMBOL in x;
  }

  /** Name of the namespace. */
  public readonly name: string;
  /** The stack whose presets and exposure defaults the namespace follows, when given. */
  public readonly stack?: ServerlessStack;
  /** The release of the stack that runs the namespace's Functions. */
  public readonly release: ServerlessRelease;
  /** The charts a GitOpsApp writes before this one: the stack, when given. */
  public readonly appliedAfter: readonly Chart[];
  /** The per-container maximum of the LimitRange. */
  public readonly maxContainerResources: { readonly cpu: Cpu; readonly memory: Size };

  constructor(scope: Construct, id: string, props: FunctionNamespaceProps = {}) {
    const name = props.name ?? id;
    super(scope, id, {
      namespace: name,
      labels: { [MANAGED_BY_LABEL.key]: MANAGED_BY_LABEL.value, ...props.labels },
    });
    if (!isDns1123Label(name)) {
      throw new Error(`'name' (${name}) must be a DNS-1123 label: at most 63 lower-case letters, digits and '-'`);
    }
    if (props.stack && (name === props.stack.namespace || props.stack.controller.excludedNamespaces.includes(name))) {
      throw new Error(`'name' (${name}) is a namespace the stack's controller copies no registry credentials and Dockerfiles into `
        + `(${name === props.stack.namespace ? 'the stack\'s own' : '\'controller.excludedNamespaces\''}), so its Functions could never be built: `
        + 'use another namespace');
    }
    if (props.stack && props.release && props.release !== props.stack.release) {
      throw new Error(`'release' (${props.release}) differs from the release of 'stack' (${props.stack.release}): `
        + 'the namespace\'s Functions run under the stack\'s controller; remove \'release\'');
    }
    this.name = name;
    this.stack = props.stack;
    this.release = props.stack?.release ?? props.release ?? DEFAULT_RELEASE;
    _markRelease(this, this.release, false);
    this.appliedAfter = props.stack ? [props.stack] : [];
    Object.defineProperty(this, FUNCTION_NAMESPACE_SYMBOL, { value: true });

    const functionPresets: { readonly [P in FunctionProfile]: ResourcePreset } = props.stack?.functionPresets ?? DEFAULT_FUNCTION_PRESETS;
    const buildPresets: { readonly [P in BuildProfile]: ResourcePreset } = props.stack?.buildPresets ?? DEFAULT_BUILD_PRESETS;
    const defaultPreset = functionPresets[props.stack?.defaultFunctionPreset ?? FunctionProfile.L];
    const largestBuild = envelope(Object.values(buildPresets));
    const largest = envelope([...Object.values(buildPresets), ...Object.values(functionPresets)]);
    this.maxContainerResources = {
      cpu: maxCpu(largest.limitCpu, REPO_FETCHER_LIMITS.cpu),
      memory: maxSize(largest.limitMemory, REPO_FETCHER_LIMITS.memory),
    };

    const namespace = new k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name,
        labels: {
          // Function Pods wait for their sidecar (holdApplicationUntilProxyStarts).
          'istio-injection': 'enabled',
          // Build Jobs run kaniko as root with a few capabilities: baseline is the most they allow.
          'pod-security.kubernetes.io/enforce': 'baseline',
          'pod-security.kubernetes.io/warn': 'baseline',
          'pod-security.kubernetes.io/audit': 'restricted',
        },
      },
    });
    namespace.addJsonPatch(JsonPatch.remove('/metadata/namespace'));

    new k8s.KubeLimitRange(this, 'LimitRange', {
      spec: {
        limits: [{
          type: 'Container',
          // Never below what build Jobs (and the Git fetcher) and the largest Function preset need.
          max: { cpu: q(this.maxContainerResources.cpu.amount), memory: q(this.maxContainerResources.memory.asString()) },
          // Containers that declare nothing get the default Function preset.
          default: { cpu: q(defaultPreset.limitCpu.amount), memory: q(defaultPreset.limitMemory.asString()) },
          defaultRequest: { cpu: q(defaultPreset.requestCpu.amount), memory: q(defaultPreset.requestMemory.asString()) },
        }],
      },
    });

    if (props.quota) {
      const quota = props.quota;
      const checks: Array<[string, Cpu | Size | undefined, Cpu | Size]> = [
        ['quota.requestsCpu', quota.requestsCpu, largestBuild.requestCpu],
        ['quota.requestsMemory', quota.requestsMemory, largestBuild.requestMemory],
        ['quota.limitsCpu', quota.limitsCpu, largestBuild.limitCpu],
        ['quota.limitsMemory', quota.limitsMemory, largestBuild.limitMemory],
      ];
      for (const [prop, given, needed] of checks) {
        if (given === undefined) continue;
        const [amount, least, text, neededText] = given instanceof Cpu
          ? [cpuMillis(given), cpuMillis(needed as Cpu), given.amount, (needed as Cpu).amount]
          : [sizeBytes(given), sizeBytes(needed as Size), given.asString(), (needed as Size).asString()];
        if (amount < least) {
          throw new Error(`'${prop}' (${text}) leaves no room for one build Job of the largest build preset: raise it to at least ${neededText}`);
        }
      }
      if (quota.pods !== undefined && (!Number.isInteger(quota.pods) || quota.pods < 2)) {
        throw new Error(`'quota.pods' (${quota.pods}) must be a whole number of at least 2: a Function Pod and its build Job's Pod`);
      }
      const hard: Record<string, k8s.Quantity> = {};
      if (quota.limitsCpu) hard['limits.cpu'] = q(quota.limitsCpu.amount);
      if (quota.limitsMemory) hard['limits.memory'] = q(quota.limitsMemory.asString());
      if (quota.pods !== undefined) hard.pods = k8s.Quantity.fromNumber(quota.pods);
      if (quota.requestsCpu) hard['requests.cpu'] = q(quota.requestsCpu.amount);
      if (quota.requestsMemory) hard['requests.memory'] = q(quota.requestsMemory.asString());
      if (Object.keys(hard).length === 0) {
        throw new Error('\'quota\' sets no limit: give at least one of requestsCpu, requestsMemory, limitsCpu, limitsMemory, pods');
      }
      new k8s.KubeResourceQuota(this, 'ResourceQuota', { spec: { hard } });
    }
  }
}
