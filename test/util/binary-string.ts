/**
 * fast-check's `fc.string({ unit: 'binary' })` (strings of any code point but a lone surrogate),
 * built the way fast-check builds that unit, without its start-up cost.
 *
 * fast-check makes the unit `mapToConstant` over the code points 0-0xD7FF and 0xE000-0x10FFFF, in
 * that order, and the first string arbitrary of it reads its known-dangerous strings back through
 * the unit's unmapper, which first builds a Map of all 1,112,064 code points: 1-2.5 s of CPU in
 * every suite that uses it (each suite loads fast-check anew). This unit is the same `nat` over the
 * same indexes with the same mapper, so it generates and shrinks the same strings from the same
 * seed, and its unmapper computes the index instead of looking it up.
 */
import * as fc from 'fast-check';

const SURROGATES = 0xe000 - 0xd800;

/** One code point of the `binary` unit; its index in fast-check's own unit. */
export const binaryChar: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  index => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  value => {
    const codePoint = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (codePoint === undefined || String.fromCodePoint(codePoint) !== value || (codePoint >= 0xd800 && codePoint < 0xe000)) {
      throw new Error('Unknown value encountered cannot be built using this mapToConstant');
    }
    return codePoint < 0xd800 ? codePoint : codePoint - SURROGATES;
  },
);

/** `fc.string({ ...constraints, unit: 'binary' })`. */
export function binaryString(constraints: Omit<fc.StringConstraints, 'unit'> = {}): fc.Arbitrary<string> {
  return fc.string({ ...constraints, unit: binaryChar });
}
