import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadYamlDocuments } from './util/fixtures';
import { expectValidKubernetesObjects } from './util/kubernetes-schema';

const root = path.resolve(__dirname, '..');

function synthInto(dir: string): Record<string, string> {
  const result = spawnSync(path.join(root, 'node_modules', '.bin', 'cdk8s'), ['synth', '--no-check-upgrade', '--output', dir],
    { cwd: root, env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cdk8s synth failed:\n${result.stderr}`);
  return Object.fromEntries(fs.readdirSync(dir).sort().map(f => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
}

describe('the default app', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const first = synthInto(path.join(scratch, 'a'));

  test('writes one file per chart, the stack first', () => {
    expect(Object.keys(first)).toEqual(['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml']);
    const [namespace, crd] = loadYamlDocuments(path.join(scratch, 'a', '0000-serverless.k8s.yaml'));
    expect([namespace.kind, crd.kind]).toEqual(['Namespace', 'CustomResourceDefinition']);
  });

  test('synthesizes the same bytes twice', () => {
    expect(synthInto(path.join(scratch, 'b'))).toEqual(first);
  });

  test('dist/ is committed as synth writes it (run `npm run synth` when this fails)', () => {
    const dist = Object.fromEntries(fs.readdirSync(path.join(root, 'dist')).sort().map(f => [f, fs.readFileSync(path.join(root, 'dist', f), 'utf8')]));
    expect(dist).toEqual(first);
  });

  test('every object in the output is valid', () => {
    expectValidKubernetesObjects(Object.keys(first).flatMap(f => loadYamlDocuments(path.join(scratch, 'a', f))));
  });
});
