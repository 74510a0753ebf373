/**
 * How the commands find a cluster: a missing kubeconfig is named as such by every command that
 * reaches a cluster, rather than as the error of client-node's last resort (http://localhost:8080).
 *
 * client-node reads HOME and KUBECONFIG of the real process, which jest's sandbox does not change:
 * the scenarios run in one child process, each with its own HOME.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NO_KUBECONFIG } from '../../src/cli/_kube';

const ROOT = path.resolve(__dirname, '..', '..');

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: cluster, cluster: { server: 'https://127.0.0.1:6443' } }]
users: [{ name: user, user: { token: abc } }]
contexts: [{ name: dev, context: { cluster: cluster, user: user, namespace: team-a } }]
current-context: dev
`;

/** What connect() and each command do, with HOME and KUBECONFIG as given, in a child process. */
const SCRIPT = `
require('ts-node').register({ swc: true, project: ${JSON.stringify(path.join(ROOT, 'tsconfig.json'))} });
const { connect } = require(${JSON.stringify(path.join(ROOT, 'src', 'cli', '_kube.ts'))});
const { program } = require(${JSON.stringify(path.join(ROOT, 'src', 'cli', 'index.ts'))});
const [emptyHome, configuredHome] = process.argv.slice(-2);
const outcome = promise => promise.then(c => ({ namespace: c.namespace, server: c.server }), e => ({ error: e.message }));
(async () => {
  const results = {};
  delete process.env.KUBECONFIG;
  process.env.HOME = emptyHome;
  results.none = await outcome(connect({}));
  for (const args of ${JSON.stringify([
    ['status'], ['preflight', '--no-manifests'], ['apply', 'dist'], ['diff', 'dist'], ['run', 'functions/hello-node', '--from-cluster'],
  ])}) {
    results[args[0]] = await program().exitOverride().parseAsync(['node', 'kyma-serverless', ...args]).then(() => 'ran', e => e.message);
  }
  process.env.HOME = configuredHome;
  results.home = await outcome(connect({}));
  process.env.KUBECONFIG = emptyHome + '/missing';
  results.env = await outcome(connect({}));
  process.stdout.write(JSON.stringify(results));
})();
`;

describe('connect', () => {
  let emptyHome: string;
  let configuredHome: string;
  let results: any;
  beforeAll(() => {
    emptyHome = fs.mkdtempSync(path.join(os.tmpdir(), 'home-'));
    configuredHome = fs.mkdtempSync(path.join(os.tmpdir(), 'home-'));
    fs.mkdirSync(path.join(configuredHome, '.kube'));
    fs.writeFileSync(path.join(configuredHome, '.kube', 'config'), KUBECONFIG);
    const child = spawnSync(process.execPath, ['-e', SCRIPT, emptyHome, configuredHome], { cwd: ROOT, encoding: 'utf8' });
    if (child.status !== 0) throw new Error(child.stderr);
    results = JSON.parse(child.stdout);
  });
  afterAll(() => {
    fs.rmSync(emptyHome, { recursive: true, force: true });
    fs.rmSync(configuredHome, { recursive: true, force: true });
  });

  test('says that no kubeconfig was found, and how to point at one', () => {
    expect(results.none).toEqual({ error: NO_KUBECONFIG });
    expect(NO_KUBECONFIG).toMatch(/^No kubeconfig found: .*Point at one with --kubeconfig <file> or KUBECONFIG=<file>, or write ~\/\.kube\/config/);
  });

  test.each(['status', 'preflight', 'apply', 'diff', 'run'])('%s says that no kubeconfig was found', command => {
    expect(results[command]).toBe(NO_KUBECONFIG);
  });

  test('reads ~/.kube/config, and names KUBECONFIG when the file it names cannot be read', () => {
    expect(results.home).toEqual({ namespace: 'team-a', server: 'https://127.0.0.1:6443' });
    expect(results.env.error).toMatch(`Cannot load the kubeconfig ${path.join(emptyHome, 'missing')} (KUBECONFIG): ENOENT`);
  });
});
