import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessagePort } from 'node:worker_threads';
import * as acorn from 'acorn';
import { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } from '../../src';
import { _parsePythonHandlers } from '../../src/api/handler-code';
import {
  PyNode, _javaScriptParses, _parserSettings, askSources, parsePython, sendJavaScriptSources, sendPythonSources, stopParserWhenIdle, takeSentJavaScriptVerdict, takeSentPythonTree,
} from '../../src/api/_python-parser';
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

describe('sources sent ahead', () => {
  const sources = (tag: string) => Array.from({ length: 40 }, (_, i) => `def main(event, context):\n    return "${tag} ${i}"\n`);
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

  test('by each Python Function as it is built: synth waits once, for trees parsed while the app was built', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
    try {
      const app = new GitOpsApp({ outdir: dir });
      const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      const python = sources('app');
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

describe('Node.js handlers sent ahead to acorn in the worker', () => {
  const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
  let spy: jest.SpyInstance;
  /** The messages of JavaScript sources posted to the worker. */
  const messages = () => spy.mock.calls.map(call => call[0] as { javascript?: string[] }).filter(m => m && Array.isArray(m.javascript)).map(m => m.javascript);
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

  test('go in batches of 32 as their Functions are built, each parsed once, in one wait with the Python ones', () => {
    const node = sources('batch', 40);
    expect(synth(node)).toBe('');
    expect(messages()).toEqual([node.slice(0, 32), node.slice(32)]);
    expect(_work).toMatchObject({ nodeParses: 40, pythonRoundTrips: 1, pythonParses: 0 });
  });

  test('fewer than 32 in a process without the worker are parsed where they are checked, without starting it', () => {
    const outdir = dir();
    try {
      // A fresh copy of the modules: no worker started by the tests above.
      jest.isolateModules(() => {
        /* eslint-disable @typescript-eslint/no-require-imports */
        const s = require('../../src') as typeof import('../../src');
        const work = require('../../src/api/_work') as typeof import('../../src/api/_work');
        /* eslint-enable @typescript-eslint/no-require-imports */
        const app = new s.GitOpsApp({ outdir });
        const team = new s.FunctionNamespace(app, 'team', { stack: new s.ServerlessStack(app, 'serverless') });
        sources('few', 31).forEach((source, i) => new s.KymaFunction(team, `fn-${i}`, { runtime: s.FunctionRuntime.NODEJS_22, source: s.FunctionSource.fromInline(source) }));
        app.synth();
        expect(work._work).toMatchObject({ nodeParses: 31, pythonRoundTrips: 0 });
      });
      expect(messages()).toEqual([]);
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  });

  test('a handler that may import, or an ES module, is parsed where it is checked: its tree is walked', () => {
    expect(synth(sources('module', 40).map(s => s.replace('exports.main =', 'export const main =')), '{ "type": "module" }')).toBe('');
    expect(synth(sources('require', 40).map(s => `require('node:os');\n${s}`))).toBe('');
    expect(messages()).toEqual([]);
  });

  test('each is parsed once, by the worker or by this thread taking back what the worker has not started', () => {
    const before = { ..._javaScriptParses };
    const node = sources('shared', 200);
    expect(synth([...node, ...node.slice(0, 50)])).toBe('');
    // 200 distinct sources in 7 messages: whichever thread claimed a message parsed it, and only that one.
    expect(messages().flat()).toEqual(node);
    expect(_javaScriptParses.inWorker - before.inWorker + _javaScriptParses.here - before.here).toBe(200);
    expect(_work).toMatchObject({ nodeParses: 200, pythonRoundTrips: 1 });
  });

  test.each([
    ['parsed in the worker', false],
    ['taken back by this thread while the worker starts', true],
  ])('the verdicts are acorn\'s own whichever thread parsed a source: %s', (_, takeBack) => {
    const options = { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true, allowReturnOutsideFunction: true } as const;
    const broken = (i: number) => `exports.main = () => {\n${'\n'.repeat(i % 5)}  return (${i} + ;\n};\n`;
    const node = Array.from({ length: 160 }, (_, i) => (i % 3 ? `exports.main = () => ${i};\n` : broken(i)));
    stopParserWhenIdle();
    const before = { ..._javaScriptParses };
    _parserSettings.takeBack = takeBack;
    let verdicts: Map<string, unknown>;
    try {
      sendJavaScriptSources(node, options);
      askSources([]);
      verdicts = new Map(node.map(source => [source, takeSentJavaScriptVerdict(source)]));
    } finally {
      _parserSettings.takeBack = true;
    }
    const inWorker = _javaScriptParses.inWorker - before.inWorker;
    const here = _javaScriptParses.here - before.here;
    expect(inWorker + here).toBe(160);
    if (!takeBack) expect(here).toBe(0);
    const expected = (source: string) => {
      try {
        acorn.parse(source, options);
        return null;
      } catch (e) {
        return { message: (e as Error).message, line: (e as { loc: { line: number } }).loc.line };
      }
    };
    expect(node.map(source => verdicts.get(source))).toEqual(node.map(expected));
  });

  test("a syntax error found in the worker reads as the one found here: V8's words, acorn's line", () => {
    const broken = 'exports.main = () => {\n  return (1 + ;\n};\n';
    // Left to the worker, which this thread would otherwise take it back from while it waits.
    _parserSettings.takeBack = false;
    let inWorker: string;
    try {
      inWorker = synth([...sources('error', 39), broken]);
    } finally {
      _parserSettings.takeBack = true;
    }
    expect(messages().flat()).toContain(broken);
    spy.mockClear();
    const here = synth([broken]);
    expect(messages()).toEqual([]);
    expect(inWorker).toContain("handler.js:2: SyntaxError: Unexpected token ';'");
    expect(inWorker.slice(inWorker.indexOf('handler.js:2'))).toBe(here.slice(here.indexOf('handler.js:2')));
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
    const functions = Array.from({ length: 100 }, (_, i) => [
      [`py-${i}`, FunctionRuntime.PYTHON_312, broken(i) ? `def main(event, context)\n    return ${i}\n` : `def main(event, context):\n    return ${i}\n`],
      [`js-${i}`, FunctionRuntime.NODEJS_22, broken(i) ? `exports.main = () => {\n  return (${i} + ;\n};\n` : `exports.main = () => ${i};\n`],
    ] as const).flat();
    const all = handlerLines(functions);
    expect(_work).toMatchObject({ pythonParses: 100, nodeParses: 100, pythonRoundTrips: 1 });
    const alone = functions.filter(([id]) => broken(Number(id.slice(3)))).flatMap(f => handlerLines([f]));
    expect(alone).toHaveLength(6);
    expect([...all].sort()).toEqual([...alone].sort());
  });
});
