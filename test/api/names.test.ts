import * as fc from 'fast-check';
import {
  isConfigMapKey, isDns1035Label, isDns1123Label, isDns1123Subdomain, isEnvVarName, isImageReference, isLabelValue, qualifiedNameProblems,
} from '../../src/api';

describe('name rules', () => {
  test.each(['a', 'kyma-system', 'a1', '0'.repeat(63)])('%p is a DNS-1123 label', name => {
    expect(isDns1123Label(name)).toBe(true);
  });

  test.each(['', 'Kyma', 'a_b', '-a', 'a-', 'a.b', 'a'.repeat(64)])('%p is not a DNS-1123 label', name => {
    expect(isDns1123Label(name)).toBe(false);
  });

  test.each(['a.b', 'registry.example.com', 'x'])('%p is a DNS-1123 subdomain', name => {
    expect(isDns1123Subdomain(name)).toBe(true);
  });

  test.each(['', 'a..b', '.a', 'A.b', 'a'.repeat(254)])('%p is not a DNS-1123 subdomain', name => {
    expect(isDns1123Subdomain(name)).toBe(false);
  });

  test('every label is a subdomain', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/), name => isDns1123Label(name) && isDns1123Subdomain(name)));
  });
});

describe('DNS-1035 labels', () => {
  test.each(['a', 'a1', 'kyma-fn', 'a--b', `a${'0'.repeat(62)}`])('%p is a DNS-1035 label', name => {
    expect(isDns1035Label(name)).toBe(true);
  });

  test.each([
    ['empty', ''], ['starting with a digit', '1a'], ['only a digit', '0'], ['starting with \'-\'', '-a'], ['ending with \'-\'', 'a-'],
    ['upper-case', 'A'], ['with an underscore', 'a_b'], ['with a dot', 'a.b'], ['64 characters long', 'a'.repeat(64)],
  ])('a name %s is not a DNS-1035 label', (_what, name) => {
    expect(isDns1035Label(name)).toBe(false);
  });

  test('every DNS-1035 label is a DNS-1123 label', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/), name => isDns1035Label(name) && isDns1123Label(name)));
  });

  test('a DNS-1123 label is a DNS-1035 label exactly when it starts with a letter', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/), name => isDns1035Label(name) === /^[a-z]/.test(name)));
  });
});

describe('environment variable names', () => {
  test.each(['A', 'a', '_A', '.env', '-x', 'MY_VAR_1', 'my.var-name'])('%p is an environment variable name', name => {
    expect(isEnvVarName(name)).toBe(true);
  });

  test.each(['', '1A', '9', 'A B', 'A=B', 'A/B', 'Ä', '$A', '.', '..', '..A'])('%p is not an environment variable name', name => {
    expect(isEnvVarName(name)).toBe(false);
  });
});

describe('ConfigMap and Secret keys', () => {
  test.each(['a', 'config.json', '.env', '.a', 'a..b', '-', '_', 'A_b-C.1', 'k'.repeat(253)])('%p is a key', key => {
    expect(isConfigMapKey(key)).toBe(true);
  });

  test.each(['', '.', '..', '..data', '../etc', 'a/b', 'a b', 'ключ', 'k'.repeat(254)])('%p is not a key', key => {
    expect(isConfigMapKey(key)).toBe(false);
  });
});

describe('qualified names (label and annotation keys)', () => {
  const NAME_TOO_LONG = 'name part must be no more than 63 characters';
  const NAME_SYNTAX = 'name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character';
  const PREFIX_SYNTAX = 'prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', '
    + 'and must start and end with an alphanumeric character';
  const QUALIFIED_SYNTAX = 'a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an '
    + 'alphanumeric character, with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')';

  test.each([
    'a', 'app', 'App_Name.v1', 'app.kubernetes.io/name', 'x/y', 'a'.repeat(63), `example.com/${'a'.repeat(63)}`, `${'a'.repeat(253)}/x`,
  ])('%p is a qualified name', key => {
    expect(qualifiedNameProblems(key)).toEqual([]);
  });

  test.each<[string, string, string[]]>([
    ['a name of 64 characters', 'a'.repeat(64), [NAME_TOO_LONG]],
    ['a prefixed name of 64 characters', `example.com/${'a'.repeat(64)}`, [NAME_TOO_LONG]],
    ['a name of 64 characters that also breaks the syntax', '-'.repeat(64), [NAME_TOO_LONG, NAME_SYNTAX]],
    ['an empty prefix', '/a', ['prefix part must be non-empty']],
    ['an empty name after the prefix', 'example.com/', ['name part must be non-empty']],
    ['two slashes', 'a/b/c', [QUALIFIED_SYNTAX]],
    ['an upper-case prefix', 'Example.com/a', [PREFIX_SYNTAX]],
    ['a prefix of 254 characters', `${'a'.repeat(254)}/x`, [PREFIX_SYNTAX]],
    ['a prefix with \'..\'', 'example..com/a', [PREFIX_SYNTAX]],
    ['a name starting with \'-\'', '-a', [NAME_SYNTAX]],
    ['a name ending with \'_\'', 'a_', [NAME_SYNTAX]],
    ['a name with a space', 'a b', [NAME_SYNTAX]],
  ])('%s is not a qualified name', (_what, key, problems) => {
    expect(qualifiedNameProblems(key)).toEqual(problems);
  });

  test('an empty key is not a qualified name', () => {
    expect(qualifiedNameProblems('')).toContain('name part must be non-empty');
  });

  test('every DNS-1123 label prefix and non-empty label value make a qualified name', () => {
    fc.assert(fc.property(
      fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/),
      fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/),
      (prefix, name) => isLabelValue(name) && qualifiedNameProblems(name).length === 0 && qualifiedNameProblems(`${prefix}/${name}`).length === 0,
    ));
  });
});

describe('label values', () => {
  test.each(['', 'a', '1', 'v1.2.3', 'A_b-C', 'a'.repeat(63)])('%p is a label value', value => {
    expect(isLabelValue(value)).toBe(true);
  });

  test.each([
    ['64 characters long', 'a'.repeat(64)], ['starting with \'-\'', '-a'], ['ending with \'-\'', 'a-'], ['starting with \'_\'', '_a'],
    ['ending with \'.\'', 'a.'], ['with a space', 'a b'], ['with a slash', 'a/b'], ['not ASCII', 'é'],
  ])('a value %s is not a label value', (_what, value) => {
    expect(isLabelValue(value)).toBe(false);
  });
});

describe('image references', () => {
  const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

  test.each([
    'node',
    'node:22',
    'library/node:22-alpine',
    'registry.example.com/team/node:22',
    'registry.example.com:5000/team/node',
    'localhost:5000/node',
    'Registry.Example.com/node',
    'registry.example.com/a/b__c/d-e.f',
    `node@${DIGEST}`,
    `registry.example.com:5000/team/node:22@${DIGEST}`,
    `node:${'t'.repeat(128)}`,
  ])('%p is an image reference', image => {
    expect(isImageReference(image)).toBe(true);
  });

  test.each([
    ['empty', ''],
    ['with an upper-case repository', 'Node'],
    ['with an upper-case path', 'team/Node'],
    ['with an empty tag', 'node:'],
    ['without a repository', ':22'],
    ['with two colons', 'node::22'],
    ['with a tag starting with \'-\'', 'node:-22'],
    ['with a tag of 129 characters', `node:${'t'.repeat(129)}`],
    ['with a scheme', 'https://registry.example.com/node'],
    ['with a space', 'node 22'],
    ['with a short digest', 'node@sha256:abc'],
    ['with a port that is not a number', 'registry.example.com:port/node'],
    ['with a leading slash', '/node'],
    ['with a trailing slash', 'node/'],
  ])('a reference %s is not an image reference', (_what, image) => {
    expect(isImageReference(image)).toBe(false);
  });
});
