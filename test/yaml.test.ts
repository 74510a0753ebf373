import { Yaml } from 'cdk8s';
import * as fc from 'fast-check';
import { stringifyYaml, stringifyYamlDocuments } from '../src/_yaml';
import { expectToBe } from './util/expect-many';
import { yamlArbitraries } from './util/yaml-arbitraries';

/** Pieces of strings that exercise every style rule: indicators, YAML 1.1 scalars, line breaks, escapes. */
const PIECES = [
  'a', 'Z', 'web', 'app.kubernetes.io/name', '0', '7', '12', '-', '?', ':', ': ', ' :', '#', ' #', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>',
  '\'', '"', '%', '@', '`', ' ', '  ', '\t', '\n', '\n\n', ' \n', '\n ', '\r', '\\', '/', '.', '_', '+', 'e', 'E', '0x', '0b', '0o', 'x1F',
  'yes', 'No', 'ON', 'off', 'y', 'n', 'true', 'False', 'null', 'Null', '~', '<<', '---', '...', '--- ', '%YAML', '.inf', '-.Inf', '.nan',
  '1e3', '1.5', '.5', '012', '1_000', '1:20', '1:20.5', '2001-12-14', '2001-12-14t21:59:43.10-05:00', '2001-12-14 21:59:43.10 Z',
  'é', '日本', '\u{1F600}', '\x00', '\x07', '\x08', '\x0b', '\x1b', '\x7f', '\x85', '\u00a0', '\u2028', '\u2029', '\ud800', '\udc00',
];

const { text, document } = yamlArbitraries(PIECES);

describe('stringifyYamlDocuments', () => {
  test('writes what cdk8s\'s Yaml.stringify writes, byte for byte, for any JSON documents', () => {
    let written = 0;
    fc.assert(fc.property(fc.array(document, { minLength: 1, maxLength: 3 }), documents => {
      const ours = stringifyYamlDocuments(documents);
      if (ours !== undefined) written++;
      expectToBe(ours ?? Yaml.stringify(...documents), Yaml.stringify(...documents));
    }), { numRuns: 3000 });
    // Plain JSON needs no fallback: every run was written by this writer.
    expect(written).toBe(3000);
  });

  test('writes every string as cdk8s does, as a key and as a value at every depth', () => {
    fc.assert(fc.property(text, s => {
      for (const doc of [{ [s]: s }, [s], { a: { [s]: [s, { [s]: s }] } }, [[s, [s]]]]) {
        expectToBe(stringifyYamlDocuments([doc]), Yaml.stringify(doc));
      }
    }), { numRuns: 3000 });
  });

  test('writes plain, as cdk8s does, the strings of names, paths and words it takes as plain without its full rules', () => {
    const word = fc.stringMatching(/^[A-Za-z](?:[A-Za-z0-9._/ =-]{0,12}[A-Za-z0-9._/=-])?$/);
    const numberLike = fc.tuple(fc.constantFrom('e', 'E', 'e-', 'E-'), fc.stringMatching(/^[0-9]{1,8}$/)).map(([e, digits]) => e + digits);
    // The words YAML 1.1 reads as null or a boolean, and words next to them.
    const yaml11Word = fc.tuple(fc.constantFrom('null', 'Null', 'NULL', 'y', 'Y', 'n', 'N', 'yes', 'Yes', 'YES', 'no', 'No', 'NO', 'true', 'True', 'TRUE',
      'false', 'False', 'FALSE', 'on', 'On', 'ON', 'off', 'Off', 'OFF', 'nULL', 'yES', 'oN', 'oFF', 'tRUE'), fc.constantFrom('', '', 'x', '-', '=', ' a', '0'))
      .map(([w, tail]) => w + tail);
    fc.assert(fc.property(fc.oneof(word, numberLike, yaml11Word), s => {
      for (const doc of [{ [s]: s }, [s], { a: { [s]: [s] } }]) expectToBe(stringifyYamlDocuments([doc]), Yaml.stringify(doc));
    }), { numRuns: 3000 });
  });

  test('writes a line and its line break as cdk8s does, at every depth, whatever its ends (the one-line block the writer makes first)', () => {
    const line = fc.array(fc.constantFrom(...PIECES.filter(p => !p.includes('\n'))), { minLength: 1, maxLength: 6 }).map(pieces => `${pieces.join('')}\n`);
    fc.assert(fc.property(line, s => {
      for (const doc of [{ [s]: s }, [s], { a: { b: [s, { c: s }] } }, [[s, [s]]]]) expectToBe(stringifyYamlDocuments([doc]), Yaml.stringify(doc));
    }), { numRuns: 3000 });
  });

  test('writes whole numbers in decimal digits as cdk8s does, as keys and values (the quoted numbers the writer makes first)', () => {
    const digits = fc.tuple(fc.constantFrom('', '-', '+', '--', '-_'), fc.stringMatching(/^[0-9_]{0,25}$/)).map(([sign, d]) => sign + d);
    fc.assert(fc.property(digits, s => {
      for (const doc of [{ [s]: s }, [s], { a: { [s]: [s, { b: s }] } }]) expectToBe(stringifyYamlDocuments([doc]), Yaml.stringify(doc));
    }), { numRuns: 3000 });
  });

  test('writes an undefined document as an empty line, as cdk8s does', () => {
    expect(stringifyYamlDocuments([undefined, { a: 1 }, undefined])).toBe(Yaml.stringify(undefined, { a: 1 }, undefined));
  });

  test.each([
    ['a scalar document', ['text']],
    ['an undefined value', [{ a: undefined }]],
    ['an object met twice (yaml writes an anchor and an alias)', (() => { const shared = { b: 1 }; return [{ a: shared, c: shared }]; })()],
    ['an object with toJSON', [{ when: new Date(0) }]],
    ['a class instance', [{ a: new (class Point { x = 1; })() }]],
    ['a key of over a thousand characters', [{ ['k'.repeat(1001)]: 1 }]],
    ['a sparse list', [{ a: [1, , 3] }]], // eslint-disable-line no-sparse-arrays
    ['a bigint', [{ a: BigInt(1) }]],
  ])('leaves %s to cdk8s\'s writer', (_, documents) => {
    expect(stringifyYamlDocuments(documents)).toBeUndefined();
  });

  test('keeps a list met twice in two documents, as yaml aliases only within one', () => {
    const shared = ['a'];
    expect(stringifyYamlDocuments([{ a: shared }, { b: shared }])).toBe(Yaml.stringify({ a: shared }, { b: shared }));
  });
});

describe('stringifyYaml', () => {
  test('writes one document as cdk8s\'s Yaml.stringify does, with cdk8s\'s writer for what this one leaves to it', () => {
    fc.assert(fc.property(document, doc => expectToBe(stringifyYaml(doc), Yaml.stringify(doc))), { numRuns: 1000 });
    const shared = { b: 1 };
    for (const doc of [{ logFormat: 'json', logLevel: undefined }, { a: shared, c: shared }, { when: new Date(0) }, 'text', undefined]) {
      expect(stringifyYaml(doc)).toBe(Yaml.stringify(doc));
    }
  });
});
