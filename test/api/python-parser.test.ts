import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessagePort } from 'node:worker_threads';
import { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } from '../../src';
import { _parsePythonHandlers } from '../../src/api/handler-code';
import { parsePythonSources, sendPythonSources } from '../../src/api/_python-parser';
import { _resetWork, _work } from '../../src/api/_work';

const ROOT = path.resolve(__dirname, '..', '..');

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

  test('go in batches of 32 without a wait; the wait sends the rest in one message and takes every tree', () => {
    const python = sources('batch');
    sendPythonSources(python);
    expect(messages()).toEqual([python.slice(0, 32)]);
    expect(_work.pythonRoundTrips).toBe(0);
    const trees = parsePythonSources(python);
    expect(messages()).toEqual([python.slice(0, 32), python.slice(32)]);
    expect([...trees.keys()]).toEqual(python);
    expect([...trees.values()].every(tree => tree.type === 'module')).toBe(true);
    expect(_work).toMatchObject({ pythonRoundTrips: 1, pythonParses: 40 });
  });

  test('a source sent twice is parsed once, and one asked for again is sent again', () => {
    const python = sources('twice').slice(0, 3);
    sendPythonSources([...python, ...python]);
    expect(parsePythonSources(python).size).toBe(3);
    expect(messages()).toEqual([python]);
    expect(parsePythonSources(python.slice(0, 1)).size).toBe(1);
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
