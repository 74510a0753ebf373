/**
 * `kyma-serverless apply`: the plan (pure), readiness (pure), and the command against the fake API
 * server over HTTP with the real client-node, with the cluster's controllers played by the test.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration } from 'cdk8s';
import { Command } from 'commander';
import { stringify } from 'yaml';
import { ApplyIo, ApplyOptions, ApplyReport, ReadinessState, addApplyCommand, readinessOf, runApply } from '../../src/cli/apply';
import { APPLYSET_PART_OF_LABEL, ApplySet } from '../../src/cli/_applyset';
import { ApplyPhase, BUILT_IN_GROUPS, phaseOf, planApply } from '../../src/cli/_plan';
import { program } from '../../src/cli/index';
import { BUILT_IN_RESOURCES } from '../util/fake-cluster';
import { fixture } from '../util/fixtures';
import { FAKE_CA_BUNDLE, FakeControllers } from '../util/fake-controllers';
import {
  APPLY_PATCH_CONTENT_TYPE, FakeKubeApi, FakeKubeApiOptions, KubeObject, MUTATING_WEBHOOK_CONFIGURATIONS, RecordedRequest, objectPath,
  ResourceType, writeKubeconfig,
} from '../util/fake-kube-api';

const DIST = path.join(__dirname, '..', '..', 'dist');

let scratch: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'apply-'));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Writes a folder of manifests: each file's objects as YAML documents (or the text as it is). */
function folder(files: { [name: string]: readonly KubeObject[] | string }): string {
  const dir = fs.mkdtempSync(path.join(scratch, 'dist-'));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof content === 'string' ? content : content.map(o => stringify(o)).join('---\n'));
  }
  return dir;
}

type Annotations = { [key: string]: string };
const wave = (n: number): Annotations => ({ 'argocd.argoproj.io/sync-wave': String(n) });
const namespace = (name: string, annotations?: Annotations): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(annotations ? { annotations } : {}) } });
const configMap = (name: string, ns: string, data: object = { a: '1' }, annotations?: Annotations): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) }, data });
const deployment = (name: string, ns: string, annotations?: Annotations): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
  spec: {
    replicas: 1, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27', env: [{ name: 'A', value: '1' }] }] } },
  },
});
const job = (name: string, ns: string, annotations?: Annotations): KubeObject => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
  spec: { backoffLimit: 2, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } } },
});
const widgetCrd = (annotations?: Annotations): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com', ...(annotations ? { annotations } : {}) },
  spec: {
    group: 'example.com', scope: 'Namespaced', names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [{
      name: 'v1', served: true, storage: true, subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: { spec: { type: 'object', properties: { size: { type: 'string', enum: ['S', 'M'], default: 'S' } }, 'x-kubernetes-preserve-unknown-fields': true } },
          'x-kubernetes-validations': [{ rule: 'self.metadata.name.size() < 20', message: 'short names only' }],
        },
      },
    }],
  },
});
const widget = (name: string, ns: string, annotations?: Annotations): KubeObject =>
  ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) }, spec: { size: 'M' } });

/** A stream that keeps what is written. */
function capture() {
  let text = '';
  return { write: (chunk: string) => { text += chunk; return true; }, text: () => text };
}

/** Kinds of Kyma's API Gateway and Eventing modules, installed in the cluster (dist/ exposes and subscribes Functions). */
const KYMA_MODULE_RESOURCES: readonly ResourceType[] = [
  { group: 'gateway.kyma-project.io', version: 'v2', plural: 'apirules', kind: 'APIRule', namespaced: true, statusSubresource: true, generation: true },
  { group: 'eventing.kyma-project.io', version: 'v1alpha2', plural: 'subscriptions', kind: 'Subscription', namespaced: true, statusSubresource: true, generation: true },
];

/**
 * A cluster with every built-in kind and Kyma's API Gateway and Eventing modules, `default` and
 * nothing else; Functions are served once their CRD is applied.
 */
async function cluster(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  const api = await FakeKubeApi.start({ resources: [...BUILT_IN_RESOURCES, ...KYMA_MODULE_RESOURCES], namespaceLifecycle: true, ...options });
  api.put(namespace('default'));
  return api;
}

/**
 * Runs the apply with a fast poll; returns the report and what it printed. The deadline (60 s) is
 * far above what any of these applies takes on an idle machine (dist/ end to end: ~1 s), so that
 * a busy machine never turns a success into a timeout; tests of timeouts give their own.
 */
async function apply(api: FakeKubeApi, dir: string, options: Omit<ApplyOptions, 'kubeconfig'> = {}) {
  const stdout = capture();
  const stderr = capture();
  const io: ApplyIo = { stdout, stderr, now: Date.now };
  const kubeconfig = writeKubeconfig(api, path.join(scratch, `kubeconfig-${Math.random()}.yaml`));
  const report = await runApply(dir, { kubeconfig, pollInterval: Duration.millis(5), timeout: Duration.seconds(60), ...options }, io);
  return { report, out: stdout.text(), err: stderr.text() };
}

/** The requests that apply the folder's objects, not the ApplySet parent. */
const ofObjects = (r: RecordedRequest) => r.query.fieldManager !== ApplySet.FIELD_MANAGER;

/** The server-side apply PATCHes of the folder's objects, as `Kind name`, in the order sent. */
const patches = (api: FakeKubeApi, filter: (r: RecordedRequest) => boolean = () => true) => api.requestsOf('PATCH')
  .filter(r => ofObjects(r) && filter(r)).map(r => `${r.body.kind} ${r.body.metadata.name}`);

/** What happened in the store, in order: `ADDED Deployment web`, `ready Deployment web` for a status written. */
function timeline(api: FakeKubeApi): string[] {
  const events: string[] = [];
  api.events.on('change', ({ type, object }) => {
    const readyNow = type === 'MODIFIED' && readinessOf(object)?.state === ReadinessState.READY;
    events.push(`${readyNow ? 'ready' : type} ${object.kind} ${object.metadata?.name}`);
  });
  return events;
}

describe('planApply', () => {
  test('orders by sync wave, then prerequisites, built-in kinds and custom resources, then file and document order', () => {
    const dir = folder({
      '0001-b.yaml': [widget('w1', 'shop', wave(0)), configMap('late', 'shop', {}, wave(1)), deployment('web', 'shop', wave(0))],
      '0000-a.yaml': [configMap('settings', 'shop', {}, wave(-1)), namespace('shop', wave(-2)), widgetCrd(wave(-2)), configMap('first', 'shop', {}, wave(-2))],
      'kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [0000-a.yaml, 0001-b.yaml]\n',
      'prod/0000-a.yaml': [namespace('prod')],
    });
    const plan = planApply(dir);
    expect(plan.files).toEqual(['0000-a.yaml', '0001-b.yaml']);
    expect(plan.steps.map(s => [s.wave, s.phase, s.objects.map(o => `${o.object.kind} ${o.object.metadata.name}`)])).toEqual([
      [-2, ApplyPhase.PREREQUISITES, ['Namespace shop', 'CustomResourceDefinition widgets.example.com']],
      [-2, ApplyPhase.BUILT_IN, ['ConfigMap first']],
      [-1, ApplyPhase.BUILT_IN, ['ConfigMap settings']],
      [0, ApplyPhase.BUILT_IN, ['Deployment web']],
      [0, ApplyPhase.CUSTOM_RESOURCES, ['Widget w1']],
      [1, ApplyPhase.BUILT_IN, ['ConfigMap late']],
    ]);
    expect(plan.steps[0].objects[1]).toMatchObject({ file: '0000-a.yaml', document: 3, group: 'apiextensions.k8s.io', wave: -2 });
  });

  test('puts a plain cdk8s app without waves in order by its phases alone', () => {
    const dir = folder({ 'app.k8s.yaml': [widget('w1', 'shop'), deployment('web', 'shop'), widgetCrd(), namespace('shop')] });
    expect(planApply(dir).steps.map(s => [s.wave, s.phase, s.objects.map(o => o.object.kind)])).toEqual([
      [0, ApplyPhase.PREREQUISITES, ['CustomResourceDefinition', 'Namespace']],
      [0, ApplyPhase.BUILT_IN, ['Deployment']],
      [0, ApplyPhase.CUSTOM_RESOURCES, ['Widget']],
    ]);
  });

  test('the stack of dist/ is three steps: foundation, system, then Functions with their APIRule and Subscription', () => {
    const plan = planApply(DIST);
    expect(plan.files).toEqual(['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml']);
    expect(plan.steps.map(s => [s.wave, s.phase, s.objects.length])).toEqual([
      [-2, ApplyPhase.PREREQUISITES, 4], [-1, ApplyPhase.BUILT_IN, 41], [0, ApplyPhase.CUSTOM_RESOURCES, 4],
    ]);
  });

  test('tells custom resources from built-in kinds by group, also for CRD groups under k8s.io', () => {
    expect(phaseOf('v1', 'Namespace')).toBe(ApplyPhase.PREREQUISITES);
    expect(phaseOf('storage.k8s.io/v1', 'StorageClass')).toBe(ApplyPhase.PREREQUISITES);
    expect(phaseOf('networking.k8s.io/v1', 'NetworkPolicy')).toBe(ApplyPhase.BUILT_IN);
    expect(phaseOf('gateway.networking.k8s.io/v1', 'HTTPRoute')).toBe(ApplyPhase.CUSTOM_RESOURCES);
    expect(phaseOf('serverless.kyma-project.io/v1alpha2', 'Function')).toBe(ApplyPhase.CUSTOM_RESOURCES);
    expect(BUILT_IN_GROUPS.has('policy')).toBe(true);
  });

  test('fails listing every problem of the folder', () => {
    const dir = folder({
      'a.yaml': `${stringify(configMap('ok', 'shop'))}---\nkind: [broken\n`,
      'b.yaml': [
        { kind: 'ConfigMap', metadata: { name: 'x' } }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'x-' } },
        configMap('w', 'shop', {}, { 'argocd.argoproj.io/sync-wave': 'early' }), configMap('ok', 'shop'),
      ],
    });
    let error: Error | undefined;
    try {
      planApply(dir);
    } catch (e) {
      error = e as Error;
    }
    expect(error).toMatchObject({ name: 'CliError' });
    const [first, ...problems] = error!.message.split('\n');
    expect(first).toBe(`Nothing was applied: ${dir} has 5 problems (kyma-serverless validate ${dir} checks more):`);
    expect(problems).toEqual([
      expect.stringMatching(/^ {2}a\.yaml: document 2 does not parse: /),
      '  b.yaml: document 1 is not a Kubernetes object: apiVersion and kind are required',
      '  b.yaml: document 2 (ConfigMap) has no metadata.name: server-side apply needs one (generateName is not enough)',
      '  b.yaml: ConfigMap shop/w: the argocd.argoproj.io/sync-wave annotation "early" is not an integer',
      '  b.yaml: ConfigMap shop/ok is also defined in a.yaml: keep one',
    ]);
  });

  test('fails for a missing or empty folder', () => {
    expect(() => planApply(path.join(scratch, 'nope'))).toThrow(/^No folder .*nope: give the folder synth writes to, such as dist$/);
    expect(() => planApply(folder({ 'kustomization.yaml': 'resources: []\n' }))).toThrow(/holds no manifests/);
  });
});

describe('readinessOf', () => {
  const condition = (type: string, status: string, reason = '', message = '') => ({ type, status, reason, message });
  const state = (object: any) => readinessOf(object)?.state;

  test('CustomResourceDefinitions are ready once Established and NamesAccepted; rejected names fail', () => {
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x' } };
    expect(readinessOf(crd)).toEqual({ state: 'waiting', message: 'not Established yet' });
    expect(readinessOf({ ...crd, status: { conditions: [condition('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'), condition('Established', 'False', 'Installing', 'the initial names have not been accepted yet')] } }))
      .toEqual({ state: 'waiting', message: 'not Established yet (NamesAccepted=True NoConflicts: no conflicts found; Established=False Installing: the initial names have not been accepted yet)' });
    expect(readinessOf({ ...crd, status: { conditions: [condition('NamesAccepted', 'True'), condition('Established', 'True')] } })).toEqual({ state: 'ready', message: 'Established' });
    expect(readinessOf({ ...crd, status: { conditions: [condition('NamesAccepted', 'False', 'KindConflict', '"Widget" is already in use')] } })).toEqual({
      state: 'failed', message: 'its names are not accepted (NamesAccepted=False KindConflict: "Widget" is already in use): choose names no other CRD of the group uses',
    });
  });

  test('Namespaces are ready when Active; a Terminating one fails', () => {
    expect(readinessOf({ apiVersion: 'v1', kind: 'Namespace', status: { phase: 'Active' } })).toEqual({ state: 'ready', message: 'Active' });
    expect(state({ apiVersion: 'v1', kind: 'Namespace' })).toBe('waiting');
    expect(readinessOf({ apiVersion: 'v1', kind: 'Namespace', status: { phase: 'Terminating' } })?.state).toBe('failed');
  });

  test('Deployments are ready when rolled out, as kubectl rollout status judges', () => {
    const d = (spec: object, status?: object) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { generation: 2 }, spec: { replicas: 2, ...spec }, status });
    expect(readinessOf(d({}))?.message).toBe('the Deployment controller has not processed it yet');
    expect(readinessOf(d({}, { observedGeneration: 1 }))?.message).toBe('the Deployment controller has processed generation 1 of 2');
    const unavailable = condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.');
    expect(readinessOf(d({}, { observedGeneration: 2, replicas: 3, updatedReplicas: 1, conditions: [unavailable] }))?.message)
      .toBe('1 of 2 replicas updated (Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability.)');
    expect(readinessOf(d({}, { observedGeneration: 2, replicas: 3, updatedReplicas: 2 }))?.message).toBe('1 old replicas are pending termination');
    expect(readinessOf(d({}, { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 1, conditions: [unavailable] }))?.message)
      .toBe('1 of 2 updated replicas available (Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability.)');
    expect(readinessOf(d({}, { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }))).toEqual({ state: 'ready', message: '2 of 2 replicas available' });
    expect(readinessOf(d({ replicas: 0 }, { observedGeneration: 2 }))?.state).toBe('ready');
    expect(readinessOf(d({}, { observedGeneration: 2, conditions: [condition('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-1" has timed out progressing.')] })))
      .toEqual({ state: 'failed', message: 'its rollout exceeded the progress deadline (Progressing=False ProgressDeadlineExceeded: ReplicaSet "web-1" has timed out progressing.)' });
  });

  test('StatefulSets and DaemonSets are ready when rolled out; OnDelete ones at once', () => {
    const s = (spec: object, status: object) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { generation: 1 }, spec: { replicas: 2, ...spec }, status: { observedGeneration: 1, ...status } });
    expect(readinessOf(s({}, { readyReplicas: 1 }))?.message).toBe('1 of 2 replicas ready');
    expect(readinessOf(s({}, { readyReplicas: 2, updatedReplicas: 1, currentRevision: 'db-1', updateRevision: 'db-2' }))?.message)
      .toBe('rolling update: 1 of 2 replicas at revision db-2');
    expect(state(s({}, { readyReplicas: 2, updatedReplicas: 2, currentRevision: 'db-2', updateRevision: 'db-2' }))).toBe('ready');
    expect(state(s({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }, { readyReplicas: 2, updatedReplicas: 1, currentRevision: 'a', updateRevision: 'b' }))).toBe('ready');
    expect(state(s({ updateStrategy: { type: 'OnDelete' } }, {}))).toBe('ready');
    const ds = (status: object) => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { generation: 1 }, status: { observedGeneration: 1, ...status } });
    expect(readinessOf(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 2 }))?.message).toBe('2 of 3 Pods updated');
    expect(readinessOf(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 1 }))?.message).toBe('1 of 3 updated Pods available');
    expect(state(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 }))).toBe('ready');
  });

  test('Jobs are ready when Complete; a Failed Job fails with its reason and message', () => {
    const j = (status: object) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'creds', namespace: 'kyma-system' }, status });
    expect(readinessOf(j({ active: 1 }))).toEqual({ state: 'waiting', message: 'not complete yet (1 active, 0 succeeded, 0 failed)' });
    expect(readinessOf(j({ succeeded: 1, conditions: [condition('Complete', 'True')] }))).toEqual({ state: 'ready', message: 'Complete' });
    expect(readinessOf(j({ failed: 3, conditions: [condition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')] }))).toEqual({
      state: 'failed',
      message: 'Failed=True BackoffLimitExceeded: Job has reached the specified backoff limit; see its Pods\' logs: kubectl logs -n kyma-system job/creds',
    });
    expect(readinessOf(j({ conditions: [condition('Suspended', 'True')] }))?.message).toMatch(/^suspended/);
  });

  test('webhook configurations that call a Service are ready once every webhook has a caBundle', () => {
    const configuration = (webhooks: object[]) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', webhooks });
    const service = { service: { name: 'hook', namespace: 'kyma-system' } };
    expect(readinessOf(configuration([{ name: 'a', clientConfig: { url: 'https://hooks.example.com' } }]))).toBeUndefined();
    expect(readinessOf(configuration([{ name: 'a', clientConfig: { ...service, caBundle: 'Zm9v' } }, { name: 'b', clientConfig: service }]))?.message)
      .toMatch(/^no caBundle yet on webhook b \(the webhook server writes it/);
    expect(readinessOf(configuration([{ name: 'a', clientConfig: { ...service, caBundle: 'Zm9v' } }]))).toEqual({ state: 'ready', message: 'caBundle set on its webhook' });
  });

  test('other kinds, PersistentVolumeClaims and custom resources are ready once applied', () => {
    expect(readinessOf({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', status: { phase: 'Pending' } })).toBeUndefined();
    expect(readinessOf({ apiVersion: 'v1', kind: 'ConfigMap' })).toBeUndefined();
    expect(readinessOf({ apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function' })).toBeUndefined();
  });
});

describe('the fake API server\'s server-side apply', () => {
  let api: FakeKubeApi;
  beforeEach(async () => {
    api = await cluster();
  });
  afterEach(() => api.close());

  const patch = (object: KubeObject, query = 'fieldManager=test') => fetch(`${api.url}${api.pathOf(object)}?${query}`, {
    method: 'PATCH', headers: { 'authorization': `Bearer ${api.token}`, 'content-type': APPLY_PATCH_CONTENT_TYPE }, body: JSON.stringify(object),
  }).then(async r => ({ status: r.status, body: await r.json() as any }));

  test('creates, merges maps and named lists, removes what the manager no longer applies, and keeps other writers\' fields', async () => {
    const web = deployment('web', 'default');
    expect((await patch(web)).status).toBe(201);
    const stored = api.get(api.pathOf(web))!;
    expect(stored.metadata?.managedFields).toEqual([expect.objectContaining({ manager: 'test', operation: 'Apply', fieldsType: 'FieldsV1' })]);
    // Another writer (a controller, kubectl edit) adds an env var and a label.
    stored.spec.template.spec.containers[0].env.push({ name: 'B', value: '2' });
    stored.metadata!.labels = { team: 'a' };
    api.put(stored);
    const changed = deployment('web', 'default');
    changed.spec.template.spec.containers[0].image = 'nginx:1.28';
    delete changed.spec.replicas;
    expect((await patch(changed)).status).toBe(200);
    const merged = api.get(api.pathOf(web))!;
    expect(merged.spec.template.spec.containers[0]).toMatchObject({ image: 'nginx:1.28', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] });
    expect(merged.spec.replicas).toBeUndefined();
    expect(merged.metadata?.labels).toEqual({ team: 'a' });
  });

  test('answers 409 for a field another apply manager holds with another value, unless forced', async () => {
    await patch(configMap('c', 'default', { a: '1' }), 'fieldManager=helm');
    const conflict = await patch(configMap('c', 'default', { a: '2' }));
    expect(conflict).toMatchObject({ status: 409, body: { reason: 'Conflict', message: 'Apply failed with 1 conflict: conflict with "helm": .data.a' } });
    expect((await patch(configMap('c', 'default', { a: '1' }))).status).toBe(200);
    expect((await patch(configMap('c', 'default', { a: '2' }), 'fieldManager=test&force=true')).status).toBe(200);
    expect(api.get(api.pathOf(configMap('c', 'default')))!.data).toEqual({ a: '2' });
  });

  test('stores nothing on a dry run, and writes nothing for an apply that changes nothing', async () => {
    const c = configMap('c', 'default');
    expect((await patch(c, 'fieldManager=test&dryRun=All')).status).toBe(201);
    expect(api.get(api.pathOf(c))).toBeUndefined();
    const { body } = await patch(c);
    expect((await patch(c)).body.metadata.resourceVersion).toBe(body.metadata.resourceVersion);
  });

  test('refuses other patches, an apply without a field manager, and objects in a namespace that does not exist', async () => {
    const c = configMap('c', 'default');
    expect((await patch(c, '')).status).toBe(422);
    const merge = await fetch(`${api.url}${api.pathOf(c)}`, {
      method: 'PATCH', headers: { 'authorization': `Bearer ${api.token}`, 'content-type': 'application/merge-patch+json' }, body: '{}',
    });
    expect(merge.status).toBe(415);
    expect(await patch(configMap('c', 'nowhere'))).toMatchObject({ status: 404, body: { message: 'namespaces "nowhere" not found', details: { name: 'nowhere', kind: 'namespaces' } } });
  });

  test('answers DELETE as kube-apiserver does: a Status, or the object while finalizers hold it; a dry run changes nothing', async () => {
    const del = (p: string, query = '') => fetch(`${api.url}${p}${query}`, { method: 'DELETE', headers: { authorization: `Bearer ${api.token}` } })
      .then(async r => ({ status: r.status, body: await r.json() as any }));
    const recordedDelete = (name: string) => JSON.parse(fs.readFileSync(fixture('api-server', 'delete', `${name}.json`), 'utf8'));
    const c = api.put(configMap('settings', 'default'));
    const dryRun = await del(api.pathOf(c), '?dryRun=All&propagationPolicy=Background');
    const recorded = recordedDelete('configmap-dry-run');
    expect(dryRun).toEqual({ status: 200, body: { ...recorded, details: { ...recorded.details, uid: c.metadata!.uid } } });
    expect(api.get(api.pathOf(c))).toBeDefined();
    expect(await del(api.pathOf(c))).toMatchObject({ status: 200, body: { kind: 'Status', status: 'Success' } });
    expect(api.get(api.pathOf(c))).toBeUndefined();
    expect(await del('/api/v1/namespaces/default/configmaps/nope')).toEqual({ status: 404, body: recordedDelete('configmap-missing') });
    const held = api.put({ ...configMap('held', 'default'), metadata: { name: 'held', namespace: 'default', finalizers: ['example.com/hold'] } });
    expect((await del(api.pathOf(held))).body.metadata).toMatchObject({ name: 'held', deletionTimestamp: expect.any(String) });
    api.put({ ...api.get(api.pathOf(held))!, metadata: { ...api.get(api.pathOf(held))!.metadata, finalizers: [] } });
    expect(api.get(api.pathOf(held))).toBeUndefined();
  });

  test('serves a CRD\'s kinds through discovery once it is Established', async () => {
    const slow = await cluster({ crdEstablishDelayMs: Infinity });
    try {
      const get = (p: string) => fetch(`${slow.url}${p}`, { headers: { authorization: `Bearer ${slow.token}` } }).then(async r => ({ status: r.status, body: await r.json() as any }));
      expect((await get('/api')).body.versions).toEqual(['v1']);
      expect((await get('/apis')).body.groups.map((g: any) => g.name)).toContain('apiextensions.k8s.io');
      expect((await get('/apis/apps/v1')).body.resources).toEqual(expect.arrayContaining([
        expect.objectContaining({ name: 'deployments', kind: 'Deployment', namespaced: true }), expect.objectContaining({ name: 'deployments/status' }),
      ]));
      slow.put(namespace('shop'));
      const crd = widgetCrd();
      await fetch(`${slow.url}${slow.pathOf(crd)}?fieldManager=test`, {
        method: 'PATCH', headers: { 'authorization': `Bearer ${slow.token}`, 'content-type': APPLY_PATCH_CONTENT_TYPE }, body: JSON.stringify(crd),
      });
      expect(readinessOf(slow.get(slow.pathOf(crd)))?.state).toBe('waiting');
      expect((await get('/apis/example.com/v1')).status).toBe(404);
      slow.establish('widgets.example.com');
      expect(readinessOf(slow.get(slow.pathOf(crd)))?.state).toBe('ready');
      expect((await get('/apis/example.com/v1')).body.resources.map((r: any) => r.name)).toEqual(['widgets', 'widgets/status']);
    } finally {
      await slow.close();
    }
  });
});

describe('runApply', () => {
  let api: FakeKubeApi;
  let controllers: FakeControllers;
  beforeEach(async () => {
    api = await cluster();
    controllers = new FakeControllers(api);
  });
  afterEach(async () => {
    controllers.stop();
    process.exitCode = undefined;
    await api.close();
  });

  /** A folder with a CRD, a Namespace, a workload, a Job and a custom resource in three waves. */
  const shop = () => folder({
    '0000-foundation.yaml': [namespace('shop', wave(-2)), widgetCrd(wave(-2))],
    '0001-system.yaml': [configMap('settings', 'shop', { a: '1' }, wave(-1)), deployment('web', 'shop', wave(-1)), job('migrate', 'shop', wave(-1))],
    '0002-widgets.yaml': [widget('w1', 'shop', wave(0))],
  });

  test('applies wave by wave and phase by phase with server-side apply, each object as it is in its file', async () => {
    controllers.start();
    const { report, out } = await apply(api, shop());
    expect(report.ok).toBe(true);
    expect(patches(api)).toEqual([
      'Namespace shop', 'CustomResourceDefinition widgets.example.com', 'ConfigMap settings', 'Deployment web', 'Job migrate', 'Widget w1',
    ]);
    for (const request of api.requestsOf('PATCH').filter(ofObjects)) {
      expect(request).toMatchObject({ contentType: APPLY_PATCH_CONTENT_TYPE, query: { fieldManager: 'kyma-serverless' } });
      expect(request.query.force).toBeUndefined();
      expect(request.query.dryRun).toBeUndefined();
    }
    // Not passed through client-node's typed models, which drop enum, default and x-kubernetes-* of CRD schemas.
    const crd = api.requestsOf('PATCH').find(r => r.body.kind === 'CustomResourceDefinition')!.body;
    const { id } = report.applySet;
    expect(crd).toEqual({ ...widgetCrd(wave(-2)), metadata: { ...widgetCrd(wave(-2)).metadata, labels: { [APPLYSET_PART_OF_LABEL]: id } } });
    expect(api.get('/apis/example.com/v1/namespaces/shop/widgets/w1')).toMatchObject({ spec: { size: 'M' } });
    expect(out.split('\n')).toEqual([
      expect.stringMatching(/^Applying 6 objects from .* in 3 steps to http:\/\/127\.0\.0\.1:\d+ \(server-side apply, field manager kyma-serverless\)$/),
      'wave -2, cluster prerequisites: 2 objects',
      '  created     Namespace shop',
      '  created     CustomResourceDefinition widgets.example.com',
      '  ready       Namespace shop: Active',
      '  ready       CustomResourceDefinition widgets.example.com: Established',
      'wave -1, built-in kinds: 3 objects',
      '  created     ConfigMap shop/settings',
      '  created     Deployment shop/web',
      '  created     Job shop/migrate',
      '  waiting     Deployment shop/web: the Deployment controller has not processed it yet',
      '  waiting     Job shop/migrate: not complete yet (0 active, 0 succeeded, 0 failed)',
      '  ready       Deployment shop/web: 1 of 1 replicas available',
      '  ready       Job shop/migrate: Complete',
      'wave 0, custom resources: 1 object',
      '  created     Widget shop/w1',
      expect.stringMatching(/^Applied 6 objects in \d+\.\ds: 6 created\.$/),
      '',
    ]);
    expect(report).toMatchObject({ ok: true, dryRun: false, wait: true, fieldManager: 'kyma-serverless', counts: { created: 6 } });
    expect(report.objects[3]).toEqual({
      file: '0001-system.yaml', apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', wave: -1, phase: 'built-in',
      outcome: 'created', readiness: { state: 'ready', message: '1 of 1 replicas available' },
    });
  });

  test('sends nothing of a step before what the step before applied is ready', async () => {
    const slow = await cluster({ crdEstablishDelayMs: 60 });
    const slowControllers = new FakeControllers(slow);
    slowControllers.start({ delayMs: 40 });
    const events = timeline(slow);
    try {
      const { report } = await apply(slow, shop());
      expect(report.ok).toBe(true);
      const at = (event: string) => {
        expect(events).toContain(event);
        return events.indexOf(event);
      };
      expect(at('ready CustomResourceDefinition widgets.example.com')).toBeLessThan(at('ADDED ConfigMap settings'));
      expect(at('ready Deployment web')).toBeLessThan(at('ADDED Widget w1'));
      expect(at('ready Job migrate')).toBeLessThan(at('ADDED Widget w1'));
      // Every wave -1 object was sent before any was waited for: in the order of apply's own
      // requests, not against the fake controllers' timing, which a loaded machine stretches.
      const requests = slow.requests.map(r => `${r.method} ${r.path}`);
      const sent = (plural: string, name: string) => requests.indexOf(`PATCH /apis/${plural === 'jobs' ? 'batch' : 'apps'}/v1/namespaces/shop/${plural}/${name}`);
      const firstWaitRead = requests.indexOf('GET /apis/apps/v1/namespaces/shop/deployments/web', sent('deployments', 'web'));
      expect(sent('deployments', 'web')).toBeGreaterThanOrEqual(0);
      expect(firstWaitRead).toBeGreaterThan(sent('jobs', 'migrate'));
      expect(sent('jobs', 'migrate')).toBeGreaterThan(sent('deployments', 'web'));
    } finally {
      slowControllers.stop();
      await slow.close();
    }
  });

  test('waits for a CRD applied without waiting to be served, reading discovery again', async () => {
    // Established at the third read of its group version's discovery, however long the apply took to get there.
    const slow = await cluster({ crdEstablishDelayMs: Infinity });
    let reads = 0;
    slow.intercept('GET', '/apis/example.com/v1', (_request, fake) => {
      if (++reads === 3) fake.establish('widgets.example.com');
    }, { times: 3 });
    try {
      const dir = folder({ 'app.yaml': [namespace('shop'), widgetCrd(), widget('w1', 'shop')] });
      const { report, out } = await apply(slow, dir, { wait: false });
      expect(report.ok).toBe(true);
      expect(out).toContain('  waiting     Widget example.com/v1 to be served (CustomResourceDefinition widgets.example.com)\n  created     Widget shop/w1\n');
      expect(slow.requestsOf('GET', '/apis/example.com/v1').length).toBeGreaterThan(2);
    } finally {
      await slow.close();
    }
  });

  test('times out waiting for a CRD that is never Established, or whose kind is never served', async () => {
    const stuck = await cluster({ crdEstablishDelayMs: Infinity });
    try {
      const dir = folder({ 'app.yaml': [namespace('shop'), widgetCrd(), widget('w1', 'shop')] });
      // A second, so that a busy machine still gets to the wait before the deadline.
      const waited = await apply(stuck, dir, { timeout: Duration.seconds(1) });
      expect(waited.report.error).toBe([
        'Timed out after 1s; not ready:',
        '  CustomResourceDefinition widgets.example.com: not Established yet (NamesAccepted=True NoConflicts: no conflicts found; '
          + 'Established=False Installing: the initial names have not been accepted yet)',
        'not applied: 1 object of wave 0, custom resources',
        'Find out why: kubectl describe customresourcedefinition/widgets.example.com',
      ].join('\n'));
      const unwaited = await apply(stuck, dir, { timeout: Duration.seconds(1), wait: false });
      expect(unwaited.report.error).toBe('Timed out after 1s; still waiting for Widget example.com/v1 to be served (CustomResourceDefinition widgets.example.com)\n'
        + 'not applied: 1 object of wave 0, custom resources');
    } finally {
      await stuck.close();
    }
  });

  test('applies the stack of dist/ end to end, in four steps, and again without a change', async () => {
    controllers.start({ delayMs: 5 });
    const events = timeline(api);
    const first = await apply(api, DIST);
    expect(first.report).toMatchObject({ ok: true, counts: { created: 49 } });
    const at = (event: string) => events.indexOf(event);
    for (const ready of ['Deployment serverless-webhook', 'MutatingWebhookConfiguration defaulting.webhook.serverless.kyma-project.io',
      'ValidatingWebhookConfiguration validation.webhook.serverless.kyma-project.io', 'Job serverless-registry-credentials-67e7c4ae']) {
      expect(at(`ready ${ready}`)).toBeGreaterThan(-1);
      expect(at(`ready ${ready}`)).toBeLessThan(at('ADDED Function hello-node'));
    }
    expect(first.out).toContain('wave -1, built-in kinds: 41 objects\n');
    expect(first.out).toContain('  ready       MutatingWebhookConfiguration defaulting.webhook.serverless.kyma-project.io: caBundle set on its webhook\n');
    expect(first.out).toMatch(/\nThe Function Controller rolls the Functions out now \(under 1\.11\.1 it builds them first\); apply does not wait for them\. Follow them with: kyma-serverless status -n default-functions --watch\n$/);
    expect(api.get('/apis/serverless.kyma-project.io/v1alpha2/namespaces/default-functions/functions/hello-python')).toMatchObject({ spec: { runtime: 'python312' } });

    // Again: nothing changes, nothing is written, and the webhook's caBundle stays.
    const writes = events.length;
    const again = await apply(api, DIST);
    expect(again.report).toMatchObject({ ok: true, counts: { unchanged: 49 } });
    expect(events.length).toBe(writes);
    expect(again.out).not.toContain('Functions are built');
    expect(api.get(objectPath(MUTATING_WEBHOOK_CONFIGURATIONS, 'defaulting.webhook.serverless.kyma-project.io'))!.webhooks[0].clientConfig.caBundle).toBe(FAKE_CA_BUNDLE);
    // Two applies of 49 objects over HTTP, with waits: ~1 s idle, up to 4 s at load 6; 60 s leaves room.
  }, 60_000);

  test('reports an object the apply changed as configured, and removes fields left out of the manifest', async () => {
    controllers.start();
    const dir = folder({ 'a.yaml': [namespace('shop'), configMap('settings', 'shop', { a: '1', b: '2' })] });
    await apply(api, dir);
    fs.writeFileSync(path.join(dir, 'a.yaml'), [namespace('shop'), configMap('settings', 'shop', { a: '3' })].map(o => stringify(o)).join('---\n'));
    const { report, out } = await apply(api, dir);
    expect(report.counts).toEqual({ configured: 1, unchanged: 1 });
    expect(out).toContain('  configured  ConfigMap shop/settings\n');
    expect(api.get('/api/v1/namespaces/shop/configmaps/settings')!.data).toEqual({ a: '3' });
  });

  test('times out saying what is not ready and why, and applies nothing after', async () => {
    controllers.start({ ignore: o => o.kind === 'Deployment' });
    const events = timeline(api);
    api.events.on('change', ({ type, object }) => {
      if (type === 'ADDED' && object.kind === 'Deployment') setTimeout(() => controllers.stall(api.pathOf(object)), 5);
    });
    const { report, out } = await apply(api, shop(), { timeout: Duration.seconds(1) });
    expect(report.ok).toBe(false);
    expect(report.error).toBe([
      'Timed out after 1s; not ready:',
      '  Deployment shop/web: 0 of 1 updated replicas available (Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability.)',
      'not applied: 1 object of wave 0, custom resources',
      'Find out why: kubectl describe -n shop deployment/web, kubectl get events -n shop',
    ].join('\n'));
    expect(out).toContain('  waiting     Deployment shop/web: 0 of 1 updated replicas available');
    expect(patches(api)).not.toContain('Widget w1');
    expect(events).not.toContain('ADDED Widget w1');
    expect(report.objects.find(o => o.kind === 'Widget')).toMatchObject({ outcome: 'not-applied' });
    expect(report.objects.find(o => o.kind === 'Deployment')).toMatchObject({ outcome: 'created', readiness: { state: 'waiting' } });
  });

  test('fails when a Job fails, with its reason and message, and applies nothing after', async () => {
    controllers.start({ failJobs: () => true });
    const { report } = await apply(api, shop());
    expect(report.error).toBe('Job shop/migrate (0001-system.yaml) failed: Failed=True BackoffLimitExceeded: Job has reached the specified backoff limit; '
      + 'see its Pods\' logs: kubectl logs -n shop job/migrate\nnot applied: 1 object of wave 0, custom resources');
    expect(patches(api)).not.toContain('Widget w1');
  });

  test('names the object, the file and the permission when the API server forbids an apply', async () => {
    controllers.start();
    api.failNext('PATCH', '/apis/apps/v1/namespaces/shop/deployments/web', 403);
    const { report, out } = await apply(api, shop());
    expect(report.ok).toBe(false);
    expect(report.error).toBe([
      '1 of 3 objects of wave -1, built-in kinds failed:',
      '  Deployment shop/web (0001-system.yaml): forbidden: deployments.apps "web" is forbidden: User "system:serviceaccount:kyma-system:serverless-webhook" '
        + 'cannot patch resource "deployments" in API group "apps" in the namespace "shop". Server-side apply needs the verbs create and patch '
        + '(and get, to report and wait) on deployments.apps in namespace shop: check with kubectl auth can-i patch deployments.apps -n shop',
      'not applied: 1 object of wave 0, custom resources',
    ].join('\n'));
    expect(out).toContain('  failed      Deployment shop/web: forbidden: ');
    // The rest of the step is applied; the next steps are not.
    expect(patches(api)).toEqual(['Namespace shop', 'CustomResourceDefinition widgets.example.com', 'ConfigMap settings', 'Deployment web', 'Job migrate']);
    expect(report.counts).toEqual({ created: 4, failed: 1, 'not-applied': 1 });
  });

  test('says applied when it may not read an object first, and so cannot tell created from configured', async () => {
    const dir = folder({ 'a.yaml': [configMap('settings', 'default')] });
    await apply(api, dir);
    api.failNext('GET', '/api/v1/namespaces/default/configmaps/settings', 403);
    const { report, out } = await apply(api, dir);
    expect(report.counts).toEqual({ applied: 1 });
    expect(out).toContain('  applied     ConfigMap default/settings\n');
  });

  test('applies nothing when a custom resource\'s CRD is neither installed nor in the folder, and says which CRD to install', async () => {
    const fn = { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'hello', namespace: 'default' }, spec: { runtime: 'nodejs22' } };
    const dir = folder({ 'a.yaml': [configMap('settings', 'default'), fn, widget('w1', 'default')] });
    const { report } = await apply(api, dir);
    expect(report.error).toBe([
      'Nothing was applied:',
      '  Function default/hello (a.yaml): the cluster does not serve Function in serverless.kyma-project.io/v1alpha2 (no CRD of group serverless.kyma-project.io is installed), '
        + `and no CustomResourceDefinition in ${dir} defines it in version v1alpha2: install the Function CRD functions.serverless.kyma-project.io first: `
        + 'apply the folder that holds the ServerlessStack\'s manifests',
      '  Widget default/w1 (a.yaml): the cluster does not serve Widget in example.com/v1 (no CRD of group example.com is installed), '
        + `and no CustomResourceDefinition in ${dir} defines it in version v1: install the CustomResourceDefinition that defines kind Widget in group example.com first`,
    ].join('\n'));
    expect(api.requestsOf('PATCH')).toHaveLength(0);
  });

  test('says which version the API server serves for a built-in kind it does not serve in the manifest\'s apiVersion', async () => {
    const dir = folder({ 'a.yaml': [{ ...deployment('web', 'default'), apiVersion: 'apps/v1beta1' }] });
    const { report } = await apply(api, dir);
    expect(report.error).toBe('Nothing was applied:\n  Deployment default/web (a.yaml): the API server does not serve Deployment in apps/v1beta1 '
      + '(it serves apps in v1): change the manifest\'s apiVersion');
  });

  test('names a missing namespace and how to create it', async () => {
    const { report } = await apply(api, folder({ 'a.yaml': [configMap('settings', 'elsewhere')] }));
    expect(report.error).toBe('1 of 1 object of wave 0, built-in kinds failed:\n  ConfigMap elsewhere/settings (a.yaml): namespace elsewhere does not exist: '
      + `add a Namespace manifest for it to ${report.dir}, or create it: kubectl create namespace elsewhere`);
  });

  test('applies objects without a namespace in the context\'s namespace, or -n\'s, and refuses -n against a manifest\'s own', async () => {
    api.put(namespace('team-a'));
    const dir = folder({ 'a.yaml': [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'loose' }, data: {} }, namespace('cluster-wide')] });
    expect((await apply(api, dir)).report.ok).toBe(true);
    expect(api.get('/api/v1/namespaces/default/configmaps/loose')).toBeDefined();
    expect((await apply(api, dir, { namespace: 'team-a' })).report.ok).toBe(true);
    expect(api.get('/api/v1/namespaces/team-a/configmaps/loose')).toBeDefined();
    const { report } = await apply(api, folder({ 'a.yaml': [configMap('settings', 'shop')] }), { namespace: 'team-a' });
    expect(report.error).toBe('Nothing was applied:\n  ConfigMap shop/settings (a.yaml): its namespace shop is not the one -n gives (team-a): leave -n out to apply the folder as it is');
  });

  test('fails on a conflict with another field manager, and takes the fields over with forceConflicts', async () => {
    const dir = folder({ 'a.yaml': [configMap('settings', 'default', { a: '1' })] });
    await apply(api, dir, { fieldManager: 'helm' });
    fs.writeFileSync(path.join(dir, 'a.yaml'), stringify(configMap('settings', 'default', { a: '2' })));
    const { report } = await apply(api, dir);
    expect(report.error).toMatch(/ConfigMap default\/settings \(a\.yaml\): Apply failed with 1 conflict: conflict with "helm": \.data\.a\. Another field manager owns these fields: take them over with --force-conflicts, or leave them out of the manifest$/);
    const forced = await apply(api, dir, { forceConflicts: true });
    expect(forced.report.counts).toEqual({ configured: 1 });
    expect(api.requestsOf('PATCH').pop()!.query).toMatchObject({ force: 'true', fieldManager: 'kyma-serverless' });
  });

  test('tries again when an admission webhook does not answer for a moment, and says so when it never does', async () => {
    const message = 'Internal error occurred: failed calling webhook "validation.webhook.serverless.kyma-project.io": no endpoints available for service "serverless-webhook"';
    const dir = folder({ 'a.yaml': [configMap('settings', 'default')] });
    api.failNext('PATCH', /configmaps\/settings$/, 500, { message });
    expect((await apply(api, dir)).report.counts).toEqual({ created: 1 });
    api.failNext('PATCH', /configmaps\/settings$/, 500, { message, times: 1000 });
    const { report } = await apply(api, dir, { wait: false, retryTimeout: Duration.seconds(1) });
    expect(report.error).toContain('The API server could not call an admission webhook: check that its Pods are ready, its Service has endpoints '
      + 'and its configuration\'s caBundle signs its certificate (without --no-wait, apply waits for the stack\'s webhook first)');
  });

  test('a dry run stores nothing, and skips what needs a Namespace or CRD the apply would create', async () => {
    const { report, out } = await apply(api, shop(), { dryRun: true });
    expect(report.ok).toBe(true);
    expect(api.requestsOf('PATCH').every(r => r.query.dryRun === 'All')).toBe(true);
    expect(api.get('/api/v1/namespaces/shop')).toBeUndefined();
    expect(report.counts).toEqual({ created: 2, skipped: 4 });
    expect(out).toContain('(server-side apply, field manager kyma-serverless, dry run: nothing is stored)');
    expect(out).toContain('  created     Namespace shop (dry run)\n');
    expect(out).toContain('  skipped     ConfigMap shop/settings: its namespace shop is created by this apply, and a dry run does not create it\n');
    expect(out).toContain('  skipped     Widget shop/w1: its CustomResourceDefinition widgets.example.com is not installed yet, and a dry run does not install it\n');
    expect(out).not.toContain('waiting');

    controllers.start();
    await apply(api, shop());
    const dir = shop();
    fs.writeFileSync(path.join(dir, '0001-system.yaml'), [configMap('settings', 'shop', { a: '2' }, wave(-1)), deployment('web', 'shop', wave(-1)), job('migrate', 'shop', wave(-1))]
      .map(o => stringify(o)).join('---\n'));
    const changed = await apply(api, dir, { dryRun: true });
    expect(changed.report.counts).toEqual({ configured: 1, unchanged: 5 });
    expect(api.get('/api/v1/namespaces/shop/configmaps/settings')!.data).toEqual({ a: '1' });
  });

  test('reports an unreachable API server', async () => {
    const dir = folder({ 'a.yaml': [configMap('settings', 'default')] });
    const kubeconfig = writeKubeconfig(api, path.join(scratch, 'gone.yaml'));
    await api.close();
    const report = await runApply(dir, { kubeconfig, timeout: Duration.seconds(20), retryTimeout: Duration.millis(500) },
      { stdout: capture(), stderr: capture(), now: Date.now });
    expect(report.error).toMatch(/^Cannot reach the API server at http:\/\/127\.0\.0\.1:\d+ while reading the API server's discovery of v1: ECONNREFUSED/);
    api = await cluster();
  });

  describe('the ApplySet and --prune', () => {
    const parentPath = '/api/v1/namespaces/shop/secrets/kyma-serverless-applyset';

    test('writes the parent once its namespace exists, listing the set\'s kinds (and, for kubectl 1.28, resources) and namespaces', async () => {
      controllers.start();
      const { report } = await apply(api, shop());
      const parent = api.get(parentPath)!;
      expect(report.applySet)
        .toEqual({ parent: 'secrets/kyma-serverless-applyset -n shop', id: parent.metadata!.labels!['applyset.kubernetes.io/id'] });
      expect(parent.metadata!.annotations).toEqual({
        'applyset.kubernetes.io/tooling': ApplySet.tooling(),
        'applyset.kubernetes.io/contains-group-kinds':
          'ConfigMap,CustomResourceDefinition.apiextensions.k8s.io,Deployment.apps,Job.batch,Namespace,Widget.example.com',
        'applyset.kubernetes.io/contains-group-resources':
          'configmaps,customresourcedefinitions.apiextensions.k8s.io,deployments.apps,jobs.batch,namespaces,widgets.example.com',
        'applyset.kubernetes.io/additional-namespaces': '',
      });
      expect(parent.metadata!.managedFields).toEqual([expect.objectContaining({ manager: 'kyma-serverless-applyset', operation: 'Apply' })]);
    });

    test('deletes what the folder no longer holds, after everything else was applied, and waits until finalizers let it go', async () => {
      const dir = folder({ 'a.yaml': [namespace('shop'), configMap('settings', 'shop'), configMap('old', 'shop'), deployment('web', 'shop')] });
      await apply(api, dir, { wait: false });
      const old = api.get('/api/v1/namespaces/shop/configmaps/old')!;
      api.put({ ...old, metadata: { ...old.metadata, finalizers: ['example.com/hold'] } });
      // The finalizer's controller lets go once apply has seen the object being deleted.
      api.intercept('GET', '/api/v1/namespaces/shop/configmaps/old', (_request, fake) => {
        setImmediate(() => {
          const deleting = fake.get('/api/v1/namespaces/shop/configmaps/old')!;
          fake.put({ ...deleting, metadata: { ...deleting.metadata, finalizers: [] } });
        });
      });
      fs.writeFileSync(path.join(dir, 'a.yaml'), [namespace('shop'), configMap('settings', 'shop')].map(o => stringify(o)).join('---\n'));
      const dryRun = await apply(api, dir, { prune: true, dryRun: true });
      expect(dryRun.out).toContain('  pruned      ConfigMap shop/old (dry run)\n  pruned      Deployment shop/web (dry run)\n');
      expect(api.requestsOf('DELETE').every(r => r.query.dryRun === 'All')).toBe(true);
      expect(api.get('/api/v1/namespaces/shop/configmaps/old')).toBeDefined();
      const { report, out } = await apply(api, dir, { prune: true, wait: true });
      expect(report.ok).toBe(true);
      expect(report.pruned).toEqual([
        { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'old', outcome: 'pruned' },
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', outcome: 'pruned' },
      ]);
      expect(out).toContain('prune (ApplySet secrets/kyma-serverless-applyset -n shop): 2 objects no longer in ');
      expect(out).toContain('  waiting     ConfigMap shop/old: being deleted (finalizers: example.com/hold)\n');
      expect(out).toMatch(/Applied 2 objects in \d+\.\ds: 2 unchanged, 2 pruned\.\n/);
      expect(api.get('/api/v1/namespaces/shop/configmaps/old')).toBeUndefined();
      // The parent lists the set as the folder has it now.
      expect(api.get(parentPath)!.metadata!.annotations!['applyset.kubernetes.io/contains-group-kinds']).toBe('ConfigMap,Namespace');
    });

    test('leaves a Namespace the folder no longer holds, and says how to delete it', async () => {
      const dir = folder({ 'a.yaml': [namespace('shop'), namespace('old')] });
      await apply(api, dir, { wait: false });
      fs.writeFileSync(path.join(dir, 'a.yaml'), stringify(namespace('shop')));
      const { report, out } = await apply(api, dir, { prune: true, wait: false });
      expect(report.pruned).toEqual([
        {
          apiVersion: 'v1', kind: 'Namespace', name: 'old', outcome: 'kept',
          message: expect.stringMatching(/^deleting a Namespace deletes everything in it/),
        },
      ]);
      expect(out).toContain('  kept        Namespace old: deleting a Namespace deletes everything in it, also what is not in the set: '
        + 'when it is empty of yours, kubectl delete namespaces/old\n');
      expect(api.get('/api/v1/namespaces/old')).toBeDefined();
      expect(api.get(parentPath)!.metadata!.annotations!['applyset.kubernetes.io/contains-group-kinds']).toBe('Namespace');
    });

    test('fails when a deletion is forbidden, and keeps the set as it was for the next --prune', async () => {
      const dir = folder({ 'a.yaml': [namespace('shop'), configMap('settings', 'shop'), configMap('old', 'shop')] });
      await apply(api, dir, { wait: false });
      fs.writeFileSync(path.join(dir, 'a.yaml'), stringify(namespace('shop')));
      api.failNext('DELETE', /configmaps\/old$/, 403);
      const { report } = await apply(api, dir, { prune: true, wait: false });
      expect(report.ok).toBe(false);
      expect(report.error).toMatch(new RegExp('^1 of 2 objects could not be pruned \\(the ApplySet keeps them, for the next --prune\\):\n'
        + ' {2}ConfigMap shop/old: forbidden: .* Prune needs the verb delete on configmaps$'));
      expect(api.get(parentPath)!.metadata!.annotations!['applyset.kubernetes.io/contains-group-kinds']).toBe('ConfigMap,Namespace');
    });

    test('needs --applyset to prune a folder without a Namespace, whose parent would be shared', async () => {
      await expect(apply(api, folder({ 'a.yaml': [configMap('settings', 'default')] }), { prune: true }))
        .rejects.toThrow(/holds no Namespace to keep its ApplySet parent in: name the parent with --applyset \(such as --applyset my-app\)/);
      expect((await apply(api, folder({ 'a.yaml': [configMap('settings', 'default')] }), { prune: true, applyset: 'my-app' })).report.ok).toBe(true);
      expect(api.get('/api/v1/namespaces/default/secrets/my-app')).toBeDefined();
    });

    test('applies nothing when a manifest carries the set\'s label, or the parent\'s namespace does not exist', async () => {
      const labelled = configMap('settings', 'default');
      labelled.metadata!.labels = { 'applyset.kubernetes.io/part-of': 'applyset-x-v1' };
      const { report } = await apply(api, folder({ 'a.yaml': [labelled] }));
      expect(report.error).toMatch(new RegExp('^Nothing was applied: ConfigMap default/settings \\(a\\.yaml\\) carries the label '
        + 'applyset\\.kubernetes\\.io/part-of .*: remove it from the manifests; apply adds it itself$'));
      const loose = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'loose' }, data: {} };
      const missing = await apply(api, folder({ 'a.yaml': [loose] }), { namespace: 'nowhere' });
      expect(missing.report.error)
        .toBe('Nothing was applied: the namespace nowhere of the ApplySet parent secrets/kyma-serverless-applyset -n nowhere does not exist: '
        + 'create it (kubectl create namespace nowhere), or add a Namespace to ' + missing.report.dir);
      expect(patches(api)).toEqual([]);
    });

    test('fails on a change the API server refuses, saying the ways through, unless the object opted in to replacement', async () => {
      controllers.start();
      const dir = folder({ 'a.yaml': [namespace('shop'), deployment('web', 'shop')] });
      await apply(api, dir);
      const moved = deployment('web', 'shop');
      moved.spec.selector.matchLabels = { app: 'web', tier: 'front' };
      moved.spec.template.metadata.labels = { app: 'web', tier: 'front' };
      fs.writeFileSync(path.join(dir, 'a.yaml'), [namespace('shop'), moved].map(o => stringify(o)).join('---\n'));
      const { report } = await apply(api, dir);
      expect(report.error).toBe([
        '1 of 1 object of wave 0, built-in kinds failed:',
        '  Deployment shop/web (a.yaml): refused: spec.selector: Invalid value: ...: field is immutable. The API server never changes this in place; '
          + 'ways through: opt in to replacing it: allowReplacement() on the construct\'s ApiObject '
          + '(import { allowReplacement } from \'cdk8s-kyma-serverless\') writes '
          + 'argocd.argoproj.io/sync-options: Replace=true,Force=true and kustomize.toolkit.fluxcd.io/force: enabled, so that Argo CD, Flux and '
          + 'kyma-serverless apply delete it and create it again; or delete it yourself before the sync: kubectl delete deployment/web -n shop, '
          + 'then sync (or kyma-serverless apply); or keep the field as it is in the cluster. '
          + 'Replacing it costs: its Pods are deleted with it: the workload is down until the new Pods are ready',
      ].join('\n'));
      moved.metadata!.annotations = { 'argocd.argoproj.io/sync-options': 'Replace=true,Force=true', 'kustomize.toolkit.fluxcd.io/force': 'enabled' };
      fs.writeFileSync(path.join(dir, 'a.yaml'), [namespace('shop'), moved].map(o => stringify(o)).join('---\n'));
      const dryRun = await apply(api, dir, { dryRun: true });
      expect(dryRun.out)
        .toContain('  replaced    Deployment shop/web (dry run): would be deleted and created again: spec.selector: Invalid value: ...: '
          + 'field is immutable\n');
      const replaced = await apply(api, dir);
      expect(replaced.report.objects.find(o => o.kind === 'Deployment')).toMatchObject({ outcome: 'replaced' });
      expect(replaced.out)
        .toContain('  replacing   Deployment shop/web: spec.selector: Invalid value: ...: field is immutable: deleting it to create it again');
      expect(api.get('/apis/apps/v1/namespaces/shop/deployments/web')!.spec.selector.matchLabels).toEqual({ app: 'web', tier: 'front' });
    });
  });

  describe('the command', () => {
    /** Runs the command as main() would, with stdout and stderr captured. */
    async function command(args: string[]): Promise<{ stdout: string; stderr: string; error?: Error }> {
      const cli = program();
      let stdout = '';
      let stderr = '';
      const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        stdout += chunk.toString();
        return true;
      });
      const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        stderr += chunk.toString();
        return true;
      });
      const kubeconfig = writeKubeconfig(api, path.join(scratch, `kubeconfig-${Math.random()}.yaml`));
      let error: Error | undefined;
      try {
        await cli.parseAsync(['node', 'kyma-serverless', '--kubeconfig', kubeconfig, ...args, '--poll-interval', '5ms', '--timeout', '60s']);
      } catch (e) {
        error = e as Error;
      } finally {
        out.mockRestore();
        err.mockRestore();
      }
      return { stdout, stderr, error };
    }

    test('-o json prints the report on stdout and the progress on stderr', async () => {
      controllers.start();
      const { stdout, stderr, error } = await command(['-o', 'json', 'apply', shop()]);
      expect(error).toBeUndefined();
      const report = JSON.parse(stdout) as ApplyReport;
      expect(Object.keys(report)).toEqual(['ok', 'dir', 'dryRun', 'wait', 'fieldManager', 'seconds', 'counts', 'objects', 'applySet']);
      expect(report.objects.map(o => [o.kind, o.outcome])).toEqual([
        ['Namespace', 'created'], ['CustomResourceDefinition', 'created'], ['ConfigMap', 'created'], ['Deployment', 'created'], ['Job', 'created'], ['Widget', 'created'],
      ]);
      expect(stderr).toContain('  created     Widget shop/w1\n');
    });

    test('fails with exit code 1 and the report still printed as JSON', async () => {
      api.failNext('PATCH', /configmaps\/settings$/, 403);
      const { stdout, error } = await command(['-o', 'json', 'apply', shop()]);
      expect(error).toMatchObject({ name: 'CliError', exitCode: 1, message: expect.stringMatching(/^1 of 3 objects of wave -1, built-in kinds failed:/) });
      expect(JSON.parse(stdout)).toMatchObject({ ok: false, error: error!.message, counts: { created: 4, failed: 1, 'not-applied': 1 } });
    });

    test('--no-wait, --dry-run, --force-conflicts and --field-manager reach the apply', async () => {
      const { error } = await command(['apply', folder({ 'a.yaml': [configMap('settings', 'default')] }), '--no-wait', '--dry-run', '--force-conflicts', '--field-manager', 'ci']);
      expect(error).toBeUndefined();
      expect(api.requestsOf('PATCH').find(r => r.body.kind === 'ConfigMap')!.query).toEqual({ fieldManager: 'ci', force: 'true', dryRun: 'All' });
    });

    test('--help shows examples', async () => {
      const cli = program();
      if (!cli.commands.some(c => c.name() === 'apply')) addApplyCommand(cli);
      const applyCommand = cli.commands.find(c => c.name() === 'apply') as Command;
      let help = '';
      applyCommand.exitOverride().configureOutput({ writeOut: text => { help += text; } });
      await expect(cli.parseAsync(['node', 'kyma-serverless', 'apply', '--help'])).rejects.toMatchObject({ code: 'commander.helpDisplayed' });
      for (const text of ['--no-wait', '--timeout <duration>', '--dry-run', '--force-conflicts', '--field-manager <name>', 'Examples:', 'kyma-serverless apply dist/prod --context prod --timeout 15m']) {
        expect(help).toContain(text);
      }
    });
  });
});
