/**
 * Generated YAML data for the property tests of our YAML writer (test/gitops/yaml.test.ts) and of
 * the reader of what it writes (test/policy/written-yaml.test.ts): strings built from pieces that
 * exercise the scalar styles, numbers at their edges, and nested maps and lists of them.
 */
import * as fc from 'fast-check';
import { binaryString } from './binary-string';

/** Strings, numbers, values and documents made from the given pieces of strings. */
export function yamlArbitraries(pieces: readonly string[]) {
  const piece = fc.constantFrom(...pieces);
  const text = fc.oneof(
    { weight: 4, arbitrary: fc.array(piece, { maxLength: 8 }).map(parts => parts.join('')) },
    { weight: 1, arbitrary: binaryString({ maxLength: 12 }) },
    // Long ones: double-quoted strings of 40 characters and more write their line breaks as such.
    { weight: 1, arbitrary: fc.array(piece, { minLength: 10, maxLength: 40 }).map(parts => parts.join('')) },
  );
  const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e21, 1e-7, 0.1, NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER + 2));
  const { value } = fc.letrec<{ value: unknown }>(tie => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text, number, fc.boolean(), fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(text, tie('value'), { maxKeys: 4 }),
    ),
  }));
  const document = fc.oneof(fc.dictionary(text, value, { maxKeys: 6 }), fc.array(value, { maxLength: 4 }));
  return { piece, text, number, value, document };
}
