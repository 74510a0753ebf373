/**
 * The container images of the stack: upstream's images of the stack's release, unless overridden.
 */
import { KnownRuntimeName, ServerlessRelease, releaseFacts } from '../api/release';

/**
 * The official Node.js image that runs the stack's own JavaScript programs (the webhook server and
 * the credentials Job), shipped in ConfigMaps. An exact version tag: pin a digest with `images.nodejs`.
 */
export const NODEJS_IMAGE = 'docker.io/library/node:22.12.0-alpine3.20';

/** The registry path upstream publishes its images under. */
export const UPSTREAM_IMAGE_REPOSITORY = 'europe-docker.pkg.dev/kyma-project/prod';

/**
 * Image overrides. Every image is a full reference (`host/path:tag` or `@sha256:` digest);
 * anything not given is upstream's image of the stack's `version`. The images of the build
 * pipeline (`buildInit`, `buildExecutor`, `registry`, `registryInit`, `credentialsJob`) are for a
 * release that builds images (1.11.1); `functionInit` and the runtime `nodejs24` are for 1.13.0.
 * An image the stack's release does not run is refused, never dropped.
 */
export interface ServerlessImages {
  /**
   * The Function Controller.
   *
   * @default - `europe-docker.pkg.dev/kyma-project/prod/function-controller:<version>` (1.11.1),
   * `europe-docker.pkg.dev/kyma-project/prod/function-buildless-controller:<version>` (1.13.0)
   */
  readonly controller?: string;

  /**
   * The init container of Git Functions' Pods, which clones the repository into them (1.13.0; the
   * controller's `images.repoFetcher`). Under 1.11.1 the build Jobs clone: see `buildInit`.
   *
   * @default - `europe-docker.pkg.dev/kyma-project/prod/function-buildless-init:<version>`
   */
  readonly functionInit?: string;

  /**
   * The init container of Git Functions' build Jobs, which clones the repository.
   *
   * @default - `europe-docker.pkg.dev/kyma-project/prod/function-build-init:<version>`
   */
  readonly buildInit?: string;

  /**
   * The kaniko executor that builds Function images.
   *
   * @default 'europe-docker.pkg.dev/kyma-project/prod/external/gcr.io/kaniko-project/executor:v1.24.0'
   */
  readonly buildExecutor?: string;

  /**
   * The Docker registry (distribution v3) of the internal registry.
   *
   * @default 'europe-docker.pkg.dev/kyma-project/prod/external/library/registry:3.0.0'
   */
  readonly registry?: string;

  /**
   * The image that writes the internal registry's htpasswd file (needs `htpasswd` and `sh`).
   *
   * @default 'europe-docker.pkg.dev/kyma-project/prod/registry-init:v20240506-57d31b1d'
   */
  readonly registryInit?: string;

  /**
   * The official Node.js image that runs the stack's own programs: the admission webhook server
   * (unless `webhook` names a prebuilt image) and the credentials Job. Both are plain JavaScript
   * shipped in ConfigMaps, so no image of this project is needed. A tag can move; for a fixed
   * image give its digest, such as `docker.io/library/node:22.12.0-alpine3.20@sha256:...`.
   *
   * @default 'docker.io/library/node:22.12.0-alpine3.20'
   */
  readonly nodejs?: string;

  /**
   * The Node.js image of the Job that creates the registry credentials inside the cluster.
   *
   * @default - the `nodejs` image
   */
  readonly credentialsJob?: string;

  /**
   * A prebuilt image of the admission webhook (this package's `Dockerfile`, entry point
   * `kyma-serverless`), for teams that build and scan their own images.
   *
   * @default - none: the webhook server runs from a ConfigMap on the `nodejs` image
   */
  readonly webhook?: string;

  /**
   * Images of the runtimes, by runtime name (`nodejs22`), for the runtimes of the stack's release.
   * Under 1.11.1 they are the base images written into the `dockerfile-<runtime>` ConfigMaps, from
   * which the controller builds; under 1.13.0 the images Function Pods run (the controller's
   * `images.<runtime>`).
   *
   * @default - `europe-docker.pkg.dev/kyma-project/prod/function-runtime-<runtime>:<version>`
   */
  readonly runtimes?: { readonly [runtime: string]: string };
}

/** Every image of the stack, resolved. */
export interface ResolvedImages {
  readonly controller: string;
  /** The init container that clones Git repositories into build Jobs; only for a release that builds images. */
  readonly buildInit?: string;
  /** The kaniko executor; only for a release that builds images. */
  readonly buildExecutor?: string;
  /** The internal registry; only for a release that builds images. */
  readonly registry?: string;
  /** The internal registry's init container; only for a release that builds images. */
  readonly registryInit?: string;
  /** The init container that clones Git repositories into Function Pods; only for a buildless release (1.13.0). */
  readonly functionInit?: string;
  readonly nodejs: string;
  /** The registry credentials Job; only for a release that builds images. */
  readonly credentialsJob?: string;
  /** A prebuilt webhook image, or `undefined` to run the server from a ConfigMap on `nodejs`. */
  readonly webhook?: string;
  /** The image of each runtime of the release, by runtime name. */
  readonly runtimes: { readonly [runtime: string]: string };
}

/** The images of the build pipeline, all present: what a release that builds images runs. */
export interface BuildImages {
  readonly buildInit: string;
  readonly buildExecutor: string;
  readonly registry: string;
  readonly registryInit: string;
  readonly credentialsJob: string;
  readonly runtimes: { readonly [runtime: string]: string };
}

/** The image keys that only a release that builds images runs, with what 1.13.0 runs instead, if anything. */
const BUILD_ONLY_IMAGES: { readonly [key in keyof ServerlessImages]?: string } = {
  buildInit: 'its Git Functions clone in their own Pods: give images.functionInit instead',
  buildExecutor: 'no kaniko Job runs',
  registry: 'there is no internal registry',
  registryInit: 'there is no internal registry',
  credentialsJob: 'there is no registry whose credentials a Job would create',
};

/** Upstream's image of a component (`function-controller`) at a tag. */
function upstreamImage(name: string, tag: string): string {
  return `${UPSTREAM_IMAGE_REPOSITORY}/${name}:${tag}`;
}

/** Upstream's images of each release that are not runtime images: per release, one table. */
const UPSTREAM_IMAGES: { readonly [R in ServerlessRelease]: (tag: string) => Omit<ResolvedImages, 'nodejs' | 'webhook' | 'runtimes'> } = {
  [ServerlessRelease.V1_11_1]: tag => ({
    controller: upstreamImage('function-controller', tag),
    buildInit: upstreamImage('function-build-init', tag),
    buildExecutor: `${UPSTREAM_IMAGE_REPOSITORY}/external/gcr.io/kaniko-project/executor:v1.24.0`,
    registry: `${UPSTREAM_IMAGE_REPOSITORY}/external/library/registry:3.0.0`,
    registryInit: `${UPSTREAM_IMAGE_REPOSITORY}/registry-init:v20240506-57d31b1d`,
  }),
  [ServerlessRelease.V1_13_0]: tag => ({
    controller: upstreamImage('function-buildless-controller', tag),
    functionInit: upstreamImage('function-buildless-init', tag),
  }),
};

/**
 * Fills in upstream's image of the release for everything `overrides` does not name.
 *
 * @param release the stack's release: which images it runs
 * @param version the tag of upstream's images (the release's own by default)
 * @param overrides the stack's `images`
 * @throws when an override names an image the release does not run, or is no full image reference
 */
export function resolveImages(release: ServerlessRelease, version: string = release, overrides: ServerlessImages = {}): ResolvedImages {
  const facts = releaseFacts(release);
  const problems: string[] = [];
  for (const [key, instead] of Object.entries(BUILD_ONLY_IMAGES)) {
    const given = (overrides as Record<string, unknown>)[key];
    if (given !== undefined && !facts.buildsImages) {
      problems.push(`'images.${key}' (${given}) is an image of the build pipeline, which release ${release} does not have: ${instead}. Remove it`);
    }
  }
  if (overrides.functionInit !== undefined && facts.buildsImages) {
    problems.push(`'images.functionInit' (${overrides.functionInit}) is for buildless releases (1.13.0); release ${release} clones Git `
      + 'repositories in its build Jobs: give images.buildInit instead');
  }
  for (const runtime of Object.keys(overrides.runtimes ?? {})) {
    if (!(facts.runtimes as readonly string[]).includes(runtime)) {
      problems.push(`'images.runtimes.${runtime}': release ${release} has no runtime '${runtime}'; its runtimes are ${facts.runtimes.join(', ')}`);
    }
  }
  if (problems.length) throw new Error(problems.join('\n'));

  const runtimes: { [runtime in KnownRuntimeName]?: string } = {};
  for (const runtime of facts.runtimes) {
    runtimes[runtime] = overrides.runtimes?.[runtime] ?? upstreamImage(`function-runtime-${runtime}`, version);
  }
  const upstream = UPSTREAM_IMAGES[release](version);
  const pick = <K extends keyof ResolvedImages & keyof ServerlessImages>(key: K) => upstream[key as keyof typeof upstream] === undefined
    ? undefined : overrides[key] ?? upstream[key as keyof typeof upstream];
  const resolved: ResolvedImages = {
    controller: overrides.controller ?? upstream.controller,
    buildInit: pick('buildInit'),
    buildExecutor: pick('buildExecutor'),
    registry: pick('registry'),
    registryInit: pick('registryInit'),
    functionInit: pick('functionInit'),
    nodejs: overrides.nodejs ?? NODEJS_IMAGE,
    credentialsJob: facts.buildsImages ? overrides.credentialsJob ?? overrides.nodejs ?? NODEJS_IMAGE : undefined,
    webhook: overrides.webhook,
    runtimes,
  };
  for (const [key, image] of Object.entries({ ...resolved, ...resolved.runtimes })) {
    if (typeof image === 'string' && !/^[a-z0-9][a-z0-9._\-/:]*(:[\w][\w.-]{0,127}|@sha256:[a-f0-9]{64})$/.test(image)) {
      throw new Error(`Image '${key}' (${image}) must be a full image reference with a tag or digest, such as 'registry.example.com/team/image:1.0'`);
    }
  }
  return resolved;
}

/**
 * The images of the build pipeline, for the constructs of a release that builds images.
 *
 * @throws when the release builds none (a bug: only the build-based stack asks)
 * @internal
 */
export function _buildImages(images: ResolvedImages): BuildImages {
  const { buildInit, buildExecutor, registry, registryInit, credentialsJob, runtimes } = images;
  if (!buildInit || !buildExecutor || !registry || !registryInit || !credentialsJob) {
    throw new Error('The build pipeline\'s images are only resolved for a release that builds images');
  }
  return { buildInit, buildExecutor, registry, registryInit, credentialsJob, runtimes };
}
