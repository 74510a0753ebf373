/**
 * Bundles the CEL interpreter the Function CRD's rules run on (`@bufbuild/cel` with its strings
 * extension) into one file, `lib/cel/cel.js`, which `src/api/validator.ts` loads instead of the
 * packages when it is there.
 *
 * Why: a synth with any Function evaluates the CRD's CEL rules, and loading `@bufbuild/cel` takes
 * about 130 modules of it and `@bufbuild/protobuf`, one file at a time. The bundle is built from
 * the packages' ES modules, so it holds only what the interpreter uses (100 modules' worth, not
 * every well-known protobuf type), and loads in about a third of the time. The code is the same, at
 * the versions of the lock file, so every rule gives the same answer (a test compares both).
 *
 * The rules of the package's own schemas (Function, APIRule, Subscription) are parsed here, when the
 * package is built, not at run time: the bundle holds each rule's syntax tree as @bufbuild/cel's
 * `parse` gives it (`parsedRules`), and the validator only plans it. Parsing them at run time cost
 * more than anything else of the rules (the parser's first calls run cold), and without the parser
 * the bundle is a quarter smaller. A rule that does not parse fails the build with the validator's
 * message; any other rule (a schema compiled at run time) is parsed by the packages' parser.
 *
 * `npm run bundle` writes it (npm test and npm run synth run that), and `npm run build` before packing.
 */
import * as path from 'node:path';
import type * as Cel from '@bufbuild/cel';
import { buildSync } from 'esbuild';
import { SHIPPED_BUNDLE, bannered, writeBundle } from './_bundle-options';
import { ServerlessRelease, apiRuleSchema, functionSchema, subscriptionSchema } from '../src/api';
import { JsonSchemaProps } from '../src/api/schema';

const root = path.resolve(__dirname, '..');

/** Where the bundle goes: the package ships it (`files` in package.json). */
export const CEL_BUNDLE = path.join(root, 'lib', 'cel', 'cel.js');

/** What the bundle exports of `@bufbuild/cel` and its extension: every name validator.ts uses, the parser aside. */
export const CEL_EXPORTS = { '@bufbuild/cel': ['celEnv', 'isCelError', 'plan'], '@bufbuild/cel/ext': ['strings'] } as const;

/** Every CEL rule of the schemas the package validates with: each release's Function CRD, the APIRule and Subscription ones. */
export function shippedRules(): string[] {
  const rules = new Set<string>();
  const collect = (schema: JsonSchemaProps): void => {
    for (const rule of schema['x-kubernetes-validations'] ?? []) rules.add(rule.rule);
    for (const child of Object.values(schema.properties ?? {})) collect(child);
    if (schema.items) collect(schema.items);
    if (typeof schema.additionalProperties === 'object') collect(schema.additionalProperties);
  };
  for (const release of Object.values(ServerlessRelease)) collect(functionSchema(release));
  collect(apiRuleSchema());
  collect(subscriptionSchema());
  return [...rules].sort();
}

/**
 * A syntax tree as JavaScript source: the plain objects protobuf-es makes messages of, with their
 * int64 fields as BigInt literals. Anything else (bytes, a class) fails the build rather than ship changed.
 */
function literal(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `[${value.map(literal).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    if (Object.getPrototypeOf(value) !== Object.prototype) throw new Error(`cannot write a ${value.constructor.name} of a CEL syntax tree`);
    return `{${Object.entries(value).map(([key, v]) => `${JSON.stringify(key)}:${literal(v)}`).join(',')}}`;
  }
  if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) throw new Error(`cannot write the number ${value} of a CEL syntax tree`);
  return JSON.stringify(value);
}

/** `export const parsedRules = {rule: tree}`: the expression of each shipped rule as @bufbuild/cel parses it. */
function parsedRulesModule(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parse } = require('@bufbuild/cel') as typeof Cel;
  const entries = shippedRules().map(rule => {
    let tree: ReturnType<typeof parse>;
    try {
      tree = parse(rule);
    } catch (e) {
      // The validator's message for a rule that does not compile.
      throw new Error(`CEL rule does not compile: ${rule}: ${(e as Error).message}`);
    }
    return `${JSON.stringify(rule)}:${literal(tree.expr)}`;
  });
  return `export const parsedRules = {${entries.join(',')}};`;
}


/** Builds the bundle in memory. */
export function bundleCel(): string {
  // `export ... from` takes the packages' ES modules, which esbuild can leave unused code out of.
  const entry = [
    ...Object.entries(CEL_EXPORTS).map(([module, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(module)};`),
    parsedRulesModule(),
  ].join('\n');
  const result = buildSync({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'cel-entry.js', loader: 'js' },
    ...SHIPPED_BUNDLE,
  });
  return bannered(result, "The CEL interpreter of cdk8s-kyma-serverless's Function rules", 'scripts/bundle-cel.ts');
}

export function main(): void {
  writeBundle(CEL_BUNDLE, bundleCel());
}

if (require.main === module) main();
