/**
 * What `kyma-serverless validate` loads and parses (issue 35): it loads neither cdk8s nor the
 * modules of the other commands, and reads the files synth writes without js-yaml's parser, which
 * reads only the others. Counted in a new process, since a test's own module registry has loaded
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
