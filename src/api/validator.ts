/**
 * Validates objects against a structural CRD schema the way the API server does: the OpenAPI
 * part (types, enums, bounds, required and unknown fields) with a check ajv compiled, and every
 * `x-kubernetes-validations` CEL rule with `@bufbuild/cel`.
 *
 * This module never loads ajv's compiler: the checks of our own schemas are compiled when the
 * package is built (`src/api/_generated/`, see `scripts/compile-validators.ts`), and
 * `compileSchemaValidator()` of `./schema-compiler` compiles any other schema at run time.
 */
// Types only: the CEL interpreter loads on first use (see loadCel), so an app that validates
// nothing does not pay for it.
import type * as Cel from '@bufbuild/cel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import type { ErrorObject } from 'ajv';
import { packageRoot } from '../_package-root';
import { showJson } from './_json';
import { ContentMemo } from './_work';
import { JsonSchemaProps, ValidationRule } from './schema';

/** One reason an object is invalid. */
export interface Violation {
  /** Where, as a field path such as `spec.env[0].name` (empty for the object itself). */
  readonly path: string;
  /** What is wrong, in the API server's words where it has them. */
  readonly message: string;
  /**
   * Which rule failed: `openapi.<keyword>` for the OpenAPI part of a schema (`openapi.enum`),
   * the CEL expression for a CEL rule, or the id of a rule of a rules table (see `FUNCTION_RULES`,
   * `APIRULE_RULES`, `SUBSCRIPTION_RULES`).
   */
  readonly rule?: string;
  /** How to fix it, when the message alone does not say. */
  readonly hint?: string;
}

/** Describes one violation as `path: message; hint`, the way every program of this package reports it. */
export function describeViolation(violation: Violation): string {
  const where = violation.path ? `${violation.path}: ` : '';
  return `${where}${violation.message}${violation.hint ? `; ${violation.hint}` : ''}`;
}

/** Formats violations one per line, `path: message`. */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map(v => (v.path ? `${v.path}: ${v.message}` : v.message)).join('\n');
}

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

let cel: { readonly module: CelModule; readonly environment: ReturnType<typeof Cel.celEnv> } | undefined;

/**
 * The CEL interpreter: `lib/cel/cel.js`, one file bundled from the packages (scripts/bundle-cel.ts),
 * compiled with the package's code cache (src/_code-cache.ts) as the bundle of schema classes is,
 * or, in a checkout that has not run `npm run bundle` or a program bundled without it, the packages.
 */
function loadCel(): CelModule {
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
    if (vm.runInThisContext('Map') === Map) {
      try {
        // The code cache's module by its path, not an import: the webhook server's bundle, which
        // never evaluates CEL (see SchemaValidatorOptions.celRules), leaves it out.
        load = (require(path.join(__dirname, '..', '_code-cache')) as typeof import('../_code-cache')).requireBundle;
      } catch {
        // Not beside this module: the bundle compiles without the cache.
      }
    }
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

/**
 * How much CEL work this process did, counted rather than timed (issue 35): rules parsed at run time
 * (none of the package's own: the bundle holds their parse), rules planned (each once) and
 * evaluations (one per distinct part of `self` a rule reads, see {@link selfReads}).
 *
 * @internal
 */
export const _celWork = { parses: 0, plans: 0, evaluations: 0 };

/** A rule's text parsed: from the bundle when it is a rule of the package's schemas, else by the packages' parser. */
function parseRule(module: CelModule, rule: string): CelExpr {
  if (module.parsedRules && Object.prototype.hasOwnProperty.call(module.parsedRules, rule)) return module.parsedRules[rule];
  _celWork.parses++;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const parse = module.parse ?? (require('@bufbuild/cel') as typeof Cel).parse;
  return parse(rule).expr;
}

/** A compiled rule: its program, and what it reads of `self` when that is less than all of it. */
interface CompiledRule {
  readonly program: CelProgram;
  readonly reads: SelfReads | undefined;
}

const compiled = new Map<string, CompiledRule>();

/** Compiles a CEL rule once; throws with the rule's text when it does not parse. */
export function compileRule(rule: string): CelProgram {
  return compileRuleOnce(rule).program;
}

function compileRuleOnce(rule: string): CompiledRule {
  let result = compiled.get(rule);
  if (!result) {
    try {
      const { module, environment } = celRuntime();
      const expr = parseRule(module, rule);
      _celWork.plans++;
      result = { program: module.plan(environment, expr) as unknown as CelProgram, reads: selfReads(expr) };
    } catch (e) {
      throw new Error(`CEL rule does not compile: ${rule}: ${(e as Error).message}`);
    }
    compiled.set(rule, result);
  }
  return result;
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
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
  if (reads.kind === 'fields') return isPlainObject(value) ? { cel: () => cutDown(value, schema, fields, 0), key: cutKey(value, fields) } : undefined;
  const items = schema.items;
  if (!Array.isArray(value) || !items) return undefined;
  // Every index an object: a hole, which every() would skip, is none.
  for (let i = 0; i < value.length; i++) if (!isPlainObject(value[i])) return undefined;
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
 * The answers of rules by the part of `self` they read, for rules and nodes told apart by a number
 * each: most Functions repeat their resources, scaling and env names, so a synth evaluates each once.
 */
const answers = new ContentMemo<unknown>(4 * 2 ** 20);

/** A rule of a schema node, compiled, with the number its answers are remembered by. */
interface NodeRule {
  readonly rule: ValidationRule;
  readonly compiled: CompiledRule;
  readonly number: number;
}

const NODE_RULES = new WeakMap<JsonSchemaProps, readonly NodeRule[]>();
let nextRuleNumber = 0;

/** The rules of a schema node, compiled on the node's first value. */
function nodeRules(schema: JsonSchemaProps): readonly NodeRule[] {
  let rules = NODE_RULES.get(schema);
  if (!rules) {
    rules = (schema['x-kubernetes-validations'] ?? []).map(rule => ({ rule, compiled: compileRuleOnce(rule.rule), number: nextRuleNumber++ }));
    NODE_RULES.set(schema, rules);
  }
  return rules;
}

/** A key of a cut-down `self` no longer than this is remembered; a longer one is evaluated each time. */
const MAX_KEY_CHARS = 4096;

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

function matchesType(value: unknown, schema: JsonSchemaProps): boolean {
  switch (schema.type) {
    case 'object': return value !== null && typeof value === 'object' && !Array.isArray(value);
    case 'array': return Array.isArray(value);
    case 'string': return typeof value === 'string';
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number';
    case 'boolean': return typeof value === 'boolean';
    default: return true;
  }
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/** The types the branches of an anyOf allow, as `integer or string`. */
function describeTypes(error: ErrorObject): string {
  const branches = (error.schema as Array<{ type?: string }> | undefined) ?? [];
  const types = branches.map(b => b.type).filter((t): t is string => typeof t === 'string');
  return types.length ? types.join(' or ') : 'one of the allowed shapes';
}

function describeAjvError(error: ErrorObject): Violation {
  const path = error.instancePath.split('/').slice(1)
    .map(seg => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((p, seg) => childPath(p, /^\d+$/.test(seg) ? Number(seg) : seg), '');
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: childPath(path, String(params.missingProperty)), message: 'Required value' };
    case 'additionalProperties':
      return { path, message: `unknown field "${String(params.additionalProperty)}"` };
    case 'enum':
      return {
        path,
        message: `Unsupported value: ${showJson(error.data)}: supported values: ${(params.allowedValues as string[])
          .map(v => JSON.stringify(v)).join(', ')}`,
      };
    case 'type':
      return { path, message: `Invalid value: ${showJson(error.data)}: must be of type ${String(params.type)}` };
    case 'anyOf':
      return { path, message: `Invalid value: ${showJson(error.data)}: must be of type ${describeTypes(error)}` };
    case 'minimum':
      return { path, message: `Invalid value: ${showJson(error.data)}: should be greater than or equal to ${String(params.limit)}` };
    case 'maximum':
      return { path, message: `Invalid value: ${showJson(error.data)}: should be less than or equal to ${String(params.limit)}` };
    case 'minItems':
      return { path, message: `Invalid value: ${Array.isArray(error.data) ? error.data.length : 0}: should have at least ${String(params.limit)} items` };
    case 'maxItems':
      return { path, message: `Too many: ${Array.isArray(error.data) ? error.data.length : 0}: must have at most ${String(params.limit)} items` };
    case 'minLength':
      return { path, message: `Invalid value: ${showJson(error.data)}: should be at least ${String(params.limit)} chars long` };
    case 'maxLength':
      return { path, message: `Too long: may not be more than ${String(params.limit)} bytes` };
    case 'pattern':
      return { path, message: `Invalid value: ${showJson(error.data)}: should match '${String(params.pattern)}'` };
    default:
      return { path, message: `Invalid value: ${showJson(error.data)}: ${error.message ?? error.keyword}` };
  }
}

/**
 * A check of a schema's OpenAPI part as ajv compiles it, in memory or ahead of time as standalone
 * code: true when the object passes, else {@link SchemaCheck.errors} lists every problem.
 */
export interface SchemaCheck {
  (object: unknown): boolean;
  /** The problems the last call found, with their data and schema (ajv's `verbose`). */
  errors?: ErrorObject[] | null;
}

/** Settings of a {@link SchemaValidator}. */
export interface SchemaValidatorOptions {
  /**
   * Evaluate the schema's CEL rules. A validating admission webhook leaves them out: the API server
   * evaluates a CRD's rules on an object before it calls validating webhooks, so the webhook would
   * only repeat them (and carry a CEL interpreter to do so).
   *
   * @default true
   */
  readonly celRules?: boolean;
}

/** A validator for one structural schema. Build it once, use it many times. */
export class SchemaValidator {
  /**
   * @param schema the `openAPIV3Schema` of a CRD version
   * @param check its OpenAPI part compiled by ajv with `AJV_OPTIONS` of `./schema-compiler`:
   * ahead of time (`src/api/_generated/`) or by `compileSchemaValidator()`
   * @throws if one of the schema's CEL rules does not parse
   */
  constructor(private readonly schema: JsonSchemaProps, private readonly check: SchemaCheck, private readonly options: SchemaValidatorOptions = {}) {
    if (options.celRules ?? true) this.forEachRule(schema, rule => compileRule(rule.rule));
  }

  /**
   * Validates an object. Returns every violation, schema and CEL alike, in a stable order;
   * an empty list means the API server would accept the object.
   */
  public validate(object: unknown): Violation[] {
    return this.validateBounded(object).violations;
  }

  /**
   * Validates an object, keeping at most `maxViolations` violations: the rest are only counted,
   * so that an object with a million small faults costs a count, not a million messages.
   *
   * @param object the object
   * @param maxViolations how many violations to describe
   * @returns the first violations (as {@link validate} orders them) and how many more there are
   */
  public validateBounded(object: unknown, maxViolations = Infinity): { violations: Violation[]; omitted: number } {
    const violations: Violation[] = [];
    let omitted = 0;
    if (!this.check(object)) {
      const seen = new Set<string>();
      for (const error of this.check.errors ?? []) {
        // anyOf reports each branch; the summary line is enough.
        if (error.schemaPath.includes('/anyOf/')) continue;
        if (violations.length >= maxViolations) {
          // Past the cap, counted without being described (duplicates are counted too).
          omitted++;
          continue;
        }
        const violation = { ...describeAjvError(error), rule: `openapi.${error.keyword}` };
        const key = `${violation.path}\n${violation.message}`;
        if (!seen.has(key)) {
          seen.add(key);
          violations.push(violation);
        }
      }
    }
    if (this.options.celRules ?? true) {
      this.evaluateRules(object, this.schema, '', violations);
      if (violations.length > maxViolations) {
        omitted += violations.length - maxViolations;
        violations.length = maxViolations;
      }
    }
    return { violations, omitted };
  }

  private evaluateRules(value: unknown, schema: JsonSchemaProps, path: string, out: Violation[]): void {
    // A subtree whose schema holds no rule cannot fail one: most of a Function (its source, env
    // values, labels' values) is never walked.
    if (!hasRules(schema) || value === undefined || value === null || !matchesType(value, schema)) return;
    let whole: unknown;
    let wholeKeyOf: string | undefined | null = null;
    for (const { rule, compiled: { program, reads }, number } of nodeRules(schema)) {
      const cut = selfFor(value, schema, reads);
      const selfKey = cut ? cut.key : (wholeKeyOf ??= wholeKey(value));
      const key = selfKey !== undefined && selfKey.length <= MAX_KEY_CHARS ? `${number}\n${selfKey}` : undefined;
      // A rule's answer is never undefined: one look-up tells a remembered answer.
      let result = key === undefined ? undefined : answers.get(key);
      if (result === undefined) {
        _celWork.evaluations++;
        result = program({ self: cut ? cut.cel() : (whole ??= toCel(value, schema)) });
        if (key !== undefined) answers.set(key, result);
      }
      if (celRuntime().module.isCelError(result)) {
        out.push({ path, rule: rule.rule, message: `Invalid value: rule ${JSON.stringify(rule.rule)} could not be evaluated: ${result.message}` });
      } else if (result !== true) {
        out.push({ path, rule: rule.rule, message: `Invalid value: ${JSON.stringify(typeof value === 'object' ? schema.type : value)}: ${rule.message}` });
      }
    }
    if (Array.isArray(value)) {
      const items = schema.items;
      if (items && hasRules(items)) value.forEach((item, i) => this.evaluateRules(item, items, childPath(path, i), out));
      return;
    }
    if (typeof value === 'object') {
      for (const key of Object.keys(value as Record<string, unknown>)) {
        const childSchema = schema.properties?.[key] ?? schema.additionalProperties;
        if (childSchema && hasRules(childSchema)) this.evaluateRules((value as Record<string, unknown>)[key], childSchema, childPath(path, key), out);
      }
    }
  }

  private forEachRule(schema: JsonSchemaProps, fn: (rule: ValidationRule) => void): void {
    for (const rule of schema['x-kubernetes-validations'] ?? []) fn(rule);
    for (const child of Object.values(schema.properties ?? {})) this.forEachRule(child, fn);
    if (schema.items) this.forEachRule(schema.items, fn);
    if (schema.additionalProperties) this.forEachRule(schema.additionalProperties, fn);
  }
}
