/**
 * A YAML writer for the manifests synth writes: the same bytes as cdk8s's `Yaml.stringify` (the
 * `yaml` package with `{ keepUndefined: true, lineWidth: 0, version: '1.1' }`, documents joined by
 * `---`), for the plain JSON data that charts resolve to, at a fraction of the cost: it builds no
 * document tree, so 10,000 Functions take about a tenth of the time.
 *
 * It writes maps, lists, strings, numbers, booleans and null. For anything else (a top-level
 * scalar, `undefined`, an object that is not plain JSON, an object met twice, which `yaml` would
 * write as an anchor and alias, a key of more than a thousand characters, which `yaml` would write
 * as an explicit `? key`) it returns `undefined`, and the caller uses cdk8s's writer for that file.
 * The tests compare both writers on generated data and on every manifest this package synthesizes.
 *
 * The style rules, as `yaml` applies them with those options (YAML 1.1, no line folding):
 * - maps and lists in block style, two spaces per level, list items indented under their key;
 *   empty ones in flow style (`{}`, `[]`);
 * - a string plain when it can be read back as the same string, else in quotes: single quotes
 *   when it holds a `"` and no `'`, double quotes otherwise, with escapes;
 * - a value of several lines as a literal block (`|`, `|-` or `|+` after its trailing newlines,
 *   with an indentation indicator when it starts with a space).
 */
import { Yaml } from 'cdk8s';

const INDENT_STEP = '  ';

/** Thrown inside the writer when a value needs the full writer; never escapes this module. */
class Unsupported extends Error {}

/**
 * Plain scalars that YAML 1.1 would read as something else than a string (null, booleans, numbers,
 * times); such strings are quoted. (`yaml` leaves `<<`, the merge key, plain: so does this writer.)
 */
const NOT_A_STRING: readonly RegExp[] = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^(?:Y|y|[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/,
  /^(?:N|n|[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/,
  /^[-+]?0b[0-1_]+$/,
  /^[-+]?0[0-7_]+$/,
  /^[-+]?[0-9][0-9_]*$/,
  /^[-+]?0x[0-9a-fA-F_]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+$/,
  /^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*$/,
  /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+$/,
  /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*$/,
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:t|T|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:[ \t]*(?:Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?$/,
];

/** {@link NOT_A_STRING} as one expression: one test per scalar instead of thirteen (a tenth of the writer's time with 10,000 Functions). */
const ANY_NOT_A_STRING = new RegExp(NOT_A_STRING.map(pattern => `(?:${pattern.source})`).join('|'));

/**
 * Strings written plain for sure, tested with one short expression before the rules below: a
 * letter, then letters, digits, `.`, `_`, `/`, `=`, `-` or spaces, and no space at the end. None
 * holds a character {@link PLAIN_UNSAFE} or {@link NEEDS_ESCAPES} looks for, and the only ones that
 * are {@link NOT_A_STRING} (of those that start with a letter: the words of null and the booleans,
 * and numbers such as `e12345`) are those the lookahead leaves out.
 */
const SURELY_PLAIN = /^(?!(?:[Nn]ull|NULL|[YyNn]|[Yy]es|YES|[Nn]o|NO|[Tt]rue|TRUE|[Ff]alse|FALSE|[Oo]n|ON|[Oo]ff|OFF|[eE]-?[0-9]+)$)[A-Za-z](?:[A-Za-z0-9._/ =-]*[A-Za-z0-9._/=-])?$/;
/** Characters that a plain scalar cannot hold, or not where they stand. */
const PLAIN_UNSAFE = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
/** Characters only a double-quoted scalar can hold: control characters and unpaired surrogates. */
const NEEDS_ESCAPES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u{D800}-\u{DFFF}]/u;
/** A line that a reader would take for a directive or a document marker. */
const DOCUMENT_MARKER = /^(%|---|\.\.\.)/m;
/** Runs of newlines inside the trailing whitespace of a block, but the last. */
const BLOCK_END_NEWLINES = /(^|(?<!\n))\n+(?!\n|$)/g;
/** The escapes YAML has where JSON writes `\u00XX` or `\uXXXX`. */
const YAML_ESCAPES: { readonly [code: string]: string } = {
  '0000': '\\0', '0007': '\\a', '000b': '\\v', '001b': '\\e', '0085': '\\N', '00a0': '\\_', '2028': '\\L', '2029': '\\P',
};
/** The shortest double-quoted JSON whose newlines are written as line breaks rather than `\n`. */
const DOUBLE_QUOTED_MIN_MULTILINE = 40;

/** Where a scalar stands: its indentation, and whether it is a key of a map. */
interface Place {
  readonly indent: string;
  readonly key: boolean;
}

function doubleQuoted(value: string, place: Place): string {
  const json = JSON.stringify(value);
  const indent = place.indent || (DOCUMENT_MARKER.test(value) ? INDENT_STEP : '');
  let out = '';
  let start = 0;
  for (let i = 0; i < json.length; i++) {
    let ch = json[i];
    if (ch === ' ' && json[i + 1] === '\\' && json[i + 2] === 'n') {
      // A space before a line break is escaped, or reading would drop it.
      out += `${json.slice(start, i)}\\ `;
      i += 1;
      start = i;
      ch = '\\';
    }
    if (ch !== '\\') continue;
    const next = json[i + 1];
    if (next === 'u') {
      out += json.slice(start, i);
      const code = json.substr(i + 2, 4);
      out += YAML_ESCAPES[code] ?? (code.startsWith('00') ? `\\x${code.slice(2)}` : json.substr(i, 6));
      i += 5;
      start = i + 1;
    } else if (next === 'n') {
      if (place.key || json[i + 2] === '"' || json.length < DOUBLE_QUOTED_MIN_MULTILINE) {
        i += 1;
      } else {
        // A line break; the first newline of the scalar folds away, so it is written twice.
        out += `${json.slice(start, i)}\n\n`;
        while (json[i + 2] === '\\' && json[i + 3] === 'n' && json[i + 4] !== '"') {
          out += '\n';
          i += 2;
        }
        out += indent;
        // A space at the start of a line is escaped, or reading would drop it.
        if (json[i + 2] === ' ') out += '\\';
        i += 1;
        start = i + 1;
      }
    } else {
      i += 1;
    }
  }
  return start ? out + json.slice(start) : json;
}

function singleQuoted(value: string, place: Place): string {
  if ((place.key && value.includes('\n')) || /[ \t]\n|\n[ \t]/.test(value)) return doubleQuoted(value, place);
  const indent = place.indent || (DOCUMENT_MARKER.test(value) ? INDENT_STEP : '');
  return `'${value.replace(/'/g, '\'\'').replace(/\n+/g, `$&\n${indent}`)}'`;
}

function quoted(value: string, place: Place): string {
  return value.includes('"') && !value.includes('\'') ? singleQuoted(value, place) : doubleQuoted(value, place);
}

function literalBlock(text: string, place: Place): string {
  // One line and its line break, with no whitespace at either end: what the steps below make of it.
  const last = text.length - 1;
  if (last > 0 && text.indexOf('\n') === last) {
    const first = text.charCodeAt(0);
    const beforeEnd = text.charCodeAt(last - 1);
    if (first !== 32 && beforeEnd !== 32 && beforeEnd !== 9) {
      return `|\n${place.indent || (DOCUMENT_MARKER.test(text) ? INDENT_STEP : '')}${text.slice(0, last)}`;
    }
  }
  // A block cannot end in whitespace after its last line break.
  if (/\n[\t ]+$/.test(text)) return quoted(text, place);
  const indent = place.indent || (DOCUMENT_MARKER.test(text) ? INDENT_STEP : '');
  let value = text;
  let endStart = value.length;
  while (endStart > 0 && ['\n', '\t', ' '].includes(value[endStart - 1])) endStart--;
  let end = value.substring(endStart);
  const endNewline = end.indexOf('\n');
  const chomp = endNewline === -1 ? '-' : value === end || endNewline !== end.length - 1 ? '+' : '';
  if (end) {
    value = value.slice(0, -end.length);
    if (end.endsWith('\n')) end = end.slice(0, -1);
    end = end.replace(BLOCK_END_NEWLINES, `$&${indent}`);
  }
  let startsWithSpace = false;
  let startEnd = 0;
  let lastNewline = -1;
  for (; startEnd < value.length; startEnd++) {
    const ch = value[startEnd];
    if (ch === ' ') startsWithSpace = true;
    else if (ch === '\n') lastNewline = startEnd;
    else break;
  }
  let start = value.substring(0, lastNewline < startEnd ? lastNewline + 1 : startEnd);
  if (start) {
    value = value.substring(start.length);
    start = start.replace(/\n+/g, `$&${indent}`);
  }
  const header = (startsWithSpace ? (indent ? '2' : '1') : '') + chomp;
  return `|${header}\n${indent}${start}${value.replace(/\n+/g, `$&${indent}`)}${end}`;
}

/** Whether a string is a whole number in decimal digits, with `-` or not: YAML 1.1 reads it as an integer, so it is written in double quotes. */
function isDecimal(value: string): boolean {
  const length = value.length;
  if (length === 0 || length > 20) return false;
  let i = value.charCodeAt(0) === 45 ? 1 : 0;
  if (i === length) return false;
  for (; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

function scalarString(value: string, place: Place): string {
  if (SURELY_PLAIN.test(value)) return value;
  // What the rules below give such a string (ANY_NOT_A_STRING, then doubleQuoted, which escapes nothing in it).
  if (isDecimal(value)) return `"${value}"`;
  if (NEEDS_ESCAPES.test(value)) return doubleQuoted(value, place);
  const multiline = value.includes('\n');
  if (place.key && multiline) return quoted(value, place);
  if (PLAIN_UNSAFE.test(value)) return place.key || !multiline ? quoted(value, place) : literalBlock(value, place);
  if (multiline) return literalBlock(value, place);
  if (place.key && place.indent === INDENT_STEP && DOCUMENT_MARKER.test(value)) return quoted(value, place);
  if (ANY_NOT_A_STRING.test(value)) return quoted(value, place);
  return value;
}

function scalarNumber(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? '.nan' : value < 0 ? '-.inf' : '.inf';
  return Object.is(value, -0) ? '-0' : JSON.stringify(value);
}

/**
 * Keys written before: the keys of a chart's objects repeat. Only keys whose writing does not
 * depend on where they stand: one line, and no document marker. Bounded: past
 * {@link MAX_REMEMBERED_KEYS} keys it starts again empty. (Values repeat less; remembering them
 * costs as much as it saves.)
 */
const rememberedKeys = new Map<string, string>();
const MAX_REMEMBERED_KEYS = 10_000;
/** The longest key remembered. */
const MAX_REMEMBERED_LENGTH = 100;

/** {@link scalarString} of a key, remembered when its writing does not depend on where it stands. */
function keyScalar(key: string, indent: string): string {
  let written = rememberedKeys.get(key);
  if (written !== undefined) return written;
  written = scalarString(key, { indent, key: true });
  if (key.length <= MAX_REMEMBERED_LENGTH && !key.includes('\n') && !DOCUMENT_MARKER.test(key)) {
    if (rememberedKeys.size >= MAX_REMEMBERED_KEYS) rememberedKeys.clear();
    rememberedKeys.set(key, written);
  }
  return written;
}

/**
 * Whether a value is written as a block map or list (a non-empty one), after its key on a line of
 * its own, rather than on the key's line (a scalar, `{}`, `[]`).
 */
function isBlock(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key)) return true;
  return false;
}

/** What a map or list writes at one depth: its indentation, and the strings between its entries. */
interface Level {
  /** The indentation of the depth: two spaces per level. */
  readonly indent: string;
  /** Where a value written at the depth stands (not a key). */
  readonly value: Place;
  /** Between the entries of a map: a line break and the indentation. */
  readonly mapSeparator: string;
  /** Between the items of a list: a line break, the indentation and `- `. */
  readonly listSeparator: string;
  /** After the key of a block value, which starts on the next line, one level deeper. */
  readonly blockStart: string;
}

/** The {@link Level} of each depth met so far: built once, not concatenated (or allocated) again for every map, list and value. */
const LEVELS: Level[] = [];

function levelAt(depth: number): Level {
  let level = LEVELS[depth];
  if (level === undefined) {
    const indent = INDENT_STEP.repeat(depth);
    level = LEVELS[depth] = {
      indent, value: { indent, key: false }, mapSeparator: `\n${indent}`, listSeparator: `\n${indent}- `, blockStart: `:\n${indent}${INDENT_STEP}`,
    };
  }
  return level;
}

/**
 * Writes the YAML of a value at a depth (its indentation: two spaces per level) into `parts`, which
 * the file joins once (no string built per level or document); a block collection's first line
 * carries no indentation.
 */
function write(value: unknown, depth: number, seen: Set<object>, parts: string[]): void {
  switch (typeof value) {
    case 'string':
      parts.push(scalarString(value, levelAt(depth).value));
      return;
    case 'number':
      parts.push(scalarNumber(value));
      return;
    case 'boolean':
      parts.push(value ? 'true' : 'false');
      return;
    case 'object': {
      if (value === null) {
        parts.push('null');
        return;
      }
      const size = seen.size;
      if (seen.add(value).size === size) throw new Unsupported('an object met twice');
      if (Array.isArray(value)) {
        list(value, depth, seen, parts);
        return;
      }
      const prototype = Object.getPrototypeOf(value);
      if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        throw new Unsupported('an object that is not plain JSON');
      }
      map(value as { [key: string]: unknown }, depth, seen, parts);
      return;
    }
    default:
      throw new Unsupported(`a value of type ${typeof value}`);
  }
}

function list(items: readonly unknown[], depth: number, seen: Set<object>, parts: string[]): void {
  if (!items.length) {
    parts.push('[]');
    return;
  }
  const separator = levelAt(depth).listSeparator;
  for (let i = 0; i < items.length; i++) {
    if (!(i in items)) throw new Unsupported('a sparse list');
    parts.push(i ? separator : '- ');
    write(items[i], depth + 1, seen, parts);
  }
}

function map(object: { [key: string]: unknown }, depth: number, seen: Set<object>, parts: string[]): void {
  // The own keys, in the order `for...in` gives them (the object is plain: no other key is enumerable).
  const keys = Object.keys(object);
  if (!keys.length) {
    parts.push('{}');
    return;
  }
  const { mapSeparator: separator, blockStart } = levelAt(depth);
  const inner = levelAt(depth + 1).indent;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key.length > 1000) throw new Unsupported('a long key');
    const value = object[key];
    if (i) parts.push(separator);
    // A scalar, the commonest value, is told from a block here rather than by a call.
    parts.push(keyScalar(key, inner), typeof value === 'object' && value !== null && isBlock(value) ? blockStart : ': ');
    write(value, depth + 1, seen, parts);
  }
}

/**
 * Writes documents as cdk8s's `Yaml.stringify(...documents)` does, byte for byte.
 *
 * @param documents the documents: maps or lists of plain JSON (an `undefined` document is written
 * as an empty line, as cdk8s writes it)
 * @returns the YAML text, or `undefined` when a document holds something this writer leaves to
 * cdk8s's (see the module's comment)
 */
export function stringifyYamlDocuments(documents: readonly unknown[]): string | undefined {
  // Each document's parts are joined as it is written, and its list emptied for the next: a list of
  // the parts of all documents, joined once, held each chart's small strings at once (about 13 MiB
  // more at the peak of 10,000 Functions). Objects met twice are looked for per document, as `yaml` writes aliases.
  const texts: string[] = [];
  const parts: string[] = [];
  const seen = new Set<object>();
  try {
    for (let i = 0; i < documents.length; i++) {
      const document = documents[i];
      if (document === undefined) {
        texts.push('\n');
        continue;
      }
      if (typeof document !== 'object' || document === null) throw new Unsupported('a scalar document');
      seen.clear();
      write(document, 0, seen, parts);
      parts.push('\n');
      texts.push(parts.join(''));
      parts.length = 0;
    }
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
  return texts.join('---\n');
}

/**
 * Writes one document as cdk8s's `Yaml.stringify(document)` does: with this writer, or with
 * cdk8s's for what it leaves to it. For the texts the stack writes into its objects (the
 * configurations of the controller and the registry) and the kustomizations of the output:
 * `yaml`'s writer, run cold, cost more than everything else those objects take.
 *
 * @param document the document
 * @returns the YAML text
 */
export function stringifyYaml(document: unknown): string {
  return stringifyYamlDocuments([document]) ?? Yaml.stringify(document);
}
