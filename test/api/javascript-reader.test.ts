/**
 * The reader of JavaScript handlers on this thread (src/api/_javascript-reader.ts) against acorn:
 * wherever it answers, acorn parses the source as that kind (script or module) and its tree gives
 * the same facts (the modules loaded and their lines, the CommonJS names a module uses and their
 * lines); where it cannot be sure, it answers nothing and acorn reads the source. On examples of
 * every fact and of the edges of the subset, on generated handlers and mutations of them (fast-check),
 * and on pieces of this checkout's node_modules (every file of it: scripts/javascript-reader-sweep.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as fc from 'fast-check';
import { _readJavaScriptBothWays, handlerCodeProblems } from '../../src/api/handler-code';
import { _resetWork, _work } from '../../src/api/_work';
import { javaScriptHandler, javaScriptMutant, javaScriptPieceMutant } from '../util/javascript-sources';

type SourceType = 'script' | 'module';

/** Whether the reader's answer, if it gives one, is acorn's: the source parses, with the same facts. */
function agrees(source: string, kind: SourceType): { read: boolean; agrees: boolean } {
  const { here, tree } = _readJavaScriptBothWays(source, kind);
  if (!here) return { read: false, agrees: true };
  return { read: true, agrees: !tree.error && isDeepStrictEqual(here, { imports: tree.imports, commonJsNames: tree.commonJsNames }) };
}

/** Sources the reader reads as both kinds (or the kind named), each with the facts acorn's tree gives. */
const READ: [string, string, SourceType?][] = [
  ["the benchmark's handler", "exports.main = () => 'function 1';"],
  ['a CommonJS handler with requires', "const _ = require('lodash');\nconst { get } = require(\"axios\");\nmodule.exports = { main: async function (event, context) {\n  return _.map([1], x => x * 2);\n} };"],
  ['requires of every constant kind, where the call starts', "require(`tpl`); (require)('paren');\nrequire(('inner')); require?.('optional'); require('a',);"],
  ['requires that load nothing', "require(x); require('a', 'b'); require(...m); x.require('a'); new require('a'); require(`a${b}`); require('a' + 'b');"],
  ['a require in a try with a catch, none in a try with only a finally', "try { require('guarded'); f(() => require('deep')) } catch (e) { require('handler') }\ntry { require('open') } finally { require('after') }\ntry {} catch { }"],
  ['a dynamic import', "import('dyn').then(m => m.main);\nconst x = await import(`t`);", 'module'],
  ['an ES module with imports and exports', "import a from 'a';\nimport * as b from 'b';\nimport c, { d, e as f } from 'c';\nimport { default as g } from 'g';\nimport 'side';\nexport * from 'all';\nexport * as ns from 'ns';\nexport { h, i as j } from 'h';\nexport { a, b as k };\nexport default function main(event) { return require('cjs') + module.id + exports.x + __dirname; }\nexport const l = 1, [m] = [2];\nexport function n() {}\nexport async function o() {}", 'module'],
  ['CommonJS names in a module, first use of each, in the order of the tree', "const x = { require, a: module, [exports]: 1, __filename() {} };\nfunction f(a = __dirname) { return typeof require + module.exports }\nx.require; ({ module: 1 });", 'module'],
  ['a hashbang', "#!/usr/bin/env node\nrequire('a')"],
  ['ASI: a line break before ++, after return, before a template', "a\n++b\nfunction f() { return\n1 }\nx = a\n`t`\nlet y = 1\nconst z = 2"],
  ['division after a name, a call, a member, a parenthesis', "a = b\n/c/g; x = f() / 2 / g(); y = o.p /q; z = (1) / 2;"],
  ['templates with nested substitutions and escapes', "x = `a${b}c${`d${e}`}\\n\\u0041\\u{1F600}\\x41\\`\\${}`;\ny = tag`raw ${1}`;"],
  ['strings with escapes and line terminators', "x = 'a\\n\\t\\\\\\'\\0\\x41\\u0041\\u{10FFFF}\\z\\\nb'; y = \"\u2028\u2029\";"],
  ['numbers of every radix', "x = [0, 1.5, .5, 1., 1e10, 1.e2, 5E-3, 0x1F, 0XaB, 0o17, 0b101, 0.0, 1..toString()];"],
  ['comments and unicode white space', "/* a\nb */ x = 1 // c\u2028y = 2\u00a0+\ufeff3\u3000; /**/"],
  ['arrow functions of every form', "a = x => x; b = () => {}; c = (x, y = 1, ...z) => ({ x }); d = async x => await x; e = async (x) => { await x };\nf = (x,) => x; g = (() => 1)(); h = a => b => c;"],
  ['an arrow function with a block body, then a line break and parentheses', "x = () => {}\n(1)"],
  ['objects and arrays', "x = { a, b: 1, 'c': 2, 3: 4, [k]: 5, ...s, m() {}, async n(a) { await a }, get: 1, set() {}, async: 2, __proto__: null, __proto__ };\ny = [, a, , ...b, ];"],
  ['member access, optional chains, new', "a.b.c[d](e)?.f?.[g]?.(h); new Foo; new Foo.Bar(1).baz; new (f())(); a.if.class.new = 1;"],
  ['operators and precedence', "x = a ?? b; y = (a || b) ?? c; z = a ** -b; w = (-a) ** 2; v = ++a ** 2; u = a in b instanceof c; t = !a ? b : c ? d : e;\na += 1; a ||= b; a &&= c; a ??= d; a **= 2; a >>>= 1;"],
  ['statements of every kind', "if (a) b; else if (c) { d } else e\nfor (let i = 0, n = 1; i < n; i++) { if (i) break; continue }\nfor (const [k, v] of m) k;\nfor (var p in o) ;\nfor (;;) break;\nwhile (a) { a-- }\ndo a++; while (a < 9) b()\ndebugger;\n{ let a = 1; }\nthrow new Error('x');"],
  ['await at the top of a module', "await f(); for (const x of await g()) x;", 'module'],
  ['return at the top of a script', 'return 1;', 'script'],
  ['destructuring declarations and parameters', "const { a, b: { c }, d = 1, ...e } = o; let [f, , g = 2, ...h] = p;\nfunction q({ r, s: [t] }, u = 1, ...v) { return r }"],
  ['names that are not reserved', "var undefined1, from = 1, as = 2, target, meta, get, set, constructor, hasOwnProperty; x = constructor;"],
  ['the same name in different scopes', "let a; function f(a) { { let a; } } { let a; } for (let a of b) { let a; } try {} catch (a) {}"],
  ['`in` inside a for head, in parentheses', 'for (let i = (a in b); i; ) ;'],
];

/** Sources the reader leaves to acorn as both kinds (or the kind named): valid or not, it cannot be sure. */
const LEFT: [string, string, SourceType?][] = [
  ['a syntax error', 'exports.main = () => {'],
  ['a regular expression', 'x = /re/g.test(y)'],
  ['a regular expression after a parenthesis', 'if (a) /re/.test(b)'],
  ['</script> (a regular expression where an operand goes)', 'a </script> b'],
  ['an escape in a name', 'var \\u0061 = 1'],
  ['a name outside ASCII', 'var π = 3'],
  ['an HTML comment', 'x = 1 <!-- y\n--> z'],
  ['import and export in a script', "import x from 'y';", 'script'],
  ['export in a script', 'export default 1;', 'script'],
  ['import.meta in a script', 'import.meta.url', 'script'],
  ['await as a name in a script', 'await(1)', 'script'],
  ['await outside an async function', 'function f() { await x }'],
  ['await in parameters', 'async function f(a = await b) {}'],
  ['an async arrow function with await in its parameters', 'async function f() { g(async (a = await b) => a) }'],
  ['yield as a name', 'var yield = 1'],
  ['let as a name', 'let = 1; let[0] = 1'],
  ['let before a line break', 'let\nx = 1'],
  ['async as a name', 'async(1); var async;'],
  ['of as a name (acorn reads a / after it as a regular expression)', 'var of = 1; x = of / 2 / 1'],
  ['a legacy octal number', 'x = 07'],
  ['08', 'x = 08'],
  ['an octal escape', "x = '\\1'"],
  ['\\0 before a digit', "x = '\\08'"],
  ['a numeric separator', 'x = 1_000'],
  ['a BigInt', 'x = 1n'],
  ['a name right after a number', 'x = 3in y'],
  ['a duplicate __proto__', 'x = { __proto__: a, "__proto__": b }'],
  ['__proto__ twice, one of them escaped', "x = { __proto__: a, '\\x5f_proto__': b }"],
  ['reserved words in strict code', 'var implements, package, static'],
  ['eval and arguments bound or assigned', 'var eval; arguments = 1; eval++; function f(eval) {}'],
  ['delete of a name', 'delete x'],
  ['delete of a name in parentheses', 'delete (x)'],
  ['a duplicate parameter', 'function f(a, a) {}'],
  ['a duplicate arrow parameter', '(a, a) => 1'],
  ['a duplicate declaration', 'var a; var a;'],
  ['a var over a let of an enclosing block', 'let a; { var a; }'],
  ['a let over a parameter', 'function f(a) { let a; }'],
  ['a class', 'class A {}'],
  ['a generator', 'function* g() { yield 1 }'],
  ['a getter', 'x = { get a() { return 1 } }'],
  ['a label', 'a: for (;;) break a;'],
  ['a switch', 'switch (x) { case 1: break; }'],
  ['with', 'with (o) {}'],
  ['super and new.target', 'function f() { new.target; super.x }'],
  ['destructuring assignment', '[a, b] = [b, a]'],
  ['an assignment to a call', 'f() = 1'],
  ['an assignment to an optional chain', 'a?.b = 1'],
  ['new of an optional chain', 'new a?.b()'],
  ['a tagged template in an optional chain', 'a?.b`x`'],
  ['?? mixed with ||', 'a ?? b || c'],
  ['a unary operator before **', '-a ** 2'],
  ['a directive in a function with default parameters', 'function f(a = 1) { "use strict" }'],
  ['a shorthand with an initializer outside a pattern', 'x = { a = 1 }'],
  ['a CommonJS name declared in a module', 'const require = 1; require("x")', 'module'],
  ['a CommonJS name as a parameter in a module', 'function f(exports) { exports.a = 1 }', 'module'],
  ['an import attribute', "import x from 'y' with { type: 'json' };", 'module'],
  ['a string name in an import list', "import { 'a b' as c } from 'y';", 'module'],
  ['a default import and named ones without a comma', "import x { y } from 'y';", 'module'],
  ['a default import and a namespace without a comma', "import x * as y from 'y';", 'module'],
  ['a require of a string with escapes', "require('\\x61')"],
  ['an export not declared', 'export { x };', 'module'],
  ['an export twice', 'export const a = 1; export { a };', 'module'],
  ['return at the top of a module', 'return 1', 'module'],
  ['break outside a loop', 'break;'],
  ['throw before a line break', 'throw\nnew Error()'],
  ['an arrow function with a block body and ?', '() => {} ? a : b'],
  ['a line break before =>', 'x = a\n=> 1'],
  ['a trailing comma in parentheses', 'x = (a, b,)'],
  ['empty parentheses', 'x = ()'],
  ['a lone surrogate outside a string', 'x = 1 \ud800'],
  ['U+0085, which acorn does not take for white space', 'x = 1\u0085'],
  ['a line break in a string', "x = 'a\nb'"],
  ['an unterminated comment', 'x = 1 /* y'],
  ['for await', 'async function f() { for await (const x of y); }'],
  ['for-in with an initializer (sloppy Annex B)', 'for (var a = 1 in b);'],
  ['deep nesting', `${'('.repeat(20_000)}1${')'.repeat(20_000)}`],
];

describe('the reader of JavaScript handlers on this thread', () => {
  // Rest parameters: a row shorter than the callback's parameters would make jest pass it a `done`.
  test.each(READ)('reads %s as acorn does', (...[, source, only]) => {
    for (const kind of only ? [only] : ['script', 'module'] as const) {
      expect({ kind, ...agrees(source, kind) }).toEqual({ kind, read: true, agrees: true });
    }
  });

  test.each(LEFT)('leaves %s to acorn', (...[, source, only]) => {
    for (const kind of only ? [only] : ['script', 'module'] as const) {
      expect({ kind, read: _readJavaScriptBothWays(source, kind).here !== undefined }).toEqual({ kind, read: false });
    }
  });

  test('the facts it reads are the ones acorn gives (lines across \\r\\n, \\r, U+2028)', () => {
    const source = "// one\r\nrequire('a');\r  module.x;\u2028import('b');\u2029\n\nimport c from 'c';";
    const { here, tree } = _readJavaScriptBothWays(source, 'module');
    expect(tree.error).toBeUndefined();
    expect(here).toEqual({ imports: [{ module: 'a', line: 2 }, { module: 'b', line: 4 }, { module: 'c', line: 7 }], commonJsNames: [['require', 2], ['module', 3]] });
  });

  test('agrees with acorn on generated handlers, as scripts and as modules', () => {
    let read = 0;
    fc.assert(fc.property(javaScriptHandler(), source => {
      for (const kind of ['script', 'module'] as const) {
        const result = agrees(source, kind);
        if (result.read) read++;
        if (!result.agrees) return false;
      }
      return true;
    }), { numRuns: 3000 });
    // Enough of them lie in the subset for the comparison to mean something.
    expect(read).toBeGreaterThan(150);
  });

  test('agrees with acorn on mutants of generated handlers', () => {
    fc.assert(fc.property(javaScriptMutant(), source => agrees(source, 'script').agrees && agrees(source, 'module').agrees), { numRuns: 3000 });
  });

  test('agrees with acorn on mutated pieces of real JavaScript files', () => {
    const root = path.join(__dirname, '..', '..', 'node_modules');
    const files = ['acorn/dist/acorn.js', 'yaml/dist/compose/composer.js', 'fast-check/lib/fast-check.js', 'es-module-lexer/dist/lexer.js', 'cjs-module-lexer/lexer.js']
      .map(f => path.join(root, f)).filter(f => fs.existsSync(f));
    expect(files.length).toBeGreaterThan(2);
    const sources = files.map(f => fs.readFileSync(f, 'utf8'));
    let read = 0;
    fc.assert(fc.property(javaScriptPieceMutant(sources), source => {
      const script = agrees(source, 'script');
      const module = agrees(source, 'module');
      if (script.read) read++;
      return script.agrees && module.agrees;
    }), { numRuns: 2000 });
    expect(read).toBeGreaterThan(100);
  });

  test('counts the handlers it reads, and acorn parses only those it leaves', () => {
    _resetWork();
    const codes = ["exports.main = () => 'a';", "exports.main = () => 'b';", 'exports.main = () => /re/;'];
    for (const source of codes) handlerCodeProblems({ runtime: 'nodejs20', source });
    expect(_work).toMatchObject({ nodeReads: 2, nodeParses: 1 });
  });
});
