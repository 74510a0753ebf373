/**
 * Compiles the CEL rules of the package's schemas (`shippedRules()` of scripts/bundle-cel.ts) to
 * JavaScript, from their syntax trees as `@bufbuild/cel` parses them: `src/api/_generated/cel-rules.ts`,
 * written by `npm run validators` beside ajv's checks, committed, and compared with what this script
 * writes by a test.
 *
 * Why: evaluating a rule with the interpreter needs the interpreter, and loading it (it boots the
 * protobuf descriptors it registers), planning the rules and converting each `self` to CEL values
 * cost more than all the rest of the rules' work. A compiled rule reads `self` as JSON, as it is.
 *
 * A compiled rule answers only when it is sure to give @bufbuild/cel's answer, and says "not sure"
 * (undefined) otherwise, so the validator asks the interpreter, which gives every error message:
 * - every value it reads has the type its operation takes (strings for `startsWith` and `in` a list
 *   of strings, safe integers for `<` and `==` on numbers, objects for a field, lists and objects for
 *   `all` and `exists`); CEL would answer some other types too, but through overloads not copied here;
 * - a field it reads or tests with `has()` is absent, or there with a value that is neither null nor
 *   undefined (@bufbuild/cel reads both as absent in `has()`, and null as a value in a select);
 * - the strings `trim`, `size` and `matches` take are printable ASCII, where JavaScript's `trim`,
 *   `length` and regular expressions (of the subset {@link jsPattern} accepts) mean what CEL's do;
 * - integer arithmetic stays within the safe integers;
 * - it reads nothing @bufbuild/cel fails on as a whole, whatever the rest of the rule gives: a symbol
 *   or a function (no JSON value, but a JavaScript object may hold one), or a hole or an undefined
 *   item in a list it ranges over.
 * Its logic is CEL's: `false && x` is false whatever x is (an error too), so it is sure of that
 * even when it is not sure of x; `all` is false when one item is, `exists` true when one item is.
 *
 * A rule or a part of CEL outside this subset is not compiled: the validator interprets it, as any
 * rule of a schema compiled at run time.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Cel from '@bufbuild/cel';
import { shippedRules } from './bundle-cel';

type Expr = ReturnType<typeof Cel.parse>['expr'];

/** The file this script writes. */
export const CEL_RULES_FILE = path.join('src', 'api', '_generated', 'cel-rules.ts');

/** A rule, or a part of one, that the compiler leaves to the interpreter. */
export class Unsupported extends Error {}

/** What a compiled expression gives when it is sure, besides undefined (not sure): its type is known when the package is built. */
type Static = 'bool' | 'int' | 'string' | 'dyn';

interface Compiled {
  readonly code: string;
  readonly type: Static;
}

/** The helpers compiled rules call, as they go into the generated module. */
const HELPERS = `const isEnumerable = (o, f) => Object.prototype.propertyIsEnumerable.call(o, f);
const isObject = v => v !== null && typeof v === 'object' && !Array.isArray(v);
/** Printable ASCII: where trim, size and regular expressions mean the same in CEL and JavaScript. */
const PRINTABLE = /^[ -~]*$/;
/**
 * Set when a rule reads a value @bufbuild/cel fails on as a whole rather than with an error its logic
 * absorbs (\`false && x\`): a symbol or a function (no JSON value), or an undefined item of a list it
 * ranges over (a hole too). The rule is then not sure, whatever the rest gives.
 */
let failed = false;
const sure = result => (failed ? undefined : result);
const fails = v => {
  if (typeof v !== 'symbol' && typeof v !== 'function') return false;
  failed = true;
  return true;
};
/** What \`field\` gives for a field that is not there (has() is false, a select fails) and for one it cannot be sure of. */
const ABSENT = Symbol('absent');
const UNSURE = Symbol('not sure');
/**
 * A field of a map, read once for every has() and select of it: its value when it is an own enumerable
 * field (what the interpreter is given) with a value, not null; ABSENT when the object has no such field.
 */
function field(o, f) {
  if (!isObject(o)) return UNSURE;
  const v = o[f];
  if (v === undefined) return isEnumerable(o, f) ? UNSURE : ABSENT;
  return v === null || fails(v) || !isEnumerable(o, f) ? UNSURE : v;
}
/** has(o.f) of what \`field\` read. */
const present = v => (v === ABSENT ? false : v === UNSURE ? undefined : true);
/** o.f of what \`field\` read; not sure where the interpreter says "no such key". */
const value = v => (v === ABSENT || v === UNSURE ? undefined : v);
const not = x => (x === undefined ? undefined : !x);
const and = (a, b) => (a === false || b === false ? false : a === true && b === true ? true : undefined);
const or = (a, b) => (a === true || b === true ? true : a === false && b === false ? false : undefined);
const cond = (c, a, b) => (c === true ? a : c === false ? b : undefined);
const ints = (a, b) => Number.isSafeInteger(a) && Number.isSafeInteger(b);
function eq(a, b) {
  if (typeof a === 'string' || typeof a === 'boolean') return typeof b === typeof a ? a === b : undefined;
  return ints(a, b) ? a === b : undefined;
}
const ne = (a, b) => not(eq(a, b));
const lt = (a, b) => (ints(a, b) ? a < b : undefined);
const le = (a, b) => (ints(a, b) ? a <= b : undefined);
const gt = (a, b) => (ints(a, b) ? a > b : undefined);
const ge = (a, b) => (ints(a, b) ? a >= b : undefined);
function add(a, b) {
  if (!ints(a, b)) return undefined;
  const sum = a + b;
  return Number.isSafeInteger(sum) ? sum : undefined;
}
const inStrings = (x, set) => (typeof x === 'string' ? set.has(x) : undefined);
const inInts = (x, set) => (Number.isSafeInteger(x) ? set.has(x) : undefined);
const size = x => (typeof x === 'string' && PRINTABLE.test(x) ? x.length : undefined);
const trim = x => (typeof x === 'string' && PRINTABLE.test(x) ? x.trim() : undefined);
const startsWith = (x, prefix) => (typeof x === 'string' && typeof prefix === 'string' ? x.startsWith(prefix) : undefined);
const endsWith = (x, suffix) => (typeof x === 'string' && typeof suffix === 'string' ? x.endsWith(suffix) : undefined);
const matches = (x, re) => (typeof x === 'string' && PRINTABLE.test(x) ? re.test(x) : undefined);
/** The items of a list or the keys of a map (an object), as a CEL macro ranges over them; else undefined. */
function range(r) {
  if (isObject(r)) return Object.keys(r);
  if (!Array.isArray(r)) return undefined;
  for (let i = 0; i < r.length; i++) {
    if (r[i] === undefined || fails(r[i])) {
      failed = true;
      return undefined;
    }
  }
  return r;
}
function all(r, p) {
  const items = range(r);
  if (!items) return undefined;
  let result = true;
  for (let i = 0; i < items.length; i++) {
    const x = p(items[i]);
    if (x === false) return false;
    if (x !== true) result = undefined;
  }
  return result;
}
function exists(r, p) {
  const items = range(r);
  if (!items) return undefined;
  let result = false;
  for (let i = 0; i < items.length; i++) {
    const x = p(items[i]);
    if (x === true) return true;
    if (x !== false) result = undefined;
  }
  return result;
}`;

/** Escapes RE2 and JavaScript read alike: a backslash before punctuation is that character. */
const PUNCTUATION = new Set('\\.+*?()|[]{}^$/-'.split(''));
/** The characters that are operators outside a class. */
const OPERATORS = new Set('\\.+*?()|[]{}^$'.split(''));
/** Literal characters outside a class: printable ASCII that is not an operator. */
const isLiteral = (c: string) => c >= ' ' && c <= '~' && !OPERATORS.has(c);
/** RE2 refuses a repetition count above 1,000. */
const MAX_REPEAT = 1000;

/**
 * The pattern as a JavaScript regular expression when RE2 and JavaScript match the same printable
 * ASCII strings with it: literals, punctuation escaped with a backslash, `.`, classes of literals and
 * ranges, groups (capturing and `(?:`), alternation, `^` and `$` (no flags: both then mean the
 * text's ends), and the repetitions `*`, `+`, `?`, `{n}`, `{n,}` and `{n,m}`, greedy or lazy.
 * Anything else (`\d`, `\b`, flags, named groups, POSIX classes, a `{` that repeats nothing...) is left to the interpreter.
 */
export function jsPattern(pattern: string): RegExp {
  let i = 0;
  let depth = 0;
  /** Whether the last item can be repeated: an atom or a group, not an operator or a repetition. */
  let repeatable = false;
  const fail = (why: string): never => {
    throw new Unsupported(`the pattern ${JSON.stringify(pattern)} has ${why} at ${i}`);
  };
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      if (!PUNCTUATION.has(pattern[i + 1] ?? '')) fail('an escape other than of punctuation');
      i += 2;
      repeatable = true;
    } else if (c === '[') {
      i++;
      if (pattern[i] === '^') i++;
      if (pattern[i] === ']') fail('a class that starts with ]');
      let members = 0;
      while (pattern[i] !== ']') {
        let member = pattern[i];
        if (member === undefined) fail('an unclosed class');
        if (member === '[') fail('a [ in a class');
        if (member === '\\') {
          if (!PUNCTUATION.has(pattern[i + 1] ?? '')) fail('an escape other than of punctuation');
          member = pattern[i + 1];
          i += 2;
        } else {
          if (member < ' ' || member > '~') fail('a character that is not printable ASCII');
          i++;
        }
        // A range a-z; a - first or last is itself.
        if (pattern[i] === '-' && pattern[i + 1] !== ']' && pattern[i + 1] !== undefined) {
          const to = pattern[i + 1];
          if (to === '\\' || to === '[' || to < ' ' || to > '~' || to < member) fail('a range that is not of two printable characters in order');
          i += 2;
        }
        members++;
      }
      if (members === 0) fail('an empty class');
      i++;
      repeatable = true;
    } else if (c === '(') {
      if (pattern[i + 1] === '?') {
        if (pattern[i + 2] !== ':') fail('a group other than (?:');
        i += 3;
      } else {
        i++;
      }
      depth++;
      repeatable = false;
    } else if (c === ')') {
      if (depth === 0) fail('an unopened group');
      depth--;
      i++;
      repeatable = true;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      if (!repeatable) fail('a repetition of nothing');
      if (c === '{') {
        const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
        if (!repeat) fail('a { that is not a repetition');
        const [text, min, , max] = repeat!;
        if (Number(min) > MAX_REPEAT || (max !== undefined && max !== '' && (Number(max) > MAX_REPEAT || Number(max) < Number(min)))) fail('a repetition count RE2 refuses');
        i += text.length;
      } else {
        i++;
      }
      // Lazy: the same strings match.
      if (pattern[i] === '?') i++;
      repeatable = false;
    } else if (c === '|' || c === '^' || c === '$') {
      i++;
      repeatable = false;
    } else if (c === '.' || isLiteral(c)) {
      i++;
      repeatable = true;
    } else {
      fail(`the character ${JSON.stringify(c)}`);
    }
  }
  if (depth !== 0) fail('an unclosed group');
  return new RegExp(pattern);
}

/** A constant of the module: sets of `in` and regular expressions, each made once. */
interface Constants {
  add(code: string): string;
}

/**
 * The body of a function a rule compiles to (the rule's, or a macro's predicate): the fields it reads
 * of its variable, each once, as constants declared before its expression.
 */
interface Body {
  readonly reads: string[];
  readonly locals: Map<string, string>;
}

/** A CEL variable: its JavaScript name and the body that binds it. */
interface Variable {
  readonly name: string;
  readonly body: Body;
}

/** Names of a rule's locals, counted across its bodies. */
interface Names {
  next(prefix: string): string;
}

type Scope = ReadonlyMap<string, Variable>;

/** The function of a body, with its reads first: on lines of their own for a rule's, on one line for a predicate's. */
function functionOf(parameter: string, body: Body, code: string, lines = false): string {
  if (!body.reads.length) return `${parameter} => ${code}`;
  if (!lines) return `${parameter} => { ${body.reads.join(' ')} return ${code}; }`;
  return `${parameter} => {\n${body.reads.map(read => `    ${read}\n`).join('')}    return ${code};\n  }`;
}

/** Compiles one expression in a scope of CEL names to JavaScript names. */
function compileExpr(expr: Expr | undefined, scope: Scope, constants: Constants, names: Names): Compiled {
  if (!expr) throw new Unsupported('an empty expression');
  const kind = expr.exprKind;
  const bool = (code: string): Compiled => ({ code, type: 'bool' });
  const sub = (e: Expr | undefined, s = scope) => compileExpr(e, s, constants, names);
  const boolSub = (e: Expr | undefined, s = scope) => {
    const compiled = sub(e, s);
    if (compiled.type !== 'bool') throw new Unsupported('a logical operator on a value not known to be a bool');
    return compiled.code;
  };
  switch (kind.case) {
    case 'constExpr': {
      const constant = kind.value.constantKind;
      switch (constant.case) {
        case 'boolValue': return { code: String(constant.value), type: 'bool' };
        case 'stringValue': return { code: JSON.stringify(constant.value), type: 'string' };
        case 'int64Value': {
          const value = Number(constant.value);
          if (!Number.isSafeInteger(value)) throw new Unsupported(`the int ${constant.value}`);
          return { code: String(value), type: 'int' };
        }
        default: throw new Unsupported(`a ${constant.case} constant`);
      }
    }
    case 'identExpr': {
      const variable = scope.get(kind.value.name);
      if (!variable) throw new Unsupported(`the name ${kind.value.name}`);
      return { code: variable.name, type: 'dyn' };
    }
    case 'selectExpr': {
      const operand = kind.value.operand?.exprKind;
      const field = JSON.stringify(kind.value.field);
      let read: string;
      const variable = operand?.case === 'identExpr' ? scope.get(operand.value.name) : undefined;
      if (variable) {
        // Read once in the body that binds the variable, for every has() and select of the field.
        const key = `${variable.name}.${field}`;
        let local = variable.body.locals.get(key);
        if (!local) {
          local = names.next('f');
          variable.body.locals.set(key, local);
          variable.body.reads.push(`const ${local} = field(${variable.name}, ${field});`);
        }
        read = local;
      } else {
        read = `field(${sub(kind.value.operand).code}, ${field})`;
      }
      return kind.value.testOnly ? bool(`present(${read})`) : { code: `value(${read})`, type: 'dyn' };
    }
    case 'callExpr': {
      const { function: fn, target, args } = kind.value;
      const call = (name: string, ...parts: Compiled[]) => `${name}(${parts.map(p => p.code).join(', ')})`;
      // Methods and functions alike: x.size() and size(x).
      const operands = target ? [target, ...args] : args;
      const arity = (n: number) => {
        if (operands.length !== n) throw new Unsupported(`${fn} with ${operands.length} operands`);
      };
      switch (fn) {
        case '!_':
          arity(1);
          return bool(`not(${boolSub(operands[0])})`);
        case '_&&_':
        case '_||_':
          arity(2);
          return bool(`${fn === '_&&_' ? 'and' : 'or'}(${boolSub(operands[0])}, ${boolSub(operands[1])})`);
        case '_?_:_': {
          arity(3);
          const [yes, no] = [sub(operands[1]), sub(operands[2])];
          return { code: `cond(${boolSub(operands[0])}, ${yes.code}, ${no.code})`, type: yes.type === no.type ? yes.type : 'dyn' };
        }
        case '_==_':
        case '_!=_':
        case '_<_':
        case '_<=_':
        case '_>_':
        case '_>=_': {
          arity(2);
          const name = { '_==_': 'eq', '_!=_': 'ne', '_<_': 'lt', '_<=_': 'le', '_>_': 'gt', '_>=_': 'ge' }[fn];
          return bool(call(name, sub(operands[0]), sub(operands[1])));
        }
        case '_+_': {
          arity(2);
          const [a, b] = [sub(operands[0]), sub(operands[1])];
          // A value of `self` may be a CEL int or double (as its schema says): only ints known as such.
          if (a.type !== 'int' || b.type !== 'int') throw new Unsupported('+ on values not known to be ints');
          return { code: call('add', a, b), type: 'int' };
        }
        case '@in': {
          arity(2);
          const list = operands[1].exprKind;
          if (list.case !== 'listExpr' || list.value.optionalIndices.length) throw new Unsupported('in a list that is not a literal');
          const items = list.value.elements.map(e => sub(e));
          const type = items[0]?.type;
          if (!items.length || (type !== 'string' && type !== 'int') || items.some(item => item.type !== type)
            || list.value.elements.some(e => e.exprKind.case !== 'constExpr')) {
            throw new Unsupported('in a list that is not of string or int constants');
          }
          const set = constants.add(`new Set([${items.map(item => item.code).join(', ')}])`);
          return bool(`${type === 'string' ? 'inStrings' : 'inInts'}(${sub(operands[0]).code}, ${set})`);
        }
        case 'size':
          arity(1);
          return { code: call('size', sub(operands[0])), type: 'int' };
        case 'trim':
          if (!target) throw new Unsupported('trim as a function');
          arity(1);
          return { code: call('trim', sub(target)), type: 'string' };
        case 'startsWith':
        case 'endsWith':
          if (!target) throw new Unsupported(`${fn} as a function`);
          arity(2);
          return bool(call(fn, sub(operands[0]), sub(operands[1])));
        case 'matches': {
          arity(2);
          const pattern = operands[1].exprKind;
          if (pattern.case !== 'constExpr' || pattern.value.constantKind.case !== 'stringValue') throw new Unsupported('matches with a pattern that is not a literal');
          const source = pattern.value.constantKind.value;
          const re = jsPattern(source);
          // RE2 must take it too, or the interpreter answers with an error.
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          (require('@bufbuild/re2') as { RE2JS: { compile(p: string): unknown } }).RE2JS.compile(source);
          return bool(`matches(${sub(operands[0]).code}, ${constants.add(re.toString())})`);
        }
        default:
          throw new Unsupported(`the function ${fn}`);
      }
    }
    case 'comprehensionExpr':
      return compileMacro(kind.value, scope, constants, names);
    default:
      throw new Unsupported(`a ${kind.case}`);
  }
}

/** `all` and `exists` as @bufbuild/cel's parser expands them into a comprehension; any other comprehension is not compiled. */
function compileMacro(c: Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'], scope: Scope, constants: Constants, names: Names): Compiled {
  const ident = (e: Expr | undefined, name: string) => e?.exprKind.case === 'identExpr' && e.exprKind.value.name === name;
  const call = (e: Expr | undefined, fn: string) => (e?.exprKind.case === 'callExpr' && e.exprKind.value.function === fn && !e.exprKind.value.target ? e.exprKind.value.args : undefined);
  const init = c.accuInit?.exprKind;
  const initial = init?.case === 'constExpr' && init.value.constantKind.case === 'boolValue' ? init.value.constantKind.value : undefined;
  const accu = c.accuVar;
  if (c.iterVar2 || !c.iterVar || !accu || scope.has(accu) || initial === undefined || !ident(c.result, accu)) throw new Unsupported('a comprehension other than all or exists');
  const condition = call(c.loopCondition, '@not_strictly_false')?.[0];
  const step = call(c.loopStep, initial ? '_&&_' : '_||_');
  const kept = initial ? ident(condition, accu) : ident(call(condition, '!_')?.[0], accu);
  if (!kept || step?.length !== 2 || !ident(step[0], accu)) throw new Unsupported('a comprehension other than all or exists');
  const range = compileExpr(c.iterRange, scope, constants, names);
  const variable: Variable = { name: names.next('v'), body: { reads: [], locals: new Map() } };
  const inner = new Map(scope).set(c.iterVar, variable);
  const predicate = compileExpr(step[1], inner, constants, names);
  if (predicate.type !== 'bool') throw new Unsupported('a macro whose predicate is not known to be a bool');
  return { code: `${initial ? 'all' : 'exists'}(${range.code}, ${functionOf(variable.name, variable.body, predicate.code)})`, type: 'bool' };
}

/** A rule as a JavaScript function of `self`; throws {@link Unsupported} for a rule outside the subset. */
export function compileCelRule(rule: string, constants: Constants): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parse } = require('@bufbuild/cel') as typeof Cel;
  const counts = new Map<string, number>();
  const names = {
    next(prefix: string): string {
      const n = counts.get(prefix) ?? 0;
      counts.set(prefix, n + 1);
      return `${prefix}${n}`;
    },
  };
  const body: Body = { reads: ['failed = false;'], locals: new Map() };
  const compiled = compileExpr(parse(rule).expr, new Map([['self', { name: 'self', body }]]), constants, names);
  if (compiled.type !== 'bool') throw new Unsupported('a rule not known to give a bool');
  return functionOf('self', body, `sure(${compiled.code})`, true);
}

/** The text of the generated module: every shipped rule compiled, and a list of those left to the interpreter. */
export function celRulesText(): string {
  const lines: string[] = [];
  const constants = {
    add(code: string): string {
      const name = `C${lines.length}`;
      lines.push(`const ${name} = ${code};`);
      return name;
    },
  };
  const entries: string[] = [];
  const left: string[] = [];
  for (const rule of shippedRules()) {
    try {
      entries.push(`  ${JSON.stringify(rule)}: ${compileCelRule(rule, constants)},`);
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      left.push(`//   ${rule}: ${e.message}`);
    }
  }
  // Read from the file system: the package does not export its package.json.
  const version = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'node_modules', '@bufbuild', 'cel', 'package.json'), 'utf8')) as { version: string }).version;
  return `/* eslint-disable */
// @ts-nocheck
// Generated by scripts/compile-cel.ts (\`npm run validators\`) from the CEL rules of the package's schemas
// (shippedRules() of scripts/bundle-cel.ts) as @bufbuild/cel ${version} parses them: do not edit.
// Each rule reads \`self\` as JSON and gives true or false where it is sure to give the interpreter's answer,
// else undefined (see scripts/compile-cel.ts).
${left.length ? `// Left to the interpreter:\n${left.join('\n')}\n` : ''}
${HELPERS}

${lines.join('\n')}

/** The compiled rules by their text. */
export const compiledCelRules: { readonly [rule: string]: (self: unknown) => boolean | undefined } = {
${entries.join('\n')}
};
`;
}

/** `npm run validators` writes the module (see scripts/compile-validators.ts). */
export function writeCelRules(root: string): string {
  const text = celRulesText();
  fs.mkdirSync(path.dirname(path.join(root, CEL_RULES_FILE)), { recursive: true });
  fs.writeFileSync(path.join(root, CEL_RULES_FILE), text);
  return text;
}
