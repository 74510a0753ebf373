/**
 * The container images of the stack, with upstream release 1.11.1's as defaults.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RuntimeName, RUNTIMES } from '../api';

/** The upstream release whose images and configuration the stack deploys by default. */
export const SERVERLESS_VERSION = '1.11.1';

/** Where this package's webhook image is published, tagged with the package version. */
export const WEBHOOK_IMAGE_REPOSITORY = 'ghcr.io/cdk8s-kyma-serverless/webhook';

/**
 * This package's version, from its package.json: found by walking up from this file, so that
 * it works from the sources, from the compiled `lib/`, and inside the webhook image alike.
 */
function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'cdk8s-kyma-serverless' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`Cannot find the package.json of cdk8s-kyma-serverless above ${__dirname}`);
  }
}

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
   * The Node.js image of the Job that creates the registry credentials inside the cluster.
   *
   * @default 'docker.io/library/node:22.12.0-alpine3.20'
   */
  readonly credentialsJob?: string;

  /**
   * Our admission webhook, built from this package's `Dockerfile`.
   *
   * @default - `ghcr.io/cdk8s-kyma-serverless/webhook:<package version>`
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
  readonly credentialsJob: string;
  readonly webhook: string;
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
    credentialsJob: overrides.credentialsJob ?? 'docker.io/library/node:22.12.0-alpine3.20',
    webhook: overrides.webhook ?? `${WEBHOOK_IMAGE_REPOSITORY}:${packageVersion()}`,
    runtimes,
  };
  for (const [key, image] of Object.entries({ ...resolved, ...resolved.runtimes })) {
    if (typeof image === 'string' && !/^[a-z0-9][a-z0-9._\-/:]*(:[\w][\w.-]{0,127}|@sha256:[a-f0-9]{64})$/.test(image)) {
      throw new Error(`Image '${key}' (${image}) must be a full image reference with a tag or digest, such as 'registry.example.com/team/image:1.0'`);
    }
  }
  return resolved;
}
