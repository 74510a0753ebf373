/**
 * The construct entry (`cdk8s-kyma-serverless`) loads what a cdk8s app needs and no more: the
 * command line (commander, @kubernetes/client-node), the webhook server and the local runtime are
 * TypeScript-only programs beside it, which an app that only synthesizes never loads.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { constructEntryFiles } from '../scripts/jsii';

const ROOT = path.resolve(__dirname, '..');
/** Loads the sources with ts-node and SWC, as bin/kyma-serverless.js does. */
const SWC = path.join(ROOT, 'test', 'util', 'ts-node-swc.js');

// A fresh Node.js that transpiles the sources it loads: a few seconds, more on a busy machine.
const LOAD_BUDGET_MS = 120_000;

/**
 * The files a fresh Node.js loads running a script in the repository (sources through ts-node
 * and SWC), relative to it; the script must succeed, and write nothing to standard error but
 * synth's warnings.
 */
function filesLoadedBy(script: string): string[] {
  const result = spawnSync(process.execPath, ['-r', SWC, '-e', `${script}\nprocess.stdout.write(JSON.stringify(Object.keys(require.cache)));`], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(`${result.status}\n${result.stderr.split('\n').filter(line => line && !line.startsWith('warning: ')).join('\n')}`).toBe('0\n');
  return (JSON.parse(result.stdout) as string[]).map(f => path.relative(ROOT, f).split(path.sep).join('/'));
}

describe('loading the construct entry', () => {
  test('loads none of the command line\'s, the webhook server\'s or the runtime\'s modules and dependencies', () => {
    const script = [
      "require('./src/index.ts');",
      "const app = require('cdk8s');",
      "const { ServerlessStack } = require('./src/index.ts');",
      "new ServerlessStack(new app.App(), 'serverless');",
    ].join('\n');
    const loaded = filesLoadedBy(script);
    expect(loaded).toContain('src/stack/serverless-stack.ts');
    expect(loaded.length).toBeGreaterThan(50);
    const forbidden = loaded.filter(f => /^node_modules\/(commander|@kubernetes\/client-node|express|ws|fengari)\//.test(f)
      || /^src\/(cli|runtime|testing)\//.test(f) || /^src\/webhook\/(main|server|serve|tls|kube-client|certificates|admission)\.ts$/.test(f));
    expect(forbidden).toEqual([]);
  }, LOAD_BUDGET_MS);

  test('an app whose Functions have no endpoint, Subscription or KEDA loads none of their rules, nor the whole Function API', () => {
    // The built entry loads each module when one of its names is first read (scripts/lazy-entry.ts):
    // here, the modules of the names such an app reads, required one by one as those reads do. The
    // installed package's own entry is held to the same in test/e2e/package.e2e.ts.
    const script = [
      "const { GitOpsApp } = require('./src/gitops/gitops-app.ts');",
      "const { ServerlessStack } = require('./src/stack/serverless-stack.ts');",
      "const { FunctionNamespace } = require('./src/namespace/function-namespace.ts');",
      "const { KymaFunction } = require('./src/function/kyma-function.ts');",
      "const { FunctionRuntime } = require('./src/function/runtime.ts');",
      "const { FunctionSource } = require('./src/function/source.ts');",
      "const { FunctionResources } = require('./src/function/resources.ts');",
      "const { FunctionProfile } = require('./src/api/profiles.ts');",
      "const outdir = require('node:fs').mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'kyma-serverless-entry-'));",
      'const app = new GitOpsApp({ outdir });',
      "const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });",
      "new KymaFunction(team, 'node', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1;\\n'),",
      '  resources: FunctionResources.preset(FunctionProfile.S) });',
      "new KymaFunction(team, 'python', { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline('def main(event, context):\\n    return 1\\n') });",
      'app.synth();',
      "require('node:fs').rmSync(outdir, { recursive: true, force: true });",
    ].join('\n');
    const loaded = filesLoadedBy(script);
    expect(loaded).toEqual(expect.arrayContaining(['src/function/kyma-function.ts', 'src/api/function-rules.ts', 'src/api/handler-code.ts']));
    expect(loaded.filter(f => /^src\/api\/(index|apirule-rules|subscription-rules|function-changes)\.ts$/.test(f)
      || /^src\/function\/(endpoint|subscription|keda)\.ts$/.test(f))).toEqual([]);
  }, LOAD_BUDGET_MS);
});

describe('what npm run jsii compiles', () => {
  test('is the construct entry\'s import closure, with the generated Function class and without the programs beside it', () => {
    const files = constructEntryFiles();
    expect(files).toEqual(expect.arrayContaining(['src/index.ts', 'src/stack/serverless-stack.ts', 'src/exposure/exposure.ts', 'imports/serverless.kyma-project.io.ts']));
    expect(files.filter(f => /^src\/(cli|runtime|testing)\//.test(f) || /^src\/webhook\/(main|server|serve|tls|kube-client)\.ts$/.test(f))).toEqual([]);
  });
});
