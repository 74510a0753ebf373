/**
 * The CEL rules (`x-kubernetes-validations`) of a schema, evaluated as the API server evaluates them.
 *
 * Each rule of the package's own schemas runs as JavaScript compiled from it when the package is
 * built (`src/api/_generated/cel-rules.ts`, scripts/compile-cel.ts), on `self` as JSON, when that
 * code is sure to give the interpreter's answer. Otherwise, and for any other rule, `@bufbuild/cel`
 * evaluates it: it loads on the first rule it has to evaluate, so an app whose objects the compiled
 * rules answer never loads it.
 *
 * SchemaValidator (./validator) loads this module by its path when it evaluates CEL: the webhook
 * server's bundle, which never does (SchemaValidatorOptions.celRules), leaves it out.
 */
// Types only: the CEL interpreter loads on first use (see loadCel).
import type * as Cel from '@bufbuild/cel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { packageRoot } from '../_package-root';
import { compiledCelRules } from './_generated/cel-rules';
import { childPath, isObject, showJson } from './_json';
import { ContentMemo } from './_work';
import { JsonSchemaProps, ValidationRule } from './schema';

type CelProgram = (bindings: { self: unknown }) => unknown;

/** A parsed CEL expression, as `@bufbuild/cel`'s `parse` gives it. */
type CelExpr = ReturnType<typeof Cel.parse>['expr'];

/**
 * The names of `@bufbuild/cel` and its strings extension that the rules use. The bundle has no
 * parser but the parse of every rule of the package's schemas (scripts/bundle-cel.ts); the packages
 * have the parser.
 */
type CelModule = Pick<typeof Cel, 'celEnv' | 'isCelError' | 'plan'> & {
  readonly strings: typeof import('@bufbuild/cel/ext').strings;
  readonly parse?: typeof Cel.parse;
  readonly parsedRules?: { readonly [rule: string]: CelExpr };
};

/** One violation of a rule, as the validator reports it. */
interface RuleViolation {
  readonly path: string;
  readonly message: string;
  readonly rule?: string;
}

/**
 * How CEL rules are evaluated: `compiled` (the default) by the compiled rules where they are sure
 * and by the interpreter otherwise; `interpret` by the interpreter alone; `compare` by both, throwing
 * when a compiled rule is sure of an answer that is not the interpreter's (the interpreter's answer
 * counts). The environment variable {@link CEL_MODE_ENV} sets it for a process and those it starts:
 * the test suite compares (jest.config.js), so every object it validates goes through the interpreter.
 */
export type CelMode = 'compiled' | 'interpret' | 'compare';

/** The environment variable that sets the {@link CelMode}. */
export const CEL_MODE_ENV = 'KYMA_SERVERLESS_CEL';

function modeFromEnv(): CelMode {
  const value = process.env[CEL_MODE_ENV];
  if (value === undefined || value === '') return 'compiled';
  if (value === 'compiled' || value === 'interpret' || value === 'compare') return value;
  throw new Error(`${CEL_MODE_ENV} must be compiled, interpret or compare, not ${JSON.stringify(value)}`);
}

let mode: CelMode = modeFromEnv();

/**
 * Sets how this process evaluates CEL rules (see {@link CelMode}), for the tests that count the work
 * of each way; returns the mode it replaces.
 *
 * @internal
 */
export function _setCelMode(next: CelMode): CelMode {
  const previous = mode;
  mode = next;
  return previous;
}

/**
 * How much CEL work this process did, counted rather than timed (issue 35): loads of the interpreter
 * (at most one per process), rules parsed at run time (none of the package's own: the bundle holds
 * their parse), rules planned (each once), answers of compiled rules, and evaluations by the
 * interpreter (one per distinct part of `self` a rule reads, see {@link selfReads}).
 *
 * @internal
 */
export const _celWork = { interpreterLoads: 0, parses: 0, plans: 0, compiledEvaluations: 0, evaluations: 0 };

let cel: { readonly module: CelModule; readonly environment: ReturnType<typeof Cel.celEnv> } | undefined;

/**
 * The CEL interpreter: `lib/cel/cel.js`, one file bundled from the packages (scripts/bundle-cel.ts),
 * compiled with the package's code cache (src/_code-cache.ts) as the bundle of schema classes is,
 * or, in a checkout that has not run `npm run bundle`, the packages.
 */
function loadCel(): CelModule {
  _celWork.interpreterLoads++;
  let file: string | undefined;
  try {
    file = path.join(packageRoot(), 'lib', 'cel', 'cel.js');
  } catch {
    // This module was bundled into a program of its own: no package folder.
  }
  /* eslint-disable @typescript-eslint/no-require-imports */
  if (file && fs.existsSync(file)) {
    let load: (bundle: string) => unknown = require;
    // The cache's scripts run in the process's main context. A test runner that runs this module in
    // a context of its own gets the bundle from its require: the interpreter takes only the Maps of its own context.
    if (vm.runInThisContext('Map') === Map) load = (require('../_code-cache') as typeof import('../_code-cache')).requireBundle;
    return load(file) as CelModule;
  }
  return { ...require('@bufbuild/cel') as typeof Cel, strings: (require('@bufbuild/cel/ext') as typeof import('@bufbuild/cel/ext')).strings };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** The CEL interpreter with the strings extension the API server has, loaded once. */
function celRuntime(): NonNullable<typeof cel> {
  if (!cel) {
    const module = loadCel();
    cel = { module, environment: module.celEnv({ funcs: module.strings }) };
  }
  return cel;
}

/** A rule's text parsed: from the bundle when it is a rule of the package's schemas, else by the packages' parser. */
function parseRule(module: CelModule, rule: string): CelExpr {
  if (module.parsedRules && Object.prototype.hasOwnProperty.call(module.parsedRules, rule)) return module.parsedRules[rule];
  _celWork.parses++;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const parse = module.parse ?? (require('@bufbuild/cel') as typeof Cel).parse;
  return parse(rule).expr;
}

/** A planned rule: its program, and what it reads of `self` when that is less than all of it. */
interface PlannedRule {
  readonly program: CelProgram;
  readonly reads: SelfReads | undefined;
}

const planned = new Map<string, PlannedRule>();

/** Plans a CEL rule once, loading the interpreter; throws with the rule's text when it does not parse. */
export function compileRule(rule: string): CelProgram {
  return planRule(rule).program;
}

function planRule(rule: string): PlannedRule {
  let result = planned.get(rule);
  if (!result) {
    try {
      const { module, environment } = celRuntime();
      const expr = parseRule(module, rule);
      _celWork.plans++;
      result = { program: module.plan(environment, expr) as unknown as CelProgram, reads: selfReads(expr) };
    } catch (e) {
      throw new Error(`CEL rule does not compile: ${rule}: ${(e as Error).message}`);
    }
    planned.set(rule, result);
  }
  return result;
}

/** The compiled rule of a rule's text, when the package has one (a rule of its own schemas that the compiler supports). */
function compiledRule(rule: string): ((self: unknown) => boolean | undefined) | undefined {
  return Object.prototype.hasOwnProperty.call(compiledCelRules, rule) ? compiledCelRules[rule] : undefined;
}

/**
 * What a rule reads of `self`, found in its syntax tree, when that is less than all of it:
 * - `fields`: `self` appears only as `self.f` or `has(self.f)`: the rule sees only these fields
 *   (true: their value, false: only whether they are there);
 * - `items`: `self` appears only as the list a macro ranges over (`self.all(e, ...)`), whose
 *   variable appears only as `e.f` or `has(e.f)`: the rule sees only these fields of each item.
 * The rule is evaluated on `self` cut down to these fields, so its answer is the same, and depends
 * only on them: the validator remembers it by them. Nothing is evaluated here; any other use of
 * `self` (`size(self)`, a map's keys, a variable that hides `self`) reads all of it.
 */
interface SelfReads {
  readonly kind: 'fields' | 'items';
  readonly fields: ReadonlyMap<string, boolean>;
}

function selfReads(root: CelExpr): SelfReads | undefined {
  const selfFields = new Map<string, boolean>();
  const itemFields = new Map<string, boolean>();
  let ranged = false;
  let whole = false;
  const itemVars: string[] = [];
  const read = (fields: Map<string, boolean>, field: string, value: boolean) => fields.set(field, (fields.get(field) ?? false) || value);
  const walk = (expr: CelExpr | undefined): void => {
    if (!expr || whole) return;
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr':
        return;
      case 'identExpr':
        // `self` or an item of it, whole.
        if (kind.value.name === 'self' || itemVars.includes(kind.value.name)) whole = true;
        return;
      case 'selectExpr': {
        const operand = kind.value.operand?.exprKind;
        if (operand?.case === 'identExpr' && operand.value.name === 'self') read(selfFields, kind.value.field, !kind.value.testOnly);
        else if (operand?.case === 'identExpr' && itemVars.includes(operand.value.name)) read(itemFields, kind.value.field, !kind.value.testOnly);
        else walk(kind.value.operand);
        return;
      }
      case 'callExpr':
        walk(kind.value.target);
        kind.value.args.forEach(walk);
        return;
      case 'listExpr':
        kind.value.elements.forEach(walk);
        return;
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') walk(entry.keyKind.value);
          walk(entry.value);
        }
        return;
      case 'comprehensionExpr': {
        const c = kind.value;
        const names = [c.iterVar, c.iterVar2, c.accuVar].filter(n => n);
        // A variable that hides `self` or an item: read it all rather than follow scopes.
        if (names.some(n => n === 'self' || itemVars.includes(n))) {
          whole = true;
          return;
        }
        const range = c.iterRange?.exprKind;
        const overSelf = range?.case === 'identExpr' && range.value.name === 'self' && !c.iterVar2;
        if (overSelf) ranged = true;
        else walk(c.iterRange);
        walk(c.accuInit);
        if (overSelf) itemVars.push(c.iterVar);
        walk(c.loopCondition);
        walk(c.loopStep);
        walk(c.result);
        if (overSelf) itemVars.pop();
        return;
      }
      default:
        whole = true;
    }
  };
  walk(root);
  if (whole || (ranged && selfFields.size > 0)) return undefined;
  return ranged ? { kind: 'items', fields: itemFields } : { kind: 'fields', fields: selfFields };
}

/** How deep {@link toCel} converts: far below any schema's depth. */
const MAX_CEL_DEPTH = 64;

/**
 * Converts a JSON value into the CEL value the API server would bind to `self`: objects become
 * maps, and numbers of `integer` fields become CEL ints (everything else would compare as doubles).
 */
function toCel(value: unknown, schema: JsonSchemaProps | undefined, depth = 0): unknown {
  // Below the schema's deepest level no rule can look, and a hostile object may nest thousands of
  // levels deep: the OpenAPI part reports its wrong types, and CEL sees null there.
  if (depth > MAX_CEL_DEPTH) return null;
  if (Array.isArray(value)) return value.map(v => toCel(v, schema?.items, depth + 1));
  if (value !== null && typeof value === 'object') {
    const map = new Map<string, unknown>();
    for (const [key, v] of Object.entries(value)) {
      map.set(key, toCel(v, schema?.properties?.[key] ?? schema?.additionalProperties, depth + 1));
    }
    return map;
  }
  if (typeof value === 'number' && Number.isInteger(value)
    && (schema?.type === 'integer' || schema?.['x-kubernetes-int-or-string'])) {
    return BigInt(value);
  }
  return value;
}

const isEnumerable = (object: object, field: string) => Object.prototype.propertyIsEnumerable.call(object, field);

/** An object cut down to some of its fields, as {@link toCel} converts it (which takes the own enumerable properties). */
function cutDown(
  object: Record<string, unknown>, schema: JsonSchemaProps, fields: ReadonlyMap<string, boolean>, depth: number,
): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (const field of fields.keys()) {
    if (isEnumerable(object, field)) map.set(field, toCel(object[field], schema.properties?.[field] ?? schema.additionalProperties, depth + 1));
  }
  return map;
}

/**
 * A key that tells apart every two cut-downs of objects a rule could answer differently: per field,
 * absent, undefined, null, present, or its value when the rule reads it and it is a string, boolean
 * or number (else undefined: not remembered, as for a symbol or a function, on which @bufbuild/cel fails).
 */
function cutKey(object: Record<string, unknown>, fields: ReadonlyMap<string, boolean>): string | undefined {
  let key = '';
  for (const [field, valueRead] of fields) {
    const value = object[field];
    // @bufbuild/cel takes a field set to undefined or null as absent: has() tells them apart from other values,
    // and fails on a symbol or a function (no JSON value), which is not remembered.
    const token = !isEnumerable(object, field) ? '-'
      : valueRead || value === undefined || value === null || typeof value === 'symbol' || typeof value === 'function' ? primitiveKey(value) : '+';
    if (token === undefined) return undefined;
    key += `${token},`;
  }
  return key;
}

/** A string, boolean, number or null, told apart from every other such value and from `-` and `+`; else undefined. */
function primitiveKey(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'boolean': return value ? 't' : 'f';
    // Number's text is exact; -0 alone prints as 0.
    case 'number': return Object.is(value, -0) ? '-0' : `${value}`;
    case 'undefined': return 'u';
    default: return value === null ? 'n' : undefined;
  }
}

/**
 * The key of all of a small `self`, for a rule that reads all of it (`size(self)`, a map's keys):
 * its values as {@link primitiveKey} tells them apart, its objects' fields in their order;
 * undefined when it is longer than {@link MAX_KEY_CHARS} or deeper than a few levels.
 */
function wholeKey(value: unknown, depth = 0): string | undefined {
  if (Array.isArray(value)) {
    if (depth > 8 || value.length > MAX_KEY_CHARS) return undefined;
    const keys: string[] = [];
    for (const item of value) {
      const key = wholeKey(item, depth + 1);
      if (key === undefined) return undefined;
      keys.push(key);
    }
    return `[${keys.join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    if (depth > 8) return undefined;
    const keys: string[] = [];
    for (const [field, v] of Object.entries(value)) {
      const key = wholeKey(v, depth + 1);
      if (key === undefined) return undefined;
      keys.push(`${JSON.stringify(field)}:${key}`);
    }
    return `{${keys.join(',')}}`;
  }
  return primitiveKey(value);
}

/**
 * `self` as a rule sees it, cut down to what it reads (made only when the answer is not remembered),
 * and the key of its answer; undefined when the rule reads all of `self`.
 */
function selfFor(value: unknown, schema: JsonSchemaProps, reads: SelfReads | undefined): { cel(): unknown; key: string | undefined } | undefined {
  if (!reads) return undefined;
  const fields = reads.fields;
  if (reads.kind === 'fields') return isObject(value) ? { cel: () => cutDown(value, schema, fields, 0), key: cutKey(value, fields) } : undefined;
  const items = schema.items;
  if (!Array.isArray(value) || !items) return undefined;
  // Every index an object: a hole, which every() would skip, is none.
  for (let i = 0; i < value.length; i++) if (!isObject(value[i])) return undefined;
  let key: string | undefined = '';
  for (const item of value) {
    const itemKey = cutKey(item, fields);
    if (itemKey === undefined) {
      key = undefined;
      break;
    }
    key += `${itemKey}|`;
  }
  return { cel: () => value.map(item => cutDown(item, items, fields, 1)), key };
}

/**
 * The interpreter's answers of rules by the part of `self` they read, for rules and nodes told apart
 * by a number each: most objects repeat what a rule the compiled code leaves to the interpreter reads.
 */
const answers = new ContentMemo<unknown>(4 * 2 ** 20);

/** A key of a cut-down `self` no longer than this is remembered; a longer one is evaluated each time. */
const MAX_KEY_CHARS = 4096;

/** A rule of a schema node: its compiled code when it has one, its program once planned, the number its answers are remembered by. */
interface NodeRule {
  readonly rule: ValidationRule;
  readonly compiled: ((self: unknown) => boolean | undefined) | undefined;
  planned?: PlannedRule;
  readonly number: number;
}

let nextRuleNumber = 0;

const RULES_BELOW = new WeakMap<JsonSchemaProps, boolean>();

/** Whether a schema or any schema below it has a CEL rule; remembered per schema object. */
function hasRules(schema: JsonSchemaProps): boolean {
  let known = RULES_BELOW.get(schema);
  if (known === undefined) {
    // Set first: a schema that refers to itself ends here instead of recursing.
    RULES_BELOW.set(schema, false);
    known = (schema['x-kubernetes-validations']?.length ?? 0) > 0
      || Object.values(schema.properties ?? {}).some(hasRules)
      || (schema.items !== undefined && hasRules(schema.items))
      || (typeof schema.additionalProperties === 'object' && hasRules(schema.additionalProperties));
    RULES_BELOW.set(schema, known);
  }
  return known;
}

/**
 * How to walk a value of a schema node that has rules at or below it: the node's rules, and the
 * children whose schemas have rules, found once per schema node. A value is walked as the API
 * server's validation walks it, only where a rule can be: every rule of a node, then its items in
 * order, or its fields in the order of the object's keys.
 */
interface NodePlan {
  readonly schema: JsonSchemaProps;
  readonly rules: readonly NodeRule[];
  /** The plan of the items, when they have rules. */
  items?: NodePlan;
  /** The fields of `properties` whose schemas have rules, when no other field of a value can lead to a rule. */
  fields?: readonly { readonly name: string; readonly plan: NodePlan }[];
  /** Whether `additionalProperties` has rules: then each key of a value finds its schema as it is walked. */
  byKey: boolean;
}

const PLANS = new WeakMap<JsonSchemaProps, NodePlan>();

/** The plan of a schema node that has rules at or below it, made once. */
function planOf(schema: JsonSchemaProps): NodePlan {
  let plan = PLANS.get(schema);
  if (!plan) {
    const additional = schema.additionalProperties;
    const made: NodePlan = {
      schema,
      rules: (schema['x-kubernetes-validations'] ?? []).map(rule => ({ rule, compiled: compiledRule(rule.rule), number: nextRuleNumber++ })),
      byKey: typeof additional === 'object' && hasRules(additional),
    };
    // Set first: a schema that refers to itself finds its plan.
    PLANS.set(schema, made);
    if (schema.items && hasRules(schema.items)) made.items = planOf(schema.items);
    // A key of a value that is not a field of `properties` finds `additionalProperties`, which has no
    // rule, or what the prototype of `properties` has under that name (Object.prototype's members), no schema with rules.
    if (!made.byKey) {
      made.fields = Object.entries(schema.properties ?? {}).filter(([, child]) => hasRules(child)).map(([name, child]) => ({ name, plan: planOf(child) }));
    }
    plan = made;
  }
  return plan;
}

function matchesType(value: unknown, schema: JsonSchemaProps): boolean {
  switch (schema.type) {
    case 'object': return isObject(value);
    case 'array': return Array.isArray(value);
    case 'string': return typeof value === 'string';
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number';
    case 'boolean': return typeof value === 'boolean';
    default: return true;
  }
}

/** `self` whole, as CEL sees it and as its answers are remembered by, made for the first rule of a node that needs it. */
interface WholeSelf {
  cel?: unknown;
  key?: string | null;
}

/** The interpreter's answer to a rule on a value: its program's result, remembered by the part of `self` it reads. */
function interpret(nodeRule: NodeRule, value: unknown, schema: JsonSchemaProps, whole: WholeSelf): unknown {
  const { program, reads } = nodeRule.planned ??= planRule(nodeRule.rule.rule);
  const cut = selfFor(value, schema, reads);
  const selfKey = cut ? cut.key : (whole.key === undefined ? (whole.key = wholeKey(value) ?? null) : whole.key) ?? undefined;
  const key = selfKey !== undefined && selfKey.length <= MAX_KEY_CHARS ? `${nodeRule.number}\n${selfKey}` : undefined;
  // A rule's answer is never undefined: one look-up tells a remembered answer.
  let result = key === undefined ? undefined : answers.get(key);
  if (result === undefined) {
    _celWork.evaluations++;
    result = program({ self: cut ? cut.cel() : (whole.cel ??= toCel(value, schema)) });
    if (key !== undefined) answers.set(key, result);
  }
  return result;
}

/** The CEL rules of one schema, checked once: each parses (or was compiled from its parse when the package was built). */
export class CelRules {
  private readonly plan: NodePlan | undefined;

  /** @throws if one of the schema's rules does not parse */
  public constructor(schema: JsonSchemaProps) {
    forEachRule(schema, rule => {
      // A compiled rule parsed when the package was built; it is planned when its code is not sure.
      if (mode !== 'compiled' || !compiledRule(rule.rule)) planRule(rule.rule);
    });
    this.plan = hasRules(schema) ? planOf(schema) : undefined;
  }

  /** Adds the violations of the schema's rules by a value (of the whole schema) to `out`, in the order of the walk. */
  public evaluate(value: unknown, out: RuleViolation[]): void {
    if (!this.plan) return;
    // A walk that threw (a compiled rule that disagrees, in compare mode) may have left keys behind.
    walkDepth = 0;
    walk(value, this.plan, out);
  }
}

/**
 * The keys from the root of the walk to the value it is at: its path is written only for a violation
 * (as `childPath` writes it), not for every value walked, most of which have none.
 */
const walkKeys: Array<string | number> = [];
/** How many of {@link walkKeys} are the path: the list itself only grows, so setting a key allocates nothing. */
let walkDepth = 0;

/** The path of the value the walk is at, as `childPath` writes it key by key from the root. */
function walkPath(): string {
  let at = '';
  for (let i = 0; i < walkDepth; i++) at = childPath(at, walkKeys[i]);
  return at;
}

/**
 * Adds the violations of a node's rules and of those below it: its rules in order, then its items or
 * fields (most of an object is never walked). The value's path is {@link walkKeys}.
 */
function walk(value: unknown, plan: NodePlan, out: RuleViolation[]): void {
  const schema = plan.schema;
  if (value === undefined || value === null || !matchesType(value, schema)) return;
  const rules = plan.rules;
  let whole: WholeSelf | undefined;
  let at: string | undefined;
  for (let i = 0; i < rules.length; i++) {
    const nodeRule = rules[i];
    const answer = mode !== 'interpret' && nodeRule.compiled ? nodeRule.compiled(value) : undefined;
    if (answer !== undefined) {
      _celWork.compiledEvaluations++;
      if (mode !== 'compare') {
        if (!answer) out.push(failure(nodeRule.rule, value, schema, at ??= walkPath()));
        continue;
      }
    }
    const result = interpret(nodeRule, value, schema, whole ??= {});
    const error = celRuntime().module.isCelError(result);
    if (answer !== undefined && (error || answer !== (result === true))) {
      throw new Error(`the compiled CEL rule ${JSON.stringify(nodeRule.rule.rule)} answers ${answer} where @bufbuild/cel answers ${
        error ? `with the error ${(result as Error).message}` : String(result)} on ${showJson(value)}`);
    }
    if (error) {
      out.push({ path: at ??= walkPath(), rule: nodeRule.rule.rule, message: `Invalid value: rule ${JSON.stringify(nodeRule.rule.rule)} could not be evaluated: ${(result as Error).message}` });
    } else if (result !== true) {
      out.push(failure(nodeRule.rule, value, schema, at ??= walkPath()));
    }
  }
  if (Array.isArray(value)) {
    const items = plan.items;
    // As forEach: a hole is no item.
    if (items) {
      const depth = walkDepth++;
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) continue;
        walkKeys[depth] = i;
        walk(value[i], items, out);
      }
      walkDepth = depth;
    }
    return;
  }
  if (typeof value !== 'object') return;
  const object = value as Record<string, unknown>;
  const fields = plan.fields;
  const depth = walkDepth++;
  if (!fields) {
    for (const key of Object.keys(object)) {
      const child = schema.properties?.[key] ?? schema.additionalProperties;
      if (!child || !hasRules(child)) continue;
      walkKeys[depth] = key;
      walk(object[key], planOf(child), out);
    }
    walkDepth = depth;
    return;
  }
  // The fields in the order of the schema, each field's violations kept apart, then put in the order of the object's keys.
  let found: { name: string; start: number; end: number }[] | undefined;
  for (let i = 0; i < fields.length; i++) {
    const { name, plan: child } = fields[i];
    const field = object[name];
    // A field the object does not have as its own, enumerable, is no key of it.
    if (field === undefined || field === null || !isEnumerable(object, name)) continue;
    const start = out.length;
    walkKeys[depth] = name;
    walk(field, child, out);
    if (out.length > start) (found ??= []).push({ name, start, end: out.length });
  }
  walkDepth = depth;
  if (found && found.length > 1) {
    const keys = Object.keys(object);
    const from = found[0].start;
    const parts = found.map(f => out.slice(f.start, f.end));
    const order = found.map((f, i) => ({ i, at: keys.indexOf(f.name) })).sort((a, b) => a.at - b.at);
    out.length = from;
    for (const { i } of order) out.push(...parts[i]);
  }
}

/** The violation of a rule that gave false (or any value but true). */
function failure(rule: ValidationRule, value: unknown, schema: JsonSchemaProps, at: string): RuleViolation {
  return { path: at, rule: rule.rule, message: `Invalid value: ${JSON.stringify(typeof value === 'object' ? schema.type : value)}: ${rule.message}` };
}

function forEachRule(schema: JsonSchemaProps, fn: (rule: ValidationRule) => void): void {
  for (const rule of schema['x-kubernetes-validations'] ?? []) fn(rule);
  for (const child of Object.values(schema.properties ?? {})) forEachRule(child, fn);
  if (schema.items) forEachRule(schema.items, fn);
  if (schema.additionalProperties) forEachRule(schema.additionalProperties, fn);
}
