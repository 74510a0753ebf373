/**
 * The upstream releases of Kyma Serverless this package deploys, and what each one means for the
 * Function API: its runtimes, its reserved environment variables, and whether it builds images.
 *
 * A release is one choice in one place (`ServerlessStack`'s `release`); the schema, the rules, the
 * webhook and the command line read what they need of it from {@link releaseFacts}.
 */
import { closestMatch } from './_suggest';

/**
 * An upstream release of Kyma Serverless: the controller, its configuration, RBAC and CRD.
 *
 * @see https://github.com/kyma-project/serverless/releases
 */
export enum ServerlessRelease {
  /**
   * 1.11.1, the last build-based release: a Kubernetes Job builds each Function's image with
   * kaniko and pushes it to a Docker registry, then the controller runs it with a Deployment, a
   * Service and, for `scaleConfig`, a HorizontalPodAutoscaler. Its images get no more fixes.
   */
  V1_11_1 = '1.11.1',
  /**
   * 1.13.0, upstream's current release, buildless: the controller runs a Function as a Deployment
   * and a Service on the runtime's image, which installs the dependencies at every Pod start. No
   * build Job, registry or HorizontalPodAutoscaler.
   */
  V1_13_0 = '1.13.0',
}

/** The release a stack deploys when none is given: the build-based pipeline. */
export const DEFAULT_RELEASE = ServerlessRelease.V1_11_1;

/** Every release, oldest first. */
export const RELEASES: readonly ServerlessRelease[] = [ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0];

/** Every runtime name some release's Function CRD accepts. */
export const KNOWN_RUNTIMES = ['nodejs20', 'nodejs22', 'nodejs24', 'python312'] as const;

/** A runtime of the Function API as it appears on the wire (`spec.runtime`), in some release. */
export type KnownRuntimeName = typeof KNOWN_RUNTIMES[number];

/** What a release means for Functions and for the stack that runs them. */
export interface ReleaseFacts {
  /** The release. */
  readonly release: ServerlessRelease;
  /**
   * Whether the controller builds images (a Job, a registry, runtime Dockerfiles, an HPA for
   * `scaleConfig`), or runs the runtime image directly and installs dependencies at Pod start.
   */
  readonly buildsImages: boolean;
  /** The runtimes of the release's Function CRD, in the CRD's order. */
  readonly runtimes: readonly KnownRuntimeName[];
  /** Runtimes the release still accepts but upstream has retired, with the date of their end of life. */
  readonly deprecatedRuntimes: { readonly [runtime: string]: string };
  /** Environment variable names the release's CRD refuses in `spec.env`, in the CRD's order. */
  readonly reservedEnvNames: readonly string[];
  /** Annotation keys the release's CRD refuses in `spec.annotations` (besides the reserved prefix). */
  readonly reservedAnnotations: readonly string[];
  /**
   * Whether the release's Function CRD has `spec.containerSecurityContext` and
   * `spec.podSecurityContext`, which the controller merges into its own defaults for the Pod.
   */
  readonly securityContexts: boolean;
}

const FACTS: { readonly [R in ServerlessRelease]: ReleaseFacts } = {
  [ServerlessRelease.V1_11_1]: {
    release: ServerlessRelease.V1_11_1,
    buildsImages: true,
    runtimes: ['nodejs20', 'nodejs22', 'python312'],
    deprecatedRuntimes: {},
    reservedEnvNames: ['FUNC_RUNTIME', 'FUNC_HANDLER', 'FUNC_PORT', 'MOD_NAME', 'NODE_PATH', 'PYTHONPATH'],
    reservedAnnotations: [],
    securityContexts: false,
  },
  [ServerlessRelease.V1_13_0]: {
    release: ServerlessRelease.V1_13_0,
    buildsImages: false,
    runtimes: ['nodejs20', 'nodejs22', 'nodejs24', 'python312'],
    // Upstream's runtime deprecation schedule: Node.js 20 reached its end of life in April 2026.
    deprecatedRuntimes: { nodejs20: 'April 2026' },
    reservedEnvNames: [
      'FUNC_RUNTIME', 'FUNC_HANDLER', 'FUNC_PORT', 'FUNC_HANDLER_SOURCE', 'FUNC_HANDLER_DEPENDENCIES', 'MOD_NAME', 'NODE_PATH', 'PYTHONPATH',
    ],
    // The controller writes the Pod's Istio proxy configuration itself (holdApplicationUntilProxyStarts).
    reservedAnnotations: ['proxy.istio.io/config'],
    securityContexts: true,
  },
};

/**
 * What a release means for Functions: its runtimes, reserved names and whether it builds.
 *
 * @param release the release
 * @returns its facts
 */
export function releaseFacts(release: ServerlessRelease = DEFAULT_RELEASE): ReleaseFacts {
  return FACTS[release];
}

/** Whether a string is the name of a release this package deploys, such as `1.13.0`. */
export function isServerlessRelease(value: unknown): value is ServerlessRelease {
  return typeof value === 'string' && (RELEASES as readonly string[]).includes(value);
}

/**
 * A release by its version, as a command-line option or a file gives it (`1.13.0`, or `v1.13.0`).
 *
 * @param text the version
 * @param what what gave it, for the message (`'--release'`)
 * @throws when no release of this package has that version, naming the ones it has
 */
export function parseRelease(text: string, what = 'release'): ServerlessRelease {
  const version = text.trim().replace(/^v/, '');
  if (isServerlessRelease(version)) return version;
  const closest = closestMatch(version, RELEASES);
  throw new Error(`${what} (${text}) is no release this package deploys: use ${RELEASES.map(r => `'${r}'`).join(' or ')}`
    + (closest ? ` (did you mean '${closest}'?)` : ''));
}
