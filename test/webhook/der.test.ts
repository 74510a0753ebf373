/**
 * The DER encoder and reader behind the self-managed certificates, against encodings from X.690
 * and RFC 5280.
 */
import * as fc from 'fast-check';
import {
  DerError, boolean, explicit, implicitPrimitive, namedBitString, nullValue, objectIdentifier, octetString, readChildren, readElement,
  readObjectIdentifier, readSingle, sequence, setOf, smallInteger, tlv, unsignedInteger, utf8String, x509Time,
} from '../../src/webhook/_der';

const hex = (bytes: Buffer) => bytes.toString('hex');

describe('lengths', () => {
  test.each([
    [0, '0400'],
    [127, `047f${'00'.repeat(127)}`],
    [128, `048180${'00'.repeat(128)}`],
    [255, `0481ff${'00'.repeat(255)}`],
    [256, `04820100${'00'.repeat(256)}`],
    [65536, `0483010000${'00'.repeat(65536)}`],
  ])('writes a length of %i in its shortest form', (length, expected) => {
    expect(hex(octetString(Buffer.alloc(length)))).toBe(expected);
  });

  test('throws for a multi-byte tag', () => {
    expect(() => tlv(0x1f, Buffer.alloc(0))).toThrow('Only single-byte DER tags are supported, not 31');
  });
});

describe('INTEGER', () => {
  test.each([
    ['', '020100'],
    ['00', '020100'],
    ['0000', '020100'],
    ['7f', '02017f'],
    ['80', '02020080'],
    ['000080', '02020080'],
    ['0001', '020101'],
    ['ff00', '020300ff00'],
  ])('writes the bytes %j as a minimal, non-negative INTEGER', (bytes, expected) => {
    expect(hex(unsignedInteger(Buffer.from(bytes, 'hex')))).toBe(expected);
  });

  test.each([[0, '020100'], [2, '020102'], [127, '02017f'], [128, '02020080'], [256, '02020100']])('writes %i', (value, expected) => {
    expect(hex(smallInteger(value))).toBe(expected);
  });

  test('throws for a negative number', () => {
    expect(() => smallInteger(-1)).toThrow('smallInteger takes a non-negative safe integer, not -1');
  });

  test('keeps the value of any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), bytes => {
      const element = readSingle(unsignedInteger(Buffer.from(bytes)));
      expect(element.tag).toBe(0x02);
      // Positive, and minimal: no leading 0x00 unless the next bit is set.
      expect(element.content[0] & 0x80).toBe(0);
      if (element.content.length > 1 && element.content[0] === 0) expect(element.content[1] & 0x80).toBe(0x80);
      const value = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
      expect(value(element.content)).toBe(value(bytes));
    }), { numRuns: 200 });
  });
});

describe('OBJECT IDENTIFIER', () => {
  test.each([
    ['2.5.4.3', '0603550403'],
    ['2.5.29.19', '0603551d13'],
    ['1.2.840.113549.1.1.11', '06092a864886f70d01010b'],
    ['1.2.840.10045.4.3.2', '06082a8648ce3d040302'],
    ['1.3.6.1.5.5.7.3.1', '06082b06010505070301'],
    // X.690 8.19.5: {2 999 3}.
    ['2.999.3', '0603883703'],
  ])('writes %s', (dotted, expected) => {
    expect(hex(objectIdentifier(dotted))).toBe(expected);
    expect(readObjectIdentifier(readSingle(objectIdentifier(dotted)))).toBe(dotted);
  });

  test.each(['', '1', '3.1', '1.40', '1.2.', '1.02', 'a.b'])('throws for %j', dotted => {
    expect(() => objectIdentifier(dotted)).toThrow(/^Not an object identifier/);
  });

  test('reads back any identifier it writes', () => {
    const arc = fc.bigInt({ min: 0n, max: 2n ** 70n });
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 }), fc.bigInt({ min: 0n, max: 39n }), fc.array(arc, { maxLength: 6 }), (first, second, rest) => {
      const dotted = [first, second, ...rest].join('.');
      expect(readObjectIdentifier(readSingle(objectIdentifier(dotted)))).toBe(dotted);
    }), { numRuns: 200 });
  });
});

describe('named BIT STRING', () => {
  test.each([
    [[], '030100'],
    [[0], '03020780'],
    [[0, 2], '030205a0'],
    // A CA's keyUsage: digitalSignature, keyCertSign, cRLSign.
    [[0, 5, 6], '03020186'],
    [[7], '03020001'],
    [[8], '0303070080'],
  ])('writes the bits %j without trailing zero bits', (bits, expected) => {
    expect(hex(namedBitString(bits))).toBe(expected);
  });
});

describe('Time', () => {
  test.each([
    ['1950-01-01T00:00:00Z', '170d3530303130313030303030305a'],
    ['2049-12-31T23:59:59Z', `170d${Buffer.from('491231235959Z').toString('hex')}`],
    ['2050-01-01T00:00:00Z', `180f${Buffer.from('20500101000000Z').toString('hex')}`],
    ['2027-03-01T12:00:00.999Z', `170d${Buffer.from('270301120000Z').toString('hex')}`],
  ])('writes %s as RFC 5280 says', (date, expected) => {
    expect(hex(x509Time(new Date(date)))).toBe(expected);
  });

  test('throws for a year before 1950, after 9999, or an invalid date', () => {
    expect(() => x509Time(new Date('1949-12-31T23:59:59Z'))).toThrow('An X.509 time must be in the years 1950 to 9999, not 1949');
    expect(() => x509Time(new Date('+010000-01-01T00:00:00Z'))).toThrow('not 10000');
    expect(() => x509Time(new Date('nonsense'))).toThrow('An X.509 time needs a valid date');
  });
});

describe('other types', () => {
  test('writes BOOLEAN, NULL, UTF8String, explicit and implicit tags', () => {
    expect(hex(boolean(true))).toBe('0101ff');
    expect(hex(boolean(false))).toBe('010100');
    expect(hex(nullValue())).toBe('0500');
    expect(hex(utf8String('ü'))).toBe('0c02c3bc');
    expect(hex(explicit(0, smallInteger(2)))).toBe('a003020102');
    expect(hex(implicitPrimitive(2, Buffer.from('a')))).toBe('820161');
  });

  test('sorts the elements of a SET OF', () => {
    expect(hex(setOf(smallInteger(2), smallInteger(1)))).toBe('3106020101020102');
  });
});

describe('the reader', () => {
  test('reads a structure back', () => {
    const der = sequence(smallInteger(1), sequence(octetString(Buffer.from('x'))), nullValue());
    const [one, inner, nothing] = readChildren(readSingle(der));
    expect([one.tag, hex(one.content)]).toEqual([0x02, '01']);
    expect(readChildren(inner).map(e => e.content.toString())).toEqual(['x']);
    expect(nothing.encoded).toEqual(nullValue());
  });

  test.each([
    ['a truncated header', '30', /^truncated DER at offset 0$/],
    ['a truncated content', '300301', /runs past the end/],
    ['an indefinite length', '30800000', /indefinite lengths are not DER/],
    ['a long length that fits the short form', '04817f', /not in its shortest form/],
    ['a long length with a leading zero', '0482008000', /not in its shortest form/],
    ['a length of five octets', '04850100000000', /too long/],
    ['a multi-byte tag', '1f0100', /multi-byte DER tags/],
  ])('throws for %s', (_what, bytes, message) => {
    expect(() => readElement(Buffer.from(bytes, 'hex'))).toThrow(DerError);
    expect(() => readElement(Buffer.from(bytes, 'hex'))).toThrow(message);
  });

  test('throws for bytes after the element, and for children of a primitive', () => {
    expect(() => readSingle(Buffer.from('050000', 'hex'))).toThrow('1 octets after the element');
    expect(() => readChildren(readSingle(nullValue()))).toThrow('tag 0x5 is not constructed');
    expect(() => readObjectIdentifier(readSingle(Buffer.from('060186', 'hex')))).toThrow('an object identifier ends inside an arc');
  });
});
