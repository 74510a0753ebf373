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
  if (limits.maxDepth <= FAST_MAX_DEPTH && countWithin(value, limits)) return { depth: deepest, values: counted };
  return countInOrder(value, limits);
}

/** The deepest limit {@link countWithin} takes: it recurses once per level. */
const FAST_MAX_DEPTH = 256;

/** What the last {@link countWithin} counted: values, and the deepest level. */
let counted = 0;
let deepest = 0;

/**
 * Whether a value is within both limits, counted with a recursive walk that stops as soon as either
 * is passed. Within them, every walk visits every value, in whatever order, so its counts
 * ({@link counted}, {@link deepest}) are those of {@link countInOrder}, which visits the same values
 * (own enumerable keys, holes as values); past a limit, which value a walk stops at depends on its
 * order, and the caller counts again in that one's.
 */
function countWithin(value: unknown, limits: { readonly maxDepth: number; readonly maxValues: number }): boolean {
  counted = 0;
  deepest = 0;
  return fits(value, 1, limits.maxDepth, limits.maxValues);
}

function fits(item: unknown, level: number, maxDepth: number, maxValues: number): boolean {
  if (++counted > maxValues || level > maxDepth) return false;
  if (level > deepest) deepest = level;
  if (typeof item !== 'object' || item === null) return true;
  if (Array.isArray(item)) {
    for (let i = 0; i < item.length; i++) if (!fits(item[i], level + 1, maxDepth, maxValues)) return false;
    return true;
  }
  for (const key in item) {
    if (Object.prototype.hasOwnProperty.call(item, key) && !fits((item as { [key: string]: unknown })[key], level + 1, maxDepth, maxValues)) return false;
  }
  return true;
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
  if (countWithin(value, FUNCTION_SHAPE_LIMITS)) return undefined;
  const shape = countInOrder(value, FUNCTION_SHAPE_LIMITS);
  if (shape.depth > FUNCTION_SHAPE_LIMITS.maxDepth) {
    return `nests more than ${FUNCTION_SHAPE_LIMITS.maxDepth} levels deep; a ${FUNCTION_KIND} nests about 8, so this is no ${FUNCTION_KIND}: remove the nested values`;
  }
  if (shape.values > FUNCTION_SHAPE_LIMITS.maxValues) {
    return `holds more than ${FUNCTION_SHAPE_LIMITS.maxValues} values (fields, list items); a ${FUNCTION_KIND} holds a few hundred: keep the environment, labels and annotations to what the ${FUNCTION_KIND} needs`;
  }
  return undefined;
}
