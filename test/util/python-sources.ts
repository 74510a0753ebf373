/**
 * Python sources for the tests that compare the reader of the handler checks
 * (src/api/_python-reader.ts) with tree-sitter (test/api/python-reader.test.ts,
 * scripts/python-reader-sweep.ts): generated handlers, mostly valid, that use what handlers use and
 * what the reader is careful about (`main` bound in every way, guarded imports, f-strings,
 * annotations, lines in brackets indented anyhow, comments at odd indentation, soft keywords); and
 * mutations of any source (a token deleted, doubled, swapped or inserted, a line indented otherwise,
 * deleted or doubled, a call of `print` made a Python 2 statement), which mostly break it.
 */
import * as fc from 'fast-check';

const NAMES = ['main', 'x', 'y', 'event', 'context', 'data', 'TYPE_CHECKING', 'print', 'match', 'type', 'json', 'result', '_', 'case'];
const MODULES = ['os', 'os.path', 'json', 'yaml', 'requests', 'numpy.linalg', 'main', 'typing', 'bs4', 'a.b.c', 'main.sub', '__future__'];
const ANNOTATIONS = ['int', 'str | None', 'list[int]', 'dict[str, list[int]]', '"Foo"', 'a.b', 'Callable[[int], str]', 'tuple[int, ...]',
  'Final[str] == 1', 'a[b][c]', 'Literal[-1]', 'a[b].c', 'x if y else z'];

const name = fc.constantFrom(...NAMES);
const moduleName = fc.constantFrom(...MODULES);
const atom = fc.oneof(
  name,
  fc.constantFrom('1', '0x_ff', '1_000', '2.5e-3', '.5', '1j', '0', 'None', 'True', '...'),
  fc.constantFrom('"s"', "'s'", '"""doc\nmore"""', 'f"{x}"', 'f"{x!r:>10}"', `f'{d["k"]}'`, 'rb"\\x00"', 'f"{x:{w}}"', 'f"{x=}"', '"a" "b"',
    'f"{TYPE_CHECKING}"', 'f"{{x}}"', "'it\\'s'", 'r"\\d"', 'u"x"', 'b"x"', 'f"{a, b}"', 'f"{x:%Y-%m}"'),
);
const op = fc.constantFrom('+', '-', '*', '/', '//', '%', '**', '@', '|', '&', '^', '<<', '>>', '==', '!=', '<', '>=', 'in', 'not in', 'is', 'is not', 'and', 'or');

/** Expressions, at most `depth` deep; `indent` is the block's, for lines in brackets that may be indented less. */
function expression(depth: number): fc.Arbitrary<string> {
  if (depth <= 0) return atom;
  const e = expression(depth - 1);
  const list = fc.array(e, { minLength: 1, maxLength: 3 }).map(es => es.join(', '));
  return fc.oneof(
    { weight: 6, arbitrary: atom },
    fc.tuple(e, fc.array(e, { maxLength: 2 })).map(([f, args]) => `${f}(${args.join(', ')})`),
    fc.tuple(e, name, e).map(([f, k, v]) => `${f}(${k}=${v}, *${v}, **${v})`),
    fc.tuple(e, name).map(([o, a]) => `${o}.${a}`),
    fc.tuple(e, e).map(([o, i]) => `${o}[${i}]`),
    fc.tuple(e, e).map(([o, i]) => `${o}[${i}:${i}, ::2]`),
    fc.tuple(e, op, e).map(([a, o, b]) => `${a} ${o} ${b}`),
    e.map(a => `-${a}`),
    e.map(a => `not ${a}`),
    e.map(a => `await ${a}`),
    fc.tuple(name, e).map(([p, b]) => `lambda ${p}, *a, k=1, **kw: ${b}`),
    fc.tuple(e, e, e).map(([a, c, b]) => `${a} if ${c} else ${b}`),
    list.map(es => `[${es}]`),
    list.map(es => `(${es},)`),
    list.map(es => `{${es}}`),
    fc.tuple(e, e).map(([k, v]) => `{${k}: ${v}, **${v}}`),
    fc.tuple(e, name, e, e).map(([b, n, i, c]) => `[${b} for ${n} in ${i} if ${c}]`),
    fc.tuple(e, name, e).map(([b, n, i]) => `(${b} for ${n}, *_ in ${i})`),
    fc.tuple(name, e).map(([n, v]) => `(${n} := ${v})`),
    // Lines in brackets, indented anyhow: tree-sitter ends a block at one indented less than it.
    fc.tuple(e, fc.constantFrom('', ' ', '  ', '    ', '        ', '\t'), e, fc.constantFrom('', '  # note', ' \\')).map(([a, pad, b, tail]) =>
      `(${a},${tail === ' \\' ? '' : tail}\n${pad}${b})`),
    fc.tuple(e, e).map(([a, b]) => `${a} + \\\n    ${b}`),
  );
}

const target = fc.oneof(
  { weight: 4, arbitrary: name },
  fc.tuple(name, name).map(([a, b]) => `${a}, ${b}`),
  fc.tuple(name, name).map(([a, b]) => `(${a}, *${b})`),
  fc.tuple(name, name).map(([a, b]) => `[${a}, (${b})]`),
  fc.tuple(name, name).map(([a, b]) => `${a}.${b}`),
  fc.tuple(name, name).map(([a, b]) => `${a}[${b}]`),
  name.map(a => `*${a}, z`),
  name.map(a => `(${a})`),
);

const simpleStatement: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(target, expression(2)).map(([t, v]) => `${t} = ${v}`),
  fc.tuple(target, target, expression(1)).map(([t, u, v]) => `${t} = ${u} = ${v}`),
  fc.tuple(name, fc.constantFrom('+=', '-=', '|=', '**=', '//='), expression(1)).map(([t, o, v]) => `${t} ${o} ${v}`),
  fc.tuple(name, fc.constantFrom(...ANNOTATIONS), fc.option(expression(1))).map(([t, a, v]) => `${t}: ${a}${v === null ? '' : ` = ${v}`}`),
  expression(3),
  fc.option(expression(2)).map(v => (v === null ? 'return' : `return ${v}`)),
  fc.constantFrom('pass', 'break', 'continue', 'global main', 'nonlocal x, y', 'del x, y[0]', 'raise', 'yield', 'yield x', 'yield from y', 'x = yield'),
  fc.tuple(expression(1), fc.option(expression(1))).map(([e, c]) => `raise ${e}${c === null ? '' : ` from ${c}`}`),
  fc.tuple(expression(1), expression(1)).map(([e, m]) => `assert ${e}, ${m}`),
  fc.tuple(moduleName, fc.option(name)).map(([m, a]) => `import ${m}${a === null ? '' : ` as ${a}`}`),
  fc.tuple(moduleName, moduleName).map(([a, b]) => `import ${a}, ${b}`),
  fc.tuple(moduleName, name, fc.option(name)).map(([m, n, a]) => `from ${m} import ${n}${a === null ? '' : ` as ${a}`}`),
  fc.tuple(moduleName, name, name).map(([m, a, b]) => `from ${m} import (${a},\n    ${b},)`),
  fc.tuple(fc.constantFrom('.', '..', '...', '.a'), name).map(([m, n]) => `from ${m} import ${n}`),
  moduleName.map(m => `from ${m} import *`),
  expression(2).map(e => `print(${e}, sep="")`),
  fc.tuple(simpleStatementLeaf(), simpleStatementLeaf()).map(([a, b]) => `${a}; ${b}`),
);

function simpleStatementLeaf(): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom('pass', 'x = 1', 'import os', 'main = 1', 'print(x)'), name.map(n => `${n} = 0`));
}

/** Where comments and blank lines go: anywhere, at any indentation. */
const filler = fc.constantFrom('', '', '', '\n', '# comment\n', '  # indented comment\n', '        # deep comment\n', '\n\n');

/** The lines of a block at an indentation, at most `depth` compound statements deep. */
function block(indent: string, depth: number): fc.Arbitrary<string> {
  const inner = indent + (indent.startsWith('\t') ? '\t' : '    ');
  const body = depth > 0 ? block(inner, depth - 1) : simpleStatement.map(s => `${inner}${s.replace(/\n/g, `\n${inner}`)}\n`);
  const header = (text: string) => body.map(b => `${indent}${text}:\n${b}`);
  const compound = fc.oneof(
    fc.tuple(fc.constantFrom('def', 'async def'), name, fc.constantFrom('', 'event, context', 'a, /, b=1, *args: int, c: str | None = None, **kw', '*, k'),
      fc.constantFrom('', ' -> int', ' -> dict[str, int] | None', ' -> a[b] == c')).chain(([d, n, p, r]) => header(`${d} ${n}(${p})${r}`)),
    fc.tuple(name, fc.constantFrom('', '()', '(Base)', '(Base, metaclass=M)')).chain(([n, b]) => header(`class ${n}${b}`)),
    fc.tuple(fc.constantFrom('@property', '@app.route("/x")', '@functools.lru_cache(maxsize=None)'), name).chain(([dec, n]) =>
      body.map(b => `${indent}${dec}\n${indent}def ${n}(self):\n${b}`)),
    fc.tuple(expression(2), fc.boolean(), fc.boolean()).chain(([c, elif, els]) => fc.tuple(body, body, body).map(([a, b2, c2]) =>
      `${indent}if ${c}:\n${a}${elif ? `${indent}elif x:\n${b2}` : ''}${els ? `${indent}else:\n${c2}` : ''}`)),
    fc.constantFrom('TYPE_CHECKING', 'typing.TYPE_CHECKING', 'not TYPE_CHECKING').chain(c => header(`if ${c}`)),
    fc.tuple(target, expression(1)).chain(([t, i]) => header(`for ${t} in ${i}`)),
    expression(1).chain(c => header(`while ${c}`)),
    fc.tuple(fc.constantFrom('except ImportError', 'except (A, B) as e', 'except', 'except* E', 'finally'), fc.boolean()).chain(([handler, els]) =>
      fc.tuple(body, body, body).map(([a, b2, c2]) => `${indent}try:\n${a}${indent}${handler}:\n${b2}${els && handler !== 'finally' ? `${indent}else:\n${c2}` : ''}`)),
    fc.constantFrom('with open(x) as f', 'with a, b as (c, d)', 'with (a as b, c as d)', 'with (a, b)', 'async with s as t').chain(h => header(h)),
    fc.tuple(fc.constantFrom('if x', 'for x in y', 'while 1', 'def f()', 'class C', 'with a'), simpleStatementLeaf()).map(([h, s]) => `${indent}${h}: ${s}\n`),
  );
  const statement = depth > 0 ? fc.oneof({ weight: 3, arbitrary: simpleStatement.map(s => `${indent}${s.replace(/\n/g, `\n${indent}`)}\n`) }, compound)
    : simpleStatement.map(s => `${indent}${s.replace(/\n/g, `\n${indent}`)}\n`);
  return fc.array(fc.tuple(filler, statement), { minLength: 1, maxLength: 4 }).map(parts => parts.map(([f, s]) => f + s).join(''));
}

/** A generated handler: statements at the top level, a few compound statements deep, with spaces or tabs. */
export const pythonHandler: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: block('', 2) },
  block('', 1).map(text => text.replace(/^( {4})+/gm, spaces => '\t'.repeat(spaces.length / 4))),
).map(text => `${text}`);

/** What a mutation may insert. */
const INSERTS = [':', '(', ')', '[', ']', '{', '}', ',', '=', '==', ':=', '*', '**', '.', '...', '@', ';', '\\\n', '\n', '\t', '    ', '#',
  '"', "'", '"""', 'f"{', '}"', 'print ', 'exec ', 'lambda', 'if', 'else', 'elif', 'try', 'except', 'finally', 'def', 'class', 'return', 'yield',
  'import', 'from', 'as', 'with', 'for', 'in', 'not', 'and', 'await', 'async', 'match', 'case', 'type', 'pass', 'main', 'TYPE_CHECKING', '0x', '1_',
  '1.', '\\', '\r\n', '\f', 'é', '\u00a0'];

/** One mutation: what, and where (a fraction of the tokens or lines). */
interface Mutation {
  readonly kind: number;
  readonly at: number;
  readonly insert: string;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.integer({ min: 0, max: 9 }),
  at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  insert: fc.constantFrom(...INSERTS),
});

/** A source changed by mutations, in order. */
export function mutate(source: string, mutations: readonly Mutation[]): string {
  let text = source;
  for (const { kind, at, insert } of mutations) {
    const tokens: string[] = text.match(/[ \t]+|\n|\w+|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[\s\S]/g) ?? [];
    if (!tokens.length) break;
    const i = Math.floor(at * tokens.length);
    if (kind <= 4) {
      if (kind === 0) tokens.splice(i, 1);
      else if (kind === 1) tokens.splice(i, 0, tokens[i]);
      else if (kind === 2 && i + 1 < tokens.length) [tokens[i], tokens[i + 1]] = [tokens[i + 1], tokens[i]];
      else if (kind === 3) tokens.splice(i, 0, insert);
      else tokens.splice(i, 0, ' ', insert, ' ');
      text = tokens.join('');
      continue;
    }
    const lines = text.split('\n');
    const l = Math.floor(at * lines.length);
    if (kind === 5) lines[l] = `${[' ', '  ', '    ', '\t', ' \t'][Math.floor(at * 97) % 5]}${lines[l]}`;
    else if (kind === 6) lines[l] = lines[l].replace(/^[ \t]/, '');
    else if (kind === 7) lines.splice(l, 1);
    else if (kind === 8) lines.splice(l, 0, lines[l]);
    // Python 2's print statement: `print(x)` → `print x`.
    else lines[l] = lines[l].replace(/\bprint\((.*)\)\s*$/, 'print $1');
    text = lines.join('\n');
  }
  return text;
}

/** A source changed by one to four mutations. */
export function pythonMutant(source: string): fc.Arbitrary<string> {
  return fc.array(mutation, { minLength: 1, maxLength: 4 }).map(mutations => mutate(source, mutations));
}

/**
 * A piece of one of many sources, a few lines of it (often without the indentation they had there),
 * changed by up to four mutations.
 */
export function pythonPieceMutant(sources: readonly string[]): fc.Arbitrary<string> {
  return fc.record({
    source: fc.integer({ min: 0, max: sources.length - 1 }),
    from: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    length: fc.integer({ min: 3, max: 32 }),
    dedent: fc.boolean(),
    mutations: fc.array(mutation, { maxLength: 4 }),
  }).map(({ source, from, length, dedent, mutations }) => {
    const lines = sources[source].split('\n');
    const start = Math.floor(from * lines.length);
    let text = lines.slice(start, start + length).join('\n');
    const indent = /^[ \t]*/.exec(text)![0];
    if (indent && dedent) text = text.split('\n').map(l => (l.startsWith(indent) ? l.slice(indent.length) : l)).join('\n');
    return `${mutate(text, mutations)}\n`;
  });
}
