/**
 * `kyma-serverless preflight`: reads a cluster and reports, check by check, what would stop the
 * stack or its Functions from working there, with a fix for each problem.
 *
 * The command reads first ({@link readCluster}) and judges after ({@link judge}): every check is
 * a small function over objects as the API server returns them, so each can be tested alone.
 * `report.ts` holds what a check reports.
 */
import type {
  V1CustomResourceDefinition, V1Deployment, V1LimitRange, V1MutatingWebhookConfiguration, V1Namespace, V1PriorityClass,
  V1ResourceQuota, V1Service, V1StorageClass, VersionInfo,
} from '@kubernetes/client-node';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import { FUNCTION_CRD_NAME } from '../../api/crd';
import { CrdReleaseEvidence, functionCrdRelease, isFunctionCrd } from '../../api/crd-release';
import { DEFAULT_FUNCTION_DEFAULTS } from '../../api/function-defaults';
import { FUNCTION_VERSION } from '../../api/function-schema';
import { isDns1123Label } from '../../api/names';
import { DEFAULT_BUILD_PRESETS, ResourcePreset } from '../../api/presets';
import { parseQuantity } from '../../api/quantity';
import { DEFAULT_RELEASE, RELEASES, ServerlessRelease, parseRelease, releaseFacts } from '../../api/release';
import { runtimeSupportNow } from '../../api/runtime-support';
import { CONTROLLER_NAMES } from '../../stack/controller';
import { DEFAULT_REGISTRY_NODE_PORT, INTERNAL_REGISTRY_NAME } from '../../stack/registry';
import { DEFAULT_SYSTEM_NAMESPACE, MANAGED_BY_LABEL, PRIORITY_CLASS_NAME, PRIORITY_CLASS_VALUE } from '../../stack/serverless-stack';
import { manifestFiles, parseManifests } from '../../policy/_manifest-files';
import { Cluster, ClusterOptions, connect, describeApiError, statusOf } from '../_kube';
import { CliError } from '../errors';
import { OutputFormat, isStructured, print, printDocument, table } from '../_output';
import { CustomKind, GATEWAY_API_GATEWAY, ISTIO_GATEWAY, crdNameOf } from '../_reach-kinds';
import {
  DeclaredReach, GatewayObject, ManifestObject, PublisherProxyFacts, ReachFacts, declaredReach, declaresReach, publisherProxyAddressOf, reachChecks,
  serviceOfAddress,
} from './reach';
import { PACKAGE_REGISTRY_SECRET, PackageRegistryFacts, checkPackageRegistry, functionPodLabels } from './buildless';
import { CheckId, CheckResult, CheckStatus, PreflightRelease, PreflightReport, ReleaseSource, fail, pass, skip } from './report';
import { FunctionRuntimeFact, checkRuntimeSupport } from './runtime-support';

export { CheckId, CheckStatus, ReleaseSource } from './report';
export { checkRuntimeSupport } from './runtime-support';
export type { FunctionRuntimeFact } from './runtime-support';
export type { CheckResult, PreflightRelease, PreflightReport } from './report';
export { PACKAGE_REGISTRY_SECRET, checkPackageRegistry, functionPodLabels, selects } from './buildless';
export type { PackageRegistryFacts } from './buildless';
export type {
  DeclaredKind, DeclaredReach, GatewayObject, GatewayReference, GatewayUse, LabelSelector, Labels, ManifestObject, PublisherProxyFacts, ReachFacts,
} from './reach';
export {
  PUBLISHER_PROXY_ENV, UPSTREAM_PUBLISHER_PROXY_ADDRESS, checkGatewayApiGateway, checkIstioGateway, checkPublisherProxy, checkRequiredKind,
  declaredReach, declaresReach, publisherProxyAddressOf, reachChecks, serviceOfAddress,
} from './reach';

/** The oldest Kubernetes the stack supports: its manifests are validated against 1.27's schema. */
const MIN_KUBERNETES = { major: 1, minor: 27 } as const;
/** Istio's injection webhooks are named `[rev.](namespace|object).sidecar-injector.istio.io`. */
const ISTIO_INJECTOR_SUFFIX = 'sidecar-injector.istio.io';
const ISTIO_INJECTION_LABEL = 'istio-injection';
const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
const RESOURCE_CONFIG_ENV = 'APP_FUNCTION_RESOURCE_CONFIG';

/** Options of {@link runPreflight}: the cluster options and the command's own. */
export interface PreflightOptions extends ClusterOptions {
  /**
   * The namespaces to check as Function namespaces.
   *
   * @default - `namespace` when given; else every namespace holding Functions or labelled
   * `app.kubernetes.io/managed-by=cdk8s-kyma-serverless`, except the system namespace
   */
  readonly namespaces?: readonly string[];
  /**
   * The namespace of the stack (controller, registry).
   *
   * @default 'kyma-system'
   */
  readonly systemNamespace?: string;
  /**
   * Whether the stack pushes to an external registry: the StorageClass and NodePort checks are skipped.
   *
   * @default false
   */
  readonly externalRegistry?: boolean;
  /**
   * The internal registry's NodePort.
   *
   * @default 32137
   */
  readonly nodePort?: number;
  /**
   * The folder of synthesized manifests (one folder, as `apply` takes it: subfolders hold other
   * environments), whose endpoints, Subscriptions, Gateways, Certificates, ScaledObjects and
   * monitoring objects are checked against the cluster; `false` (`--no-manifests`) to check none.
   *
   * @default - `dist` when that folder exists, else none
   */
  readonly manifests?: string | false;
  /**
   * The Serverless release the stack runs (`1.13.0`): which checks apply. 1.11.1 builds images (its
   * build Jobs need room in LimitRanges and quotas, its registry a volume and a NodePort); 1.13.0
   * builds nothing, and its Function Pods install their dependencies at start.
   *
   * @default - the release of the Function CRD in the manifests, else the cluster's, else 1.11.1
   */
  readonly release?: string;
  /**
   * The time the runtime support check judges the cluster's Functions at (tests fix it).
   *
   * @default - now, or the day the environment variable KYMA_SERVERLESS_TODAY gives
   */
  readonly now?: Date;
}

/** The folder `--manifests` reads when it exists, unless another one is given. */
export const DEFAULT_MANIFESTS = 'dist';

/** The settings the checks judge by, every default resolved. */
export interface PreflightSettings {
  /** The namespace of the stack. */
  readonly systemNamespace: string;
  /** Whether the registry is external (no volume, no NodePort). */
  readonly externalRegistry: boolean;
  /** The internal registry's NodePort. */
  readonly nodePort: number;
  /** The release given or read from the manifests; undefined to take the cluster's. */
  readonly release?: PreflightRelease;
}

/** Requests and limits of one build preset, as the quantities the controller reads. */
export interface BuildPresetQuantities {
  /** CPU requested, such as `500m`. */
  readonly requestCpu: string;
  /** Memory requested, such as `700Mi`. */
  readonly requestMemory: string;
  /** CPU limit, such as `1100m`. */
  readonly limitCpu: string;
  /** Memory limit, such as `1100Mi`. */
  readonly limitMemory: string;
}

/** The build presets the controller uses. */
export interface BuildPresets {
  /** The presets by name. */
  readonly presets: { readonly [name: string]: BuildPresetQuantities };
  /** The preset of a Function that names none. */
  readonly defaultPreset: string;
  /** Where they were read, for messages: the controller Deployment, or upstream's defaults. */
  readonly source: string;
}

/** What was read about one Function namespace. */
export interface NamespaceFacts {
  /** The namespace's name. */
  readonly name: string;
  /** The Namespace object; undefined when it does not exist. */
  readonly namespace?: V1Namespace;
  /** Its LimitRanges (none when it does not exist). */
  readonly limitRanges: readonly V1LimitRange[];
  /** Its ResourceQuotas (none when it does not exist). */
  readonly resourceQuotas: readonly V1ResourceQuota[];
}

/** Everything the checks judge, as read from the API server. */
export interface ClusterFacts {
  /** The body of `GET /version`. */
  readonly version: VersionInfo;
  /** Every MutatingWebhookConfiguration. */
  readonly mutatingWebhookConfigurations: readonly V1MutatingWebhookConfiguration[];
  /** The Function namespaces, sorted by name. */
  readonly functionNamespaces: readonly NamespaceFacts[];
  /** The build presets of the controller, or upstream's. */
  readonly buildPresets: BuildPresets;
  /** Every StorageClass; undefined when not read (external registry). */
  readonly storageClasses?: readonly V1StorageClass[];
  /** Every Service in every namespace; undefined when not read (external registry). */
  readonly services?: readonly V1Service[];
  /** The Function CRD; undefined when it is not installed. */
  readonly functionCrd?: V1CustomResourceDefinition;
  /** The stack's PriorityClass; undefined when it does not exist. */
  readonly priorityClass?: V1PriorityClass;
  /** What the checks of the manifests' endpoints and Subscriptions need; undefined when the manifests hold none. */
  readonly reach?: ReachFacts;
  /** The release checked for, where it came from, and the cluster's. */
  readonly release?: PreflightRelease;
  /** Under a buildless release: what the package registry check reads of each Function namespace. */
  readonly packageRegistry?: readonly PackageRegistryFacts[];
  /** The Functions in the cluster (or in the namespaces given), with their runtimes; undefined without a Function CRD. */
  readonly functions?: readonly FunctionRuntimeFact[];
  /**
   * When the facts were read: the runtime support check judges at this time.
   *
   * @default - now
   */
  readonly readAt?: Date;
}

// ---------------------------------------------------------------------------------------------
// Quantities

function quantity(text: string | number | undefined): number | undefined {
  return text === undefined ? undefined : parseQuantity(text);
}

/** CPU cores as Kubernetes writes them: `2`, `1500m`. */
function formatCpu(cores: number): string {
  const millis = Math.max(0, Math.round(cores * 1000));
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes in the largest binary unit that divides them: `2Gi`, `700Mi`. */
function formatMemory(bytes: number): string {
  const value = Math.max(0, Math.round(bytes));
  for (const [unit, size] of [['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
    if (value >= size && value % size === 0) return `${value / size}${unit}`;
  }
  return String(value);
}

/** The preset with the largest value of one field, and that value's text. */
function largest(presets: BuildPresets, field: keyof BuildPresetQuantities): { preset: string; text: string; value: number } {
  let best: { preset: string; text: string; value: number } | undefined;
  for (const [name, preset] of Object.entries(presets.presets)) {
    const value = quantity(preset[field]);
    if (value !== undefined && (best === undefined || value > best.value)) best = { preset: name, text: preset[field], value };
  }
  return best ?? { preset: 'none', text: '0', value: 0 };
}

// ---------------------------------------------------------------------------------------------
// Build presets

function quantitiesOf(preset: ResourcePreset): BuildPresetQuantities {
  return {
    requestCpu: preset.requestCpu.amount,
    requestMemory: preset.requestMemory.asString(),
    limitCpu: preset.limitCpu.amount,
    limitMemory: preset.limitMemory.asString(),
  };
}

/**
 * Upstream 1.11.1's build presets, for a cluster without our controller.
 *
 * @param source where they come from, for messages
 */
export function defaultBuildPresets(source = 'upstream defaults'): BuildPresets {
  return {
    presets: Object.fromEntries(Object.entries(DEFAULT_BUILD_PRESETS).map(([name, preset]) => [name, quantitiesOf(preset)])),
    defaultPreset: DEFAULT_FUNCTION_DEFAULTS.buildProfile,
    source,
  };
}

/**
 * The build presets a controller Deployment hands its container in `APP_FUNCTION_RESOURCE_CONFIG`
 * (`buildJob.resources.presets` and `defaultPreset`, as the stack's FunctionController writes it).
 *
 * @param deployment the controller Deployment; undefined when it is not installed
 * @returns its presets, or upstream's when the Deployment, the variable or its presets are missing or unreadable
 */
export function buildPresetsOf(deployment: V1Deployment | undefined): BuildPresets {
  if (!deployment) return defaultBuildPresets();
  const where = `${deployment.metadata?.namespace}/${deployment.metadata?.name}`;
  const env = (deployment.spec?.template?.spec?.containers ?? []).flatMap(c => c.env ?? []).find(e => e.name === RESOURCE_CONFIG_ENV);
  if (env?.value === undefined) return defaultBuildPresets(`upstream defaults (${where} sets no ${RESOURCE_CONFIG_ENV})`);
  let config: any;
  try {
    config = parseYaml(env.value);
  } catch (e) {
    return defaultBuildPresets(`upstream defaults (${RESOURCE_CONFIG_ENV} of ${where} is not YAML: ${(e as Error).message})`);
  }
  const resources = config?.buildJob?.resources;
  const presets: { [name: string]: BuildPresetQuantities } = {};
  for (const [name, preset] of Object.entries<any>(resources?.presets ?? {})) {
    const fields = ['requestCpu', 'requestMemory', 'limitCpu', 'limitMemory'] as const;
    if (fields.every(f => preset?.[f] !== undefined && quantity(preset[f]) !== undefined)) {
      presets[name] = Object.fromEntries(fields.map(f => [f, String(preset[f])])) as unknown as BuildPresetQuantities;
    }
  }
  if (Object.keys(presets).length === 0) return defaultBuildPresets(`upstream defaults (${RESOURCE_CONFIG_ENV} of ${where} has no build presets)`);
  const named = typeof resources.defaultPreset === 'string' && resources.defaultPreset in presets;
  return {
    presets,
    defaultPreset: named ? resources.defaultPreset : DEFAULT_FUNCTION_DEFAULTS.buildProfile,
    source: where,
  };
}

// ---------------------------------------------------------------------------------------------
// Function namespaces

/**
 * The namespaces to check as Function namespaces: the ones given, else those holding Functions
 * or labelled `app.kubernetes.io/managed-by=cdk8s-kyma-serverless`, except the system namespace.
 *
 * @param given the namespaces from `--namespaces` or `-n`; undefined to discover them
 * @param namespaces every Namespace of the cluster
 * @param functionNamespaces the namespaces of every Function
 * @param systemNamespace the stack's namespace, never a Function namespace when discovered
 * @returns the names, sorted and without duplicates
 */
export function selectFunctionNamespaces(given: readonly string[] | undefined, namespaces: readonly V1Namespace[],
  functionNamespaces: readonly string[], systemNamespace: string): string[] {
  const names = given ?? [
    ...functionNamespaces,
    ...namespaces.filter(n => n.metadata?.labels?.[MANAGED_BY_LABEL.key] === MANAGED_BY_LABEL.value).map(n => n.metadata?.name ?? ''),
  ].filter(n => n && n !== systemNamespace);
  return [...new Set(names)].sort();
}

// ---------------------------------------------------------------------------------------------
// The checks

/**
 * The major and minor version of an API server: from `major` and `minor` (a minor such as `27+`
 * counts as 27), else from `gitVersion` (`v1.27.3-gke.100`).
 *
 * @returns undefined when neither says
 */
export function parseServerVersion(version: VersionInfo): { readonly major: number; readonly minor: number } | undefined {
  const major = /^\d+/.exec(version.major ?? '');
  const minor = /^\d+/.exec(version.minor ?? '');
  if (major && minor) return { major: Number(major[0]), minor: Number(minor[0]) };
  const git = /^v?(\d+)\.(\d+)/.exec(version.gitVersion ?? '');
  return git ? { major: Number(git[1]), minor: Number(git[2]) } : undefined;
}

/** Check 1: the API server is Kubernetes 1.27 or later. */
export function checkServerVersion(version: VersionInfo): CheckResult {
  const title = 'server version';
  const needs = `needs ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor} or later`;
  const fix = `upgrade the cluster to Kubernetes ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor} or later`;
  const parsed = parseServerVersion(version);
  const shown = version.gitVersion || `${version.major}.${version.minor}`;
  if (!parsed) {
    const found = `major "${version.major}", minor "${version.minor}", gitVersion "${version.gitVersion}"`;
    return fail(CheckId.SERVER_VERSION, title, `cannot tell the version from ${found} (${needs})`, fix);
  }
  const ok = parsed.major > MIN_KUBERNETES.major || (parsed.major === MIN_KUBERNETES.major && parsed.minor >= MIN_KUBERNETES.minor);
  return ok
    ? pass(CheckId.SERVER_VERSION, title, `${shown} (${needs})`)
    : fail(CheckId.SERVER_VERSION, title, `${shown} is too old (${needs})`, fix);
}

/** Check 2: some MutatingWebhookConfiguration has Istio's sidecar injector webhook. */
export function checkIstioInjector(configurations: readonly V1MutatingWebhookConfiguration[]): CheckResult {
  const title = 'istio injector';
  for (const configuration of configurations) {
    const webhook = (configuration.webhooks ?? []).find(w => w.name.endsWith(ISTIO_INJECTOR_SUFFIX));
    if (webhook) {
      return pass(CheckId.ISTIO_INJECTOR, title, `MutatingWebhookConfiguration ${configuration.metadata?.name} has webhook ${webhook.name}`);
    }
  }
  return fail(CheckId.ISTIO_INJECTOR, title,
    `no MutatingWebhookConfiguration has a *.${ISTIO_INJECTOR_SUFFIX} webhook: Function Pods would get no Istio sidecar`,
    'install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio)');
}

/** Check 3: a Function namespace exists and is labelled `istio-injection=enabled`. */
export function checkNamespaceInjection(facts: NamespaceFacts): CheckResult {
  const ns = facts.name;
  const title = `istio-injection ${ns}`;
  const label = `kubectl label namespace ${ns} ${ISTIO_INJECTION_LABEL}=enabled --overwrite`;
  if (!facts.namespace) {
    return fail(CheckId.NAMESPACE_INJECTION, title, `namespace ${ns} does not exist`,
      `create it (FunctionNamespace does), or: kubectl create namespace ${ns} && ${label}`, ns);
  }
  const value = facts.namespace.metadata?.labels?.[ISTIO_INJECTION_LABEL];
  if (value === 'enabled') return pass(CheckId.NAMESPACE_INJECTION, title, `namespace ${ns} is labelled ${ISTIO_INJECTION_LABEL}=enabled`, ns);
  const found = value === undefined ? 'is not labelled' : `is labelled ${ISTIO_INJECTION_LABEL}=${value}, not`;
  return fail(CheckId.NAMESPACE_INJECTION, title, `namespace ${ns} ${found} ${ISTIO_INJECTION_LABEL}=enabled`, label, ns);
}

/**
 * Check 4: every LimitRange of a Function namespace allows, per Container and per Pod, the
 * largest limit CPU and the largest limit memory among the build presets.
 */
export function checkLimitRanges(facts: NamespaceFacts, presets: BuildPresets): CheckResult {
  const ns = facts.name;
  const title = `limitrange ${ns}`;
  if (!facts.namespace) return skip(CheckId.LIMIT_RANGE, title, `namespace ${ns} does not exist`, ns);
  const cpu = largest(presets, 'limitCpu');
  const memory = largest(presets, 'limitMemory');
  const needs = `build Jobs need cpu ${cpu.text} (preset ${cpu.preset}), memory ${memory.text} (preset ${memory.preset})`;
  const problems: string[] = [];
  const fixes: string[] = [];
  for (const limitRange of facts.limitRanges) {
    const name = limitRange.metadata?.name;
    for (const item of limitRange.spec?.limits ?? []) {
      if ((item.type !== 'Container' && item.type !== 'Pod') || !item.max) continue;
      const short: string[] = [];
      const raise: string[] = [];
      const maxCpu = quantity(item.max.cpu);
      const maxMemory = quantity(item.max.memory);
      if (maxCpu !== undefined && maxCpu < cpu.value) {
        short.push(`cpu ${item.max.cpu}`);
        raise.push(`cpu ${cpu.text}`);
      }
      if (maxMemory !== undefined && maxMemory < memory.value) {
        short.push(`memory ${item.max.memory}`);
        raise.push(`memory ${memory.text}`);
      }
      if (short.length) {
        problems.push(`LimitRange ${name} allows at most ${short.join(', ')} per ${item.type}`);
        fixes.push(`raise the ${item.type} max of LimitRange ${name} to at least ${raise.join(', ')} (FunctionNamespace's LimitRange does): `
          + `kubectl edit limitrange ${name} -n ${ns}`);
      }
    }
  }
  if (problems.length) return fail(CheckId.LIMIT_RANGE, title, `${problems.join('; ')}; ${needs}`, fixes.join('; '), ns);
  if (!facts.limitRanges.length) return pass(CheckId.LIMIT_RANGE, title, 'no LimitRange', ns);
  const names = facts.limitRanges.map(l => l.metadata?.name).join(', ');
  const allows = facts.limitRanges.length > 1 ? `LimitRanges ${names} allow` : `LimitRange ${names} allows`;
  return pass(CheckId.LIMIT_RANGE, title, `${allows} the build presets' limits (cpu ${cpu.text}, memory ${memory.text})`, ns);
}

enum Amount { CPU, MEMORY, COUNT }

/** The quota resources a build Job counts against, and how much of each one Job takes. */
const BUILD_JOB_QUOTA: ReadonlyArray<{ key: string; amount: Amount; need: (preset: BuildPresetQuantities) => string }> = [
  { key: 'requests.cpu', amount: Amount.CPU, need: p => p.requestCpu },
  { key: 'cpu', amount: Amount.CPU, need: p => p.requestCpu },
  { key: 'requests.memory', amount: Amount.MEMORY, need: p => p.requestMemory },
  { key: 'memory', amount: Amount.MEMORY, need: p => p.requestMemory },
  { key: 'limits.cpu', amount: Amount.CPU, need: p => p.limitCpu },
  { key: 'limits.memory', amount: Amount.MEMORY, need: p => p.limitMemory },
  { key: 'pods', amount: Amount.COUNT, need: () => '1' },
  { key: 'count/jobs.batch', amount: Amount.COUNT, need: () => '1' },
];

function formatAmount(amount: Amount, value: number): string {
  switch (amount) {
    case Amount.CPU: return formatCpu(value);
    case Amount.MEMORY: return formatMemory(value);
    default: return String(Math.max(0, value));
  }
}

/**
 * Check 5: every ResourceQuota of a Function namespace leaves room (hard minus used) for one
 * build Job of the default build preset: its requests and limits, one Pod and one Job.
 */
export function checkQuotas(facts: NamespaceFacts, presets: BuildPresets): CheckResult {
  const ns = facts.name;
  const title = `quota ${ns}`;
  if (!facts.namespace) return skip(CheckId.QUOTA, title, `namespace ${ns} does not exist`, ns);
  const presetName = presets.defaultPreset in presets.presets ? presets.defaultPreset : Object.keys(presets.presets)[0];
  const preset = presets.presets[presetName];
  const problems: string[] = [];
  const fixes: string[] = [];
  for (const quota of facts.resourceQuotas) {
    const name = quota.metadata?.name;
    const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
    const used = quota.status?.used ?? {};
    const short: string[] = [];
    const raise: string[] = [];
    for (const { key, amount, need } of BUILD_JOB_QUOTA) {
      const limit = quantity(hard[key]);
      if (limit === undefined) continue;
      const taken = quantity(used[key]) ?? 0;
      const needed = quantity(need(preset)) ?? 0;
      if (limit - taken < needed) {
        short.push(`${key} ${formatAmount(amount, limit - taken)} (needs ${need(preset)})`);
        raise.push(`${key} ${formatAmount(amount, taken + needed)}`);
      }
    }
    if (short.length) {
      problems.push(`ResourceQuota ${name} has room for ${short.join(', ')}`);
      fixes.push(`raise spec.hard of ResourceQuota ${name} to at least ${raise.join(', ')}, or free what is used: `
        + `kubectl edit resourcequota ${name} -n ${ns}`);
    }
  }
  if (problems.length) {
    return fail(CheckId.QUOTA, title, `${problems.join('; ')}: no room for a build Job of the default preset ${presetName}`, fixes.join('; '), ns);
  }
  if (!facts.resourceQuotas.length) return pass(CheckId.QUOTA, title, 'no ResourceQuota', ns);
  const names = facts.resourceQuotas.map(q => q.metadata?.name).join(', ');
  return pass(CheckId.QUOTA, title, `ResourceQuota ${names} has room for a build Job (preset ${presetName})`, ns);
}

/** Check 6: a default StorageClass exists, for the internal registry's PersistentVolumeClaim. */
export function checkStorageClass(classes: readonly V1StorageClass[] | undefined, settings: PreflightSettings): CheckResult {
  const title = 'storage class';
  if (settings.externalRegistry || classes === undefined) return skip(CheckId.STORAGE_CLASS, title, 'external registry: no volume to provision');
  const defaults = classes.filter(c => DEFAULT_CLASS_ANNOTATIONS.some(a => c.metadata?.annotations?.[a] === 'true')).map(c => c.metadata?.name);
  if (defaults.length) {
    const are = defaults.length > 1 ? 'are marked' : 'is the';
    return pass(CheckId.STORAGE_CLASS, title, `${defaults.join(', ')} ${are} default (the registry's volume uses it)`);
  }
  const names = classes.map(c => c.metadata?.name ?? '').sort();
  const some = names[0] ?? '<name>';
  const found = names.length ? `none of ${names.join(', ')} is marked default` : 'the cluster has no StorageClass';
  return fail(CheckId.STORAGE_CLASS, title, `no default StorageClass (${found}): the internal registry's PersistentVolumeClaim would stay Pending`,
    `mark one default: kubectl patch storageclass ${some} -p '{"metadata":{"annotations":{"${DEFAULT_CLASS_ANNOTATIONS[0]}":"true"}}}', `
    + `or set Registry.internal({ storageClassName: '${some}' })`);
}

/** Check 7: no Service but the internal registry's own holds the registry's NodePort. */
export function checkNodePort(services: readonly V1Service[] | undefined, settings: PreflightSettings): CheckResult {
  const title = 'node port';
  const port = settings.nodePort;
  if (settings.externalRegistry || services === undefined) return skip(CheckId.NODE_PORT, title, 'external registry: no NodePort');
  const holders = services.filter(s => (s.spec?.ports ?? []).some(p => p.nodePort === port));
  const ours = (s: V1Service) => s.metadata?.namespace === settings.systemNamespace && s.metadata?.name === INTERNAL_REGISTRY_NAME;
  const others = holders.filter(s => !ours(s));
  if (others.length) {
    const names = others.map(s => `${s.metadata?.namespace}/${s.metadata?.name}`);
    const first = others[0].metadata!;
    return fail(CheckId.NODE_PORT, title, `NodePort ${port} is taken by Service ${names.join(', ')}`,
      `free it (kubectl edit service ${first.name} -n ${first.namespace}), or set Registry.internal({ nodePort }) and --node-port to a free port`);
  }
  if (!holders.length) return pass(CheckId.NODE_PORT, title, `NodePort ${port} is free`);
  return pass(CheckId.NODE_PORT, title, `NodePort ${port} is the registry's own (${settings.systemNamespace}/${INTERNAL_REGISTRY_NAME})`);
}

/** Check 8: the Function CRD is absent (the stack installs it) or serves and stores `v1alpha2`. */
export function checkFunctionCrd(crd: V1CustomResourceDefinition | undefined): CheckResult {
  const title = 'function crd';
  if (!crd) return pass(CheckId.FUNCTION_CRD, title, `${FUNCTION_CRD_NAME} is absent: the stack installs it`);
  const versions = crd.spec?.versions ?? [];
  const version = versions.find(v => v.name === FUNCTION_VERSION);
  const listed = versions.map(v => `${v.name}${v.served ? '' : ' (not served)'}${v.storage ? ' (storage)' : ''}`).join(', ') || 'none';
  const apply = `apply the stack's CRD, which serves and stores ${FUNCTION_VERSION}`;
  if (!version) {
    return fail(CheckId.FUNCTION_CRD, title, `${FUNCTION_CRD_NAME} has no version ${FUNCTION_VERSION} (versions: ${listed})`,
      `${apply}; migrate Functions stored in other versions first`);
  }
  if (!version.served) {
    return fail(CheckId.FUNCTION_CRD, title, `${FUNCTION_CRD_NAME} does not serve ${FUNCTION_VERSION} (versions: ${listed})`,
      `set served: true on ${FUNCTION_VERSION}: ${apply}`);
  }
  if (!version.storage) {
    return fail(CheckId.FUNCTION_CRD, title, `${FUNCTION_CRD_NAME} stores another version than ${FUNCTION_VERSION} (versions: ${listed})`,
      `make ${FUNCTION_VERSION} the storage version: ${apply}`);
  }
  return pass(CheckId.FUNCTION_CRD, title, `${FUNCTION_CRD_NAME} serves and stores ${FUNCTION_VERSION}`);
}

/** Check 9: the PriorityClass `serverless-priority` is absent, or has the stack's value. */
export function checkPriorityClass(priorityClass: V1PriorityClass | undefined): CheckResult {
  const title = 'priority class';
  if (!priorityClass) {
    return pass(CheckId.PRIORITY_CLASS, title, `${PRIORITY_CLASS_NAME} is absent: the stack creates it with value ${PRIORITY_CLASS_VALUE}`);
  }
  if (priorityClass.value === PRIORITY_CLASS_VALUE) {
    return pass(CheckId.PRIORITY_CLASS, title, `${PRIORITY_CLASS_NAME} has value ${PRIORITY_CLASS_VALUE}`);
  }
  return fail(CheckId.PRIORITY_CLASS, title, `${PRIORITY_CLASS_NAME} has value ${priorityClass.value}; the stack sets ${PRIORITY_CLASS_VALUE}`,
    `the value is immutable: kubectl delete priorityclass ${PRIORITY_CLASS_NAME}, then sync the stack`);
}

/**
 * Runs every check on what was read.
 *
 * @param facts what was read from the cluster
 * @param settings the resolved settings
 * @param declared what the manifests declare to reach Functions; their checks come last, each only
 * when the manifests hold such objects (see {@link reachChecks})
 * @returns the report: the checks in a fixed order, per-namespace checks grouped by check
 */
export function judge(facts: ClusterFacts, settings: PreflightSettings, declared?: DeclaredReach): PreflightReport {
  const namespaces = facts.functionNamespaces;
  const perNamespace = (check: (ns: NamespaceFacts) => CheckResult, id: CheckId, title: string) => (namespaces.length
    ? namespaces.map(check)
    : [skip(id, title, 'no Function namespaces found: give --namespaces (or -n) to check some')]);
  const release = facts.release ?? { release: DEFAULT_RELEASE, source: ReleaseSource.DEFAULT };
  const builds = releaseFacts(release.release).buildsImages;
  const packageRegistry = new Map((facts.packageRegistry ?? []).map(p => [p.name, p]));
  const checks = [
    checkServerVersion(facts.version),
    checkIstioInjector(facts.mutatingWebhookConfigurations),
    ...perNamespace(checkNamespaceInjection, CheckId.NAMESPACE_INJECTION, 'istio-injection'),
    // Build Jobs (1.11.1) need room in LimitRanges and quotas, the internal registry a volume and a NodePort; 1.13.0 builds nothing.
    ...(builds ? [
      ...perNamespace(ns => checkLimitRanges(ns, facts.buildPresets), CheckId.LIMIT_RANGE, 'limitrange'),
      ...perNamespace(ns => checkQuotas(ns, facts.buildPresets), CheckId.QUOTA, 'quota'),
      checkStorageClass(facts.storageClasses, settings),
      checkNodePort(facts.services, settings),
    ] : perNamespace(ns => checkPackageRegistry(packageRegistry.get(ns.name)
      ?? { name: ns.name, exists: ns.namespace !== undefined, registrySecret: false, networkPolicies: [], functionPods: {} }),
    CheckId.PACKAGE_REGISTRY, 'package registry')),
    checkFunctionCrd(facts.functionCrd),
    ...[checkRuntimeSupport(facts.functions, release.release, facts.readAt ?? runtimeSupportNow())].filter((c): c is CheckResult => c !== undefined),
    checkPriorityClass(facts.priorityClass),
    ...(declaresReach(declared) && facts.reach ? reachChecks(declared, facts.reach) : []),
  ];
  return { ok: checks.every(c => c.status !== CheckStatus.FAIL), release, checks };
}

/**
 * The first line of the report: the release checked for and where it was read; a cluster whose
 * Function CRD is of another release is about to move (or the manifests are not its own).
 */
export function describeRelease(release: PreflightRelease): string {
  const clusterRelease = release.cluster;
  const from = release.source === ReleaseSource.GIVEN ? '--release'
    : release.source === ReleaseSource.MANIFESTS ? `the Function CRD in ${release.file}`
      : release.source === ReleaseSource.CLUSTER ? 'the cluster\'s Function CRD'
        : 'the default: no --release, and no Function CRD in the manifests or the cluster';
  const what = releaseFacts(release.release).buildsImages ? 'build-based' : 'buildless: no build Jobs or registry; dependencies install at Pod start';
  const moving = clusterRelease && clusterRelease !== release.release
    ? `; the cluster's Function CRD is of ${clusterRelease}: applying moves it to ${release.release} (see docs/changing-a-running-system.md)` : '';
  return `Checked for Serverless ${release.release}, ${what} (from ${from})${moving}.`;
}

// ---------------------------------------------------------------------------------------------
// Reading

/**
 * Reads what the checks need from the API server.
 *
 * @param cluster the cluster
 * @param settings the resolved settings
 * @param given the Function namespaces given on the command line; undefined to discover them
 * @param declared what the manifests declare to reach Functions: the CRDs, Gateways and Services their checks need are read too
 * @throws CliError when the API server cannot be reached or refuses a read
 */
export async function readCluster(cluster: Cluster, settings: PreflightSettings, given?: readonly string[],
  declared?: DeclaredReach): Promise<ClusterFacts> {
  const k8s = await import('@kubernetes/client-node');
  const kc = cluster.kubeConfig;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const read = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (e) {
      throw describeApiError(e, what, cluster);
    }
  };
  const readOptional = async <T>(what: string, call: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await call();
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw describeApiError(e, what, cluster);
    }
  };

  // The version first and alone: an unreachable server then reports one clear error.
  const version = await read('reading the server version', () => kc.makeApiClient(k8s.VersionApi).getCode());
  const [configurations, namespaces, functionCrd, controller, storageClasses, services, priorityClass] = await Promise.all([
    read('listing MutatingWebhookConfigurations', () => kc.makeApiClient(k8s.AdmissionregistrationV1Api).listMutatingWebhookConfiguration()),
    read('listing Namespaces', () => core.listNamespace()),
    readOptional(`reading CustomResourceDefinition ${FUNCTION_CRD_NAME}`,
      () => kc.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: FUNCTION_CRD_NAME })),
    readOptional(`reading Deployment ${settings.systemNamespace}/${CONTROLLER_NAMES.deployment}`,
      () => kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: CONTROLLER_NAMES.deployment, namespace: settings.systemNamespace })),
    settings.externalRegistry ? undefined : read('listing StorageClasses', () => kc.makeApiClient(k8s.StorageV1Api).listStorageClass()),
    settings.externalRegistry ? undefined : read('listing Services in all namespaces', () => core.listServiceForAllNamespaces()),
    readOptional(`reading PriorityClass ${PRIORITY_CLASS_NAME}`,
      () => kc.makeApiClient(k8s.SchedulingV1Api).readPriorityClass({ name: PRIORITY_CLASS_NAME })),
  ]);

  type FunctionItem = { metadata?: { namespace?: string; name?: string }; spec?: { runtime?: string } };
  let functionNamespaces: string[] = [];
  let listed: FunctionItem[] | undefined;
  if (given === undefined && functionCrd) {
    const plural = functionCrd.spec.names.plural;
    const functions = await readOptional(`listing Functions (${plural}.${functionCrd.spec.group}) in all namespaces`,
      () => kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({ group: functionCrd.spec.group, version: FUNCTION_VERSION, plural }));
    listed = (functions?.items ?? []) as FunctionItem[];
    functionNamespaces = listed.map(f => f.metadata?.namespace ?? '');
  }
  const names = selectFunctionNamespaces(given, namespaces.items, functionNamespaces, settings.systemNamespace);
  if (given !== undefined && functionCrd) {
    // Only the namespaces given: the Functions of each that exists.
    const lists = await Promise.all(names.filter(name => byNameOf(namespaces.items).has(name)).map(name => readOptional(`listing Functions in namespace ${name}`,
      () => kc.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({ group: functionCrd.spec.group, version: FUNCTION_VERSION, namespace: name, plural: functionCrd.spec.names.plural }))));
    listed = lists.flatMap(list => ((list as { items?: unknown[] } | undefined)?.items ?? []) as FunctionItem[]);
  }
  const readAt = runtimeSupportNow();
  const functions: FunctionRuntimeFact[] | undefined = listed?.map(f => ({
    namespace: f.metadata?.namespace ?? '', name: f.metadata?.name ?? '', ...(typeof f.spec?.runtime === 'string' ? { runtime: f.spec.runtime } : {}),
  }));
  const byName = new Map(namespaces.items.map(n => [n.metadata?.name, n]));
  let clusterRelease: ServerlessRelease | undefined;
  try {
    clusterRelease = functionCrd ? functionCrdRelease(functionCrd).release : undefined;
  } catch {
    // An annotation that names no release of this package: the cluster's release stays unknown.
  }
  const release: PreflightRelease = {
    ...settings.release ?? (clusterRelease ? { release: clusterRelease, source: ReleaseSource.CLUSTER } : { release: DEFAULT_RELEASE, source: ReleaseSource.DEFAULT }),
    ...(clusterRelease ? { cluster: clusterRelease } : {}),
  };

  /** Under a buildless release: the registry Secret's existence (never its content), the NetworkPolicies and the Functions of a namespace. */
  async function readPackageRegistry(name: string): Promise<PackageRegistryFacts> {
    if (!byName.has(name)) return { name, exists: false, registrySecret: false, networkPolicies: [], functionPods: {} };
    const [secret, policies, functions] = await Promise.all([
      readOptional(`reading Secret ${name}/${PACKAGE_REGISTRY_SECRET}`, async () => {
        await core.readNamespacedSecret({ name: PACKAGE_REGISTRY_SECRET, namespace: name });
        return true;
      }),
      read(`listing NetworkPolicies in namespace ${name}`, () => kc.makeApiClient(k8s.NetworkingV1Api).listNamespacedNetworkPolicy({ namespace: name })),
      functionCrd ? readOptional(`listing Functions in namespace ${name}`, () => kc.makeApiClient(k8s.CustomObjectsApi)
        .listNamespacedCustomObject({ group: functionCrd.spec.group, version: FUNCTION_VERSION, namespace: name, plural: functionCrd.spec.names.plural }))
        : undefined,
    ]);
    const items = ((functions as { items?: unknown[] } | undefined)?.items ?? []) as Parameters<typeof functionPodLabels>[0][];
    return {
      name,
      exists: true,
      registrySecret: secret === true,
      networkPolicies: policies.items,
      functionPods: Object.fromEntries(items.map(fn => [fn.metadata?.name ?? '', functionPodLabels(fn)])),
    };
  }
  const packageRegistry = releaseFacts(release.release).buildsImages ? undefined : await Promise.all(names.map(readPackageRegistry));
  const perNamespace = await Promise.all(names.map(async (name): Promise<NamespaceFacts> => {
    const namespace = byName.get(name);
    if (!namespace) return { name, limitRanges: [], resourceQuotas: [] };
    const [limitRanges, resourceQuotas] = await Promise.all([
      read(`listing LimitRanges in namespace ${name}`, () => core.listNamespacedLimitRange({ namespace: name })),
      read(`listing ResourceQuotas in namespace ${name}`, () => core.listNamespacedResourceQuota({ namespace: name })),
    ]);
    return { name, namespace, limitRanges: limitRanges.items, resourceQuotas: resourceQuotas.items };
  }));

  /** The CRDs of the kinds the manifests hold (but those they install), the Gateways they name, and the publisher proxy. */
  async function readReach(wanted: DeclaredReach): Promise<ReachFacts> {
    const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const readCrd = async (name: string) => [name, await readOptional(`reading CustomResourceDefinition ${name}`,
      () => extensions.readCustomResourceDefinition({ name }))] as const;
    // Every Gateway of a kind, when some Gateway named is not created by the manifests; undefined when the kind is not served.
    const listGateways = async (kind: CustomKind, needed: boolean): Promise<GatewayObject[] | undefined> => {
      if (!needed) return undefined;
      const { group, version, plural } = kind;
      const list = await readOptional(`listing ${kind.kind}s (${crdNameOf(kind)}) in all namespaces`,
        () => custom.listClusterCustomObject({ group, version, plural }));
      return list?.items;
    };
    const [crds, istioGateways, gatewayApiGateways, publisherProxy] = await Promise.all([
      Promise.all(wanted.kinds.filter(k => !wanted.crds.has(k.crd)).map(k => readCrd(k.crd))),
      listGateways(ISTIO_GATEWAY, wanted.istioGateways.some(use => !use.created)),
      listGateways(GATEWAY_API_GATEWAY, wanted.gatewayApiGateways.some(use => !use.created)),
      wanted.subscriptions.length ? readPublisherProxy(wanted) : undefined,
    ]);
    return {
      crds: new Map(crds),
      ...(istioGateways ? { istioGateways } : {}),
      ...(gatewayApiGateways ? { gatewayApiGateways } : {}),
      namespaceLabels: new Map(namespaces.items.map(n => [n.metadata?.name ?? '', { ...n.metadata?.labels }])),
      ...(publisherProxy ? { publisherProxy } : {}),
    };
  }

  /** The publisher proxy's address (see {@link publisherProxyAddressOf}) and whether the Service it names exists. */
  async function readPublisherProxy(wanted: DeclaredReach): Promise<PublisherProxyFacts> {
    const { address, source } = publisherProxyAddressOf(wanted, controller);
    const service = serviceOfAddress(address);
    if (!service) return { address, source };
    const found = await readOptional(`reading Service ${service.namespace}/${service.name}`,
      () => core.readNamespacedService({ name: service.name, namespace: service.namespace }));
    return { address, source, service: { ...service, exists: found !== undefined } };
  }

  const reach = declaresReach(declared) ? await readReach(declared) : undefined;
  return {
    version,
    mutatingWebhookConfigurations: configurations.items,
    functionNamespaces: perNamespace,
    buildPresets: buildPresetsOf(controller),
    storageClasses: storageClasses?.items,
    services: services?.items,
    functionCrd,
    priorityClass,
    ...(reach ? { reach } : {}),
    release,
    ...(packageRegistry ? { packageRegistry } : {}),
    ...(functions ? { functions } : {}),
    readAt,
  };
}

/** Namespaces by name. */
function byNameOf(namespaces: readonly V1Namespace[]): Map<string | undefined, V1Namespace> {
  return new Map(namespaces.map(n => [n.metadata?.name, n]));
}

/** The settings of options, every default resolved. */
export function preflightSettings(options: PreflightOptions, manifests?: ManifestsRead): PreflightSettings {
  let given: ServerlessRelease | undefined;
  try {
    given = options.release === undefined ? undefined : parseRelease(options.release, '--release');
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const crd = manifests?.objects.find(o => isFunctionCrd(o.object));
  let inManifests: { release: ServerlessRelease; evidence: CrdReleaseEvidence } | undefined;
  try {
    inManifests = crd && functionCrdRelease(crd.object);
  } catch (e) {
    throw new CliError(`${crd!.file}: ${(e as Error).message} (kyma-serverless validate ${manifests!.dir} says more)`);
  }
  if (given && inManifests && given !== inManifests.release) {
    throw new CliError(`--release ${given} differs from the release of the Function CRD in ${crd!.file} (${inManifests.release}): `
      + 'give that release, or none, or --no-manifests to check the cluster for another release');
  }
  const release = given ? { release: given, source: ReleaseSource.GIVEN }
    : inManifests ? { release: inManifests.release, source: ReleaseSource.MANIFESTS, file: crd!.file } : undefined;
  return {
    systemNamespace: options.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE,
    externalRegistry: options.externalRegistry ?? false,
    nodePort: options.nodePort ?? DEFAULT_REGISTRY_NODE_PORT,
    ...(release ? { release } : {}),
  };
}

/**
 * Reads a cluster and checks it.
 *
 * @param options the cluster (kubeconfig, context, `-n`) and the command's options
 * @returns the report; `ok` is false when a check failed
 * @throws CliError when the kubeconfig cannot be used, or the API server cannot be reached or refuses a read
 */
export async function runPreflight(options: PreflightOptions): Promise<PreflightReport> {
  const manifests = readManifests(options.manifests);
  const declared = manifests && declaredReach(manifests.objects);
  const settings = preflightSettings(options, manifests);
  const cluster = await connect(options);
  const given = options.namespaces ?? (options.namespace ? [options.namespace] : undefined);
  const facts = await readCluster(cluster, settings, given, declared);
  return judge(options.now ? { ...facts, readAt: options.now } : facts, settings, declared);
}

/**
 * What the manifests of a folder declare to reach Functions: the `*.yaml` files of the folder, not
 * of its subfolders, which hold other environments (as `apply` reads a folder).
 *
 * @param manifests the folder; `false` for none; undefined for `dist` when it exists
 * @returns undefined when no folder is read
 * @throws CliError when a folder given does not exist, or a document does not parse
 */
export function readDeclaredReach(manifests: string | false | undefined): DeclaredReach | undefined {
  const read = readManifests(manifests);
  return read && declaredReach(read.objects);
}

/** The objects of a folder of manifests, as {@link readDeclaredReach} reads them. */
export interface ManifestsRead {
  /** The folder. */
  readonly dir: string;
  /** Its objects, each with its file. */
  readonly objects: readonly ManifestObject[];
}

/**
 * The objects of a folder of manifests (its `*.yaml` files, not its subfolders').
 *
 * @param manifests the folder; `false` for none; undefined for `dist` when it exists
 * @returns undefined when no folder is read
 * @throws CliError when a folder given does not exist, or a document does not parse
 */
export function readManifests(manifests: string | false | undefined): ManifestsRead | undefined {
  if (manifests === false) return undefined;
  const dir = manifests ?? DEFAULT_MANIFESTS;
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    if (manifests === undefined) return undefined;
    throw new CliError(`No folder ${dir}: give --manifests the folder synth writes to, such as dist (or dist/prod), or --no-manifests`);
  }
  const problems: string[] = [];
  const objects: ManifestObject[] = [];
  for (const file of manifestFiles(dir, false)) {
    parseManifests(fs.readFileSync(file, 'utf8')).forEach(({ object, error }, index) => {
      if (error !== undefined) problems.push(`${file}: document ${index + 1} does not parse: ${error.split('\n')[0]}`);
      else if (object && typeof object === 'object' && !Array.isArray(object)) objects.push({ file: path.normalize(file), object });
    });
  }
  if (problems.length) {
    throw new CliError(`Cannot read the manifests of ${dir} (kyma-serverless validate ${dir} checks more):\n${problems.map(p => `  ${p}`).join('\n')}`);
  }
  return { dir, objects };
}

// ---------------------------------------------------------------------------------------------
// Output and the command

/**
 * The report as a table: one line per check (result, check, detail), each failure's fix
 * indented on the line after it, and a summary.
 *
 * @returns the lines, without a trailing newline
 */
export function formatReport(report: PreflightReport): string {
  const header = ['RESULT', 'CHECK', 'DETAIL'];
  const lines = table(header, report.checks.map(c => [c.status, c.title, c.detail])).split('\n');
  const indent = ' '.repeat(Math.max(header[0].length, ...report.checks.map(c => c.status.length)) + 2);
  const out = [describeRelease(report.release), '', lines[0]];
  report.checks.forEach((check, i) => {
    out.push(lines[i + 1]);
    if (check.fix) out.push(`${indent}fix: ${check.fix}`);
  });
  const count = (status: CheckStatus) => report.checks.filter(c => c.status === status).length;
  const [passed, failed, skipped, warned] = [count(CheckStatus.PASS), count(CheckStatus.FAIL), count(CheckStatus.SKIP), count(CheckStatus.WARN)];
  const tally = `${passed} passed, ${failed} failed${warned ? `, ${warned} warned` : ''}${skipped ? `, ${skipped} skipped` : ''}`;
  out.push('', failed ? `Preflight failed (${tally}): apply the fixes above and run it again.` : `Preflight passed (${tally}).`);
  return out.join('\n');
}

function namespaceList(value: string): string[] {
  const names = value.split(',').map(n => n.trim()).filter(Boolean);
  const bad = names.filter(n => !isDns1123Label(n));
  if (!names.length) throw new InvalidArgumentError('give at least one namespace, such as --namespaces team-a,team-b');
  if (bad.length) {
    const are = bad.length > 1 ? 'are not namespace names' : 'is not a namespace name';
    throw new InvalidArgumentError(`${bad.join(', ')} ${are} (at most 63 lower-case letters, digits and '-')`);
  }
  return names;
}

function nodePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 30000 || n > 32767) throw new InvalidArgumentError('must be a NodePort from 30000 to 32767');
  return n;
}

/** The options commander hands the action: the global ones and `preflight`'s own. */
interface PreflightCommandOptions extends PreflightOptions {
  readonly output: OutputFormat;
}

/** Adds `preflight` to a program; the program gives the global options (`--kubeconfig`, `-n`, `-o`, ...). */
export function addPreflightCommand(program: Command): void {
  program.command('preflight')
    .description('Check that a cluster is ready for the stack and its Functions; print a fix for each problem')
    .option('--namespaces <list>', 'comma-separated Function namespaces to check (default: -n, else the namespaces holding Functions '
      + 'or made by FunctionNamespace)', namespaceList)
    .option('--system-namespace <namespace>', 'namespace of the stack', DEFAULT_SYSTEM_NAMESPACE)
    .option('--external-registry', 'the stack pushes to an external registry: skip the StorageClass and NodePort checks')
    .addOption(new Option('--node-port <n>', 'NodePort of the internal registry').argParser(nodePort).default(DEFAULT_REGISTRY_NODE_PORT))
    .option('--manifests <dir>', 'folder of synthesized manifests (not its subfolders, which hold other environments) whose endpoints'
      + `, Subscriptions and monitoring to check (default: ${DEFAULT_MANIFESTS} when it exists)`)
    .option('--no-manifests', 'check the cluster alone, not what the manifests declare')
    .option('--release <version>', `the Serverless release the stack runs, which decides the checks: ${RELEASES.join(' or ')} `
      + '(default: the release of the Function CRD in the manifests, else the cluster\'s, else 1.11.1)')
    .addHelpText('after', `
Checks: API server version (1.27 or later), Istio sidecar injector, istio-injection=enabled on
each Function namespace, LimitRanges and ResourceQuotas against the build presets, a default
StorageClass, the registry's NodePort, the Function CRD version, the serverless-priority class.

The release decides: the first line names it and where it was read (--release, else the Function
CRD in the manifests, else the cluster's, else 1.11.1). Under 1.13.0 (buildless) nothing is built:
no LimitRange, quota, StorageClass or NodePort checks. Instead, per Function namespace: can the
Function Pods install their dependencies at start? The namespace's NetworkPolicies must let them
out to the package registry (443/TCP) and to DNS, or the namespace holds the Secret
serverless-package-registry-config for a mirror (only its presence is read, never its content).

From the manifests (--manifests, one folder as apply takes it), each only when they hold such
objects: the CRDs of the APIRules (v2, Kyma's api-gateway module), VirtualServices, Istio Gateways,
RequestAuthentications and AuthorizationPolicies (Istio), HTTPRoutes (v1, the Gateway API),
Subscriptions (v1alpha2, Kyma's eventing module), cert-manager's kinds, ScaledObjects (v1alpha1,
KEDA, for Functions with keda), and the ServiceMonitors, PodMonitors and PrometheusRules (the
Prometheus Operator; the stack's monitoring) they hold; each Istio Gateway their APIRules and
VirtualServices name, and each Gateway their HTTPRoutes name as parent (exists or is in the
manifests, and admits the routes' namespace); with Subscriptions, the Service of the eventing
publisher proxy (the controller's APP_FUNCTION_PUBLISHER_PROXY_ADDRESS, from the manifests, else
the cluster, else upstream's default).

The exit code is 1 when a check fails.

Examples:
  # The current context; Function namespaces found from Functions and FunctionNamespaces
  kyma-serverless preflight

  # Two namespaces that will hold Functions, in another context
  kyma-serverless preflight --context staging --namespaces team-a,team-b

  # A stack with an external registry and JSON for a CI step
  kyma-serverless preflight --external-registry -o json | jq '.checks[] | select(.status == "fail")'

  # A cluster that will run Serverless 1.13.0, before its stack is applied
  kyma-serverless preflight --release 1.13.0 --namespaces team-a

  # What the prod environment's endpoints and Subscriptions need, in the prod cluster
  kyma-serverless preflight --context prod --manifests dist/prod
`)
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<PreflightCommandOptions>();
      const report = await runPreflight(options);
      if (isStructured(options.output)) printDocument(report, options.output);
      else print(formatReport(report));
      if (!report.ok) process.exitCode = 1;
    });
}
