/**
 * What `kyma-serverless validate` loads and parses (issue 35): it loads neither cdk8s nor the
 * modules of the other commands, and reads the files synth writes without js-yaml's parser, which
 * reads only the others (without js-yaml at all when every file is one synth wrote). Counted in a new process, since a test's own module registry has loaded
 * everything already.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Yaml } from 'cdk8s';

const ROOT = path.resolve(__dirname, '..', '..');
/** Loads the sources with ts-node and SWC, as bin/kyma-serverless.js does. */
const SWC = path.join(ROOT, 'test', 'util', 'ts-node-swc.js');

/** Packages that only other commands, or synth, need. */
const NOT_FOR_VALIDATE = ['cdk8s', 'cdk8s-plus-27', 'constructs', 'yaml', '@kubernetes/client-node'];

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } };
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a' }, data: { 'a.txt': 'one\ntwo\n' } };

test('validate loads no cdk8s, and reads the files synth writes without js-yaml\'s parser', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'validate-loading-'));
  try {
    // As synth writes them, and one a person wrote, with a comment.
    fs.writeFileSync(path.join(dir, '0000-team-a.k8s.yaml'), Yaml.stringify(NAMESPACE, CONFIG_MAP));
    fs.mkdirSync(path.join(dir, 'prod'));
    fs.writeFileSync(path.join(dir, 'prod', 'namespace.yaml'), Yaml.stringify(NAMESPACE));
    fs.writeFileSync(path.join(dir, 'prod', 'by-hand.yaml'), `# written by hand\n${Yaml.stringify(CONFIG_MAP)}`);
    const script = `
      const jsYaml = require('js-yaml');
      let loadAll = 0;
      const original = jsYaml.loadAll;
      jsYaml.loadAll = (...args) => { loadAll++; return original(...args); };
      require('./src/cli/index').main(['node', 'kyma-serverless', 'validate', ${JSON.stringify(dir)}]).then(() => {
        const names = new Set(Object.keys(require.cache).map(file => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1]));
        console.log(JSON.stringify({ exitCode: process.exitCode ?? 0, loadAll, loaded: ${JSON.stringify(NOT_FOR_VALIDATE)}.filter(name => names.has(name)) }));
      });`;
    const result = spawnSync(process.execPath, ['-r', SWC, '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: process.env,
    });
    if (result.status !== 0) throw new Error(result.stderr + result.stdout);
    const lines = result.stdout.trim().split('\n');
    expect(lines[lines.length - 2]).toBe(`${dir}: 4 objects in 3 files, 0 errors, 0 warnings`);
    // js-yaml parsed the file written by hand only.
    expect(JSON.parse(lines[lines.length - 1])).toEqual({ exitCode: 0, loadAll: 1, loaded: [] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A Function as synth writes it, with an inline handler. */
function inlineFunction(name: string, runtime: string, source: string, dependencies: string): object {
  return {
    apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function',
    metadata: { name, namespace: 'team-a', labels: { 'app.kubernetes.io/managed-by': 'cdk8s-kyma-serverless' } },
    spec: { runtime, source: { inline: { source, dependencies } } },
  };
}

test('validate reads the Python and Node.js handlers on its own thread, each once, without tree-sitter or acorn, and starts no parser\'s worker', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'validate-handlers-'));
  const node = 40;
  const python = 2;
  try {
    // In two files, as synth writes them.
    const functions = [
      ...Array.from({ length: node }, (_, i) => inlineFunction(`node-${i}`, 'nodejs22', `exports.main = () => 'function ${i}';\n`, '{ "dependencies": {} }')),
      ...Array.from({ length: python }, (_, i) => inlineFunction(`python-${i}`, 'python312', `def main(event, context):\n    return "function ${i}"\n`, '')),
    ];
    fs.writeFileSync(path.join(dir, '0000-team-a.k8s.yaml'), Yaml.stringify(NAMESPACE, ...functions.slice(0, 20)));
    fs.writeFileSync(path.join(dir, '0001-team-a.k8s.yaml'), Yaml.stringify(...functions.slice(20)));
    const script = `
      const { _work } = require('./src/api/_work');
      const { parserRunning } = require('./src/api/_python-parser');
      require('./src/cli/index').main(['node', 'kyma-serverless', 'validate', ${JSON.stringify(dir)}]).then(() => {
        const treeSitter = Object.keys(require.cache).some(file => /node_modules\\/web-tree-sitter\\//.test(file));
        const jsYaml = Object.keys(require.cache).some(file => /node_modules\\/js-yaml\\//.test(file));
        const acorn = Object.keys(require.cache).some(file => /node_modules\\/acorn\\//.test(file));
        console.log(JSON.stringify({ exitCode: process.exitCode ?? 0, worker: parserRunning(), treeSitter, jsYaml, acorn, nodeReads: _work.nodeReads, nodeParses: _work.nodeParses,
          pythonReads: _work.pythonReads, pythonParses: _work.pythonParses, pythonRoundTrips: _work.pythonRoundTrips, functionValidations: _work.functionValidations }));
      });`;
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_NODE_SWC: 'true', KYMA_SERVERLESS_TODAY: '2026-01-01' },
    });
    if (result.status !== 0) throw new Error(result.stderr + result.stdout);
    const lines = result.stdout.trim().split('\n');
    expect(lines[lines.length - 3]).toBe(`${dir}: ${node + python + 1} objects in 2 files, 0 errors, 0 warnings`);
    // Every handler read once, on this thread: no worker, no tree-sitter, no acorn; files as synth writes them need no js-yaml.
    expect(JSON.parse(lines[lines.length - 1])).toEqual({
      exitCode: 0, worker: false, treeSitter: false, jsYaml: false, acorn: false, nodeReads: node, nodeParses: 0, pythonReads: python, pythonParses: 0, pythonRoundTrips: 0,
      functionValidations: node + python,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
