/**
 * What a synth loads (issue 35): the parsers and the CEL interpreter load when the app has
 * something for them to read, not with the package. Counted in a new process, since a test's own
 * module registry has loaded them already.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BUNDLED_KINDS } from '../../scripts/bundle-models';
import { CEL_MODE_ENV } from '../../src/api/_cel';
import { loadYamlDocuments } from '../util/fixtures';

const ROOT = path.resolve(__dirname, '..', '..');
/** Loads the sources with ts-node and SWC, as bin/kyma-serverless.js does. */
const SWC = path.join(ROOT, 'test', 'util', 'ts-node-swc.js');

/**
 * What only reading Functions needs: handler parsers, and the interpreter of the CRD's CEL rules,
 * which loads from its bundle (scripts/bundle-cel.ts, written by npm run bundle), not its packages;
 * and js-yaml, which only reading YAML needs (the webhook's configuration file is written without it,
 * src/webhook/_config-yaml.ts).
 */
const ON_DEMAND = ['js-yaml', 'acorn', 'cjs-module-lexer', 'es-module-lexer', 'web-tree-sitter', '@bufbuild/cel', '@bufbuild/protobuf', 'lib/cel/cel.js'];

/** Apps synthesized one after the other in one process, each with the Functions of its TypeScript (in a FunctionNamespace `team`). */
const APPS = {
  'the stack and a namespace without Functions': '',
  'a Function from Git': `new KymaFunction(team, 'from-git', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromGitRepository({ url: 'https://github.com/example/functions.git', baseDir: '/hello', reference: 'main' }),
  });`,
  'an inline CommonJS handler': "new KymaFunction(team, 'inline', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1;\\n') });",
  // Not printable ASCII: the compiled rule of baseDir is not sure where CEL's trim and JavaScript's differ, and asks the interpreter.
  'a Function from Git whose folder is not in ASCII': `new KymaFunction(team, 'from-git-in-greek', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromGitRepository({ url: 'https://github.com/example/functions.git', baseDir: '/\u03b3\u03b5\u03b9\u03b1', reference: 'main' }),
  });`,
};

test('a synth loads parsers and CEL only for what its app holds', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-loading-'));
  try {
    const script = `
      const { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } = require('./src');
      const loaded = () => {
        const names = new Set(Object.keys(require.cache).map(file => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1] ?? /lib\\/cel\\/cel\\.js$/.exec(file)?.[0]));
        return ${JSON.stringify(ON_DEMAND)}.filter(name => names.has(name));
      };
      const after = {};
      ${Object.entries(APPS).map(([name, functions], i) => `{
        const app = new GitOpsApp({ outdir: ${JSON.stringify(path.join(dir, String(i)))} });
        const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
        ${functions}
        app.synth();
        after[${JSON.stringify(name)}] = loaded();
      }`).join('\n')}
      console.log(JSON.stringify(after));`;
    // The CEL rules as users have them, not compared with the interpreter as the test suite does (jest.config.js).
    const result = spawnSync(process.execPath, ['-r', SWC, '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, [CEL_MODE_ENV]: 'compiled' },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    // What each app loaded, on top of those before it.
    expect(JSON.parse(result.stdout)).toEqual({
      'the stack and a namespace without Functions': [],
      // The compiled rules are sure of it.
      'a Function from Git': [],
      // Not es-module-lexer: the CommonJS lexer reads the handler; not acorn: the reader of this thread reads it.
      'an inline CommonJS handler': ['cjs-module-lexer'],
      'a Function from Git whose folder is not in ASCII': ['cjs-module-lexer', 'lib/cel/cel.js'],
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

/**
 * The bundles of the schema classes and of the CEL interpreter compile from a V8 code cache that the
 * first synth writes (src/_code-cache.ts): counted per process, with the output of every run the same.
 */
describe('the code cache of the bundled schema classes and CEL interpreter', () => {
  /** Synthesizes the stack, and a Function when asked, in a new process; its output folder's files, and what the loads did with the cache. */
  function synth(dir: string, cache: string, withFunction = false): { counts: unknown; files: Record<string, string> } {
    const outdir = path.join(dir, 'out');
    fs.rmSync(outdir, { recursive: true, force: true });
    const script = `
      const { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } = require('./src');
      const app = new GitOpsApp({ outdir: ${JSON.stringify(outdir)} });
      const stack = new ServerlessStack(app, 'serverless');
      ${withFunction ? `new KymaFunction(new FunctionNamespace(app, 'team', { stack }), 'fn', {
        runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromGitRepository({ url: 'https://github.com/example/functions.git', baseDir: '/hello', reference: 'main' }),
      });` : ''}
      app.synth();
      // Registered after the load's own listener, so the cache written at exit is counted.
      process.on('exit', () => console.log(JSON.stringify(require('./src/_code-cache')._codeCacheCounts)));`;
    // The interpreter evaluates every rule, so that a synth with a Function loads it.
    const result = spawnSync(process.execPath, ['-r', SWC, '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, KYMA_SERVERLESS_CODE_CACHE: cache, [CEL_MODE_ENV]: 'interpret' },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    const files = Object.fromEntries(fs.readdirSync(outdir, { recursive: true, withFileTypes: true }).filter(e => e.isFile())
      .map(e => [path.relative(outdir, path.join(e.parentPath, e.name)), fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')]));
    return { counts: JSON.parse(result.stdout), files };
  }
  const cacheFiles = (cache: string) => (fs.existsSync(cache) ? fs.readdirSync(cache) : []);

  test('the first synth writes it, the next compiles from it, and both write the same output', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-cache-'));
    try {
      const cache = path.join(dir, 'cache');
      const cold = synth(dir, cache);
      expect(cold.counts).toEqual({ hits: 0, misses: 1, moduleHits: 0, moduleMisses: 0, writes: 1 });
      expect(cacheFiles(cache)).toEqual([expect.stringMatching(/^kubernetes-models-[0-9a-f]{40}\.bin$/)]);
      // Only its owner can write to it: compiled code from there runs as the user.
      expect(fs.statSync(cache).mode & 0o077).toBe(0);
      const warm = synth(dir, cache);
      expect(warm.counts).toEqual({ hits: 1, misses: 0, moduleHits: 0, moduleMisses: 0, writes: 0 });
      expect(warm.files).toEqual(cold.files);
      expect(Object.keys(warm.files).length).toBeGreaterThan(3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test('a synth with a Function compiles the CEL interpreter from it too', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-cache-'));
    try {
      const cache = path.join(dir, 'cache');
      const cold = synth(dir, cache, true);
      expect(cold.counts).toEqual({ hits: 0, misses: 2, moduleHits: 0, moduleMisses: 0, writes: 2 });
      expect(cacheFiles(cache).sort()).toEqual([expect.stringMatching(/^cel-[0-9a-f]{40}\.bin$/), expect.stringMatching(/^kubernetes-models-[0-9a-f]{40}\.bin$/)]);
      const warm = synth(dir, cache, true);
      expect(warm.counts).toEqual({ hits: 2, misses: 0, moduleHits: 0, moduleMisses: 0, writes: 0 });
      expect(warm.files).toEqual(cold.files);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * Which way the check of synth's output runs each object's schema (src/policy/manifests.ts): the
 * core objects the stack and a namespace write are plain JSON data, so each goes to its kind's
 * bundled check, run on the object itself, and none through a `kubernetes-models` class's copy;
 * nor does the check take any class from the bundle.
 */
test("a synth checks each core object with its kind's bundled check, once", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-checks-'));
  try {
    const script = `
      const { FunctionNamespace, GitOpsApp, ServerlessStack } = require('./src');
      const models = require('./src/_code-cache').requireBundle(${JSON.stringify(path.join(ROOT, 'lib', 'models', 'kubernetes-models.js'))}).models;
      const classes = [];
      for (const [kind, model] of Object.entries(models)) models[kind] = () => (classes.push(kind), model());
      const app = new GitOpsApp({ outdir: ${JSON.stringify(dir)} });
      new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      app.synth();
      console.log(JSON.stringify({ ...require('./src/policy/manifests')._schemaCheckCounts, classes }));`;
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_NODE_SWC: 'true' },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    const written = fs.readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter(e => e.isFile() && e.name.endsWith('.k8s.yaml'))
      .flatMap(e => loadYamlDocuments(path.join(e.parentPath, e.name)));
    const core = written.filter(o => BUNDLED_KINDS.includes(`${o.apiVersion}/${o.kind}`));
    expect(core.length).toBeGreaterThan(30);
    expect(JSON.parse(result.stdout)).toEqual({ bundled: core.length, model: 0, classes: [] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
