import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COMPILED_SCHEMAS, compiledSchemaText, generatedFile } from '../../scripts/compile-validators';
import { CRD_FILE, crdFileText } from '../../scripts/crd-file';
import { functionCrdSpec } from '../../src/api';
import { loadYamlDocuments } from '../util/fixtures';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';

const root = path.resolve(__dirname, '..', '..');

describe('the generated CRD file and imports/', () => {
  test('crds/ holds the CRD src/api generates (run `npm run import` when this fails)', () => {
    expect(fs.readFileSync(path.join(root, CRD_FILE), 'utf8')).toBe(crdFileText());
  });

  test.each(COMPILED_SCHEMAS.map(compiled => [generatedFile(compiled), compiled] as const))(
    '%s holds its schema as ajv compiles it now (run `npm run validators` when this fails)', (file, compiled) => {
      expect(fs.readFileSync(path.join(root, file), 'utf8')).toBe(compiledSchemaText(compiled));
    });

  test('the CRD file is a valid CustomResourceDefinition', () => {
    const [crd] = loadYamlDocuments(path.join(root, CRD_FILE));
    expectValidKubernetesObjects([crd]);
    expect(crd.spec).toEqual(functionCrdSpec());
  });

  test('imports/ is what `cdk8s import` makes of it (run `npm run import` when this fails)', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'imports-'));
    try {
      const result = spawnSync(path.join(root, 'node_modules', '.bin', 'cdk8s'),
        ['import', '--no-check-upgrade', '--output', out, CRD_FILE], { cwd: root, env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, encoding: 'utf8' });
      expect(result.status).toBe(0);
      for (const file of fs.readdirSync(out)) {
        expect(fs.readFileSync(path.join(root, 'imports', file), 'utf8')).toBe(fs.readFileSync(path.join(out, file), 'utf8'));
      }
      expect(fs.readdirSync(path.join(root, 'imports')).sort()).toEqual(fs.readdirSync(out).sort());
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
