/**
 * How large a Function may be (src/api/function-shape.ts): `shapeOf` counts what the walk it
 * replaced counted (a stack of value and level pairs, children through `Object.values`), to the
 * value it stops at, so `functionShapeProblem` names the same limit on any value.
 */
import * as fc from 'fast-check';
import { FUNCTION_SHAPE_LIMITS, functionShapeProblem, shapeOf } from '../../src/api/function-shape';

/** The walk `shapeOf` replaced. */
function referenceShapeOf(value: unknown, limits: { readonly maxDepth: number; readonly maxValues: number }): { depth: number; values: number } {
  let depth = 0;
  let values = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [item, level] = stack.pop()!;
    values++;
    if (level > depth) depth = level;
    if (depth > limits.maxDepth || values > limits.maxValues) break;
    if (typeof item !== 'object' || item === null) continue;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, level + 1]);
  }
  return { depth, values };
}

/** A value nested a number of levels deep, in lists and maps by turns. */
function nested(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value, i] : { a: value, b: i };
  return value;
}

describe('shapeOf', () => {
  test('counts as the walk it replaced did, to where it stops, on any JSON value and limits', () => {
    const limits = fc.record({ maxDepth: fc.integer({ min: 0, max: 8 }), maxValues: fc.integer({ min: 0, max: 60 }) });
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), limits, (value, limit) => {
      expect(shapeOf(value, limit)).toEqual(referenceShapeOf(value, limit));
      expect(shapeOf(value)).toEqual(referenceShapeOf(value, FUNCTION_SHAPE_LIMITS));
    }), { numRuns: 2000 });
  });

  test('counts own enumerable values only, as Object.values gives them, holes as values', () => {
    const prototype = { inherited: { a: 1 } };
    const object = Object.create(prototype) as { [key: string]: unknown };
    object.own = [1, 2];
    Object.defineProperty(object, 'hidden', { value: { b: 2 }, enumerable: false });
    object[2] = 'x';
    // eslint-disable-next-line no-sparse-arrays
    const values = [object, [1, , 3], Object.assign(Object.create(null), { a: { b: 1 } })];
    for (const value of values) expect(shapeOf(value)).toEqual(referenceShapeOf(value, FUNCTION_SHAPE_LIMITS));
  });

  test('names the limit the walk it replaced named first, past either', () => {
    const wide = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));
    for (const value of [nested(70, 1), { a: wide(30_000), b: nested(70, 1) }, { a: nested(70, 1), b: wide(30_000) }, wide(25_000)]) {
      const reference = referenceShapeOf(value, FUNCTION_SHAPE_LIMITS);
      expect(shapeOf(value)).toEqual(reference);
      expect(functionShapeProblem(value)).toMatch(reference.depth > FUNCTION_SHAPE_LIMITS.maxDepth ? /^nests more than 64/ : /^holds more than 20000/);
    }
  });
});

describe('functionShapeProblem', () => {
  /** The problem as the walk it replaced named it. */
  const reference = (value: unknown) => {
    const shape = referenceShapeOf(value, FUNCTION_SHAPE_LIMITS);
    return shape.depth > FUNCTION_SHAPE_LIMITS.maxDepth ? 'depth' : shape.values > FUNCTION_SHAPE_LIMITS.maxValues ? 'values' : undefined;
  };
  const named = (problem: string | undefined) => (problem === undefined ? undefined : problem.startsWith('nests more than') ? 'depth' : 'values');
  const limits = FUNCTION_SHAPE_LIMITS;

  test('names what the walk it replaced named, within the limits (answered without it) and around them', () => {
    const part = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.integer({ min: limits.maxDepth - 4, max: limits.maxDepth + 2 }).map(levels => nested(levels, 1)),
      fc.integer({ min: limits.maxValues - 6, max: limits.maxValues + 2 }).map(n => Array.from({ length: n }, () => 0)),
      fc.integer({ min: (limits.maxValues >> 1) - 4, max: (limits.maxValues >> 1) + 2 }).map(n => ({ a: Array.from({ length: n }, (_, i) => i), b: 'x' })),
    );
    fc.assert(fc.property(fc.array(part, { maxLength: 3 }), fc.boolean(), (parts, inList) => {
      const value = inList ? parts : Object.fromEntries(parts.map((p, i) => [`k${i}`, p]));
      expect(named(functionShapeProblem(value))).toEqual(reference(value));
    }), { numRuns: 300 });
  });

  test('counts own enumerable values only, holes as values, within the limits and one past them', () => {
    const wide = (n: number) => Object.assign(Object.create({ inherited: 1 }), Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))) as object;
    // eslint-disable-next-line no-sparse-arrays
    for (const value of [wide(limits.maxValues - 1), wide(limits.maxValues), new Array(limits.maxValues - 1), new Array(limits.maxValues), nested(limits.maxDepth - 1, 1), nested(limits.maxDepth, 1)]) {
      expect(named(functionShapeProblem(value))).toEqual(reference(value));
    }
  });
});
