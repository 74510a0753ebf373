import { spawnSync } from 'node:child_process';
import Module from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as fc from 'fast-check';
import * as ts from 'typescript';
import { COMPILED_SCHEMAS, compiledSchemaText, generatedFile } from '../../scripts/compile-validators';
import { CRD_FILE, crdFileText } from '../../scripts/crd-file';
import { rewriteImport } from '../../scripts/import-rewrite';
import { ServerlessRelease, functionCrdSpec } from '../../src/api';
import { loadYamlDocuments } from '../util/fixtures';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';

const root = path.resolve(__dirname, '..', '..');

/** Compiles TypeScript and loads it as a CommonJS module that resolves packages from this repository. */
function loadTypeScript(source: string, name: string): Record<string, (value: unknown) => any> {
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const filename = path.join(root, 'imports', name);
  const loaded = new Module(filename) as Module & { _compile(code: string, file: string): void; paths: string[] };
  loaded.filename = filename;
  loaded.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(root);
  loaded._compile(js, filename);
  return loaded.exports as Record<string, (value: unknown) => any>;
}

describe('the generated CRD file and imports/', () => {
  test('crds/ holds the CRD src/api generates (run `npm run import` when this fails)', () => {
    expect(fs.readFileSync(path.join(root, CRD_FILE), 'utf8')).toBe(crdFileText());
  });

  test.each(COMPILED_SCHEMAS.map(compiled => [generatedFile(compiled), compiled] as const))(
    '%s holds its schema as ajv compiles it now (run `npm run validators` when this fails)', (file, compiled) => {
      expect(fs.readFileSync(path.join(root, file), 'utf8')).toBe(compiledSchemaText(compiled));
    });

  test('the 1.13.0 CRD is a valid CustomResourceDefinition', () => {
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'functions.serverless.kyma-project.io' }, spec: functionCrdSpec(ServerlessRelease.V1_13_0) };
    expectValidKubernetesObjects([crd]);
  });

  test('the CRD file is a valid CustomResourceDefinition', () => {
    const [crd] = loadYamlDocuments(path.join(root, CRD_FILE));
    expectValidKubernetesObjects([crd]);
    expect(crd.spec).toEqual(functionCrdSpec());
  });

  describe('imports/', () => {
    let out: string;
    beforeAll(() => {
      out = fs.mkdtempSync(path.join(os.tmpdir(), 'imports-'));
      const result = spawnSync(path.join(root, 'node_modules', '.bin', 'cdk8s'),
        ['import', '--no-check-upgrade', '--output', out, CRD_FILE], { cwd: root, env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`cdk8s import failed:\n${result.stderr}`);
    });
    afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

    test('is what `cdk8s import` makes of the CRD, rewritten by scripts/import-rewrite.ts (run `npm run import` when this fails)', () => {
      for (const file of fs.readdirSync(out)) {
        expect(fs.readFileSync(path.join(root, 'imports', file), 'utf8')).toBe(rewriteImport(fs.readFileSync(path.join(out, file), 'utf8')));
      }
      expect(fs.readdirSync(path.join(root, 'imports')).sort()).toEqual(fs.readdirSync(out).sort());
    });

    test("the rewritten toJson_ functions give what cdk8s import's give, key for key and in order", () => {
      const text = fs.readFileSync(path.join(out, 'serverless.kyma-project.io.ts'), 'utf8');
      const original = loadTypeScript(text, 'original.ts');
      const rewritten = loadTypeScript(rewriteImport(text), 'rewritten.ts');
      expect(Object.keys(rewritten).filter(k => k.startsWith('toJson_')).sort()).toEqual(Object.keys(original).filter(k => k.startsWith('toJson_')).sort());
      const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
      const key = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'app', 'serverless.kyma-project.io/x'));
      const map = maybe(fc.dictionary(key, maybe(fc.string({ maxLength: 8 })), { maxKeys: 4 }));
      const resources = maybe(fc.record({ profile: maybe(fc.constantFrom('S', 'M', 'normal')), resources: maybe(fc.record({ limits: maybe(fc.dictionary(key, fc.constant({ value: '1' }), { maxKeys: 2 })) })) }, { requiredKeys: [] }));
      const spec = fc.record({
        annotations: map,
        labels: map,
        env: maybe(fc.array(fc.record({ name: fc.string({ maxLength: 8 }), value: maybe(fc.string({ maxLength: 8 })), valueFrom: maybe(fc.record({ configMapKeyRef: maybe(fc.record({ name: fc.string({ maxLength: 6 }), key: fc.string({ maxLength: 6 }), optional: maybe(fc.boolean()) })) }, { requiredKeys: [] })) }, { requiredKeys: ['name'] }), { maxLength: 3 })),
        replicas: maybe(fc.integer({ min: 0, max: 5 })),
        runtime: maybe(fc.constantFrom('nodejs22', 'python312')),
        resourceConfiguration: maybe(fc.record({ build: resources, function: resources }, { requiredKeys: [] })),
        scaleConfig: maybe(fc.record({ minReplicas: fc.integer({ min: 0, max: 3 }), maxReplicas: fc.integer({ min: 0, max: 9 }) })),
        source: maybe(fc.record({ inline: maybe(fc.record({ source: fc.string({ maxLength: 20 }), dependencies: maybe(fc.string({ maxLength: 10 })) }, { requiredKeys: ['source'] })) }, { requiredKeys: [] })),
        template: maybe(fc.record({ labels: map, annotations: map }, { requiredKeys: [] })),
      }, { requiredKeys: [] });
      const ownKeys = (value: unknown): unknown => (value !== null && typeof value === 'object'
        ? Object.getOwnPropertyNames(value).map(k => [k, ownKeys((value as Record<string, unknown>)[k])]) : value);
      fc.assert(fc.property(spec, s => {
        const expected = original.toJson_FunctionSpec(s);
        const actual = rewritten.toJson_FunctionSpec(s);
        expect(ownKeys(actual)).toEqual(ownKeys(expected));
        if (expected !== undefined) expect(Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected));
      }), { numRuns: 2000 });
    });
  });
});
