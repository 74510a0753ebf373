/**
 * The OpenAPI v3 schema types of a CustomResourceDefinition, and small builders for them.
 *
 * These are the structural-schema keywords the Kubernetes API server understands, including
 * the `x-kubernetes-*` extensions. The Function schema in `function-schema.ts` is written with
 * these builders, and the CRD, the validator and the tests all read that one schema; so are the
 * schemas of the Kyma resources we emit next to Functions (`apirule-schema.ts`, `subscription-schema.ts`).
 */

/** One CEL rule of a schema node (`x-kubernetes-validations`). */
export interface ValidationRule {
  /** The CEL expression; `self` is the value of the node the rule is on. */
  readonly rule: string;
  /** The message the API server returns when the rule evaluates to false. */
  readonly message: string;
}

/** A node of a structural OpenAPI v3 schema, as `apiextensions.k8s.io/v1` accepts it. */
export interface JsonSchemaProps {
  readonly 'type'?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly 'description'?: string;
  readonly 'format'?: string;
  readonly 'properties'?: { readonly [name: string]: JsonSchemaProps };
  readonly 'required'?: readonly string[];
  readonly 'additionalProperties'?: JsonSchemaProps;
  readonly 'items'?: JsonSchemaProps;
  readonly 'enum'?: readonly string[];
  readonly 'default'?: unknown;
  readonly 'minimum'?: number;
  readonly 'maximum'?: number;
  readonly 'minLength'?: number;
  readonly 'maxLength'?: number;
  readonly 'minItems'?: number;
  readonly 'maxItems'?: number;
  readonly 'pattern'?: string;
  readonly 'anyOf'?: readonly JsonSchemaProps[];
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-validations'?: readonly ValidationRule[];
}

/** Options shared by every builder. */
export interface NodeOptions {
  /** What the field means; shown by `kubectl explain`. */
  readonly description?: string;
  /** CEL rules on this node. */
  readonly validations?: readonly ValidationRule[];
}

/** Options of a string node. */
export interface StringOptions extends NodeOptions {
  readonly enum?: readonly string[];
  readonly minLength?: number;
  readonly maxLength?: number;
  /** A regular expression the whole value must match (anchor it with `^` and `$`). */
  readonly pattern?: string;
  readonly default?: string;
  readonly format?: string;
}

/** Options of an object node. */
export interface ObjectOptions extends NodeOptions {
  /** Fields that must be present. */
  readonly required?: readonly string[];
  /** `x-kubernetes-map-type`. */
  readonly mapType?: 'atomic' | 'granular';
}

/** Options of an array node. */
export interface ArrayOptions extends NodeOptions {
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
  /** The fewest items. */
  readonly minItems?: number;
  /** The most items. */
  readonly maxItems?: number;
}

/** Options of an integer node. */
export interface IntegerOptions extends NodeOptions {
  readonly format?: 'int32' | 'int64';
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}

/** Options of a map node. */
export interface MapOptions extends NodeOptions {
  /** The value the API server stores when the field is absent. */
  readonly default?: { readonly [key: string]: unknown };
}

/** The pattern the API server applies to resource quantities (`100m`, `1Gi`, `0.5`). */
export const QUANTITY_PATTERN = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

function common(options: NodeOptions): JsonSchemaProps {
  return {
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.validations?.length ? { 'x-kubernetes-validations': options.validations } : {}),
  };
}

/** A string. */
export function string(options: StringOptions = {}): JsonSchemaProps {
  return {
    ...(options.default !== undefined ? { default: options.default } : {}),
    ...common(options),
    ...(options.enum ? { enum: options.enum } : {}),
    ...(options.format ? { format: options.format } : {}),
    ...(options.maxLength !== undefined ? { maxLength: options.maxLength } : {}),
    ...(options.minLength !== undefined ? { minLength: options.minLength } : {}),
    ...(options.pattern !== undefined ? { pattern: options.pattern } : {}),
    type: 'string',
  };
}

/** A boolean. */
export function boolean(options: NodeOptions & { readonly default?: boolean } = {}): JsonSchemaProps {
  return { ...(options.default !== undefined ? { default: options.default } : {}), ...common(options), type: 'boolean' };
}

/** An integer. */
export function integer(options: IntegerOptions = {}): JsonSchemaProps {
  return {
    ...(options.default !== undefined ? { default: options.default } : {}),
    ...common(options),
    ...(options.format ? { format: options.format } : {}),
    ...(options.maximum !== undefined ? { maximum: options.maximum } : {}),
    ...(options.minimum !== undefined ? { minimum: options.minimum } : {}),
    type: 'integer',
  };
}

/** An object with known fields. */
export function object(properties: { [name: string]: JsonSchemaProps }, options: ObjectOptions = {}): JsonSchemaProps {
  return {
    ...common(options),
    properties,
    ...(options.required?.length ? { required: options.required } : {}),
    type: 'object',
    ...(options.mapType ? { 'x-kubernetes-map-type': options.mapType } : {}),
  };
}

/** An object whose keys are free and whose values all have one schema (a Go `map[string]T`). */
export function mapOf(values: JsonSchemaProps, options: MapOptions = {}): JsonSchemaProps {
  return {
    additionalProperties: values,
    ...(options.default !== undefined ? { default: options.default } : {}),
    ...common(options),
    type: 'object',
  };
}

/** An object with no declared fields: `metadata`, which the API server validates itself. */
export function opaqueObject(options: NodeOptions = {}): JsonSchemaProps {
  return { ...common(options), type: 'object' };
}

/** An array. */
export function array(items: JsonSchemaProps, options: ArrayOptions = {}): JsonSchemaProps {
  return {
    ...common(options),
    items,
    ...(options.maxItems !== undefined ? { maxItems: options.maxItems } : {}),
    ...(options.minItems !== undefined ? { minItems: options.minItems } : {}),
    type: 'array',
    ...(options.listMapKeys ? { 'x-kubernetes-list-map-keys': options.listMapKeys } : {}),
    ...(options.listType ? { 'x-kubernetes-list-type': options.listType } : {}),
  };
}

/** A resource quantity: an integer or a string such as `500m` or `1Gi`. */
export function quantity(options: NodeOptions & { readonly default?: string } = {}): JsonSchemaProps {
  return {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    ...(options.default !== undefined ? { default: options.default } : {}),
    ...common(options),
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  };
}

/**
 * Orders the keys of every node the way the API server and controller-gen print them
 * (alphabetically), so that the generated CRD reads like any other and diffs stay small.
 */
export function sortSchema(node: JsonSchemaProps): JsonSchemaProps {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(node).sort()) {
    const value = (node as Record<string, unknown>)[key];
    if (key === 'properties') {
      const props: Record<string, JsonSchemaProps> = {};
      for (const name of Object.keys(value as object).sort()) {
        props[name] = sortSchema((value as Record<string, JsonSchemaProps>)[name]);
      }
      out[key] = props;
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = sortSchema(value as JsonSchemaProps);
    } else if (key === 'anyOf') {
      out[key] = (value as JsonSchemaProps[]).map(sortSchema);
    } else {
      out[key] = value;
    }
  }
  return out as JsonSchemaProps;
}
