/**
 * The reader of the YAML synth writes (src/policy/_written-yaml.ts) gives what js-yaml gives with
 * the core schema, or leaves the text to js-yaml: on generated data written by our writer and by
 * cdk8s's, on that text cut and changed at random, and on every manifest in dist/.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Yaml } from 'cdk8s';
import * as fc from 'fast-check';
import * as jsYaml from 'js-yaml';
import * as YAML from 'yaml';
import { stringifyYamlDocuments } from '../../src/_yaml';
import { manifestFiles, parseManifests, readManifestFile } from '../../src/policy/_manifest-files';
import { readWrittenYaml } from '../../src/policy/_written-yaml';
import { yamlArbitraries } from '../util/yaml-arbitraries';

/**
 * Asserts two values equal as node's `isDeepStrictEqual` sees it (prototypes, -0 and 0 apart, NaN
 * equal to itself); Jest's toStrictEqual shows the difference. (Jest alone tells apart two equal maps
 * whose key `constructor` is NaN.)
 */
function expectSame(actual: unknown, expected: unknown): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual).toStrictEqual(expected);
}

/** What js-yaml reads, or the error it throws. */
function jsYamlRead(text: string): unknown {
  try {
    return jsYaml.loadAll(text, undefined, { schema: jsYaml.CORE_SCHEMA });
  } catch (e) {
    return e;
  }
}

/** Pieces of strings that exercise the scalar styles: indicators, core-schema look-alikes, line breaks, escapes. */
const PIECES = [
  'a', 'Z', 'web', 'app.kubernetes.io/name', '0', '7', '12', '-', '?', ':', ': ', ' :', '#', ' #', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>',
  '\'', '"', '%', '@', '`', ' ', '  ', '\t', '\n', '\n\n', ' \n', '\n ', '\r', '\\', '/', '.', '_', '+', 'e', 'E', '0x', '0b', '0o', 'x1F',
  'yes', 'true', 'False', 'TRUE', 'null', 'Null', 'NULL', '~', '<<', '---', '...', '--- ', '.inf', '-.Inf', '.nan', '.NaN', '1e3', '1.5', '.5', '012',
  '1_000', '0o17', '0x_1', '1:20', '2001-12-14', '__proto__', 'constructor', 'toString', 'é', '日本', '\u{1F600}', '\x00', '\x07', '\x1b', '\x7f',
  '\x85', '\u00a0', '\u2028', '\ud800', '\udc00', '\ufeff',
];
const { piece, document } = yamlArbitraries(PIECES);
const documents = fc.array(document, { minLength: 1, maxLength: 3 });

/** Manifest-like data: the words and numbers of real manifests, multi-line handlers, no odd characters. */
const word = fc.constantFrom('apiVersion', 'kind', 'metadata', 'name', 'namespace', 'labels', 'spec', 'env', 'value', 'fn-1', 'team-a', 'nodejs22',
  'app.kubernetes.io/name', 'http://example.com:8080/path', ':8080', 'a b c', '-Xmx', '"quoted"', 'it\'s', '3', '-2', '0.5', 'true', 'null', '');
// Not starting with a space, which the writer marks with an indentation indicator (`|2`), left to js-yaml.
const handler = fc.tuple(
  fc.constantFrom('exports.main = () => 1;', 'def main(event, context):', '\tindented'),
  fc.array(fc.constantFrom('exports.main = () => 1;', '  return "a: b # c";', 'def main(event, context):', '', '\tindented', '    '), { maxLength: 5 }),
  fc.constantFrom('', '\n', '\n\n'),
).map(([first, rest, end]) => [first, ...rest].join('\n') + end)
  // Nor ending in spaces after its last line break, which the writer quotes.
  .filter(t => !/\n[\t ]+$/.test(t));
const { manifestValue } = fc.letrec<{ manifestValue: unknown }>(tie => ({
  manifestValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word, handler, fc.integer(), fc.boolean(), fc.constant(null),
    fc.array(tie('manifestValue'), { maxLength: 4 }),
    fc.dictionary(word, tie('manifestValue'), { maxKeys: 5 }),
  ),
}));
const manifests = fc.array(fc.dictionary(word, manifestValue, { minKeys: 1, maxKeys: 6 }), { minLength: 1, maxLength: 3 });

describe('readWrittenYaml', () => {
  test('gives what js-yaml gives, or leaves the text to it, for any JSON documents as our writer and cdk8s\'s write them', () => {
    let read = 0;
    fc.assert(fc.property(documents, docs => {
      for (const written of [stringifyYamlDocuments(docs), Yaml.stringify(...docs)]) {
        if (written === undefined) continue;
        const ours = readWrittenYaml(written, () => jsYaml);
        if (ours === undefined) continue;
        read++;
        expectSame(ours, jsYamlRead(written));
      }
    }), { numRuns: 500 });
    // Many of them, odd characters and all, need no js-yaml (about 175 of the 1,000 texts).
    expect(read).toBeGreaterThan(75);
  });

  test('reads every manifest-like text it is given, as js-yaml does', () => {
    fc.assert(fc.property(manifests, docs => {
      const written = stringifyYamlDocuments(docs)!;
      const ours = readWrittenYaml(written, () => jsYaml);
      expect(ours).toBeDefined();
      expectSame(ours, jsYamlRead(written));
    }), { numRuns: 500 });
  });

  test('gives what js-yaml gives, or leaves the text to it, when the text is cut and changed at random', () => {
    const edit = fc.record({ at: fc.nat(), cut: fc.nat({ max: 6 }), insert: fc.oneof(piece, fc.constantFrom('\n  ', '\n- ', '\n---\n', ' ', '  ', ': ', '- ')) });
    let read = 0;
    fc.assert(fc.property(fc.oneof(documents, manifests), fc.array(edit, { minLength: 1, maxLength: 3 }), (docs, edits) => {
      let written = stringifyYamlDocuments(docs)!;
      for (const { at, cut, insert } of edits) {
        const i = at % (written.length + 1);
        written = written.slice(0, i) + insert + written.slice(i + cut);
      }
      const ours = readWrittenYaml(written, () => jsYaml);
      if (ours === undefined) return;
      read++;
      expectSame(ours, jsYamlRead(written));
    }), { numRuns: 1000 });
    // About 300 of them still read.
    expect(read).toBeGreaterThan(100);
  });

  test('reads every manifest in dist/ without js-yaml, as js-yaml does', () => {
    const files = manifestFiles(path.join(__dirname, '..', '..', 'dist'), true);
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) {
      const written = fs.readFileSync(file, 'utf8');
      expectSame({ file, documents: readWrittenYaml(written, () => jsYaml) }, { file, documents: jsYamlRead(written) });
    }
  });

  test.each([
    ['a comment', 'a: 1 # one\n'],
    ['a comment line', '# head\na: 1\n'],
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a flow map', 'a: {b: 1}\n'],
    ['a flow list', 'a: [1, 2]\n'],
    ['a folded block', 'a: >\n  b\n  c\n'],
    ['a block with an indentation indicator', 'a: |2\n   b\n'],
    ['a block header of two pipes', 'a: ||\n  b\n'],
    ['a block header with a keep indicator and more', 'a: |+-\n  b\n'],
    ['a multi-line plain scalar', 'a: b\n  c\n'],
    ['a double-quoted scalar over two lines', 'a: "b\n  c"\n'],
    ['a double-quoted scalar with a YAML escape', 'a: "\\x41"\n'],
    ['an explicit key', '? a\n: 1\n'],
    ['a key twice', 'a: 1\na: 2\n'],
    ['the key __proto__', '__proto__: 1\n'],
    ['a key that is a number', '1: a\n'],
    ['a tab', 'a:\tb\n'],
    ['CRLF line ends', 'a: 1\r\nb: 2\r\n'],
    ['a byte order mark', '\ufeffa: 1\n'],
    ['no line break at the end', 'a: 1'],
    ['an empty text', ''],
    ['an empty document', 'a: 1\n---\n---\nb: 2\n'],
    ['a document that starts with ---', '---\na: 1\n'],
    ['a document end marker', 'a: 1\n...\n'],
    ['a directive', '%YAML 1.2\n---\na: 1\n'],
    ['an empty line', 'a: 1\n\nb: 2\n'],
    ['a list at the indentation of its key', 'a:\n- 1\n'],
    ['a key without a value', 'a:\nb: 1\n'],
    ['a non-printable character', 'a: "\x07"\n'],
    ['a scalar document', 'a\n'],
    ['nesting 60 levels deep', Array.from({ length: 60 }, (_, i) => `${'  '.repeat(i)}k:\n`).join('') + `${'  '.repeat(60)}v: 1\n`],
  ])('leaves %s to js-yaml, and parseManifests reads it as before', (_, written) => {
    expect(readWrittenYaml(written, () => jsYaml)).toBeUndefined();
    const expected = jsYamlRead(written);
    // What js-yaml reads, or, when it refuses the text, what the yaml package tells of each document.
    expect(parseManifests(written)).toStrictEqual(expected instanceof Error
      ? YAML.parseAllDocuments(written).map(d => (d.errors.length ? { error: d.errors[0].message } : { object: d.toJS() }))
      : (expected as unknown[]).map(object => ({ object })));
  });

  test.each([
    ['a literal block that keeps its trailing line breaks', { a: 'x\ny\n\n\n', b: 1 }],
    ['a literal block without a final line break', { a: 'x\ny' }],
    ['a literal block with indented and blank lines', { a: 'x\n\n  y\n\tz\n' }],
    ['a list of maps in lists', { a: [[{ b: [1, { c: 'd' }] }], []], e: {} }],
  ])('reads %s as js-yaml does', (_, doc) => {
    const written = `${Yaml.stringify(doc)}---\n${Yaml.stringify({ after: 'x' })}`;
    const ours = readWrittenYaml(written, () => jsYaml);
    expect(ours).toBeDefined();
    expectSame(ours, jsYamlRead(written));
  });

  test('reads plain scalars by the core schema\'s types, as js-yaml does', () => {
    const plain = ['0x1F', '0o17', '0b11', '1_000', '012', '.inf', '-.Inf', '.nan', 'TRUE', 'True', 'yes', 'Null', '~', '+1', '-0', '1e3', '1.5e-3', '.5', '1.',
      '2001-12-14', '1:20', '-a', ':8080', '?x', 'a:b', 'a#b', 'é', '[a'.slice(1)];
    const written = `a:\n${plain.map(p => `  - ${p}\n`).join('')}${plain.map((p, i) => `k${i}: ${p}\n`).join('')}`;
    const ours = readWrittenYaml(written, () => jsYaml) as [{ a: unknown[] }];
    expectSame(ours, jsYamlRead(written));
    expect(ours[0].a.slice(0, 4)).toEqual([31, 15, 3, '1_000']);
  });

  test('reads plain scalars made of the characters of numbers, null and the booleans as js-yaml does', () => {
    // Digits, signs, points, exponents, prefixes, the letters of .inf and .nan, and some that no number holds.
    const scalar = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'0123456789+-._eExXobBaAfFiInNlLsStTrRuUm~'), minLength: 1, maxLength: 24 }),
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 20 }),
      fc.constantFrom('0', '00', '007', '-0', '+0', '0.', '.0', '1e3', '1E+3', '.inf', '+.INF', '.NaN', 'null', 'Null', 'NULL', 'nULL', 'true',
        'True', 'TRUE', 'tRUE', 'false', 'FALSE', '~', '~~', '999999999999999', '9999999999999999', '123456789012345678901234567890', '0x', '0b',
        '0o', '0xfF', '0b102', '0o78', '1__0', '_1', '800m', '1024Mi', '0.5', '1.5Gi', '1.11.1', '0.1', '00.5', '1.', '.5', '1.2.3e4', '12e34', '1e', '1b',
        '00b1', '0b', '6225eb9d6470ec183f1a1a4a2a2c60557aeecbb3faba4c2ed47923e448ce5161', '4949e5235894', '1234567890123456789012345678.9', '1_0.5',
        '-ec', '-e', '+a', '-x1', '-_1', '+_', '-.5', '+.inf', '-.e', '--1', '+-1', '-'),
    );
    let read = 0;
    fc.assert(fc.property(fc.array(scalar, { minLength: 1, maxLength: 6 }), plain => {
      const written = `a:\n${plain.map(p => `  - ${p}\n`).join('')}${plain.map((p, i) => `k${i}: ${p}\n`).join('')}`;
      const ours = readWrittenYaml(written, () => jsYaml);
      if (ours === undefined) return;
      read++;
      expectSame(ours, jsYamlRead(written));
    }), { numRuns: 1000 });
    expect(read).toBeGreaterThan(500);
  });

  test('reads a file as its UTF-8 text, telling printable ASCII as the reader itself tells it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'manifest-file-'));
    try {
      const file = path.join(dir, 'a.yaml');
      const bytes = fc.oneof(
        fc.array(piece, { maxLength: 12 }).map(parts => Buffer.from(`a: ${parts.join('')}\n`, 'utf8')),
        fc.uint8Array({ maxLength: 40 }).map(b => Buffer.from(b)),
      );
      fc.assert(fc.property(bytes, content => {
        fs.writeFileSync(file, content);
        const { text, printableAscii } = readManifestFile(file);
        expect(text).toBe(fs.readFileSync(file, 'utf8'));
        expect(printableAscii).toBe(/^[\n\x20-\x7e]*$/.test(text));
        // Either way the same documents, or the same error (the yaml package throws on some texts, such as an alias without an anchor).
        const attempt = (read: () => unknown) => {
          try {
            return read();
          } catch (e) {
            return (e as Error).message;
          }
        };
        expectSame(attempt(() => parseManifests(text, printableAscii)), attempt(() => parseManifests(text)));
      }), { numRuns: 500 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('needs js-yaml only for a plain scalar that may be a number it does not read itself', () => {
    let asked = 0;
    const lazily = () => {
      asked++;
      return jsYaml;
    };
    const words = 'a:\n  b: nodejs22\n  c: 800m\n  d: 3\n  e: "0.5"\n  f: true\n  g: null\n  h: ~\n  i: 1024Mi\n  j: -Xmx\n  o: -ec\n  p: +b1\n  k: |\n    1.5\n'
      + '  l: 0.1\n  m: 1.11.1\n  n: 6225eb9d6470ec183f1a1a4a2a2c60557aeecbb3faba4c2ed47923e448ce5161\n';
    expectSame(readWrittenYaml(words, lazily), jsYamlRead(words));
    expect(asked).toBe(0);
    for (const plain of ['1e3', '0x1F', '-3', '.inf', '1.5e-3', '012', '9999999999999999']) {
      const written = `a: ${plain}\n`;
      expectSame(readWrittenYaml(written, lazily), jsYamlRead(written));
    }
    expect(asked).toBe(7);
  });
});
