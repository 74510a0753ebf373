/**
 * A reader of the YAML that synth writes (src/_yaml.ts, or cdk8s's `Yaml.stringify`, which
 * writes the same bytes): block maps and lists two spaces deep, one scalar per line (plain, quoted
 * on one line, or a literal block), empty maps and lists as `{}` and `[]`, documents between `---`
 * lines. It gives the values js-yaml gives with its core schema, in a fraction of the time, as it
 * knows where each line's content starts. For any other text (comments, anchors, flow collections,
 * folded or multi-line quoted scalars, tabs, a key twice...) it returns `undefined`, and the caller
 * reads the file with js-yaml, which reads all YAML and says what is wrong with it.
 *
 * It reads the text where it lies, line by line, without splitting it into lines (a string per
 * line), and cuts each key and value from it once; its searches (the end of a line, the `: ` of a
 * key, what a plain scalar cannot hold) are the engine's own, fast from the first line on, before
 * any of this code is optimized. Plain scalars that may be null, a boolean or a number are resolved
 * as js-yaml's types of the core schema resolve them: the words of null and the booleans, numbers
 * of up to 15 digits and decimal fractions (`0.1`), here; any other that a type could take (`0x1F`,
 * `1e3`, `.inf`, `-3`) by js-yaml's own types, so a `3`, a `0x1F` or a `.inf` reads as js-yaml reads
 * it. A plain scalar that holds a character no number of the core schema holds (`800m`, `nodejs22`),
 * or that starts with a digit and holds what neither an int nor a float does (`1.11.1`, a digest's
 * hex digits), is a string, and needs no js-yaml. The tests compare both readers on generated data,
 * on text cut and changed at random, and on every manifest in dist/.
 */
import type * as JsYaml from 'js-yaml';

/** Thrown inside the reader when the text needs js-yaml; never escapes this module. */
class Unsupported extends Error {}

/** Any character but printable ASCII and line breaks: where it is not, {@link NON_PRINTABLE} need not look. */
const NOT_PLAIN_ASCII = /[^\n\x20-\x7e]/;
/** What js-yaml refuses to read in a scalar (its PATTERN_NON_PRINTABLE): such a text is left to it, to say so. */
const NON_PRINTABLE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;
/** Nesting deeper than this is left to js-yaml, which refuses it past 100 levels (its maxDepth). */
const MAX_DEPTH = 50;

const TAB = 0x09;
const SPACE = 0x20;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
const PLUS = 0x2b;
const DASH = 0x2d;
const POINT = 0x2e;
const COLON = 0x3a;
const QUESTION_MARK = 0x3f;
const BACKSLASH = 0x5c;
const UNDERSCORE = 0x5f;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const PIPE = 0x7c;
const CLOSE_BRACE = 0x7d;
const TILDE = 0x7e;

/** A table of ASCII characters: 1 for those of a string. */
function asciiTable(characters: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < characters.length; i++) table[characters.charCodeAt(i)] = 1;
  return table;
}

/** Characters a plain scalar cannot start with: indicators (and `-`, `?`, `:` before a space, a tab or the end, checked apart). */
const PLAIN_FIRST_UNSAFE = asciiTable('\t ,[]{}#&*!|>\'"%@`');
/** What a plain scalar cannot hold: a `: ` (a key), a ` #` (a comment), a tab. */
const PLAIN_UNSAFE = /: | #|\t/;
/** The first characters of the plain scalars that the core schema may read as a number: a digit, a sign, a point. */
const NUMBER_FIRST = asciiTable('0123456789+-.');
/**
 * A character that no plain scalar the core schema reads as a number holds: js-yaml's int holds a
 * sign, `0b`, `0o`, `0x`, hex and decimal digits; its float a sign, digits, a point, `e`, `.inf`
 * and `.nan` in their cases; both took `_` before js-yaml 4.3. A scalar with any other character is a string.
 */
const NOT_IN_A_NUMBER = /[^0-9a-fA-FxobeE+\-._inINfFaA]/;
/** Decimal digits only. */
const DIGITS = /^[0-9]+$/;
/** Digits, a point, digits: a float of js-yaml's, which it reads as `parseFloat` does. */
const DECIMAL = /^[0-9]+\.[0-9]+$/;
/** The prefixes of js-yaml's binary, octal and hexadecimal ints. */
const INT_PREFIX = /^0[box]/;
/**
 * What, after a digit and without an int's prefix, neither an int nor a float of js-yaml holds: a
 * second point, or a letter but `e` (such as the points of `1.11.1`, or the hex digits of a digest).
 */
const NEITHER_INT_NOR_FLOAT = /\..*\.|[a-dfA-DFxoinIN]/;

/**
 * The documents of a YAML text that synth wrote, as js-yaml's `loadAll` with the core schema reads them.
 *
 * @param text the text of a file
 * @param jsYaml js-yaml, whose types resolve the plain scalars that may be numbers this reader does not resolve itself;
 * called only for such a scalar
 * @param printableAscii whether the text holds printable ASCII and line breaks only, when the caller knows
 * @returns the documents, or `undefined` when the text holds what this reader leaves to js-yaml
 */
export function readWrittenYaml(text: string, jsYaml: () => typeof JsYaml, printableAscii?: boolean): unknown[] | undefined {
  if (!text.endsWith('\n')) return undefined;
  const ascii = printableAscii ?? !NOT_PLAIN_ASCII.test(text);
  if (!ascii && (text.includes('\r') || text.charCodeAt(0) === 0xfeff || NON_PRINTABLE.test(text))) return undefined;
  try {
    return new Reader(text, ascii, jsYaml).documents();
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

function unsupported(): never {
  throw new Unsupported();
}

class Reader {
  /** Where the current line starts. */
  private at = 0;
  /** Where it ends: its line break (the text ends with one), or the end of the text past the last line. */
  private end: number;
  /** The column where the content of the current line starts after a list item's `- `, when a map or list starts there; else -1. */
  private start = -1;
  private depth = 0;
  /** Keys read, by their text: a few dozen, written thousands of times. */
  private readonly keys = new Map<string, string>();
  /** Whether the quoted scalar {@link quoteEnd} found last holds an escape (`\` in double quotes, `''` in single ones). */
  private escaped = false;
  /** The implicit types of js-yaml's core schema, in its order, once a scalar needs them. */
  private implicit: readonly JsYaml.Type[] | undefined;
  private readonly length: number;

  /**
   * @param text the text, ending with a line break
   * @param ascii whether it holds printable ASCII and line breaks only
   */
  public constructor(private readonly text: string, private readonly ascii: boolean, private readonly jsYaml: () => typeof JsYaml) {
    this.length = text.length;
    this.end = text.indexOf('\n');
  }

  public documents(): unknown[] {
    const documents: unknown[] = [];
    for (;;) {
      if (this.at >= this.length || this.indent() !== 0) unsupported();
      documents.push(this.block(0));
      if (this.at === this.length) return documents;
      if (this.end - this.at !== 3 || !this.text.startsWith('---', this.at)) unsupported();
      this.next();
    }
  }

  private next(): void {
    this.at = this.end + 1;
    this.end = this.at < this.length ? this.text.indexOf('\n', this.at) : this.at;
  }

  /** The spaces the current line starts with. */
  private indent(): number {
    let i = this.at;
    while (this.text.charCodeAt(i) === SPACE) i++;
    return i - this.at;
  }

  /** A block map or list whose content starts at a column: a list when it starts with `- `. */
  private block(column: number): unknown {
    if (++this.depth > MAX_DEPTH) unsupported();
    const at = this.at + column;
    const value = this.text.charCodeAt(at) === DASH && this.text.charCodeAt(at + 1) === SPACE ? this.list(column) : this.map(column);
    this.depth--;
    return value;
  }

  /** Whether the current line continues a map or list of a column (its indentation is that column), or ends it. */
  private continues(column: number): boolean {
    if (this.start === column) {
      this.start = -1;
      return true;
    }
    if (this.at >= this.length) return false;
    const indent = this.indent();
    // At the top, a line that is not a key: the end of the document, or (an empty line, `...`, a marker with content) left to js-yaml.
    if (indent === 0) {
      if (this.end === this.at || this.text.startsWith('...', this.at)) unsupported();
      if (this.text.startsWith('---', this.at)) return this.end - this.at === 3 ? false : unsupported();
    }
    if (indent > column) unsupported();
    return indent === column;
  }

  private list(column: number): unknown[] {
    const items: unknown[] = [];
    while (this.continues(column)) {
      const at = this.at + column;
      if (this.text.charCodeAt(at) !== DASH || this.text.charCodeAt(at + 1) !== SPACE) unsupported();
      items.push(this.item(column + 2, column));
    }
    // Written as `[]`: no lines is no list (an empty document, a marker where a list should start).
    if (!items.length) unsupported();
    return items;
  }

  /** The item of a list whose `- ` is at a column, from the column where its content starts. */
  private item(column: number, dash: number): unknown {
    const at = this.at + column;
    if ((this.text.charCodeAt(at) === DASH && this.text.charCodeAt(at + 1) === SPACE) || this.keyEnd(at) !== -1) {
      this.start = column;
      return this.block(column);
    }
    return this.scalar(at, dash);
  }

  private map(column: number): { [key: string]: unknown } {
    const object: { [key: string]: unknown } = {};
    let empty = true;
    while (this.continues(column)) {
      empty = false;
      const at = this.at + column;
      const colon = this.keyEnd(at);
      if (colon === -1) unsupported();
      const key = this.key(at, colon);
      if (key === '__proto__' || Object.prototype.hasOwnProperty.call(object, key)) unsupported();
      if (colon + 1 < this.end) {
        object[key] = this.scalar(colon + 2, column);
      } else {
        // A map or list on the lines below, two spaces deeper.
        this.next();
        if (this.at >= this.length || this.indent() !== column + 2) unsupported();
        object[key] = this.block(column + 2);
      }
    }
    // Written as `{}`: no lines is no map (an empty document, a marker where a map should start).
    if (empty) unsupported();
    return object;
  }

  /** Where the key of a map entry that starts at a position of the current line ends (its `:`, followed by a space or the end of the line), or -1. */
  private keyEnd(from: number): number {
    const text = this.text;
    const end = this.end;
    const first = text.charCodeAt(from);
    if (first === DOUBLE_QUOTE || first === SINGLE_QUOTE) {
      const close = this.quoteEnd(from);
      const colon = close + 1;
      return close !== -1 && text.charCodeAt(colon) === COLON && (colon + 1 === end || text.charCodeAt(colon + 1) === SPACE) ? colon : -1;
    }
    const colon = text.indexOf(': ', from);
    if (colon !== -1 && colon < end) return colon;
    return text.charCodeAt(end - 1) === COLON && end - 1 > from ? end - 1 : -1;
  }

  /** The key from a position to one before its colon. */
  private key(from: number, to: number): string {
    const written = this.text.slice(from, to);
    let key = this.keys.get(written);
    if (key === undefined) {
      key = this.readKey(written, from, to);
      this.keys.set(written, key);
    }
    return key;
  }

  private readKey(written: string, from: number, to: number): string {
    if (to - from > 1000) unsupported();
    const first = written.charCodeAt(0);
    // Quoted: keyEnd found its closing quote just before the colon.
    if (first === DOUBLE_QUOTE) return doubleQuoted(written);
    if (first === SINGLE_QUOTE) return singleQuoted(written);
    const value = this.plain(from, to);
    if (typeof value !== 'string') unsupported();
    return value;
  }

  /** The scalar (or empty map or list) from a position to the end of the line; a literal block takes the lines below. */
  private scalar(from: number, parent: number): unknown {
    const text = this.text;
    const end = this.end;
    const first = text.charCodeAt(from);
    let value: unknown;
    if (first === DOUBLE_QUOTE || first === SINGLE_QUOTE) {
      if (this.quoteEnd(from) !== end - 1) unsupported();
      // Printable ASCII in double quotes without an escape, or in single quotes without a `''`: the characters between the quotes.
      if (!this.escaped && (first === SINGLE_QUOTE || this.ascii)) value = text.slice(from + 1, end - 1);
      else value = first === DOUBLE_QUOTE ? doubleQuoted(text.slice(from, end)) : singleQuoted(text.slice(from, end));
    } else if (first === PIPE) {
      return this.literal(from, parent + 2);
    } else if (first === OPEN_BRACE || first === OPEN_BRACKET) {
      value = end - from !== 2 ? unsupported()
        : first === OPEN_BRACE && text.charCodeAt(from + 1) === CLOSE_BRACE ? {}
          : first === OPEN_BRACKET && text.charCodeAt(from + 1) === CLOSE_BRACKET ? [] : unsupported();
    } else {
      value = this.plain(from, end);
    }
    this.next();
    return value;
  }

  /** A literal block (`|`, `|-`, `|+`) whose lines are indented by a number of spaces, as js-yaml's readBlockScalar reads it. */
  private literal(from: number, indent: number): string {
    const text = this.text;
    const header = this.end - from;
    // `|` alone clips (kept here as PIPE); a second character keeps (`+`) or strips (`-`), and any other (`||`, `|2`) is left to js-yaml.
    const chomping = header === 1 ? PIPE : text.charCodeAt(from + 1);
    if (header > 2 || (header === 2 && chomping !== DASH && chomping !== PLUS)) unsupported();
    this.next();
    // The first line sets the indentation: it must be the one the writer gives, with content.
    if (this.at >= this.length || this.indent() !== indent || this.end - this.at === indent) unsupported();
    let value = '';
    let lines = 0;
    let empty = 0;
    // The one line of content of most blocks, cut from the text with its line break.
    let onlyFrom = 0;
    let onlyTo = 0;
    for (; this.at < this.length; this.next()) {
      let spaces = 0;
      while (spaces < indent && text.charCodeAt(this.at + spaces) === SPACE) spaces++;
      if (this.at + spaces === this.end) {
        empty++;
        continue;
      }
      if (spaces < indent) break;
      if (lines === 0) {
        onlyFrom = this.at + indent;
        onlyTo = this.end;
      } else {
        if (lines === 1) value = text.slice(onlyFrom, onlyTo);
        value += `${'\n'.repeat(1 + empty)}${text.slice(this.at + indent, this.end)}`;
      }
      lines++;
      empty = 0;
    }
    if (lines === 1) {
      if (chomping === PIPE) return text.slice(onlyFrom, onlyTo + 1);
      if (chomping === DASH) return text.slice(onlyFrom, onlyTo);
      value = text.slice(onlyFrom, onlyTo);
    }
    if (chomping === PLUS) value += '\n'.repeat(1 + empty);
    else if (chomping === PIPE) value += '\n';
    return value;
  }

  /** A plain scalar from a position to another, resolved as js-yaml's core schema does: null, a boolean, a number, else the string. */
  private plain(from: number, to: number): unknown {
    const text = this.text;
    if (from === to) unsupported();
    const first = text.charCodeAt(from);
    if (first < 128 && PLAIN_FIRST_UNSAFE[first]) unsupported();
    if (first === DASH || first === QUESTION_MARK || first === COLON) {
      const second = text.charCodeAt(from + 1);
      if (from + 1 === to || second === SPACE || second === TAB) unsupported();
    }
    const value = text.slice(from, to);
    const last = text.charCodeAt(to - 1);
    // Not a comment, a `: ` (a key), a tab, a colon or a space at its end.
    if (last === COLON || last === SPACE || PLAIN_UNSAFE.test(value)) unsupported();
    if (first < 128 && NUMBER_FIRST[first] === 1) {
      if (NOT_IN_A_NUMBER.test(value)) return value;
      const length = to - from;
      // Decimal digits only, without a leading zero: js-yaml's int, `parseInt` of them, exact up to 15 digits.
      if (length <= 15 && (first !== 0x30 || length === 1) && DIGITS.test(value)) return parseInt(value, 10);
      if (first === DASH || first === PLUS) {
        // After a sign, js-yaml's int takes a digit only and its float a digit or a point (`_` too before js-yaml 4.3): `-ec`, `-Xmx` are strings.
        const second = text.charCodeAt(from + 1);
        if (!(second >= 0x30 && second <= 0x39) && second !== POINT && second !== UNDERSCORE) return value;
      } else if (first >= 0x30 && first <= 0x39) {
        // A decimal fraction (`0.1`), finite at this length: js-yaml's float, `parseFloat` of it.
        if (length <= 30 && DECIMAL.test(value)) return parseFloat(value);
        if (!INT_PREFIX.test(value) && NEITHER_INT_NOR_FLOAT.test(value)) return value;
      }
      return this.resolve(value);
    }
    // The null and boolean words of the core schema: `~`, null and true and false in three cases each.
    switch (to - from) {
      case 1: return first === TILDE ? null : value;
      case 4: return value === 'null' || value === 'Null' || value === 'NULL' ? null
        : value === 'true' || value === 'True' || value === 'TRUE' ? true : value;
      case 5: return value === 'false' || value === 'False' || value === 'FALSE' ? false : value;
      default: return value;
    }
  }

  /** A plain scalar that may be a number, by js-yaml's types. */
  private resolve(value: string): unknown {
    if (!this.implicit) {
      // The implicit types of js-yaml's core schema, in its order (lib/schema/json.js); its typings leave `types` out.
      const { types } = this.jsYaml() as unknown as { readonly types: { readonly [name in 'null' | 'bool' | 'int' | 'float']: JsYaml.Type } };
      this.implicit = [types.null, types.bool, types.int, types.float];
    }
    for (const type of this.implicit) if (type.resolve(value)) return type.construct(value);
    return value;
  }

  /** Where the quoted scalar that starts at a position ends on the current line (its closing quote), or -1; sets {@link escaped}. */
  private quoteEnd(from: number): number {
    const text = this.text;
    const quote = text.charCodeAt(from);
    this.escaped = false;
    for (let i = from + 1; i < this.end; i++) {
      const ch = text.charCodeAt(i);
      if (quote === DOUBLE_QUOTE && ch === BACKSLASH) {
        this.escaped = true;
        i++;
      } else if (ch === quote) {
        if (quote === SINGLE_QUOTE && text.charCodeAt(i + 1) === SINGLE_QUOTE) {
          this.escaped = true;
          i++;
        } else {
          return i;
        }
      }
    }
    return -1;
  }
}

/** A double-quoted scalar on one line whose escapes are JSON's (which YAML's include); others are left to js-yaml. */
function doubleQuoted(text: string): string {
  try {
    return JSON.parse(text) as string;
  } catch {
    return unsupported();
  }
}

function singleQuoted(text: string): string {
  return text.slice(1, -1).replace(/''/g, '\'');
}
