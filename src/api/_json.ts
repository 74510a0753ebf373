/**
 * Helpers for JSON of unknown shape: telling objects apart, finding where two differ, naming the
 * path of a field, and showing any value in a message, whatever it is (deep, circular, or without a
 * string form).
 */
import { isDeepStrictEqual } from 'node:util';

/** Whether a value is a JSON object: not null, not an array. */
export function isObject<V = unknown>(value: unknown): value is { [key: string]: V } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON of a value for an error message; `"object"` or `"array"` (as the API server writes
 * them) when it cannot be written (too deep, circular), and its type when it is no JSON at all.
 */
export function showJson(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {
    // Too deep, circular, or a BigInt: described by its type below.
  }
  return JSON.stringify(Array.isArray(value) ? 'array' : typeof value);
}

/**
 * The paths of the leaves in which two JSON values differ, each as its list of keys; lists are
 * compared whole, and so is a value that is an object on one side only.
 */
export function changedPaths(before: unknown, after: unknown, at: readonly string[] = []): string[][] {
  if (isDeepStrictEqual(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    return [...new Set([...Object.keys(before), ...Object.keys(after)])].sort().flatMap(key => changedPaths(before[key], after[key], [...at, key]));
  }
  return [[...at]];
}

/** A value as a plain string: itself when a string, else its JSON (see {@link showJson}). */
export function showValue(value: unknown): string {
  return typeof value === 'string' ? value : showJson(value);
}

/** The path of a field or an item below `path`, as violations name it: `spec.env[0].name`. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}
