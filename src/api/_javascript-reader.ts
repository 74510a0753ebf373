/**
 * A reader of JavaScript source on this thread, without acorn: for a well-defined subset of the
 * language it gives what the handler checks read from acorn's tree (see `handler-code.ts`), namely
 * that the source parses as a script or as a module (with the options the checks give acorn), the
 * modules it loads (`import` declarations, `export ... from`, `import()` and `require()` of a
 * constant name, outside the block of a `try` that has a `catch`) and, of a module, the CommonJS
 * names it uses, each where acorn's tree has it. Whatever it cannot read with certainty it leaves to
 * acorn: it answers `undefined`, and the caller parses the source there, so every syntax error and
 * its message is still acorn's.
 *
 * The subset is read as strict code whether or not it is (strict code is a subset of sloppy code),
 * so a directive changes nothing. It leaves out, among others: anything outside ASCII other than
 * in strings, templates and comments (and white space acorn skips); escapes in identifiers; regular
 * expressions; HTML-like comments; legacy octal numbers and escapes, numeric separators, BigInt;
 * classes, generators, getters and setters, labels, `switch`, `with`, `super`, `new.target`;
 * destructuring assignment; `let`, `await`, `yield`, `async`, `of` and every reserved word used as
 * a name; `eval` and `arguments` bound or assigned; a name declared twice in one scope in any way
 * (acorn allows some of these); in a module, a CommonJS name declared (acorn's walk counts some of
 * those as uses); import attributes and string names in import and export lists.
 *
 * `test/api/javascript-reader.test.ts` compares its answers with acorn's on examples, on generated
 * programs and mutations of them (fast-check), and `scripts/javascript-reader-sweep.ts` on every
 * JavaScript file under `node_modules`.
 */

/** What the handler checks read of a handler's tree, with offsets where acorn's nodes start. */
export interface JavaScriptOutline {
  /** The modules loaded by a constant name outside the block of a `try` with a `catch`, in the order of acorn's tree, each with the offset of its node. */
  readonly imports: readonly { readonly module: string; readonly start: number }[];
  /** Of a module: the CommonJS names used and not declared, each with the offset of its first use. */
  readonly commonJsNames: readonly (readonly [string, number])[];
}

/** The reader's refusal: thrown wherever it cannot be sure, caught once. */
const UNSURE = new Error('not read with certainty');

function unsure(): never {
  throw UNSURE;
}

/** Words that are never a name here: keywords, words reserved in strict code, and the contextual words the subset leaves out as names. */
const NOT_NAMES = new Set([
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum', 'export', 'extends', 'false',
  'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try',
  'typeof', 'var', 'void', 'while', 'with', 'implements', 'interface', 'let', 'package', 'private', 'protected', 'public', 'static', 'yield',
  'await', 'async', 'of',
]);

/** Names that cannot be bound or assigned in strict code. */
const STRICT_BINDING = new Set(['eval', 'arguments']);

/** The CommonJS names an ES module does not have (as `handler-code.ts` looks for them). */
const COMMONJS_NAMES = new Set(['require', 'module', 'exports', '__filename', '__dirname']);

const ASSIGN_OPS = new Set(['=', '+=', '-=', '*=', '/=', '%=', '**=', '<<=', '>>=', '>>>=', '&=', '|=', '^=', '&&=', '||=', '??=']);

/** acorn's binding power of each binary operator. */
const BINARY = new Map(Object.entries({
  '??': 1, '||': 1, '&&': 2, '|': 3, '^': 4, '&': 5, '==': 6, '!=': 6, '===': 6, '!==': 6,
  '<': 7, '>': 7, '<=': 7, '>=': 7, 'instanceof': 7, 'in': 7, '<<': 8, '>>': 8, '>>>': 8, '+': 9, '-': 9, '*': 10, '/': 10, '%': 10,
}));

/** What an expression is, as far as the grammar around it cares. */
const enum Kind {
  /** A name, not in parentheses (it may become an arrow function's parameter). */
  Name,
  /** A name in parentheses: a target of assignment, not a parameter. */
  ParenName,
  /** A member expression without optional chaining: a target of assignment. */
  Member,
  /** A string literal or a template without substitutions, maybe in parentheses. */
  String,
  /** `name = value`, not in parentheses (a parameter with a default). */
  NameDefault,
  /** An arrow function, not in parentheses: nothing may follow it in the same expression. */
  Arrow,
  /** A chain with `?.`: no target of assignment, no callee of `new`. */
  Optional,
  Other,
}

/** A scope's names, declared in any way; a function's (or the program's) scope takes the `var`s of its blocks too. */
interface Scope {
  readonly names: Set<string>;
  readonly isFunction: boolean;
}

/** Where the code is: what `await` and `return` may do, and how many loops enclose it. */
interface Context {
  readonly async: boolean;
  readonly top: boolean;
  inParams: boolean;
  loops: number;
}

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 36 || c === 95;
}

function isNamePart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 36 || c === 95;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function isLineEnd(c: number): boolean {
  return c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
}

/** White space acorn skips besides ASCII's: U+00A0, U+FEFF and the other space separators it lists. */
function isOtherSpace(c: number): boolean {
  return c === 0xa0 || c === 0xfeff || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f || c === 0x3000;
}

/**
 * The handler's outline, if the source lies in the subset: then acorn parses it as `sourceType`
 * (`ecmaVersion: 'latest'`, `allowHashBang`, and `allowReturnOutsideFunction` for a script) and
 * its tree gives these facts. `undefined` when the reader is not sure.
 */
export function readJavaScriptOutline(source: string, sourceType: 'script' | 'module'): JavaScriptOutline | undefined {
  try {
    return new Reader(source, sourceType === 'module').read();
  } catch (e) {
    if (e === UNSURE) return undefined;
    // Deep nesting: acorn may read it, or not.
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

class Reader {
  private readonly length: number;
  // The current token: its type (the punctuator itself, 'name', 'num', 'string', '`' or 'eof'), its text or value, where it is.
  private pos = 0;
  private type = '';
  private value: string | undefined = '';
  private start = 0;
  private end = 0;
  /** A line ends between the previous token and this one. */
  private newline = false;
  /** Of the last name parsed as an expression (Kind.Name, ParenName, NameDefault). */
  private lastName = '';
  /** Of the last string parsed as an expression (Kind.String): its value, undefined when it has escapes. */
  private lastString: string | undefined;
  private awaits = 0;
  private readonly imports: { module: string; start: number }[] = [];
  private readonly scopes: Scope[] = [];
  private context: Context;
  // Made at their first entry: a script uses no CommonJS name here, and few modules export by name.
  private uses: Map<string, number> | undefined;
  private exported: Set<string> | undefined;
  private exportedLocals: string[] | undefined;

  public constructor(private readonly src: string, private readonly module: boolean) {
    this.length = src.length;
    this.context = { async: false, top: true, inParams: false, loops: 0 };
  }

  public read(): JavaScriptOutline {
    if (this.src.startsWith('#!')) {
      while (this.pos < this.length && !isLineEnd(this.src.charCodeAt(this.pos))) this.pos++;
    }
    this.scopes.push({ names: new Set(), isFunction: true });
    this.next();
    while (!this.at('eof')) this.statement(true, true);
    const top = this.scopes[0].names;
    const locals = this.exportedLocals;
    if (locals) for (let i = 0; i < locals.length; i++) if (!top.has(locals[i])) unsure();
    return { imports: this.imports, commonJsNames: this.uses ? [...this.uses] : [] };
  }

  // ---- tokens ----

  private next(): void {
    this.newline = false;
    this.skipSpace();
    const src = this.src;
    const start = this.start = this.pos;
    if (start >= this.length) {
      this.type = 'eof';
      this.end = start;
      return;
    }
    const c = src.charCodeAt(start);
    if (isNameStart(c)) {
      let pos = start + 1;
      while (pos < this.length && isNamePart(src.charCodeAt(pos))) pos++;
      const after = src.charCodeAt(pos);
      if (after === 92 || (after > 127 && !isOtherSpace(after) && after !== 0x2028 && after !== 0x2029)) unsure();
      this.type = 'name';
      this.value = src.slice(start, pos);
      this.end = this.pos = pos;
      return;
    }
    if (isDigit(c) || (c === 46 && isDigit(src.charCodeAt(start + 1)))) return this.number(c);
    if (c === 39 || c === 34) return this.string(c);
    this.type = this.punctuator(c);
    this.end = this.pos = start + this.type.length;
  }

  private skipSpace(): void {
    const src = this.src;
    let pos = this.pos;
    for (;;) {
      const c = src.charCodeAt(pos);
      if (c === 32 || c === 9 || c === 11 || c === 12) {
        pos++;
      } else if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) {
        this.newline = true;
        pos++;
      } else if (c === 47) {
        const d = src.charCodeAt(pos + 1);
        if (d === 47) {
          pos += 2;
          while (pos < this.length && !isLineEnd(src.charCodeAt(pos))) pos++;
        } else if (d === 42) {
          const close = src.indexOf('*/', pos + 2);
          if (close < 0) unsure();
          for (let i = pos + 2; i < close; i++) {
            if (isLineEnd(src.charCodeAt(i))) {
              this.newline = true;
              break;
            }
          }
          pos = close + 2;
        } else {
          break;
        }
      } else if (c > 127 && isOtherSpace(c)) {
        pos++;
      } else {
        break;
      }
    }
    this.pos = pos;
  }

  private punctuator(c: number): string {
    const src = this.src;
    const start = this.start;
    switch (c) {
      case 123: return '{';
      case 125: return '}';
      case 40: return '(';
      case 41: return ')';
      case 91: return '[';
      case 93: return ']';
      case 59: return ';';
      case 44: return ',';
      case 126: return '~';
      case 58: return ':';
      case 96: return '`';
      default: break;
    }
    // The others depend on the characters after the first.
    const second = src.charCodeAt(start + 1);
    switch (c) {
      case 46: return second === 46 && src.charCodeAt(start + 2) === 46 ? '...' : '.';
      case 63:
        if (second === 46 && !isDigit(src.charCodeAt(start + 2))) return '?.';
        if (second === 63) return src.charCodeAt(start + 2) === 61 ? '??=' : '??';
        return '?';
      case 60:
        if (second === 33) unsure(); // `<!--` opens a comment in a script
        if (second === 60) return src.charCodeAt(start + 2) === 61 ? '<<=' : '<<';
        return second === 61 ? '<=' : '<';
      case 62:
        if (second === 62) {
          if (src.charCodeAt(start + 2) === 62) return src.charCodeAt(start + 3) === 61 ? '>>>=' : '>>>';
          return src.charCodeAt(start + 2) === 61 ? '>>=' : '>>';
        }
        return second === 61 ? '>=' : '>';
      case 61:
        if (second === 61) return src.charCodeAt(start + 2) === 61 ? '===' : '==';
        return second === 62 ? '=>' : '=';
      case 33:
        if (second === 61) return src.charCodeAt(start + 2) === 61 ? '!==' : '!=';
        return '!';
      case 43:
        return second === 43 ? '++' : second === 61 ? '+=' : '+';
      case 45:
        if (second === 45) {
          if (src.charCodeAt(start + 2) === 62) unsure(); // `-->` closes a comment at the start of a script's line
          return '--';
        }
        return second === 61 ? '-=' : '-';
      case 42:
        if (second === 42) return src.charCodeAt(start + 2) === 61 ? '**=' : '**';
        return second === 61 ? '*=' : '*';
      case 47: return second === 61 ? '/=' : '/';
      case 37: return second === 61 ? '%=' : '%';
      case 38:
        if (second === 38) return src.charCodeAt(start + 2) === 61 ? '&&=' : '&&';
        return second === 61 ? '&=' : '&';
      case 124:
        if (second === 124) return src.charCodeAt(start + 2) === 61 ? '||=' : '||';
        return second === 61 ? '|=' : '|';
      case 94: return second === 61 ? '^=' : '^';
      default: return unsure();
    }
  }

  private number(c: number): void {
    const src = this.src;
    let pos = this.start;
    const digits = (test: (d: number) => boolean): number => {
      const from = pos;
      while (test(src.charCodeAt(pos))) pos++;
      return pos - from;
    };
    const next = src.charCodeAt(pos + 1) | 32;
    if (c === 48 && (next === 120 || next === 111 || next === 98)) {
      pos += 2;
      const test = next === 120 ? isHex : next === 111 ? (d: number) => d >= 48 && d <= 55 : (d: number) => d === 48 || d === 49;
      if (!digits(test)) unsure();
    } else {
      if (c === 48 && isDigit(src.charCodeAt(pos + 1))) unsure(); // legacy octal, or 08
      digits(isDigit);
      if (src.charCodeAt(pos) === 46) {
        pos++;
        digits(isDigit);
      }
      if ((src.charCodeAt(pos) | 32) === 101) {
        pos++;
        const sign = src.charCodeAt(pos);
        if (sign === 43 || sign === 45) pos++;
        if (!digits(isDigit)) unsure();
      }
    }
    const after = src.charCodeAt(pos);
    if (isNamePart(after) || after === 92 || (after > 127 && !isOtherSpace(after) && after !== 0x2028 && after !== 0x2029)) unsure();
    this.type = 'num';
    this.value = undefined;
    this.end = this.pos = pos;
  }

  /** Past an escape's backslash at `pos`: where the escape ends; unsure of octal escapes and `\8`, `\9`. */
  private escape(pos: number): number {
    const src = this.src;
    const c = src.charCodeAt(pos);
    if (c >= 49 && c <= 57) unsure();
    if (c === 48) {
      if (isDigit(src.charCodeAt(pos + 1))) unsure();
      return pos + 1;
    }
    if (c === 120) {
      if (!isHex(src.charCodeAt(pos + 1)) || !isHex(src.charCodeAt(pos + 2))) unsure();
      return pos + 3;
    }
    if (c === 117) {
      if (src.charCodeAt(pos + 1) === 123) {
        let end = pos + 2;
        while (isHex(src.charCodeAt(end))) end++;
        if (end === pos + 2 || src.charCodeAt(end) !== 125 || parseInt(src.slice(pos + 2, end), 16) > 0x10ffff) unsure();
        return end + 1;
      }
      for (let i = 1; i <= 4; i++) if (!isHex(src.charCodeAt(pos + i))) unsure();
      return pos + 5;
    }
    if (c === 13 && src.charCodeAt(pos + 1) === 10) return pos + 2;
    if (pos >= this.length) unsure();
    return pos + 1;
  }

  private string(quote: number): void {
    const src = this.src;
    let pos = this.start + 1;
    let escaped = false;
    for (;;) {
      if (pos >= this.length) unsure();
      const c = src.charCodeAt(pos);
      if (c === quote) break;
      if (c === 92) {
        escaped = true;
        pos = this.escape(pos + 1);
      } else if (c === 10 || c === 13) {
        unsure();
      } else {
        pos++;
      }
    }
    this.type = 'string';
    this.value = escaped ? undefined : src.slice(this.start + 1, pos);
    this.end = this.pos = pos + 1;
  }

  /** The rest of a template from `pos` (after its backtick or a substitution's `}`): whether it ends there, else a substitution starts; its text if plain. */
  private templatePart(): { end: boolean; text?: string } {
    const src = this.src;
    const from = this.pos;
    let pos = from;
    let plain = true;
    for (;;) {
      if (pos >= this.length) unsure();
      const c = src.charCodeAt(pos);
      if (c === 96) {
        this.pos = pos + 1;
        return { end: true, text: plain ? src.slice(from, pos) : undefined };
      }
      if (c === 36 && src.charCodeAt(pos + 1) === 123) {
        this.pos = pos + 2;
        return { end: false };
      }
      if (c === 92) {
        plain = false;
        pos = this.escape(pos + 1);
      } else {
        if (c === 13) plain = false;
        pos++;
      }
    }
  }

  /** A copy of the next token, the current one kept. */
  private peek(): { type: string; value: string | undefined; newline: boolean } {
    // Field by field: no object to hold them, no generic assignment.
    const pos = this.pos;
    const type = this.type;
    const value = this.value;
    const start = this.start;
    const end = this.end;
    const newline = this.newline;
    this.next();
    const ahead = { type: this.type, value: this.value, newline: this.newline };
    this.pos = pos;
    this.type = type;
    this.value = value;
    this.start = start;
    this.end = end;
    this.newline = newline;
    return ahead;
  }

  private expect(type: string): void {
    if (this.type !== type) unsure();
    this.next();
  }

  /** Whether the current token is of this type (a call, so that TypeScript does not narrow the type across calls that move on). */
  private at(type: string): boolean {
    return this.type === type;
  }

  private isName(value: string): boolean {
    return this.at('name') && this.value === value;
  }

  private expectName(value: string): void {
    if (!this.isName(value)) unsure();
    this.next();
  }

  private canInsertSemicolon(): boolean {
    return this.at('eof') || this.at('}') || this.newline;
  }

  private semicolon(): void {
    if (this.at(';')) this.next();
    else if (!this.canInsertSemicolon()) unsure();
  }

  // ---- scopes and names ----

  private get scope(): Scope {
    return this.scopes[this.scopes.length - 1];
  }

  /** A name that may be referred to. */
  private checkReference(name: string): void {
    if (NOT_NAMES.has(name)) unsure();
  }

  /** A name that may be bound (in a module, no CommonJS name: acorn's walk counts some of those bindings as uses). */
  private checkBinding(name: string): void {
    if (NOT_NAMES.has(name) || STRICT_BINDING.has(name) || (this.module && COMMONJS_NAMES.has(name))) unsure();
  }

  private declareLexical(name: string): void {
    this.checkBinding(name);
    const names = this.scope.names;
    if (names.has(name)) unsure();
    names.add(name);
  }

  private declareVar(name: string): void {
    this.checkBinding(name);
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const scope = this.scopes[i];
      if (scope.names.has(name)) unsure();
      scope.names.add(name);
      if (scope.isFunction) break;
    }
  }

  private use(name: string, start: number): void {
    if (!this.module || !COMMONJS_NAMES.has(name)) return;
    const uses = this.uses ??= new Map();
    if (!uses.has(name)) uses.set(name, start);
  }

  private loads(module: string | undefined, start: number): void {
    if (module === undefined) unsure();
    this.imports.push({ module, start });
  }

  // ---- statements ----

  private statement(declarations: boolean, top: boolean): void {
    if (this.at('{')) {
      this.next();
      this.block(true);
      return;
    }
    if (this.at(';')) {
      this.next();
      return;
    }
    if (!this.at('name')) {
      this.expressionStatement();
      return;
    }
    switch (this.value) {
      case 'var':
      case 'const':
        if (!declarations) unsure();
        this.variables(this.value, false);
        this.semicolon();
        return;
      case 'let':
        if (!declarations) unsure();
        this.checkLet();
        this.variables('let', false);
        this.semicolon();
        return;
      case 'function':
        if (!declarations) unsure();
        this.next();
        this.functionDeclaration(false, false);
        return;
      case 'async': {
        const ahead = this.peek();
        if (ahead.type === 'name' && ahead.value === 'function' && !ahead.newline) {
          if (!declarations) unsure();
          this.next();
          this.next();
          this.functionDeclaration(true, false);
          return;
        }
        this.expressionStatement();
        return;
      }
      case 'if':
        this.next();
        this.parenthesized();
        this.statement(false, false);
        if (this.isName('else')) {
          this.next();
          this.statement(false, false);
        }
        return;
      case 'for':
        this.forStatement();
        return;
      case 'while':
        this.next();
        this.parenthesized();
        this.loopBody();
        return;
      case 'do':
        this.next();
        this.loopBody();
        this.expectName('while');
        this.parenthesized();
        if (this.at(';')) this.next();
        return;
      case 'return':
        if (this.module && this.context.top) unsure();
        this.next();
        if (this.at(';')) this.next();
        else if (!this.canInsertSemicolon()) {
          this.expression(false);
          this.semicolon();
        }
        return;
      case 'throw':
        this.next();
        if (this.newline) unsure();
        this.expression(false);
        this.semicolon();
        return;
      case 'try':
        this.tryStatement();
        return;
      case 'break':
      case 'continue':
        // Only in a loop (no `switch`, no labels here).
        if (this.context.loops === 0) unsure();
        this.next();
        this.semicolon();
        return;
      case 'debugger':
        this.next();
        this.semicolon();
        return;
      case 'import': {
        const ahead = this.peek().type;
        if (ahead === '(' || (ahead === '.' && this.module)) {
          this.expressionStatement();
          return;
        }
        if (!this.module || !top) unsure();
        this.importDeclaration();
        return;
      }
      case 'export':
        if (!this.module || !top) unsure();
        this.exportDeclaration();
        return;
      default:
        this.expressionStatement();
    }
  }

  private expressionStatement(): void {
    this.expression(false);
    this.semicolon();
  }

  /** `let` as a declaration: followed on its line by a name, `[` or `{` (else acorn may read `let` as a name). */
  private checkLet(): void {
    const ahead = this.peek();
    if (ahead.newline || !(ahead.type === 'name' || ahead.type === '[' || ahead.type === '{')) unsure();
    if (ahead.type === 'name' && (ahead.value === 'in' || ahead.value === 'instanceof')) unsure();
  }

  /** The statements of a block after its `{`, to its `}` and past it; in a scope of its own unless it is a function's or a catch clause's. */
  private block(ownScope: boolean): void {
    if (ownScope) this.scopes.push({ names: new Set(), isFunction: false });
    while (!this.at('}')) {
      if (this.at('eof')) unsure();
      this.statement(true, false);
    }
    this.next();
    if (ownScope) this.scopes.pop();
  }

  private parenthesized(): void {
    this.expect('(');
    this.expression(false);
    this.expect(')');
  }

  private loopBody(): void {
    this.context.loops++;
    this.statement(false, false);
    this.context.loops--;
  }

  /** Declarators after `var`, `let` or `const` (the current token); `forHead` leaves a single one without initializer before `in` or `of`. Returns whether that is so. */
  private variables(kind: string, forHead: boolean, names?: string[]): boolean {
    this.next();
    const declare = (name: string) => {
      names?.push(name);
      if (kind === 'var') this.declareVar(name);
      else this.declareLexical(name);
    };
    for (let first = true; ; first = false) {
      const pattern = this.bindingTarget(declare);
      if (this.at('=')) {
        this.next();
        this.assign(forHead);
      } else if (forHead && first && (this.isName('of') || this.isName('in'))) {
        return true;
      } else if (kind === 'const' || pattern) {
        unsure();
      }
      if (!this.at(',')) return false;
      this.next();
    }
  }

  /** A name or a pattern of names to bind; returns whether it is a pattern. */
  private bindingTarget(declare: (name: string) => void): boolean {
    if (this.at('name')) {
      declare(this.value!);
      this.next();
      return false;
    }
    if (this.at('[')) {
      this.next();
      while (!this.at(']')) {
        if (this.at(',')) {
          this.next();
          continue;
        }
        if (this.at('...')) {
          this.next();
          this.bindingTarget(declare);
          if (!this.at(']')) unsure();
          break;
        }
        this.bindingElement(declare);
        if (!this.at(',')) break;
        this.next();
      }
      this.expect(']');
      return true;
    }
    if (this.at('{')) {
      this.next();
      while (!this.at('}')) {
        if (this.at('...')) {
          this.next();
          if (!this.at('name')) unsure();
          declare(this.value!);
          this.next();
          if (!this.at('}')) unsure();
          break;
        }
        if (this.at('name')) {
          const key = this.value!;
          this.next();
          if (this.at(':')) {
            this.next();
            this.bindingElement(declare);
          } else {
            declare(key);
            if (this.at('=')) {
              this.next();
              this.assign(false);
            }
          }
        } else {
          this.propertyKey();
          this.expect(':');
          this.bindingElement(declare);
        }
        if (!this.at(',')) break;
        this.next();
      }
      this.expect('}');
      return true;
    }
    return unsure();
  }

  private bindingElement(declare: (name: string) => void): void {
    this.bindingTarget(declare);
    if (this.at('=')) {
      this.next();
      this.assign(false);
    }
  }

  /** A property's key other than a name: a string, a number or `[expression]`. Returns the string's value (undefined with escapes), or null. */
  private propertyKey(): string | undefined | null {
    if (this.at('string')) {
      const value = this.value;
      this.next();
      return value;
    }
    if (this.at('num')) {
      this.next();
      return null;
    }
    if (this.at('[')) {
      this.next();
      this.assign(false);
      this.expect(']');
      return null;
    }
    return unsure();
  }

  private forStatement(): void {
    this.next();
    if (this.isName('await')) unsure();
    this.expect('(');
    this.scopes.push({ names: new Set(), isFunction: false });
    let inOf = false;
    if (this.at(';')) {
      // no initializer
    } else if (this.isName('var') || this.isName('const') || this.isName('let')) {
      if (this.value === 'let') this.checkLet();
      inOf = this.variables(this.value!, true);
    } else {
      this.expression(true);
      if (this.isName('of') || this.isName('in')) unsure();
    }
    if (inOf) {
      const of = this.value === 'of';
      this.next();
      if (of) this.assign(false);
      else this.expression(false);
    } else {
      this.expect(';');
      if (!this.at(';')) this.expression(false);
      this.expect(';');
      if (!this.at(')')) this.expression(false);
    }
    this.expect(')');
    this.loopBody();
    this.scopes.pop();
  }

  private tryStatement(): void {
    this.next();
    this.expect('{');
    const mark = this.imports.length;
    this.block(true);
    let handled = false;
    if (this.isName('catch')) {
      handled = true;
      // What the block of a try with a catch loads is the handler's own business.
      this.imports.length = mark;
      this.next();
      this.scopes.push({ names: new Set(), isFunction: false });
      if (this.at('(')) {
        this.next();
        if (!this.at('name')) unsure();
        this.declareLexical(this.value!);
        this.next();
        this.expect(')');
      }
      this.expect('{');
      this.block(false);
      this.scopes.pop();
    }
    if (this.isName('finally')) {
      handled = true;
      this.next();
      this.expect('{');
      this.block(true);
    }
    if (!handled) unsure();
  }

  /** After `function` (and `async`): a declaration's name, parameters and body. */
  private functionDeclaration(async: boolean, optionalName: boolean, names?: string[]): void {
    if (this.at('*')) unsure();
    if (this.at('name')) {
      names?.push(this.value!);
      this.declareLexical(this.value!);
      this.next();
    } else if (!optionalName) {
      unsure();
    }
    this.functionRest(async);
  }

  /** Parameters in parentheses and a body in braces, in a scope and context of their own. */
  private functionRest(async: boolean): void {
    const outer = this.context;
    this.context = { async, top: false, inParams: true, loops: 0 };
    const names = new Set<string>();
    this.scopes.push({ names, isFunction: true });
    const declare = (name: string) => {
      this.checkBinding(name);
      if (names.has(name)) unsure();
      names.add(name);
    };
    this.expect('(');
    let simple = true;
    while (!this.at(')')) {
      if (this.at('...')) {
        simple = false;
        this.next();
        this.bindingTarget(declare);
        break;
      }
      if (this.bindingTarget(declare)) simple = false;
      if (this.at('=')) {
        simple = false;
        this.next();
        this.assign(false);
      }
      if (!this.at(',')) break;
      this.next();
    }
    this.expect(')');
    this.context.inParams = false;
    this.functionBody(simple);
    this.scopes.pop();
    this.context = outer;
  }

  /** A function's body in braces, in the function's scope; a directive (`"use strict"`) with parameters that are not simple is acorn's error. */
  private functionBody(simple: boolean): void {
    this.expect('{');
    if (!simple && this.at('string')) unsure();
    this.block(false);
  }

  private importDeclaration(): void {
    const start = this.start;
    this.next();
    if (!this.at('string')) {
      // A default binding, then `from`, or a comma and the namespace or the named bindings.
      let bindings = true;
      if (this.at('name')) {
        this.declareLexical(this.value!);
        this.next();
        bindings = this.at(',');
        if (bindings) {
          this.next();
          if (!this.at('*') && !this.at('{')) unsure();
        }
      }
      if (bindings && this.at('*')) {
        this.next();
        this.expectName('as');
        if (!this.at('name')) unsure();
        this.declareLexical(this.value!);
        this.next();
      } else if (bindings && this.at('{')) {
        this.next();
        while (!this.at('}')) {
          if (!this.at('name')) unsure();
          let local = this.value!;
          this.next();
          if (this.isName('as')) {
            this.next();
            if (!this.at('name')) unsure();
            local = this.value!;
            this.next();
          }
          this.declareLexical(local);
          if (!this.at(',')) break;
          this.next();
        }
        this.expect('}');
      }
      this.expectName('from');
      if (!this.at('string')) unsure();
    }
    const module = this.value;
    this.next();
    this.semicolon();
    this.loads(module, start);
  }

  private exportDeclaration(): void {
    const start = this.start;
    const exports = (name: string) => {
      const exported = this.exported ??= new Set();
      if (exported.has(name)) unsure();
      exported.add(name);
    };
    this.next();
    if (this.at('*')) {
      this.next();
      if (this.isName('as')) {
        this.next();
        if (!this.at('name')) unsure();
        exports(this.value!);
        this.next();
      }
      this.expectName('from');
      this.exportSource(start);
      return;
    }
    if (this.at('{')) {
      this.next();
      const locals: string[] = [];
      while (!this.at('}')) {
        if (!this.at('name')) unsure();
        const local = this.value!;
        locals.push(local);
        this.next();
        if (this.isName('as')) {
          this.next();
          if (!this.at('name')) unsure();
          exports(this.value!);
          this.next();
        } else {
          exports(local);
        }
        if (!this.at(',')) break;
        this.next();
      }
      this.expect('}');
      if (this.isName('from')) {
        this.next();
        this.exportSource(start);
        return;
      }
      for (const local of locals) {
        this.checkReference(local);
        (this.exportedLocals ??= []).push(local);
      }
      this.semicolon();
      return;
    }
    if (!this.at('name')) unsure();
    const names: string[] = [];
    switch (this.value) {
      case 'default': {
        this.next();
        exports('default');
        if (this.isName('function')) {
          this.next();
          this.functionDeclaration(false, true);
        } else if (this.isName('async') && this.peek().type === 'name' && this.peek().value === 'function' && !this.peek().newline) {
          this.next();
          this.next();
          this.functionDeclaration(true, true);
        } else {
          if (this.isName('class')) unsure();
          this.assign(false);
          this.semicolon();
        }
        return;
      }
      case 'var':
      case 'const':
      case 'let':
        if (this.value === 'let') this.checkLet();
        this.variables(this.value!, false, names);
        this.semicolon();
        break;
      case 'function':
        this.next();
        this.functionDeclaration(false, false, names);
        break;
      case 'async': {
        const ahead = this.peek();
        if (ahead.type !== 'name' || ahead.value !== 'function' || ahead.newline) unsure();
        this.next();
        this.next();
        this.functionDeclaration(true, false, names);
        break;
      }
      default:
        unsure();
    }
    for (const name of names) exports(name);
  }

  private exportSource(start: number): void {
    if (!this.at('string')) unsure();
    const module = this.value;
    this.next();
    this.semicolon();
    this.loads(module, start);
  }

  // ---- expressions ----

  /** An expression, with commas. */
  private expression(noIn: boolean): Kind {
    let kind = this.assign(noIn);
    while (this.at(',')) {
      this.next();
      this.assign(noIn);
      kind = Kind.Other;
    }
    return kind;
  }

  private assign(noIn: boolean): Kind {
    const kind = this.conditional(noIn);
    if (kind === Kind.Arrow || !ASSIGN_OPS.has(this.type)) return kind;
    if (kind !== Kind.Name && kind !== Kind.ParenName && kind !== Kind.Member) unsure();
    const name = this.lastName;
    if (kind !== Kind.Member && STRICT_BINDING.has(name)) unsure();
    const bare = kind === Kind.Name && this.at('=');
    this.next();
    this.assign(noIn);
    if (!bare) return Kind.Other;
    this.lastName = name;
    return Kind.NameDefault;
  }

  private conditional(noIn: boolean): Kind {
    const kind = this.binary(this.unary(false, false, noIn, true), -1, noIn);
    if (kind === Kind.Arrow) {
      // After an arrow function with a block body, acorn reads on what no grammar allows.
      if (this.at('?') || ASSIGN_OPS.has(this.type)) unsure();
      return kind;
    }
    if (!this.at('?')) return kind;
    this.next();
    this.assign(false);
    this.expect(':');
    this.assign(noIn);
    return Kind.Other;
  }

  private binary(left: Kind, minPrec: number, noIn: boolean): Kind {
    if (left === Kind.Arrow) return left;
    const op = this.at('name') ? this.value! : this.type;
    if (this.at('name') ? op !== 'instanceof' && (op !== 'in' || noIn) : this.at('string')) return left;
    let prec = BINARY.get(op);
    if (prec === undefined || prec <= minPrec) return left;
    const logical = op === '||' || op === '&&';
    const coalesce = op === '??';
    if (coalesce) prec = 2;
    this.next();
    this.binary(this.unary(false, false, noIn, false), prec, noIn);
    if ((logical && this.at('??')) || (coalesce && (this.at('||') || this.at('&&')))) unsure();
    return this.binary(Kind.Other, minPrec, noIn);
  }

  private isTarget(kind: Kind): boolean {
    return kind === Kind.Member || ((kind === Kind.Name || kind === Kind.ParenName) && !STRICT_BINDING.has(this.lastName));
  }

  private unary(sawUnary: boolean, incDec: boolean, noIn: boolean, arrowOk: boolean): Kind {
    let kind: Kind;
    const type = this.type;
    const word = type === 'name' ? this.value : undefined;
    if (word === 'await') {
      if (!(this.context.async || (this.context.top && this.module)) || this.context.inParams) unsure();
      this.awaits++;
      this.next();
      this.unary(true, false, noIn, false);
      kind = Kind.Other;
      sawUnary = true;
    } else if (type === '!' || type === '~' || type === '+' || type === '-' || type === '++' || type === '--'
      || word === 'typeof' || word === 'void' || word === 'delete') {
      const update = type === '++' || type === '--';
      this.next();
      const argument = this.unary(true, update, noIn, false);
      if (update) {
        if (!this.isTarget(argument)) unsure();
      } else if (word === 'delete' && (argument === Kind.Name || argument === Kind.ParenName)) {
        unsure();
      } else {
        sawUnary = true;
      }
      kind = Kind.Other;
    } else {
      const start = this.start;
      kind = this.atom(noIn, arrowOk);
      if (kind === Kind.Arrow) {
        if ((this.at('++') || this.at('--')) && !this.newline) unsure();
        return kind;
      }
      kind = this.subscripts(kind, start, false);
      if ((this.at('++') || this.at('--')) && !this.newline) {
        if (!this.isTarget(kind)) unsure();
        this.next();
        if ((this.at('++') || this.at('--')) && !this.newline) unsure();
        kind = Kind.Other;
      }
    }
    if (!incDec && this.at('**')) {
      if (sawUnary) unsure();
      this.next();
      this.unary(false, false, noIn, false);
      return Kind.Other;
    }
    return kind;
  }

  private subscripts(kind: Kind, start: number, noCalls: boolean): Kind {
    let chained = false;
    for (;;) {
      if (this.at('?.')) {
        if (noCalls) unsure();
        chained = true;
        const callee = kind;
        const name = this.lastName;
        this.next();
        if (this.at('(')) {
          this.call(callee, name, start);
        } else if (this.at('[')) {
          this.next();
          this.expression(false);
          this.expect(']');
        } else if (this.at('name')) {
          this.next();
        } else {
          unsure();
        }
        kind = Kind.Optional;
      } else if (this.at('.')) {
        this.next();
        if (!this.at('name')) unsure();
        this.next();
        kind = chained ? Kind.Optional : Kind.Member;
      } else if (this.at('[')) {
        this.next();
        this.expression(false);
        this.expect(']');
        kind = chained ? Kind.Optional : Kind.Member;
      } else if (this.at('(') && !noCalls) {
        this.call(kind, this.lastName, start);
        kind = chained ? Kind.Optional : Kind.Other;
      } else if (this.at('`')) {
        if (chained) unsure();
        this.template();
        kind = Kind.Other;
      } else {
        return kind;
      }
    }
  }

  /** A call's arguments; `require` of one constant name loads it (acorn's CallExpression starts where its callee does, parentheses included). */
  private call(callee: Kind, name: string, start: number): void {
    const requires = (callee === Kind.Name || callee === Kind.ParenName) && name === 'require';
    const count = this.arguments(')', requires);
    if (requires && count === 1) this.loads(this.lastString, start);
  }

  /**
   * Arguments after `(`, to the closer and past it: their number when the only one is a constant
   * string (its value in `lastString`), else -1.
   */
  private arguments(closer: string, wanted: boolean): number {
    this.next();
    let count = 0;
    let constant = true;
    let value: string | undefined;
    while (this.type !== closer) {
      if (this.at('...')) {
        this.next();
        this.assign(false);
        constant = false;
      } else {
        const kind = this.assign(false);
        if (kind !== Kind.String) constant = false;
        else if (count === 0) value = this.lastString;
      }
      count++;
      if (!this.at(',')) break;
      this.next();
    }
    this.expect(closer);
    if (!wanted || !constant || count !== 1) return -1;
    this.lastString = value;
    return 1;
  }

  private atom(noIn: boolean, arrowOk: boolean): Kind {
    switch (this.type) {
      case 'name': return this.nameAtom(noIn, arrowOk);
      case 'num':
        this.next();
        return Kind.Other;
      case 'string':
        this.lastString = this.value;
        this.next();
        return Kind.String;
      case '`':
        return this.template();
      case '(':
        return this.parenthesizedOrArrow(noIn, arrowOk, false);
      case '[':
        this.next();
        while (!this.at(']')) {
          if (this.at(',')) {
            this.next();
            continue;
          }
          if (this.at('...')) this.next();
          this.assign(false);
          if (!this.at(',')) break;
          this.next();
        }
        this.expect(']');
        return Kind.Other;
      case '{':
        this.object();
        return Kind.Other;
      default:
        // A regular expression among them.
        return unsure();
    }
  }

  private nameAtom(noIn: boolean, arrowOk: boolean): Kind {
    const start = this.start;
    const name = this.value!;
    switch (name) {
      case 'this':
      case 'null':
      case 'true':
      case 'false':
        this.next();
        return Kind.Other;
      case 'function':
        this.next();
        return this.functionExpression(false);
      case 'new':
        return this.newExpression();
      case 'import':
        return this.importExpression();
      case 'async': {
        const ahead = this.peek();
        if (ahead.newline) unsure();
        if (ahead.type === 'name' && ahead.value === 'function') {
          this.next();
          this.next();
          return this.functionExpression(true);
        }
        if (!arrowOk) unsure();
        if (ahead.type === 'name') {
          this.next();
          const param = this.value!;
          this.next();
          if (!this.at('=>') || this.newline) unsure();
          return this.arrow([param], true, true, noIn);
        }
        if (ahead.type === '(') {
          this.next();
          return this.parenthesizedOrArrow(noIn, true, true);
        }
        return unsure();
      }
      default:
        this.checkReference(name);
        this.next();
        if (arrowOk && this.at('=>') && !this.newline) return this.arrow([name], true, false, noIn);
        this.use(name, start);
        this.lastName = name;
        return Kind.Name;
    }
  }

  /** After `function` (and `async`): a function expression's name, if any (bound in no scope outside it), parameters and body. */
  private functionExpression(async: boolean): Kind {
    if (this.at('*')) unsure();
    if (this.at('name')) {
      this.checkBinding(this.value!);
      this.next();
    }
    this.functionRest(async);
    return Kind.Other;
  }

  /** After `(` (of `async (` too): a parenthesized expression, or an arrow function's parameters. */
  private parenthesizedOrArrow(noIn: boolean, arrowOk: boolean, async: boolean): Kind {
    this.next();
    const awaits = this.awaits;
    const params: string[] = [];
    let simple = true;
    let paramsOnly = true;
    let kinds = 0;
    let single: Kind = Kind.Other;
    let singleName = '';
    let singleString: string | undefined;
    let trailingComma = false;
    let rest = false;
    while (!this.at(')')) {
      if (this.at('...')) {
        this.next();
        if (!this.at('name')) unsure();
        params.push(this.value!);
        this.next();
        rest = true;
        simple = false;
        if (!this.at(')')) unsure();
        break;
      }
      const kind = this.assign(false);
      kinds++;
      single = kind;
      singleName = this.lastName;
      singleString = this.lastString;
      if (kind === Kind.Name || kind === Kind.NameDefault) params.push(this.lastName);
      else paramsOnly = false;
      if (kind === Kind.NameDefault) simple = false;
      if (!this.at(',')) break;
      this.next();
      if (this.at(')')) trailingComma = true;
    }
    this.expect(')');
    if (arrowOk && this.at('=>') && !this.newline) {
      if (!paramsOnly || this.awaits !== awaits) unsure();
      return this.arrow(params, simple, async, noIn);
    }
    if (async || rest || trailingComma || kinds === 0) unsure();
    if (kinds > 1) return Kind.Other;
    this.lastName = singleName;
    this.lastString = singleString;
    if (single === Kind.Name) return Kind.ParenName;
    if (single === Kind.ParenName || single === Kind.Member || single === Kind.String) return single;
    return Kind.Other;
  }

  /** At `=>`: the body of an arrow function with these parameters. */
  private arrow(params: string[], simple: boolean, async: boolean, noIn: boolean): Kind {
    const outer = this.context;
    this.context = { async, top: false, inParams: false, loops: 0 };
    const names = new Set<string>();
    for (let i = 0; i < params.length; i++) {
      const param = params[i];
      this.checkBinding(param);
      if (names.has(param)) unsure();
      names.add(param);
    }
    this.scopes.push({ names, isFunction: true });
    this.next();
    if (this.at('{')) this.functionBody(simple);
    else this.assign(noIn);
    this.scopes.pop();
    this.context = outer;
    return Kind.Arrow;
  }

  private template(): Kind {
    let text: string | undefined;
    let parts = 0;
    for (;;) {
      const part = this.templatePart();
      if (part.end) {
        text = part.text;
        break;
      }
      parts++;
      this.next();
      this.expression(false);
      if (!this.at('}')) unsure();
    }
    this.next();
    if (parts) return Kind.Other;
    this.lastString = text;
    return Kind.String;
  }

  private object(): void {
    this.next();
    let protos = 0;
    while (!this.at('}')) {
      if (this.at('...')) {
        this.next();
        this.assign(false);
      } else {
        let async = false;
        if (this.at('name') && (this.value === 'async' || this.value === 'get' || this.value === 'set')) {
          const ahead = this.peek();
          if (!(ahead.type === ',' || ahead.type === '}' || ahead.type === ':' || ahead.type === '(' || ahead.type === '=')) {
            if (this.value !== 'async' || ahead.newline || ahead.type === '*') unsure();
            async = true;
            this.next();
          }
        }
        if (this.at('*')) unsure();
        const start = this.start;
        let key: string | undefined | null;
        let name = false;
        if (this.at('name')) {
          key = this.value;
          name = true;
          this.next();
        } else {
          key = this.propertyKey();
        }
        if (this.at('(')) {
          this.functionRest(async);
        } else if (async) {
          unsure();
        } else if (this.at(':')) {
          this.next();
          this.assign(false);
          // `__proto__` twice is acorn's error (a string key with escapes may spell it).
          if (key === '__proto__' || (key === undefined && !name)) protos++;
        } else if (name && (this.at(',') || this.at('}'))) {
          this.checkReference(key!);
          this.use(key!, start);
        } else {
          unsure();
        }
      }
      if (!this.at(',')) break;
      this.next();
    }
    this.expect('}');
    if (protos > 1) unsure();
  }

  private newExpression(): Kind {
    this.next();
    if (this.at('.') || this.isName('import')) unsure();
    const start = this.start;
    const callee = this.atom(false, false);
    this.subscripts(callee, start, true);
    if (this.at('(')) this.arguments(')', false);
    return Kind.Other;
  }

  private importExpression(): Kind {
    const start = this.start;
    this.next();
    if (this.at('.')) {
      if (!this.module) unsure();
      this.next();
      this.expectName('meta');
      return Kind.Other;
    }
    if (!this.at('(')) unsure();
    this.next();
    const kind = this.assign(false);
    const value = this.lastString;
    if (!this.at(')')) unsure();
    this.next();
    if (kind === Kind.String) this.loads(value, start);
    return Kind.Other;
  }
}
