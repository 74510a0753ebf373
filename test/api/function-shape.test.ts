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
