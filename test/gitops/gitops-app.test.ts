import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiObject, App, Chart, JsonPatch, Yaml } from 'cdk8s';
import { parse } from 'yaml';
import {
  EndpointAuth, Exposure, FunctionNamespace, FunctionRuntime, FunctionTraffic, FunctionSource, GatewayTls, GitOpsApp, KedaTrigger, KymaFunction,
  ServerlessRelease, ServerlessStack, SyncWave, environmentOutdir,
} from '../../src';
import { _resetWork, _work } from '../../src/api/_work';
import { renderedAsValidated, wasValidAtSynth } from '../../src/function/_valid-at-synth';
import { FLUX_STAGES_FOLDER } from '../../src/gitops/flux-stages';
import { KUSTOMIZATION_FILE, kustomization } from '../../src/gitops/gitops-app';
import { SYNC_OPTIONS_ANNOTATION, SYNC_WAVE_ANNOTATION } from '../../src/gitops/sync-waves';
import { loadYamlDocuments } from '../util/fixtures';

function synthApp(): { dir: string; objects: any[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitops-'));
  const app = new GitOpsApp({ outdir: dir });
  const stack = new ServerlessStack(app, 'serverless');
  const team = new FunctionNamespace(app, 'team-a', { stack });
  new KymaFunction(team, 'hello', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1') });
  app.synth();
  const objects = fs.readdirSync(dir).filter(f => f.endsWith('.k8s.yaml')).sort().flatMap(f => loadYamlDocuments(path.join(dir, f)));
  return { dir, objects };
}

test('GitOpsApp synth warns on standard error of a Function too large for client-side apply, and writes it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitops-'));
  const app = new GitOpsApp({ outdir: dir });
  const stack = new ServerlessStack(app, 'serverless');
  const team = new FunctionNamespace(app, 'team-a', { stack });
  new KymaFunction(team, 'big', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(`exports.main = () => "${'x'.repeat(300 * 1024)}";`) });
  let stderr = '';
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => { stderr += chunk.toString(); return true; });
  try {
    app.synth();
  } finally {
    err.mockRestore();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  expect(stderr).toMatch(new RegExp(`^warning: ${dir.replace(/[/.]/g, '\\$&')}/0001-team-a\\.k8s\\.yaml: Function team-a/big: Too large for client-side apply: .*\\[clientSideApplySize\\]\n$`));
});

describe('GitOpsApp', () => {
  const { dir, objects } = synthApp();
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('writes one file per chart in apply order, and a kustomization listing them', () => {
    expect(fs.readdirSync(dir).sort()).toEqual(['0000-serverless.k8s.yaml', '0001-team-a.k8s.yaml', FLUX_STAGES_FOLDER, KUSTOMIZATION_FILE]);
    expect(parse(fs.readFileSync(path.join(dir, KUSTOMIZATION_FILE), 'utf8'))).toEqual({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['0000-serverless.k8s.yaml', '0001-team-a.k8s.yaml'],
    });
  });

  test('puts CRDs, Namespaces and PriorityClasses first, Functions last', () => {
    const wave = (o: any) => o.metadata.annotations[SYNC_WAVE_ANNOTATION];
    for (const o of objects) {
      const expected = ['CustomResourceDefinition', 'Namespace', 'PriorityClass'].includes(o.kind) ? SyncWave.FOUNDATION
        : o.kind === 'Function' ? SyncWave.FUNCTIONS : SyncWave.SYSTEM;
      expect(`${o.kind}/${o.metadata.name} ${wave(o)}`).toBe(`${o.kind}/${o.metadata.name} ${expected}`);
    }
    expect(objects.filter(o => wave(o) === SyncWave.FOUNDATION).map(o => o.kind).sort())
      .toEqual(['CustomResourceDefinition', 'Namespace', 'Namespace', 'PriorityClass']);
  });

  test('applies the CRD server-side and lets Functions skip the dry run before their CRD exists', () => {
    const options = (kind: string) => objects.filter(o => o.kind === kind).map(o => o.metadata.annotations[SYNC_OPTIONS_ANNOTATION]);
    expect(options('CustomResourceDefinition')).toEqual(['ServerSideApply=true']);
    expect(options('Function')).toEqual(['SkipDryRunOnMissingResource=true']);
    expect(objects.filter(o => !['CustomResourceDefinition', 'Function'].includes(o.kind))
      .filter(o => o.metadata.annotations[SYNC_OPTIONS_ANNOTATION] !== undefined)).toEqual([]);
  });
});

describe('GitOpsApp with Functions people can reach', () => {
  test('puts the JWT policies in the system\'s wave, and routes and Subscriptions in wave 0 with the Functions', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitops-'));
    try {
      const app = new GitOpsApp({ outdir: dir });
      const stack = new ServerlessStack(app, 'serverless', {
        exposure: { via: Exposure.istio({ gateway: 'istio-system/functions' }), domain: 'apps.example.com', gateway: { tls: GatewayTls.fromSecret('apps-tls') } },
      });
      const team = new FunctionNamespace(app, 'team-a', { stack });
      const fn = new KymaFunction(team, 'hello', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1') });
      fn.expose({ host: 'hello', auth: EndpointAuth.jwt({ issuer: 'https://login.example.com', jwksUri: 'https://login.example.com/keys' }) });
      fn.subscribe({ source: 'shop', types: ['order.created.v1'] });
      app.synth();
      const objects = fs.readdirSync(dir).filter(f => f.endsWith('.k8s.yaml')).sort().flatMap(f => loadYamlDocuments(path.join(dir, f)));
      const waves = Object.fromEntries(objects.map(o => [`${o.kind}/${o.metadata.name}`, [o.metadata.annotations[SYNC_WAVE_ANNOTATION], o.metadata.annotations[SYNC_OPTIONS_ANNOTATION]]]));
      const skip = 'SkipDryRunOnMissingResource=true';
      expect(waves).toMatchObject({
        'Gateway/functions': [SyncWave.SYSTEM, skip],
        'Function/hello': [SyncWave.FUNCTIONS, skip],
        'RequestAuthentication/hello-jwt': [SyncWave.SYSTEM, skip],
        'AuthorizationPolicy/hello-jwt': [SyncWave.SYSTEM, skip],
        'AuthorizationPolicy/hello-eventing': [SyncWave.SYSTEM, skip],
        'VirtualService/hello': [SyncWave.FUNCTIONS, skip],
        'Subscription/hello': [SyncWave.FUNCTIONS, skip],
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('GitOpsApp with Functions KEDA scales', () => {
  test('puts the ScaledObject in wave 1, after the Function it scales, and skips its dry run: KEDA\'s CRD comes from KEDA', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitops-'));
    try {
      const app = new GitOpsApp({ outdir: dir });
      const team = new FunctionNamespace(app, 'team-a');
      new KymaFunction(team, 'hello', {
        runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1'),
        keda: { maxReplicas: 2, triggers: [KedaTrigger.cron({ timezone: 'UTC', start: '0 8 * * *', end: '0 18 * * *', desiredReplicas: 1 })] },
      });
      app.synth();
      const objects = fs.readdirSync(dir).filter(f => f.endsWith('.k8s.yaml')).sort().flatMap(f => loadYamlDocuments(path.join(dir, f)));
      const annotations = (kind: string) => objects.find(o => o.kind === kind).metadata.annotations;
      expect(annotations('Function')[SYNC_WAVE_ANNOTATION]).toBe(SyncWave.FUNCTIONS);
      expect(annotations('ScaledObject')).toEqual({ [SYNC_WAVE_ANNOTATION]: SyncWave.ROUTES, [SYNC_OPTIONS_ANNOTATION]: 'SkipDryRunOnMissingResource=true' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kustomization', () => {
  test('lists the files sorted, whatever order they come in', () => {
    expect(parse(kustomization(['b.yaml', 'a.yaml'])).resources).toEqual(['a.yaml', 'b.yaml']);
  });
});

describe('environmentOutdir', () => {
  test('is a folder of the output named after the environment, or the output itself', () => {
    expect(environmentOutdir('dist', { name: 'prod' })).toBe(path.join('dist', 'prod'));
    expect(environmentOutdir('dist', { name: '' })).toBe('dist');
  });

  test('throws when the name is not a plain folder name', () => {
    expect(() => environmentOutdir('dist', { name: '../prod' })).toThrow('environment name \'../prod\' must be lower-case letters, digits and \'-\'');
  });
});

describe('GitOpsApp apply order and checks', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitops-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files = () => fs.readdirSync(dir).filter(f => f.endsWith('.k8s.yaml')).sort();

  test('a chart comes after the charts it is applied after, even when declared first', () => {
    const app = new GitOpsApp({ outdir: dir });
    const late = new Chart(app, 'late');
    new ApiObject(late, 'Settings', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } });
    const stack = new ServerlessStack(app, 'serverless');
    Object.defineProperty(late, 'appliedAfter', { value: [stack] });
    const team = new FunctionNamespace(app, 'team-b', { stack });
    expect(team.appliedAfter).toEqual([stack]);
    app.synth();
    expect(files()).toEqual(['0000-serverless.k8s.yaml', '0001-late.k8s.yaml', '0002-team-b.k8s.yaml']);
  });

  test.each([
    ['within charts', false],
    ['within and across charts', true],
  ])('orders the objects by their constructs\' dependencies as cdk8s\'s App does, %s', (_, across) => {
    const build = (app: App) => {
      const [a, b, c] = ['a', 'b', 'c'].map(id => new Chart(app, id, { namespace: 'apps' }));
      const map = (chart: Chart, name: string) => new ApiObject(chart, name, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: name } });
      const [a1, a2, b1, c1, c2] = [map(a, 'a1'), map(a, 'a2'), map(b, 'b1'), map(c, 'c1'), map(c, 'c2')];
      a1.node.addDependency(a2);
      c1.node.addDependency(c2);
      if (!across) return;
      // Across charts, which makes the charts depend on each other (and cdk8s number the files), and between charts.
      a2.node.addDependency(c1);
      b.node.addDependency(a);
      b1.node.addDependency(a1);
    };
    const written = (outdir: string) => Object.fromEntries(fs.readdirSync(outdir).filter(f => f.endsWith('.k8s.yaml')).sort()
      .map(f => [f, loadYamlDocuments(path.join(outdir, f)).map(o => o.metadata.name)]));
    const plain = new App({ outdir: path.join(dir, 'cdk8s') });
    build(plain);
    plain.synth();
    const app = new GitOpsApp({ outdir: path.join(dir, 'gitops') });
    build(app);
    app.synth();
    expect(written(app.outdir)).toEqual(written(plain.outdir));
    expect(Object.keys(written(app.outdir))).toEqual(across ? ['0000-c.k8s.yaml', '0001-a.k8s.yaml', '0002-b.k8s.yaml'] : ['a.k8s.yaml', 'b.k8s.yaml', 'c.k8s.yaml']);
  });

  test('without any ordering, files keep the names cdk8s gives them', () => {
    const app = new GitOpsApp({ outdir: dir });
    new ServerlessStack(app, 'serverless');
    app.synth();
    expect(files()).toEqual(['serverless.k8s.yaml']);
  });

  test('fails on a chart cycle', () => {
    const app = new GitOpsApp({ outdir: dir });
    const a = new Chart(app, 'a');
    const b = new Chart(app, 'b');
    Object.defineProperty(a, 'appliedAfter', { value: [b] });
    Object.defineProperty(b, 'appliedAfter', { value: [a] });
    expect(() => app.synth()).toThrow(/Charts are applied after each other in a cycle: a -> b -> a/);
  });

  test('fails synth on an object the checks reject, naming the file, object, field and rule', () => {
    const app = new GitOpsApp({ outdir: dir });
    new ApiObject(new Chart(app, 'raw'), 'Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, stringData: { token: 'x' } });
    expect(() => app.synth()).toThrow(/^The output in .* is invalid:\n {2}raw\.k8s\.yaml: Secret token \(stringData\): holds token; create the Secret in the cluster .* \[policy\.secret-data-in-git\]$/);
  });

  test('checks a Function its construct validated only once, and a Function patched since then again', () => {
    const app = new GitOpsApp({ outdir: dir });
    const stack = new ServerlessStack(app, 'serverless');
    const team = new FunctionNamespace(app, 'team-c', { stack });
    const source = FunctionSource.fromInline('exports.main = () => "hi"');
    new KymaFunction(team, 'kept', { runtime: FunctionRuntime.NODEJS_22, source });
    const patched = new KymaFunction(team, 'patched', { runtime: FunctionRuntime.NODEJS_22, source });
    patched.apiObject.addJsonPatch(JsonPatch.replace('/spec/replicas', -1));
    _resetWork();
    expect(() => app.synth()).toThrow(/^The output in .* is invalid:\n {2}0001-team-c\.k8s\.yaml: Function team-c\/patched \(spec\.replicas\): .*\[openapi\.minimum\]\n\(Functions were checked against release 1\.11\.1, that of the Function CRD in 0000-serverless\.k8s\.yaml\)$/);
    // Each by its construct, and the patched one again in the output.
    expect(_work.functionValidations).toBe(3);
    const [kept, written] = loadYamlDocuments(path.join(dir, '0001-team-c.k8s.yaml')).filter(o => o.kind === 'Function');
    // The written Function is the one its construct checked: the check of the output skips it.
    expect(wasValidAtSynth(app, kept, ServerlessRelease.V1_11_1)).toBe(true);
    expect(wasValidAtSynth(app, written, ServerlessRelease.V1_11_1)).toBe(false);
    // Compared as data: the order of keys and metadata the rules do not read do not matter; any value, type or key they read does.
    const release = ServerlessRelease.V1_11_1;
    expect(wasValidAtSynth(app, { ...kept, spec: Object.fromEntries(Object.entries(kept.spec).reverse()) }, release)).toBe(true);
    expect(wasValidAtSynth(app, { ...kept, metadata: { ...kept.metadata, labels: { team: 'c' } } }, release)).toBe(true);
    expect(wasValidAtSynth(app, { ...kept, spec: { ...kept.spec, replicas: '1' } }, release)).toBe(false);
    expect(wasValidAtSynth(app, { ...kept, spec: { ...kept.spec, replicas: 2 } }, release)).toBe(false);
    expect(wasValidAtSynth(app, { ...kept, spec: { ...kept.spec, labels: {} } }, release)).toBe(false);
    expect(wasValidAtSynth(app, { ...kept, spec: { ...kept.spec, '': 1 } }, release)).toBe(false);
    expect(wasValidAtSynth(app, { ...kept, spec: { ...kept.spec, env: [...kept.spec.env ?? [], undefined] } }, release)).toBe(false);
    expect(wasValidAtSynth(app, { ...kept, spec: { ...kept.spec, source: { inline: { ...kept.spec.source.inline, source: 'exports.main = () => "ho"' } } } }, release)).toBe(false);
    // Checked against another release, it is checked again; and another app has validated nothing.
    expect(wasValidAtSynth(app, kept, ServerlessRelease.V1_13_0)).toBe(false);
    expect(wasValidAtSynth(new GitOpsApp({ outdir: dir }), kept, ServerlessRelease.V1_11_1)).toBe(false);
  });

  test('trusts the spec a Function\'s object took over from validation only as its render returned it', () => {
    const app = new GitOpsApp({ outdir: dir });
    const team = new FunctionNamespace(app, 'team-c', { stack: new ServerlessStack(app, 'serverless') });
    const fn = new KymaFunction(team, 'kept', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => "hi"') });
    expect(fn.node.validate()).toEqual([]);
    const release = ServerlessRelease.V1_11_1;
    // The first render takes over the spec validation checked: the very object, so only the caller can tell it is unchanged.
    const taken = fn.apiObject.toJson();
    expect(renderedAsValidated(taken, fn.apiObject)).toBe(true);
    expect(renderedAsValidated(taken, team)).toBe(false);
    expect(wasValidAtSynth(app, taken, release)).toBe(false);
    expect(wasValidAtSynth(app, taken, release, true)).toBe(true);
    expect(wasValidAtSynth(app, { ...taken, metadata: { ...taken.metadata, name: 'other' } }, release, true)).toBe(false);
    expect(wasValidAtSynth(app, { ...taken, extra: 1 }, release, true)).toBe(false);
    expect(wasValidAtSynth(app, taken, ServerlessRelease.V1_13_0, true)).toBe(false);
    // A later render builds its own, equal as data: compared field by field.
    const again = fn.apiObject.toJson();
    expect(again).toStrictEqual(taken);
    expect(again.spec).not.toBe(taken.spec);
    expect(renderedAsValidated(again, fn.apiObject)).toBe(false);
    expect(wasValidAtSynth(app, again, release)).toBe(true);
    expect(wasValidAtSynth(app, { ...again, spec: { ...again.spec, replicas: -1 } }, release)).toBe(false);
  });

  test('checks again a Function that a chart rendering its objects itself changed in place', () => {
    class Stopped extends FunctionNamespace {
      public override toJson(): any[] {
        const objects = super.toJson();
        for (const o of objects) if (o.kind === 'Function') o.spec.replicas = -1;
        return objects;
      }
    }
    const app = new GitOpsApp({ outdir: dir });
    const team = new Stopped(app, 'team-c', { stack: new ServerlessStack(app, 'serverless') });
    new KymaFunction(team, 'kept', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => "hi"') });
    expect(() => app.synth()).toThrow(/^The output in .* is invalid:\n {2}0001-team-c\.k8s\.yaml: Function team-c\/kept \(spec\.replicas\): .*\[openapi\.minimum\]/);
  });

  test('checks Functions against the release of the Function CRD in the output, and names it when one fails', () => {
    const app = new GitOpsApp({ outdir: dir });
    const stack = new ServerlessStack(app, 'serverless');
    const team = new FunctionNamespace(app, 'team-e', { stack });
    new ApiObject(team, 'Raw', {
      apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'raw', namespace: 'team-e' },
      spec: { runtime: 'nodejs24', source: { inline: { source: 'exports.main = () => 1' } } },
    });
    expect(() => app.synth()).toThrow(/^The output in .* is invalid:\n {2}0001-team-e\.k8s\.yaml: Function team-e\/raw \(spec\.runtime\): .*"nodejs22".*\n\(Functions were checked against release 1\.11\.1, that of the Function CRD in 0000-serverless\.k8s\.yaml\)$/);
  });

  test('without a Function CRD in the output, checks Functions against the release of their FunctionNamespace', () => {
    const app = new GitOpsApp({ outdir: dir });
    const team = new FunctionNamespace(app, 'team-f', { release: ServerlessRelease.V1_13_0 });
    new ApiObject(team, 'Raw', {
      apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'raw', namespace: 'team-f' },
      spec: { runtime: 'nodejs22', replicas: -1, source: { inline: { source: 'exports.main = () => 1' } } },
    });
    expect(() => app.synth()).toThrow(/\[openapi\.minimum\]\n\(Functions were checked against release 1\.13\.0, that of their FunctionNamespace or the app's stacks\)$/);
  });
  test('synthesizes a 1.13.0 FunctionNamespace\'s nodejs24 Function without a stack in the app', () => {
    const app = new GitOpsApp({ outdir: dir });
    const team = new FunctionNamespace(app, 'team-g', { release: ServerlessRelease.V1_13_0 });
    new KymaFunction(team, 'hello', { runtime: FunctionRuntime.of('nodejs24'), source: FunctionSource.fromInline('exports.main = () => 1') });
    app.synth();
    expect(loadYamlDocuments(path.join(dir, 'team-g.k8s.yaml')).find(o => o.kind === 'Function').spec.runtime).toBe('nodejs24');
  });

  test('names each finding after the file of its chart, also when one chart\'s name ends in another\'s', () => {
    const app = new GitOpsApp({ outdir: dir });
    const functions = new Chart(app, 'functions');
    const defaultFunctions = new Chart(app, 'default-functions');
    Object.defineProperty(functions, 'appliedAfter', { value: [defaultFunctions] });
    new ApiObject(functions, 'Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, stringData: { token: 'x' } });
    expect(() => app.synth()).toThrow(/^The output in .* is invalid:\n {2}0001-functions\.k8s\.yaml: Secret token /);
    expect(files()).toEqual(['0000-default-functions.k8s.yaml', '0001-functions.k8s.yaml']);
  });

  test('fails synth when a traffic split takes the name of a Function, whose Service the controller names after it', () => {
    const app = new GitOpsApp({ outdir: dir });
    const team = new FunctionNamespace(app, 'team-d');
    const source = FunctionSource.fromInline('exports.main = () => 1');
    const [v1, v2] = ['orders-v1', 'orders-v2'].map(name => new KymaFunction(team, name, { runtime: FunctionRuntime.NODEJS_22, source }));
    new KymaFunction(team, 'orders', { runtime: FunctionRuntime.NODEJS_22, source });
    new FunctionTraffic(team, 'Split', { name: 'orders', routes: [{ function: v1, percent: 90 }, { function: v2, percent: 10 }] });
    expect(() => app.synth()).toThrow(/team-d\.k8s\.yaml: Function team-d\/orders \(metadata\.name\): Service team-d\/orders \(team-d\.k8s\.yaml\) has the name the controller gives the Function's Service/);
  });

  test('writes each file byte for byte as cdk8s\'s writer does, and gives cdk8s its writer back', () => {
    const save = Yaml.save;
    const app = new GitOpsApp({ outdir: dir });
    const stack = new ServerlessStack(app, 'serverless');
    const team = new FunctionNamespace(app, 'team-d', { stack });
    new KymaFunction(team, 'multi-line', {
      runtime: FunctionRuntime.PYTHON_312,
      source: FunctionSource.fromInline('def main(event, context):\n    return "yes: no #1"\n', 'requests==2.31.0\n'),
      labels: { 'on': 'off', 'version': '1.10' },
    });
    app.synth();
    expect(Yaml.save).toBe(save);
    for (const file of files()) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      expect(text).toBe(Yaml.stringify(...loadYamlDocuments(path.join(dir, file))));
    }
  });

  test('records the folders it checked when asked to (the synth script then skips them)', () => {
    const record = path.join(dir, '..', `${path.basename(dir)}-validated`);
    process.env.KYMA_SERVERLESS_VALIDATED_FOLDERS = record;
    try {
      const app = new GitOpsApp({ outdir: dir });
      new ServerlessStack(app, 'serverless');
      app.synth();
      expect(fs.readFileSync(record, 'utf8')).toBe(`${path.resolve(dir)}\n`);
    } finally {
      delete process.env.KYMA_SERVERLESS_VALIDATED_FOLDERS;
      fs.rmSync(record, { force: true });
    }
  });
});
