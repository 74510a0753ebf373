/**
 * A reader of the YAML that synth writes (src/_yaml.ts, or cdk8s's `Yaml.stringify`, which
 * writes the same bytes): block maps and lists two spaces deep, one scalar per line (plain, quoted
 * on one line, or a literal block), empty maps and lists as `{}` and `[]`, documents between `---`
 * lines. It gives the values js-yaml gives with its core schema, in a fraction of the time, as it
 * knows where each line's content starts. For any other text (comments, anchors, flow collections,
 * folded or multi-line quoted scalars, tabs, a key twice...) it returns `undefined`, and the caller
 * reads the file with js-yaml, which reads all YAML and says what is wrong with it.
 *
 * Plain scalars are resolved by js-yaml's own types of the core schema (null, booleans, integers,
 * floats), so a `3`, a `0x1F` or a `.inf` reads as js-yaml reads it. The tests compare both readers
 * on generated data, on text cut and changed at random, and on every manifest in dist/.
 */
import type * as JsYaml from 'js-yaml';

/** Thrown inside the reader when the text needs js-yaml; never escapes this module. */
class Unsupported extends Error {}

/** Any character but printable ASCII and line breaks: where it is not, {@link NON_PRINTABLE} need not look. */
const NOT_PLAIN_ASCII = /[^\n\x20-\x7e]/;
/** What js-yaml refuses to read in a scalar (its PATTERN_NON_PRINTABLE): such a text is left to it, to say so. */
const NON_PRINTABLE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;
/** Characters a plain scalar cannot start with: indicators, and `-`, `?`, `:` but before a character that is not a space. */
const PLAIN_FIRST_UNSAFE = /^[\t ,[\]{}#&*!|>'"%@`]|^[-?:](?:[ \t]|$)/;
/** The first characters of the plain scalars that the core schema reads as null, a boolean or a number: `~ n N t T f F 0-9 + - .`. */
const MAYBE_NOT_A_STRING = /^[~nNtTfF0-9+\-.]/;
/** Nesting deeper than this is left to js-yaml, which refuses it past 100 levels (its maxDepth). */
const MAX_DEPTH = 50;
const SPACE = 0x20;

/**
 * The documents of a YAML text that synth wrote, as js-yaml's `loadAll` with the core schema reads them.
 *
 * @param text the text of a file
 * @param jsYaml js-yaml, whose types resolve plain scalars
 * @returns the documents, or `undefined` when the text holds what this reader leaves to js-yaml
 */
export function readWrittenYaml(text: string, jsYaml: typeof JsYaml): unknown[] | undefined {
  if (!text.endsWith('\n') || text.includes('\r') || text.charCodeAt(0) === 0xfeff || (NOT_PLAIN_ASCII.test(text) && NON_PRINTABLE.test(text))) {
    return undefined;
  }
  const lines = text.split('\n');
  lines.pop();
  try {
    // The implicit types of js-yaml's core schema, in its order (lib/schema/json.js); its typings leave `types` out.
    const { types } = jsYaml as unknown as { readonly types: { readonly [name in 'null' | 'bool' | 'int' | 'float']: JsYaml.Type } };
    return new Reader(lines, [types.null, types.bool, types.int, types.float]).documents();
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

function unsupported(): never {
  throw new Unsupported();
}

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === SPACE) i++;
  return i;
}

class Reader {
  /** The line being read. */
  private line = 0;
  /** The column where the content of the current line starts after a list item's `- `, when a map or list starts there; else -1. */
  private start = -1;
  private depth = 0;
  /** Keys read, by their text: a few dozen, written thousands of times. */
  private readonly keys = new Map<string, string>();

  public constructor(private readonly lines: readonly string[], private readonly implicit: readonly JsYaml.Type[]) {}

  public documents(): unknown[] {
    const documents: unknown[] = [];
    for (;;) {
      if (this.line >= this.lines.length || indentOf(this.lines[this.line]) !== 0) unsupported();
      documents.push(this.block(0));
      if (this.line === this.lines.length) return documents;
      if (this.lines[this.line] !== '---') unsupported();
      this.line++;
    }
  }

  /** A block map or list whose content starts at a column: a list when it starts with `- `. */
  private block(column: number): unknown {
    if (++this.depth > MAX_DEPTH) unsupported();
    const line = this.lines[this.line];
    const value = line.charCodeAt(column) === 0x2d && line.charCodeAt(column + 1) === SPACE ? this.list(column) : this.map(column);
    this.depth--;
    return value;
  }

  /** Whether the current line continues a map or list of a column (its indentation is that column), or ends it. */
  private continues(column: number): boolean {
    if (this.start === column) {
      this.start = -1;
      return true;
    }
    if (this.line >= this.lines.length) return false;
    const line = this.lines[this.line];
    const indent = indentOf(line);
    // At the top, a line that is not a key: the end of the document, or (an empty line, `...`, a marker with content) left to js-yaml.
    if (indent === 0 && (line === '' || line.startsWith('---') || line.startsWith('...'))) return line === '---' ? false : unsupported();
    if (indent > column) unsupported();
    return indent === column;
  }

  private list(column: number): unknown[] {
    const items: unknown[] = [];
    while (this.continues(column)) {
      const line = this.lines[this.line];
      if (line.charCodeAt(column) !== 0x2d || line.charCodeAt(column + 1) !== SPACE) unsupported();
      items.push(this.item(line, column + 2, column));
    }
    // Written as `[]`: no lines is no list (an empty document, a marker where a list should start).
    if (!items.length) unsupported();
    return items;
  }

  /** The item of a list whose `- ` is at a column, from where its content starts. */
  private item(line: string, from: number, dash: number): unknown {
    const first = line.charCodeAt(from);
    if ((first === 0x2d && line.charCodeAt(from + 1) === SPACE) || keyEnd(line, from) !== -1) {
      this.start = from;
      return this.block(from);
    }
    return this.scalar(line, from, dash);
  }

  private map(column: number): { [key: string]: unknown } {
    const object: { [key: string]: unknown } = {};
    let empty = true;
    while (this.continues(column)) {
      empty = false;
      const line = this.lines[this.line];
      const colon = keyEnd(line, column);
      if (colon === -1) unsupported();
      const key = this.key(line.slice(column, colon));
      if (key === '__proto__' || Object.prototype.hasOwnProperty.call(object, key)) unsupported();
      if (colon + 1 < line.length) {
        object[key] = this.scalar(line, colon + 2, column);
      } else {
        // A map or list on the lines below, two spaces deeper.
        this.line++;
        if (this.line >= this.lines.length || indentOf(this.lines[this.line]) !== column + 2) unsupported();
        object[key] = this.block(column + 2);
      }
    }
    // Written as `{}`: no lines is no map (an empty document, a marker where a map should start).
    if (empty) unsupported();
    return object;
  }

  private key(text: string): string {
    let key = this.keys.get(text);
    if (key === undefined) {
      key = this.readKey(text);
      this.keys.set(text, key);
    }
    return key;
  }

  private readKey(text: string): string {
    if (text.length > 1000) unsupported();
    const first = text.charCodeAt(0);
    if (first === 0x22 || first === 0x27) {
      if (quoteEnd(text, 0) !== text.length - 1) unsupported();
      return first === 0x22 ? doubleQuoted(text) : singleQuoted(text);
    }
    const value = this.plain(text);
    if (typeof value !== 'string') unsupported();
    return value;
  }

  /** The scalar (or empty map or list) from a column to the end of the line; a literal block takes the lines below. */
  private scalar(line: string, from: number, parent: number): unknown {
    const first = line.charCodeAt(from);
    let value: unknown;
    if (first === 0x22 || first === 0x27) {
      if (quoteEnd(line, from) !== line.length - 1) unsupported();
      value = first === 0x22 ? doubleQuoted(line.slice(from)) : singleQuoted(line.slice(from));
    } else if (first === 0x7c) {
      return this.literal(line.slice(from), parent + 2);
    } else if (first === 0x7b || first === 0x5b) {
      const rest = line.slice(from);
      value = rest === '{}' ? {} : rest === '[]' ? [] : unsupported();
    } else {
      value = this.plain(line.slice(from));
    }
    this.line++;
    return value;
  }

  /** A literal block (`|`, `|-`, `|+`) whose lines are indented by a number of spaces, as js-yaml's readBlockScalar reads it. */
  private literal(header: string, indent: number): string {
    if (header !== '|' && header !== '|-' && header !== '|+') unsupported();
    this.line++;
    // The first line sets the indentation: it must be the one the writer gives, with content.
    const firstLine = this.lines[this.line];
    if (firstLine === undefined || indentOf(firstLine) !== indent || firstLine.length === indent) unsupported();
    let text = '';
    let empty = 0;
    let read = false;
    for (; this.line < this.lines.length; this.line++) {
      const line = this.lines[this.line];
      let spaces = 0;
      while (spaces < indent && line.charCodeAt(spaces) === SPACE) spaces++;
      if (spaces === line.length) {
        empty++;
        continue;
      }
      if (spaces < indent) break;
      text += `${'\n'.repeat(read ? 1 + empty : empty)}${line.slice(indent)}`;
      read = true;
      empty = 0;
    }
    if (header === '|+') text += '\n'.repeat(read ? 1 + empty : empty);
    else if (header === '|' && read) text += '\n';
    return text;
  }

  /** A plain scalar, resolved as js-yaml's core schema does: null, a boolean, a number, else the string. */
  private plain(text: string): unknown {
    // Not a comment, a `: ` (a key), a tab, a colon or a space at its end.
    const last = text.charCodeAt(text.length - 1);
    if (!text || PLAIN_FIRST_UNSAFE.test(text) || text.includes(': ') || text.includes(' #') || text.includes('\t') || last === 0x3a || last === SPACE) {
      unsupported();
    }
    if (!MAYBE_NOT_A_STRING.test(text)) return text;
    for (const type of this.implicit) if (type.resolve(text)) return type.construct(text);
    return text;
  }
}

/** Where the key of a map entry that starts at a column ends (its `:`, followed by a space or the end of the line), or -1. */
function keyEnd(line: string, from: number): number {
  const first = line.charCodeAt(from);
  if (first === 0x22 || first === 0x27) {
    const end = quoteEnd(line, from);
    const colon = end + 1;
    return end !== -1 && line.charCodeAt(colon) === 0x3a && (colon + 1 === line.length || line.charCodeAt(colon + 1) === SPACE) ? colon : -1;
  }
  const colon = line.indexOf(': ', from);
  if (colon !== -1) return colon;
  return line.endsWith(':') && line.length - 1 > from ? line.length - 1 : -1;
}

/** Where the quoted scalar that starts at a position ends (its closing quote), or -1 when it does not on that line. */
function quoteEnd(text: string, from: number): number {
  const quote = text.charCodeAt(from);
  for (let i = from + 1; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (quote === 0x22 && ch === 0x5c) {
      i++;
    } else if (ch === quote) {
      if (quote === 0x27 && text.charCodeAt(i + 1) === 0x27) i++;
      else return i;
    }
  }
  return -1;
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
