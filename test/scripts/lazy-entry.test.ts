/**
 * scripts/lazy-entry.ts: the compiled construct entry, rewritten to load each module when one of
 * its names is first read, exports the same names in the same order, each from the same module,
 * and an app loads only the modules of the names it reads.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { lazyEntry } from '../../scripts/lazy-entry';

const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');

/** src/index.ts as `tsc` compiles it for lib/ (CommonJS). */
const eager = ts.transpileModule(fs.readFileSync(path.join(SRC, 'index.ts'), 'utf8'), {
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
}).outputText;
const lazy = lazyEntry(eager);

/** Each exported name with the module it comes from, in the order of the file. */
function exportsOf(js: string): [string, string][] {
  const modules = new Map<string, string>();
  for (const [, variable, module] of js.matchAll(/^var (\w+) = (?:require|lazyModule)\("([^"]+)"\);$/gm)) modules.set(variable, module);
  return [...js.matchAll(/Object\.defineProperty\(exports, "(\w+)", \{ enumerable: true, get: function \(\) \{ return (\w+)\.(\w+); \} \}\);/g)]
    .map(([, name, variable, source]) => [name, `${modules.get(variable)}#${source}`]);
}

describe('the lazy construct entry', () => {
  test('exports every name of the entry, in order, from the same module', async () => {
    const before = exportsOf(eager);
    expect(before.length).toBeGreaterThan(130);
    expect(exportsOf(lazy)).toEqual(before);
    // Nothing but the code cache is required at the top; rewriting again changes nothing.
    expect([...lazy.matchAll(/^(?:var|const) \w+ = require\(/gm)].length).toBe(1);
    expect(lazyEntry(lazy)).toBe(lazy);
    // The names Node.js gives an ES module's import of the entry (its CommonJS lexer reads the getters).
    const { init, parse } = require('cjs-module-lexer') as typeof import('cjs-module-lexer');
    await init();
    expect(parse(lazy).exports.length).toBeGreaterThan(60);
    expect(parse(lazy)).toEqual(parse(eager));
  });

  test('loads only the modules of the names an app reads, and gives the same values as the eager entry', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lazy-entry-'));
    try {
      // The rewritten entry, its modules named by their place in src/ (run by ts-node there).
      const entry = path.join(dir, 'index.js');
      fs.writeFileSync(entry, lazy.replace(/(require|lazyModule)\("\.\/([^"]+)"\)/g, (_, call: string, module: string) => `${call}(${JSON.stringify(path.join(SRC, module))})`));
      const script = `
        const loaded = () => Object.keys(require.cache).filter(f => f.startsWith(${JSON.stringify(SRC + path.sep)})).map(f => f.slice(${SRC.length + 1})).sort();
        const lazy = require(${JSON.stringify(entry)});
        const atLoad = loaded();
        const app = new lazy.GitOpsApp({ outdir: ${JSON.stringify(path.join(dir, 'out'))} });
        new lazy.FunctionNamespace(app, 'team', { stack: new lazy.ServerlessStack(app, 'serverless') });
        app.synth();
        const forStack = loaded();
        const eager = require('./src');
        const names = Object.keys(lazy);
        console.log(JSON.stringify({
          atLoad, forStack, all: loaded().length,
          sameNames: JSON.stringify(names) === JSON.stringify(Object.keys(eager)),
          sameValues: names.filter(n => lazy[n] !== eager[n]),
        }));`;
      const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
        cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_NODE_SWC: 'true' },
      });
      if (result.status !== 0) throw new Error(result.stderr);
      const { atLoad, forStack, all, sameNames, sameValues } = JSON.parse(result.stdout);
      expect(atLoad).toEqual(['_code-cache.ts']);
      // The stack, a namespace and the app's synth load none of the modules of Functions, exposure, KEDA, traffic, Argo CD or Flux,
      // nor the Function API's index, the rules of Functions, APIRules and Subscriptions, the handler checks and their parser, a reader of YAML files,
      // monitoring (its objects, rules, dashboard and the webhook's metric names: src/stack/_metrics-names.ts), the buildless release's controller and cleanup, or the opt-in to replacing objects.
      const unused = ['function/kyma-function.ts', 'function/function-folder.ts', 'function/keda.ts', 'function/traffic.ts', 'function/subscription.ts',
        'function/endpoint.ts', 'exposure/exposure.ts', 'exposure/endpoint-auth.ts', 'gitops/argo-cd.ts', 'gitops/flux.ts', 'gitops/health.ts',
        'api/index.ts', 'api/function-rules.ts', 'api/validator.ts', 'api/handler-code.ts', 'api/_python-parser.ts', 'api/apirule-rules.ts',
        'api/subscription-rules.ts', 'api/function-changes.ts', 'policy/_manifest-files.ts',
        'stack/monitoring.ts', 'stack/_monitoring-rules.ts', 'stack/_monitoring-dashboard.ts', 'stack/_promql.ts', 'webhook/metrics.ts',
        'stack/buildless-controller.ts', 'stack/build-mode-cleanup.ts', 'stack/_build-mode-cleanup-script.ts', 'policy/replacement.ts'];
      expect(forStack.filter((f: string) => unused.includes(f))).toEqual([]);
      expect(forStack.length).toBeLessThan(all);
      expect(sameNames).toBe(true);
      expect(sameValues).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
