/**
 * The build-mode clean-up: the Job the 1.13.0 stack synthesizes, and its program run against the
 * fake API server (behind HTTPS, as the API server is in a cluster) holding a 1.11.1 system: the
 * 1.11.1 dist/ and what the 1.11.1 controller made beside it (test/util/build-mode-cluster.ts).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { Chart, Duration, Testing } from 'cdk8s';
import * as selfsigned from 'selfsigned';
import { parseAllDocuments } from 'yaml';
import { checkPolicies } from '../../src/policy/policy';
import { REGISTRY_CREDENTIALS_SCRIPT } from '../../src/stack/_registry-credentials-script';
import {
  BuildModeCleanup, BuildModeCleanupProps, GENERATED_CREDENTIALS_MANAGER, LeftoverAction, REGISTRY_SECRET_FINALIZER, RUNTIME_CONFIG_MAP_FINALIZER,
  buildModeRules,
} from '../../src/stack/build-mode-cleanup';
import { PODS, REPLICA_SETS, playBuildMode, playController } from '../util/build-mode-cluster';
import { BUILT_IN_RESOURCES, NAMESPACES } from '../util/fake-cluster';
import { FakeKubeApi, KubeObject, REACH_RESOURCES } from '../util/fake-kube-api';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { find } from '../util/synth';

const IMAGE_113 = 'europe-docker.pkg.dev/kyma-project/prod/function-buildless-controller:1.13.0';
const NODE = 'docker.io/library/node:22.12.0-alpine3.20';
const DIST = path.join(__dirname, '..', '..', 'dist');

function synth(props: Partial<BuildModeCleanupProps> = {}): any[] {
  const chart = new Chart(Testing.app(), 'serverless', { namespace: 'kyma-system' });
  new BuildModeCleanup(chart, 'BuildModeCleanup', { namespace: 'kyma-system', image: NODE, controllerImage: IMAGE_113, ...props });
  return Testing.synth(chart);
}

describe('the clean-up Job', () => {
  const objects = synth();
  const job = find(objects, 'Job');
  const pod = job.spec.template.spec;

  test('is valid Kubernetes, runs its program from a ConfigMap on the Node.js image, restricted, without a sidecar', () => {
    expectValidKubernetesObjects(objects);
    expect(pod.containers[0]).toMatchObject({ image: NODE, command: ['node', '/script/cleanup.js'] });
    expect(pod.containers[0].securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(job.spec.template.metadata.annotations).toEqual({ 'sidecar.istio.io/inject': 'false' });
    expect(job.spec.template.metadata.labels['networking.serverless.kyma-project.io/to-apiserver']).toBe('allowed');
    expect(pod.serviceAccountName).toBe('serverless-build-mode-cleanup');
    expect(pod.volumes).toEqual([{ name: 'script', configMap: { name: 'serverless-build-mode-cleanup-script' } }]);
  });

  test('passes every policy check of validate, with the stack\'s PriorityClass', () => {
    const withPriority = synth({ priorityClassName: 'serverless-priority' });
    expect(checkPolicies(withPriority).filter(v => !v.excepted)).toEqual([]);
    expect(find(withPriority, 'Job').spec.template.spec.priorityClassName).toBe('serverless-priority');
  });

  test('is the same Job for the same spec, and a new one (a new name) when its spec or rules change; it never deletes itself', () => {
    expect(find(synth(), 'Job').metadata.name).toBe(job.metadata.name);
    expect(job.metadata.name).toMatch(/^serverless-build-mode-cleanup-[0-9a-f]{8}$/);
    expect(find(synth({ image: 'node:22' }), 'Job').metadata.name).not.toBe(job.metadata.name);
    expect(find(synth({ registrySecretName: 'other' }), 'Job').metadata.name).not.toBe(job.metadata.name);
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
  });

  test('has least-privilege RBAC: no wildcard, Secrets and ServiceAccounts by name only, writes in the stack\'s namespace by name', () => {
    const clusterRole = find(objects, 'ClusterRole');
    const role = find(objects, 'Role');
    for (const rule of [...clusterRole.rules, ...role.rules]) {
      expect(rule.verbs).not.toContain('*');
      expect(rule.resources).not.toContain('*');
    }
    const granted = (r: any[], resource: string) => r.filter(x => x.resources.includes(resource));
    expect(granted(clusterRole.rules, 'secrets')).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['serverless-registry-config-default'], verbs: ['get', 'delete'] }]);
    expect(granted(clusterRole.rules, 'serviceaccounts')[0].resourceNames).toEqual(['serverless-function']);
    // The one write that is not a deletion, cluster-wide: the status of Functions.
    expect(clusterRole.rules.filter((r: any) => r.verbs.includes('update')).map((r: any) => r.resources)).toEqual([['functions/status']]);
    expect(granted(role.rules, 'configmaps')).toEqual([{
      apiGroups: [''], resources: ['configmaps'], resourceNames: ['dockerfile-nodejs20', 'dockerfile-nodejs22', 'dockerfile-python312'], verbs: ['update'],
    }]);
    expect(granted(role.rules, 'deployments')[0]).toMatchObject({ resourceNames: ['serverless-ctrl-mngr'], verbs: ['get'] });
    expect(find(objects, 'ClusterRoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'serverless-build-mode-cleanup', namespace: 'kyma-system' }]);
  });

  test('ships the rules it follows beside its program', () => {
    const rules = JSON.parse(find(objects, 'ConfigMap').data['rules.json']);
    expect(rules).toEqual(JSON.parse(JSON.stringify(buildModeRules({ namespace: 'kyma-system', controllerImage: IMAGE_113 }))));
    expect(rules.controller).toEqual({ deployment: 'serverless-ctrl-mngr', image: IMAGE_113 });
    expect(rules.waitSeconds).toBe(1800);
    expect(buildModeRules({ namespace: 'x', timeout: Duration.minutes(2) }).waitSeconds).toBe(120);
  });

  test('the rules say the finalizers of 1.11.1 and the label of the Secret the credentials Job writes', () => {
    const rules = buildModeRules({ namespace: 'kyma-system' }).leftovers;
    expect(rules.find(r => r.what === 'runtime Dockerfile ConfigMap')).toMatchObject({
      finalizer: RUNTIME_CONFIG_MAP_FINALIZER, action: LeftoverAction.UNFINALIZE, where: 'stack',
    });
    expect(rules.find(r => r.what === 'registry credentials Secret')).toMatchObject({
      finalizer: REGISTRY_SECRET_FINALIZER, action: LeftoverAction.DELETE, oursIf: { 'app.kubernetes.io/managed-by': GENERATED_CREDENTIALS_MANAGER },
    });
    expect(REGISTRY_CREDENTIALS_SCRIPT).toContain(`'app.kubernetes.io/managed-by': '${GENERATED_CREDENTIALS_MANAGER}'`);
  });
});

describe('the clean-up program, against a 1.11.1 system in the fake API server behind HTTPS', () => {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048, days: 1, algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  });
  let dir: string;
  let api: FakeKubeApi;
  let proxy: https.Server;

  /** Writes the program and its rules as the Job's ConfigMap holds them. */
  function writeProgram(props: Partial<BuildModeCleanupProps> = {}): string {
    const data = find(synth(props), 'ConfigMap').data;
    const at = fs.mkdtempSync(path.join(dir, 'script-'));
    for (const [file, text] of Object.entries(data)) fs.writeFileSync(path.join(at, file), text as string);
    return at;
  }

  /** Runs the program as the Job runs it. */
  function run(script: string): Promise<{ code: number | null; lines: any[] }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(script, 'cleanup.js')], {
        env: {
          PATH: process.env.PATH, KUBERNETES_SERVICE_HOST: 'localhost', KUBERNETES_SERVICE_PORT: String((proxy.address() as any).port),
          SERVICE_ACCOUNT_DIR: dir, RULES_FILE: path.join(script, 'rules.json'), POLL_SECONDS: '0.2',
        },
      });
      let stdout = '';
      child.stdout.on('data', d => { stdout += d; });
      child.stderr.on('data', d => { stdout += d; });
      child.on('error', reject);
      child.on('close', code => resolve({ code, lines: stdout.trim().split('\n').map(l => { try { return JSON.parse(l); } catch { return l; } }) }));
    });
  }

  /** Every object path in the store. */
  function allPaths(): Set<string> {
    const lists = [
      '/api/v1/configmaps', '/api/v1/secrets', '/api/v1/serviceaccounts', '/apis/batch/v1/jobs', '/apis/autoscaling/v2/horizontalpodautoscalers',
      '/apis/apps/v1/deployments', '/api/v1/services', '/apis/serverless.kyma-project.io/v1alpha2/functions',
    ];
    return new Set(lists.flatMap(list => (api.get(list)!.items as KubeObject[]).map(o => api.pathOf(o))));
  }

  let leftovers: readonly string[];
  let lookAlikes: readonly string[];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cleanup-'));
    fs.writeFileSync(path.join(dir, 'ca.crt'), pems.cert);
    api = await FakeKubeApi.start({ resources: [...BUILT_IN_RESOURCES.filter(t => t !== NAMESPACES), ...REACH_RESOURCES, PODS, REPLICA_SETS, NAMESPACES] });
    fs.writeFileSync(path.join(dir, 'token'), `${api.token}\n`);
    proxy = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      const upstream = http.request(`${api.url}${req.url}`, { method: req.method, headers: req.headers }, answer => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve));

    // The 1.11.1 system: dist/ as synth writes it (the CRD first: it serves Functions), and more namespaces.
    const dist = ['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml']
      .flatMap(file => parseAllDocuments(fs.readFileSync(path.join(DIST, file), 'utf8')).map(d => d.toJS() as KubeObject));
    for (const object of dist.sort((a, b) => Number(b.kind === 'CustomResourceDefinition') - Number(a.kind === 'CustomResourceDefinition'))) {
      api.put(object);
    }
    for (const name of ['default', 'team-own']) api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    ({ leftovers, lookAlikes } = playBuildMode(api, ['default-functions', 'default']));
  }, 60_000);

  afterAll(async () => {
    proxy.close();
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('deletes nothing while a 1.11.1 controller runs, and gives up after its timeout', async () => {
    playController(api, IMAGE_113, { rolledOut: true, oldPod: true });
    const before = allPaths();
    api.clearRequests();
    const { code, lines } = await run(writeProgram({ timeout: Duration.seconds(1) }));
    expect(code).toBe(1);
    expect(lines).toContainEqual({ msg: 'waiting: controller Pods of the old release are still there: serverless-ctrl-mngr-old' });
    expect(lines[lines.length - 1]).toMatchObject({ msg: 'gave up waiting for the controller after 1 s: nothing deleted' });
    expect(api.requests.filter(r => r.method !== 'GET')).toEqual([]);
    expect(allPaths()).toEqual(before);
  }, 30_000);

  test('deletes exactly what build mode left once the controller runs 1.13.0 only, and unblocks what the sync prunes', async () => {
    playController(api, IMAGE_113, { rolledOut: false });
    // Prune (Argo CD, Flux, apply --prune) deletes a base runtime ConfigMap: its finalizer holds it.
    const base = '/api/v1/namespaces/kyma-system/configmaps/dockerfile-nodejs22';
    await fetch(`${api.url}${base}`, { method: 'DELETE', headers: { Authorization: `Bearer ${api.token}` } });
    expect(api.get(base)!.metadata!.deletionTimestamp).toBeDefined();
    const before = allPaths();
    const script = writeProgram();
    const running = run(script);
    // The rollout ends while the Job waits.
    await new Promise(resolve => setTimeout(resolve, 500));
    playController(api, IMAGE_113, { rolledOut: true });
    const { code, lines } = await running;
    expect(code).toBe(0);

    const after = allPaths();
    const gone = [...before].filter(p => !after.has(p));
    expect(gone.sort()).toEqual([...leftovers, base].sort());
    for (const path of lookAlikes) expect(after.has(path)).toBe(true);
    // The other base runtime ConfigMaps stay for the sync to prune, without the finalizer.
    expect(api.get('/api/v1/namespaces/kyma-system/configmaps/dockerfile-python312')!.metadata!.finalizers).toEqual([]);
    const functions = api.get('/apis/serverless.kyma-project.io/v1alpha2/functions')!.items as KubeObject[];
    for (const fn of functions) expect(fn.status.conditions.map((c: any) => c.type)).toEqual(['Running', 'ConfigurationReady']);

    const deleted = lines.filter(l => l.msg === 'deleted');
    expect(deleted).toHaveLength(leftovers.length);
    expect(deleted).toContainEqual({ msg: 'deleted', what: 'build Job', kind: 'Job', namespace: 'default-functions', name: 'hello-node-build-xxxx0' });
    expect(lines).toContainEqual({ msg: 'kept: labelled as the user\'s', what: 'copy of a runtime Dockerfile ConfigMap', kind: 'ConfigMap',
      namespace: 'team-own', name: 'dockerfile-nodejs22', labels: { 'serverless.kyma-project.io/managed-by': 'user' } });
    expect(lines[lines.length - 1]).toEqual({ msg: 'done', deleted: leftovers.length, kept: 5, failed: 0 });
  }, 30_000);

  test('run again (a re-synced or fresh 1.13.0 system), finds nothing, changes nothing, and ends 0', async () => {
    api.clearRequests();
    const { code, lines } = await run(writeProgram());
    expect(code).toBe(0);
    expect(api.requests.filter(r => r.method === 'DELETE')).toEqual([]);
    // Kept: the two base runtime ConfigMaps left for the sync, and the user's ConfigMap and Secret in team-own.
    expect(lines[lines.length - 1]).toEqual({ msg: 'done', deleted: 0, kept: 4, failed: 0 });
  }, 30_000);

  test('keeps a registry Secret it did not create, without the finalizer that would hold it forever', async () => {
    api.put({
      apiVersion: 'v1', kind: 'Secret',
      metadata: {
        name: 'ext-registry', namespace: 'kyma-system', labels: { 'serverless.kyma-project.io/config': 'credentials' },
        finalizers: [REGISTRY_SECRET_FINALIZER],
      },
    });
    const { code, lines } = await run(writeProgram({ registrySecretName: 'ext-registry' }));
    expect(code).toBe(0);
    expect(api.get('/api/v1/namespaces/kyma-system/secrets/ext-registry')!.metadata!.finalizers).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ msg: expect.stringMatching(/^kept: the stack's credentials Job did not create it/), name: 'ext-registry' }));
  }, 30_000);

  test('fails, and says so, when the API server forbids a deletion; the rest goes on', async () => {
    api.put({
      apiVersion: 'v1', kind: 'ServiceAccount',
      metadata: { name: 'serverless-function', namespace: 'default', labels: { 'serverless.kyma-project.io/config': 'service-account' } },
    });
    api.put({
      apiVersion: 'v1', kind: 'ServiceAccount',
      metadata: { name: 'serverless-function', namespace: 'team-own', labels: { 'serverless.kyma-project.io/config': 'service-account' } },
    });
    api.failNext('DELETE', '/api/v1/namespaces/default/serviceaccounts/serverless-function', 403);
    const { code, lines } = await run(writeProgram());
    expect(code).toBe(1);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'failed', namespace: 'default', error: expect.stringMatching(/: 403 .*forbidden/) }));
    expect(api.get('/api/v1/namespaces/team-own/serviceaccounts/serverless-function')).toBeUndefined();
  }, 30_000);
});
