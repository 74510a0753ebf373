/**
 * FunctionNamespace: a namespace that Functions can run in.
 */
import { ApiObject, Chart, JsonPatch, Lazy, Size } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { FUNCTION_CONTROLLER, FunctionChildLabel } from '../api/function-status';
import { isDns1123Label } from '../api/names';
import { DEFAULT_BUILD_PRESETS, DEFAULT_FUNCTION_PRESETS, ResourcePreset } from '../api/presets';
import { FunctionProfile } from '../api/profiles';
import { cpuMillis, maxCpu, maxSize, sizeBytes } from '../api/quantity';
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from '../api/release';
import { PACKAGE_REGISTRY_CONFIG_SECRET } from '../api/runtime-contract';
import { _markExposureDefaults } from '../exposure/exposure-defaults';
import type { IAppliedAfter } from './applied-after';
import { _markRelease } from '../stack/release-scope';
import { MANAGED_BY_LABEL, ServerlessStack } from '../stack/serverless-stack';

/**
 * The resources of the init container that clones Git sources in build Jobs (fixed by the
 * controller at 1.11.1).
 */
export const REPO_FETCHER_LIMITS = { cpu: Cpu.millis(200), memory: Size.mebibytes(256) } as const;

/**
 * The limits of the init container `function-buildless-init` that clones a Git Function's source
 * into its Pod at every start, under release 1.13.0 (fixed by the controller: requests 50m and
 * 64Mi, limits 200m and 512Mi, in `initContainerForGitRepository()` of its deployment.go).
 */
export const GIT_INIT_LIMITS = { cpu: Cpu.millis(200), memory: Size.mebibytes(512) } as const;

/**
 * The Secret the release 1.13.0 controller mounts into every Function Pod of its namespace, when
 * it exists, as `.npmrc` and `pip.conf` (its configuration's `packageRegistryConfigSecretName`).
 */
export const PACKAGE_REGISTRY_SECRET_NAME = PACKAGE_REGISTRY_CONFIG_SECRET;

/** The annotation on a Function namespace that names the package registry Secret its Functions need: `preflight` can check it exists. */
export const PACKAGE_REGISTRY_ANNOTATION = 'cdk8s-kyma-serverless/package-registry-secret';

/** The Pod Security Standards levels a Function namespace enforces. */
export enum PodSecurityLevel {
  /** `baseline`: no privileged containers, host namespaces or added capabilities beyond the default set. */
  BASELINE = 'baseline',
  /** `restricted`: also non-root, no privilege escalation, all capabilities dropped, a seccomp profile. */
  RESTRICTED = 'restricted',
}

/**
 * A private package registry the Function Pods of a namespace install their dependencies from
 * (release 1.13.0), with the credentials and addresses of the Secret
 * `serverless-package-registry-config`: the controller mounts its keys `.npmrc` (Node.js) and
 * `pip.conf` (Python) into every Function Pod of the namespace.
 *
 * The Secret holds credentials, so it is never written to Git by synth: create it in the
 * namespace yourself, with External Secrets (an `ExternalSecret` whose target is
 * `serverless-package-registry-config`), Sealed Secrets (a `SealedSecret` of that name) or
 * `kubectl create secret generic serverless-package-registry-config -n <namespace> --from-file=.npmrc`.
 * Synth refuses a plain Secret of that name in the namespace's chart, and names it on the
 * Namespace (annotation `cdk8s-kyma-serverless/package-registry-secret`).
 *
 * @see https://kyma-project.io/#/serverless-manager/user/tutorials/01-80-log-into-private-packages-registry
 */
export class PackageRegistry {
  /**
   * The registry `serverless-package-registry-config` describes, a Secret created in the
   * namespace outside Git.
   */
  public static fromSecret(): PackageRegistry {
    return new PackageRegistry(PACKAGE_REGISTRY_SECRET_NAME);
  }

  private constructor(
    /** The Secret's name: the one the controller mounts. */
    public readonly secretName: string,
  ) {}
}

/** Addresses a Function Pod may reach: a block of IP addresses and the TCP ports on it. */
export interface EgressDestination {
  /** The addresses, as a CIDR, such as `10.20.0.0/16` or `203.0.113.7/32`. */
  readonly cidr: string;
  /**
   * The TCP ports.
   *
   * @default [443]
   */
  readonly ports?: number[];
}

/**
 * Where the Function Pods of a namespace may connect to: with these options the namespace gets a
 * NetworkPolicy that lets them reach DNS (kube-dns in `kube-system`, port 53), the Istio control
 * plane (istiod in `istio-system`, port 15012), Kyma's eventing publisher proxy and trace
 * collector (`kyma-system`, ports 8080, 4317, 4318), the package registry and the destinations in
 * `allow`, and nothing else. It needs a CNI that enforces NetworkPolicies.
 */
export interface FunctionEgressOptions {
  /**
   * The package registry or mirror the Function Pods install their dependencies from at every
   * start (release 1.13.0; `registry.npmjs.org` and `pypi.org` unless a package registry Secret
   * names another). Those public registries are served by CDNs whose addresses change, which no
   * NetworkPolicy can name: give the addresses of your mirror, or of an egress proxy. Required
   * under release 1.13.0: give `[]` when no Function of the namespace has dependencies.
   *
   * @default - none; required under release 1.13.0
   */
  readonly packageRegistry?: EgressDestination[];

  /**
   * Further destinations: the Git server of Git Functions (under release 1.13.0 their Pods clone
   * it at every start), databases, APIs the Functions call, other Functions' Pods.
   *
   * @default - none
   */
  readonly allow?: EgressDestination[];

  /**
   * The namespace of Kyma's eventing publisher proxy and telemetry's trace collector.
   *
   * @default 'kyma-system'
   */
  readonly kymaNamespace?: string;

  /**
   * The namespace of the Istio control plane (istiod).
   *
   * @default 'istio-system'
   */
  readonly istioNamespace?: string;
}

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
   * A ResourceQuota for the namespace. Under release 1.11.1 it must leave room for at least one
   * build Job of the largest build preset; under 1.13.0, which builds nothing, for one Function Pod
   * of the default Function preset.
   *
   * @default - no ResourceQuota
   */
  readonly quota?: FunctionNamespaceQuota;

  /**
   * A private package registry the namespace's Functions install their dependencies from, with
   * credentials in the Secret `serverless-package-registry-config` created outside Git. Release
   * 1.13.0 only.
   *
   * @default - the public registries (registry.npmjs.org, pypi.org), unless the Secret exists anyway
   */
  readonly packageRegistry?: PackageRegistry;

  /**
   * A NetworkPolicy that limits where the namespace's Function Pods connect to: DNS, the Istio
   * control plane, Kyma's eventing publisher proxy and trace collector, the package registry and
   * the destinations allowed. See docs/security.md for what to allow.
   *
   * @default - no NetworkPolicy: Function Pods reach any address
   */
  readonly egress?: FunctionEgressOptions;

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

/** The largest CPU and memory a container of a namespace may have (its LimitRange's max). */
export interface MaxContainerResources {
  /** CPU. */
  readonly cpu: Cpu;
  /** Memory. */
  readonly memory: Size;
}

/**
 * A namespace for Functions: labelled `istio-injection: enabled` (Function Pods rely on the
 * sidecar), with a LimitRange that every Function preset fits in (and under release 1.11.1 every
 * build Job), a Pod Security level, an optional ResourceQuota and an optional NetworkPolicy on the
 * Function Pods' egress. Functions and other objects created inside this chart land in it.
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
  public readonly appliedAfter: Chart[];
  /** The per-container maximum of the LimitRange. */
  public readonly maxContainerResources: MaxContainerResources;
  /** The private package registry of the namespace's Functions, when given. */
  public readonly packageRegistry?: PackageRegistry;
  /** The NetworkPolicy on the Function Pods' egress, when `egress` is given. */
  public readonly egressPolicy?: ApiObject;
  /** Whether a Git Function was added (under release 1.13.0 its Pods start with an init container that `restricted` refuses). */
  private gitFunctions = false;

  constructor(scope: Construct, id: string, props: FunctionNamespaceProps = {}) {
    const name = props.name ?? id;
    super(scope, id, {
      namespace: name,
      labels: { [MANAGED_BY_LABEL.key]: MANAGED_BY_LABEL.value, ...props.labels },
    });
    if (!isDns1123Label(name)) {
      throw new Error(`'name' (${name}) must be a DNS-1123 label: at most 63 lower-case letters, digits and '-'`);
    }
    if (props.stack && props.release && props.release !== props.stack.release) {
      throw new Error(`'release' (${props.release}) differs from the release of 'stack' (${props.stack.release}): `
        + 'the namespace\'s Functions run under the stack\'s controller; remove \'release\'');
    }
    const release = props.stack?.release ?? props.release ?? DEFAULT_RELEASE;
    const builds = releaseFacts(release).buildsImages;
    if (props.stack && builds && (name === props.stack.systemNamespace || props.stack.controller.excludedNamespaces.includes(name))) {
      throw new Error(`'name' (${name}) is a namespace the stack's controller copies no registry credentials and Dockerfiles into `
        + `(${name === props.stack.systemNamespace ? 'the stack\'s own' : '\'controller.excludedNamespaces\''}), so its Functions could never be built: `
        + 'use another namespace');
    }
    if (props.stack && name === props.stack.systemNamespace) {
      throw new Error(`'name' (${name}) is the stack's own namespace, which the stack creates and whose Pods run privileged work: use another namespace`);
    }
    if (props.packageRegistry && builds) {
      throw new Error(`'packageRegistry' (${props.packageRegistry.secretName}): release ${release} installs dependencies when it builds the image, `
        + 'from the public registries, and reads no package registry Secret: use release 1.13.0 (the stack\'s \'release\'), or remove it');
    }
    this.name = name;
    this.stack = props.stack;
    this.release = release;
    this.packageRegistry = props.packageRegistry;
    _markRelease(this, this.release, false);
    _markExposureDefaults(this, () => this.stack?.exposure);
    this.appliedAfter = props.stack ? [props.stack] : [];
    Object.defineProperty(this, FUNCTION_NAMESPACE_SYMBOL, { value: true });

    const functionPresets: { readonly [profile: string]: ResourcePreset } = props.stack?.functionPresets ?? DEFAULT_FUNCTION_PRESETS;
    const buildPresets: { readonly [profile: string]: ResourcePreset } = props.stack?.buildPresets ?? DEFAULT_BUILD_PRESETS;
    const defaultPreset = functionPresets[props.stack?.defaultFunctionPreset ?? FunctionProfile.L];
    // Under 1.11.1 every container of a build Job must fit too, and the Git fetcher of its init
    // container; under 1.13.0 nothing is built, and Git Functions' Pods start with the init container that clones the source.
    const largest = envelope(builds ? [...Object.values(buildPresets), ...Object.values(functionPresets)] : Object.values(functionPresets));
    const fetcher = builds ? REPO_FETCHER_LIMITS : GIT_INIT_LIMITS;
    this.maxContainerResources = {
      cpu: maxCpu(largest.limitCpu, fetcher.cpu),
      memory: maxSize(largest.limitMemory, fetcher.memory),
    };

    const namespace = new k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name,
        labels: {
          // Function Pods wait for their sidecar (holdApplicationUntilProxyStarts).
          'istio-injection': 'enabled',
          'pod-security.kubernetes.io/enforce': Lazy.any({ produce: () => this.podSecurityEnforce }) as unknown as string,
          'pod-security.kubernetes.io/warn': Lazy.any({ produce: () => this.podSecurityEnforce }) as unknown as string,
          'pod-security.kubernetes.io/audit': PodSecurityLevel.RESTRICTED,
        },
        ...(props.packageRegistry ? { annotations: { [PACKAGE_REGISTRY_ANNOTATION]: props.packageRegistry.secretName } } : {}),
      },
    });
    namespace.addJsonPatch(JsonPatch.remove('/metadata/namespace'));

    new k8s.KubeLimitRange(this, 'LimitRange', {
      spec: {
        limits: [{
          type: 'Container',
          // Never below what the largest Function preset and the Git fetcher (and under 1.11.1 build Jobs) need.
          max: { cpu: q(this.maxContainerResources.cpu.amount), memory: q(this.maxContainerResources.memory.asString()) },
          // Containers that declare nothing get the default Function preset.
          default: { cpu: q(defaultPreset.limitCpu.amount), memory: q(defaultPreset.limitMemory.asString()) },
          defaultRequest: { cpu: q(defaultPreset.requestCpu.amount), memory: q(defaultPreset.requestMemory.asString()) },
        }],
      },
    });

    if (props.quota) {
      const quota = props.quota;
      // Under 1.11.1 a build Job of the largest build preset must fit; under 1.13.0 a Function Pod of the default preset.
      const least = builds ? envelope(Object.values(buildPresets)) : defaultPreset;
      const what = builds ? 'one build Job of the largest build preset' : 'one Function Pod of the default Function preset';
      const checks: Array<[string, Cpu | Size | undefined, Cpu | Size]> = [
        ['quota.requestsCpu', quota.requestsCpu, least.requestCpu],
        ['quota.requestsMemory', quota.requestsMemory, least.requestMemory],
        ['quota.limitsCpu', quota.limitsCpu, least.limitCpu],
        ['quota.limitsMemory', quota.limitsMemory, least.limitMemory],
      ];
      for (const [prop, given, needed] of checks) {
        if (given === undefined) continue;
        const [amount, atLeast, text, neededText] = given instanceof Cpu
          ? [cpuMillis(given), cpuMillis(needed as Cpu), given.amount, (needed as Cpu).amount]
          : [sizeBytes(given), sizeBytes(needed as Size), given.asString(), (needed as Size).asString()];
        if (amount < atLeast) {
          throw new Error(`'${prop}' (${text}) leaves no room for ${what}: raise it to at least ${neededText}`);
        }
      }
      if (quota.pods !== undefined && (!Number.isInteger(quota.pods) || quota.pods < 2)) {
        throw new Error(`'quota.pods' (${quota.pods}) must be a whole number of at least 2: `
          + (builds ? 'a Function Pod and its build Job\'s Pod' : 'a Function Pod and the Pod that replaces it in a rolling update'));
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

    if (props.egress) this.egressPolicy = this.addEgressPolicy(props.egress, builds);
    this.node.addValidation({ validate: () => this.secretProblems() });
  }

  /**
   * The Pod Security level the namespace enforces (and warns about; it audits `restricted`).
   *
   * Under release 1.11.1, `baseline`: build Jobs run kaniko as root with a few capabilities.
   * Under 1.13.0, `restricted`: the controller runs Function Pods as uid 1000 with a read-only
   * root, all capabilities dropped, no privilege escalation and seccomp RuntimeDefault, and
   * Istio's sidecar (istio-proxy, uid 1337) meets it too, as long as Istio runs with its CNI
   * plugin, as Kyma's Istio module does (without it the `istio-init` container needs NET_ADMIN and
   * NET_RAW, which baseline refuses as well). But a namespace with a Git Function enforces
   * `baseline`: 1.13.0 starts its Pods with the init container `function-buildless-init`, whose
   * security context sets neither `allowPrivilegeEscalation: false` nor `runAsNonRoot`, and which
   * `restricted` would refuse, leaving the Function without Pods.
   */
  public get podSecurityEnforce(): PodSecurityLevel {
    return releaseFacts(this.release).buildsImages || this.gitFunctions ? PodSecurityLevel.BASELINE : PodSecurityLevel.RESTRICTED;
  }

  /**
   * Notes that a Function of the namespace takes its source from Git.
   *
   * @internal
   */
  public _addGitFunction(): void {
    this.gitFunctions = true;
  }

  /** The package registry Secret, when the chart declares it with its content: credentials in Git. */
  private secretProblems(): string[] {
    // Only the Functions of a buildless release read it (and walking a chart of thousands of Functions has a cost).
    if (releaseFacts(this.release).buildsImages) return [];
    const secret = this.node.findAll().find(c => ApiObject.isApiObject(c) && c.kind === 'Secret' && c.apiVersion === 'v1'
      && c.name === PACKAGE_REGISTRY_SECRET_NAME) as ApiObject | undefined;
    if (!secret) return [];
    return [`${secret.node.path}: the Secret ${PACKAGE_REGISTRY_SECRET_NAME} holds the package registry's credentials, which must not be written to Git: `
      + 'create it in the cluster with External Secrets, Sealed Secrets or kubectl, and give \'packageRegistry: PackageRegistry.fromSecret()\''];
  }

  /** The NetworkPolicy that limits the Function Pods' egress. */
  private addEgressPolicy(egress: FunctionEgressOptions, builds: boolean): ApiObject {
    if (!builds && egress.packageRegistry === undefined) {
      throw new Error('\'egress.packageRegistry\' is not given: under release 1.13.0 Function Pods install their dependencies at every start, from '
        + 'registry.npmjs.org and pypi.org unless \'packageRegistry\' names a mirror, and those are served from addresses no NetworkPolicy can name: '
        + 'give the CIDRs and ports of your registry mirror or egress proxy, or [] when no Function of the namespace has dependencies');
    }
    const destinations: Array<[string, EgressDestination]> = [
      ...(egress.packageRegistry ?? []).map((d, i) => [`egress.packageRegistry[${i}]`, d] as [string, EgressDestination]),
      ...(egress.allow ?? []).map((d, i) => [`egress.allow[${i}]`, d] as [string, EgressDestination]),
    ];
    for (const [prop, destination] of destinations) {
      if (!isCidr(destination.cidr)) {
        throw new Error(`'${prop}.cidr' (${destination.cidr}) is not a CIDR: give addresses as IPv4 or IPv6 blocks, such as 10.20.0.0/16 or 203.0.113.7/32 `
          + '(a NetworkPolicy cannot name host names)');
      }
      for (const port of destination.ports ?? []) {
        if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`'${prop}.ports' (${port}) must be a port number, 1 to 65535`);
      }
    }
    const inNamespace = (namespace: string, podLabels: { [key: string]: string }) => ({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      podSelector: { matchLabels: podLabels },
    });
    const tcp = (...ports: number[]) => ports.map(port => ({ protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) }));
    return new k8s.KubeNetworkPolicy(this, 'EgressPolicy', {
      spec: {
        // The Pods of Functions' Deployments (the controller's labels), not build Jobs.
        podSelector: { matchLabels: { [FunctionChildLabel.MANAGED_BY]: FUNCTION_CONTROLLER, 'serverless.kyma-project.io/resource': 'deployment' } },
        policyTypes: ['Egress'],
        egress: [
          // Names: the cluster DNS.
          {
            to: [inNamespace('kube-system', { 'k8s-app': 'kube-dns' })],
            ports: [{ protocol: 'UDP', port: k8s.IntOrString.fromNumber(53) }, ...tcp(53)],
          },
          // The sidecar's configuration and certificates (xDS and CA on 15012).
          { to: [inNamespace(egress.istioNamespace ?? 'istio-system', { app: 'istiod' })], ports: tcp(15012) },
          // Events the Functions publish (the eventing publisher proxy, 8080) and their traces (OTLP, 4317 and 4318).
          {
            to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': egress.kymaNamespace ?? 'kyma-system' } } }],
            ports: tcp(8080, 4317, 4318),
          },
          ...destinations.map(([, d]) => ({ to: [{ ipBlock: { cidr: d.cidr } }], ports: tcp(...(d.ports ?? [443])) })),
        ],
      },
    });
  }
}

/** Whether a string is an IPv4 or IPv6 CIDR block. */
function isCidr(value: string): boolean {
  const [address, bits, ...rest] = value.split('/');
  if (rest.length || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
  const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (ipv4) return ipv4.slice(1).every(octet => Number(octet) <= 255) && Number(bits) <= 32;
  return /^[0-9a-fA-F:]+$/.test(address) && address.includes(':') && Number(bits) <= 128;
}
