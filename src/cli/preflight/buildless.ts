/**
 * The checks of `preflight` for a buildless release (1.13.0): Function Pods install their
 * dependencies at every start, so each Function namespace must let them reach the package
 * registry (npm, PyPI), or give them a mirror through the `serverless-package-registry-config`
 * Secret. Build Jobs, their LimitRanges and the internal registry are no concern there.
 */
import type { V1LabelSelector, V1NetworkPolicy, V1NetworkPolicyEgressRule, V1NetworkPolicyPort } from '@kubernetes/client-node';
import { FUNCTION_CONTROLLER, FunctionChildLabel } from '../../api/function-status';
import { CONTROLLER_NAMES } from '../../stack/controller';
import { CheckId, CheckResult, fail, pass, skip } from './report';

/** The Secret a Function namespace may hold to point its Functions at a package mirror (mounted as `.npmrc` / `pip.conf`). */
export const PACKAGE_REGISTRY_SECRET = CONTROLLER_NAMES.packageRegistrySecret;

/** The port Function Pods reach the public package registries on (HTTPS). */
const REGISTRY_PORT = 443;
/** The port of DNS, which resolves the registry's name. */
const DNS_PORT = 53;

/** The label the 1.13.0 controller puts on a Function's Deployment and Pods besides the function-name, managed-by and uuid labels. */
const RESOURCE_LABEL = 'serverless.kyma-project.io/resource';

/** What the package registry check reads of one Function namespace. */
export interface PackageRegistryFacts {
  /** The namespace. */
  readonly name: string;
  /** Whether it exists. */
  readonly exists: boolean;
  /** Whether the `serverless-package-registry-config` Secret is there (only that: its content is never read into a report). */
  readonly registrySecret: boolean;
  /** Its NetworkPolicies. */
  readonly networkPolicies: readonly V1NetworkPolicy[];
  /** The labels of each Function's Pods (the Function's `spec.labels` and the controller's), by Function name. */
  readonly functionPods: { readonly [functionName: string]: { readonly [label: string]: string } };
}

/**
 * The labels the 1.13.0 controller gives a Function's Pods: the Function's own `spec.labels` and its own.
 *
 * @param fn the Function as the API server returns it
 */
export function functionPodLabels(fn: { metadata?: { name?: string; uid?: string }; spec?: { labels?: { [key: string]: string } } }): { [label: string]: string } {
  return {
    ...fn.spec?.labels,
    [FunctionChildLabel.FUNCTION_NAME]: fn.metadata?.name ?? '',
    [FunctionChildLabel.MANAGED_BY]: FUNCTION_CONTROLLER,
    [FunctionChildLabel.UUID]: fn.metadata?.uid ?? '',
    [RESOURCE_LABEL]: 'deployment',
  };
}

/** Whether a label selector selects Pods with these labels (an empty selector selects all). */
export function selects(selector: V1LabelSelector | undefined, labels: { readonly [label: string]: string }): boolean {
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector?.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    const ok = operator === 'In' ? has && values.includes(labels[key])
      : operator === 'NotIn' ? !has || !values.includes(labels[key])
        : operator === 'Exists' ? has
          : operator === 'DoesNotExist' ? !has : false;
    if (!ok) return false;
  }
  return true;
}

/** Whether a policy limits egress: it says so in policyTypes, or (without policyTypes) has egress rules. */
function limitsEgress(policy: V1NetworkPolicy): boolean {
  const types = policy.spec?.policyTypes;
  return types ? types.includes('Egress') : policy.spec?.egress !== undefined;
}

function portAllows(port: V1NetworkPolicyPort, number: number, protocol: string): boolean {
  if ((port.protocol ?? 'TCP') !== protocol) return false;
  // A named port could be anything: the registry's port is taken to be open only by number.
  if (port.port === undefined) return true;
  if (typeof port.port !== 'number') return false;
  return port.endPort === undefined ? port.port === number : port.port <= number && number <= port.endPort;
}

/** Whether an egress rule lets traffic out to addresses outside the cluster on a port: no `to`, or an `ipBlock`. */
function ruleAllows(rule: V1NetworkPolicyEgressRule, number: number, protocols: readonly string[], outside: boolean): boolean {
  const ports = rule.ports;
  const portOk = !ports?.length || ports.some(p => protocols.some(protocol => portAllows(p, number, protocol)));
  if (!portOk) return false;
  if (!rule.to?.length) return true;
  // DNS is usually a Service in the cluster (kube-dns): any peer will do; the registry is outside, reached through an ipBlock.
  return outside ? rule.to.some(peer => peer.ipBlock !== undefined) : true;
}

/** What the egress policies of a namespace leave a Function's Pods. */
interface EgressVerdict {
  /** The policies that limit the Pods' egress, by name. */
  readonly limiting: string[];
  /** Whether they still let the Pods reach a registry outside the cluster on 443/TCP. */
  readonly registry: boolean;
  /** Whether they still let the Pods resolve names (53, UDP or TCP). */
  readonly dns: boolean;
}

function egressOf(policies: readonly V1NetworkPolicy[], labels: { readonly [label: string]: string }): EgressVerdict {
  const limiting = policies.filter(p => limitsEgress(p) && selects(p.spec?.podSelector, labels));
  const rules = limiting.flatMap(p => p.spec?.egress ?? []);
  return {
    limiting: limiting.map(p => p.metadata?.name ?? '').sort(),
    registry: !limiting.length || rules.some(r => ruleAllows(r, REGISTRY_PORT, ['TCP'], true)),
    dns: !limiting.length || rules.some(r => ruleAllows(r, DNS_PORT, ['UDP', 'TCP'], false)),
  };
}

/**
 * Check (1.13.0, per Function namespace): the Functions' Pods can install their dependencies at
 * start: the NetworkPolicies that select them let them out to the package registry (443/TCP, and
 * DNS), or the namespace holds the `serverless-package-registry-config` Secret that points them at
 * a mirror. The Secret's content is never read into the report.
 *
 * @param facts what was read of the namespace
 */
export function checkPackageRegistry(facts: PackageRegistryFacts): CheckResult {
  const ns = facts.name;
  const title = `package registry ${ns}`;
  if (!facts.exists) return skip(CheckId.PACKAGE_REGISTRY, title, `namespace ${ns} does not exist`, ns);
  const functions = Object.keys(facts.functionPods).sort();
  // A namespace without Functions yet: judged for a Function without labels of its own.
  const pods = functions.length ? functions.map(name => [name, facts.functionPods[name]] as const)
    : [['<any Function>', functionPodLabels({ metadata: { name: '' } })] as const];
  const secret = facts.registrySecret
    ? `Secret ${PACKAGE_REGISTRY_SECRET} is there: Functions install from the registry it configures (.npmrc, pip.conf)`
    : `no Secret ${PACKAGE_REGISTRY_SECRET}: Functions install from the public registries (registry.npmjs.org, pypi.org) at every Pod start`;
  const blocked = pods.map(([name, labels]) => ({ name, ...egressOf(facts.networkPolicies, labels) })).filter(v => !v.registry || !v.dns);
  if (!blocked.length) {
    const limited = [...new Set(pods.flatMap(([, labels]) => egressOf(facts.networkPolicies, labels).limiting))];
    return pass(CheckId.PACKAGE_REGISTRY, title, `${secret}; ${limited.length
      ? `NetworkPolicy ${limited.join(', ')} lets Function Pods out on ${REGISTRY_PORT}/TCP and to DNS`
      : 'no NetworkPolicy limits the egress of Function Pods'}`, ns);
  }
  const policies = [...new Set(blocked.flatMap(b => b.limiting))];
  const what = [blocked.some(b => !b.registry) && `${REGISTRY_PORT}/TCP to the registry`, blocked.some(b => !b.dns) && `DNS (${DNS_PORT})`]
    .filter(Boolean).join(' and ');
  const whose = functions.length ? `the Pods of Function ${blocked.map(b => b.name).join(', ')}` : 'Function Pods';
  if (facts.registrySecret) {
    // The mirror may be inside the cluster, where the policies can allow it: whether they do needs the Secret's content, which is not read.
    return pass(CheckId.PACKAGE_REGISTRY, title, `${secret}; NetworkPolicy ${policies.join(', ')} blocks ${what} for ${whose}: `
      + 'make sure they allow the mirror the Secret names', ns);
  }
  return fail(CheckId.PACKAGE_REGISTRY, title,
    `${secret}; NetworkPolicy ${policies.join(', ')} blocks ${what} for ${whose}: npm install / pip install fail at Pod start, and the Pods never become ready`,
    `add an egress rule for the Function Pods (podSelector matchLabels ${FunctionChildLabel.MANAGED_BY}: ${FUNCTION_CONTROLLER}) to `
    + `${REGISTRY_PORT}/TCP (to: ipBlock 0.0.0.0/0, or your registry's addresses) and to DNS on ${DNS_PORT}/UDP and TCP, in namespace ${ns}; `
    + `or create Secret ${PACKAGE_REGISTRY_SECRET} in ${ns} with an .npmrc / pip.conf for a mirror the policies allow`, ns);
}
