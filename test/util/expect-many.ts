/**
 * Assertions for property tests that make thousands of them. Each `expect()` costs jest about
 * 0.1 ms of CPU before any comparison (an Error for its stack, and every matcher bound to the
 * value): in a loop of 10,000 it is a second. These compare first and call `expect` only when the
 * values differ, so a failure fails with jest's own message, and a pass passes as it would.
 */

/** `expect(actual).toBe(expected)`. */
export function expectToBe<T>(actual: T, expected: T): void {
  if (!Object.is(actual, expected)) expect(actual).toBe(expected);
}
