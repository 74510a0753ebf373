/**
 * Validates objects against a structural CRD schema the way the API server does: the OpenAPI
 * part (types, enums, bounds, required and unknown fields) with a check ajv compiled, and every
 * `x-kubernetes-validations` CEL rule by `./_cel` (compiled to JavaScript when the package is built,
 * or `@bufbuild/cel`).
 *
 * This module never loads ajv's compiler: the checks of our own schemas are compiled when the
 * package is built (`src/api/_generated/`, see `scripts/compile-validators.ts`), and
 * `compileSchemaValidator()` of `./schema-compiler` compiles any other schema at run time.
 */
import * as path from 'node:path';
import type { ErrorObject } from 'ajv';
import { childPath, showJson } from './_json';
import { JsonSchemaProps } from './schema';

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

/**
 * The module that evaluates CEL rules, loaded by its path on the first validator that evaluates them:
 * the webhook server's bundle, which evaluates none (see {@link SchemaValidatorOptions.celRules}),
 * leaves it out, with the rules compiled to JavaScript and the interpreter.
 */
function celModule(): typeof import('./_cel') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path.join(__dirname, '_cel')) as typeof import('./_cel');
}

/** A validator for one structural schema. Build it once, use it many times. */
export class SchemaValidator {
  /** The schema's CEL rules, unless the options leave them out. */
  private readonly celRules: import('./_cel').CelRules | undefined;

  /**
   * @param schema the `openAPIV3Schema` of a CRD version
   * @param check its OpenAPI part compiled by ajv with `AJV_OPTIONS` of `./schema-compiler`:
   * ahead of time (`src/api/_generated/`) or by `compileSchemaValidator()`
   * @throws if one of the schema's CEL rules does not parse
   */
  constructor(schema: JsonSchemaProps, private readonly check: SchemaCheck, options: SchemaValidatorOptions = {}) {
    this.celRules = (options.celRules ?? true) ? new (celModule().CelRules)(schema) : undefined;
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
    if (this.celRules) {
      this.celRules.evaluate(object, violations);
      if (violations.length > maxViolations) {
        omitted += violations.length - maxViolations;
        violations.length = maxViolations;
      }
    }
    return { violations, omitted };
  }
}
