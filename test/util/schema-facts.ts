/**
 * "Facts" of a CRD schema: every field path with its type, enum, bounds, default and CEL rules,
 * and nothing else (no descriptions). Two schemas with the same facts accept the same objects.
 *
 * Paths: `spec.env[]` is an item of a list, `spec.labels{}` a value of a map.
 */
import { JsonSchemaProps } from '../../src/api';

/** The facts of one schema node. */
export type NodeFacts = { [keyword: string]: unknown };

/** The facts of a whole schema, by path. */
export type SchemaFacts = { [path: string]: NodeFacts };

const STRUCTURAL_KEYS = new Set(['properties', 'items', 'additionalProperties', 'description']);

/** Lists the facts of every node of a schema. */
export function flattenSchema(schema: JsonSchemaProps, path = '', out: SchemaFacts = {}): SchemaFacts {
  const facts: NodeFacts = {};
  for (const key of Object.keys(schema).sort()) {
    if (STRUCTURAL_KEYS.has(key)) continue;
    const value = (schema as Record<string, unknown>)[key];
    facts[key] = key === 'required' ? [...(value as string[])].sort() : value;
  }
  if (schema.additionalProperties) facts.map = true;
  out[path || '.'] = facts;
  for (const [name, child] of Object.entries(schema.properties ?? {})) flattenSchema(child, path ? `${path}.${name}` : name, out);
  if (schema.items) flattenSchema(schema.items, `${path}[]`, out);
  if (schema.additionalProperties) flattenSchema(schema.additionalProperties, `${path}{}`, out);
  return out;
}

/** Rebuilds a schema from its facts: the inverse of {@link flattenSchema}, without descriptions. */
export function schemaFromFacts(facts: SchemaFacts): JsonSchemaProps {
  const build = (path: string): JsonSchemaProps => {
    const { map, ...own } = facts[path || '.'];
    const node: Record<string, unknown> = { ...own };
    const prefix = path ? `${path}.` : '';
    const children = Object.keys(facts).filter(p => p.startsWith(prefix) && p !== '.' && p !== path
      && /^[^.[{]+$/.test(p.slice(prefix.length)));
    if (children.length) {
      node.properties = Object.fromEntries(children.map(p => [p.slice(prefix.length), build(p)]));
    }
    if (facts[`${path}[]`]) node.items = build(`${path}[]`);
    if (map) node.additionalProperties = build(`${path}{}`);
    return node as JsonSchemaProps;
  };
  return build('');
}
