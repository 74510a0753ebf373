/**
 * `@bufbuild/cel` as the tests evaluate CEL rules with it: the packages themselves (not the bundle
 * of lib/cel/cel.js), with the strings extension the API server has, and JSON bound to `self` as
 * the API server binds it.
 */
import type * as Cel from '@bufbuild/cel';
import { JsonSchemaProps } from '../../src/api/schema';

/** The packages, with the strings extension. */
export const cel: typeof Cel & { readonly strings: typeof import('@bufbuild/cel/ext').strings } = {
  ...require('@bufbuild/cel') as typeof Cel, strings: (require('@bufbuild/cel/ext') as typeof import('@bufbuild/cel/ext')).strings,
};

/** The environment the rules run in. */
export const celEnvironment: ReturnType<typeof Cel.celEnv> = cel.celEnv({ funcs: cel.strings });

/** JSON as the API server binds it to `self`: objects as maps, whole numbers of integer fields as ints. */
export function toCel(value: unknown, schema: JsonSchemaProps | undefined): unknown {
  if (Array.isArray(value)) return value.map(v => toCel(v, schema?.items));
  if (value !== null && typeof value === 'object') {
    return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v, schema?.properties?.[k] ?? schema?.additionalProperties)]));
  }
  const integer = schema?.type === 'integer' || schema?.['x-kubernetes-int-or-string'];
  return typeof value === 'number' && Number.isInteger(value) && integer ? BigInt(value) : value;
}
