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

/**
 * Synthesizes an app in a new process and lists which of {@link ON_DEMAND} it loaded.
 *
 * @param functions the app's Functions, as TypeScript in a FunctionNamespace `team`
 */
function loadedBySynth(functions: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-loading-'));
  try {
    const script = `
      const { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } = require('./src');
      const app = new GitOpsApp({ outdir: ${JSON.stringify(dir)} });
      const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
      ${functions}
      app.synth();
      const loaded = new Set(Object.keys(require.cache).map(file => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1] ?? /lib\\/cel\\/cel\\.js$/.exec(file)?.[0]));
      console.log(JSON.stringify(${JSON.stringify(ON_DEMAND)}.filter(name => loaded.has(name))));`;
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_NODE_SWC: 'true' },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    return JSON.parse(result.stdout) as string[];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('modules a synth loads on demand', () => {
  test('the stack and a namespace without Functions: no parser and no CEL', () => {
    expect(loadedBySynth('')).toEqual([]);
  }, 60_000);

  test('a Function from Git: the bundled interpreter of the CRD rules, no parser', () => {
    expect(loadedBySynth(`new KymaFunction(team, 'from-git', {
      runtime: FunctionRuntime.NODEJS_22,
      source: FunctionSource.fromGitRepository({ url: 'https://github.com/example/functions.git', baseDir: '/hello', reference: 'main' }),
    });`)).toEqual(['lib/cel/cel.js']);
  }, 60_000);

  test('an inline CommonJS Function: acorn and the CommonJS lexer too', () => {
    expect(loadedBySynth("new KymaFunction(team, 'inline', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1;\\n') });"))
      .toEqual(['acorn', 'cjs-module-lexer', 'lib/cel/cel.js']);
  }, 60_000);
});
