import { Testing } from 'cdk8s';
import { FunctionNamespace, FunctionRuntime, FunctionSource, KymaFunction, ServerlessRelease, ServerlessStack } from '../../src';
import { KNOWN_RUNTIMES, RuntimeFamily, releaseFacts } from '../../src/api';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';

const HELLO = 'exports.main = () => "hi"';

function namespace(release: ServerlessRelease): FunctionNamespace {
  return new FunctionNamespace(Testing.app(), 'team-a', { release });
}

describe('FunctionRuntime', () => {
  test('names every runtime of every release, in the newest CRD\'s order', () => {
    expect(FunctionRuntime.ALL.map(r => r.name)).toEqual([...KNOWN_RUNTIMES]);
    expect(FunctionRuntime.ALL.map(r => r.name)).toEqual([...releaseFacts(ServerlessRelease.V1_13_0).runtimes]);
  });

  test('knows the family and the files of each runtime', () => {
    expect(FunctionRuntime.NODEJS_22.family).toBe(RuntimeFamily.NODEJS);
    expect(FunctionRuntime.NODEJS_24.family).toBe(RuntimeFamily.NODEJS);
    expect(FunctionRuntime.NODEJS_20.files.handler).toBe('handler.js');
    expect(FunctionRuntime.PYTHON_312.files).toMatchObject({ handler: 'handler.py', dependencies: 'requirements.txt' });
    expect(String(FunctionRuntime.PYTHON_312)).toBe('python312');
  });

  test('knows the releases that have each runtime, and when upstream ended its life', () => {
    expect(FunctionRuntime.NODEJS_24.releases).toEqual([ServerlessRelease.V1_13_0]);
    expect(FunctionRuntime.NODEJS_22.releases).toEqual([ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0]);
    expect(FunctionRuntime.of('nodejs26').releases).toEqual([]);
    expect(FunctionRuntime.NODEJS_20.endOfLife(ServerlessRelease.V1_13_0)).toBe('April 2026');
    expect(FunctionRuntime.NODEJS_22.endOfLife(ServerlessRelease.V1_13_0)).toBeUndefined();
  });

  test('of() returns the named runtime for a known name, nodejs24 included', () => {
    expect(FunctionRuntime.of('nodejs22')).toBe(FunctionRuntime.NODEJS_22);
    expect(FunctionRuntime.of('nodejs24')).toBe(FunctionRuntime.NODEJS_24);
  });

  test('of() makes a runtime of the right family for a later version', () => {
    const node26 = FunctionRuntime.of('nodejs26');
    expect(node26.name).toBe('nodejs26');
    expect(node26.family).toBe(RuntimeFamily.NODEJS);
    expect(FunctionRuntime.of('python314').files.handler).toBe('handler.py');
  });

  test('fails at synth for NODEJS_24 under release 1.11.1, naming the release that has it and the runtimes of the stack\'s', () => {
    const team = namespace(ServerlessRelease.V1_11_1);
    new KymaFunction(team, 'hello', { runtime: FunctionRuntime.NODEJS_24, source: FunctionSource.fromInline(HELLO) });
    expect(() => Testing.synth(team)).toThrow('[team-a/hello] \'runtime\' (spec.runtime): "nodejs24" is a runtime of release 1.13.0, not of release 1.11.1, '
      + 'the release of the Function\'s stack: set the stack\'s \'release\' to ServerlessRelease.V1_13_0, or use one of nodejs20, nodejs22, python312');
  });

  test('NODEJS_24 fails under the default stack too, which deploys 1.11.1', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless');
    const team = new FunctionNamespace(app, 'team-a', { stack });
    new KymaFunction(team, 'hello', { runtime: FunctionRuntime.NODEJS_24, source: FunctionSource.fromInline(HELLO) });
    expect(() => Testing.synth(team)).toThrow(/"nodejs24" is a runtime of release 1\.13\.0, not of release 1\.11\.1/);
  });
  test('NODEJS_24 synthesizes under release 1.13.0', () => {
    const team = namespace(ServerlessRelease.V1_13_0);
    new KymaFunction(team, 'hello', { runtime: FunctionRuntime.NODEJS_24, source: FunctionSource.fromInline(HELLO) });
    const objects = Testing.synth(team);
    expect(objects.find(o => o.kind === 'Function').spec.runtime).toBe('nodejs24');
    expectValidKubernetesObjects(objects, { release: ServerlessRelease.V1_13_0 });
  });

  test.each([ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0])('fails at synth under %s for a runtime no release has, naming the allowed runtimes', release => {
    const team = namespace(release);
    new KymaFunction(team, 'hello', { runtime: FunctionRuntime.of('nodejs26'), source: FunctionSource.fromInline(HELLO) });
    expect(() => Testing.synth(team)).toThrow(/\[team-a\/hello\] 'runtime' \(spec\.runtime\): Unsupported value: "nodejs26": supported values: "nodejs20", "nodejs22"/);
  });

  test('of() throws for a name without a family', () => {
    expect(() => FunctionRuntime.of('go122')).toThrow('Unknown runtime \'go122\': a runtime name is \'nodejs\' or \'python\' and a version');
  });
});
