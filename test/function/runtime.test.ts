import { Testing } from 'cdk8s';
import { FunctionNamespace, FunctionRuntime, FunctionSource, KymaFunction, RUNTIMES, RuntimeFamily } from '../../src';

describe('FunctionRuntime', () => {
  test('names every runtime of the CRD, in its order', () => {
    expect(FunctionRuntime.ALL.map(r => r.name)).toEqual([...RUNTIMES]);
  });

  test('knows the family and the files of each runtime', () => {
    expect(FunctionRuntime.NODEJS_22.family).toBe(RuntimeFamily.NODEJS);
    expect(FunctionRuntime.NODEJS_20.files.handler).toBe('handler.js');
    expect(FunctionRuntime.PYTHON_312.files).toMatchObject({ handler: 'handler.py', dependencies: 'requirements.txt' });
    expect(String(FunctionRuntime.PYTHON_312)).toBe('python312');
  });

  test('of() returns the named runtime for a known name', () => {
    expect(FunctionRuntime.of('nodejs22')).toBe(FunctionRuntime.NODEJS_22);
  });

  test('of() makes a runtime of the right family for a later version', () => {
    const node24 = FunctionRuntime.of('nodejs24');
    expect(node24.name).toBe('nodejs24');
    expect(node24.family).toBe(RuntimeFamily.NODEJS);
    expect(FunctionRuntime.of('python313').files.handler).toBe('handler.py');
  });

  test('fails at synth for a runtime the 1.11.1 CRD does not allow, naming the construct and the allowed runtimes', () => {
    const team = new FunctionNamespace(Testing.app(), 'team-a');
    new KymaFunction(team, 'hello', { runtime: FunctionRuntime.of('nodejs24'), source: FunctionSource.fromInline('exports.main = () => "hi"') });
    expect(() => Testing.synth(team))
      .toThrow('[team-a/hello] \'runtime\' (spec.runtime): Unsupported value: "nodejs24": supported values: "nodejs20", "nodejs22", "python312"');
  });

  test('of() throws for a name without a family', () => {
    expect(() => FunctionRuntime.of('go122')).toThrow('Unknown runtime \'go122\': a runtime name is \'nodejs\' or \'python\' and a version');
  });
});
