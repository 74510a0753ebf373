/**
 * Private helpers of the stack's constructs.
 */
import { createHash } from 'node:crypto';
import { ApiObject, JsonPatch, Size } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
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

/** The first 8 hex digits of the SHA-256 of a text: a name suffix that changes with the content. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** What a Job of the stack that runs one of its Node.js programs gets. */
export interface ScriptJobOptions {
  /** The labels of the Job's objects; its Pod gets them too. */
  readonly labels: { readonly [key: string]: string };
  readonly serviceAccountName: string;
  readonly priorityClassName?: string;
  /** The Node.js image. */
  readonly image: string;
  /** The container's name. */
  readonly containerName: string;
  /** The ConfigMap that holds the program, mounted at /script. */
  readonly scriptConfigMap: string;
  /** The program's file in it. */
  readonly scriptFile: string;
  readonly env: k8s.EnvVar[];
}

/**
 * The Pod template of a Job of the stack that runs one of its Node.js programs (shipped in a
 * ConfigMap) against the API server: one restricted container, no sidecar, allowed to the API
 * server by the stack's NetworkPolicies, never restarted.
 */
export function scriptJobTemplate(options: ScriptJobOptions): k8s.PodTemplateSpec {
  return {
    metadata: {
      labels: {
        ...options.labels,
        'kyma-project.io/module': 'serverless',
        // Lets the stack's NetworkPolicies allow this Pod to reach the API server.
        'networking.serverless.kyma-project.io/to-apiserver': 'allowed',
      },
      // A sidecar would keep the Job from ever completing.
      annotations: { 'sidecar.istio.io/inject': 'false' },
    },
    spec: {
      serviceAccountName: options.serviceAccountName,
      automountServiceAccountToken: true,
      priorityClassName: options.priorityClassName,
      restartPolicy: 'Never',
      securityContext: restrictedPod(1000),
      containers: [{
        name: options.containerName,
        image: options.image,
        imagePullPolicy: 'IfNotPresent',
        command: ['node', `/script/${options.scriptFile}`],
        env: options.env,
        resources: resourceRequirements({
          requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(32), limitCpu: Cpu.millis(200), limitMemory: Size.mebibytes(128),
        }),
        securityContext: restrictedContainer(),
        volumeMounts: [{ name: 'script', mountPath: '/script', readOnly: true }],
      }],
      volumes: [{ name: 'script', configMap: { name: options.scriptConfigMap } }],
    },
  };
}
