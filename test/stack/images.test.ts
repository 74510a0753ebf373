import { ServerlessRelease } from '../../src';
import { resolveImages } from '../../src/stack/images';

const UPSTREAM = 'europe-docker.pkg.dev/kyma-project/prod';

describe('resolveImages', () => {
  test('1.11.1: the build-based controller, its build pipeline, and the three runtimes of 1.11.1', () => {
    const images = resolveImages(ServerlessRelease.V1_11_1);
    expect(images).toEqual({
      controller: `${UPSTREAM}/function-controller:1.11.1`,
      buildInit: `${UPSTREAM}/function-build-init:1.11.1`,
      buildExecutor: `${UPSTREAM}/external/gcr.io/kaniko-project/executor:v1.24.0`,
      registry: `${UPSTREAM}/external/library/registry:3.0.0`,
      registryInit: `${UPSTREAM}/registry-init:v20240506-57d31b1d`,
      functionInit: undefined,
      nodejs: 'docker.io/library/node:22.12.0-alpine3.20',
      credentialsJob: 'docker.io/library/node:22.12.0-alpine3.20',
      webhook: undefined,
      runtimes: {
        nodejs20: `${UPSTREAM}/function-runtime-nodejs20:1.11.1`,
        nodejs22: `${UPSTREAM}/function-runtime-nodejs22:1.11.1`,
        python312: `${UPSTREAM}/function-runtime-python312:1.11.1`,
      },
    });
  });

  test('1.13.0: the buildless controller and init container, and the four runtimes of 1.13.0; nothing of a build pipeline', () => {
    const images = resolveImages(ServerlessRelease.V1_13_0);
    expect(images).toEqual({
      controller: `${UPSTREAM}/function-buildless-controller:1.13.0`,
      buildInit: undefined,
      buildExecutor: undefined,
      registry: undefined,
      registryInit: undefined,
      functionInit: `${UPSTREAM}/function-buildless-init:1.13.0`,
      nodejs: 'docker.io/library/node:22.12.0-alpine3.20',
      credentialsJob: undefined,
      webhook: undefined,
      runtimes: {
        nodejs20: `${UPSTREAM}/function-runtime-nodejs20:1.13.0`,
        nodejs22: `${UPSTREAM}/function-runtime-nodejs22:1.13.0`,
        nodejs24: `${UPSTREAM}/function-runtime-nodejs24:1.13.0`,
        python312: `${UPSTREAM}/function-runtime-python312:1.13.0`,
      },
    });
  });

  test('overrides keep working under both releases', () => {
    const mine = 'registry.example.com/team/controller:1.0';
    expect(resolveImages(ServerlessRelease.V1_11_1, undefined, { controller: mine }).controller).toBe(mine);
    const v113 = resolveImages(ServerlessRelease.V1_13_0, undefined, {
      controller: mine, functionInit: 'registry.example.com/team/init:1.0', runtimes: { nodejs24: 'registry.example.com/team/node24:1.0' },
    });
    expect([v113.controller, v113.functionInit, v113.runtimes.nodejs24, v113.runtimes.nodejs22])
      .toEqual([mine, 'registry.example.com/team/init:1.0', 'registry.example.com/team/node24:1.0', `${UPSTREAM}/function-runtime-nodejs22:1.13.0`]);
  });

  test.each([
    ['buildInit', /'images.buildInit' \(r.example\/x:1\) is an image of the build pipeline, which release 1.13.0 does not have: .*give images.functionInit instead/],
    ['buildExecutor', /'images.buildExecutor' .* no kaniko Job runs/],
    ['registry', /'images.registry' .* there is no internal registry/],
    ['registryInit', /'images.registryInit' .* there is no internal registry/],
    ['credentialsJob', /'images.credentialsJob' .* no registry whose credentials a Job would create/],
  ])('throws when the build image %s is given under 1.13.0', (key, message) => {
    expect(() => resolveImages(ServerlessRelease.V1_13_0, undefined, { [key]: 'r.example/x:1' })).toThrow(message);
  });

  test('throws when functionInit or a runtime the release lacks is given under 1.11.1', () => {
    expect(() => resolveImages(ServerlessRelease.V1_11_1, undefined, { functionInit: 'r.example/x:1' }))
      .toThrow(/'images.functionInit' \(r.example\/x:1\) is for buildless releases \(1.13.0\); .*give images.buildInit instead/);
    expect(() => resolveImages(ServerlessRelease.V1_11_1, undefined, { runtimes: { nodejs24: 'r.example/x:1' } }))
      .toThrow(/'images.runtimes.nodejs24': release 1.11.1 has no runtime 'nodejs24'; its runtimes are nodejs20, nodejs22, python312/);
  });

  test('still refuses an image that is no full reference', () => {
    expect(() => resolveImages(ServerlessRelease.V1_13_0, undefined, { functionInit: 'init' })).toThrow(/Image 'functionInit' \(init\) must be a full image reference/);
  });
});
