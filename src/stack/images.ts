/**
 * The container images of the stack, with upstream release 1.11.1's as defaults.
 */
import { RuntimeName, RUNTIMES } from '../api';

/** The upstream release whose images and configuration the stack deploys by default. */
export const SERVERLESS_VERSION = '1.11.1';

/**
 * The official Node.js image that runs the stack's own JavaScript programs (the webhook server and
 * the credentials Job), shipped in ConfigMaps. An exact version tag: pin a digest with `images.nodejs`.
 */
export const NODEJS_IMAGE = 'docker.io/library/node:22.12.0-alpine3.20';

/** The registry path upstream publishes its images under. */
export const UPSTREAM_IMAGE_REPOSITORY = 'europe-docker.pkg.dev/kyma-project/prod';

/**
 * Image overrides. Every image is a full reference (`host/path:tag` or `@sha256:` digest);
 * anything not given is upstream's image of the stack's `version`.
 */
export interface ServerlessImages {
  /**
   * The Function Controller.
   *
   * @default - `europe-docker.pkg.dev/kyma-project/prod/function-controller:<version>`
   */
  readonly controller?: string;

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
   * Base images of the runtimes, by runtime name (`nodejs22`). They are written into the
   * `dockerfile-<runtime>` ConfigMaps, from which the controller reads them.
   *
   * @default - `europe-docker.pkg.dev/kyma-project/prod/function-runtime-<runtime>:<version>`
   */
  readonly runtimes?: { readonly [runtime in RuntimeName]?: string };
}

/** Every image of the stack, resolved. */
export interface ResolvedImages {
  readonly controller: string;
  readonly buildInit: string;
  readonly buildExecutor: string;
  readonly registry: string;
  readonly registryInit: string;
  readonly nodejs: string;
  readonly credentialsJob: string;
  /** A prebuilt webhook image, or `undefined` to run the server from a ConfigMap on `nodejs`. */
  readonly webhook?: string;
  readonly runtimes: { readonly [runtime in RuntimeName]: string };
}

/** Fills in upstream's image for everything `overrides` does not name. */
export function resolveImages(version: string, overrides: ServerlessImages = {}): ResolvedImages {
  const upstream = (name: string) => `${UPSTREAM_IMAGE_REPOSITORY}/${name}:${version}`;
  const runtimes = {} as { [runtime in RuntimeName]: string };
  for (const runtime of RUNTIMES) {
    runtimes[runtime] = overrides.runtimes?.[runtime] ?? upstream(`function-runtime-${runtime}`);
  }
  const resolved: ResolvedImages = {
    controller: overrides.controller ?? upstream('function-controller'),
    buildInit: overrides.buildInit ?? upstream('function-build-init'),
    buildExecutor: overrides.buildExecutor ?? `${UPSTREAM_IMAGE_REPOSITORY}/external/gcr.io/kaniko-project/executor:v1.24.0`,
    registry: overrides.registry ?? `${UPSTREAM_IMAGE_REPOSITORY}/external/library/registry:3.0.0`,
    registryInit: overrides.registryInit ?? `${UPSTREAM_IMAGE_REPOSITORY}/registry-init:v20240506-57d31b1d`,
    nodejs: overrides.nodejs ?? NODEJS_IMAGE,
    credentialsJob: overrides.credentialsJob ?? overrides.nodejs ?? NODEJS_IMAGE,
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
