/**
 * What differs between the releases for the run with the real controller: which upstream program
 * runs the stack's controller Deployment and what its image adds, what `Running` means in a
 * Function's status, and which objects the controller makes for each Function.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FunctionConditionType, ServerlessRelease, releaseFacts } from '../../src/api';

/** How one release's controller runs here, and what it makes. */
export interface ControllerRelease {
  readonly release: ServerlessRelease;
  /** Upstream's program, built from the release's source, in ../shared/k8s-local (xz). */
  readonly program: string;
  /**
   * What the image sets under the container's env (its Dockerfile's `ENV`): 1.11.1's program panics
   * without `GODEBUG=fips140=on,tlsmlkem=0`, which its Deployment does not give; 1.13.0's Deployment
   * gives its own `GODEBUG`.
   */
  readonly imageEnv: { readonly [name: string]: string };
  /** Problems of this machine for the program, such as a missing shared library. */
  problems(): string[];
  /**
   * Whether the Function, as the cluster has it, is running what its spec says: `Running` True,
   * every condition True, and (1.13.0) the status observed the current generation.
   */
  isRunning(fn: any): boolean;
  /**
   * The kinds and numbers of the objects the controller owns for a Function (ownerReferences), when
   * the run checks them: 1.13.0 makes a Deployment and a Service and nothing else.
   */
  readonly expectedChildren?: { readonly [kind: string]: number };
}

const conditions = (fn: any): any[] => fn?.status?.conditions ?? [];
const condition = (fn: any, type: string) => conditions(fn).find(c => c.type === type);

const V1_11_1: ControllerRelease = {
  release: ServerlessRelease.V1_11_1,
  program: 'function-controller-1.11.1.xz',
  imageEnv: { GODEBUG: 'fips140=on,tlsmlkem=0' },
  problems() {
    try {
      execFileSync('sh', ['-c', 'ldconfig -p | grep -q libgit2.so.1.5']);
      return [];
    } catch {
      return ['libgit2 1.5 is missing (the 1.11.1 controller links it): apt-get install -y libgit2-1.5'];
    }
  },
  isRunning: fn => condition(fn, FunctionConditionType.RUNNING)?.status === 'True',
};

const V1_13_0: ControllerRelease = {
  release: ServerlessRelease.V1_13_0,
  program: 'function-buildless-controller-1.13.0.xz',
  imageEnv: {},
  problems: () => [],
  isRunning: fn => condition(fn, FunctionConditionType.RUNNING)?.status === 'True'
    && conditions(fn).every(c => c.status === 'True')
    // Under a CRD without status.observedGeneration (1.11.1's) the API server drops it: then only the conditions tell.
    && (fn.status?.observedGeneration === undefined || fn.status.observedGeneration === fn.metadata.generation),
  // No ConfigMap, Job, HPA, ServiceAccount or Secret: a Deployment and a Service, nothing else.
  expectedChildren: { Deployment: 1, Service: 1 },
};

const RELEASES: { readonly [R in ServerlessRelease]: ControllerRelease } = {
  [ServerlessRelease.V1_11_1]: V1_11_1,
  [ServerlessRelease.V1_13_0]: V1_13_0,
};

/** The run's view of a release. */
export function controllerRelease(release: ServerlessRelease): ControllerRelease {
  return RELEASES[release];
}

/** Whether the release's controller builds images (and so makes build Jobs, source ConfigMaps, HPAs). */
export function buildsImages(release: ServerlessRelease): boolean {
  return releaseFacts(release).buildsImages;
}

/** Writes the release's controller program into `dir` (uncompressed, executable); returns its path. */
export function unpackProgram(k8sLocal: string, release: ControllerRelease, dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const binary = path.join(dir, `manager-${release.release}`);
  execFileSync('sh', ['-c', `xz -dc '${path.join(k8sLocal, release.program)}' > '${binary}'`]);
  fs.chmodSync(binary, 0o755);
  return binary;
}
