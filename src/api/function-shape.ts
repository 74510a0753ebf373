/**
 * How large a Function may be as a JSON value: how deep it nests and how many values it holds.
 *
 * Every Function check walks the object (the schema, the CEL rules, defaulting, the comparison of
 * an update), most of them recursively, and each value costs work: a hostile object of a few MiB
 * of tiny items, or one nested thousands of levels deep, would cost the webhook seconds or its
 * stack. No Function comes near these limits (its schema nests about 8 levels, a large one holds a
 * few hundred values: its source is one string), so they are checked first, without recursion, by
 * synth, `validate` and the webhook alike.
 */
import { FUNCTION_KIND } from './function-schema';

/** The limits of {@link functionShapeProblem}. */
export const FUNCTION_SHAPE_LIMITS = {
  /** How deep a Function may nest: its schema goes about 8 levels down. */
  maxDepth: 64,
  /** JSON values (objects, lists, strings, numbers...) a Function may hold. */
  maxValues: 20_000,
} as const;

/** The size of a JSON value, as {@link shapeOf} counts it. */
export interface JsonShape {
  /** How deep it nests: 1 for a scalar or an empty object. */
  readonly depth: number;
  /** How many values it holds, itself included. */
  readonly values: number;
}

/**
 * How deep a JSON value nests and how many values it holds, counted without recursion (a hostile
 * value may nest thousands of levels, past the stack of any recursive walk); stops counting as
 * soon as either passes its limit.
 *
 * @param value any JSON value
 * @param limits where to stop counting
 * @returns the depth and values counted
 */
export function shapeOf(value: unknown, limits: { readonly maxDepth: number; readonly maxValues: number } = FUNCTION_SHAPE_LIMITS): JsonShape {
  return countInOrder(value, limits);
}

/**
 * How many more values a value may hold within both limits once it is counted (at `depthLeft` levels
 * above the deepest allowed), or -1 as soon as it passes either: a recursive walk, whose depth the
 * limit bounds, with nothing kept but the count. Within the limits every walk visits every value
 * that {@link countInOrder} visits (own enumerable keys, holes as values), so they agree on whether a
 * value is within them; past a limit, which one a walk passes first depends on its order, which
 * {@link countInOrder} keeps.
 */
function valuesLeft(item: unknown, depthLeft: number, left: number): number {
  if (--left < 0 || depthLeft < 0) return -1;
  if (typeof item !== 'object' || item === null) return left;
  // A scalar child, most of the values, is counted here rather than by a call: the call's first two checks, a level down.
  if (Array.isArray(item)) {
    for (let i = 0; i < item.length && left >= 0; i++) {
      const child: unknown = item[i];
      if (typeof child !== 'object' || child === null) {
        if (--left < 0 || depthLeft < 1) return -1;
      } else {
        left = valuesLeft(child, depthLeft - 1, left);
      }
    }
    return left;
  }
  for (const key in item) {
    if (!Object.prototype.hasOwnProperty.call(item, key)) continue;
    const child = (item as { [key: string]: unknown })[key];
    if (typeof child !== 'object' || child === null) {
      if (--left < 0 || depthLeft < 1) return -1;
    } else {
      left = valuesLeft(child, depthLeft - 1, left);
      if (left < 0) return -1;
    }
  }
  return left;
}

/** {@link shapeOf} walked in the order whose stop it gives: a stack of the values still to count, the last child first. */
function countInOrder(value: unknown, limits: { readonly maxDepth: number; readonly maxValues: number }): JsonShape {
  let depth = 0;
  let values = 0;
  // The values still to count and their levels, side by side: a pair per value would be garbage to collect.
  const items: unknown[] = [value];
  const levels: number[] = [1];
  while (items.length) {
    const item = items.pop();
    const level = levels.pop()!;
    values++;
    if (level > depth) depth = level;
    if (depth > limits.maxDepth || values > limits.maxValues) break;
    if (typeof item !== 'object' || item === null) continue;
    // The children in their order, counted last first, as a stack takes them.
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) {
        items.push(item[i]);
        levels.push(level + 1);
      }
    } else {
      // What Object.values gives, without the list: own enumerable keys, in their order.
      for (const key in item) {
        if (Object.prototype.hasOwnProperty.call(item, key)) {
          items.push((item as { [key: string]: unknown })[key]);
          levels.push(level + 1);
        }
      }
    }
  }
  return { depth, values };
}

/**
 * Why a value is too large to be a Function (rule `functionShape`), in words for the one who wrote it.
 *
 * @param value a Function as JSON
 * @returns the problem, or undefined when the value is within {@link FUNCTION_SHAPE_LIMITS}
 */
export function functionShapeProblem(value: unknown): string | undefined {
  // Most values are within the limits: that needs no counts kept.
  if (valuesLeft(value, FUNCTION_SHAPE_LIMITS.maxDepth - 1, FUNCTION_SHAPE_LIMITS.maxValues) >= 0) return undefined;
  const shape = countInOrder(value, FUNCTION_SHAPE_LIMITS);
  if (shape.depth > FUNCTION_SHAPE_LIMITS.maxDepth) {
    return `nests more than ${FUNCTION_SHAPE_LIMITS.maxDepth} levels deep; a ${FUNCTION_KIND} nests about 8, so this is no ${FUNCTION_KIND}: remove the nested values`;
  }
  if (shape.values > FUNCTION_SHAPE_LIMITS.maxValues) {
    return `holds more than ${FUNCTION_SHAPE_LIMITS.maxValues} values (fields, list items); a ${FUNCTION_KIND} holds a few hundred: keep the environment, labels and annotations to what the ${FUNCTION_KIND} needs`;
  }
  return undefined;
}
