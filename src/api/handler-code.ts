/**
 * What a Function's runtime does with its handler code when the Pod starts, judged before: the
 * syntax of the handler (JavaScript as Node.js loads it, CommonJS or ES module; Python 3.12),
 * `main` where the runtime looks for it, and modules the handler imports that neither its
 * dependencies file declares nor the runtime image provides nor the standard library holds.
 * Also the file names of a function folder: a misspelt dependencies file, two handlers.
 *
 * Used by `KymaFunction` at synth (inline and folder sources) and by `kyma-serverless validate` on
 * the manifests' inline sources. Not by the admission webhook: its program ships in a ConfigMap of
 * `dist/` that has no room for a JavaScript and a Python parser (see docs/functions.md).
 *
 * The runtime images' facts, read from kyma-project/serverless `components/runtimes` at 1.11.1 and
 * 1.13.0: the Node.js images load `function/handler.js` with `import()` from `/usr/src/app`, whose
 * `node_modules` holds the image's own packages (`package.json` of the image, no `"type"`), so the
 * handler is an ES module only when its own `package.json` says `"type": "module"` (or, on Node.js
 * 22 and later, when its syntax says so); the Python image imports the module `handler` with
 * `importlib.import_module` and calls `getattr(module, 'main')`.
 */
import { builtinModules } from 'node:module';
import { spawnSync } from 'node:child_process';
import * as vm from 'node:vm';
import type * as Acorn from 'acorn';
import { closestMatch, editDistance } from './_suggest';
import {
  PyNode, askSources, parsePython, sendPythonSources, stopParser, takeSentPythonTree,
} from './_python-parser';
import { readJavaScriptOutline } from './_javascript-reader';
import { PythonOutline, readPythonOutline } from './_python-reader';
import { ContentMemo, _work } from './_work';
import { DEFAULT_RELEASE, ServerlessRelease } from './release';
import { runtimeContract } from './runtime-contract';
import { RUNTIME_FILES, RuntimeFamily, runtimeFamily } from './runtimes';
import type { Violation } from './validator';

/** Warnings a Function may accept (`acceptWarnings` in function.yaml, the `acceptWarnings` prop). */
export enum HandlerWarning {
  /**
   * The handler imports a module that its dependencies file does not declare and the runtime image
   * does not provide. It loads in the Pod only when a declared package brings it along.
   */
  UNDECLARED_IMPORT = 'undeclaredImport',
}

/**
 * The Function annotation that lists the warnings a Function accepts, comma-separated: a warning's
 * name (`undeclaredImport`) accepts it for every module, `undeclaredImport:lodash` for one.
 */
export const ACCEPT_WARNINGS_ANNOTATION = 'cdk8s-kyma-serverless/accept-warnings';

/** One problem of a handler or its dependencies. */
export interface HandlerCodeProblem {
  /** The rule, such as `handlerSyntax`, `handlerMain`, or a {@link HandlerWarning}. */
  readonly rule: string;
  /** The file, by its name in the Function (`handler.py`, `package.json`). */
  readonly file: string;
  /** One-based line, where there is one. */
  readonly line?: number;
  /** What the runtime says, or would do. */
  readonly message: string;
  /** How to fix it. */
  readonly fix: string;
  /** A warning the Function may accept (its {@link HandlerWarning}); otherwise the Function fails for sure. */
  readonly warning?: HandlerWarning;
  /** The module a warning is about. */
  readonly module?: string;
}

/** What {@link handlerCodeProblems} reads. */
export interface HandlerCode {
  /** The runtime, such as `nodejs22`. */
  readonly runtime: string;
  /** The handler's text. */
  readonly source: string;
  /**
   * The dependencies file's text.
   *
   * @default - none
   */
  readonly dependencies?: string;
  /**
   * The release whose runtime images run the handler.
   *
   * @default DEFAULT_RELEASE
   */
  readonly release?: ServerlessRelease;
}

/**
 * The packages each release's Node.js images install in `/usr/src/app/node_modules` (the images'
 * `package.json`; the same names in every Node.js runtime), with their version ranges.
 */
export const NODE_IMAGE_PACKAGES: { readonly [R in ServerlessRelease]: { readonly [name: string]: string } } = {
  [ServerlessRelease.V1_11_1]: nodeImagePackages('0.213.0', '0.61.0'),
  [ServerlessRelease.V1_13_0]: nodeImagePackages('0.220.0', '0.67.0'),
};

function nodeImagePackages(otel: string, otelExpress: string): { readonly [name: string]: string } {
  return {
    '@opentelemetry/api': '^1.9.0',
    '@opentelemetry/exporter-prometheus': `^${otel}`,
    '@opentelemetry/exporter-trace-otlp-http': `^${otel}`,
    '@opentelemetry/instrumentation': `^${otel}`,
    '@opentelemetry/instrumentation-express': `^${otelExpress}`,
    '@opentelemetry/instrumentation-http': `^${otel}`,
    '@opentelemetry/propagator-b3': '^2.0.1',
    '@opentelemetry/sdk-metrics': '^2.0.1',
    '@opentelemetry/sdk-trace-base': '^2.0.1',
    '@opentelemetry/sdk-trace-node': '^2.0.1',
    'axios': '^1.3.3',
    'cloudevents': '^10.0.0',
    'co': '^4.6.0',
    'express': '^5.1.0',
    'morgan': '^1.10.0',
    'mz': '^2.7.0',
  };
}

/**
 * What each release's Python image installs (its `requirements.txt`), as requirement lines, by the
 * top-level modules they (and the packages they bring along) provide.
 */
export const PYTHON_IMAGE_MODULES: { readonly [R in ServerlessRelease]: { readonly [module: string]: string } } = {
  [ServerlessRelease.V1_11_1]: pythonImageModules({
    setuptools: '82.0.0', requests: '>=2.31.0', prometheus: '0.24.1', otel: '1.40.0', cloudevents: '',
  }),
  [ServerlessRelease.V1_13_0]: pythonImageModules({
    setuptools: '82.0.1', requests: '>=2.34.2', prometheus: '0.25.0', otel: '1.43.0', cloudevents: '==1.12.1',
  }),
};

function pythonImageModules(v: { setuptools: string; requests: string; prometheus: string; otel: string; cloudevents: string }) {
  const requests = `requests${v.requests}`;
  const setuptools = `setuptools==${v.setuptools}`;
  const cheroot = 'cheroot==11.1.2';
  const otelSdk = `opentelemetry-sdk==${v.otel}`;
  return {
    setuptools, pkg_resources: setuptools, _distutils_hack: setuptools, distutils: setuptools,
    requests, urllib3: requests, idna: requests, certifi: requests, charset_normalizer: requests,
    bottle: 'bottle==0.13.4',
    cheroot, more_itertools: cheroot, jaraco: cheroot,
    requestlogger: 'wsgi-request-logger==0.4.6',
    prometheus_client: `prometheus_client==${v.prometheus}`,
    opentelemetry: otelSdk, typing_extensions: otelSdk, importlib_metadata: otelSdk, zipp: otelSdk, wrapt: otelSdk, deprecated: otelSdk,
    google: `opentelemetry-exporter-otlp-proto-http==${v.otel}`,
    cloudevents: `cloudevents${v.cloudevents}`, deprecation: `cloudevents${v.cloudevents}`, packaging: `cloudevents${v.cloudevents}`,
  } as { readonly [module: string]: string };
}

/** The top-level modules of Python 3.12's standard library (`sys.stdlib_module_names`, without private ones). */
const PYTHON_STDLIB = new Set(('__future__ abc aifc antigravity argparse array ast asyncio atexit audioop base64 bdb binascii bisect builtins bz2 '
  + 'cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys compileall concurrent configparser contextlib '
  + 'contextvars copy copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis doctest email encodings ensurepip enum '
  + 'errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp '
  + 'gzip hashlib heapq hmac html http idlelib imaplib imghdr importlib inspect io ipaddress itertools json keyword lib2to3 linecache '
  + 'locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt ntpath '
  + 'nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix '
  + 'posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource '
  + 'rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site smtplib sndhdr socket socketserver spwd sqlite3 '
  + 'sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable sys sysconfig syslog '
  + 'tabnanny tarfile telnetlib tempfile termios textwrap this threading time timeit tkinter token tokenize tomllib trace traceback '
  + 'tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave weakref webbrowser winreg '
  + 'winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo').split(' '));

/**
 * Python modules whose distribution on PyPI has another name: only for these (and for handlers
 * that declare nothing) can a check be sure a module is not declared, since a requirements.txt
 * names distributions and a distribution may provide modules of any name.
 */
const PYTHON_DISTRIBUTIONS: { readonly [module: string]: string } = {
  yaml: 'PyYAML', bs4: 'beautifulsoup4', PIL: 'Pillow', dateutil: 'python-dateutil', sklearn: 'scikit-learn', cv2: 'opencv-python',
  jwt: 'PyJWT', dotenv: 'python-dotenv', magic: 'python-magic', psycopg2: 'psycopg2-binary', MySQLdb: 'mysqlclient', Crypto: 'pycryptodome',
  OpenSSL: 'pyOpenSSL', serial: 'pyserial', usb: 'pyusb', docx: 'python-docx', pptx: 'python-pptx', git: 'GitPython', jose: 'python-jose',
  multipart: 'python-multipart', slugify: 'python-slugify', zmq: 'pyzmq', attr: 'attrs', google: 'google-api-core', kafka: 'kafka-python',
  ldap: 'python-ldap', nacl: 'PyNaCl', skimage: 'scikit-image', fitz: 'PyMuPDF', telegram: 'python-telegram-bot', win32api: 'pywin32',
};

/** A problem of the handler's file names in a function folder. */
export interface FolderFileProblem {
  /** The file at fault. */
  readonly file: string;
  /** What is wrong and how to fix it. */
  readonly message: string;
}

/**
 * The problems of the file names of a function folder: a misspelt handler or dependencies file
 * (`requirement.txt`, `packages.json`, `Requirements.txt`, `handler.JS`), which the controller
 * would not read; two handlers of different runtimes; the dependencies file of the other runtime.
 *
 * @param files the names of the folder's files
 * @param family the family of the Function's runtime
 * @returns the problems, one per file
 */
export function folderFileProblems(files: readonly string[], family: RuntimeFamily): FolderFileProblem[] {
  const own = RUNTIME_FILES[family];
  const known = Object.values(RUNTIME_FILES).flatMap(f => [f.handler, f.dependencies]);
  const problems: FolderFileProblem[] = [];
  const handlers = Object.entries(RUNTIME_FILES).filter(([, f]) => files.includes(f.handler));
  if (handlers.length > 1) {
    const others = handlers.filter(([f]) => f !== family).map(([, f]) => f.handler);
    problems.push({
      file: others[0] ?? own.handler,
      message: `the folder holds ${handlers.map(([, f]) => f.handler).join(' and ')}: a Function has one handler, and the ${family} runtime `
        + `would silently ignore ${others.join(', ')}: move the other handler into a folder of its own, or delete it`,
    });
  }
  for (const [other, f] of Object.entries(RUNTIME_FILES)) {
    if (other !== family && files.includes(f.dependencies) && !files.includes(f.handler)) {
      problems.push({
        file: f.dependencies, message: `${f.dependencies} declares ${other} dependencies, but this is a ${family} Function, whose runtime reads `
          + `${own.dependencies} only: move the dependencies into ${own.dependencies} and delete ${f.dependencies}`,
      });
    }
  }
  for (const file of files) {
    if (known.includes(file)) continue;
    const lower = file.toLowerCase();
    // The name it is most likely meant to be: case apart, or a few letters away (extension and stem alike).
    const meant = known.find(k => k.toLowerCase() === lower)
      ?? closestMatch(file, known.filter(k => editDistance(stem(lower), stem(k)) <= 2 && extensionsAlike(lower, k)));
    if (!meant) continue;
    const present = files.includes(meant);
    problems.push({
      file, message: `not read: the runtime reads ${meant}${meant.toLowerCase() === lower ? ' (the name is case-sensitive)' : ''}; did you mean ${meant}? `
        + (present ? `${meant} exists too: move what ${file} holds into it and delete ${file}` : `rename it to ${meant}`),
    });
  }
  return problems;
}

function stem(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 ? name : name.slice(0, dot);
}

function extensionsAlike(a: string, b: string): boolean {
  const ext = (n: string) => (n.includes('.') ? n.slice(n.indexOf('.') + 1) : '');
  const [x, y] = [ext(a), ext(b.toLowerCase())];
  if (x === y) return true;
  // `.yml` for `.yaml`, `.jsn` for `.json`, `.text` for `.txt`, `.mjs`/`.cjs` for `.js`: one or two letters apart.
  return x !== '' && editDistance(x, y) <= 2 && !(['py', 'js'].includes(x) && ['py', 'js'].includes(y));
}

/**
 * Every problem of a Function's handler code: syntax, `main`, and imports nothing provides.
 *
 * @returns the problems, in the order of the files and lines
 */
export function handlerCodeProblems(code: HandlerCode): HandlerCodeProblem[] {
  const family = runtimeFamily(code.runtime);
  if (family === RuntimeFamily.NODEJS) return nodeProblems(code);
  if (family === RuntimeFamily.PYTHON) return pythonProblems(code);
  return [];
}

/**
 * Reads Python handlers that will be checked later: on this thread when the reader here reads them
 * with certainty (most handlers), else by sending them to tree-sitter in the parser's worker
 * thread, started then, which parses them while this thread goes on (see {@link _parsePythonHandlers}).
 *
 * @param sources Python handlers that will be checked
 * @internal
 */
export function _preparePythonParser(sources: readonly string[]): void {
  // Called for each Function's handler as it is made: no closure, and a list only for what is left.
  let left: string[] | undefined;
  for (let i = 0; i < sources.length; i++) {
    if (!pythonFacts.has(sources[i]) && !readPythonHere(sources[i])) (left ??= []).push(sources[i]);
  }
  if (left) sendPythonSources(left);
}

/**
 * Reads the Python handlers among many, those the reader of this thread reads here, and sends the
 * others to tree-sitter in the parser's worker at once, in one round trip: what synth and
 * `validate` call with all the Functions they are about to check. It does not wait: the check of
 * each handler ({@link handlerCodeProblems}) waits for its own answer only, so that this thread
 * checks the first Functions while the worker parses the others. A handler the parser fails on is
 * left to that check to report. (Node.js handlers are parsed on this thread where they are checked:
 * acorn on this thread cost less, in all, than sending them to a worker.)
 *
 * @param codes the runtime and source of each handler
 * @internal
 */
export function _parsePythonHandlers(codes: Iterable<{ readonly runtime: string; readonly source: string }>): void {
  const sources: string[] = [];
  for (const code of codes) {
    // Most were read as they came (by _preparePythonParser): the memo answers before the runtime is looked at.
    if (!pythonFacts.has(code.source) && runtimeFamily(code.runtime) === RuntimeFamily.PYTHON && !readPythonHere(code.source)) sources.push(code.source);
  }
  try {
    askSources(sources);
  } catch {
    // The parser did not start: the check of each handler says so.
  }
}

/**
 * Ends the handler parser's worker once it has answered all it was sent: what synth calls after
 * checking every Function, so that the worker's memory is not held while it writes the output. A
 * later check starts the worker again.
 *
 * @returns whether a worker was ended
 * @internal
 */
export function _releaseHandlerParser(): boolean {
  return stopParser();
}

/**
 * Whether a Function accepts a warning.
 *
 * @param problem the warning
 * @param accepted what the Function accepts: warning names, or `name:module`
 */
export function isAccepted(problem: HandlerCodeProblem, accepted: readonly string[]): boolean {
  if (!problem.warning) return false;
  return accepted.includes(problem.warning) || (problem.module !== undefined && accepted.includes(`${problem.warning}:${problem.module}`));
}

/** A problem in one line: `handler.py:3: SyntaxError: expected ':': add ...`. */
export function describeHandlerProblem(problem: HandlerCodeProblem, file: string = problem.file): string {
  const accept = problem.warning
    ? ` (or, if a declared package brings it along, accept the warning: acceptWarnings: [${problem.warning}:${problem.module}])` : '';
  return `${file}${problem.line ? `:${problem.line}` : ''}: ${problem.message}: ${problem.fix}${accept}`;
}

// ---- Node.js ----

interface PackageJson {
  readonly type?: unknown;
  readonly dependencies?: unknown;
  readonly devDependencies?: unknown;
  readonly optionalDependencies?: unknown;
  readonly peerDependencies?: unknown;
}

function packageJsonOf(dependencies: string | undefined): PackageJson | undefined {
  try {
    const parsed = JSON.parse(dependencies ?? '');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as PackageJson : undefined;
  } catch {
    return undefined;
  }
}

function names(field: unknown): string[] {
  return typeof field === 'object' && field !== null ? Object.keys(field) : [];
}

/** The Node.js major version of a runtime's image in a release (or of another release that has it). */
function nodeMajor(runtime: string, release: ServerlessRelease): number {
  const version = runtimeContract(release).nodeVersions[runtime]
    ?? Object.values(ServerlessRelease).map(r => runtimeContract(r).nodeVersions[runtime]).find(Boolean);
  return version ? Number(version.split('.')[0]) : Number(/\d+/.exec(runtime)?.[0] ?? 0);
}

const ESM_SYNTAX = /(^|[\n;])\s*(import\s*[\w{*'"]|export\s+[\w{*])/;

/** A package.json that can hold "type": it spells `type`, or escapes a character (made once: a literal in a function is a new object at each call). */
const MAY_HOLD_TYPE = /type|\\/;

/** What a handler's JavaScript holds, read once per distinct source and kind (script or module). */
interface JavaScriptFacts {
  /** Why it does not parse as that kind: acorn's error. */
  readonly error?: Error & { loc?: { line: number } };
  /** The modules it loads, as {@link nodeImports} finds them. */
  readonly imports: readonly ImportUse[];
  /** Of a module: the CommonJS names it uses without declaring them, each with the line of its first use. */
  readonly commonJsNames: readonly (readonly [string, number])[];
}

/** The facts of each handler, by kind and source: each distinct source read or parsed once per kind. */
const javaScriptFacts = { script: new ContentMemo<JavaScriptFacts>(8 * 2 ** 20), module: new ContentMemo<JavaScriptFacts>(8 * 2 ** 20) };

/** Text that may hold an import (an escaped identifier aside): only such a handler's tree is walked for them. */
const MAY_IMPORT = /\b(require|import|from)\b|\\u/;

/** How acorn reads a handler of each kind. */
function acornOptions(sourceType: 'script' | 'module'): Acorn.Options {
  return { ecmaVersion: 'latest', sourceType, allowHashBang: true, allowReturnOutsideFunction: sourceType === 'script' };
}

/** acorn, loaded with the first handler the reader of this thread leaves to it. */
let acornModule: typeof Acorn | undefined;

/**
 * A handler's facts: from the reader of this thread ({@link readJavaScriptOutline}) where it is
 * sure (then acorn parses the source, and its tree gives the same facts), else from acorn's tree.
 */
function readJavaScript(source: string, sourceType: 'script' | 'module'): JavaScriptFacts {
  const memo = javaScriptFacts[sourceType];
  let facts = memo.get(source);
  if (!facts) {
    facts = readJavaScriptHere(source, sourceType) ?? readJavaScriptTree(source, sourceType);
    memo.set(source, facts);
  }
  return facts;
}

function readJavaScriptHere(source: string, sourceType: 'script' | 'module'): JavaScriptFacts | undefined {
  const outline = readJavaScriptOutline(source, sourceType);
  if (!outline) return undefined;
  _work.nodeReads++;
  if (!outline.imports.length && !outline.commonJsNames.length) return NO_JAVASCRIPT_FACTS;
  const lineOf = lineCounter(source);
  return {
    imports: outline.imports.map(({ module, start }) => ({ module, line: lineOf(start) })),
    commonJsNames: outline.commonJsNames.map(([name, start]) => [name, lineOf(start)] as const),
  };
}

/** The facts of a handler without imports or CommonJS names, shared. */
const NO_JAVASCRIPT_FACTS: JavaScriptFacts = { imports: [], commonJsNames: [] };

function readJavaScriptTree(source: string, sourceType: 'script' | 'module'): JavaScriptFacts {
  _work.nodeParses++;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const acorn = acornModule ??= require('acorn') as typeof Acorn;
  try {
    // Without locations, which cost three objects per node: the few lines wanted are counted from offsets (an error has its own).
    const program = acorn.parse(source, acornOptions(sourceType));
    const lineOf = lineCounter(source);
    // A walk of the tree only where the text can hold what it looks for (an escaped identifier aside).
    return {
      imports: MAY_IMPORT.test(source) ? nodeImports(program, lineOf) : [],
      commonJsNames: sourceType === 'module' && /\b(require|module|exports|__filename|__dirname)\b|\\u/.test(source) ? commonJsNamesUsed(program, lineOf) : [],
    };
  } catch (e) {
    return { error: e as Error & { loc?: { line: number } }, imports: [], commonJsNames: [] };
  }
}

/**
 * A handler's facts both ways, for the tests and the sweep that compare them: the reader's (when
 * it is sure) and acorn's.
 *
 * @internal
 */
export function _readJavaScriptBothWays(source: string, sourceType: 'script' | 'module'): { here?: JavaScriptFacts; tree: JavaScriptFacts } {
  return { here: readJavaScriptHere(source, sourceType), tree: readJavaScriptTree(source, sourceType) };
}

/**
 * The one-based line of an offset in JavaScript source, as acorn counts lines (a line ends at
 * `\r\n`, `\r`, `\n`, U+2028 or U+2029); the lines' starts are found at the first call.
 */
function lineCounter(source: string): (offset: number) => number {
  let starts: number[] | undefined;
  return offset => {
    if (!starts) {
      starts = [];
      for (const match of source.matchAll(/\r\n?|\n|\u2028|\u2029/g)) starts.push(match.index + match[0].length);
    }
    // How many lines start at or before the offset, after the first.
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (starts[middle] <= offset) low = middle + 1;
      else high = middle;
    }
    return low + 1;
  };
}

function nodeProblems(code: HandlerCode): HandlerCodeProblem[] {
  const release = code.release ?? DEFAULT_RELEASE;
  // package.json is parsed once at most, when asked: for its "type" only when it may hold one.
  let pkg: PackageJson | undefined;
  let parsed = false;
  const packageJson = () => {
    if (!parsed) {
      pkg = packageJsonOf(code.dependencies);
      parsed = true;
    }
    return pkg;
  };
  const file = RUNTIME_FILES[RuntimeFamily.NODEJS].handler;
  const declaredEsm = code.dependencies !== undefined && MAY_HOLD_TYPE.test(code.dependencies) && packageJson()?.type === 'module';
  let esm = declaredEsm;
  let facts = readJavaScript(code.source, esm ? 'module' : 'script');
  const scriptError = facts.error;
  if (scriptError) {
    let moduleError: unknown = scriptError;
    if (!esm && ESM_SYNTAX.test(code.source)) {
      const asModule = readJavaScript(code.source, 'module');
      if (!asModule.error) {
        facts = asModule;
        // Node.js 22.7 and later run a file with ES module syntax as one (module detection); 20 does not.
        if (nodeMajor(code.runtime, release) >= 22) {
          esm = true;
          moduleError = undefined;
        } else {
          return [{
            rule: 'handlerSyntax', file, line: scriptError.loc?.line,
            message: `SyntaxError: Cannot use import statement outside a module (Node.js ${nodeMajor(code.runtime, release)} loads handler.js as CommonJS)`,
            fix: 'add "type": "module" to package.json, or write CommonJS (require() and exports.main = ...)',
          }];
        }
      } else {
        moduleError = asModule.error;
      }
    }
    if (moduleError !== undefined) return [javaScriptSyntaxProblem(code.source, moduleError as Error & { loc?: { line: number } }, esm || ESM_SYNTAX.test(code.source))];
  }
  return commonJsInModuleProblems(facts, esm, declaredEsm).concat(nodeImportProblems(facts.imports, code, packageJson, esm, release));
}

/** The CommonJS names an ES module does not have. */
const COMMONJS_NAMES = ['require', 'module', 'exports', '__filename', '__dirname'];

/** The CommonJS names a program uses without declaring them, each with the line of its first use. */
function commonJsNamesUsed(program: Acorn.Program, lineOf: (offset: number) => number): (readonly [string, number])[] {
  const declared = new Set<string>();
  const used = new Map<string, number>();
  const visit = (node: any, parent: any, key: string): void => {
    if (!node || typeof node.type !== 'string') return;
    if (node.type === 'Identifier' && COMMONJS_NAMES.includes(node.name)) {
      const isProperty = (parent?.type === 'MemberExpression' && key === 'property' && !parent.computed)
        || (parent?.type === 'Property' && key === 'key' && !parent.computed && !parent.shorthand)
        || (['MethodDefinition', 'PropertyDefinition'].includes(parent?.type) && key === 'key')
        || parent?.type === 'ExportSpecifier' || (parent?.type === 'ImportSpecifier' && key === 'imported');
      const isDeclaration = (parent?.type === 'VariableDeclarator' && key === 'id') || (/Function/.test(parent?.type ?? '') && (key === 'id' || key === 'params'))
        || (parent?.type === 'ImportSpecifier' && key === 'local') || parent?.type === 'ImportDefaultSpecifier' || parent?.type === 'ImportNamespaceSpecifier'
        || (parent?.type === 'ClassDeclaration' && key === 'id') || (parent?.type === 'CatchClause' && key === 'param');
      if (isDeclaration) declared.add(node.name);
      else if (!isProperty && !used.has(node.name)) used.set(node.name, lineOf(node.start));
    }
    for (const [k, value] of Object.entries(node)) {
      if (Array.isArray(value)) value.forEach(v => visit(v, node, k));
      else if (value && typeof value === 'object') visit(value, node, k);
    }
  };
  visit(program, undefined, '');
  return [...used].filter(([name]) => !declared.has(name));
}

/**
 * An ES module that uses `require`, `module`, `exports`, `__filename` or `__dirname` without
 * declaring them: Node.js throws a ReferenceError where the code runs (at load, or at every request).
 */
function commonJsInModuleProblems(facts: JavaScriptFacts, esm: boolean, declaredEsm: boolean): HandlerCodeProblem[] {
  if (!esm) return [];
  const why = declaredEsm ? 'package.json says "type": "module"' : 'Node.js detects ES module syntax in it';
  return facts.commonJsNames.map(([name, line]) => ({
    rule: 'handlerModuleScope', file: RUNTIME_FILES[RuntimeFamily.NODEJS].handler, line,
    message: `ReferenceError: ${name} is not defined in ES module scope${name === 'require' ? ', you can use import instead' : ''} `
      + `(handler.js is an ES module: ${why})`,
    fix: name === 'require' ? 'use import (or createRequire from node:module)'
      : name === 'module' || name === 'exports' ? 'export main with `export function main(event, context)`, or drop "type": "module" to write CommonJS'
        : 'use import.meta.dirname and import.meta.filename',
  }));
}

/** The syntax error as Node.js words it (when this Node.js agrees there is one), with acorn's line otherwise. */
function javaScriptSyntaxProblem(source: string, error: Error & { loc?: { line: number } }, esm: boolean): HandlerCodeProblem {
  const file = RUNTIME_FILES[RuntimeFamily.NODEJS].handler;
  const fix = 'correct the code at that line (node --check handler.js shows the same)';
  let message = `SyntaxError: ${error.message.replace(/ \(\d+:\d+\)$/, '')}`;
  let line = error.loc?.line;
  const v8 = esm ? v8ModuleError(source) : v8ScriptError(source);
  if (v8) {
    message = v8.message;
    line = v8.line ?? line;
  }
  return { rule: 'handlerSyntax', file, line, message, fix };
}

function v8ScriptError(source: string): { message: string; line?: number } | undefined {
  try {
    vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: 'handler.js' });
    return undefined;
  } catch (e) {
    const error = e as { name?: unknown; message?: unknown; stack?: unknown };
    if (error?.name !== 'SyntaxError') return undefined;
    const line = /^handler\.js:(\d+)/.exec(String(error.stack ?? ''))?.[1];
    return { message: `SyntaxError: ${String(error.message)}`, line: line ? Number(line) : undefined };
  }
}

function v8ModuleError(source: string): { message: string; line?: number } | undefined {
  const result = spawnSync(process.execPath, ['--check', '--input-type=module'], { input: source, encoding: 'utf8', timeout: 60_000 });
  if (result.status === 0 || !result.stderr) return undefined;
  const message = /^SyntaxError: .*$/m.exec(result.stderr)?.[0];
  const line = /^\[stdin\]:(\d+)/m.exec(result.stderr)?.[1];
  return message ? { message, line: line ? Number(line) : undefined } : undefined;
}

interface ImportUse {
  readonly module: string;
  readonly line: number;
}

/** Every module the program loads by a constant name, outside `try` blocks (a guarded import is the handler's own business). */
function nodeImports(program: Acorn.Program, lineOf: (offset: number) => number): ImportUse[] {
  const found: ImportUse[] = [];
  const literal = (n: any): string | undefined => (n?.type === 'Literal' && typeof n.value === 'string' ? n.value
    : n?.type === 'TemplateLiteral' && n.expressions.length === 0 ? n.quasis[0].value.cooked : undefined);
  const visit = (node: any, guarded: boolean): void => {
    if (!node || typeof node.type !== 'string') return;
    const add = (value: string | undefined) => {
      if (value !== undefined && !guarded) found.push({ module: value, line: lineOf(node.start) });
    };
    switch (node.type) {
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration':
        if (node.source) add(literal(node.source));
        break;
      case 'ImportExpression':
        add(literal(node.source));
        break;
      case 'CallExpression':
        if (node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments.length === 1) add(literal(node.arguments[0]));
        break;
      default:
        break;
    }
    for (const [key, value] of Object.entries(node)) {
      const inTry = guarded || (node.type === 'TryStatement' && key === 'block' && node.handler);
      if (Array.isArray(value)) value.forEach(v => visit(v, inTry));
      else if (value && typeof value === 'object') visit(value, inTry);
    }
  };
  visit(program, false);
  return found;
}

/** Node.js's built-in modules, as a set once. */
let nodeBuiltins: ReadonlySet<string> | undefined;

function nodeImportProblems(imports: readonly ImportUse[], code: HandlerCode, packageJson: () => PackageJson | undefined, esm: boolean,
  release: ServerlessRelease): HandlerCodeProblem[] {
  // Most handlers import nothing: nothing to look up.
  if (!imports.length) return [];
  const pkg = packageJson();
  const builtins = nodeBuiltins ??= new Set(builtinModules);
  const contract = runtimeContract(release);
  const declared = new Set([...names(pkg?.dependencies), ...names(pkg?.optionalDependencies), ...names(pkg?.peerDependencies),
    ...(contract.npmInstallsDevDependencies ? names(pkg?.devDependencies) : [])]);
  const devOnly = new Set(contract.npmInstallsDevDependencies ? [] : names(pkg?.devDependencies));
  const image = NODE_IMAGE_PACKAGES[release];
  const problems: HandlerCodeProblem[] = [];
  const seen = new Set<string>();
  for (const use of imports) {
    const specifier = use.module;
    if (/^(\.|\/|[a-z]+:)/i.test(specifier) || builtins.has(specifier)) continue;
    const parts = specifier.split('/');
    const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    if (builtins.has(name) || declared.has(name) || image[name] !== undefined || seen.has(name)) continue;
    seen.add(name);
    const runtimeSays = esm ? `Cannot find package '${name}' imported from /usr/src/app/function/handler.js` : `Cannot find module '${specifier}'`;
    problems.push({
      rule: HandlerWarning.UNDECLARED_IMPORT, warning: HandlerWarning.UNDECLARED_IMPORT, module: name, file: RUNTIME_FILES[RuntimeFamily.NODEJS].handler, line: use.line,
      message: devOnly.has(name)
        ? `'${name}' is only in devDependencies of package.json, which Serverless ${release} does not install (npm ${contract.npmInstall.join(' ')}): the Pod fails with "${runtimeSays}"`
        : `'${name}' is imported but not declared in package.json, and the ${code.runtime} image does not provide it: the Pod fails with "${runtimeSays}"`,
      fix: `add "${name}" to "dependencies" of package.json`,
    });
  }
  return problems;
}

// ---- Python ----

/** What Python 3.12 calls the block a compound statement opens, for "expected an indented block after ...". */
const BLOCK_OWNERS: { readonly [type: string]: string } = {
  function_definition: 'function definition', class_definition: 'class definition', if_statement: '\'if\' statement',
  elif_clause: '\'elif\' statement', else_clause: '\'else\' statement', for_statement: '\'for\' statement', while_statement: '\'while\' statement',
  with_statement: '\'with\' statement', try_statement: '\'try\' statement', except_clause: '\'except\' statement',
  except_group_clause: '\'except*\' statement', finally_clause: '\'finally\' statement', match_statement: '\'match\' statement',
  case_clause: '\'case\' statement',
};

const PYTHON_FILE = RUNTIME_FILES[RuntimeFamily.PYTHON].handler;
const PYTHON_FIX = 'correct the code at that line (python3 -m py_compile handler.py shows the same)';

/** What a Python handler holds, read once per distinct source: the tree itself is not kept. */
interface PythonFacts {
  /** The first syntax problem, Python's tokenizer's or its parser's. */
  readonly syntax?: HandlerCodeProblem;
  /** Without a syntax problem: that `main` is missing at the top level. */
  readonly main: readonly HandlerCodeProblem[];
  /** The modules it imports, as {@link pythonImports} finds them. */
  readonly imports: readonly ImportUse[];
}

/** The facts of each Python handler, by source. */
const pythonFacts = new ContentMemo<PythonFacts>(16 * 2 ** 20);

/**
 * The facts of a Python handler: read on this thread when the source lies in the subset that
 * {@link readPythonOutline} reads with certainty (its tree then has no problem), else from
 * tree-sitter's tree, the one the worker parsed when it was sent before, or parsed now.
 *
 * @throws when the parser cannot be loaded or does not answer in time
 */
function readPython(source: string): PythonFacts {
  return pythonFacts.get(source) ?? readPythonHere(source) ?? readPythonTree(source);
}

/** The Python handlers the reader of this thread leaves to tree-sitter: each asked about again (at synth, before its check and at it) is not read again. */
const leftToTree = new ContentMemo<true>(16 * 2 ** 20);

/** The facts of a Python handler the reader of this thread reads, kept; `undefined` when it leaves the source to tree-sitter. */
function readPythonHere(source: string): PythonFacts | undefined {
  if (leftToTree.has(source)) return undefined;
  const outline = readPythonOutline(source);
  if (!outline) {
    leftToTree.set(source, true);
    return undefined;
  }
  _work.pythonReads++;
  // What the reader reads, Python's tokenizer reads too (the tests and the sweep compare it with tree-sitter's tree and pythonLexicalProblem): no problem.
  const facts = pythonFactsOf(undefined, outline);
  pythonFacts.set(source, facts);
  return facts;
}

/** The facts of a Python handler from tree-sitter's tree, kept. */
function readPythonTree(source: string): PythonFacts {
  const { syntax, outline } = readPythonTreeOnly(source);
  const facts = pythonFactsOf(syntax, outline);
  pythonFacts.set(source, facts);
  return facts;
}

/** What the checks read from tree-sitter's tree of a source: the first problem, Python's tokenizer's or its parser's, and the outline. */
function readPythonTreeOnly(source: string): { syntax?: HandlerCodeProblem; outline: PythonOutline } {
  const tree = takeSentPythonTree(source) ?? parsePython(source);
  const syntax = pythonSyntaxProblem(tree, source);
  // Python stops at the first problem, its tokenizer's or its parser's: the earlier line wins.
  const lexical = pythonLexicalProblem(source);
  const first = lexical && (!syntax || (lexical.line ?? 0) <= (syntax.line ?? 0)) ? lexical : syntax;
  return { syntax: first, outline: pythonOutline(tree) };
}

/** The facts of a source, from its first problem (if any) and its outline. */
function pythonFactsOf(syntax: HandlerCodeProblem | undefined, outline: PythonOutline): PythonFacts {
  return { syntax, main: syntax ? [] : pythonMainProblems(outline), imports: outline.imports };
}

/**
 * What a Python source gives both ways: read on this thread (`undefined` where that reader leaves it
 * to tree-sitter), and from tree-sitter's tree with the problem Python's tokenizer finds
 * ({@link pythonLexicalProblem}), each without the memo. For the tests that compare them: where the
 * reader reads a source, neither has a problem.
 *
 * @internal
 */
export function _readPythonBothWays(source: string): { here?: { syntax?: HandlerCodeProblem; outline: PythonOutline }; tree: { syntax?: HandlerCodeProblem; outline: PythonOutline } } {
  const outline = readPythonOutline(source);
  return { here: outline && { outline }, tree: readPythonTreeOnly(source) };
}

function pythonProblems(code: HandlerCode): HandlerCodeProblem[] {
  const facts = readPython(code.source);
  if (facts.syntax) return [facts.syntax];
  return facts.main.concat(pythonImportProblems(facts.imports, code));
}

const OPENERS: { readonly [c: string]: string } = { '(': ')', '[': ']', '{': '}' };
const CLOSERS: { readonly [c: string]: string } = { ')': '(', ']': '[', '}': '{' };

/**
 * What Python's tokenizer refuses before any parsing, worded as Python 3.12 does: brackets that
 * never close or close the wrong one, strings that never end, indentation that matches nothing.
 */
function pythonLexicalProblem(source: string): HandlerCodeProblem | undefined {
  const problem = (line: number, message: string): HandlerCodeProblem => ({ rule: 'handlerSyntax', file: PYTHON_FILE, line, message, fix: PYTHON_FIX });
  const nul = source.indexOf('\0');
  if (nul >= 0) return problem(source.slice(0, nul).split('\n').length, 'SyntaxError: source code cannot contain null bytes');
  const stack: { char: string; line: number }[] = [];
  const indents = [0];
  let line = 1;
  let atLineStart = true;
  let continued = false;
  let previousEndsBlock = false;
  let i = 0;
  const n = source.length;
  while (i < n) {
    const c = source[i];
    if (atLineStart) {
      // Measure the indentation of a new logical line (tabs to multiples of 8, as the tokenizer does).
      let width = 0;
      let j = i;
      while (j < n && (source[j] === ' ' || source[j] === '\t' || source[j] === '\f')) {
        width = source[j] === '\t' ? (Math.floor(width / 8) + 1) * 8 : source[j] === '\f' ? 0 : width + 1;
        j++;
      }
      atLineStart = false;
      const blank = j >= n || source[j] === '\n' || source[j] === '#' || (source[j] === '\r' && source[j + 1] === '\n');
      if (!blank && stack.length === 0 && !continued) {
        const top = indents[indents.length - 1];
        if (width > top) {
          if (!previousEndsBlock) return problem(line, 'IndentationError: unexpected indent');
          indents.push(width);
        } else if (width < top) {
          while (indents.length && indents[indents.length - 1] > width) indents.pop();
          if (indents[indents.length - 1] !== width) return problem(line, 'IndentationError: unindent does not match any outer indentation level');
        }
      }
      continued = false;
      i = j;
      continue;
    }
    if (c === '#') {
      while (i < n && source[i] !== '\n') i++;
      continue;
    }
    if (c === '\\' && (source[i + 1] === '\n' || (source[i + 1] === '\r' && source[i + 2] === '\n'))) {
      continued = true;
      i += source[i + 1] === '\n' ? 2 : 3;
      line++;
      atLineStart = true;
      continue;
    }
    if (c === '\n') {
      line++;
      i++;
      if (stack.length === 0) atLineStart = true;
      continue;
    }
    if (c === '"' || c === '\'') {
      const triple = source.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      const start = line;
      // A raw prefix keeps backslashes, but a backslash still escapes the quote for the tokenizer.
      let j = i + quote.length;
      let closed = false;
      while (j < n) {
        if (source[j] === '\\') {
          if (source[j + 1] === '\n') line++;
          j += 2;
          continue;
        }
        if (source[j] === '\n') {
          if (!triple) break;
          line++;
        }
        if (source.startsWith(quote, j)) {
          closed = true;
          j += quote.length;
          break;
        }
        j++;
      }
      if (!closed) {
        return triple ? problem(start, `SyntaxError: unterminated triple-quoted string literal (detected at line ${source.slice(0, n).split('\n').length})`)
          : problem(start, `SyntaxError: unterminated string literal (detected at line ${start})`);
      }
      i = j;
      previousEndsBlock = false;
      continue;
    }
    if (OPENERS[c]) stack.push({ char: c, line });
    else if (CLOSERS[c]) {
      const open = stack.pop();
      if (!open) return problem(line, `SyntaxError: unmatched '${c}'`);
      if (open.char !== CLOSERS[c]) {
        return problem(line, `SyntaxError: closing parenthesis '${c}' does not match opening parenthesis '${open.char}'`
          + (open.line !== line ? ` on line ${open.line}` : ''));
      }
    }
    if (c !== ' ' && c !== '\t' && c !== '\r') previousEndsBlock = c === ':' && stack.length === 0;
    i++;
  }
  const open = stack[0];
  if (open) return problem(open.line, `SyntaxError: '${open.char}' was never closed`);
  return undefined;
}

/** A node and every node below it, in document order (each before its children, children in order). */
function walk(node: PyNode): PyNode[] {
  // A stack rather than a recursive generator, whose delegation costs a step per level for every node.
  const nodes: PyNode[] = [];
  const stack = [node];
  while (stack.length) {
    const next = stack.pop()!;
    nodes.push(next);
    for (let i = next.children.length - 1; i >= 0; i--) stack.push(next.children[i]);
  }
  return nodes;
}

/** The first place the grammar refuses, worded as Python 3.12 words the common cases. */
function pythonSyntaxProblem(tree: PyNode, source: string): HandlerCodeProblem | undefined {
  const lines = source.split('\n');
  for (const node of walk(tree)) {
    if (node.type === 'print_statement' || node.type === 'exec_statement') {
      const what = node.type === 'print_statement' ? 'print' : 'exec';
      return {
        rule: 'handlerSyntax', file: PYTHON_FILE, line: node.row + 1,
        message: `SyntaxError: Missing parentheses in call to '${what}'. Did you mean ${what}(...)?`, fix: `call ${what}(...) with parentheses (Python 3)`,
      };
    }
    const owner = BLOCK_OWNERS[node.type];
    const body = node.children.find(ch => ch.type === 'block');
    if (owner && body && body.children.length === 0 && body.row === body.endRow && body.column === body.endColumn) {
      const next = lines.slice(node.row + 1).findIndex(l => l.trim() !== '' && !l.trim().startsWith('#'));
      return {
        rule: 'handlerSyntax', file: PYTHON_FILE, line: next < 0 ? node.row + 1 : node.row + 2 + next,
        message: `IndentationError: expected an indented block after ${owner} on line ${node.row + 1}`,
        fix: 'indent the block under that line (or write pass)',
      };
    }
    if (node.type === 'ERROR' || node.missing) {
      // The innermost refusal is where the parser stopped.
      if (node.type === 'ERROR' && node.children.some(c => walk(c).some(d => d.type === 'ERROR' || d.missing))) continue;
      let row = node.row;
      const previous = lines.slice(0, row).map(l => l.replace(/#.*$/, '').trimEnd()).reverse().findIndex(l => l !== '');
      // An expression that ends its line unfinished (`x = `, `a +`): Python stops at that line's end.
      if (previous >= 0 && (lines[row] ?? '').slice(0, node.column).trim() === '' && /([=+\-*/%&|^<>,.@~]|\b(and|or|not|in|is|lambda))$/.test(
        lines[row - 1 - previous].replace(/#.*$/, '').trimEnd())) {
        row = row - 1 - previous;
      }
      const text = lines[row] ?? '';
      const header = /^\s*(async\s+)?(def|class|if|elif|else|for|while|with|try|except|finally|match|case)\b/.exec(text);
      if ((node.missing && node.type === ':') || (header && !/:\s*(#.*)?$/.test(text) && !/:/.test(text.replace(/#.*$/, '')))) {
        return { rule: 'handlerSyntax', file: PYTHON_FILE, line: row + 1, message: 'SyntaxError: expected \':\'', fix: `end line ${row + 1} with ':'` };
      }
      return { rule: 'handlerSyntax', file: PYTHON_FILE, line: row + 1, message: 'SyntaxError: invalid syntax', fix: PYTHON_FIX };
    }
  }
  return undefined;
}

/** The names a statement binds in its scope, and where. */
function boundNames(statement: PyNode): { name: string; row: number }[] {
  const out: { name: string; row: number }[] = [];
  const targets = (n: PyNode | undefined) => {
    if (!n) return;
    if (n.type === 'identifier') out.push({ name: n.text ?? '', row: n.row });
    else if (['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'parenthesized_expression'].includes(n.type)) n.children.forEach(targets);
  };
  switch (statement.type) {
    case 'function_definition':
    case 'class_definition':
      targets(statement.children.find(c => c.field === 'name'));
      break;
    case 'decorated_definition':
      statement.children.filter(c => c.field === 'definition').forEach(d => out.push(...boundNames(d)));
      break;
    case 'expression_statement':
      for (const c of statement.children) {
        let a: PyNode | undefined = c;
        while (a && (a.type === 'assignment' || a.type === 'augmented_assignment')) {
          targets(a.children.find(x => x.field === 'left'));
          a = a.children.find(x => x.field === 'right');
        }
      }
      break;
    case 'import_statement':
    case 'import_from_statement':
      for (const c of statement.children) {
        if (c.field !== 'name') continue;
        if (c.type === 'aliased_import') targets(c.children.find(x => x.field === 'alias'));
        else if (c.type === 'dotted_name') out.push({ name: (c.text ?? '').split('.')[0], row: c.row });
      }
      break;
    default:
      break;
  }
  return out;
}

/** What the checks read from a tree: where `main` is bound, and the imports. */
function pythonOutline(tree: PyNode): PythonOutline {
  return { ...pythonMainBindings(tree), imports: pythonImports(tree) };
}

/** `main` bound at the module's top level (also inside if/try/with/for blocks there), as `getattr(module, 'main')` needs. */
function pythonMainProblems(outline: PythonOutline): HandlerCodeProblem[] {
  if (outline.mainAtTop || outline.starImport) return [];
  const inside = outline.nestedMain;
  return [{
    rule: 'handlerMain', file: PYTHON_FILE, line: inside ? inside.row + 1 : undefined,
    message: 'AttributeError: module \'handler\' has no attribute \'main\' (the Python runtime calls main of handler.py, and the Pod fails at start)'
      + (inside ? `; main is defined inside ${inside.where}, not at the top level` : ''),
    fix: inside ? 'define main at the top level of handler.py' : 'define def main(event, context): at the top level of handler.py',
  }];
}

/** Where a tree binds `main`: at the top level, by a star import, or first inside a function or class. */
function pythonMainBindings(tree: PyNode): Omit<PythonOutline, 'imports'> {
  let star = false;
  let found = false;
  const nested: { row: number; where: string }[] = [];
  const scan = (statements: readonly PyNode[], depth: string | undefined) => {
    for (const s of statements) {
      if (s.type === 'import_from_statement' && s.children.some(c => c.type === 'wildcard_import')) star = true;
      if (boundNames(s).some(b => b.name === 'main')) {
        if (depth === undefined) found = true;
        else nested.push({ row: s.row, where: depth });
      }
      const definition = s.type === 'decorated_definition' ? s.children.find(c => c.field === 'definition') : s;
      if (definition && (definition.type === 'function_definition' || definition.type === 'class_definition')) {
        const name = definition.children.find(c => c.field === 'name')?.text ?? '';
        for (const block of definition.children.filter(c => c.type === 'block')) scan(block.children, depth ?? `${definition.type === 'class_definition' ? 'class' : 'function'} ${name}`);
        continue;
      }
      // Compound statements at this level bind in this scope.
      for (const part of walkBlocks(s)) scan(part.children, depth);
    }
  };
  scan(tree.children, undefined);
  return { mainAtTop: found, starImport: star, nestedMain: nested[0] };
}

/** The blocks of a compound statement that are not a new scope (if, else, try, except, with, for, while, match). */
function walkBlocks(statement: PyNode): PyNode[] {
  if (['function_definition', 'class_definition', 'decorated_definition'].includes(statement.type)) return [];
  const blocks: PyNode[] = [];
  for (const c of statement.children) {
    if (c.type === 'block') blocks.push(c);
    else if (/_clause$/.test(c.type) || c.type === 'block') blocks.push(...walkBlocks(c));
  }
  return blocks;
}

/** Python's normalized form of a distribution name (PEP 503), with `_` for the separators as in module names. */
function normalized(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '_');
}

/** The distributions a requirements.txt names, or `undefined` when a line can bring unknown ones (`-r`, `-e`, a URL). */
export function requirementNames(requirements: string): string[] | undefined {
  const out: string[] = [];
  for (const raw of requirements.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line || /^--?(index-url|extra-index-url|find-links|trusted-host|no-binary|only-binary|prefer-binary|pre|i|f)\b/.test(line)) continue;
    if (line.startsWith('-') || /:\/\//.test(line) || / @ /.test(line)) return undefined;
    const name = /^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(line)?.[0];
    if (name) out.push(name);
  }
  return out;
}

function pythonImports(tree: PyNode): ImportUse[] {
  const found: ImportUse[] = [];
  const visit = (node: PyNode, guarded: boolean) => {
    if (node.type === 'import_statement' || node.type === 'import_from_statement') {
      if (guarded) return;
      const modules = node.type === 'import_statement'
        ? node.children.filter(c => c.field === 'name').map(c => (c.type === 'aliased_import' ? c.children.find(x => x.field === 'name') : c))
        : [node.children.find(c => c.field === 'module_name')];
      for (const m of modules) {
        if (m && m.type === 'dotted_name' && m.text) found.push({ module: m.text.split('.')[0], line: m.row + 1 });
      }
      return;
    }
    const guards = node.type === 'try_statement' && node.children.some(c => c.type === 'except_clause' || c.type === 'except_group_clause');
    // `if TYPE_CHECKING:` imports only for type checkers: the runtime never runs them.
    const typing = node.type === 'if_statement'
      && walk(node.children.find(c => c.field === 'condition') ?? node).some(d => d.type === 'identifier' && d.text === 'TYPE_CHECKING');
    for (const child of node.children) visit(child, guarded || ((guards || (typing && child.field === 'consequence')) && child.type === 'block'));
  };
  visit(tree, false);
  return found;
}

function pythonImportProblems(imports: readonly ImportUse[], code: HandlerCode): HandlerCodeProblem[] {
  // Most handlers import nothing: no requirements to read.
  if (!imports.length) return [];
  const release = code.release ?? DEFAULT_RELEASE;
  const image = PYTHON_IMAGE_MODULES[release];
  const requirements = requirementNames(code.dependencies ?? '');
  if (!requirements) return [];
  const declared = new Set(requirements.map(normalized));
  const problems: HandlerCodeProblem[] = [];
  const seen = new Set<string>();
  for (const use of imports) {
    const module = use.module;
    if (PYTHON_STDLIB.has(module) || module.startsWith('_') || image[module] !== undefined || module === 'handler' || seen.has(module)) continue;
    seen.add(module);
    const distribution = PYTHON_DISTRIBUTIONS[module];
    const byName = [module, `python-${module}`, `py${module}`].some(n => declared.has(normalized(n)));
    if (byName || (distribution && declared.has(normalized(distribution)))) continue;
    // Sure only when nothing is declared, or when the module's distribution is known and not declared.
    if (requirements.length && !distribution) continue;
    problems.push({
      rule: HandlerWarning.UNDECLARED_IMPORT, warning: HandlerWarning.UNDECLARED_IMPORT, module, file: PYTHON_FILE, line: use.line,
      message: `'${module}' is imported but not declared in requirements.txt, and the ${code.runtime} image does not provide it: `
        + `the Pod fails with "ModuleNotFoundError: No module named '${module}'"`,
      fix: `add ${distribution ?? module} to requirements.txt${distribution ? ` (the package that provides the module ${module})` : ' (the name of the package on PyPI that provides it)'}`,
    });
  }
  return problems;
}

/**
 * The problems of a Function object's inline handler code, as violations of `spec.source.inline`,
 * less the warnings its {@link ACCEPT_WARNINGS_ANNOTATION} accepts. A Git source is not read.
 *
 * @param object the Function
 * @param release the release whose runtime images run it
 */
export function handlerCodeViolations(object: unknown, release: ServerlessRelease = DEFAULT_RELEASE): Violation[] {
  const fn = object as { metadata?: { annotations?: { [k: string]: unknown } }; spec?: { runtime?: unknown; source?: { inline?: { source?: unknown; dependencies?: unknown } } } };
  const inline = fn?.spec?.source?.inline;
  if (typeof fn?.spec?.runtime !== 'string' || typeof inline?.source !== 'string') return [];
  const dependencies = typeof inline.dependencies === 'string' ? inline.dependencies : undefined;
  const problems = handlerCodeProblems({ runtime: fn.spec.runtime, source: inline.source, dependencies, release });
  // Most handlers have none: nothing to filter or word.
  if (!problems.length) return [];
  const accepted = acceptedWarnings(fn.metadata?.annotations?.[ACCEPT_WARNINGS_ANNOTATION]);
  return problems
    .filter(p => !isAccepted(p, accepted))
    .map(p => ({
      path: `spec.source.inline.${p.file === RUNTIME_FILES[RuntimeFamily.NODEJS].handler || p.file === PYTHON_FILE ? 'source' : 'dependencies'}`,
      rule: p.rule,
      message: describeHandlerProblem(p).replace(/ \(or, if a declared package[^)]*\)$/, ''),
      hint: p.warning ? `if a declared package brings '${p.module}' along, accept the warning with the annotation ${ACCEPT_WARNINGS_ANNOTATION}: ${p.warning}:${p.module}` : undefined,
    }));
}

/** The warnings an annotation value accepts: comma-separated names. */
export function acceptedWarnings(annotation: unknown): string[] {
  return typeof annotation === 'string' ? annotation.split(',').map(s => s.trim()).filter(Boolean) : [];
}

/**
 * The packages of the Node.js runtime image that a handler imports without declaring them, with
 * the image's version ranges: what a local run installs so that the handler finds what the Pod's
 * `/usr/src/app/node_modules` gives it, and nothing else of this machine.
 *
 * @returns the packages by name; none when the handler does not parse
 */
export function nodeImagePackagesImported(code: HandlerCode): { [name: string]: string } {
  const release = code.release ?? DEFAULT_RELEASE;
  const image = NODE_IMAGE_PACKAGES[release];
  const pkg = packageJsonOf(code.dependencies);
  const declared = new Set([...names(pkg?.dependencies), ...names(pkg?.optionalDependencies), ...names(pkg?.devDependencies)]);
  // The handler as a script, else as a module; neither when it is no JavaScript (the runtime says why at load).
  const script = readJavaScript(code.source, 'script');
  const facts = script.error ? readJavaScript(code.source, 'module') : script;
  const found: { [name: string]: string } = {};
  for (const { module } of facts.imports) {
    const name = module.startsWith('@') ? module.split('/').slice(0, 2).join('/') : module.split('/')[0];
    if (image[name] !== undefined && !declared.has(name)) found[name] = image[name];
  }
  return found;
}

/**
 * The requirement lines of the Python runtime image whose modules a handler imports without
 * declaring them: what a local run installs so that the handler finds what the Pod's image gives it.
 *
 * @returns the lines, sorted; none when the handler does not parse
 */
export function pythonImageRequirementsImported(code: HandlerCode): string[] {
  const image = PYTHON_IMAGE_MODULES[code.release ?? DEFAULT_RELEASE];
  const declared = new Set((requirementNames(code.dependencies ?? '') ?? []).map(normalized));
  let facts: PythonFacts;
  try {
    facts = readPython(code.source);
  } catch {
    return [];
  }
  const lines = new Set<string>();
  for (const { module } of facts.imports) {
    const line = image[module];
    const name = line && /^[A-Za-z0-9._-]+/.exec(line)?.[0];
    if (line && name && !declared.has(normalized(name))) lines.add(line);
  }
  return [...lines].sort();
}
