/**
 * Generated JavaScript handlers for the tests that compare the reader of this thread
 * (src/api/_javascript-reader.ts) with acorn: programs from a small grammar that reaches every
 * construct of the reader's subset and much outside it (classes, regular expressions, labels,
 * escapes, HTML comments, odd line breaks), and mutants of them and of real files (a token deleted,
 * doubled, swapped or inserted, a line break added or removed), most of which do not parse.
 */
import * as fc from 'fast-check';

const NAMES = ['a', 'b', 'x', 'main', 'event', 'context', 'require', 'module', 'exports', '__dirname', '__filename', 'async', 'await', 'of',
  'let', 'yield', 'eval', 'arguments', 'static', 'get', 'set', 'from', 'as', 'default', 'new', 'in', 'if', '_$', 'u\\u0061', 'π'];
const MODULES = ["'lodash'", '"axios"', "'./local'", "'node:fs'", "'@scope/pkg/sub'", '`tpl`', '`t${x}`', "'esc\\x41'", "'\\u{1F600}'"];
const name = fc.constantFrom(...NAMES);
const moduleName = fc.constantFrom(...MODULES);
const space = fc.constantFrom(' ', '', '\n', ' /* c */ ', '/*\n*/', ' // c\n', '\r\n', '\u2028', '\t', '\u00a0', '\ufeff');

const literal = fc.constantFrom('1', '0x1F', '0b10', '0o7', '07', '08', '1_000', '1n', '.5', '1.', '5e-3', '1.e2', '"s"', "'s'", "'a\\nb'", "'\\08'",
  "'\\1'", "'\\x4'", "'\\u{110000}'", "'line\\\ncont'", '`t`', '`a${x}b`', '`\\unicode`', '`\\u0041`', 'null', 'true', 'this', '/re/g', '/[/]/',
  '`${`n${x}`}`', 'x\\u0061', 'new.target', 'import.meta', 'super.x');
const binaryOp = fc.constantFrom('+', '-', '*', '/', '%', '**', '==', '===', '!=', '<', '>=', '<<', '>>>', '&', '|', '^', '&&', '||', '??', 'in',
  'instanceof', ',', '/=', '=', '+=', '??=', '<!--', '-->');
const unaryOp = fc.constantFrom('!', '-', '+', '~', 'typeof ', 'void ', 'delete ', '++', '--', 'await ');

const expression: (depth: number) => fc.Arbitrary<string> = fc.memo(depth => {
  const leaf = fc.oneof(name, literal, moduleName);
  if (depth <= 0) return leaf;
  const e = expression(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    fc.tuple(e, binaryOp, space, e).map(([a, o, s, b]) => `${a} ${o}${s}${b}`),
    fc.tuple(unaryOp, e).map(([o, a]) => `${o}${a}`),
    fc.tuple(e, fc.constantFrom('++', '--', '\n++')).map(([a, o]) => `${a}${o}`),
    fc.tuple(e, e, e).map(([a, b, c]) => `${a} ? ${b} : ${c}`),
    e.map(a => `(${a})`),
    fc.tuple(e, name).map(([a, n]) => `${a}.${n}`),
    fc.tuple(e, e).map(([a, b]) => `${a}[${b}]`),
    fc.tuple(e, fc.constantFrom('?.', '?.(', '?.[')).map(([a, o]) => `${a}${o}${o === '?.' ? 'p' : o === '?.(' ? ')' : '0]'}`),
    fc.tuple(e, fc.array(e, { maxLength: 3 }), fc.boolean()).map(([f, args, t]) => `${f}(${args.join(', ')}${t ? ',' : ''})`),
    fc.tuple(fc.constantFrom('require', '(require)', 'require?.', 'import', 'x.require', 'new require'), moduleName, fc.constantFrom('', ', 1', ','))
      .map(([f, m, rest]) => `${f}(${m}${rest})`),
    fc.tuple(fc.array(fc.oneof(e, fc.constant('')), { maxLength: 3 })).map(([items]) => `[${items.join(', ')}]`),
    fc.array(fc.oneof(
      fc.tuple(name, e).map(([k, v]) => `${k}: ${v}`),
      name,
      fc.tuple(fc.constantFrom('__proto__', "'__proto__'", '"a"', '1', '[k]'), e).map(([k, v]) => `${k}: ${v}`),
      fc.tuple(fc.constantFrom('', 'async ', 'get ', 'set ', '*', 'async\n'), name).map(([m, k]) => `${m}${k}() { return 1 }`),
      e.map(v => `...${v}`),
      name.map(n => `${n} = 1`),
    ), { maxLength: 3 }).map(props => `({ ${props.join(', ')} })`),
    fc.tuple(fc.constantFrom('', 'async '), fc.constantFrom('x', '()', '(a, b)', '(a = 1, ...r)', '(a, a)', '({ a })', '(a,)', '((a))', '(eval)', '(await)'),
      fc.constantFrom(' => ', '\n=> ', ' =>\n'), fc.oneof(e, e.map(b => `{ return ${b} }`), fc.constant('{}')))
      .map(([as, p, arrow, body]) => `${as}${p}${arrow}${body}`),
    fc.tuple(fc.constantFrom('function', 'async function', 'function*'), fc.constantFrom('', ' f', ' eval', ' yield'), fc.constantFrom('()', '(a, b)', '(a, a)',
      '({ a }, [b] = [])', '(a = 1)'), fc.oneof(e.map(b => `{ return ${b} }`), fc.constant('{ "use strict" }'), fc.constant('{ let a; }')))
      .map(([f, n, p, body]) => `(${f}${n}${p} ${body})`),
    fc.tuple(e, e).map(([a, b]) => `\`x\${${a}}y\${${b}}\``),
    fc.tuple(e, e).map(([t, a]) => `${t}\`q\${${a}}\``),
    fc.tuple(e, fc.array(e, { maxLength: 2 })).map(([c, args]) => `new ${c}(${args.join(', ')})`),
    fc.constantFrom('class {}', '(class A { m() {} })', 'a => {} ? b : c', '() => {}\n(x)', '-a ** 2', '(-a) ** 2', 'a ?? b || c', '(a ?? b) || c'),
  );
});

const statement: (depth: number) => fc.Arbitrary<string> = fc.memo(depth => {
  const e = expression(2);
  const end = fc.constantFrom(';', '', '\n', ';\n');
  const simple = fc.oneof(
    fc.tuple(e, end).map(([x, s]) => `${x}${s}`),
    fc.tuple(fc.constantFrom('var', 'let', 'const', 'let\n'), fc.constantFrom('x', 'a, b', '{ a, b: c, ...d }', '[a, , b = 1, ...c]', '{ require }', 'x, x',
      'let', 'eval', 'await'), fc.option(e), end).map(([k, t, v, s]) => `${k} ${t}${v === null ? '' : ` = ${v}`}${s}`),
    fc.tuple(fc.constantFrom('exports.main', 'module.exports', 'module.exports.main'), e).map(([t, v]) => `${t} = ${v};`),
    fc.tuple(fc.constantFrom('return', 'return\n', 'throw', 'throw\n', 'break', 'continue', 'debugger'), fc.option(e)).map(([k, v]) => `${k} ${v ?? ''};`),
    fc.tuple(fc.constantFrom('import x from', 'import * as ns from', 'import { a, b as c } from', 'import { default as d } from', 'import', 'import x, { y } from',
      'export * from', 'export * as ns from', 'export { a } from', 'import { "s" as t } from', 'import { if } from'), moduleName, fc.constantFrom('', ' with { type: "json" }'))
      .map(([h, m, w]) => `${h} ${m}${w};`),
    fc.constantFrom('export default 1;', 'export default function () {}', 'export default async function f() {}', 'export function main() {}',
      'export const a = 1, b = 2;', 'export { x as y };', 'export { main };', 'export { a, a as b };', 'export default class {}', 'label: x;',
      'with (o) {}', 'switch (x) { case 1: break; }', ';', 'async function f() { for await (const x of y); }', '#!x', 'import.meta.url;'),
  );
  if (depth <= 0) return simple;
  const s = statement(depth - 1);
  const body = fc.array(s, { maxLength: 3 }).map(b => b.join('\n'));
  return fc.oneof(
    { weight: 4, arbitrary: simple },
    fc.tuple(fc.constantFrom('', 'async '), name, fc.constantFrom('()', '(event, context)', '(a, ...b)', '({ body }, c = 1)'), body)
      .map(([a, n, p, b]) => `${a}function ${n}${p} {\n${b}\n}`),
    fc.tuple(e, s, fc.option(s)).map(([c, t, f]) => `if (${c}) ${t}${f === null ? '' : ` else ${f}`}`),
    fc.tuple(e, body).map(([c, b]) => `while (${c}) {\n${b}\n}`),
    fc.tuple(body, e).map(([b, c]) => `do {\n${b}\n} while (${c})`),
    fc.tuple(fc.constantFrom('let i = 0; i < n; i++', 'const k of ks', 'var k in o', ';;', 'x of y', 'let [k, v] of m', 'const a = 1 in b;;', 'i = 0 in x;;'), s)
      .map(([h, b]) => `for (${h}) ${b}`),
    fc.tuple(body, fc.constantFrom(' catch (e) ', ' catch ', ' finally ', ' catch ({ e }) ', ''), body).map(([t, c, h]) => `try {\n${t}\n}${c}{\n${h}\n}`),
    body.map(b => `{\n${b}\n}`),
  );
});

/** A handler: a few statements, maybe after a hashbang or a directive. */
export function javaScriptHandler(): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom('', '', '#!/usr/bin/env node\n', "'use strict';\n", '\ufeff'), fc.array(statement(2), { minLength: 1, maxLength: 5 }))
    .map(([head, body]) => head + body.join('\n'));
}

/** The source with a few tokens (or lines) deleted, doubled, swapped, inserted. */
function mutate(source: string, edits: readonly (readonly number[])[]): string {
  let tokens: string[] = [...source.match(/\s+|\w+|[^\w\s]/g) ?? []];
  const insert = ['(', ')', '{', '}', '[', ']', ';', ',', '\n', '=>', '/', '`', "'", '"', '.', '?', ':', 'await', 'async', 'let', 'import', 'export', '*', '=', 'of'];
  for (const [kind, at, other] of edits) {
    if (!tokens.length) break;
    const i = at % tokens.length;
    const j = other % tokens.length;
    if (kind === 0) tokens.splice(i, 1);
    else if (kind === 1) tokens.splice(i, 0, tokens[i]);
    else if (kind === 2) [tokens[i], tokens[j]] = [tokens[j], tokens[i]];
    else tokens.splice(i, 0, insert[other % insert.length]);
    tokens = tokens.filter(t => t !== undefined);
  }
  return tokens.join('');
}

const edits = fc.array(fc.tuple(fc.nat(3), fc.nat(10_000), fc.nat(10_000)), { minLength: 1, maxLength: 3 });

/** A generated handler, changed by a few mutations. */
export function javaScriptMutant(): fc.Arbitrary<string> {
  return fc.tuple(javaScriptHandler(), edits).map(([source, e]) => mutate(source, e));
}

/** A few lines of one of these sources, changed by a few mutations (or none). */
export function javaScriptPieceMutant(sources: readonly string[]): fc.Arbitrary<string> {
  return fc.tuple(fc.nat(sources.length - 1), fc.nat(100_000), fc.integer({ min: 1, max: 30 }), fc.oneof(fc.constant<[number, number, number][]>([]), edits)).map(([s, from, count, e]) => {
    const lines = sources[s].split('\n');
    const start = from % lines.length;
    return mutate(lines.slice(start, start + count).join('\n'), e);
  });
}
