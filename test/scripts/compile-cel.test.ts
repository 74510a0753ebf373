/**
 * scripts/compile-cel.ts: the CEL rules of the package's schemas compiled to JavaScript, as
 * src/api/_generated/cel-rules.ts holds them (`npm run validators` writes it), and what the compiler
 * leaves to the interpreter. That each compiled rule gives @bufbuild/cel's answers: test/api/cel.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shippedRules } from '../../scripts/bundle-cel';
import { CEL_RULES_FILE, Unsupported, celRulesText, compileCelRule, jsPattern } from '../../scripts/compile-cel';
import { compiledCelRules } from '../../src/api/_generated/cel-rules';

const root = path.resolve(__dirname, '..', '..');

/** A rule compiled on its own, its constants numbered from C0. */
function compile(rule: string): string {
  const constants: string[] = [];
  return compileCelRule(rule, { add: code => `C${constants.push(code) - 1}` });
}

describe('the compiled CEL rules', () => {
  test(`${CEL_RULES_FILE} is what the compiler writes from the current schemas (run \`npm run validators\` when this fails)`, () => {
    expect(fs.readFileSync(path.join(root, CEL_RULES_FILE), 'utf8')).toBe(celRulesText());
  });

  test('hold every rule of the package\'s schemas: none is left to the interpreter', () => {
    expect(Object.keys(compiledCelRules).sort()).toEqual(shippedRules());
    expect(celRulesText()).not.toContain('Left to the interpreter');
  });

  test('read each field once, for its has() and its selects, and keep CEL\'s logic', () => {
    expect(compile('has(self.a) && !has(self.b) || self.a == \'x\'')).toBe([
      'self => {',
      '    failed = false;',
      '    const f0 = field(self, "a");',
      '    const f1 = field(self, "b");',
      '    return sure(or(and(present(f0), not(present(f1))), eq(value(f0), "x")));',
      '  }',
    ].join('\n'));
    expect(compile('self.all(e, e.name in [\'A\', \'B\'])')).toContain('all(self, v0 => { const f0 = field(v0, "name"); return inStrings(value(f0), C0); })');
    expect(compile('self.exists(e, self.exists(f, e == f))')).toContain('exists(self, v0 => exists(self, v1 => eq(v0, v1)))');
    // A field of a field: read where it is.
    expect(compile('has(self.a.b)')).toContain('present(field(value(f0), "b"))');
  });
});

describe('the compiler leaves to the interpreter', () => {
  test.each([
    ['a double', 'self.a < 1.5'],
    ['an int out of the safe range', 'self.a < 9007199254740993'],
    ['arithmetic on values of self, which may be ints or doubles', 'self.a + 1 == 2'],
    ['a logical operator on a value of self', 'self.a && true'],
    ['a rule not known to give a bool', 'self.a'],
    ['a list that is not a literal', 'self.a in self.b'],
    ['a list of mixed constants', 'self.a in [\'x\', 1]'],
    ['a function it does not know', 'self.a.lowerAscii() == \'x\''],
    ['a macro other than all and exists', 'self.exists_one(e, e == 1)'],
    ['map', 'self.map(e, e).size() == 1'],
    ['a pattern that is not a literal', 'self.a.matches(self.b)'],
    ['a pattern outside the subset', 'self.matches(\'^\\\\d+$\')'],
    ['a name it does not know', 'other == 1'],
  ])('%s: %s', (_what, rule) => {
    expect(() => compile(rule)).toThrow(Unsupported);
  });
});

describe('jsPattern', () => {
  test.each([
    '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?/([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)$',
    '^(?:\\*\\.(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z0-9]{2,63})$',
    'a|b*?c+d{2}e{3,}f{4,5}', '[^a-c.]x', '[-a]', '[a-]', '\\[\\]\\{\\}\\(\\)\\\\\\/\\-',
  ])('takes %s as JavaScript reads it', pattern => {
    expect(jsPattern(pattern).source).toBe(new RegExp(pattern).source);
  });

  test.each([
    ['\\d', 'an escape other than of punctuation'], ['\\bx', 'an escape other than of punctuation'], ['(?i)x', 'a group other than (?:'],
    ['(?P<n>x)', 'a group other than (?:'], ['[[:alpha:]]', 'a [ in a class'], ['[]a]', 'a class that starts with ]'], ['[z-a]', 'a range'],
    ['a{1001}', 'a repetition count RE2 refuses'], ['a{2,1}', 'a repetition count RE2 refuses'], ['{', 'a repetition of nothing'], ['a{x}', 'a { that is not a repetition'],
    ['**', 'a repetition of nothing'], ['a**', 'a repetition of nothing'], ['(a', 'an unclosed group'], ['a)', 'an unopened group'], ['[ab', 'an unclosed class'],
    ['é', 'the character'], ['\t', 'the character'],
  ])('leaves %s to the interpreter: %s', (pattern, why) => {
    expect(() => jsPattern(pattern)).toThrow(new RegExp(why.replace(/[()[\]{}?*+]/g, '\\$&')));
  });
});
