import {
  DEFAULT_RELEASE, FUNCTION_RULES, FUNCTION_WARNINGS, FunctionRuleOptions, RELEASES, ServerlessRelease, Violation, functionRulesOf, functionWarnings,
  validateFunction,
} from '../../src/api';
import * as fc from 'fast-check';
import {
  ANNOTATIONS_MAX_BYTES, ENV_STRING_MAX_BYTES, FunctionServiceClash, INLINE_DEPENDENCIES_ENV_MAX_BYTES, INLINE_SOURCE_ENV_MAX_BYTES, INLINE_SOURCE_MAX_BYTES,
  functionServiceClashes,
} from '../../src/api/function-rules';
import { functionCelRules } from '../../src/api/function-schema';
import {
  EXAMPLE_KEY, NAME_63, RULE_CASES, VALID_FUNCTIONS, VALID_FUNCTIONS_1_13_0, changed, validFunction,
} from '../util/function-rule-cases';

const V1_11_1 = ServerlessRelease.V1_11_1;
const V1_13_0 = ServerlessRelease.V1_13_0;

const CATALOG = new Map(FUNCTION_RULES.map(r => [r.id, r]));

function violation(rule: string, path: string, message: string | RegExp): object {
  return expect.objectContaining({ rule, path, message: typeof message === 'string' ? message : expect.stringMatching(message) });
}

const CASES = Object.entries(RULE_CASES).map(([id, c]) => ({ id, ...c, release: c.release ?? DEFAULT_RELEASE }));

describe('every rule of the Function API', () => {
  test('has one failing and one passing case here, and nothing else', () => {
    const ids = FUNCTION_RULES.map(r => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(RULE_CASES).sort()).toEqual([...ids].sort());
  });

  test.each(RELEASES)('catalogs every CEL rule of the %s CRD under its key in functionCelRules, holding in that release', release => {
    expect(Object.keys(functionCelRules(release)).filter(id => !functionRulesOf(release).some(r => r.id === id))).toEqual([]);
  });

  test('starts from Functions that are valid', () => {
    for (const fn of VALID_FUNCTIONS) expect({ name: fn.metadata.name, violations: validateFunction(fn) }).toEqual({ name: fn.metadata.name, violations: [] });
    for (const fn of VALID_FUNCTIONS_1_13_0) {
      expect({ name: fn.metadata.name, violations: validateFunction(fn, { release: V1_13_0 }) }).toEqual({ name: fn.metadata.name, violations: [] });
    }
  });

  test('judges each case under a release its rule holds in', () => {
    for (const { id, release } of CASES) expect({ id, holds: functionRulesOf(release).some(r => r.id === id) }).toEqual({ id, holds: true });
  });

  test.each(CASES)('fails when $failsWhen ($id, $release)', ({ id, base, fail, path, message, release }) => {
    expect(validateFunction(changed(fail, base), { release })).toContainEqual(violation(id, path, message));
  });

  test.each(CASES)('accepts $accepts ($id, $release)', ({ base, pass, release }) => {
    expect(validateFunction(changed(pass, base), { release })).toEqual([]);
  });

  // A rule of one release only must not fire in another: each failing case, judged where its rule does not hold.
  const elsewhere = CASES.flatMap(c => RELEASES.filter(r => !functionRulesOf(r).some(rule => rule.id === c.id)).map(other => ({ ...c, other })));
  test.each(elsewhere)('does not apply $id under $other', ({ id, base, fail, other }) => {
    expect(validateFunction(changed(fail, base), { release: other }).map(v => v.rule)).not.toContain(id);
  });

  test('gives each violation of the failing cases its rule\'s hint from the catalog', () => {
    for (const { id, base, fail, release } of CASES) {
      for (const v of validateFunction(changed(fail, base), { release })) {
        expect({ case: id, rule: v.rule, hint: v.hint }).toEqual({ case: id, rule: v.rule, hint: CATALOG.get(v.rule ?? '')?.hint ?? 'a rule of the catalog' });
      }
    }
  });
});

/** Every violation names a rule of the catalog and carries its hint. */
function expectCatalogRules(violations: readonly Violation[]): void {
  for (const v of violations) {
    expect({ path: v.path, rule: v.rule, hint: v.hint }).toEqual({ path: v.path, rule: v.rule, hint: CATALOG.get(v.rule ?? '')?.hint ?? 'a rule of the catalog' });
  }
}

describe('violations of malformed Functions', () => {
  test.each<[string, (fn: any) => void]>([
    ['a CPU limit is a fractional number', fn => { fn.spec.resourceConfiguration.function.resources.limits.cpu = 0.5; }],
    ['replicas does not fit in 32 bits', fn => { fn.spec.replicas = 2 ** 40; }],
    ['scaleConfig has no minReplicas', fn => { fn.spec.scaleConfig = { maxReplicas: 2 }; }],
    ['an environment variable has no name', fn => { fn.spec.env.push({ value: 'x' }); }],
  ])('fails when %s, naming a rule of the catalog', (_what, change) => {
    const violations = validateFunction(changed(change));
    expect(violations).not.toEqual([]);
    expectCatalogRules(violations);
  });
});

describe('Node.js dependencies', () => {
  test.each([
    ['are a JSON array', '["lodash"]', /it is JSON, but not an object$/],
    ['are not JSON', '{ "dependencies": ', /it is not JSON \(/],
    ['are a requirements.txt', 'lodash==4.17.21', /it is not JSON \(/],
  ])('fails when they %s', (_what, dependencies, problem) => {
    const fn = changed(f => { f.spec.source.inline.dependencies = dependencies; });
    expect(validateFunction(fn)).toEqual([violation('nodeDependencies', 'spec.source.inline.dependencies', problem)]);
  });

  test('fails with a shortened copy of long dependencies', () => {
    const fn = changed(f => { f.spec.source.inline.dependencies = `[${'"lodash",'.repeat(20)}]`; });
    expect(validateFunction(fn)).toEqual([violation('nodeDependencies', 'spec.source.inline.dependencies', /^Invalid value: "\[(\\"lodash\\",){4}\.\.\.": /)]);
  });

  test.each([['empty', ''], ['spaces', '   '], ['line breaks and tabs', '\n\t\n']])('accepts dependencies of only %s', (_what, dependencies) => {
    expect(validateFunction(changed(fn => { fn.spec.source.inline.dependencies = dependencies; }))).toEqual([]);
  });

  test.each([['a JSON array', '["requests"]'], ['a requirements.txt', 'requests==2.32.3\nflask>=3']])('accepts Python dependencies as %s, unchecked', (_what, dependencies) => {
    expect(validateFunction(changed(fn => { fn.spec.source.inline.dependencies = dependencies; }, 'weather'))).toEqual([]);
  });
});

describe('inline source size', () => {
  const withInline = (source: string, dependencies?: string) => changed(fn => { fn.spec.source.inline = { source, dependencies }; });
  // A handler that exports main (18 bytes), padded in a comment.
  const EXPORTS_MAIN = 'exports.main=1; //';
  const padded = (bytes: number) => EXPORTS_MAIN + 'x'.repeat(bytes - EXPORTS_MAIN.length);

  test('accepts source and dependencies that together are exactly at the limit', () => {
    expect(validateFunction(withInline(padded(INLINE_SOURCE_MAX_BYTES - 2), '{}'))).toEqual([]);
  });

  test('fails when source and dependencies together are one byte over the limit', () => {
    expect(validateFunction(withInline(padded(INLINE_SOURCE_MAX_BYTES - 1), '{}'))).toEqual([
      violation('inlineSourceSize', 'spec.source.inline', `Too long: source and dependencies take ${INLINE_SOURCE_MAX_BYTES + 1} bytes; at most ${INLINE_SOURCE_MAX_BYTES} fit in the ConfigMap the controller stores them in`),
    ]);
  });

  test('accepts multi-byte source exactly at the limit in UTF-8 bytes', () => {
    expect(validateFunction(withInline(EXPORTS_MAIN + 'é'.repeat((INLINE_SOURCE_MAX_BYTES - 2 - EXPORTS_MAIN.length) / 2), '{}'))).toEqual([]);
  });

  test('fails when multi-byte source is over the limit in UTF-8 bytes, though not in characters', () => {
    const source = `${EXPORTS_MAIN}${'€'.repeat(INLINE_SOURCE_MAX_BYTES / 3 - EXPORTS_MAIN.length / 3)}x`;
    expect(source.length).toBeLessThan(INLINE_SOURCE_MAX_BYTES);
    expect(validateFunction(withInline(source, '{}'))).toEqual([violation('inlineSourceSize', 'spec.source.inline', /take 921603 bytes/)]);
  });

  test('counts blank Node.js dependencies as the `{}` the controller stores, and Python\'s as nothing', () => {
    expect(validateFunction(withInline(padded(INLINE_SOURCE_MAX_BYTES - 1), ' \n')).map(v => v.message))
      .toEqual([expect.stringContaining(`take ${INLINE_SOURCE_MAX_BYTES + 1} bytes`)]);
    const python = changed(fn => { fn.spec.runtime = 'python312'; fn.spec.source.inline = { source: 'x'.repeat(INLINE_SOURCE_MAX_BYTES) }; });
    expect(validateFunction(python).filter(v => v.rule === 'inlineSourceSize')).toEqual([]);
  });
});

describe('inline source size under 1.13.0, where source and dependencies travel in environment variables', () => {
  const R = { release: V1_13_0 };
  const withInline = (source: string, dependencies?: string) => changed(fn => { fn.spec.source.inline = { source, dependencies }; }, 'hello24');
  const EXPORTS_MAIN = 'exports.main=1; //';
  const padded = (bytes: number) => EXPORTS_MAIN + 'x'.repeat(bytes - EXPORTS_MAIN.length);

  test('allows each variable 128 KiB less its name, "=" and the closing NUL: what Linux lets a process start with', () => {
    expect(ENV_STRING_MAX_BYTES).toBe(131072);
    expect(INLINE_SOURCE_ENV_MAX_BYTES).toBe(131072 - 'FUNC_HANDLER_SOURCE='.length - 1);
    expect(INLINE_DEPENDENCIES_ENV_MAX_BYTES).toBe(131072 - 'FUNC_HANDLER_DEPENDENCIES='.length - 1);
  });

  test('accepts source and dependencies each exactly at its limit', () => {
    const dependencies = `{"d":"${'x'.repeat(INLINE_DEPENDENCIES_ENV_MAX_BYTES - 8)}"}`;
    expect(Buffer.byteLength(dependencies)).toBe(INLINE_DEPENDENCIES_ENV_MAX_BYTES);
    expect(validateFunction(withInline(padded(INLINE_SOURCE_ENV_MAX_BYTES), dependencies), R)).toEqual([]);
  });

  test('fails when the source is one byte over, naming the variable', () => {
    expect(validateFunction(withInline(padded(INLINE_SOURCE_ENV_MAX_BYTES + 1), '{}'), R)).toEqual([
      violation('inlineSourceSize', 'spec.source.inline.source', `Too long: the source takes ${INLINE_SOURCE_ENV_MAX_BYTES + 1} bytes; at most ${INLINE_SOURCE_ENV_MAX_BYTES} fit in the environment variable FUNC_HANDLER_SOURCE the controller passes it in (Linux refuses to start a container with a variable over 128 KiB)`),
    ]);
  });

  test('fails when the dependencies are one byte over, naming the variable', () => {
    const dependencies = `{"d":"${'x'.repeat(INLINE_DEPENDENCIES_ENV_MAX_BYTES - 7)}"}`;
    expect(validateFunction(withInline(padded(100), dependencies), R)).toEqual([
      violation('inlineSourceSize', 'spec.source.inline.dependencies', /^Too long: the dependencies take 131046 bytes; at most 131045 fit in the environment variable FUNC_HANDLER_DEPENDENCIES /),
    ]);
  });

  test('counts UTF-8 bytes', () => {
    const source = `${EXPORTS_MAIN}${'é'.repeat(INLINE_SOURCE_ENV_MAX_BYTES / 2)}`;
    expect(source.length).toBeLessThan(INLINE_SOURCE_ENV_MAX_BYTES);
    expect(validateFunction(withInline(source), R).map(v => v.rule)).toEqual(['inlineSourceSize']);
  });

  test('1.11.1\'s limit is the ConfigMap\'s: a source 1.13.0 refuses passes there', () => {
    const fn = changed(f => { f.spec.source.inline = { source: padded(INLINE_SOURCE_ENV_MAX_BYTES + 1), dependencies: '{}' }; });
    expect(validateFunction(fn)).toEqual([]);
  });
});

describe('rules that differ per release', () => {
  test('1.13.0 accepts nodejs24 and 1.11.1 does not', () => {
    const fn = changed(f => { f.spec.runtime = 'nodejs24'; }, 'weather');
    fn.spec.source.inline = { source: 'exports.main = () => 1' };
    expect(validateFunction(fn, { release: V1_13_0 })).toEqual([]);
    expect(validateFunction(fn)).toEqual([violation('openapi.enum', 'spec.runtime', 'Unsupported value: "nodejs24": supported values: "nodejs20", "nodejs22", "python312"')]);
  });

  test('1.13.0 reserves FUNC_HANDLER_SOURCE and FUNC_HANDLER_DEPENDENCIES, which 1.11.1 leaves to the user', () => {
    for (const name of ['FUNC_HANDLER_SOURCE', 'FUNC_HANDLER_DEPENDENCIES']) {
      expect(validateFunction(changed(f => { f.spec.env = [{ name, value: 'x' }]; }, 'hello24'), { release: V1_13_0 }).map(v => v.rule)).toEqual(['reservedEnvs']);
      expect(validateFunction(changed(f => { f.spec.env = [{ name, value: 'x' }]; }))).toEqual([]);
    }
  });

  test('1.13.0 lets minReplicas exceed maxReplicas in the CRD, but refuses scaleConfig as a whole', () => {
    const fn = changed(f => { f.spec.scaleConfig = { minReplicas: 3, maxReplicas: 1 }; }, 'hello24');
    expect(validateFunction(fn, { release: V1_13_0 }).map(v => v.rule)).toEqual(['scaleConfig']);
  });

  test('1.13.0 refuses build resources given explicitly, and checks no build minimum there', () => {
    const fn = changed(f => { f.spec.resourceConfiguration.build = { resources: { requests: { cpu: '1m', memory: '1Mi' } } }; }, 'hello24');
    expect(validateFunction(fn, { release: V1_13_0 })).toEqual([
      violation('buildResources', 'spec.resourceConfiguration.build', 'Forbidden: 1.13.0 builds nothing; the controller ignores build resources; remove buildResources'),
    ]);
  });

  test('1.11.1 explains a Pod security context with the release that has it', () => {
    const fn = changed(f => { f.spec.podSecurityContext = { runAsUser: 1000 }; });
    expect(validateFunction(fn)).toEqual([
      violation('securityContextRelease', 'spec.podSecurityContext', 'unknown field "podSecurityContext": the Function CRD of release 1.11.1 has no such field; security contexts need release 1.13.0'),
    ]);
    expect(validateFunction(fn)[0].hint).toBe('set the stack\'s release to 1.13.0, or remove the field');
  });

  test('1.13.0 checks the security contexts\' types', () => {
    const fn = changed(f => { f.spec.podSecurityContext.runAsUser = 'root'; f.spec.containerSecurityContext.capabilities.drop = 'ALL'; }, 'hello24');
    expect(validateFunction(fn, { release: V1_13_0 })).toEqual([
      violation('openapi.type', 'spec.containerSecurityContext.capabilities.drop', 'Invalid value: "ALL": must be of type array'),
      violation('openapi.type', 'spec.podSecurityContext.runAsUser', 'Invalid value: "root": must be of type integer'),
    ]);
  });

  test('the env fixed point holds under 1.13.0 too, with what its controller does without it', () => {
    const fn = changed(f => { delete f.spec.env[1].valueFrom.fieldRef.apiVersion; }, 'hello24');
    expect(validateFunction(fn, { release: V1_13_0 })).toEqual([
      violation('envServerDefaults', 'spec.env[1].valueFrom.fieldRef.apiVersion', /the 1\.13\.0 controller, which compares env with the Deployment's, then never sees them equal, keeps Running at Unknown \(DeploymentUpdated\) and never creates the Service; give apiVersion: "v1"$/),
    ]);
  });
});

describe('warnings', () => {
  const legacy = () => validFunction('legacy20');

  test('name nodejs20 under 1.13.0 as past its end of life, with the runtime to move to', () => {
    expect(functionWarnings(legacy(), { release: V1_13_0 })).toEqual([{
      path: 'spec.runtime',
      rule: 'deprecatedRuntime',
      message: 'Deprecated: "nodejs20" reached its end of life in April 2026; release 1.13.0 still runs it, move to nodejs24',
      hint: FUNCTION_WARNINGS[0].hint,
    }]);
  });

  test('never fail a Function: nodejs20 stays valid under both releases, and warns of nothing under 1.11.1', () => {
    expect(validateFunction(legacy(), { release: V1_13_0 })).toEqual([]);
    expect(validateFunction(legacy())).toEqual([]);
    expect(functionWarnings(legacy())).toEqual([]);
    expect(functionWarnings(legacy(), { release: V1_11_1 })).toEqual([]);
  });

  test('name a Function too large for client-side apply (a 300 KB inline source passes under 1.11.1), with how to apply it', () => {
    const big = changed(f => { f.spec.source = { inline: { source: `exports.main = () => "${'x'.repeat(300 * 1024)}";\n` } }; });
    expect(validateFunction(big)).toEqual([]);
    const warnings = functionWarnings(big);
    expect(warnings).toEqual([{
      path: '',
      rule: 'clientSideApplySize',
      message: expect.stringMatching(/^Too large for client-side apply: the Function takes \d+ bytes as JSON \(its inline source and dependencies take 30\d{4}\), and client-side kubectl apply copies it into the annotation kubectl\.kubernetes\.io\/last-applied-configuration, which the API server refuses above 262144 bytes of annotations$/),
      hint: 'apply it server-side (kubectl apply --server-side, Argo CD\'s ServerSideApply=true), or take the source from Git (FunctionSource.fromGitRepository)',
    }]);
    // Just below the limit, nothing.
    const size = (fn: unknown) => Buffer.byteLength(JSON.stringify(fn));
    const fits = changed(f => { f.spec.source = { inline: { source: 'x' } }; });
    const room = ANNOTATIONS_MAX_BYTES - size(fits) - 'kubectl.kubernetes.io/last-applied-configuration'.length;
    expect(functionWarnings(changed(f => { f.spec.source = { inline: { source: 'x'.repeat(room + 1) } }; }))).toEqual([]);
    expect(functionWarnings(changed(f => { f.spec.source = { inline: { source: 'x'.repeat(room + 2) } }; })).map(w => w.rule)).toEqual(['clientSideApplySize']);
  });

  test.each([
    ['ASCII', 'x'], ['two-byte', 'é'], ['three-byte', '€'], ['escaped control', '\u0001'], ['astral', '😀'], ['escaped quote', '"'],
  ])('measure a Function of %s characters near the limit as writing it does: within it nothing, one character more a warning', (_, char) => {
    const key = 'kubectl.kubernetes.io/last-applied-configuration'.length;
    const bytes = (fn: unknown) => Buffer.byteLength(JSON.stringify(fn)) + key;
    const withSource = (n: number) => changed(f => { f.spec.source = { inline: { source: char.repeat(n) } }; });
    // The largest source whose Function fits, found by writing it.
    let low = 0;
    let high = ANNOTATIONS_MAX_BYTES;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (bytes(withSource(mid)) <= ANNOTATIONS_MAX_BYTES) low = mid; else high = mid - 1;
    }
    expect(functionWarnings(withSource(low))).toEqual([]);
    const over = withSource(low + 1);
    expect(bytes(over)).toBeGreaterThan(ANNOTATIONS_MAX_BYTES);
    expect(functionWarnings(over).map(w => w.message)).toEqual([expect.stringContaining(`the Function takes ${bytes(over)} bytes as JSON`)]);
  });

  test('say nothing of supported runtimes, unknown ones or things that are no Function', () => {
    for (const fn of VALID_FUNCTIONS_1_13_0.filter(f => f.spec.runtime !== 'nodejs20')) expect(functionWarnings(fn, { release: V1_13_0 })).toEqual([]);
    expect(functionWarnings(changed(f => { f.spec.runtime = 'nodejs18'; }), { release: V1_13_0 })).toEqual([]);
    expect(functionWarnings(null, { release: V1_13_0 })).toEqual([]);
  });

  test('are no rules of FUNCTION_RULES', () => {
    expect(FUNCTION_RULES.map(r => r.id)).not.toContain('deprecatedRuntime');
  });
});

describe('Git URLs', () => {
  const withUrl = (url: string) => changed(fn => { fn.spec.source.gitRepository.url = url; }, 'orders');

  test.each([
    'https://github.com/org/repo.git',
    'http://git.internal:8080/org/repo',
    'ssh://git@github.com/org/repo.git',
    'git@github.com:org/repo.git',
    'git://github.com/org/repo.git',
  ])('accepts %p', url => {
    expect(validateFunction(withUrl(url))).toEqual([]);
  });

  test.each(['github.com/org/repo', 'not a url', ''])('fails when the URL is %p', url => {
    expect(validateFunction(withUrl(url))).toEqual([violation('gitUrl', 'spec.source.gitRepository.url', /must be an absolute URL/)]);
  });
});

describe('Secret mounts', () => {
  const withMounts = (...mounts: Array<[string, string]>) =>
    changed(fn => { fn.spec.secretMounts = mounts.map(([secretName, mountPath]) => ({ secretName, mountPath })); });

  test('fails when two mounts use one path, one with a trailing slash', () => {
    expect(validateFunction(withMounts(['a', '/etc/secrets'], ['b', '/etc/secrets/']))).toEqual([
      violation('mountPath', 'spec.secretMounts[1].mountPath', /^Duplicate value: "\/etc\/secrets\/": each mount path can be used once$/),
    ]);
  });

  test.each(['/tmp', '/tmp/', '/tmp//'])('fails when a Secret is mounted at %p', mountPath => {
    expect(validateFunction(withMounts(['a', mountPath]))).toEqual([violation('mountPath', 'spec.secretMounts[0].mountPath', /scratch volume at \/tmp/)]);
  });

  test.each(['etc/secrets', './secrets', '/etc/a:b'])('fails when the mount path is %p', mountPath => {
    expect(validateFunction(withMounts(['a', mountPath]))).toEqual([violation('mountPath', 'spec.secretMounts[0].mountPath', /must be an absolute path without ':'$/)]);
  });

  test('accepts mounts below /tmp and side by side', () => {
    expect(validateFunction(withMounts(['a', '/tmp/a'], ['b', '/etc/b'], ['c', '/etc/b/c']))).toEqual([]);
  });

  test('fails when a mounted Secret\'s name has upper-case letters', () => {
    expect(validateFunction(withMounts(['Tls', '/etc/tls']))).toEqual([violation('objectName', 'spec.secretMounts[0].secretName', /a Secret name must be a DNS-1123 subdomain/)]);
  });
});

describe('environment variables', () => {
  test('fails when a variable has both a value and a valueFrom', () => {
    const fn = changed(f => { f.spec.env = [{ name: 'A', value: 'x', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }]; });
    expect(validateFunction(fn)).toEqual([violation('envValueSource', 'spec.env[0].valueFrom', 'Invalid value: "": may not be specified when `value` is not empty')]);
  });

  test('fails when valueFrom has two sources', () => {
    const fn = changed(f => { f.spec.env[1].valueFrom.secretKeyRef = { name: 'greeter-secret', key: 'name' }; });
    expect(validateFunction(fn)).toEqual([
      violation('envValueSource', 'spec.env[1].valueFrom', 'Invalid value: "": may not have more than one field specified at a time (found configMapKeyRef, secretKeyRef)'),
    ]);
  });

  test('fails when valueFrom has no source', () => {
    const fn = changed(f => { f.spec.env[1].valueFrom = {}; });
    expect(validateFunction(fn)).toEqual([violation('envValueSource', 'spec.env[1].valueFrom', /must specify one of: `configMapKeyRef`, `fieldRef`/)]);
  });

  test('fails when a secretKeyRef names a Secret in upper case', () => {
    const fn = changed(f => { f.spec.env[2].valueFrom.secretKeyRef.name = 'GreeterSecret'; });
    expect(validateFunction(fn)).toEqual([violation('objectName', 'spec.env[2].valueFrom.secretKeyRef.name', /^Invalid value: "GreeterSecret": a Secret name/)]);
  });

  test('fails when a configMapKeyRef names no ConfigMap', () => {
    const fn = changed(f => { f.spec.env[1].valueFrom.configMapKeyRef.name = ''; });
    expect(validateFunction(fn)).toEqual([violation('objectName', 'spec.env[1].valueFrom.configMapKeyRef.name', 'Required value: the name of the ConfigMap')]);
  });

  test('fails when a secretKeyRef key has a slash', () => {
    const fn = changed(f => { f.spec.env[2].valueFrom.secretKeyRef.key = 'tls/key'; });
    expect(validateFunction(fn)).toEqual([violation('objectKey', 'spec.env[2].valueFrom.secretKeyRef.key', /a valid Secret key must consist of/)]);
  });

  test.each(['A=B', 'A B', '9LIVES'])('fails when a variable is named %p', name => {
    const fn = changed(f => { f.spec.env[0].name = name; });
    expect(validateFunction(fn)).toEqual([violation('envName', 'spec.env[0].name', /a valid environment variable name must consist of/)]);
  });
});

describe('labels and annotations', () => {
  test('fails when a label value has 64 characters', () => {
    expect(validateFunction(changed(fn => { fn.spec.labels = { team: 'p'.repeat(64) }; }))).toEqual([
      violation('labelSyntax', 'spec.labels.team', /at most 63 characters$/),
    ]);
  });

  test.each([['empty', ''], ['dotted', 'v1.2.3'], ['mixed-case', 'A_b-C'], ['63 characters long', 'p'.repeat(63)]])('accepts a label value that is %s', (_what, value) => {
    expect(validateFunction(changed(fn => { fn.spec.labels = { team: value }; }))).toEqual([]);
  });

  test.each([
    ['Example.com/team', /^Invalid value: "Example\.com\/team": prefix part a lowercase RFC 1123 subdomain/],
    ['example.com/-team', /^Invalid value: "example\.com\/-team": name part must consist of/],
    ['a/b/c', /^Invalid value: "a\/b\/c": a qualified name must consist of/],
  ])('fails when a label key is %p', (key, message) => {
    expect(validateFunction(changed(fn => { fn.spec.labels = { [key]: 'v' }; }))).toEqual([violation('labelSyntax', 'spec.labels', message)]);
  });

  test('fails when an annotation key is not a qualified name', () => {
    expect(validateFunction(changed(fn => { fn.spec.annotations = { 'example.com/': 'v' }; }))).toEqual([
      violation('annotationSyntax', 'spec.annotations', 'Invalid value: "example.com/": name part must be non-empty'),
    ]);
  });

  test('fails when annotations are over 256 KiB in UTF-8 bytes, though not in characters', () => {
    const value = 'é'.repeat(Math.ceil((ANNOTATIONS_MAX_BYTES - EXAMPLE_KEY.length) / 2));
    expect(EXAMPLE_KEY.length + value.length).toBeLessThan(ANNOTATIONS_MAX_BYTES);
    expect(validateFunction(changed(fn => { fn.spec.annotations = { [EXAMPLE_KEY]: value }; }))).toEqual([
      violation('annotationSyntax', 'spec.annotations', /^Too long: must have at most 262144 bytes \(they take 262145\)$/),
    ]);
  });

  test('accepts annotations of 256 KiB spread over several keys', () => {
    const quarter = ANNOTATIONS_MAX_BYTES / 4;
    const annotations = Object.fromEntries(['a', 'b', 'c', 'd'].map(k => [`example.com/${k}`, 'x'.repeat(quarter - 'example.com/a'.length)]));
    expect(validateFunction(changed(fn => { fn.spec.annotations = annotations; }))).toEqual([]);
  });
});

describe('resources', () => {
  const withResources = (block: 'function' | 'build', requests: object, limits: object) =>
    changed(fn => { fn.spec.resourceConfiguration[block] = { resources: { requests, limits } }; });

  test('fails when the build requests more memory than its limit', () => {
    expect(validateFunction(withResources('build', { cpu: 1, memory: '3Gi' }, { cpu: 2, memory: '2Gi' }))).toEqual([
      violation('requestsWithinLimits', 'spec.resourceConfiguration.build.resources.requests.memory', 'Invalid value: "3Gi": must be less than or equal to memory limit of 2Gi'),
    ]);
  });

  test('fails when the build requests more CPU than its limit', () => {
    expect(validateFunction(withResources('build', { cpu: '1500m', memory: '1Gi' }, { cpu: 1, memory: '2Gi' }))).toEqual([
      violation('requestsWithinLimits', 'spec.resourceConfiguration.build.resources.requests.cpu', 'Invalid value: "1500m": must be less than or equal to cpu limit of 1'),
    ]);
  });

  test('accepts requests equal to limits in other units', () => {
    expect(validateFunction(withResources('function', { cpu: '1000m', memory: '1024Mi' }, { cpu: 1, memory: '1Gi' }))).toEqual([]);
    expect(validateFunction(withResources('build', { cpu: '0.5', memory: '1Gi' }, { cpu: '500m', memory: '1073741824' }))).toEqual([]);
  });

  test('accepts requests without limits, and limits without requests', () => {
    expect(validateFunction(withResources('function', { cpu: '10m', memory: '16Mi' }, {}))).toEqual([]);
    expect(validateFunction(withResources('build', {}, { cpu: '200m', memory: '200Mi' }))).toEqual([]);
  });

  test('accepts the Function minimum written as a decimal', () => {
    expect(validateFunction(withResources('function', { cpu: '0.01', memory: '16Mi' }, { cpu: '0.01', memory: '16Mi' }))).toEqual([]);
  });

  test('fails when a Function limit is below the minimum', () => {
    expect(validateFunction(withResources('function', { cpu: '10m', memory: '15Mi' }, { cpu: '10m', memory: '15Mi' }))).toEqual([
      violation('functionMinimum', 'spec.resourceConfiguration.function.resources.requests.memory', /^Invalid value: "15Mi": must be at least 16Mi/),
      violation('functionMinimum', 'spec.resourceConfiguration.function.resources.limits.memory', /^Invalid value: "15Mi": must be at least 16Mi/),
    ]);
  });

  test('fails when the Function CPU request is below 10m by less than a millicore', () => {
    expect(validateFunction(withResources('function', { cpu: '9.5m', memory: '16Mi' }, {}))).toEqual([
      violation('functionMinimum', 'spec.resourceConfiguration.function.resources.requests.cpu', /^Invalid value: "9\.5m": must be at least 10m/),
    ]);
  });

  test('fails when the build CPU request is 199m', () => {
    expect(validateFunction(withResources('build', { cpu: '199m', memory: '200Mi' }, {}))).toEqual([
      violation('buildMinimum', 'spec.resourceConfiguration.build.resources.requests.cpu', /^Invalid value: "199m": must be at least 200m/),
    ]);
  });

  test('fails when the Function is below a custom minimum', () => {
    const options: FunctionRuleOptions = { functionMinRequest: { cpu: '300m', memory: '300Mi' } };
    expect(validateFunction(validFunction(), options)).toEqual([
      violation('functionMinimum', 'spec.resourceConfiguration.function.resources.requests.cpu', /^Invalid value: "250m": must be at least 300m,/),
      violation('functionMinimum', 'spec.resourceConfiguration.function.resources.requests.memory', /^Invalid value: "256Mi": must be at least 300Mi,/),
    ]);
  });

  test('accepts a build above a lowered custom minimum', () => {
    const fn = withResources('build', { cpu: '100m', memory: '100Mi' }, { cpu: '100m', memory: '100Mi' });
    expect(validateFunction(fn).map(v => v.rule)).toEqual(['buildMinimum', 'buildMinimum', 'buildMinimum', 'buildMinimum']);
    expect(validateFunction(fn, { buildMinRequest: { cpu: '100m', memory: '100Mi' } })).toEqual([]);
  });

  test('accepts a Function above a custom minimum in whole units', () => {
    const fn = withResources('function', { cpu: 1, memory: '1Gi' }, { cpu: 1, memory: '1Gi' });
    expect(validateFunction(fn, { functionMinRequest: { cpu: '1', memory: '1Gi' } })).toEqual([]);
  });

  test('accepts presets whatever the custom minimums', () => {
    const fn = changed(f => { f.spec.resourceConfiguration = { function: { profile: 'XS' }, build: { profile: 'local-dev' } }; });
    const huge = { cpu: '64', memory: '64Gi' };
    expect(validateFunction(fn, { functionMinRequest: huge, buildMinRequest: huge })).toEqual([]);
  });
});

describe('metadata', () => {
  test('fails when the Function has neither a name nor a generateName', () => {
    expect(validateFunction(changed(fn => delete fn.metadata.name))).toEqual([
      violation('functionName', 'metadata.name', 'Required value: name or generateName is required'),
    ]);
  });

  test('accepts a generateName alone', () => {
    expect(validateFunction(changed(fn => { delete fn.metadata.name; fn.metadata.generateName = 'greeter-'; }))).toEqual([]);
  });

  test.each([
    ['has 64 characters', `${NAME_63}x`], ['has an underscore', 'greeter_1'], ['has an upper-case letter', 'Greeter'],
    ['ends with \'-\'', 'greeter-'], ['has a dot', 'greeter.v1'], ['is empty', ''],
  ])('fails when the name %s', (_what, name) => {
    expect(validateFunction(changed(fn => { fn.metadata.name = name; }))).toEqual([violation('functionName', 'metadata.name', /must be a DNS-1035 label/)]);
  });

  test.each([['one letter', 'g'], ['a digit at the end', 'greeter-1'], ['63 characters', NAME_63]])('accepts a name of %s', (_what, name) => {
    expect(validateFunction(changed(fn => { fn.metadata.name = name; }))).toEqual([]);
  });
});

describe('runtime image override', () => {
  const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

  test.each([
    'node:22',
    'registry.example.com/team/node:22',
    'registry.example.com:5000/team/node:22',
    'localhost:5000/node',
    `registry.example.com/team/node@${DIGEST}`,
    `registry.example.com:5000/team/node:22@${DIGEST}`,
  ])('accepts %p', image => {
    expect(validateFunction(changed(fn => { fn.spec.runtimeImageOverride = image; }))).toEqual([]);
  });

  test.each([
    'registry.example.com/Team/node:22',
    'registry.example.com/team/node:',
    'https://registry.example.com/team/node:22',
    'node 22',
    'registry.example.com/team/node@sha256:abc',
  ])('fails when the image is %p', image => {
    expect(validateFunction(changed(fn => { fn.spec.runtimeImageOverride = image; }))).toEqual([
      violation('runtimeImageOverride', 'spec.runtimeImageOverride', /must be a container image reference/),
    ]);
  });
});

describe('cases property-based tests found', () => {
  test('fails when a Secret or ConfigMap name is only whitespace', () => {
    const fn = changed(f => {
      f.spec.secretMounts = [{ secretName: ' ', mountPath: '/etc/token' }];
      f.spec.env = [{ name: 'A', valueFrom: { configMapKeyRef: { name: '\t', key: 'k' } } }];
    });
    expect(validateFunction(fn)).toEqual([
      violation('objectName', 'spec.env[0].valueFrom.configMapKeyRef.name', /^Invalid value: "\\t": a ConfigMap name must be a DNS-1123 subdomain/),
      violation('objectName', 'spec.secretMounts[0].secretName', /^Invalid value: " ": a Secret name must be a DNS-1123 subdomain/),
    ]);
  });

  test('a blank Git auth Secret name is reported once, by the CRD\'s rule', () => {
    const fn = changed(f => { f.spec.source.gitRepository.auth.secretName = '  '; }, 'private-repo');
    expect(validateFunction(fn).map(v => v.rule)).toEqual(['gitAuthSecretName']);
  });

  test('fails when any request is above its limit, not only CPU and memory', () => {
    const fn = changed(f => {
      f.spec.resourceConfiguration.function.resources.requests['ephemeral-storage'] = '2Gi';
      f.spec.resourceConfiguration.function.resources.limits['ephemeral-storage'] = '1Gi';
    });
    expect(validateFunction(fn)).toEqual([
      violation('requestsWithinLimits', 'spec.resourceConfiguration.function.resources.requests.ephemeral-storage', 'Invalid value: "2Gi": must be less than or equal to ephemeral-storage limit of 1Gi'),
    ]);
  });

  test('fails when an environment variable name starts with ".."', () => {
    expect(validateFunction(changed(f => { f.spec.env = [{ name: '..A', value: 'x' }]; }))).toEqual([violation('envName', 'spec.env[0].name', /^Invalid value: "\.\.A": /)]);
  });

  test('accepts annotation keys with an upper-case prefix, which the API server lower-cases', () => {
    expect(validateFunction(changed(f => { f.spec.annotations = { 'Example.com/owner': 'x' }; }))).toEqual([]);
  });

  test('keeps the message on one line when dependencies that are not JSON span several', () => {
    const [v] = validateFunction(changed(f => { f.spec.source.inline.dependencies = 'flask\nrequests'; }));
    expect(v.message).not.toContain('\n');
  });
});

describe('functionServiceClashes', () => {
  /** What it gave when it keyed every Function and Service by `namespace/name`. */
  function byKey(objects: readonly unknown[]): FunctionServiceClash[] {
    const key = (o: any) => `${String(o.metadata?.namespace)}/${String(o.metadata?.name)}`;
    const functions = new Map<string, number>();
    objects.forEach((o: any, i) => {
      if (typeof o === 'object' && o !== null && !Array.isArray(o) && o.apiVersion === 'serverless.kyma-project.io/v1alpha2' && o.kind === 'Function') functions.set(key(o), i);
    });
    return objects.flatMap((o: any, service) => {
      if (typeof o !== 'object' || o === null || Array.isArray(o) || o.apiVersion !== 'v1' || o.kind !== 'Service') return [];
      const fn = functions.get(key(o));
      return fn === undefined ? [] : [{ function: fn, service }];
    });
  }

  const text = fc.constantFrom('a', 'b', 'a/b', 'b/c', '', undefined, 1);
  const object = fc.record({
    apiVersion: fc.constantFrom('v1', 'serverless.kyma-project.io/v1alpha2', 'apps/v1'),
    kind: fc.constantFrom('Service', 'Function', 'Deployment'),
    metadata: fc.oneof(fc.record({ name: text, namespace: text }, { requiredKeys: [] }), fc.constant(undefined), fc.constant('x')),
  }, { requiredKeys: ['apiVersion', 'kind'] });

  test('finds every Function whose namespace and name a Service of the folder has, as keying both by namespace/name does', () => {
    fc.assert(fc.property(fc.array(fc.oneof(object, fc.constant(null), fc.constant([])), { maxLength: 12 }), objects => {
      expect(functionServiceClashes(objects)).toEqual(byKey(objects));
    }), { numRuns: 3000 });
  });

  test('names the Function and the Service, in the order of the Services, the last Function of a name', () => {
    const fn = (name: string) => ({ apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name, namespace: 'team' } });
    const service = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'team' } });
    expect(functionServiceClashes([service('b'), fn('a'), fn('b'), service('a'), fn('a'), service('c')]))
      .toEqual([{ function: 2, service: 0 }, { function: 4, service: 3 }]);
  });
});

/**
 * The bounds that answer the size rules without encoding (3 bytes per UTF-16 code unit at most, the
 * annotations' bytes bounded so) against the sizes as they were found, by encoding every string and
 * writing the object, on strings of every width around each limit.
 */
describe('the size rules, answered from bounds where they prove the answer', () => {
  const KEY = 'kubectl.kubernetes.io/last-applied-configuration';
  const bytes = (v: unknown) => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0);
  const CHARS = ['x', 'é', '€', '😀', '\ud800', '\u0001', '"', '\\'];
  /**
   * A string of about `target` bytes, in UTF-8 (`json` false) or as JSON writes it: a run of one
   * character, whatever its width, and a few characters of others; or nothing.
   */
  const near = (target: number, json: boolean) => fc.tuple(fc.constantFrom(...CHARS), fc.integer({ min: -300, max: 300 }), fc.array(fc.constantFrom(...CHARS), { maxLength: 3 }))
    .map(([c, delta, tail]) => c.repeat(Math.max(0, Math.floor(target / (json ? Buffer.byteLength(JSON.stringify(c)) - 2 : bytes(c))) + delta)) + tail.join(''));
  const sizes = (sourceNear: number, dependenciesNear: number, json = false) => fc.record({
    runtime: fc.constantFrom('nodejs22', 'python312'),
    // Mostly near the limits, so that both sides of each are tried many times in every run.
    source: fc.oneof({ arbitrary: near(sourceNear, json), weight: 6 }, fc.constant(undefined), fc.constant(7)),
    dependencies: fc.oneof({ arbitrary: near(dependenciesNear, json), weight: 6 }, fc.constantFrom('', '  ', 'x', undefined, null)),
    annotations: fc.oneof(fc.constant(undefined), fc.dictionary(fc.constantFrom('a', 'é/b', KEY), fc.oneof(near(2000, json), fc.constant(3)), { maxKeys: 3 })),
  });
  const functionOf = ({ runtime, source, dependencies, annotations }: { runtime: string; source: unknown; dependencies: unknown; annotations?: object }) => {
    const fn = validFunction() as any;
    fn.spec.runtime = runtime;
    fn.spec.source = { inline: { source: typeof source === 'string' ? `#${source}` : source, dependencies } };
    if (annotations) fn.metadata.annotations = annotations;
    return fn;
  };

  /** The inline size rule as it was: the bytes counted, then compared. */
  function referenceSize(fn: any, release: ServerlessRelease): Array<{ path: string; message: string }> {
    const { source, dependencies } = fn.spec.source.inline;
    if (release === V1_11_1) {
      const blank = fn.spec.runtime.startsWith('nodejs') && (dependencies === undefined || dependencies === null || (typeof dependencies === 'string' && dependencies.trim() === ''));
      const total = bytes(source) + (blank ? 2 : bytes(dependencies));
      return total > INLINE_SOURCE_MAX_BYTES ? [{ path: 'spec.source.inline', message: `Too long: source and dependencies take ${total} bytes; at most ${INLINE_SOURCE_MAX_BYTES} fit in the ConfigMap the controller stores them in` }] : [];
    }
    return ([['source', source, INLINE_SOURCE_ENV_MAX_BYTES], ['dependencies', dependencies, INLINE_DEPENDENCIES_ENV_MAX_BYTES]] as const)
      .filter(([, value, most]) => bytes(value) > most).map(([field, value]) => ({ path: `spec.source.inline.${field}`, message: expect.stringContaining(`Too long: the ${field} take${field === 'source' ? 's' : ''} ${bytes(value)} bytes`) }));
  }

  /** The warning's bytes as they were found: the object written as kubectl writes it, without its own annotation. */
  function referenceApplied(fn: any): number | undefined {
    const annotations = fn.metadata.annotations ?? {};
    const kept = Object.fromEntries(Object.entries(annotations).filter(([k]) => k !== KEY));
    const others = Object.entries(kept).reduce((sum, [k, v]) => sum + bytes(k) + bytes(v), 0);
    const applied = { ...fn, metadata: { ...fn.metadata, ...(Object.keys(annotations).length ? { annotations: kept } : {}) } };
    const total = others + bytes(KEY) + bytes(JSON.stringify(applied));
    return total > ANNOTATIONS_MAX_BYTES ? total : undefined;
  }

  test.each([
    [V1_11_1, INLINE_SOURCE_MAX_BYTES - 2, 2], [V1_11_1, INLINE_SOURCE_MAX_BYTES / 2, INLINE_SOURCE_MAX_BYTES / 2],
    [V1_13_0, INLINE_SOURCE_ENV_MAX_BYTES, INLINE_DEPENDENCIES_ENV_MAX_BYTES],
  ])('give the inline size violations of counting every byte (%s, source near %d bytes, dependencies near %d)', (release, source, dependencies) => {
    let over = 0;
    fc.assert(fc.property(sizes(source, dependencies), s => {
      const fn = functionOf(s);
      const found = validateFunction(fn, { release }).filter(v => v.rule === 'inlineSourceSize').map(({ path, message }) => ({ path, message }));
      const expected = referenceSize(fn, release);
      if (expected.length) over++;
      expect(found).toEqual(expected);
    }), { numRuns: 80 });
    // Both sides of the limit were tried: over it about 25 times of 80 in the half-and-half case, 35 and 50 in the others.
    expect(over).toBeGreaterThan(5);
    expect(over).toBeLessThan(78);
  });

  test('give the client-side apply warning of writing every Function', () => {
    let over = 0;
    fc.assert(fc.property(sizes(ANNOTATIONS_MAX_BYTES - 700, 100, true), s => {
      const fn = functionOf(s);
      const expected = referenceApplied(fn);
      if (expected !== undefined) over++;
      const found = functionWarnings(fn).filter(w => w.rule === 'clientSideApplySize');
      expect(found.map(w => w.message.replace(/ \(its inline.*/, ''))).toEqual(expected === undefined ? [] : [`Too large for client-side apply: the Function takes ${expected} bytes as JSON`]);
    }), { numRuns: 150 });
    // Over it about 100 times of 150.
    expect(over).toBeGreaterThan(5);
    expect(over).toBeLessThan(145);
  });
});
