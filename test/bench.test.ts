/**
 * The app of cdk8s alone that `npm run bench` sets beside the user's path (bench/user-path.ts): the
 * bench's own app, synthesized by cdk8s's `App` with no construct validated. Its rows are read as
 * "what cdk8s alone costs for these objects", so it must write the same objects and check none.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { _work } from '../src/api/_work';
import { _schemaCheckCounts } from '../src/policy/manifests';
import { bareApp, uncheckedApp } from '../bench/user-path';

const MAIN = path.join(__dirname, '..', 'bench', 'functions', 'main.ts');

/** Runs a bench app's TypeScript in this process, its imports taken from this test's modules, with BENCH_FUNCTIONS and CDK8S_OUTDIR set for the time of the run. */
function runApp(source: string, functions: number, outdir: string): void {
  const modules: { [id: string]: unknown } = {
    'cdk8s': require('cdk8s'),
    'cdk8s-plus-27': require('cdk8s-plus-27'),
    'constructs': require('constructs'),
    '../../src': require('../src'),
  };
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 } }).outputText;
  const saved = { BENCH_FUNCTIONS: process.env.BENCH_FUNCTIONS, CDK8S_OUTDIR: process.env.CDK8S_OUTDIR };
  process.env.BENCH_FUNCTIONS = String(functions);
  process.env.CDK8S_OUTDIR = outdir;
  try {
    const load = (id: string) => {
      if (!(id in modules)) throw new Error(`the bench app imports ${id}, which this test does not give it`);
      return modules[id];
    };
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    new Function('require', 'exports', js)(load, {});
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** Each object of the YAML files of a folder (and its folders), as `apiVersion kind namespace/name`, sorted. */
function objectsIn(folder: string): string[] {
  const names: string[] = [];
  for (const entry of fs.readdirSync(folder, { recursive: true }) as string[]) {
    if (!entry.endsWith('.k8s.yaml')) continue;
    for (const document of parseAllDocuments(fs.readFileSync(path.join(folder, entry), 'utf8'))) {
      const o = document.toJS() as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
      names.push(`${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    }
  }
  return names.sort();
}

describe("the bench's app of cdk8s alone", () => {
  const source = fs.readFileSync(MAIN, 'utf8');

  test('is the bench app with cdk8s\'s App and no construct validated', () => {
    const bare = bareApp(source);
    expect(bare.match(/new App\(\)/g)).toHaveLength(1);
    expect(bare).not.toContain('new GitOpsApp(');
    expect(bare).toContain('.validate = () => []');
    // The rest of the app is the bench's own, line for line.
    expect(bare.split('\n').filter(line => !source.includes(line))).toHaveLength(5);
  });

  test('fails when the bench app no longer makes its GitOpsApp the way it looks for', () => {
    expect(() => bareApp(source.replace('const app = new GitOpsApp();', 'const app = new GitOpsApp({});'))).toThrow(/must make its app once/);
  });

  test('writes the objects the bench app writes, and validates no Function', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-bare-'));
    const { Node } = require('constructs') as typeof import('constructs');
    const validate = Object.getOwnPropertyDescriptor(Node.prototype, 'validate')!;
    try {
      const before = _work.functionValidations;
      runApp(source, 6, path.join(root, 'gitops'));
      expect(_work.functionValidations - before).toBe(6);

      const between = _work.functionValidations;
      runApp(bareApp(source), 6, path.join(root, 'bare'));
      expect(_work.functionValidations - between).toBe(0);

      const objects = objectsIn(path.join(root, 'gitops'));
      expect(objects.filter(o => o.includes(' Function '))).toHaveLength(6);
      expect(objectsIn(path.join(root, 'bare'))).toEqual(objects);
    } finally {
      // The bare app turns validation off for every construct of this test file's modules.
      Object.defineProperty(Node.prototype, 'validate', validate);
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the bench's app of synth with every check off", () => {
  const source = fs.readFileSync(MAIN, 'utf8');

  test('is the bench app with no construct validated and no check of the output', () => {
    const unchecked = uncheckedApp(source);
    expect(unchecked.match(/new GitOpsApp\(\)/g)).toHaveLength(1);
    expect(unchecked).toContain('.validate = () => []');
    expect(unchecked).toContain('.validateOutput = () => {}');
    expect(unchecked.split('\n').filter(line => !source.includes(line))).toHaveLength(4);
    expect(() => uncheckedApp(source.replace('const app = new GitOpsApp();', 'const app = new GitOpsApp({});'))).toThrow(/must make its app once/);
  });

  test('writes the files the bench app writes, byte for byte, and checks nothing', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-unchecked-'));
    const { Node } = require('constructs') as typeof import('constructs');
    const { GitOpsApp } = require('../src') as typeof import('../src');
    const validate = Object.getOwnPropertyDescriptor(Node.prototype, 'validate')!;
    const validateOutput = Object.getOwnPropertyDescriptor(GitOpsApp.prototype, 'validateOutput')!;
    try {
      const counted = () => _work.functionValidations + _schemaCheckCounts.bundled + _schemaCheckCounts.model;
      const before = counted();
      runApp(source, 6, path.join(root, 'checked'));
      // The counts move when synth checks: 6 Functions validated, and every written object checked.
      expect(counted() - before).toBeGreaterThan(6);
      const validations = _work.functionValidations;
      const schemaChecks = _schemaCheckCounts.bundled + _schemaCheckCounts.model;
      runApp(uncheckedApp(source), 6, path.join(root, 'unchecked'));
      expect(_work.functionValidations).toBe(validations);
      expect(_schemaCheckCounts.bundled + _schemaCheckCounts.model).toBe(schemaChecks);

      const files = (folder: string) => (fs.readdirSync(folder, { recursive: true }) as string[]).filter(f => f.endsWith('.yaml')).sort();
      const written = files(path.join(root, 'checked'));
      expect(written.length).toBeGreaterThan(10);
      expect(files(path.join(root, 'unchecked'))).toEqual(written);
      for (const file of written) {
        expect(fs.readFileSync(path.join(root, 'unchecked', file), 'utf8')).toBe(fs.readFileSync(path.join(root, 'checked', file), 'utf8'));
      }
    } finally {
      // The app turns the checks off for every construct and GitOpsApp of this test file's modules.
      Object.defineProperty(Node.prototype, 'validate', validate);
      Object.defineProperty(GitOpsApp.prototype, 'validateOutput', validateOutput);
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
