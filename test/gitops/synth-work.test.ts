/**
 * The work synth and `validate` do per Function, counted rather than timed (issue 35): each
 * distinct handler read or parsed once, the Python handlers read on this thread without the
 * parser's worker (no round trip to it at all when the reader of this thread reads every one), the
 * others in one round trip, each Function rendered and validated once. A change that makes synth
 * do more per Function fails here, on any machine, however loaded.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiObject, ApiObjectMetadataDefinition, App, Chart, Testing, Yaml } from 'cdk8s';
import { Node } from 'constructs';
import {
  FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessRelease, ServerlessStack,
} from '../../src';
import { _resetWork, _work } from '../../src/api/_work';
import { parserRunning } from '../../src/api/_python-parser';
import { validateManifests } from '../../src/policy/manifests';
import { loadYamlDocuments } from '../util/fixtures';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-work-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const NODE_SOURCES = ['exports.main = () => "a";\n', 'exports.main = () => "b";\n'];
/** Handlers the reader of this thread leaves to acorn: a regular expression. */
const NODE_TREE_SOURCES = ['exports.main = (e) => /a/.test(e);\n', 'exports.main = (e) => /b/.test(e);\n'];
const PYTHON_SOURCES = ['def main(event, context):\n    return "a"\n', 'def main(event, context):\n    return "b"\n'];
/** Handlers the reader of this thread leaves to tree-sitter in the parser's worker: names of non-ASCII letters. */
const PYTHON_TREE_SOURCES = ['def main(event, context):\n    grüße = "a"\n    return grüße\n', 'def main(event, context):\n    grüße = "b"\n    return grüße\n'];

/**
 * Twelve Functions: six Node.js and six Python, three of each on each of two sources; four of them autoscaled.
 * The Node.js runtime is the release's newest, which has support left: no runtime notice among the findings.
 */
function functions(team: Chart, release: ServerlessRelease = ServerlessRelease.V1_11_1): KymaFunction[] {
  const nodejs = release === ServerlessRelease.V1_13_0 ? FunctionRuntime.NODEJS_24 : FunctionRuntime.NODEJS_22;
  return Array.from({ length: 12 }, (_, i) => {
    const python = i % 2 === 1;
    const sources = python ? PYTHON_SOURCES : NODE_SOURCES;
    return new KymaFunction(team, `fn-${i}`, {
      runtime: python ? FunctionRuntime.PYTHON_312 : nodejs,
      source: FunctionSource.fromInline(sources[Math.floor(i / 2) % 2]),
      ...(i % 3 === 0 ? { scale: { minReplicas: 1, maxReplicas: 3 } } : {}),
    });
  });
}

describe.each([ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0])('GitOpsApp synth under release %s', release => {
  test('reads or parses each distinct handler once, with no round trip to the parser\'s worker, and renders and validates each Function once', () => {
    const app = new GitOpsApp({ outdir: dir });
    const stack = new ServerlessStack(app, 'serverless', { release });
    _resetWork();
    functions(new FunctionNamespace(app, 'team-a', { stack }), release);
    app.synth();
    expect(_work).toEqual({
      // Read on this thread: neither acorn nor tree-sitter and its worker are needed.
      nodeParses: 0,
      nodeReads: NODE_SOURCES.length,
      pythonReads: PYTHON_SOURCES.length,
      pythonParses: 0,
      pythonRoundTrips: 0,
      functionRenders: 12,
      // Each spec's JSON built once: validation checks it, and it is the spec the Function's object writes.
      functionJsons: 12,
      // So the check of the output finds the written Functions unchanged without comparing them field by field,
      functionComparisons: 0,
      // and checks none again: each is validated by its construct alone.
      functionValidations: 12,
      // One walk of the app's tree serves the annotations, the validation, the charts' order and their objects.
      treeWalks: 1,
    });
    expect(loadYamlDocuments(path.join(dir, '0001-team-a.k8s.yaml')).filter(o => o.kind === 'Function')).toHaveLength(12);
  });

  test('validate of the output reads or parses each distinct handler once, with no round trip to the parser\'s worker, and validates each Function once', () => {
    const app = new GitOpsApp({ outdir: dir });
    const stack = new ServerlessStack(app, 'serverless', { release });
    functions(new FunctionNamespace(app, 'team-a', { stack }), release);
    app.synth();
    _resetWork();
    const report = validateManifests(dir);
    expect(report.findings).toEqual([]);
    expect(report.releases.map(r => r.release)).toEqual([release]);
    expect(_work).toEqual({
      nodeParses: 0, nodeReads: NODE_SOURCES.length, pythonReads: PYTHON_SOURCES.length, pythonParses: 0, pythonRoundTrips: 0, functionRenders: 0, functionJsons: 0,
      functionComparisons: 0, functionValidations: 12, treeWalks: 0,
    });
  });

  test('handlers the readers of this thread leave to tree-sitter (in one round trip) or acorn are parsed once each, by synth and by validate', () => {
    const app = new GitOpsApp({ outdir: dir });
    const team = new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless', { release }) });
    _resetWork();
    functions(team, release);
    PYTHON_TREE_SOURCES.forEach((source, i) => [0, 1].forEach(copy => new KymaFunction(team, `tree-${i}-${copy}`, {
      runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline(source),
    })));
    NODE_TREE_SOURCES.forEach((source, i) => [0, 1].forEach(copy => new KymaFunction(team, `acorn-${i}-${copy}`, {
      runtime: release === ServerlessRelease.V1_13_0 ? FunctionRuntime.NODEJS_24 : FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(source),
    })));
    app.synth();
    const counts = {
      nodeReads: NODE_SOURCES.length, nodeParses: NODE_TREE_SOURCES.length, pythonReads: PYTHON_SOURCES.length, pythonParses: PYTHON_TREE_SOURCES.length,
      pythonRoundTrips: 1, functionValidations: 20,
    };
    expect(_work).toMatchObject(counts);
    _resetWork();
    expect(validateManifests(dir).findings).toEqual([]);
    expect(_work).toMatchObject(counts);
  });
});

describe.each([12, 24])('GitOpsApp synth of %i Functions', count => {
  test('walks the app\'s tree once, and renders no Function nor its metadata through cdk8s\'s generic resolve', () => {
    const app = new GitOpsApp({ outdir: dir });
    const stack = new ServerlessStack(app, 'serverless');
    for (let i = 0; i < count / 12; i++) functions(new FunctionNamespace(app, `team-${i}`, { stack }));
    const findAll = jest.spyOn(Node.prototype, 'findAll');
    const toJson = jest.spyOn(ApiObject.prototype, 'toJson');
    const metadataToJson = jest.spyOn(ApiObjectMetadataDefinition.prototype, 'toJson');
    try {
      _resetWork();
      app.synth();
      expect(_work.treeWalks).toBe(1);
      // No walk of the app or of a chart: cdk8s's App.charts and Chart.toJson each walk them twice.
      const walked = (findAll.mock.contexts as Node[]).filter(node => !node.scope || Chart.isChart(node.scopes[node.scopes.length - 1]));
      expect(walked.map(node => node.path)).toEqual([]);
      expect((toJson.mock.contexts as ApiObject[]).filter(object => object.kind === 'Function').map(object => object.node.path)).toEqual([]);
      expect(_work.functionRenders).toBe(count);
      // cdk8s renders the metadata of the other objects only (the stack's, the namespaces', the autoscalers').
      const metadataOf = (metadataToJson.mock.contexts as Array<{ apiObject: ApiObject }>).map(m => m.apiObject);
      expect(metadataOf.filter(object => object.kind === 'Function').map(object => object.node.path)).toEqual([]);
      expect(metadataOf.length).toBeGreaterThan(0);
    } finally {
      findAll.mockRestore();
      toJson.mockRestore();
      metadataToJson.mockRestore();
    }
  });
});

test('starts no parser\'s worker for handlers the reader of this thread reads; one it leaves to tree-sitter starts it, and synth ends it', () => {
  const app = new GitOpsApp({ outdir: dir });
  const team = new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') });
  functions(team);
  expect(parserRunning()).toBe(false);
  app.synth();
  expect(parserRunning()).toBe(false);
  // A handler with a problem, in another app: tree-sitter parses it in the worker, and its check finds the problem.
  const next = new GitOpsApp({ outdir: path.join(dir, 'next') });
  new KymaFunction(new FunctionNamespace(next, 'team-b', { stack: new ServerlessStack(next, 'serverless') }), 'broken', {
    runtime: FunctionRuntime.PYTHON_312,
    source: FunctionSource.fromInline('def main(event, context)\n    return "no colon"\n'),
  });
  expect(parserRunning()).toBe(true);
  expect(() => next.synth()).toThrow(/handler\.py:1: SyntaxError: expected ':'/);
  expect(parserRunning()).toBe(false);
});

test('a second synth of the same app parses nothing again', () => {
  const app = new GitOpsApp({ outdir: dir });
  functions(new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') }));
  app.synth();
  const before = { ..._work };
  app.synth();
  expect(_work.nodeParses - before.nodeParses).toBe(0);
  expect(_work.nodeReads - before.nodeReads).toBe(0);
  expect(_work.pythonRoundTrips - before.pythonRoundTrips).toBe(0);
  expect(_work.functionValidations - before.functionValidations).toBe(12);
});

test('an app without inline code starts no Python parser and parses nothing', () => {
  const app = new GitOpsApp({ outdir: dir });
  const team = new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') });
  new KymaFunction(team, 'from-git', {
    runtime: FunctionRuntime.PYTHON_312,
    source: FunctionSource.fromGitRepository({ url: 'https://github.com/example/functions.git', baseDir: '/hello', reference: 'main' }),
  });
  _resetWork();
  app.synth();
  expect(_work).toEqual({
    nodeParses: 0, nodeReads: 0, pythonReads: 0, pythonParses: 0, pythonRoundTrips: 0, functionRenders: 1, functionJsons: 1, functionComparisons: 0, functionValidations: 1,
    treeWalks: 1,
  });
});

test('a second synth of the same app builds each spec\'s JSON again once, and compares no Function', () => {
  const app = new GitOpsApp({ outdir: dir });
  functions(new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') }));
  app.synth();
  const before = { ..._work };
  app.synth();
  // The first synth's JSON went to its output: the second builds its own, and writes it as the first did.
  expect(_work.functionRenders - before.functionRenders).toBe(0);
  expect(_work.functionJsons - before.functionJsons).toBe(12);
  expect(_work.functionComparisons - before.functionComparisons).toBe(0);
});

test('a Function whose spec\'s JSON is not what its object writes is written from its own render, and compared once in the output', () => {
  const app = new GitOpsApp({ outdir: dir });
  const team = new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') });
  functions(team);
  // Labels out of key order: the object writes them sorted, which is not the JSON validation checked.
  new KymaFunction(team, 'labelled', {
    runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(NODE_SOURCES[0]), labels: { zone: 'b', app: 'orders' },
  });
  _resetWork();
  app.synth();
  expect(_work).toMatchObject({ functionRenders: 13, functionJsons: 14, functionComparisons: 1, functionValidations: 13 });
  const [labelled] = loadYamlDocuments(path.join(dir, '0001-team-a.k8s.yaml')).filter(o => o.metadata.name === 'labelled');
  expect(Object.keys(labelled.spec.labels)).toEqual(['app', 'zone']);
});

test('the Functions of a chart that renders its objects itself are written from their own render, and compared in the output', () => {
  class Labelled extends FunctionNamespace {
    public override toJson(): any[] {
      return super.toJson().map(o => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, team: 'a' } } }));
    }
  }
  const app = new GitOpsApp({ outdir: dir });
  functions(new Labelled(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') }));
  _resetWork();
  app.synth();
  // cdk8s's Chart.toJson validates the app again, each Function on the JSON its first validation built; then each
  // object builds its own, which the chart may change after: the check of the output compares them.
  expect(_work).toMatchObject({ functionRenders: 12, functionValidations: 24, functionJsons: 24, functionComparisons: 12 });
});

test('a plain cdk8s App renders each Function once, as GitOpsApp does', () => {
  const app = Testing.app();
  functions(new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') }));
  _resetWork();
  app.synth();
  expect(_work.functionRenders).toBe(12);
  expect(_work.nodeReads).toBe(NODE_SOURCES.length);
  expect(_work.nodeParses).toBe(0);
  expect(_work.pythonReads).toBe(PYTHON_SOURCES.length);
  expect(_work.pythonRoundTrips).toBe(0);
});

describe('GitOpsApp synth has no side effects on cdk8s or the tree', () => {
  test('writes its files without Yaml.save and without replacing Chart.toJson', () => {
    const save = jest.spyOn(Yaml, 'save');
    const toJson = Chart.prototype.toJson;
    try {
      const app = new GitOpsApp({ outdir: dir });
      const team = new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') });
      functions(team);
      app.synth();
      expect(save).not.toHaveBeenCalled();
      expect(Chart.prototype.toJson).toBe(toJson);
      expect(app.charts.filter(chart => Object.prototype.hasOwnProperty.call(chart, 'toJson'))).toEqual([]);
    } finally {
      save.mockRestore();
    }
  });

  test('uses the toJson of a chart that overrides it', () => {
    class Labelled extends Chart {
      public override toJson(): any[] {
        return super.toJson().map(o => ({ ...o, metadata: { ...o.metadata, labels: { team: 'a' } } }));
      }
    }
    const app = new GitOpsApp({ outdir: dir });
    const chart = new Labelled(app, 'labelled');
    new ApiObject(chart, 'Map', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } });
    app.synth();
    expect(loadYamlDocuments(path.join(dir, 'labelled.k8s.yaml'))[0].metadata.labels).toEqual({ team: 'a' });
  });

  test('decides the autoscaler of a Function before validating: validation adds and removes no construct', () => {
    const app = new App({ outdir: dir });
    const chart = new Chart(app, 'test', { namespace: 'team-a' });
    const fn = new KymaFunction(chart, 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(NODE_SOURCES[0]), scale: { minReplicas: 1, maxReplicas: 3 },
    });
    expect(fn.autoscaler).toBeUndefined();
    // A 1.13.0 stack created later decides the release, and with it the tree: its controller creates no autoscaler.
    new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
    expect(fn.autoscaler).toBeDefined();
    // A second stack of another release leaves the app's release to the default, whose controller creates it.
    new ServerlessStack(app, 'other', { release: ServerlessRelease.V1_11_1 });
    expect(fn.autoscaler).toBeUndefined();
    const constructs = app.node.findAll().length;
    expect(app.node.findAll().flatMap(c => c.node.validate())).toEqual([]);
    expect(app.node.findAll()).toHaveLength(constructs);
  });
});
