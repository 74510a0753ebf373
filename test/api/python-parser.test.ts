import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessagePort } from 'node:worker_threads';
import { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } from '../../src';
import { _parsePythonHandlers } from '../../src/api/handler-code';
import {
  PyNode, askSources, parsePython, parserRunning, sendPythonSources, stopParserWhenIdle, takeSentPythonTree,
} from '../../src/api/_python-parser';
import { readPythonOutline } from '../../src/api/_python-reader';
import { _resetWork, _work } from '../../src/api/_work';

const ROOT = path.resolve(__dirname, '..', '..');

/** The trees of Python sources asked for before ({@link askSources}), each taken as a check takes it. */
function takeTrees(sources: readonly string[]): Map<string, PyNode> {
  const trees = new Map<string, PyNode>();
  for (const source of sources) {
    const tree = takeSentPythonTree(source);
    if (tree) trees.set(source, tree);
  }
  return trees;
}

describe("the Python parser's worker", () => {
  // A user's `node -r ts-node/register main.ts` (and the bench's user path) passes `-r` to the
  // process; a worker inherits its options unless told otherwise, and would load ts-node and
  // TypeScript again before its first parse.
  test("runs none of the process's preloads", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
    try {
      const probe = path.join(dir, 'probe.js');
      const ranIn = path.join(dir, 'ran-in');
      fs.writeFileSync(probe, `require('node:fs').appendFileSync(${JSON.stringify(ranIn)}, require('node:worker_threads').isMainThread ? 'main\\n' : 'worker\\n');\n`);
      const script = "const { parsePython } = require('./src/api/_python-parser'); console.log(parsePython('x = 1\\n').type);";
      const result = spawnSync(process.execPath, ['-r', probe, '-r', 'ts-node/register/transpile-only', '-e', script], { cwd: ROOT, encoding: 'utf8' });
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('module\n');
      expect(fs.readFileSync(ranIn, 'utf8')).toBe('main\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** Python handlers, 40 of them. */
const sources = (tag: string) => Array.from({ length: 40 }, (_, i) => `def main(event, context):\n    return "${tag} ${i}"\n`);
/** Python handlers that the reader of this thread leaves to tree-sitter (names of non-ASCII letters), 40 of them. */
const treeSources = (tag: string) => sources(tag).map(source => source.replace('return', 'grüße =').concat('    return grüße\n'));

describe('sources sent ahead', () => {
  let spy: jest.SpyInstance;
  /** The messages of sources posted to the worker (a worker's start posts messages of its own, which are no arrays). */
  const messages = () => spy.mock.calls.map(call => call[0] as unknown).filter(Array.isArray);
  beforeEach(() => {
    _resetWork();
    spy = jest.spyOn(MessagePort.prototype, 'postMessage');
  });
  afterEach(() => spy.mockRestore());

  test('go in batches of 32 without a wait; asking sends the rest in one message, and every tree is taken', () => {
    const python = sources('batch');
    sendPythonSources(python);
    expect(messages()).toEqual([python.slice(0, 32)]);
    expect(_work.pythonRoundTrips).toBe(0);
    askSources(python);
    expect(messages()).toEqual([python.slice(0, 32), python.slice(32)]);
    const trees = takeTrees(python);
    expect([...trees.keys()]).toEqual(python);
    expect([...trees.values()].every(tree => tree.type === 'module')).toBe(true);
    expect(_work).toMatchObject({ pythonRoundTrips: 1, pythonParses: 40 });
  });

  test('a source sent twice is parsed once, and one asked for again is sent again', () => {
    const python = sources('twice').slice(0, 3);
    sendPythonSources([...python, ...python]);
    askSources(python);
    expect(takeTrees(python).size).toBe(3);
    expect(messages()).toEqual([python]);
    askSources(python.slice(0, 1));
    expect(takeTrees(python.slice(0, 1)).size).toBe(1);
    expect(messages()).toEqual([python, python.slice(0, 1)]);
  });

  test('by each Python Function as it is built, when the reader of this thread leaves it to tree-sitter: synth waits once, for trees parsed while the app was built', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
    try {
      const app = new GitOpsApp({ outdir: dir });
      const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      const python = treeSources('app');
      expect(python.filter(source => readPythonOutline(source))).toEqual([]);
      python.forEach((source, i) => new KymaFunction(team, `fn-${i}`, { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline(source) }));
      expect(messages()).toEqual([python.slice(0, 32)]);
      app.synth();
      expect(messages()).toEqual([python.slice(0, 32), python.slice(32)]);
      expect(_work).toMatchObject({ pythonRoundTrips: 1, pythonParses: 40 });
      // Their trees were taken: none is parsed again.
      _parsePythonHandlers(python.map(source => ({ runtime: 'python312', source })));
      expect(messages()).toHaveLength(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('none, when the reader of this thread reads every handler: no worker is started, and each is read once', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
    stopParserWhenIdle();
    try {
      const app = new GitOpsApp({ outdir: dir });
      const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      const python = sources('here');
      python.forEach((source, i) => new KymaFunction(team, `fn-${i}`, { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline(source) }));
      app.synth();
      expect(messages()).toEqual([]);
      expect(parserRunning()).toBe(false);
      expect(_work).toMatchObject({ pythonReads: 40, pythonParses: 0, pythonRoundTrips: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the trees the worker sends', () => {
  /** The tree as tree-sitter gives it, walked in this thread: every node, with its position and text. */
  async function directTree(source: string): Promise<{ tree: any; hasError: boolean }> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Parser, Language } = require('web-tree-sitter');
    await Parser.init();
    const parser = new Parser();
    parser.setLanguage(await Language.load(fs.readFileSync(require.resolve('tree-sitter-python/tree-sitter-python.wasm'))));
    const tree = parser.parse(source);
    const copy = (node: any): any => {
      const children = node.children.map(copy);
      const leafy = children.length === 0 || node.type === 'identifier' || node.type === 'dotted_name';
      return {
        type: node.type, named: node.isNamed, row: node.startPosition.row, column: node.startPosition.column,
        endRow: node.endPosition.row, endColumn: node.endPosition.column, missing: node.isMissing || undefined,
        text: leafy && node.endIndex - node.startIndex <= 200 ? node.text : undefined, children,
      };
    };
    return { tree: copy(tree.rootNode), hasError: tree.rootNode.hasError };
  }
  const shape = (node: any): any => ({
    type: node.type, row: node.row, column: node.column, endRow: node.endRow, endColumn: node.endColumn,
    missing: node.missing || undefined, text: node.text, children: node.children.map(shape),
  });
  /** A tree without errors crosses with its named nodes only: the checks read no keyword or punctuation. */
  const named = (node: any): any => ({ ...node, children: node.children.filter((c: any) => c.named || c.children.length).map(named) });

  test.each([
    ['non-ASCII names and strings, tabs and CRLF', 'def main(event, context):\r\n\tgrüße = "😀 é"\r\n\treturn grüße\r\n'],
    ['a missing colon', 'def main(event, context)\n    return 1\n'],
    ['an error after astral characters', 'x = "😀😀"\nif x\n  y = (1,\n'],
    ['a dotted import and a long string', `import os.path as p\nfrom a.b import c\nx = "${'a'.repeat(300)}"\n`],
  ])('hold the positions and texts tree-sitter gives: %s', async (_, source) => {
    const { tree, hasError } = await directTree(source);
    const sent = parsePython(source);
    expect(shape(sent)).toEqual(shape(hasError ? tree : named(tree)));
  });

  test('of a tree without errors hold its named nodes only', () => {
    const tree = parsePython('def main(event, context):\n    return "x"\n');
    const types: string[] = [];
    const visit = (node: { type: string; children: readonly any[] }) => {
      types.push(node.type);
      node.children.forEach(visit);
    };
    visit(tree);
    expect(types).toEqual(['module', 'function_definition', 'identifier', 'parameters', 'identifier', 'identifier', 'block',
      'return_statement', 'string', 'string_start', 'string_content', 'string_end']);
  });
});

describe('Node.js handlers', () => {
  const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
  let spy: jest.SpyInstance;
  beforeEach(() => {
    _resetWork();
    spy = jest.spyOn(MessagePort.prototype, 'postMessage');
  });
  afterEach(() => spy.mockRestore());

  /** Synth of an app of Node.js Functions with these sources; the problems it fails with, if it does. */
  function synth(sources: readonly string[], dependencies?: string): string {
    const outdir = dir();
    try {
      const app = new GitOpsApp({ outdir });
      const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      sources.forEach((source, i) => new KymaFunction(team, `fn-${i}`, { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(source, dependencies) }));
      app.synth();
      return '';
    } catch (e) {
      return (e as Error).message;
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  }
  const sources = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `exports.main = () => '${tag} ${i}';\n`);

  test('are read on this thread where they are checked, each distinct source once, without acorn or a worker', () => {
    stopParserWhenIdle();
    const node = sources('here', 40);
    expect(synth([...node, ...node.slice(0, 10)])).toBe('');
    expect(spy).not.toHaveBeenCalled();
    expect(parserRunning()).toBe(false);
    expect(_work).toMatchObject({ nodeReads: 40, nodeParses: 0, pythonRoundTrips: 0 });
  });

  test("a syntax error reads in V8's words, with acorn's line", () => {
    expect(synth([...sources('error', 39), 'exports.main = () => {\n  return (1 + ;\n};\n'])).toContain("handler.js:2: SyntaxError: Unexpected token ';'");
  });
});

describe('handlers sent ahead, each check taking its own answer', () => {
  /** The lines of a synth's error that name a handler file, for Functions of these ids, runtimes and sources. */
  function handlerLines(functions: readonly (readonly [string, FunctionRuntime, string])[]): string[] {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
    try {
      const app = new GitOpsApp({ outdir });
      const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      for (const [id, runtime, source] of functions) new KymaFunction(team, id, { runtime, source: FunctionSource.fromInline(source) });
      app.synth();
      return [];
    } catch (e) {
      return (e as Error).message.split('\n').filter(line => /handler\.(py|js)/.test(line)).map(line => line.trim());
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  }

  test('every problem of an app of many handlers, in the first, a middle and the last message, reads as the handler\'s alone', () => {
    _resetWork();
    const broken = (i: number) => i % 50 === 0 || i === 99;
    // Python handlers the reader of this thread leaves to tree-sitter, all of them: names of non-ASCII letters.
    const functions = Array.from({ length: 100 }, (_, i) => [
      [`py-${i}`, FunctionRuntime.PYTHON_312, broken(i) ? `def main(event, context)\n    grüße = ${i}\n` : `def main(event, context):\n    grüße = ${i}\n`],
      [`js-${i}`, FunctionRuntime.NODEJS_22, broken(i) ? `exports.main = () => {\n  return (${i} + ;\n};\n` : `exports.main = () => ${i};\n`],
    ] as const).flat();
    const all = handlerLines(functions);
    // The Node.js handlers with a syntax error (3) parsed by acorn, the others read on this thread.
    expect(_work).toMatchObject({ pythonParses: 100, nodeReads: 97, nodeParses: 3, pythonRoundTrips: 1 });
    const alone = functions.filter(([id]) => broken(Number(id.slice(3)))).flatMap(f => handlerLines([f]));
    expect(alone).toHaveLength(6);
    expect([...all].sort()).toEqual([...alone].sort());
  });
});
