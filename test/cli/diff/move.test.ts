/**
 * `kyma-serverless diff` of a 1.13.0 folder against a running 1.11.1 system, then the move itself
 * with `apply --prune` and the clean-up program: the fake API server holds the 1.11.1 dist/, applied
 * with `kyma-serverless apply`, and what the 1.11.1 controller made beside it
 * (test/util/build-mode-cluster.ts). The 1.13.0 folder is dist/ as the 1.13.0 stack changes it: the
 * CRD's release, the buildless controller, no registry, no runtime Dockerfiles, no build resources,
 * and the clean-up Job.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { parseAllDocuments, stringify } from 'yaml';
import { ApplyOptions, runApply } from '../../../src/cli/apply';
import { DiffReport, LeftoverRemoval, formatDiffReport, runDiff } from '../../../src/cli/diff';
import { BuildModeCleanup, BUILD_MODE_STACK_OBJECTS } from '../../../src/stack/build-mode-cleanup';
import { PODS, playBuildMode, playController, runCleanupProgram } from '../../util/build-mode-cluster';
import { BUILT_IN_RESOURCES, NAMESPACES } from '../../util/fake-cluster';
import { API_RULES, FakeKubeApi, KubeObject, SUBSCRIPTIONS, writeKubeconfig } from '../../util/fake-kube-api';

const DIST = path.join(__dirname, '..', '..', '..', 'dist');
const FILES = ['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml'];
const IMAGE_113 = 'europe-docker.pkg.dev/kyma-project/prod/function-buildless-controller:1.13.0';
type Files = { [file: string]: KubeObject[] };

const distObjects = (): Files => Object.fromEntries(FILES.map(file =>
  [file, parseAllDocuments(fs.readFileSync(path.join(DIST, file), 'utf8')).map(d => d.toJS() as KubeObject)]));

/** The objects of the 1.13.0 clean-up, as the 1.13.0 stack synthesizes them. */
function cleanupObjects(): KubeObject[] {
  const chart = new Chart(Testing.app(), 'serverless', { namespace: 'kyma-system' });
  new BuildModeCleanup(chart, 'BuildModeCleanup', { namespace: 'kyma-system', image: 'docker.io/library/node:22.12.0-alpine3.20', controllerImage: IMAGE_113 });
  return Testing.synth(chart);
}

/** dist/ as the 1.13.0 stack writes it, for what the move needs. */
function moved(): Files {
  const files = distObjects();
  const stackOnly113 = (o: KubeObject) => {
    const name = o.metadata?.name ?? '';
    if (BUILD_MODE_STACK_OBJECTS.some(s => s.kind === o.kind && (s.name === name || (s.labelSelector && name.startsWith('serverless-registry-credentials'))))) return false;
    return !name.startsWith('dockerfile-');
  };
  files[FILES[0]] = files[FILES[0]].filter(stackOnly113);
  for (const o of files[FILES[0]]) {
    if (o.kind === 'CustomResourceDefinition') o.metadata!.annotations!['cdk8s-kyma-serverless/release'] = '1.13.0';
    if (o.kind === 'Deployment' && o.metadata!.name === 'serverless-ctrl-mngr') o.spec.template.spec.containers[0].image = IMAGE_113;
  }
  files[FILES[0]].push(...cleanupObjects());
  for (const o of files[FILES[1]]) if (o.kind === 'Function') delete o.spec.resourceConfiguration?.build;
  return files;
}

let scratch: string;
let api: FakeKubeApi;
let kubeconfig: string;
let leftovers: readonly string[];
let lookAlikes: readonly string[];
let report: DiffReport;
let dir113: string;

const capture = () => ({ write: () => true });
const apply = (dir: string, options: Omit<ApplyOptions, 'kubeconfig'> = {}) =>
  runApply(dir, { kubeconfig, wait: false, ...options }, { stdout: capture(), stderr: capture(), now: Date.now });
function folder(files: Files): string {
  const dir = fs.mkdtempSync(path.join(scratch, 'dist-'));
  for (const [file, objects] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), objects.map(o => stringify(o, { lineWidth: 0 })).join('---\n'));
  return dir;
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'move-'));
  api = await FakeKubeApi.start({
    resources: [...BUILT_IN_RESOURCES.filter(t => t !== NAMESPACES), API_RULES, SUBSCRIPTIONS, PODS, NAMESPACES], namespaceLifecycle: true,
  });
  for (const name of ['default', 'team-own']) api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  kubeconfig = writeKubeconfig(api, path.join(scratch, 'kubeconfig.yaml'));
  expect((await apply(folder(distObjects()))).ok).toBe(true);
  ({ leftovers, lookAlikes } = playBuildMode(api, ['default-functions', 'default']));
  dir113 = folder(moved());
  report = await runDiff(dir113, { kubeconfig });
}, 90_000);
afterAll(async () => {
  await api.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

const path113 = (l: { apiVersion: string; kind: string; namespace?: string; name: string }) => api.pathOf({ apiVersion: l.apiVersion, kind: l.kind, metadata: { name: l.name, namespace: l.namespace } });

describe('kyma-serverless diff of a 1.13.0 folder against a 1.11.1 system', () => {
  test('sees the move from the Function CRD\'s release, and says per Function what happens and what it needs', () => {
    expect(report.move).toMatchObject({ from: '1.11.1', to: '1.13.0', unread: [] });
    const byName = new Map(report.move!.functions.map(f => [f.name, f]));
    expect([...byName.keys()]).toEqual(['hello-node', 'hello-python']);
    const node = byName.get('hello-node')!;
    expect(node.restarts).toBe(true);
    expect(node.happens).toEqual([
      'Pods restarted: the 1.13.0 controller takes over its Deployment and runs the nodejs22 runtime image of 1.13.0, with no build',
      'its Pods run as user 1000 with a read-only root file system: only /tmp is writable',
      '`scale` is a HorizontalPodAutoscaler written beside the Function (the controller writes none), which replaces the controller\'s',
      'the clean-up drops its BuildReady condition, which no 1.13.0 controller writes',
    ]);
    // Its package.json names no dependencies: nothing to install, nothing to reach.
    expect(node.needs).toEqual([]);
    // Build resources are refused under 1.13.0, so the folder has none (test/api/function-changes.test.ts says what they become).
    expect(byName.get('hello-python')!.happens[0]).toContain('runs the python312 runtime image of 1.13.0');
  });

  test('names every object build mode left, read from the cluster, and says which the clean-up Job removes', () => {
    const left = report.move!.leftovers;
    const byRemoval = (removal: LeftoverRemoval) => left.filter(l => l.removal === removal).map(path113).sort();
    // Everything the clean-up deletes, and nothing else.
    expect(byRemoval(LeftoverRemoval.CLEANUP)).toEqual([...leftovers].sort());
    expect(left.find(l => l.kind === 'Job' && l.name.startsWith('hello-node-build-'))!.meaning)
      .toBe('build Job: the clean-up Job deletes it once the 1.13.0 controller runs');
    // The stack's own build-mode objects: the sync prunes them, the runtime ConfigMaps once the clean-up removed their finalizer.
    expect(byRemoval(LeftoverRemoval.PRUNE)).toEqual(expect.arrayContaining([
      '/apis/apps/v1/namespaces/kyma-system/deployments/serverless-docker-registry',
      '/api/v1/namespaces/kyma-system/persistentvolumeclaims/serverless-docker-registry',
      '/api/v1/namespaces/kyma-system/serviceaccounts/serverless-function',
      '/api/v1/namespaces/kyma-system/configmaps/dockerfile-nodejs22',
    ]));
    expect(left.find(l => l.name === 'dockerfile-nodejs22' && l.namespace === 'kyma-system')!.meaning).toBe('runtime Dockerfile ConfigMap: it is in the '
      + '1.11.1 manifests, so the sync prunes it (its finalizer no longer holds it); the clean-up removes its finalizer serverless.kyma-project.io/deletion-hook first');
    // The user's look-alikes are named as kept, or not at all.
    expect(byRemoval(LeftoverRemoval.KEPT)).toEqual([
      '/api/v1/namespaces/team-own/configmaps/dockerfile-nodejs22', '/api/v1/namespaces/team-own/secrets/serverless-registry-config-default',
    ]);
    for (const p of lookAlikes.filter(l => !l.includes('team-own'))) expect(left.map(path113)).not.toContain(p);
  });

  test('prints the move after the changes, and reads only', () => {
    const text = formatDiffReport(report);
    expect(text).toMatch(/\nMoving from 1\.11\.1 to 1\.13\.0: 2 Functions restart; build mode left \d+ objects: 16 for the clean-up Job, \d+ for the sync's prune, 2 kept\n/);
    expect(text).toContain('\nmove        Function default-functions/hello-node: Pods restarted: the 1.13.0 controller takes over its Deployment');
    expect(text).toMatch(/\nleftover {4}HorizontalPodAutoscaler default-functions\/hello-node-\w+: HorizontalPodAutoscaler of the controller: the clean-up Job deletes it/);
    expect(report.exitCode).toBe(1);
  });
});

describe('the move: apply --prune of the 1.13.0 folder, then the clean-up Job', () => {
  test('prune leaves the runtime ConfigMaps to their finalizer until the clean-up removes it; then nothing of build mode is left', async () => {
    const applied = await apply(dir113, { prune: true });
    expect(applied.ok).toBe(true);
    const base = api.get('/api/v1/namespaces/kyma-system/configmaps/dockerfile-nodejs22')!;
    expect(base.metadata!.deletionTimestamp).toBeDefined();
    expect(api.get('/apis/apps/v1/namespaces/kyma-system/deployments/serverless-docker-registry')).toBeUndefined();

    playController(api, IMAGE_113, { rolledOut: true });
    const data = cleanupObjects().find(o => o.kind === 'ConfigMap')!.data;
    const { code } = await runCleanupProgram(api, data);
    expect(code).toBe(0);
    expect(api.get('/api/v1/namespaces/kyma-system/configmaps/dockerfile-nodejs22')).toBeUndefined();
    for (const p of leftovers) expect(api.get(p)).toBeUndefined();
    for (const p of lookAlikes) expect(api.get(p)).toBeDefined();

    const after = await runDiff(dir113, { kubeconfig });
    expect(after.move).toBeUndefined();
  }, 60_000);
});
