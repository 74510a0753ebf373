/**
 * A small DER (ASN.1 Distinguished Encoding Rules, ITU-T X.690) encoder and reader: just what
 * writing and reading X.509 certificates needs. Every value is encoded in its one DER form
 * (minimal lengths, minimal INTEGERs, no trailing zero bits in named BIT STRINGs), so the same
 * input always gives the same bytes.
 */

/** Universal and context-specific tags (single-byte, tag numbers below 31). */
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OBJECT_IDENTIFIER: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

const CONSTRUCTED = 0x20;
const CONTEXT = 0x80;

/** The length octets: short form below 128, else the long form with the fewest octets. */
function encodeLength(length: number): Buffer {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`A DER length must be a non-negative integer, not ${length}`);
  if (length < 0x80) return Buffer.from([length]);
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

/** One element: its tag, its length, its content. */
export function tlv(tag: number, content: Buffer): Buffer {
  if (!Number.isInteger(tag) || tag < 0 || tag > 0xff || (tag & 0x1f) === 0x1f) throw new RangeError(`Only single-byte DER tags are supported, not ${tag}`);
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

/** A SEQUENCE of already encoded elements. */
export function sequence(...elements: readonly Buffer[]): Buffer {
  return tlv(TAG.SEQUENCE, Buffer.concat(elements));
}

/** A SET OF already encoded elements, sorted by their encodings as DER requires. */
export function setOf(...elements: readonly Buffer[]): Buffer {
  return tlv(TAG.SET, Buffer.concat([...elements].sort(Buffer.compare)));
}

/**
 * A non-negative INTEGER from its big-endian bytes: leading zero octets dropped, and one zero
 * octet put in front when the first bit is set, so that it does not read as negative.
 */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.length ? bytes.subarray(start) : Buffer.from([0]);
  return tlv(TAG.INTEGER, trimmed[0] & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** A small non-negative INTEGER. */
export function smallInteger(value: number): Buffer {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`smallInteger takes a non-negative safe integer, not ${value}`);
  const octets: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return unsignedInteger(Buffer.from(octets));
}

/** A BOOLEAN: 0xff for true, as DER requires. */
export function boolean(value: boolean): Buffer {
  return tlv(TAG.BOOLEAN, Buffer.from([value ? 0xff : 0x00]));
}

/** NULL. */
export function nullValue(): Buffer {
  return tlv(TAG.NULL, Buffer.alloc(0));
}

/** An OBJECT IDENTIFIER from its dotted form, such as `2.5.29.19`. */
export function objectIdentifier(dotted: string): Buffer {
  if (!/^[0-2](\.(0|[1-9]\d*))+$/.test(dotted)) throw new RangeError(`Not an object identifier: ${JSON.stringify(dotted)}`);
  const arcs = dotted.split('.').map(BigInt);
  if (arcs[0] < 2n && arcs[1] > 39n) throw new RangeError(`Not an object identifier: ${dotted} (the second arc must be below 40)`);
  const octets: number[] = [];
  for (const arc of [arcs[0] * 40n + arcs[1], ...arcs.slice(2)]) {
    // Base 128, most significant group first, the high bit set on every octet but the last.
    const groups: number[] = [Number(arc & 0x7fn)];
    for (let rest = arc >> 7n; rest > 0n; rest >>= 7n) groups.unshift(Number(rest & 0x7fn) | 0x80);
    octets.push(...groups);
  }
  return tlv(TAG.OBJECT_IDENTIFIER, Buffer.from(octets));
}

/** An OCTET STRING. */
export function octetString(bytes: Buffer): Buffer {
  return tlv(TAG.OCTET_STRING, bytes);
}

/** A BIT STRING of whole octets (a key, a signature): no unused bits. */
export function bitString(bytes: Buffer): Buffer {
  return tlv(TAG.BIT_STRING, Buffer.concat([Buffer.from([0]), bytes]));
}

/**
 * A named BIT STRING (such as KeyUsage) with the given bits set, bit 0 being the first. DER drops
 * trailing zero bits, so its length and unused-bit count follow from the highest bit set.
 */
export function namedBitString(bits: readonly number[]): Buffer {
  if (bits.some(bit => !Number.isInteger(bit) || bit < 0)) throw new RangeError(`Bit numbers must be non-negative integers: ${bits.join(', ')}`);
  if (!bits.length) return tlv(TAG.BIT_STRING, Buffer.from([0]));
  const highest = Math.max(...bits);
  const octets = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) octets[Math.floor(bit / 8)] |= 0x80 >> (bit % 8);
  const unused = 7 - (highest % 8);
  return tlv(TAG.BIT_STRING, Buffer.concat([Buffer.from([unused]), octets]));
}

/** A UTF8String. */
export function utf8String(text: string): Buffer {
  return tlv(TAG.UTF8_STRING, Buffer.from(text, 'utf8'));
}

/** The content of an IA5String (ASCII), with a clear error for other characters. */
export function ia5Bytes(text: string, what: string): Buffer {
  if (!/^[\x00-\x7f]*$/.test(text)) throw new RangeError(`${what} must be ASCII (an IA5String), not ${JSON.stringify(text)}`);
  return Buffer.from(text, 'ascii');
}

/**
 * An X.509 Time (RFC 5280, 4.1.2.5): UTCTime (`YYMMDDHHMMSSZ`) for years 1950 to 2049,
 * GeneralizedTime (`YYYYMMDDHHMMSSZ`) from 2050 on; seconds, no fractions (they are dropped).
 */
export function x509Time(date: Date): Buffer {
  const time = date.getTime();
  if (!Number.isFinite(time)) throw new RangeError('An X.509 time needs a valid date');
  const year = date.getUTCFullYear();
  if (year < 1950 || year > 9999) throw new RangeError(`An X.509 time must be in the years 1950 to 9999, not ${year}`);
  const two = (n: number) => String(n).padStart(2, '0');
  const rest = `${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}Z`;
  return year < 2050
    ? tlv(TAG.UTC_TIME, Buffer.from(`${two(year % 100)}${rest}`, 'ascii'))
    : tlv(TAG.GENERALIZED_TIME, Buffer.from(`${year}${rest}`, 'ascii'));
}

/** `[n] EXPLICIT`: a constructed context-specific element around one encoded element. */
export function explicit(tagNumber: number, element: Buffer): Buffer {
  return tlv(CONTEXT | CONSTRUCTED | tagNumber, element);
}

/** `[n] IMPLICIT` of a primitive type: the content under a context-specific tag. */
export function implicitPrimitive(tagNumber: number, content: Buffer): Buffer {
  return tlv(CONTEXT | tagNumber, content);
}

/** One element read from DER. */
export interface DerElement {
  /** The tag byte. */
  readonly tag: number;
  /** The content octets. */
  readonly content: Buffer;
  /** The whole element: tag, length and content. */
  readonly encoded: Buffer;
}

/** Thrown when bytes are not the DER this reader understands. */
export class DerError extends Error {}

/**
 * Reads the element at `offset`.
 *
 * @throws DerError when it is cut short, uses an indefinite or non-minimal length, or a multi-byte tag
 */
export function readElement(bytes: Buffer, offset = 0): DerElement {
  if (offset + 2 > bytes.length) throw new DerError(`truncated DER at offset ${offset}`);
  const tag = bytes[offset];
  if ((tag & 0x1f) === 0x1f) throw new DerError(`multi-byte DER tags are not supported (offset ${offset})`);
  let length = bytes[offset + 1];
  let header = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0) throw new DerError(`indefinite lengths are not DER (offset ${offset})`);
    if (count > 4) throw new DerError(`a length of ${count} octets is too long (offset ${offset})`);
    if (offset + 2 + count > bytes.length) throw new DerError(`truncated DER at offset ${offset}`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[offset + 2 + i];
    if (length < 0x80 || bytes[offset + 2] === 0) throw new DerError(`a length not in its shortest form is not DER (offset ${offset})`);
    header += count;
  }
  const end = offset + header + length;
  if (end > bytes.length) throw new DerError(`an element of ${length} octets runs past the end (offset ${offset})`);
  return { tag, content: bytes.subarray(offset + header, end), encoded: bytes.subarray(offset, end) };
}

/** The elements inside a constructed element (a SEQUENCE, a SET, an explicit tag). */
export function readChildren(element: DerElement): DerElement[] {
  if (!(element.tag & CONSTRUCTED)) throw new DerError(`tag 0x${element.tag.toString(16)} is not constructed`);
  const children: DerElement[] = [];
  for (let offset = 0; offset < element.content.length;) {
    const child = readElement(element.content, offset);
    children.push(child);
    offset += child.encoded.length;
  }
  return children;
}

/** Reads a whole buffer as exactly one element. */
export function readSingle(bytes: Buffer): DerElement {
  const element = readElement(bytes);
  if (element.encoded.length !== bytes.length) throw new DerError(`${bytes.length - element.encoded.length} octets after the element`);
  return element;
}

/** The dotted form of an OBJECT IDENTIFIER element. */
export function readObjectIdentifier(element: DerElement): string {
  if (element.tag !== TAG.OBJECT_IDENTIFIER || !element.content.length) throw new DerError('not an object identifier');
  const arcs: bigint[] = [];
  let value = 0n;
  for (const octet of element.content) {
    value = (value << 7n) | BigInt(octet & 0x7f);
    if (!(octet & 0x80)) {
      arcs.push(value);
      value = 0n;
    }
  }
  if (element.content[element.content.length - 1] & 0x80) throw new DerError('an object identifier ends inside an arc');
  const first = arcs[0] < 80n ? arcs[0] / 40n : 2n;
  return [first, arcs[0] - first * 40n, ...arcs.slice(1)].join('.');
}
