import { KNOWN_RUNTIMES, RELEASES, ServerlessRelease, isServerlessRelease, parseRelease, releaseFacts } from '../../src/api';

describe('releaseFacts', () => {
  test('1.11.1 builds images and has three runtimes', () => {
    const facts = releaseFacts(ServerlessRelease.V1_11_1);
    expect(facts.buildsImages).toBe(true);
    expect(facts.runtimes).toEqual(['nodejs20', 'nodejs22', 'python312']);
    expect(facts.reservedAnnotations).toEqual([]);
  });

  test('1.13.0 builds nothing, adds nodejs24, deprecates nodejs20 and reserves the handler variables', () => {
    const facts = releaseFacts(ServerlessRelease.V1_13_0);
    expect(facts.buildsImages).toBe(false);
    expect(facts.runtimes).toEqual(['nodejs20', 'nodejs22', 'nodejs24', 'python312']);
    expect(Object.keys(facts.deprecatedRuntimes)).toEqual(['nodejs20']);
    expect(facts.reservedEnvNames).toEqual(expect.arrayContaining(['FUNC_HANDLER_SOURCE', 'FUNC_HANDLER_DEPENDENCIES']));
    expect(facts.reservedAnnotations).toEqual(['proxy.istio.io/config']);
  });

  test('the default is 1.11.1', () => {
    expect(releaseFacts()).toBe(releaseFacts(ServerlessRelease.V1_11_1));
  });

  test('every runtime of a release is a known runtime', () => {
    for (const release of RELEASES) {
      for (const runtime of releaseFacts(release).runtimes) expect(KNOWN_RUNTIMES).toContain(runtime);
    }
  });
});

describe('parseRelease', () => {
  test('takes a version with or without v', () => {
    expect(parseRelease('1.13.0')).toBe(ServerlessRelease.V1_13_0);
    expect(parseRelease('v1.11.1')).toBe(ServerlessRelease.V1_11_1);
  });

  test('throws naming the releases, with a suggestion for a near miss', () => {
    expect(() => parseRelease('1.13', '--release')).toThrow("--release (1.13) is no release this package deploys: use '1.11.1' or '1.13.0' (did you mean '1.13.0'?)");
    expect(() => parseRelease('latest')).toThrow(/^release \(latest\) is no release this package deploys: use '1.11.1' or '1.13.0'$/);
  });

  test('isServerlessRelease tells release names', () => {
    expect(isServerlessRelease('1.13.0')).toBe(true);
    expect(isServerlessRelease('1.12.0')).toBe(false);
    expect(isServerlessRelease(1)).toBe(false);
  });
});
