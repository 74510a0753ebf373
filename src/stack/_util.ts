/**
 * Private helpers of the stack's constructs.
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { ContainerResources } from './container-resources';

/**
 * Removes `metadata.namespace` from a cluster-scoped object. cdk8s stamps the chart's
 * namespace on every object, and a namespace on a cluster-scoped object only confuses readers.
 */
export function clusterScoped<T extends ApiObject>(object: T): T {
  object.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  return object;
}

/**
 * The container security context of Pod Security Standards `restricted`: no privilege
 * escalation, every capability dropped, non-root, RuntimeDefault seccomp, read-only root file system.
 */
export function restrictedContainer(overrides: k8s.SecurityContext = {}): k8s.SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
    ...overrides,
  };
}

/** The Pod security context of PSS `restricted`, running as `uid`:`uid`. */
export function restrictedPod(uid: number, overrides: k8s.PodSecurityContext = {}): k8s.PodSecurityContext {
  return {
    runAsGroup: uid,
    runAsNonRoot: true,
    runAsUser: uid,
    seccompProfile: { type: 'RuntimeDefault' },
    ...overrides,
  };
}

/** Renders requests and limits as a `ResourceRequirements`. */
export function resourceRequirements(r: ContainerResources): k8s.ResourceRequirements {
  return {
    limits: { cpu: k8s.Quantity.fromString(r.limitCpu.amount), memory: k8s.Quantity.fromString(r.limitMemory.asString()) },
    requests: { cpu: k8s.Quantity.fromString(r.requestCpu.amount), memory: k8s.Quantity.fromString(r.requestMemory.asString()) },
  };
}

/** An HTTP GET probe on a named or numbered port. */
export function httpProbe(path: string, port: number | string, timing: Partial<k8s.Probe> = {}): k8s.Probe {
  return {
    httpGet: { path, port: typeof port === 'number' ? k8s.IntOrString.fromNumber(port) : k8s.IntOrString.fromString(port) },
    ...timing,
  };
}

/** Throws unless `value` is a whole number in `[min, max]`, naming the prop. */
export function requireInteger(prop: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `a whole number of at least ${min}` : `a whole number from ${min} to ${max}`;
    throw new Error(`'${prop}' (${value}) must be ${range}`);
  }
}
