/**
 * `npm run validators`: compiles the JSON Schemas of this package with ajv into plain JavaScript
 * (ajv's "standalone" code), one module per schema in the `_generated/` folder of the layer that uses it (`src/api/`, `src/function/`, `src/webhook/`). Synth, `validate` and the
 * webhook then load a ready check instead of loading ajv's compiler and compiling the schema in
 * every process (about 90 ms), and the webhook's bundle holds no compiler.
 *
 * It also compiles the CEL rules of the package's schemas to JavaScript, `src/api/_generated/cel-rules.ts`
 * (scripts/compile-cel.ts), which synth and `validate` run instead of loading the CEL interpreter.
 *
 * The files are generated and committed, like `imports/`; a test fails when one is stale. Without
 * `--write` the script prints what it would write.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv, { Options } from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import { CEL_RULES_FILE, celRulesText, writeCelRules } from './compile-cel';
import { apiRuleSchema } from '../src/api/apirule-schema';
import { functionSchema } from '../src/api/function-schema';
import { ServerlessRelease } from '../src/api/release';
import { crdAjv, toAjvSchema, withSharedDefinitions } from '../src/api/schema-compiler';
import { subscriptionSchema } from '../src/api/subscription-schema';
import { FUNCTION_YAML_SCHEMA } from '../src/function/function-folder';
import { WEBHOOK_CONFIG_SCHEMA } from '../src/webhook/config';

/** The folder of the generated modules of a layer: each sits beside the modules that use it. */
const generatedDir = (layer: 'api' | 'function' | 'webhook') => path.join('src', layer, '_generated');

/** One schema to compile. */
interface CompiledSchema {
  /** The folder of the module: that of the layer whose code uses it. */
  readonly dir: string;
  /** The module's file name in {@link dir}, without `.ts`. */
  readonly file: string;
  /** The name of the function the module exports. */
  readonly exportName: string;
  /** Where the schema comes from, for the module's header. */
  readonly source: string;
  /** The JSON Schema ajv compiles. */
  readonly schema: () => object;
  /** The ajv that compiles it; its options shape the errors, so they are those of the run-time code. */
  readonly ajv: () => Ajv;
}

const withSource = (options: Options) => new Ajv({ ...options, code: { source: true, esm: false, lines: true } });

/** Every schema this package checks with ajv. */
export const COMPILED_SCHEMAS: readonly CompiledSchema[] = [
  {
    dir: generatedDir('api'), file: 'function-schema-check', exportName: 'functionSchemaCheck', source: 'functionSchema() of src/api/function-schema.ts',
    schema: () => toAjvSchema(functionSchema(ServerlessRelease.V1_11_1)), ajv: () => crdAjv({ source: true }),
  },
  {
    dir: generatedDir('api'), file: 'function-schema-1.13.0-check', exportName: 'functionSchemaV1_13_0Check', source: 'functionSchema(ServerlessRelease.V1_13_0) of src/api/function-schema.ts',
    // Its security contexts, in spec and status, compiled once each: the webhook's bundle stays small enough for client-side apply.
    schema: () => withSharedDefinitions(toAjvSchema(functionSchema(ServerlessRelease.V1_13_0)), 100), ajv: () => crdAjv({ source: true, inlineRefs: false }),
  },
  {
    dir: generatedDir('api'), file: 'apirule-schema-check', exportName: 'apiRuleSchemaCheck', source: 'apiRuleSchema() of src/api/apirule-schema.ts',
    schema: () => toAjvSchema(apiRuleSchema()), ajv: () => crdAjv({ source: true }),
  },
  {
    dir: generatedDir('api'), file: 'subscription-schema-check', exportName: 'subscriptionSchemaCheck', source: 'subscriptionSchema() of src/api/subscription-schema.ts',
    schema: () => toAjvSchema(subscriptionSchema()), ajv: () => crdAjv({ source: true }),
  },
  {
    dir: generatedDir('function'), file: 'function-yaml-check', exportName: 'functionYamlCheck', source: 'FUNCTION_YAML_SCHEMA of src/function/function-folder.ts',
    schema: () => FUNCTION_YAML_SCHEMA, ajv: () => withSource({ allErrors: true, strict: false, verbose: true }),
  },
  {
    dir: generatedDir('webhook'), file: 'webhook-config-check', exportName: 'webhookConfigCheck', source: 'WEBHOOK_CONFIG_SCHEMA of src/webhook/config.ts',
    schema: () => WEBHOOK_CONFIG_SCHEMA, ajv: () => withSource({ allErrors: true, strict: true }),
  },
];

/** The path of a generated module, relative to the project. */
export function generatedFile(compiled: CompiledSchema): string {
  return path.join(compiled.dir, `${compiled.file}.ts`);
}

/** The text of one generated module. */
export function compiledSchemaText(compiled: CompiledSchema): string {
  const ajv = compiled.ajv();
  const code = standaloneCode(ajv, ajv.compile(compiled.schema()));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const version = (require('ajv/package.json') as { version: string }).version;
  return `/* eslint-disable */
// @ts-nocheck
// Generated by scripts/compile-validators.ts (\`npm run validators\`) from ${compiled.source}: do not edit.
// Compiled by ajv ${version}.
import type { SchemaCheck } from '${path.posix.relative(compiled.dir.split(path.sep).join('/'), 'src/api/validator')}';

/** The compiled check: \`check(value)\` is true when the value passes, else \`check.errors\` lists every problem. */
export function ${compiled.exportName}(): SchemaCheck {
  const module = { exports: {} as any };
  const exports = module.exports;
${code.trim().split('\n').filter(line => line !== '"use strict";').map(line => (line ? `  ${line}` : line)).join('\n')}
  return module.exports;
}
`;
}

if (require.main === module) {
  const write = process.argv.includes('--write');
  // The CEL rules of the same schemas, compiled to JavaScript (scripts/compile-cel.ts).
  if (write) process.stdout.write(`${CEL_RULES_FILE}: ${writeCelRules(path.join(__dirname, '..')).length} characters\n`);
  else process.stdout.write(celRulesText());
  for (const compiled of COMPILED_SCHEMAS) {
    const text = compiledSchemaText(compiled);
    if (write) {
      const file = path.join(__dirname, '..', generatedFile(compiled));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      process.stdout.write(`${generatedFile(compiled)}: ${text.length} characters\n`);
    } else {
      process.stdout.write(text);
    }
  }
}
