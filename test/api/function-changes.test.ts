import { FunctionChangeKind, ServerlessRelease, functionChangeOf, functionReleaseMoveOf } from '../../src/api';
import { functionChangeTitle } from '../../src/api/function-changes';

/** A Function as the cluster holds it: defaulted, with a status and server-written metadata. */
const fn = (spec: object = {}, labels?: object) => ({
  apiVersion: 'serverless.kyma-project.io/v1alpha2',
  kind: 'Function',
  metadata: { name: 'hello', namespace: 'team-a', resourceVersion: '7', ...(labels ? { labels } : {}) },
  spec: {
    runtime: 'nodejs22',
    source: { inline: { source: 'exports.main = () => "hi"', dependencies: '{}' } },
    env: [{ name: 'GREETING', value: 'hi' }],
    resourceConfiguration: { function: { profile: 'XS' }, build: { profile: 'normal' } },
    replicas: 1,
    ...spec,
  },
  status: { conditions: [{ type: 'Running', status: 'True' }] },
});
const git = (reference: string, auth?: object) => ({
  source: { gitRepository: { url: 'https://github.com/acme/fns.git', baseDir: '/orders', reference, ...(auth ? { auth } : {}) } },
});

describe('functionChangeOf', () => {
  test.each([
    ['the source', { source: { inline: { source: 'exports.main = () => "bye"', dependencies: '{}' } } }, ['source']],
    ['the dependencies', { source: { inline: { source: 'exports.main = () => "hi"', dependencies: '{"dependencies":{"a":"1"}}' } } },
      ['dependencies']],
    ['the runtime', { runtime: 'nodejs20' }, ['runtime']],
    ['the base image', { runtimeImageOverride: 'europe-docker.pkg.dev/kyma-project/prod/function-runtime-nodejs22:1.6.0' }, ['base image']],
  ])('says a change of %s is a new build', (_what, spec, what) => {
    const change = functionChangeOf(fn(), fn(spec));
    expect(change.kind).toBe(FunctionChangeKind.NEW_BUILD);
    expect(change.what).toEqual(what);
    expect(change.summary).toBe(`new build (${what.join(', ')} changed): a build Job makes a new image, then new Pods replace the old ones`);
  });

  test('says a new Git reference or base directory is a new build, and new Git credentials only the next build\'s', () => {
    expect(functionChangeOf(fn(git('main')), fn(git('v2')))).toMatchObject({ kind: FunctionChangeKind.NEW_BUILD, what: ['Git reference'] });
    expect(functionChangeOf(fn(git('main')), fn(git('main', { type: 'basic', secretName: 'git-creds' })))).toMatchObject({
      kind: FunctionChangeKind.NEXT_BUILD, what: ['Git credentials'], fields: ['spec.source.gitRepository.auth'],
    });
    expect(functionChangeOf(fn(), fn(git('main'))).kind).toBe(FunctionChangeKind.NEW_BUILD);
  });

  test.each([
    ['env', { env: [{ name: 'GREETING', value: 'hello' }] }, 'env'],
    ['resources', { resourceConfiguration: { function: { profile: 'M' }, build: { profile: 'normal' } } }, 'resources'],
    ['Pod labels', { labels: { team: 'a' } }, 'Pod labels'],
    ['Pod annotations', { annotations: { 'prometheus.io/scrape': 'true' } }, 'Pod annotations'],
    ['secretMounts', { secretMounts: [{ secretName: 'creds', mountPath: '/creds' }] }, 'secretMounts'],
  ])('says a change of %s is a rollout with the same image', (_what, spec, what) => {
    expect(functionChangeOf(fn(), fn(spec))).toEqual({
      kind: FunctionChangeKind.ROLLOUT, what: [what], fields: expect.any(Array),
      summary: `rollout (${what} changed): new Pods replace the old ones, with the same image`,
    });
  });

  test('says replicas and scaleConfig are a rescale', () => {
    expect(functionChangeOf(fn(), fn({ replicas: 3 }))).toMatchObject({ kind: FunctionChangeKind.RESCALE, fields: ['spec.replicas'] });
    expect(functionChangeOf(fn(), fn({ scaleConfig: { minReplicas: 1, maxReplicas: 5 } })).summary)
      .toBe('rescale (scaleConfig changed): Pods are added or removed; none restarts');
  });

  test('says build resources are used by the next build: the 1.11.1 controller starts none for them', () => {
    expect(functionChangeOf(fn(), fn({ resourceConfiguration: { function: { profile: 'XS' }, build: { profile: 'fast' } } }))).toMatchObject({
      kind: FunctionChangeKind.NEXT_BUILD, what: ['build resources'],
    });
  });

  test('takes the most disruptive effect of several changed fields, and names them all', () => {
    const change = functionChangeOf(fn(), fn({ replicas: 2, env: [], runtime: 'python312' }));
    expect(change.kind).toBe(FunctionChangeKind.NEW_BUILD);
    expect(change.what).toEqual(['env', 'replicas', 'runtime']);
    expect(change.fields).toEqual(['spec.env', 'spec.replicas', 'spec.runtime']);
  });

  test('says the Function\'s own labels only relabel its objects, and ignores status and server-written metadata', () => {
    expect(functionChangeOf(fn(), fn({}, { team: 'a' }))).toMatchObject({ kind: FunctionChangeKind.METADATA, fields: ['metadata.labels'] });
    const later = { ...fn(), metadata: { ...fn().metadata, resourceVersion: '99', annotations: { note: 'x' } }, status: {} };
    expect(functionChangeOf(fn(), later))
      .toEqual({ kind: FunctionChangeKind.NONE, what: [], fields: [], summary: 'nothing: nothing changes for the controller' });
  });

  test('says a field the 1.11.1 controller does not know may restart the Pods', () => {
    expect(functionChangeOf(fn(), fn({ tolerations: [{ key: 'gpu' }] }))).toMatchObject({ kind: FunctionChangeKind.ROLLOUT, what: ['spec'] });
  });

  test('has words for every kind of change', () => {
    expect(Object.values(FunctionChangeKind).map(functionChangeTitle))
      .toEqual(['nothing', 'relabel', 'next build', 'rescale', 'rollout', 'new build']);
  });
});

describe('functionReleaseMoveOf', () => {
  const moving = (spec: object) => ({ metadata: { name: 'f', namespace: 'team' }, spec });
  test('an inline Function with dependencies installs them at every start and needs the registry or a mirror', () => {
    const move = functionReleaseMoveOf(moving({ runtime: 'python312', source: { inline: { source: 'x', dependencies: 'requests==2.32.3\n' } } }),
      ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0);
    expect(move.happens).toContain('its dependencies are installed at every Pod start, which makes each start slower');
    expect(move.needs).toEqual(['egress from its Pods to pypi.org and files.pythonhosted.org (pip install), '
      + 'or a mirror named in the Secret serverless-package-registry-config in team']);
  });
  test('dependencies are what package.json names or requirements.txt lists: none, nothing to install or reach', () => {
    const node = (dependencies: string) => functionReleaseMoveOf(moving({ runtime: 'nodejs22', source: { inline: { source: 'x', dependencies } } }),
      ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0);
    expect(node('{"dependencies":{"lodash":"4.17.21"}}').needs[0]).toMatch(/^egress from its Pods to registry\.npmjs\.org \(npm install\)/);
    expect(node('{"name":"f","dependencies":{}}').needs).toEqual([]);
    const python = functionReleaseMoveOf(moving({ runtime: 'python312', source: { inline: { source: 'x', dependencies: '# none\n\n' } } }),
      ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0);
    expect(python.needs).toEqual([]);
    expect(python.restarts).toBe(true);
  });

  test('a Git Function clones at every start and needs the Git server', () => {
    const move = functionReleaseMoveOf(moving({ runtime: 'nodejs20', source: { gitRepository: { url: 'https://git.example.com/f.git', baseDir: '/', reference: 'main' } } }),
      ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0);
    expect(move.needs[0]).toBe('egress from its Pods and from the controller to https://git.example.com/f.git');
    expect(move.happens).toContain('nodejs20 is deprecated in 1.13.0 (end of life April 2026): move to a newer runtime');
  });
  test('going back to 1.11.1 builds every Function again, into an empty registry', () => {
    const move = functionReleaseMoveOf(moving({ runtime: 'nodejs22', source: { inline: { source: 'x' } } }), ServerlessRelease.V1_13_0, ServerlessRelease.V1_11_1);
    expect(move.happens[0]).toBe('a build Job builds its image into the registry (which starts empty), then new Pods replace the old ones');
    expect(functionReleaseMoveOf(moving({}), ServerlessRelease.V1_11_1, ServerlessRelease.V1_11_1)).toMatchObject({ restarts: false, summary: 'nothing changes for it' });
  });
});
