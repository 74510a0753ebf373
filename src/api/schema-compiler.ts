/**
 * Compiles CRD schemas with ajv at run time, for schemas that are not known when the package is
 * built (upstream's CRDs in tests, a schema of your own). The schemas of this package are compiled
 * ahead of time into `src/api/_generated/` by `scripts/compile-validators.ts`, with the same options,
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

/**
 * Moves every subschema that occurs more than once (and is not tiny) into `$defs`, referred to by
 * `$ref`: compiled with `inlineRefs: false`, ajv then generates its check once. Schemas that embed
 * the same Kubernetes type in several places (1.13.0's Function: its security contexts in `spec`
 * and in `status`) compile to half the code. The check accepts exactly what the input schema does.
 *
 * @param schema a JSON Schema from {@link toAjvSchema}
 * @param minChars the smallest subschema, as JSON, worth sharing
 */
export function withSharedDefinitions(schema: object, minChars = 200): object {
  type Node = Record<string, unknown>;
  const children = (node: Node): Node[] => [
    ...Object.values((node.properties as Record<string, Node> | undefined) ?? {}),
    ...(['items', 'additionalProperties'] as const).map(k => node[k]).filter((c): c is Node => typeof c === 'object' && c !== null),
    ...((node.anyOf as Node[] | undefined) ?? []),
  ];
  const counts = new Map<string, number>();
  const count = (node: Node) => {
    const text = JSON.stringify(node);
    if (text.length >= minChars) counts.set(text, (counts.get(text) ?? 0) + 1);
    children(node).forEach(count);
  };
  children(schema as Node).forEach(count);
  const names = new Map([...counts].filter(([, n]) => n > 1).map(([text], i) => [text, `shared${i}`]));
  const share = (node: Node, root = false): Node => {
    const name = names.get(JSON.stringify(node));
    if (name && !root) return { $ref: `#/$defs/${name}` };
    const out: Node = { ...node };
    if (node.properties) out.properties = Object.fromEntries(Object.entries(node.properties as Record<string, Node>).map(([k, c]) => [k, share(c)]));
    for (const key of ['items', 'additionalProperties'] as const) if (typeof node[key] === 'object' && node[key] !== null) out[key] = share(node[key] as Node);
    if (node.anyOf) out.anyOf = (node.anyOf as Node[]).map(c => share(c));
    return out;
  };
  if (!names.size) return schema;
  return { ...share(schema as Node, true), $defs: Object.fromEntries([...names].map(([text, name]) => [name, share(JSON.parse(text), true)])) };
}

/** The ajv instance for CRD schemas, with the formats the API server knows. */
export function crdAjv(options: { readonly source?: boolean; readonly inlineRefs?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    ...AJV_OPTIONS,
    ...(options.source ? { code: { source: true, esm: false, lines: true } } : {}),
    ...(options.inlineRefs === false ? { inlineRefs: false } : {}),
  });
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
