/**
 * `kyma-serverless diff`, and `apply --prune` after it, against the fake API server over HTTP with
 * the real client-node: a cluster holding an earlier dist/ (applied with `kyma-serverless apply`),
 * and the manifests of a change to it. The API server's answers for immutable fields are the ones
 * recorded from kube-apiserver (test/fixtures/api-server/immutable/).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { parseAllDocuments, stringify } from 'yaml';
import { APPLYSET_PART_OF_LABEL, ApplySet, applySetId } from '../../src/cli/_applyset';
import { ApplyOptions, runApply } from '../../src/cli/apply';
import { DiffOptions, DiffOutcome, DiffReport, addDiffCommand, formatDiffReport, runDiff } from '../../src/cli/diff';
import { renderMarkdown, yamlFieldDiff } from '../../src/cli/diff/render';
import { main, program } from '../../src/cli/index';
import { BUILT_IN_RESOURCES, NAMESPACES } from '../util/fake-cluster';
import { API_RULES, FakeKubeApi, KubeObject, ResourceType, SUBSCRIPTIONS, writeKubeconfig } from '../util/fake-kube-api';

const DIST = path.join(__dirname, '..', '..', 'dist');
const FILES = ['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml'];

let scratch: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'diff-'));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

type Files = { [file: string]: KubeObject[] };

/** The objects of this repository's dist/, file by file. */
function distObjects(): Files {
  return Object.fromEntries(FILES.map(file => [file, parseAllDocuments(fs.readFileSync(path.join(DIST, file), 'utf8')).map(d => d.toJS())]));
}

/** Writes a folder of manifests. */
function folder(files: Files): string {
  const dir = fs.mkdtempSync(path.join(scratch, 'dist-'));
  for (const [file, objects] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, file), objects.map(o => stringify(o, { lineWidth: 0 })).join('---\n'));
  }
  return dir;
}

const find = (files: Files, kind: string, name: string) => Object.values(files).flat().find(o => o.kind === kind && o.metadata?.name === name)!;
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value));

/** dist/ with one more Function, `hello-old`, and its APIRule: what the cluster holds. */
function earlier(): Files {
  const files = distObjects();
  const old = clone(find(files, 'Function', 'hello-python'));
  old.metadata!.name = 'hello-old';
  const route = clone(find(files, 'APIRule', 'hello-node'));
  route.metadata!.name = 'hello-old';
  route.metadata!.labels!['cdk8s-kyma-serverless/function'] = 'hello-old';
  route.spec.hosts = ['hello-old.local.kyma.dev'];
  route.spec.service.name = 'hello-old';
  files[FILES[1]].push(old, route);
  return files;
}

/** The change under review: a new handler for hello-node, a new env var for hello-python, a smaller registry, hello-old removed. */
function changed(): Files {
  const files = distObjects();
  find(files, 'Function', 'hello-node').spec.source.inline.source += '// greets louder\n';
  find(files, 'Function', 'hello-python').spec.env.push({ name: 'LOUD', value: 'true' });
  find(files, 'PersistentVolumeClaim', 'serverless-docker-registry').spec.resources.requests.storage = '5Gi';
  return files;
}

/** The ConfigMap `default/settings`. */
const settings = (data: { [key: string]: string }): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data });

/** The annotations that let a sync replace an object. */
const OPT_IN = { 'argocd.argoproj.io/sync-options': 'Replace=true,Force=true', 'kustomize.toolkit.fluxcd.io/force': 'enabled' };

/** Kyma's API Gateway and Eventing modules, installed in the cluster (dist/ exposes and subscribes Functions). */
const KYMA_MODULE_RESOURCES: readonly ResourceType[] = [API_RULES, SUBSCRIPTIONS];

let api: FakeKubeApi;
let kubeconfig: string;
/** A cluster with every built-in kind, Kyma's API Gateway and Eventing modules, and the namespace `default`. */
async function startCluster(): Promise<void> {
  // Namespaces last: their item route would take the paths of namespaced kinds served after them.
  const resources = [...BUILT_IN_RESOURCES.filter(t => t !== NAMESPACES), ...KYMA_MODULE_RESOURCES, NAMESPACES];
  api = await FakeKubeApi.start({ resources, namespaceLifecycle: true });
  api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  kubeconfig = writeKubeconfig(api, path.join(scratch, `kubeconfig-${Math.random()}.yaml`));
}
afterEach(() => {
  process.exitCode = undefined;
});

const capture = () => {
  let text = '';
  return { write: (chunk: string) => { text += chunk; return true; }, text: () => text };
};
const apply = (dir: string, options: Omit<ApplyOptions, 'kubeconfig'> = {}) =>
  runApply(dir, { kubeconfig, wait: false, ...options }, { stdout: capture(), stderr: capture(), now: Date.now });
const diff = (dir: string, options: Omit<DiffOptions, 'kubeconfig'> = {}) => runDiff(dir, { kubeconfig, ...options });
const label = (o: { kind: string; namespace?: string; name: string }) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

/**
 * What the Function Controller does to a Function the cluster holds: a ConfigMap it owns, with
 * the Function's labels (the ApplySet's among them), and in the namespace a copy of a runtime
 * ConfigMap of the stack, with that one's labels.
 */
function playController(): void {
  const fn = api.get('/apis/serverless.kyma-project.io/v1alpha2/namespaces/default-functions/functions/hello-node')!;
  api.put({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: {
      name: 'hello-node-x7b2c', namespace: 'default-functions',
      labels: { ...fn.metadata!.labels, 'serverless.kyma-project.io/function-name': 'hello-node' },
      ownerReferences: [{ apiVersion: fn.apiVersion, kind: 'Function', name: 'hello-node', uid: fn.metadata!.uid, controller: true }],
    },
    data: { source: fn.spec.source.inline.source },
  });
  const dockerfile = api.get('/api/v1/namespaces/kyma-system/configmaps/dockerfile-nodejs22')!;
  api.put({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'dockerfile-nodejs22', namespace: 'default-functions', labels: dockerfile.metadata!.labels },
    data: dockerfile.data,
  });
}

describe('kyma-serverless diff against a cluster holding an earlier dist/', () => {
  let report: DiffReport;
  let before: number;
  // One cluster for the whole story: the diff's tests only read; the last one applies.
  beforeAll(async () => {
    await startCluster();
    expect((await apply(folder(earlier()))).ok).toBe(true);
    playController();
    before = api.requests.length;
    report = await diff(folder(changed()));
  }, 60_000);
  afterAll(() => api.close());

  test('labels every object it applied with the set\'s id, and writes the parent in the stack\'s namespace', () => {
    const labels = api.requestsOf('PATCH').filter(r => r.query.fieldManager === 'kyma-serverless' && !r.query.dryRun)
      .map(r => r.body.metadata.labels[APPLYSET_PART_OF_LABEL]);
    expect(new Set(labels)).toEqual(new Set([report.applySet.id]));
    expect(labels).toHaveLength(51);
    expect(api.get('/api/v1/namespaces/kyma-system/secrets/kyma-serverless-applyset')!.metadata).toMatchObject({
      labels: { 'applyset.kubernetes.io/id': report.applySet.id },
      annotations: { 'applyset.kubernetes.io/additional-namespaces': 'default-functions', 'applyset.kubernetes.io/tooling': ApplySet.tooling() },
    });
  });
  const byLabel = () => new Map(report.objects.map(o => [label(o), o]));

  test('says a new handler is a new build, a new env var a rollout, with the YAML of the fields that change', () => {
    const objects = byLabel();
    expect(objects.get('Function default-functions/hello-node')).toMatchObject({
      outcome: DiffOutcome.CHANGE, title: 'new build', functionChange: 'new-build', fields: ['spec.source.inline.source'],
      meaning: 'new build (source changed): a build Job makes a new image, then new Pods replace the old ones',
    });
    expect(objects.get('Function default-functions/hello-node')!.diff).toBe([
      '  spec:', '    source:', '      inline:', '        source: |', '          ...', '          };', '+         // greets louder',
    ].join('\n'));
    expect(objects.get('Function default-functions/hello-python')).toMatchObject({
      outcome: DiffOutcome.CHANGE, title: 'rollout', functionChange: 'rollout',
      diff: '  spec:\n    env:\n+   - name: LOUD\n+     value: "true"',
    });
  });

  test('says the registry\'s smaller volume is refused, found by the dry run, with the prop that opts in, the way through and the cost', () => {
    const claim = byLabel().get('PersistentVolumeClaim kyma-system/serverless-docker-registry')!;
    expect(claim).toMatchObject({
      outcome: DiffOutcome.REFUSED, title: 'refused',
      meaning: 'spec.resources.requests.storage: Forbidden: field can not be less than previous value: '
        + 'the API server refuses this change, and the sync fails here',
      refused: {
        rule: 'pvc-storage-decrease', replacementAllowed: false, optIn: 'Registry.internal({ replaceStorage: true }) (ServerlessStack prop registry)',
      },
    });
    expect(claim.refused!.cost).toContain('the registry\'s images are deleted with it');
  });

  test('says the removed Function and its APIRule are orphaned, APIRule first, and leaves what the controller labelled to it', () => {
    const orphans = report.objects.filter(o => o.outcome === DiffOutcome.ORPHANED);
    expect(orphans.filter(o => !o.kept).map(o => [label(o), o.meaning])).toEqual([
      ['APIRule default-functions/hello-old', `no longer in ${report.dir}: apply --prune deletes it, and its URL stops answering`],
      ['Function default-functions/hello-old', `no longer in ${report.dir}: apply --prune deletes it, and the Function stops: `
        + 'its Deployment, Service, HorizontalPodAutoscaler, build Jobs and source ConfigMap are deleted with it'],
    ]);
    expect(orphans.filter(o => o.kept).map(o => [label(o), o.kept])).toEqual([
      ['ConfigMap default-functions/dockerfile-nodejs22',
        expect.stringMatching(/^never applied by field manager kyma-serverless: another writer wrote it/)],
      ['ConfigMap default-functions/hello-node-x7b2c', 'owned by Function hello-node: deleted with it'],
    ]);
  });

  test('counts the rest unchanged, exits 1, and changes nothing: every request is a read or a dry run', () => {
    expect(report.counts).toEqual({ change: 2, unchanged: 46, refused: 1, orphaned: 2 });
    expect(report.exitCode).toBe(1);
    const sent = api.requests.slice(before);
    const writes = sent.filter(r => r.method !== 'GET');
    expect(writes.every(r => r.method === 'PATCH' && r.query.dryRun === 'All' && r.query.fieldManager === 'kyma-serverless')).toBe(true);
    expect(sent.filter(r => r.method === 'PATCH')).toHaveLength(49);
    expect(api.get('/api/v1/namespaces/kyma-system/persistentvolumeclaims/serverless-docker-registry')!.spec.resources.requests.storage).toBe('20Gi');
  });

  test('prints the changes, the ways through and a summary, and a Markdown summary for a pull request', () => {
    const text = formatDiffReport(report);
    expect(text.split('\n')[0]).toBe(`Diff of ${report.dir} against ${api.url} (server-side dry run, field manager kyma-serverless; `
      + 'ApplySet secrets/kyma-serverless-applyset -n kyma-system)');
    expect(text).toContain('\nnew build   Function default-functions/hello-node: new build (source changed): ');
    expect(text)
      .toContain('\nrefused     PersistentVolumeClaim kyma-system/serverless-docker-registry: spec.resources.requests.storage: Forbidden: ');
    expect(text).toContain('\n            - or delete it yourself before the sync: kubectl delete persistentvolumeclaim/serverless-docker-registry ');
    expect(text).toContain('\norphaned    Function default-functions/hello-old: ');
    expect(text.trimEnd().split('\n').pop()).toBe(`${report.dir}: 2 change, 46 unchanged, 1 refused, 2 orphaned`);
    const markdown = renderMarkdown('kyma-serverless diff: dist against prod', report.objects, 'footer');
    expect(markdown).toContain('**2 change, 46 unchanged, 1 refused, 2 orphaned**');
    expect(markdown).toContain('| changed: new build | `Function default-functions/hello-node` | new build (source changed): '
      + 'a build Job makes a new image, then new Pods replace the old ones |');
    expect(markdown).toContain('| **refused** | `PersistentVolumeClaim kyma-system/serverless-docker-registry` |');
    expect(markdown).toContain('| **orphaned** | `Function default-functions/hello-old` |');
    expect(markdown).toContain('- opt in to replacing it: Registry.internal({ replaceStorage: true })');
    expect(markdown).toContain('<details><summary>Function default-functions/hello-python</summary>\n\n```diff\n  spec:\n    env:\n+   - name: LOUD');
  });

  test('says what changes in access for Services, webhooks and RBAC, and which Pods restart', async () => {
    const files = distObjects();
    find(files, 'ClusterRole', 'serverless').rules.push({ apiGroups: [''], resources: ['pods'], verbs: ['get'] });
    find(files, 'Service', 'serverless-webhook').spec.ports[0].port = 8443;
    find(files, 'ValidatingWebhookConfiguration', 'validation.webhook.serverless.kyma-project.io').webhooks[0].failurePolicy = 'Ignore';
    find(files, 'Deployment', 'serverless-ctrl-mngr').spec.template.spec.containers[0].image += '-patched';
    find(files, 'Deployment', 'serverless-webhook').spec.replicas = 3;
    const byLabel = new Map((await diff(folder(files))).objects.map(o => [label(o), o]));
    expect(api.requests.slice(before).filter(r => r.method !== 'GET' && r.query.dryRun !== 'All')).toEqual([]);
    expect(byLabel.get('ClusterRole serverless')).toMatchObject({ title: 'access', meaning: 'access changes: grants get on pods (core)' });
    expect(byLabel.get('Service kyma-system/serverless-webhook'))
      .toMatchObject({ title: 'access', meaning: 'who reaches it, and how, changes: spec.ports' });
    expect(byLabel.get('ValidatingWebhookConfiguration validation.webhook.serverless.kyma-project.io')).toMatchObject({
      title: 'access', meaning: 'which requests the API server sends to the webhook, and what a failure does, changes: webhooks',
    });
    expect(byLabel.get('Deployment kyma-system/serverless-ctrl-mngr')!.meaning)
      .toBe('Pods restarted: the Pod template changes (spec.template.spec.containers); new Pods replace the old ones one by one');
    expect(byLabel.get('Deployment kyma-system/serverless-webhook')).toMatchObject({ title: 'rescale', meaning: 'rescale: 2 → 3 replicas' });
  }, 60_000);

  test('apply --prune, once the registry opts in to replacement, replaces the claim and deletes exactly the orphans, APIRule first', async () => {
    const next = changed();
    const claim = find(next, 'PersistentVolumeClaim', 'serverless-docker-registry');
    claim.metadata!.annotations = { ...claim.metadata!.annotations, ...OPT_IN };
    const dir = folder(next);
    const mark = api.requests.length;
    const applied = await apply(dir, { prune: true });
    expect(applied.ok).toBe(true);
    expect(applied.objects.find(o => o.kind === 'PersistentVolumeClaim')).toMatchObject({ outcome: 'replaced' });
    expect(api.get('/api/v1/namespaces/kyma-system/persistentvolumeclaims/serverless-docker-registry')!.spec.resources.requests.storage).toBe('5Gi');
    expect(applied.pruned!.map(p => [label(p), p.outcome])).toEqual([
      ['APIRule default-functions/hello-old', 'pruned'],
      ['Function default-functions/hello-old', 'pruned'],
      ['ConfigMap default-functions/dockerfile-nodejs22', 'kept'],
      ['ConfigMap default-functions/hello-node-x7b2c', 'kept'],
    ]);
    const deletes = api.requests.slice(mark).filter(r => r.method === 'DELETE').map(r => r.path);
    expect(deletes).toEqual([
      '/api/v1/namespaces/kyma-system/persistentvolumeclaims/serverless-docker-registry',
      '/apis/gateway.kyma-project.io/v2/namespaces/default-functions/apirules/hello-old',
      '/apis/serverless.kyma-project.io/v1alpha2/namespaces/default-functions/functions/hello-old',
    ]);
    expect(api.get('/api/v1/namespaces/default-functions/configmaps/hello-node-x7b2c')).toBeDefined();

    const after = await diff(dir);
    expect(after.exitCode).toBe(0);
    expect(after.counts).toEqual({ unchanged: 49 });
  }, 60_000);
});

describe('kyma-serverless diff', () => {
  beforeEach(startCluster);
  afterEach(() => api.close());

  test('says what a first apply creates, Functions as new builds, and that no ApplySet is there yet', async () => {
    const report = await diff(DIST);
    expect(report.applySet).toEqual({
      parent: 'secrets/kyma-serverless-applyset -n kyma-system',
      id: applySetId({ name: 'kyma-serverless-applyset', namespace: 'kyma-system', kind: 'Secret', group: '' }),
      exists: false,
    });
    expect(report.counts).toEqual({ create: 49 });
    expect(report.objects.find(o => o.kind === 'Function')).toMatchObject({
      title: 'create', functionChange: 'new-build',
      meaning: 'a new Function: the controller builds its image, then runs it '
        + '(its CustomResourceDefinition functions.serverless.kyma-project.io is created by the same apply, so the dry run cannot check it)',
    });
    expect(report.objects.find(o => o.kind === 'Deployment')!.meaning)
      .toBe('created (its namespace kyma-system is created by the same apply, so the dry run cannot check it)');
    expect(report.exitCode).toBe(1);
  });

  test('says an object changed by another field manager conflicts, and shows the change apply would make with --force-conflicts', async () => {
    const dir = folder({ 'a.yaml': [settings({ a: '1' })] });
    await runApply(dir, { kubeconfig, wait: false, fieldManager: 'helm', applyset: 'other' },
      { stdout: capture(), stderr: capture(), now: Date.now });
    fs.writeFileSync(path.join(dir, 'a.yaml'), stringify(settings({ a: '2' })));
    const [object] = (await diff(dir)).objects;
    expect(object).toMatchObject({ outcome: DiffOutcome.CHANGE, diff: '  data:\n-   a: "1"\n+   a: "2"' });
    // helm's apply put the object into its own ApplySet too: the label conflicts as well.
    expect(object.conflict)
      .toBe('Apply failed with 2 conflicts: conflict with "helm": .data.a; conflict with "helm": .metadata.labels.applyset.kubernetes.io/part-of: '
      + 'apply fails here without --force-conflicts (Argo CD and Flux take the fields over)');
  });

  test('says an object that opted in to replacement is replaced, with what that costs', async () => {
    const web = (selector: object, annotations?: { [key: string]: string }) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', ...(annotations ? { annotations } : {}) },
      spec: {
        selector: { matchLabels: selector },
        template: { metadata: { labels: selector }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
      },
    });
    const dir = folder({ 'a.yaml': [web({ app: 'web' })] });
    await apply(dir);
    fs.writeFileSync(path.join(dir, 'a.yaml'), stringify(web({ app: 'web', tier: 'front' }, {
      'argocd.argoproj.io/sync-options': 'Replace=true,Force=true', 'kustomize.toolkit.fluxcd.io/force': 'enabled',
    })));
    const [object] = (await diff(dir)).objects;
    expect(object).toMatchObject({
      outcome: DiffOutcome.REFUSED, title: 'replace', refused: { rule: 'workload-selector', replacementAllowed: true },
      meaning: 'spec.selector: Invalid value: ...: field is immutable: it opted in to replacement, so the sync deletes it and creates it again; '
        + 'its Pods are deleted with it: the workload is down until the new Pods are ready',
    });
  });

  test('exits 2 and says why when a dry run is forbidden', async () => {
    api.failNext('PATCH', /\/namespaces\/default\/configmaps\/settings$/, 403);
    const report = await diff(folder({ 'a.yaml': [settings({ a: '1' })] }));
    expect(report.exitCode).toBe(2);
    expect(report.objects[0])
      .toMatchObject({ outcome: DiffOutcome.FAILED, message: expect.stringMatching(/^forbidden: configmaps "settings" is forbidden: /) });
  });

  test('exits 2 when the folder holds a kind the cluster does not serve, before any dry run', async () => {
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } };
    const report = await diff(folder({ 'a.yaml': [widget] }));
    expect(report).toMatchObject({ exitCode: 2, objects: [] });
    expect(report.error).toMatch(/^Cannot diff .*:\n {2}Widget default\/w \(a\.yaml\): the cluster does not serve Widget/);
    expect(api.requestsOf('PATCH')).toHaveLength(0);
  });

  test('refuses another tool\'s ApplySet, as the KEP asks', async () => {
    api.put({
      apiVersion: 'v1', kind: 'Secret',
      metadata: {
        name: 'kyma-serverless-applyset', namespace: 'default',
        labels: { 'applyset.kubernetes.io/id': applySetId({ name: 'kyma-serverless-applyset', namespace: 'default', kind: 'Secret', group: '' }) },
        annotations: { 'applyset.kubernetes.io/tooling': 'kubectl/v1.28.15' },
      },
    });
    const report = await diff(folder({ 'a.yaml': [settings({})] }));
    expect(report.error).toBe('The ApplySet parent secrets/kyma-serverless-applyset -n default is managed by kubectl/v1.28.15, not kyma-serverless: '
      + 'name another parent with --applyset, or go on with the tool that manages it');
    expect(report.exitCode).toBe(2);
  });

  test('the command prints JSON, writes the Markdown summary, and exits as kubectl diff', async () => {
    const cli = program();
    let stdout = '';
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { stdout += chunk.toString(); return true; });
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const markdown = path.join(scratch, 'diff.md');
    try {
      const dir = folder({ 'a.yaml': [settings({ a: '1' })] });
      await cli.parseAsync(['node', 'kyma-serverless', '--kubeconfig', kubeconfig, '-o', 'json', 'diff', dir, '--markdown', markdown]);
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(JSON.parse(stdout))
      .toMatchObject({ exitCode: 1, counts: { create: 1 }, objects: [{ kind: 'ConfigMap', outcome: 'create', meaning: 'created' }] });
    expect(process.exitCode).toBe(1);
    expect(fs.readFileSync(markdown, 'utf8'))
      .toMatch(/^### kyma-serverless diff: .* against http:\/\/127\.0\.0\.1:\d+\n\n\*\*1 create\*\*\n\n\| \| object \| what it means \|\n/);
  });

  test('the command exits 2, never 1 (which CI takes for "something changes"), when the diff cannot run or a dry run fails', async () => {
    const exitOf = async (...args: string[]) => {
      let stderr = '';
      const err = jest.spyOn(process.stderr, 'write')
        .mockImplementation((chunk: string | Uint8Array) => { stderr += chunk.toString(); return true; });
      const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        process.exitCode = undefined;
        await main(['node', 'kyma-serverless', '--kubeconfig', kubeconfig, 'diff', ...args]);
      } finally {
        err.mockRestore();
        out.mockRestore();
      }
      return `${process.exitCode} ${stderr.trimEnd().split('\n').pop()}`;
    };
    expect(await exitOf(path.join(scratch, 'missing'))).toMatch(/^2 kyma-serverless: No folder .*missing: give the folder synth writes to/);
    expect(await exitOf(folder({ 'a.yaml': [settings({})] }), '--applyset', 'deployments/x'))
      .toMatch(/^2 kyma-serverless: --applyset deployments\/x: /);
    api.failNext('PATCH', /\/namespaces\/default\/configmaps\/settings$/, 403);
    expect(await exitOf(folder({ 'a.yaml': [settings({})] }))).toBe('2 kyma-serverless: 1 object could not be dry-run: see above');
  });

  test('against a server that does not answer, prints nothing on standard output, and the error once on standard error', async () => {
    const down = path.join(scratch, 'kubeconfig-down');
    // A port nothing listens on: the API server of the kubeconfig is unreachable.
    fs.writeFileSync(down, stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'down',
      clusters: [{ name: 'down', cluster: { server: 'http://127.0.0.1:1' } }],
      contexts: [{ name: 'down', context: { cluster: 'down', user: 'down', namespace: 'default' } }],
      users: [{ name: 'down', user: { token: 't' } }],
    }));
    let stdout = '';
    let stderr = '';
    const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => { stderr += chunk.toString(); return true; });
    const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { stdout += chunk.toString(); return true; });
    try {
      process.exitCode = undefined;
      await main(['node', 'kyma-serverless', '--kubeconfig', down, 'diff', folder({ 'a.yaml': [settings({})] })]);
    } finally {
      err.mockRestore();
      out.mockRestore();
    }
    expect(process.exitCode).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^kyma-serverless: .*127\.0\.0\.1:1/);
    expect(stderr.trimEnd().split('\n').filter(l => l.startsWith('kyma-serverless:'))).toHaveLength(1);
    process.exitCode = 0;
  });

  test('--help shows what each change means and the exit codes', async () => {
    const cli = new Command('kyma-serverless');
    addDiffCommand(cli);
    let help = '';
    const command = cli.commands.find(c => c.name() === 'diff')!;
    command.exitOverride().configureOutput({ writeOut: text => { help += text; } });
    await expect(cli.parseAsync(['node', 'kyma-serverless', 'diff', '--help'])).rejects.toMatchObject({ code: 'commander.helpDisplayed' });
    const texts = ['--markdown <file>', '--applyset', 'orphaned', 'Exit code, as kubectl diff: 0 nothing changes, 1 something changes, 2 the diff'];
    for (const text of texts) {
      expect(help).toContain(text);
    }
  });
});

describe('yamlFieldDiff', () => {
  test('shows the keys above a change, named list items one by one, and other values whole', () => {
    const before = { spec: { env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [80], same: 1 } };
    const after = { spec: { env: [{ name: 'A', value: '1' }, { name: 'B', value: '3' }], ports: [8080], same: 1, added: { x: true } } };
    expect(yamlFieldDiff(before, after)).toBe([
      '  spec:',
      '+   added:',
      '+     x: true',
      '    env:',
      '-   - name: B',
      '-     value: "2"',
      '+   - name: B',
      '+     value: "3"',
      '-   ports:',
      '-     - 80',
      '+   ports:',
      '+     - 8080',
    ].join('\n'));
    expect(yamlFieldDiff(before, before)).toBe('');
    const source = (lines: string[]) => ({ source: `${lines.join('\n')}\n` });
    expect(yamlFieldDiff(source(['a', 'b', 'c', 'd', 'e', 'f']), source(['a', 'B', 'c', 'd', 'e', 'F']))).toBe([
      '  source: |', '    a', '-   b', '+   B', '    c', '    ...', '    e', '-   f', '+   F',
    ].join('\n'));
  });
});
