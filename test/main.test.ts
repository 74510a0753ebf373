import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SchemaValidator, formatViolations } from '../src/api';
import { fixture, loadYamlDocuments } from './util/fixtures';
import { expectValidKubernetesObjects } from './util/kubernetes-schema';
import { ProjectCopy } from './util/project-copy';
import { schemaFromFacts } from './util/schema-facts';

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
  const objects = Object.keys(first).flatMap(f => loadYamlDocuments(path.join(scratch, 'a', f)));

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
    expectValidKubernetesObjects(objects);
  });

  test('emits the example function folders, each accepted by the upstream 1.11.1 CRD', () => {
    const functions = objects.filter(o => o.kind === 'Function');
    expect(functions.map(f => `${f.metadata.namespace}/${f.metadata.name} ${f.spec.runtime}`))
      .toEqual(['default-functions/hello-node nodejs22', 'default-functions/hello-python python312']);
    const upstream = new SchemaValidator(schemaFromFacts(JSON.parse(fs.readFileSync(fixture('upstream-1.11.1-function-crd-facts.json'), 'utf8')).schema));
    for (const fn of functions) expect(formatViolations(upstream.validate(fn))).toBe('');
  });
});

describe('npm run synth', () => {
  let project: ProjectCopy;
  beforeAll(() => {
    project = new ProjectCopy();
  });
  afterAll(() => project.remove());

  test('gives the same dist/ in another checkout folder', () => {
    const result = project.synth();
    expect(result.status).toBe(0);
    expect(project.files('dist')).toEqual(Object.fromEntries(fs.readdirSync(path.join(root, 'dist')).sort()
      .map(f => [f, fs.readFileSync(path.join(root, 'dist', f), 'utf8')])));
  });

  test('fails on an invalid function folder, names the file and the key, and leaves dist/ as it was', () => {
    const before = project.files('dist');
    project.write('functions/broken/handler.js', 'module.exports = { main: () => 1 }');
    project.write('functions/broken/function.yaml', 'scale: { minReplicas: 3, maxReplicas: 1 }\nenv: { 9LIVES: x }\n');
    const result = project.synth();
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/\[default-functions\/broken\] functions\/broken\/function\.yaml: 'scale' \(spec\.scaleConfig\): .*minReplicas should be less than or equal maxReplicas/);
    expect(result.stderr).toMatch(/\[default-functions\/broken\] functions\/broken\/function\.yaml: 'env\.9LIVES' \(spec\.env\[0\]\.name\)/);
    expect(result.stderr).toContain('synth failed: dist/ was left unchanged');
    expect(project.files('dist')).toEqual(before);
    expect(fs.readdirSync(project.dir).filter(f => f.startsWith('.synth-'))).toEqual([]);
  });

  test('fails on a function.yaml that does not parse, and leaves dist/ as it was', () => {
    const before = project.files('dist');
    project.write('functions/broken/function.yaml', 'runtime: [nodejs22\n');
    const result = project.synth();
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/functions\/broken\/function\.yaml: /);
    expect(project.files('dist')).toEqual(before);
  });
});
