/**
 * What a synth loads (issue 35): the parsers and the CEL interpreter load when the app has
 * something for them to read, not with the package. Counted in a new process, since a test's own
 * module registry has loaded them already.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * What only reading Functions needs: handler parsers, and the interpreter of the CRD's CEL rules,
 * which loads from its bundle (scripts/bundle-cel.ts, written by npm run bundle), not its packages.
 */
const ON_DEMAND = ['acorn', 'cjs-module-lexer', 'es-module-lexer', 'web-tree-sitter', '@bufbuild/cel', '@bufbuild/protobuf', 'lib/cel/cel.js'];

/** Apps synthesized one after the other in one process, each with the Functions of its TypeScript (in a FunctionNamespace `team`). */
const APPS = {
  'the stack and a namespace without Functions': '',
  'a Function from Git': `new KymaFunction(team, 'from-git', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromGitRepository({ url: 'https://github.com/example/functions.git', baseDir: '/hello', reference: 'main' }),
  });`,
  'an inline CommonJS handler': "new KymaFunction(team, 'inline', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1;\\n') });",
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
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_NODE_SWC: 'true' },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    // What each app loaded, on top of those before it.
    expect(JSON.parse(result.stdout)).toEqual({
      'the stack and a namespace without Functions': [],
      'a Function from Git': ['lib/cel/cel.js'],
      // Not es-module-lexer: the CommonJS lexer reads the handler.
      'an inline CommonJS handler': ['acorn', 'cjs-module-lexer', 'lib/cel/cel.js'],
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
