/**
 * What the validating functions of the API share: collecting violations with their rule's hint,
 * and naming the rule of a schema violation.
 */
import { RuleInfo } from './rule-info';
import { ValidationRule } from './schema';
import { SchemaValidator, Violation } from './validator';

const HINTS = new WeakMap<readonly RuleInfo[], Map<string, string>>();

/** The hints of a rules table by rule id, built once per table (a report is made for every object checked). */
function hintsOf(table: readonly RuleInfo[]): Map<string, string> {
  let hints = HINTS.get(table);
  if (!hints) {
    hints = new Map(table.map(r => [r.id, r.hint]));
    HINTS.set(table, hints);
  }
  return hints;
}

/** Collects violations, each with its rule's id and the hint of the rules table. */
export class RuleReport {
  public readonly violations: Violation[] = [];
  /** How many violations were found past {@link maxViolations} and only counted. */
  public omitted = 0;
  private readonly hints: Map<string, string>;

  /**
   * @param table the rules, for their hints
   * @param maxViolations how many violations to keep; the rest are only counted in {@link omitted}
   */
  constructor(table: readonly RuleInfo[], private readonly maxViolations = Infinity) {
    this.hints = hintsOf(table);
  }

  /** Whether the report keeps no more violations: a caller may skip building the next messages. */
  public get full(): boolean {
    return this.violations.length >= this.maxViolations;
  }

  /** Adds a violation of a rule of the table. */
  public add(rule: string, path: string, message: string): void {
    if (this.full) this.omitted++;
    else this.violations.push({ path, message, rule, hint: this.hints.get(rule) });
  }

  /**
   * Replaces each violation that `explanation` gives a better one for by it (another rule of the
   * table, with its hint), in place: the same problem, said with its reason and fix.
   */
  public explain(explanation: (violation: Violation) => { rule: string; path: string; message: string } | undefined): void {
    this.violations.forEach((violation, i) => {
      const better = explanation(violation);
      if (better) this.violations[i] = { ...better, hint: this.hints.get(better.rule) };
    });
  }

  /**
   * Adds the violations of a schema, each named after its rule: `openapi.<keyword>`, or the key
   * of its CEL rule in `celRules`. Two CEL rules may share an expression (such as the
   * reserved-prefix rules of a Function's labels and annotations), so the message tells them apart.
   */
  public addSchemaViolations(validator: SchemaValidator, object: unknown, celRules: { readonly [id: string]: ValidationRule }): void {
    const cel = Object.entries(celRules);
    const { violations, omitted } = validator.validateBounded(object, Math.max(0, this.maxViolations - this.violations.length));
    this.omitted += omitted;
    for (const violation of violations) {
      const candidates = cel.filter(([, rule]) => rule.rule === violation.rule);
      const celId = (candidates.find(([, rule]) => violation.message.endsWith(`: ${rule.message}`)) ?? candidates[0])?.[0];
      const rule = celId ?? violation.rule;
      this.violations.push({ ...violation, rule, hint: rule ? this.hints.get(rule) : undefined });
    }
  }
}

/** A value as JSON, for messages. */
export function text(value: unknown): string {
  return JSON.stringify(value);
}
