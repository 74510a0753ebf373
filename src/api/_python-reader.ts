/**
 * A reader of Python source on this thread, synchronous and without WebAssembly: for a well-defined
 * subset of Python 3.12 it gives what the handler checks read from tree-sitter's tree (see
 * `_python-parser.ts`), namely that the tree has no problem, where `main` is bound, and which modules
 * are imported where, so that the common handler needs no parser's worker. Whatever it cannot read
 * with certainty it leaves to tree-sitter: it answers `undefined`, and the caller parses the source
 * there, so every message stays derived from tree-sitter's tree.
 *
 * The subset lies inside what both Python 3.12 and tree-sitter-python 0.25 read without an error
 * (no ERROR or MISSING node, no `print_statement`, no empty block), and leaves out what tree-sitter
 * reads differently from Python, or where the two could disagree on a fact:
 * - only ASCII outside strings and comments; no `\r`, form feed, vertical tab, NUL, U+0085, U+2028
 *   or U+2029 anywhere;
 * - indentation whose width is the same counted as Python counts it (a tab to the next multiple of 8)
 *   and as tree-sitter's scanner does (8 for every tab); every physical line inside brackets
 *   indented at least as deep as the block it is in (tree-sitter's scanner ends the block there);
 *   a backslash continuation only after a token of its line and before one on the next;
 * - no `match` statement, `type` statement, `except*`, type parameters, parenthesized context
 *   managers, starred expressions other than in calls, displays and assignment targets, a
 *   statement starting with `print` or `exec` other than a call;
 * - f-strings without nested f-strings or triple-quoted strings, without a backslash, a newline, a
 *   comment, braces or the f-string's quote inside a replacement field, and with a format
 *   specification of plain characters.
 *
 * `test/api/python-reader.test.ts` compares its answers with tree-sitter's on generated and mutated
 * handlers, and `scripts/python-reader-sweep.ts` on every file of a Python installation's standard
 * library.
 */

/** Where `main` is bound and what is imported, as the checks of `handler-code.ts` read them from tree-sitter's tree. */
export interface PythonOutline {
  /** `main` bound at the module's level (also inside if, try, with, for, while blocks there). */
  readonly mainAtTop: boolean;
  /** A `from ... import *` anywhere (it may bind `main`). */
  readonly starImport: boolean;
  /** The first statement inside a function or class that binds `main`: its zero-based row, and that function or class (`function f`, `class C`). */
  readonly nestedMain?: { readonly row: number; readonly where: string };
  /** The modules imported outside the body of a `try` that has an `except`, and outside `if TYPE_CHECKING:`, with their one-based lines. */
  readonly imports: readonly { readonly module: string; readonly line: number }[];
}

/** The reader's refusal: thrown wherever it cannot be sure, caught once. */
const UNSURE = new Error('not read with certainty');

const enum Kind { Name, Number, String, Op, Newline, Indent, Dedent, End }

interface Token {
  readonly kind: Kind;
  /** A name's or an operator's text. */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** Zero-based row of its start. */
  readonly row: number;
  /** Zero-based row of its end: its start's, but for a string across lines. */
  readonly endRow: number;
  /** Of an f-string: the tokens of each replacement field's expression, each list ending with an End token. */
  readonly fields?: Token[][];
}

/** The binary operators by how tightly they bind, loosest first (`not` only as `not in`). */
const BINARY: { readonly [text: string]: number } = {
  'or': 1, 'and': 2, '<': 4, '>': 4, '==': 4, '>=': 4, '<=': 4, '!=': 4, 'in': 4, 'not': 4, 'is': 4,
  '|': 5, '^': 6, '&': 7, '<<': 8, '>>': 8, '+': 9, '-': 9, '*': 10, '/': 10, '//': 10, '%': 10, '@': 10,
};
const NOT = 3;
const COMPARISON = 4;
const BITWISE_OR = 5;

/** {@link BINARY} as a map: the text of the token after an operand looked up. */
const BINARY_PRECEDENCE = new Map(Object.entries(BINARY));

function token(kind: Kind, text: string, start: number, end: number, row: number): Token {
  return { kind, text, start, end, row, endRow: row };
}

/** The last token of every list, which the reader never steps past. */
const END: Token = token(Kind.End, '', 0, 0, 0);

/** Python's keywords: never a name. */
const KEYWORDS = new Set(['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif',
  'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise',
  'return', 'try', 'while', 'with', 'yield']);

/** The string prefixes Python 3.12 allows, lower-cased. */
const PREFIXES = new Set(['r', 'u', 'f', 'b', 'fr', 'rf', 'br', 'rb']);

const OPERATORS_3 = new Set(['**=', '//=', '>>=', '<<=', '...']);
const OPERATORS_2 = new Set(['**', '//', '<<', '>>', '<=', '>=', '==', '!=', '->', ':=', '+=', '-=', '*=', '/=', '%=', '@=', '&=', '|=', '^=']);
const OPERATORS_1 = new Set(['+', '-', '*', '/', '%', '@', '<', '>', '&', '|', '^', '~', '(', ')', '[', ']', '{', '}', ',', ':', ';', '.', '=']);
const AUGMENTED = new Set(['+=', '-=', '*=', '/=', '//=', '%=', '@=', '&=', '|=', '^=', '>>=', '<<=', '**=']);
/** Where an expression list ends after a trailing comma. */
const LIST_ENDS = new Set([')', ']', '}', '=', ';', ':', ...AUGMENTED]);

/** Characters the reader never reads: tree-sitter and Python may count lines or spaces differently where they are. */
const UNREAD = /[\r\f\v\0\u0085\u2028\u2029]/;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isNameStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isNameChar = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 48 && c <= 57);

/**
 * What the handler checks read from a Python source, when it lies in the subset this reader reads
 * with certainty.
 *
 * @returns the outline, or `undefined` when the source is to be read by tree-sitter
 */
export function readPythonOutline(source: string): PythonOutline | undefined {
  if (UNREAD.test(source)) return undefined;
  try {
    return new Reader(source, tokenize(source)).module();
  } catch (e) {
    if (e === UNSURE) return undefined;
    // A source deep enough to overflow the stack, say: tree-sitter reads it.
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

// ---- Tokens ----

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const n = src.length;
  const indents = [0];
  let i = 0;
  let row = 0;
  let depth = 0;
  /** Whether the logical line has a token: a NEWLINE ends it. */
  let lineHasToken = false;
  let atLineStart = true;
  for (;;) {
    if (atLineStart) {
      atLineStart = false;
      let width = 0;
      let pythonWidth = 0;
      let j = i;
      for (; j < n; j++) {
        const c = src.charCodeAt(j);
        if (c === 32) {
          width++;
          pythonWidth++;
        } else if (c === 9) {
          width += 8;
          pythonWidth = pythonWidth - (pythonWidth % 8) + 8;
        } else {
          break;
        }
      }
      if (width !== pythonWidth) throw UNSURE;
      i = j;
      if (j >= n) break;
      const c = src.charCodeAt(j);
      if (c === 10) {
        // A blank line.
        i = j + 1;
        row++;
        atLineStart = true;
        continue;
      }
      if (depth > 0) {
        // Inside brackets: tree-sitter's scanner may end the block at a line indented less than it.
        if (width < indents[indents.length - 1]) throw UNSURE;
      } else if (c !== 35) {
        // A logical line starts: its indentation opens or closes blocks.
        const top = indents[indents.length - 1];
        if (width > top) {
          indents.push(width);
          tokens.push(token(Kind.Indent, '', j, j, row));
        } else if (width < top) {
          while (indents[indents.length - 1] > width) {
            indents.pop();
            tokens.push(token(Kind.Dedent, '', j, j, row));
          }
          if (indents[indents.length - 1] !== width) throw UNSURE;
        }
      }
    }
    if (i >= n) break;
    const c = src.charCodeAt(i);
    if (c === 32 || c === 9) {
      i++;
      continue;
    }
    if (c === 10) {
      if (depth === 0 && lineHasToken) {
        tokens.push(token(Kind.Newline, '', i, i + 1, row));
        lineHasToken = false;
      }
      i++;
      row++;
      atLineStart = true;
      continue;
    }
    if (c === 35) {
      // A comment, to the end of its line.
      const end = src.indexOf('\n', i);
      i = end < 0 ? n : end;
      continue;
    }
    if (c === 92) {
      // A backslash continuation: after a token of this logical line, before a token on the next line.
      if (src.charCodeAt(i + 1) !== 10 || !lineHasToken) throw UNSURE;
      i += 2;
      row++;
      let j = i;
      while (j < n && (src.charCodeAt(j) === 32 || src.charCodeAt(j) === 9)) j++;
      const next = src.charCodeAt(j);
      if (j >= n || next === 10 || next === 35 || next === 92) throw UNSURE;
      i = j;
      continue;
    }
    lineHasToken = true;
    const next = tokenAt(src, i, row, undefined);
    const op = next.kind === Kind.Op ? next.text : '';
    if (op === '(' || op === '[' || op === '{') depth++;
    else if (op === ')' || op === ']' || op === '}') {
      if (depth === 0) throw UNSURE;
      depth--;
    }
    tokens.push(next);
    i = next.end;
    row = next.endRow;
  }
  if (depth > 0) throw UNSURE;
  if (lineHasToken) tokens.push(token(Kind.Newline, '', n, n, row));
  for (let k = indents.length; k > 1; k--) tokens.push(token(Kind.Dedent, '', n, n, row));
  tokens.push(token(Kind.End, '', n, n, row));
  return tokens;
}

/**
 * The token at an index that holds no space: a name, a string (from its prefix), a number or an
 * operator.
 *
 * @param outer the quote of the f-string whose replacement field it is in, if it is
 */
function tokenAt(src: string, i: number, row: number, outer: number | undefined): Token {
  const c = src.charCodeAt(i);
  if (isNameStart(c)) {
    let j = i + 1;
    while (j < src.length && isNameChar(src.charCodeAt(j))) j++;
    const quote = src.charCodeAt(j);
    if (quote === 34 || quote === 39) {
      if (!PREFIXES.has(src.slice(i, j).toLowerCase())) throw UNSURE;
      return readString(src, i, j, row, outer);
    }
    if (src.charCodeAt(j) > 127) throw UNSURE;
    return token(Kind.Name, src.slice(i, j), i, j, row);
  }
  if (c === 34 || c === 39) return readString(src, i, i, row, outer);
  if (isDigit(c) || (c === 46 && isDigit(src.charCodeAt(i + 1)))) {
    return token(Kind.Number, '', i, numberEnd(src, i), row);
  }
  const op = operatorAt(src, i);
  return token(Kind.Op, op, i, i + op.length, row);
}

/** The one-character operators that start no longer one (brackets, `,`, `;`, `~`), by character code. */
const ALONE: readonly (string | undefined)[] = (() => {
  const alone: (string | undefined)[] = [];
  for (const op of OPERATORS_1) {
    if (![...OPERATORS_2, ...OPERATORS_3].some(longer => longer.startsWith(op))) alone[op.charCodeAt(0)] = op;
  }
  return alone;
})();

/** The operator at an index, longest first; any other character is not read. */
function operatorAt(src: string, i: number): string {
  const alone = ALONE[src.charCodeAt(i)];
  if (alone !== undefined) return alone;
  const three = src.slice(i, i + 3);
  if (OPERATORS_3.has(three)) return three;
  const two = three.slice(0, 2);
  if (OPERATORS_2.has(two)) return two;
  const one = two.slice(0, 1);
  if (OPERATORS_1.has(one)) return one;
  throw UNSURE;
}

/**
 * The end of the number at an index, as Python reads numbers (underscores between digits only, no
 * leading zeros); a number followed by a name's character or a dot is not read.
 */
function numberEnd(src: string, i: number): number {
  const digits = (from: number, ok: (c: number) => boolean): number => {
    if (!ok(src.charCodeAt(from))) throw UNSURE;
    let j = from + 1;
    for (;;) {
      const c = src.charCodeAt(j);
      if (ok(c)) j++;
      else if (c === 95 && ok(src.charCodeAt(j + 1))) j += 2;
      else return j;
    }
  };
  let j: number;
  const second = src.charCodeAt(i + 1) | 32;
  if (src.charCodeAt(i) === 48 && (second === 120 || second === 111 || second === 98)) {
    const ok = second === 120 ? (c: number) => isDigit(c) || ((c | 32) >= 97 && (c | 32) <= 102)
      : second === 111 ? (c: number) => c >= 48 && c <= 55 : (c: number) => c === 48 || c === 49;
    // `0x_ff`: an underscore may follow the base.
    j = digits(src.charCodeAt(i + 2) === 95 ? i + 3 : i + 2, ok);
  } else {
    if (src.charCodeAt(i) === 46) {
      j = i;
    } else {
      j = digits(i, isDigit);
      // Leading zeros only in zero itself (`00`, `0_0`).
      if (src.charCodeAt(i) === 48 && /[1-9]/.test(src.slice(i, j))) {
        if (src.charCodeAt(j) !== 46 && (src.charCodeAt(j) | 32) !== 101 && (src.charCodeAt(j) | 32) !== 106) throw UNSURE;
      }
    }
    if (src.charCodeAt(j) === 46) {
      j++;
      if (isDigit(src.charCodeAt(j))) j = digits(j, isDigit);
    }
    if ((src.charCodeAt(j) | 32) === 101) {
      j++;
      if (src.charCodeAt(j) === 43 || src.charCodeAt(j) === 45) j++;
      j = digits(j, isDigit);
    }
    if ((src.charCodeAt(j) | 32) === 106) j++;
  }
  const next = src.charCodeAt(j);
  if (isNameChar(next) || next === 46 || next > 127) throw UNSURE;
  return j;
}

/**
 * A string literal from its prefix at `start` and its quote at `quote`, as Python's tokenizer ends
 * it; an f-string's replacement fields are read into tokens of their own.
 *
 * @param outer the quote of the f-string this string is inside a replacement field of, if it is
 */
function readString(src: string, start: number, quote: number, row: number, outer: number | undefined): Token {
  const prefix = start === quote ? '' : src.slice(start, quote).toLowerCase();
  const raw = prefix.includes('r');
  const format = prefix.includes('f');
  const bytes = prefix.includes('b');
  const q = src.charCodeAt(quote);
  const triple = src.charCodeAt(quote + 1) === q && src.charCodeAt(quote + 2) === q;
  // Inside a replacement field: a plain one-line string with a quote of its own, without backslashes.
  if (outer !== undefined && (format || triple || q === outer)) throw UNSURE;
  const startRow = row;
  const fields: Token[][] | undefined = format ? [] : undefined;
  const n = src.length;
  let j = quote + (triple ? 3 : 1);
  for (;;) {
    if (j >= n) throw UNSURE;
    const c = src.charCodeAt(j);
    if (c === 92) {
      const next = src.charCodeAt(j + 1);
      if (outer !== undefined || j + 1 >= n) throw UNSURE;
      if (next === 10) {
        row++;
      } else if (format && (next === 123 || next === 125 || (!raw && next === 78))) {
        throw UNSURE;
      } else if (bytes && next > 127) {
        throw UNSURE;
      }
      j += 2;
      continue;
    }
    if (c === 10) {
      if (!triple || outer !== undefined) throw UNSURE;
      row++;
      j++;
      continue;
    }
    if (c === q) {
      if (!triple) {
        j++;
        break;
      }
      if (src.charCodeAt(j + 1) === q && src.charCodeAt(j + 2) === q) {
        j += 3;
        break;
      }
      j++;
      continue;
    }
    if ((bytes && c > 127) || c === outer) throw UNSURE;
    if (format && c === 123) {
      if (src.charCodeAt(j + 1) === 123) {
        j += 2;
        continue;
      }
      const nested: Token[][] = [];
      const field = readField(src, j + 1, row, q, nested);
      fields!.push(field.tokens, ...nested);
      j = field.end;
      continue;
    }
    if (format && c === 125) {
      if (src.charCodeAt(j + 1) !== 125) throw UNSURE;
      j += 2;
      continue;
    }
    j++;
  }
  return { kind: Kind.String, text: '', start, end: j, row: startRow, endRow: row, fields };
}

/**
 * The replacement field of an f-string whose `{` is before `from`: the tokens of its expression, and
 * the index after its `}`. Its `=`, `!r` and format specification are checked and not kept.
 */
function readField(src: string, from: number, row: number, quote: number, nested: Token[][] | undefined): { tokens: Token[]; end: number } {
  const tokens: Token[] = [];
  const n = src.length;
  let depth = 0;
  let j = from;
  const skipSpaces = () => {
    while (src.charCodeAt(j) === 32 || src.charCodeAt(j) === 9) j++;
  };
  for (;;) {
    skipSpaces();
    if (j >= n) throw UNSURE;
    const c = src.charCodeAt(j);
    if (c === 10 || c === 35 || c === 92 || c === 123 || c === quote || c > 127) throw UNSURE;
    if (depth === 0 && (c === 125 || c === 33 || c === 58 || (c === 61 && src.charCodeAt(j + 1) !== 61))) break;
    const next = tokenAt(src, j, row, quote);
    const { kind, text } = next;
    // `lambda` needs parentheses in a field (its colon would start the format), and `:=` is read as a format.
    if (kind === Kind.Name && text === 'lambda' && depth === 0) throw UNSURE;
    if (kind === Kind.Op) {
      if (text === '}' || text === '{') throw UNSURE;
      if (text === '(' || text === '[') depth++;
      else if (text === ')' || text === ']') {
        if (depth === 0) throw UNSURE;
        depth--;
      }
    }
    tokens.push(next);
    j = next.end;
  }
  if (!tokens.length) throw UNSURE;
  // `=` after the expression: the expression and its value.
  if (src.charCodeAt(j) === 61) {
    j++;
    skipSpaces();
  }
  // `!r`, `!s`, `!a`, right before `:` or `}`.
  if (src.charCodeAt(j) === 33) {
    const conversion = src.charCodeAt(j + 1);
    if (conversion !== 114 && conversion !== 115 && conversion !== 97) throw UNSURE;
    j += 2;
    if (src.charCodeAt(j) !== 58 && src.charCodeAt(j) !== 125) throw UNSURE;
  }
  if (src.charCodeAt(j) === 58) {
    if (src.charCodeAt(j + 1) === 61) throw UNSURE;
    j++;
    for (;;) {
      const c = src.charCodeAt(j);
      if (j >= n || c === 92 || c === 10 || c === 34 || c === 39 || c > 127) throw UNSURE;
      if (c === 125) break;
      if (c === 123) {
        // A field in the format specification, itself without one.
        if (!nested) throw UNSURE;
        const field = readField(src, j + 1, row, quote, undefined);
        nested.push(field.tokens);
        j = field.end;
        continue;
      }
      j++;
    }
  }
  if (src.charCodeAt(j) !== 125) throw UNSURE;
  tokens.push(token(Kind.End, '', j, j, row));
  return { tokens, end: j + 1 };
}

// ---- Statements and expressions ----

/** An expression as far as a statement needs to know it: whether it can be assigned to, and what names that binds. */
type Expr = typeof OTHER | typeof SUBSCRIPT_OR_ATTRIBUTE | NameExpr | SequenceExpr | StarExpr | GroupExpr;
/** Anything that is no target. */
const OTHER = 0;
/** `a.b`, `a[b]`: a target that binds no name. */
const SUBSCRIPT_OR_ATTRIBUTE = 1;
interface NameExpr { readonly k: 'name'; readonly text: string }
/** A tuple (in parentheses or not) or a list. */
interface SequenceExpr { readonly k: 'sequence'; readonly items: readonly Expr[]; readonly bare: boolean }
interface StarExpr { readonly k: 'star'; readonly inner: Expr }
/** `(x)`. */
interface GroupExpr { readonly k: 'group'; readonly inner: Expr }

class Reader {
  private at = 0;
  private mainAtTop = false;
  private starImport = false;
  private nestedMain?: { row: number; where: string };
  private readonly imports: { module: string; line: number }[] = [];
  /** The function or class the statements being read are in (the outermost), as the message names it. */
  private scope: string | undefined;
  /** How many `if TYPE_CHECKING:` bodies the statements being read are in. */
  private typeChecking = 0;

  public constructor(private readonly src: string, private tokens: Token[]) {}

  public module(): PythonOutline {
    while (this.peek().kind !== Kind.End) this.statement();
    return { mainAtTop: this.mainAtTop, starImport: this.starImport, nestedMain: this.nestedMain, imports: this.imports };
  }

  // -- tokens

  private peek(offset = 0): Token {
    return this.tokens[this.at + offset] ?? END;
  }

  private next(): Token {
    const token = this.tokens[this.at];
    if (token.kind === Kind.End) throw UNSURE;
    this.at++;
    return token;
  }

  /** Whether the next token is this operator or keyword. */
  private is(text: string, offset = 0): boolean {
    // Only names and operators have a text.
    return (this.tokens[this.at + offset] ?? END).text === text;
  }

  private eat(text: string): boolean {
    if (!this.is(text)) return false;
    this.at++;
    return true;
  }

  private expect(text: string): Token {
    if (!this.is(text)) throw UNSURE;
    return this.next();
  }

  /** A name that is no keyword. */
  private name(): Token {
    const token = this.next();
    if (token.kind !== Kind.Name || KEYWORDS.has(token.text)) throw UNSURE;
    return token;
  }

  private isName(offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === Kind.Name && !KEYWORDS.has(token.text);
  }

  // -- what the checks read

  /** A name bound by a statement that starts at this row. */
  private bind(name: string, row: number): void {
    if (name !== 'main') return;
    if (this.scope === undefined) this.mainAtTop = true;
    else this.nestedMain ??= { row, where: this.scope };
  }

  /** The names an assignment's target binds, as tree-sitter's tree has them: not the starred ones. */
  private bindTarget(target: Expr, row: number): void {
    if (typeof target !== 'object') return;
    if (target.k === 'name') this.bind(target.text, row);
    else if (target.k === 'sequence') target.items.forEach(item => this.bindTarget(item, row));
    else if (target.k === 'group') this.bindTarget(target.inner, row);
  }

  /** The text of a name as the tree holds it: none past 200 characters. */
  private static text(token: Token, src: string): string {
    return token.end - token.start <= 200 ? src.slice(token.start, token.end) : '';
  }

  // -- statements

  private statement(): void {
    const token = this.peek();
    if (token.kind === Kind.Indent || token.kind === Kind.Dedent || token.kind === Kind.Newline) throw UNSURE;
    if (token.kind === Kind.Name) {
      switch (token.text) {
        case 'if': return this.ifStatement();
        case 'while': return this.whileStatement();
        case 'for': return this.forStatement();
        case 'try': return this.tryStatement();
        case 'with': return this.withStatement();
        case 'def': return this.functionDefinition(token.row);
        case 'class': return this.classDefinition(token.row);
        case 'async':
          if (this.is('def', 1)) return this.functionDefinition(token.row);
          if (this.is('for', 1)) return this.forStatement();
          if (this.is('with', 1)) return this.withStatement();
          throw UNSURE;
        default:
          break;
      }
    } else if (token.kind === Kind.Op && token.text === '@') {
      return this.decorated();
    }
    this.simpleStatements();
  }

  private simpleStatements(): void {
    do {
      this.simpleStatement();
      if (!this.eat(';')) break;
    } while (this.peek().kind !== Kind.Newline);
    if (this.next().kind !== Kind.Newline) throw UNSURE;
  }

  private simpleStatement(): void {
    const token = this.peek();
    const row = token.row;
    if (token.kind === Kind.Name) {
      switch (token.text) {
        case 'pass':
        case 'break':
        case 'continue':
          this.at++;
          return;
        case 'return':
          this.at++;
          if (!this.endsStatement()) this.valueList();
          return;
        case 'raise':
          this.at++;
          if (!this.endsStatement()) {
            this.expression();
            if (this.eat('from')) this.expression();
          }
          return;
        case 'global':
        case 'nonlocal':
          this.at++;
          do this.name(); while (this.eat(','));
          return;
        case 'del':
          this.at++;
          this.deleteTargets();
          return;
        case 'assert':
          this.at++;
          this.expression();
          if (this.eat(',')) this.expression();
          return;
        case 'import':
          this.at++;
          return this.importNames(row);
        case 'from':
          this.at++;
          return this.importFrom(row);
        case 'print':
        case 'exec':
          // A call only: anything else may be tree-sitter's Python 2 statement.
          if (!this.is('(', 1)) throw UNSURE;
          break;
        default:
          break;
      }
    }
    this.expressionStatement(row);
  }

  private endsStatement(): boolean {
    return this.peek().kind === Kind.Newline || this.is(';');
  }

  private expressionStatement(row: number): void {
    if (this.is('yield')) {
      this.yieldExpression();
      return;
    }
    const first = this.starExpressions();
    if (this.is('=')) {
      const targets: Expr[] = [first];
      let value: Expr = OTHER;
      while (this.eat('=')) {
        if (this.is('yield')) {
          this.yieldExpression();
          value = OTHER;
          targets.push(value);
          if (this.is('=')) throw UNSURE;
          break;
        }
        value = this.starExpressions();
        targets.push(value);
      }
      targets.pop();
      if (hasBareStar(value)) throw UNSURE;
      for (let i = 0; i < targets.length; i++) {
        if (!isTarget(targets[i])) throw UNSURE;
        this.bindTarget(targets[i], row);
      }
      return;
    }
    const op = this.peek();
    if (op.kind === Kind.Op && AUGMENTED.has(op.text)) {
      if (!isSingleTarget(first)) throw UNSURE;
      this.at++;
      this.bindTarget(first, row);
      if (this.is('yield')) this.yieldExpression();
      else if (hasBareStar(this.starExpressions())) throw UNSURE;
      return;
    }
    if (this.is(':')) {
      if (!isSingleTarget(first)) throw UNSURE;
      this.at++;
      this.bindTarget(first, row);
      this.annotation();
      if (this.eat('=')) {
        if (this.is('yield')) this.yieldExpression();
        else if (hasBareStar(this.starExpressions())) throw UNSURE;
      }
      return;
    }
    if (hasBareStar(first)) throw UNSURE;
  }

  private deleteTargets(): void {
    do {
      if (!isDeleteTarget(this.bitwiseOr())) throw UNSURE;
    } while (this.eat(',') && !this.endsStatement());
  }

  /** A dotted name: where it starts and ends, and the row of its first name. */
  private dottedName(): { start: number; end: number; row: number } {
    const first = this.name();
    let last = first;
    while (this.eat('.')) last = this.name();
    return { start: first.start, end: last.end, row: first.row };
  }

  /** An import of a module, kept when no guard is around it (a `try` body's guard is applied when its `except` is read). */
  private imported(name: { start: number; end: number; row: number }): void {
    if (this.typeChecking || name.end - name.start > 200) return;
    this.imports.push({ module: this.src.slice(name.start, name.end).split('.')[0], line: name.row + 1 });
  }

  private importNames(row: number): void {
    do {
      const name = this.dottedName();
      this.imported(name);
      if (this.eat('as')) this.bind(Reader.text(this.name(), this.src), row);
      else this.bind(name.end - name.start <= 200 ? this.src.slice(name.start, name.end).split('.')[0] : '', row);
    } while (this.eat(','));
  }

  private importFrom(row: number): void {
    if (this.is('__future__') && this.is('import', 1)) {
      // A future statement: tree-sitter's future_import_statement binds nothing and imports nothing.
      this.at += 2;
      const parenthesized = this.eat('(');
      do {
        this.name();
        if (this.eat('as')) this.name();
      } while (this.eat(',') && !(parenthesized && this.is(')')));
      if (parenthesized) this.expect(')');
      return;
    }
    // `from __future__` is tree-sitter's future statement, whatever follows.
    if (this.is('__future__')) throw UNSURE;
    let relative = false;
    while (this.is('.') || this.is('...')) {
      this.at++;
      relative = true;
    }
    if (!relative || !this.is('import')) {
      const module = this.dottedName();
      if (!relative) this.imported(module);
    }
    this.expect('import');
    if (this.eat('*')) {
      this.starImport = true;
      return;
    }
    const parenthesized = this.eat('(');
    do {
      const name = this.name();
      if (this.eat('as')) this.bind(Reader.text(this.name(), this.src), row);
      else this.bind(Reader.text(name, this.src), row);
    } while (this.eat(',') && !(parenthesized && this.is(')')));
    if (parenthesized) this.expect(')');
  }

  /** A block: statements on the header's line, or indented on the lines after it. */
  private block(): void {
    this.expect(':');
    if (this.peek().kind !== Kind.Newline) {
      this.simpleStatements();
      return;
    }
    this.at++;
    if (this.next().kind !== Kind.Indent) throw UNSURE;
    do this.statement(); while (this.peek().kind !== Kind.Dedent);
    this.at++;
  }

  /** The condition of an `if`: whether it names TYPE_CHECKING (any name in it does, as tree-sitter's tree is walked). */
  private condition(): boolean {
    const from = this.at;
    this.namedExpression();
    for (let k = from; k < this.at; k++) if (namesTypeChecking(this.tokens[k])) return true;
    return false;
  }

  private ifStatement(): void {
    this.at++;
    const typeChecking = this.condition();
    if (typeChecking) this.typeChecking++;
    this.block();
    if (typeChecking) this.typeChecking--;
    while (this.eat('elif')) {
      this.namedExpression();
      this.block();
    }
    if (this.eat('else')) this.block();
  }

  private whileStatement(): void {
    this.at++;
    this.namedExpression();
    this.block();
    if (this.eat('else')) this.block();
  }

  private forStatement(): void {
    this.eat('async');
    this.expect('for');
    this.targetList('in');
    this.expect('in');
    if (hasBareStar(this.starExpressions())) throw UNSURE;
    this.block();
    if (this.eat('else')) this.block();
  }

  private tryStatement(): void {
    this.at++;
    const before = this.imports.length;
    this.block();
    let handlers = false;
    let groups: boolean | undefined;
    while (this.is('except')) {
      if (!handlers) {
        // The body's imports are guarded: a `try` with an `except`.
        this.imports.length = before;
        handlers = true;
      }
      this.at++;
      // `except*` (an expression follows), or `except`: not both in one `try`.
      const group = this.eat('*');
      if ((groups ??= group) !== group) throw UNSURE;
      if (group || !this.is(':')) {
        this.expression();
        if (this.eat('as')) this.name();
      }
      this.block();
    }
    if (handlers && this.eat('else')) this.block();
    if (this.eat('finally')) this.block();
    else if (!handlers) throw UNSURE;
  }

  private withStatement(): void {
    this.eat('async');
    this.expect('with');
    // As Python reads it: items in parentheses when they are followed by the colon, else expressions (a tuple too).
    if (this.is('(')) {
      const from = this.at;
      try {
        this.at++;
        this.withItems(')');
        this.expect(')');
        if (!this.is(':')) throw UNSURE;
      } catch (e) {
        if (e !== UNSURE) throw e;
        this.at = from;
        this.withItems(':');
      }
    } else {
      this.withItems(':');
    }
    this.block();
  }

  /** The items of a `with`, up to `end` (a trailing comma only before `)`). */
  private withItems(end: string): void {
    do {
      if (end === ')' && this.is(')') && this.is(',', -1)) break;
      this.expression();
      if (this.eat('as')) {
        if (!isTarget(this.target())) throw UNSURE;
        if (!this.is(',') && !this.is(end)) throw UNSURE;
      }
    } while (this.eat(','));
  }

  private decorated(): void {
    const row = this.peek().row;
    while (this.eat('@')) {
      this.namedExpression();
      if (this.next().kind !== Kind.Newline) throw UNSURE;
    }
    if (this.is('def') || (this.is('async') && this.is('def', 1))) this.functionDefinition(row);
    else if (this.is('class')) this.classDefinition(row);
    else throw UNSURE;
  }

  /** The body of a function or class: its statements are in it, or in the outermost one it is in. */
  private body(label: string): void {
    const outer = this.scope;
    this.scope ??= label;
    this.block();
    this.scope = outer;
  }

  private functionDefinition(row: number): void {
    this.eat('async');
    this.expect('def');
    const name = this.name();
    this.bind(name.text, row);
    this.expect('(');
    this.parameters(')', true);
    this.expect(')');
    if (this.eat('->')) this.annotation();
    this.body(`function ${Reader.text(name, this.src)}`);
  }

  private classDefinition(row: number): void {
    this.expect('class');
    const name = this.name();
    this.bind(name.text, row);
    if (this.eat('(')) {
      if (!this.is(')')) this.arguments();
      this.expect(')');
    }
    this.body(`class ${Reader.text(name, this.src)}`);
  }

  /** Parameters up to `end` (`)` of a def, `:` of a lambda), annotated in a def. */
  private parameters(end: string, annotated: boolean): void {
    while (!this.is(end)) {
      if (this.eat('/')) {
        // A marker only.
      } else if (this.eat('**')) {
        this.name();
        if (annotated && this.eat(':')) this.annotation();
      } else if (this.eat('*')) {
        if (!this.is(',') && !this.is(end)) {
          this.name();
          if (annotated && this.eat(':')) this.annotation();
        }
      } else {
        this.name();
        if (annotated && this.eat(':')) this.annotation();
        if (this.eat('=')) this.expression();
      }
      if (!this.eat(',')) break;
    }
  }

  // -- annotations

  /**
   * An annotation, in the shapes that tree-sitter's `type` reads without an error: dotted names with
   * at most one subscript at their end, strings and None, joined by `|`. (Tree-sitter takes `a[b]`
   * there for a generic type, which nothing but `|` or `.name` may follow: `x: a[b] == c` is valid
   * Python and an error in its tree.)
   */
  private annotation(): void {
    do this.annotationPart(); while (this.eat('|'));
  }

  private annotationPart(): void {
    const token = this.next();
    if (token.kind === Kind.String && !token.fields) return;
    if (token.kind !== Kind.Name || (KEYWORDS.has(token.text) && token.text !== 'None')) throw UNSURE;
    if (token.text === 'None') return;
    while (this.eat('.')) this.name();
    if (this.eat('[')) {
      do this.annotationArgument(); while (this.eat(',') && !this.is(']'));
      this.expect(']');
    }
  }

  /** What a subscript of an annotation holds: annotations, lists of them (`Callable[[int], str]`), numbers, `...`. */
  private annotationArgument(): void {
    const token = this.peek();
    if (token.kind === Kind.Number || this.eat('...')) {
      if (token.kind === Kind.Number) this.at++;
    } else if (this.is('-') && this.peek(1).kind === Kind.Number) {
      this.at += 2;
    } else if (this.eat('[')) {
      while (!this.is(']')) {
        this.annotation();
        if (!this.eat(',')) break;
      }
      this.expect(']');
    } else {
      this.annotation();
    }
  }

  // -- expressions

  /** `a, b` or `a`, stars allowed (an assignment's target, a statement), with what it is. */
  private starExpressions(): Expr {
    const first = this.starExpression();
    if (!this.is(',')) return first;
    const items = [first];
    while (this.eat(',')) {
      if (this.endsList()) break;
      items.push(this.starExpression());
    }
    return { k: 'sequence', items, bare: true };
  }

  /** Whether an expression list ends here (after a trailing comma). */
  private endsList(): boolean {
    const token = this.peek();
    return token.kind === Kind.Newline || token.kind === Kind.End || (token.kind === Kind.Op && LIST_ENDS.has(token.text));
  }

  private starExpression(): Expr {
    if (this.eat('*')) return { k: 'star', inner: this.bitwiseOr() };
    return this.expression();
  }

  /** `a, b`, no stars: a return value, a subject. */
  private valueList(): void {
    if (hasBareStar(this.starExpressions())) throw UNSURE;
  }

  /** Targets of a `for`, up to `in`. */
  private targetList(end: string): void {
    const items: Expr[] = [];
    do {
      if (this.is(end)) break;
      items.push(this.is('*') ? (this.at++, { k: 'star', inner: this.target() }) : this.target());
    } while (this.eat(','));
    if (!items.length || !isTarget(items.length === 1 && !this.is(',', -1) ? items[0] : { k: 'sequence', items, bare: true })) throw UNSURE;
  }

  /** A target: a primary, read below comparisons so that `in` ends it. */
  private target(): Expr {
    return this.bitwiseOr();
  }

  private yieldExpression(): void {
    this.expect('yield');
    if (this.eat('from')) {
      this.expression();
      return;
    }
    const token = this.peek();
    if (token.kind === Kind.Newline || this.is(')') || this.is(';') || this.is('=') || this.is(']') || this.is('}')) return;
    this.valueList();
  }

  private namedExpression(): Expr {
    if (this.isName() && this.is(':=', 1)) {
      this.at += 2;
      this.expression();
      return OTHER;
    }
    return this.expression();
  }

  private expression(): Expr {
    if (this.is('lambda')) {
      this.at++;
      this.parameters(':', false);
      this.expect(':');
      this.expression();
      return OTHER;
    }
    const value = this.disjunction();
    if (this.eat('if')) {
      this.disjunction();
      this.expect('else');
      this.expression();
      return OTHER;
    }
    return value;
  }

  private disjunction(): Expr {
    return this.binary(1);
  }

  private bitwiseOr(): Expr {
    return this.binary(BITWISE_OR);
  }

  /**
   * Operators binding at least as tightly as `min` ({@link BINARY}), by precedence climbing: `not`
   * where it may stand (looser than comparisons), then factors joined by binary operators.
   */
  private binary(min: number): Expr {
    let value: Expr;
    if (min <= NOT && this.is('not')) {
      this.at++;
      this.binary(NOT);
      value = OTHER;
    } else {
      value = this.factor();
    }
    for (;;) {
      const op = this.tokens[this.at];
      // Only names and operators have a text.
      const prec = BINARY_PRECEDENCE.get(op.text) ?? 0;
      if (prec < min || prec === 0) return value;
      if (op.text === 'not') {
        if (!this.is('in', 1)) return value;
        this.at++;
      } else if (op.text === 'is' && this.is('not', 1)) {
        this.at++;
      }
      this.at++;
      this.binary(prec === COMPARISON ? COMPARISON + 1 : prec + 1);
      value = OTHER;
    }
  }

  private factor(): Expr {
    const token = this.peek();
    if (token.kind === Kind.Op && (token.text === '-' || token.text === '+' || token.text === '~')) {
      this.at++;
      this.factor();
      return OTHER;
    }
    return this.power();
  }

  private power(): Expr {
    let value: Expr;
    if (this.eat('await')) {
      this.primary();
      value = OTHER;
    } else {
      value = this.primary();
    }
    if (this.eat('**')) {
      this.factor();
      return OTHER;
    }
    return value;
  }

  private primary(): Expr {
    let value = this.atom();
    for (;;) {
      if (this.eat('.')) {
        this.name();
        value = SUBSCRIPT_OR_ATTRIBUTE;
      } else if (this.eat('(')) {
        if (!this.is(')')) this.arguments();
        this.expect(')');
        value = OTHER;
      } else if (this.eat('[')) {
        this.slices();
        this.expect(']');
        value = SUBSCRIPT_OR_ATTRIBUTE;
      } else {
        return value;
      }
    }
  }

  private slices(): void {
    do {
      if (this.is('*')) throw UNSURE;
      this.slice();
    } while (this.eat(',') && !this.is(']'));
  }

  private slice(): void {
    if (!this.is(':')) {
      this.namedExpression();
      if (!this.is(':')) return;
    }
    this.expect(':');
    if (!this.is(':') && !this.is(',') && !this.is(']')) this.expression();
    if (this.eat(':')) {
      if (!this.is(',') && !this.is(']')) this.expression();
    }
  }

  /** Call arguments (or a class's bases) up to `)`: one generator alone, or positional, `*`, keyword and `**` arguments. */
  private arguments(): void {
    const first = this.at;
    do {
      if (this.is(')')) break;
      const start = this.at;
      if (this.eat('*') || this.eat('**')) {
        this.expression();
      } else if (this.isName() && this.is('=', 1)) {
        this.at += 2;
        this.expression();
      } else {
        this.namedExpression();
        if (this.is('for') || this.is('async')) {
          // A generator: the call's only argument.
          if (start !== first) throw UNSURE;
          this.comprehension();
          if (!this.is(')')) throw UNSURE;
          return;
        }
      }
    } while (this.eat(','));
  }

  /** `for ... in ... if ...` clauses of a comprehension, one or more. */
  private comprehension(): void {
    do {
      this.eat('async');
      this.expect('for');
      this.targetList('in');
      this.expect('in');
      this.disjunction();
      while (this.eat('if')) this.disjunction();
    } while (this.is('for') || (this.is('async') && this.is('for', 1)));
  }

  private atom(): Expr {
    const token = this.next();
    switch (token.kind) {
      case Kind.Name:
        if (token.text === 'None' || token.text === 'True' || token.text === 'False') return OTHER;
        if (KEYWORDS.has(token.text)) throw UNSURE;
        return { k: 'name', text: token.text };
      case Kind.Number:
        return OTHER;
      case Kind.String:
        this.fields(token);
        while (this.peek().kind === Kind.String) this.fields(this.next());
        return OTHER;
      case Kind.Op:
        switch (token.text) {
          case '(': return this.parenthesized();
          case '[': return this.list();
          case '{': return this.braces();
          case '...': return OTHER;
          default: throw UNSURE;
        }
      default:
        throw UNSURE;
    }
  }

  /** The replacement fields of an f-string: each an expression, or several. */
  private fields(token: Token): void {
    if (!token.fields) return;
    for (const field of token.fields) {
      const [tokens, at] = [this.tokens, this.at];
      this.tokens = field;
      this.at = 0;
      try {
        if (this.is('yield') || this.is('*')) throw UNSURE;
        this.valueList();
        if (this.peek().kind !== Kind.End) throw UNSURE;
      } finally {
        this.tokens = tokens;
        this.at = at;
      }
    }
  }

  private parenthesized(): Expr {
    if (this.eat(')')) return OTHER;
    if (this.is('yield')) {
      this.yieldExpression();
      this.expect(')');
      return OTHER;
    }
    const first = this.element();
    if (this.eat(')')) {
      if (typeof first === 'object' && first.k === 'star') throw UNSURE;
      return { k: 'group', inner: first };
    }
    return this.sequence(first, ')');
  }

  private list(): Expr {
    if (this.eat(']')) return { k: 'sequence', items: [], bare: false };
    return this.sequence(this.element(), ']');
  }

  /** An element of a tuple or list display: starred, or a named expression. */
  private element(): Expr {
    if (!this.eat('*')) return this.namedExpression();
    return { k: 'star', inner: this.bitwiseOr() };
  }

  /** The rest of a tuple or list display after its first element, or its comprehension, up to `close`. */
  private sequence(first: Expr, close: string): Expr {
    if (this.is('for') || this.is('async')) {
      if (typeof first === 'object' && first.k === 'star') throw UNSURE;
      this.comprehension();
      this.expect(close);
      return OTHER;
    }
    const items = [first];
    while (this.eat(',')) {
      if (this.is(close)) break;
      items.push(this.element());
    }
    this.expect(close);
    return { k: 'sequence', items, bare: false };
  }

  /** A dict or a set, or their comprehensions. */
  private braces(): Expr {
    if (this.eat('}')) return OTHER;
    let dict: boolean;
    if (this.eat('**')) {
      this.bitwiseOr();
      dict = true;
    } else if (this.eat('*')) {
      this.bitwiseOr();
      dict = false;
    } else {
      this.namedExpression();
      dict = this.eat(':');
      if (dict) this.expression();
      if (this.is('for') || this.is('async')) {
        this.comprehension();
        this.expect('}');
        return OTHER;
      }
    }
    while (this.eat(',')) {
      if (this.is('}')) break;
      if (dict) {
        if (this.eat('**')) {
          this.bitwiseOr();
        } else {
          this.expression();
          this.expect(':');
          this.expression();
        }
      } else if (this.eat('*')) {
        this.bitwiseOr();
      } else {
        this.namedExpression();
      }
    }
    this.expect('}');
    return OTHER;
  }
}


/** Whether a token is the name TYPE_CHECKING, or an f-string with it in a replacement field. */
function namesTypeChecking(token: Token): boolean {
  if (token.kind === Kind.Name) return token.text === 'TYPE_CHECKING';
  return token.fields?.some(field => field.some(namesTypeChecking)) ?? false;
}

/** Whether a value holds a star outside brackets (`*a, b`), which tree-sitter reads only as a target. */
function hasBareStar(value: Expr): boolean {
  if (typeof value !== 'object') return false;
  if (value.k === 'star') return true;
  return value.k === 'sequence' && value.bare && value.items.some(item => typeof item === 'object' && item.k === 'star');
}

/** Whether an expression can be assigned to: a name, attribute or subscript, or a tuple or list of targets (one starred name, attribute or subscript at most). */
function isTarget(value: Expr): boolean {
  if (value === SUBSCRIPT_OR_ATTRIBUTE) return true;
  if (typeof value !== 'object') return false;
  switch (value.k) {
    case 'name': return true;
    case 'group': return isTarget(value.inner);
    case 'star': return false;
    case 'sequence': {
      if (!value.items.length) return false;
      let stars = 0;
      for (const item of value.items) {
        if (typeof item === 'object' && item.k === 'star') {
          stars++;
          if (item.inner !== SUBSCRIPT_OR_ATTRIBUTE && !(typeof item.inner === 'object' && item.inner.k === 'name')) return false;
        } else if (!isTarget(item)) {
          return false;
        }
      }
      return stars <= 1;
    }
    default: return false;
  }
}

/** A target of an augmented or annotated assignment: a name, attribute or subscript, in parentheses or not. */
function isSingleTarget(value: Expr): boolean {
  if (value === SUBSCRIPT_OR_ATTRIBUTE) return true;
  if (typeof value !== 'object') return false;
  return value.k === 'name' || (value.k === 'group' && isSingleTarget(value.inner));
}

/** A target of `del`: a name, attribute or subscript, or a tuple or list of them. */
function isDeleteTarget(value: Expr): boolean {
  if (value === SUBSCRIPT_OR_ATTRIBUTE) return true;
  if (typeof value !== 'object') return false;
  if (value.k === 'name') return true;
  if (value.k === 'group') return isDeleteTarget(value.inner);
  return value.k === 'sequence' && value.items.every(isDeleteTarget);
}
