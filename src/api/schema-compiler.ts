/**
 * Compiles CRD schemas with ajv at run time, for schemas that are not known when the package is
 * built (upstream's CRDs in tests, a schema of your own). The schemas of this package are compiled
 * ahead of time into `src/_generated/` by `scripts/compile-validators.ts`, with the same options,
 * so that synth, `validate` and the webhook never load ajv's compiler.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { JsonSchemaProps } from './schema';
import { SchemaCheck, SchemaValidator } from './validator';

/** The options of ajv for CRD schemas: every error, with the data and schema of each (for messages). */
export const AJV_OPTIONS = { allErrors: true, strict: false, verbose: true } as const;

/**
 * Turns a CRD schema into the JSON Schema ajv checks: unknown fields are errors (as with
 * `kubectl apply`'s strict field validation) and the `x-kubernetes-*` extensions are dropped.
 */
export function toAjvSchema(node: JsonSchemaProps): object {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'description' || key === 'default') continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, JsonSchemaProps>)
        .map(([name, child]) => [name, toAjvSchema(child)]));
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = toAjvSchema(value as JsonSchemaProps);
    } else if (key === 'anyOf') {
      out.anyOf = (value as JsonSchemaProps[]).map(toAjvSchema);
    } else {
      out[key] = value;
    }
  }
  if (node.properties && !node.additionalProperties) out.additionalProperties = false;
  return out;
}

/** The ajv instance for CRD schemas, with the formats the API server knows. */
export function crdAjv(options: { readonly source?: boolean } = {}): Ajv {
  const ajv = new Ajv({ ...AJV_OPTIONS, ...(options.source ? { code: { source: true, esm: false, lines: true } } : {}) });
  addFormats(ajv);
  return ajv;
}

/**
 * Compiles a structural schema's OpenAPI part and its CEL rules, now.
 *
 * @param schema the `openAPIV3Schema` of a CRD version
 * @throws if the schema does not compile, or one of its CEL rules does not parse
 */
export function compileSchemaValidator(schema: JsonSchemaProps): SchemaValidator {
  return new SchemaValidator(schema, crdAjv().compile(toAjvSchema(schema)) as SchemaCheck);
}
