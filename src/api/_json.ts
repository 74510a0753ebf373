/**
 * Helpers for JSON of unknown shape: telling objects apart, and showing any value in a message,
 * whatever it is (deep, circular, or without a string form).
 */

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

/** A value as a plain string: itself when a string, else its JSON (see {@link showJson}). */
export function showValue(value: unknown): string {
  return typeof value === 'string' ? value : showJson(value);
}
