/**
 * `npm run synth` (`kyma-serverless synth`, src/cli/synth.ts) in a scratch copy of the project:
 * same output in another folder, and a failed synth (a bad function folder, an invalid manifest)
 * leaves dist/ as it was. Apart from test/main.test.ts so that jest runs the two, both slow, side by side.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProjectCopy, readTree } from './util/project-copy';

const root = path.resolve(__dirname, '..');

describe('npm run synth', () => {
  let project: ProjectCopy;
  beforeAll(() => {
    project = new ProjectCopy();
  });
  afterAll(() => project.remove());
  const scratchFolders = () => fs.readdirSync(project.dir).filter(f => f.includes('.synth-'));

  test('gives the committed dist/ byte for byte, in another checkout folder (run `npm run synth` when this fails)', () => {
    const result = project.synth();
    expect(result.status).toBe(0);
    const written = project.files('dist');
    expect(written).toEqual(readTree(path.join(root, 'dist')));
    // Nothing in the output names the folder it was made in.
    for (const [file, text] of Object.entries(written)) expect(`${file}: ${text.includes(project.dir)}`).toBe(`${file}: false`);
  });

  test('fails on an invalid function folder, names the file and the key, and leaves dist/ as it was', () => {
    const before = project.files('dist');
    project.write('functions/broken/handler.js', 'exports.main = () => 1');
    project.write('functions/broken/function.yaml', 'scale: { minReplicas: 3, maxReplicas: 1 }\nenv: { 9LIVES: x }\n');
    const result = project.synth();
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/\[default-functions\/broken\] functions\/broken\/function\.yaml: 'scale' \(spec\.scaleConfig\): .*minReplicas should be less than or equal maxReplicas/);
    expect(result.stderr).toMatch(/\[default-functions\/broken\] functions\/broken\/function\.yaml: 'env\.9LIVES' \(spec\.env\[0\]\.name\)/);
    expect(result.stderr).toContain('synth failed: dist/ was left unchanged');
    expect(project.files('dist')).toEqual(before);
    expect(scratchFolders()).toEqual([]);
  });

  test('fails on a function.yaml that does not parse, and leaves dist/ as it was', () => {
    const before = project.files('dist');
    project.write('functions/broken/function.yaml', 'runtime: [nodejs22\n');
    const result = project.synth();
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/functions\/broken\/function\.yaml: /);
    expect(project.files('dist')).toEqual(before);
  });

  test('fails on an object the cluster would reject, names it, and leaves dist/ as it was', () => {
    fs.rmSync(path.join(project.dir, 'functions', 'broken'), { recursive: true, force: true });
    const before = project.files('dist');
    const main = fs.readFileSync(path.join(project.dir, 'src/main.ts'), 'utf8');
    // A raw ApiObject is typed by nobody: only the check of the output catches it, in the GitOpsApp.
    project.write('src/main.ts', main
      .replace("import * as path from 'node:path';", "import * as path from 'node:path';\nimport { ApiObject } from 'cdk8s';")
      .replace('    functionNamespace(DEFAULT_NAMESPACE);', `    functionNamespace(DEFAULT_NAMESPACE);
    new ApiObject(stack, 'Broken', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'broken' }, spec: { replicas: 'two' } });`));
    try {
      const result = project.synth();
      expect(result.status).not.toBe(0);
      // The scratch folder synth writes into is no folder the user knows: the message names none, and synth names dist/.
      expect(result.stderr).toMatch(/The output is invalid:\n {2}0000-serverless\.k8s\.yaml: Deployment kyma-system\/broken \(spec\): must have required property selector \[openapi\.required\]/);
      expect(result.stderr).not.toContain('.synth-');
      expect(result.stderr).toContain('0000-serverless.k8s.yaml: Deployment kyma-system/broken (spec.replicas): must be integer [openapi.type]');
      expect(result.stderr).toContain('synth failed: dist/ was left unchanged');
      expect(project.files('dist')).toEqual(before);
      expect(scratchFolders()).toEqual([]);
    } finally {
      project.write('src/main.ts', main);
    }
  });

  test('checks the output of an app that is no GitOpsApp itself, and leaves dist/ as it was', () => {
    const before = project.files('dist');
    project.write('src/plain.ts', `import { App, ApiObject, Chart } from 'cdk8s';
const app = new App();
new ApiObject(new Chart(app, 'plain'), 'Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, stringData: { token: 'hunter2' } });
app.synth();
`);
    const result = project.synth(['--app', 'npx ts-node --swc src/plain.ts']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/error\s+plain\.k8s\.yaml\s+Secret token\s+stringData\s+holds token; create the Secret in the cluster/);
    expect(result.stderr).toContain('synth produced invalid manifests: dist/ was left unchanged');
    expect(project.files('dist')).toEqual(before);
    expect(scratchFolders()).toEqual([]);
  });

});
