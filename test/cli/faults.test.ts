/**
 * `apply`, `apply --prune`, `diff` and `status --watch` while the API server fails: stopped in the
 * middle and started again, 429 with Retry-After, 500/503/504, a 409 conflict with another field
 * manager, a request that hangs, and Ctrl-C. The faults come from `test/util/fault-proxy.ts`, a
 * proxy in front of the fake API server, so the requests go through client-node's HTTP stack and
 * sockets as they do to a real cluster. Each test ends with a rerun that converges.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration } from 'cdk8s';
import { stringify } from 'yaml';
import { ApplyIo, ApplyOptions, runApply } from '../../src/cli/apply';
import { DiffOptions, runDiff } from '../../src/cli/diff';
import { program } from '../../src/cli/index';
import { StatusIo, runStatus } from '../../src/cli/status';
import { BUILT_IN_RESOURCES } from '../util/fake-cluster';
import { FakeControllers } from '../util/fake-controllers';
import { DEFAULT_RESOURCES, FUNCTIONS, FUNCTION_RESOURCES, FakeKubeApi, KubeObject, ResourceType, objectPath, writeKubeconfig } from '../util/fake-kube-api';
import { FaultProxy } from '../util/fault-proxy';
import { condition, documents, seed } from './status/_fixtures';

let scratch: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'faults-'));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const configMap = (name: string, data: object = { a: '1' }): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'shop' }, data });
const deployment = (name: string): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'shop', annotations: { 'argocd.argoproj.io/sync-wave': '1' } },
  spec: {
    replicas: 1, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
  },
});

/** A folder of one file; written again by {@link write}. */
function folder(objects: readonly KubeObject[]): string {
  const dir = fs.mkdtempSync(path.join(scratch, 'dist-'));
  write(dir, objects);
  return dir;
}
const write = (dir: string, objects: readonly KubeObject[]) => fs.writeFileSync(path.join(dir, 'shop.yaml'), objects.map(o => stringify(o)).join('---\n'));

/** The shop: a Namespace, two ConfigMaps in wave 0 and a Deployment in wave 1 (waited for). */
const SHOP = [namespace('shop'), configMap('a'), configMap('b'), deployment('web')];
const CM = (name: string) => `/api/v1/namespaces/shop/configmaps/${name}`;

function capture() {
  let text = '';
  return { write: (chunk: string) => { text += chunk; return true; }, text: () => text };
}

let api: FakeKubeApi;
let proxy: FaultProxy;
let controllers: FakeControllers;
let kubeconfig: string;
beforeEach(async () => {
  await startCluster(BUILT_IN_RESOURCES);
});

/** The fake API server with these kinds, the proxy in front of it, and the controllers that make workloads ready. */
async function startCluster(resources: readonly ResourceType[]): Promise<void> {
  api = await FakeKubeApi.start({ resources, namespaceLifecycle: true });
  api.put(namespace('default'));
  await newProxy();
  controllers = new FakeControllers(api);
  controllers.start();
}

/** A new proxy, without faults, and the kubeconfig through it. */
async function newProxy(): Promise<void> {
  await proxy?.close();
  proxy = await FaultProxy.start(api.url);
  kubeconfig = writeKubeconfig(api, path.join(scratch, `kubeconfig-${Math.random()}.yaml`), { server: proxy.url });
}
afterEach(async () => {
  controllers.stop();
  await proxy.close();
  await api.close();
});

/**
 * Applies through the proxy with a fast poll and short retry budgets: pauses of 250 ms doubling,
 * tries for 3 s. The deadline (60 s) is far above any of these applies (each well under 1 s idle).
 */
async function apply(dir: string, options: Omit<ApplyOptions, 'kubeconfig'> = {}, interrupt?: AbortSignal) {
  const stdout = capture();
  const io: ApplyIo = { stdout, stderr: capture(), now: Date.now, interrupt };
  const report = await runApply(dir, {
    kubeconfig, pollInterval: Duration.millis(10), timeout: Duration.seconds(60), retryTimeout: Duration.seconds(3), ...options,
  }, io);
  return { report, out: stdout.text() };
}

/** Writes nothing but dry runs: the requests that changed the cluster. */
const writes = () => api.requests.filter(r => (r.method === 'PATCH' && r.query.dryRun !== 'All') || (r.method === 'DELETE' && r.query.dryRun !== 'All'));

/** The first shop applied, with `old` as a third ConfigMap; then the folder without it, for --prune. */
async function shopWithOrphan(): Promise<string> {
  const dir = folder([...SHOP, configMap('old')]);
  expect((await apply(dir, { prune: true })).report.ok).toBe(true);
  write(dir, SHOP);
  api.clearRequests();
  proxy.requests.length = 0;
  return dir;
}

/** The rerun after a fault: everything applied, the orphan pruned, nothing left to do after. */
async function convergesAfter(dir: string): Promise<void> {
  const rerun = await apply(dir, { prune: true });
  expect(rerun.report).toMatchObject({ ok: true, pruned: [expect.objectContaining({ name: 'old', outcome: 'pruned' })] });
  expect(api.get(CM('old'))).toBeUndefined();
  expect(api.get(CM('b'))).toBeDefined();
  const again = await apply(dir, { prune: true });
  expect(again.report).toMatchObject({ ok: true, counts: { unchanged: 4 }, pruned: [] });
}

describe('apply while the API server fails', () => {
  test('the API server stops in the middle of an apply and starts again: apply waits for it and finishes; a rerun changes nothing', async () => {
    const dir = folder(SHOP);
    let stopped = false;
    proxy.onRequest(request => {
      if (stopped || request.method !== 'PATCH' || request.path !== CM('b')) return;
      stopped = true;
      // Down for 700 ms, as kube-apiserver restarting over the same etcd: its store stays.
      void proxy.stop().then(() => setTimeout(() => void proxy.start(), 700));
    });
    const { report, out } = await apply(dir);
    expect(report).toMatchObject({ ok: true, counts: { created: 4 } });
    expect(out).toMatch(/ {2}retrying {4}(GET|PATCH) \/api\/v1\/namespaces\/shop\/configmaps\/b: .*(ECONNREFUSED|ECONNRESET|socket hang up).*; try 2 in 250ms\n/);
    expect(api.get(CM('b'))).toBeDefined();
    expect((await apply(dir)).report).toMatchObject({ ok: true, counts: { unchanged: 4 } });
  });

  test('it stays away past --retry-timeout: apply fails saying what was not applied and that --prune deleted nothing; the rerun converges', async () => {
    const dir = await shopWithOrphan();
    write(dir, [...SHOP.slice(0, 2), configMap('b', { a: '2' }), SHOP[3]]);
    let stopped = false;
    proxy.onRequest(request => {
      if (stopped || request.method !== 'PATCH' || request.path !== CM('b')) return;
      stopped = true;
      void proxy.stop();
    });
    const { report } = await apply(dir, { prune: true, retryTimeout: Duration.millis(800) });
    expect(report.ok).toBe(false);
    expect(report.error).toMatch(/^1 of 2 objects of wave 0, built-in kinds failed:\n {2}ConfigMap shop\/b \(shop\.yaml\): Cannot reach the API server at http:\/\/127\.0\.0\.1:\d+ while (reading|applying) it: .*\(\d+ tries over \d\.\ds\)\n/);
    expect(report.error).toContain('\nnot applied: 1 object of wave 1, built-in kinds\n--prune did not run: nothing was deleted\n'
      + 'The API server was failing: apply again once it answers, to go on from here (what is applied stays applied)');
    expect(report.objects.map(o => [o.name, o.outcome])).toEqual([['shop', 'unchanged'], ['a', 'unchanged'], ['b', 'failed'], ['web', 'not-applied']]);

    // A step stops at the first object the API server fails: the rest would each wait --retry-timeout for nothing.
    write(dir, [namespace('shop'), configMap('a', { a: '3' }), configMap('b', { a: '3' }), SHOP[3]]);
    let down = false;
    proxy.onRequest(request => {
      if (down || request.method !== 'GET' || request.path !== CM('a')) return;
      down = true;
      void proxy.stop();
    });
    await proxy.start();
    proxy.requests.length = 0;
    const cut = await apply(dir, { prune: true, retryTimeout: Duration.millis(800) });
    expect(cut.report.objects.map(o => [o.name, o.outcome])).toEqual([['shop', 'unchanged'], ['a', 'failed'], ['b', 'not-applied'], ['web', 'not-applied']]);
    expect(cut.report.error).toContain('\nnot applied: 2 objects of wave 0, built-in kinds; wave 1, built-in kinds\n');
    expect(proxy.requestsOf('GET', CM('b'))).toEqual([]);
    expect(api.requestsOf('DELETE')).toEqual([]);
    expect(api.get(CM('old'))).toBeDefined();

    await proxy.start();
    await convergesAfter(dir);
    expect(api.get(CM('b'))!.data).toEqual({ a: '3' });
  });

  test('429 with Retry-After: waits as long as the server asks, then goes on', async () => {
    const dir = folder(SHOP);
    proxy.fail('PATCH', CM('a'), 429, { retryAfter: 1, times: 2 });
    const { report, out } = await apply(dir);
    expect(report).toMatchObject({ ok: true, counts: { created: 4 } });
    const tries = proxy.requestsOf('PATCH', CM('a'));
    expect(tries.map(t => t.status)).toEqual([429, 429, 201]);
    // Timers never fire early: each try came at least the second the server asked for after the one before.
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(990);
    expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(990);
    expect(out).toContain('  retrying    PATCH /api/v1/namespaces/shop/configmaps/a: 429: Too many requests, please try again later.; try 2 in 1.0s '
      + '(the server\'s Retry-After)\n');
  });

  test('a Retry-After beyond --retry-timeout is not waited for: the object fails at once, saying so', async () => {
    const dir = folder(SHOP);
    proxy.fail('PATCH', CM('a'), 429, { retryAfter: 60 });
    const started = Date.now();
    const { report } = await apply(dir, { retryTimeout: Duration.seconds(5) });
    expect(Date.now() - started).toBeLessThan(50_000);
    expect(report.error).toContain('ConfigMap shop/a (shop.yaml): the API server answered 429: Too many requests, please try again later.');
  });

  test('503 and 504 are tried again with growing pauses; a 500 that is no webhook\'s fails the object at once; the rerun converges', async () => {
    const dir = await shopWithOrphan();
    proxy.fail('PATCH', CM('a'), 503, { times: 2 });
    proxy.fail('GET', CM('b'), 504);
    const passing = await apply(dir);
    expect(passing.report).toMatchObject({ ok: true });
    const tries = proxy.requestsOf('PATCH', CM('a'));
    expect(tries.map(t => t.status)).toEqual([503, 503, 200]);
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(245);
    expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(495);
    expect(passing.out).toContain('  retrying    GET /api/v1/namespaces/shop/configmaps/b: 504: Timeout: request did not complete within requested timeout');

    proxy.fail('PATCH', CM('b'), 500);
    proxy.requests.length = 0;
    const { report } = await apply(dir, { prune: true });
    expect(report.error).toBe([
      '1 of 2 objects of wave 0, built-in kinds failed:',
      '  ConfigMap shop/b (shop.yaml): the API server answered 500: Internal error occurred: etcdserver: request timed out',
      'not applied: 1 object of wave 1, built-in kinds',
      '--prune did not run: nothing was deleted',
    ].join('\n'));
    expect(proxy.requestsOf('PATCH', CM('b'))).toHaveLength(1);
    expect(api.get(CM('old'))).toBeDefined();
    await convergesAfter(dir);
  });

  test('a 503 that lasts past --retry-timeout fails with how often it was tried', async () => {
    const dir = await shopWithOrphan();
    proxy.fail('PATCH', CM('a'), 503, { times: 1000 });
    const { report } = await apply(dir, { prune: true, retryTimeout: Duration.seconds(1) });
    expect(report.error).toMatch(/ConfigMap shop\/a \(shop\.yaml\): the API server answered 503: The server is currently unable to handle the request \(\d tries over \d\.\ds\)\n/);
    expect(report.error).toContain('--prune did not run: nothing was deleted');
    expect(api.requestsOf('DELETE')).toEqual([]);
    await newProxy();
    await convergesAfter(dir);
  });

  test('a 409 conflict with another field manager fails the object and prunes nothing; --force-conflicts converges', async () => {
    const dir = await shopWithOrphan();
    // Another tool applies data.a of ConfigMap b.
    const answer = await fetch(`${api.url}${CM('b')}?fieldManager=helm&force=true`, {
      method: 'PATCH', body: JSON.stringify(configMap('b', { a: 'helm' })),
      headers: { 'authorization': `Bearer ${api.token}`, 'content-type': 'application/apply-patch+yaml' },
    });
    expect(answer.status).toBe(200);
    write(dir, [...SHOP.slice(0, 2), configMap('b', { a: '2' }), SHOP[3]]);
    api.clearRequests();
    const { report } = await apply(dir, { prune: true });
    expect(report.error).toMatch(/^1 of 2 objects of wave 0, built-in kinds failed:\n {2}ConfigMap shop\/b \(shop\.yaml\): Apply failed with 1 conflict: conflict with "helm": \.data\.a\. Another field manager owns these fields: take them over with --force-conflicts, or leave them out of the manifest\nnot applied: 1 object of wave 1, built-in kinds\n--prune did not run: nothing was deleted$/);
    expect(api.requestsOf('DELETE')).toEqual([]);
    expect(api.get(CM('old'))).toBeDefined();
    const again = await apply(dir, { prune: true });
    expect(again.report.error).toEqual(report.error);

    const forced = await apply(dir, { prune: true, forceConflicts: true });
    expect(forced.report).toMatchObject({ ok: true, pruned: [expect.objectContaining({ name: 'old', outcome: 'pruned' })] });
    expect(api.get(CM('b'))!.data).toEqual({ a: '2' });
  });

  test('a request that hangs is abandoned after --request-timeout and tried again; one that always hangs fails the object', async () => {
    const dir = await shopWithOrphan();
    proxy.hang('PATCH', CM('a'));
    const once = await apply(dir, { requestTimeout: Duration.millis(300) });
    expect(once.report).toMatchObject({ ok: true });
    expect(once.out).toContain('  retrying    PATCH /api/v1/namespaces/shop/configmaps/a: no answer within 300ms; try 2 in 250ms\n');

    proxy.hang('PATCH', CM('b'), { times: 1000 });
    const { report } = await apply(dir, { prune: true, requestTimeout: Duration.millis(300), retryTimeout: Duration.seconds(1) });
    expect(report.error).toMatch(/ConfigMap shop\/b \(shop\.yaml\): The API server at http:\/\/127\.0\.0\.1:\d+ gave no answer within 300ms while applying it \(\d tries over \d\.\ds\)\n/);
    expect(report.error).toContain('--prune did not run: nothing was deleted');
    expect(api.requestsOf('DELETE')).toEqual([]);
    await newProxy();
    await convergesAfter(dir);
  });

  test('Ctrl-C stops the run where it is: what was applied and what was not, nothing pruned; the rerun converges', async () => {
    const dir = await shopWithOrphan();
    write(dir, [...SHOP.slice(0, 2), configMap('b', { a: '2' }), SHOP[3]]);
    const interrupt = new AbortController();
    // Ctrl-C while the apply of b waits for an answer that does not come.
    proxy.hang('PATCH', CM('b'));
    proxy.onRequest(request => {
      if (request.method === 'PATCH' && request.path === CM('b')) setTimeout(() => interrupt.abort(), 50);
    });
    const { report } = await apply(dir, { prune: true }, interrupt.signal);
    expect(report).toMatchObject({ ok: false, interrupted: true });
    expect(report.error).toBe([
      'Interrupted: 2 of 4 objects applied',
      'not applied: 2 objects of wave 0, built-in kinds; wave 1, built-in kinds',
      '--prune did not run: nothing was deleted',
      'Apply again to go on from here: what is applied stays applied',
    ].join('\n'));
    expect(api.requestsOf('DELETE')).toEqual([]);
    expect(api.get(CM('b'))!.data).toEqual({ a: '1' });
    await convergesAfter(dir);
    expect(api.get(CM('b'))!.data).toEqual({ a: '2' });
  });

  test('Ctrl-C through the command: exit code 130 and the message', async () => {
    const dir = folder(SHOP);
    proxy.hang('PATCH', CM('a'));
    proxy.onRequest(request => {
      if (request.method === 'PATCH' && request.path === CM('a')) setTimeout(() => process.emit('SIGINT'), 50);
    });
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const listeners = process.listenerCount('SIGINT');
    let error: any;
    try {
      await program().parseAsync(['node', 'kyma-serverless', '--kubeconfig', kubeconfig, 'apply', dir, '--poll-interval', '10ms', '--timeout', '60s']);
    } catch (e) {
      error = e;
    } finally {
      out.mockRestore();
    }
    expect(error).toMatchObject({ name: 'CliError', exitCode: 130, message: expect.stringMatching(/^Interrupted: 1 of 4 objects applied\n/) });
    expect(process.listenerCount('SIGINT')).toBe(listeners);
    expect((await apply(dir)).report).toMatchObject({ ok: true, counts: { created: 3, unchanged: 1 } });
  });

  test('--prune never deletes what is not a member of the set, even when the answer to the list holds it', async () => {
    const dir = await shopWithOrphan();
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'shop', labels: { app: 'other' } }, data: {} });
    // A list that ignores the label selector (a proxy or aggregated API in the way): every ConfigMap of shop.
    proxy.rewrite('GET', '/api/v1/namespaces/shop/configmaps', body => ({ ...body, items: api.get('/api/v1/namespaces/shop/configmaps')!.items }));
    const { report } = await apply(dir, { prune: true });
    expect(report.pruned).toEqual([expect.objectContaining({ name: 'old', outcome: 'pruned' })]);
    expect(api.get(CM('theirs'))).toBeDefined();
    expect(api.requestsOf('DELETE').map(r => r.path)).toEqual([CM('old')]);
    // The uid of the member listed goes with the delete: an object made since under that name is not it.
    expect(api.requestsOf('DELETE')[0].body).toMatchObject({ kind: 'DeleteOptions', preconditions: { uid: expect.any(String) } });
  });
});

describe('diff while the API server fails', () => {
  async function diff(dir: string, options: Omit<DiffOptions, 'kubeconfig'> = {}) {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      return await runDiff(dir, { kubeconfig, retryTimeout: Duration.seconds(3), ...options });
    } finally {
      stderr.mockRestore();
    }
  }

  test('tries 429, 503 and hung requests again and gives the same answer; stores nothing either way', async () => {
    const dir = folder(SHOP);
    expect((await apply(dir)).report.ok).toBe(true);
    write(dir, [...SHOP.slice(0, 2), configMap('b', { a: '2' }), SHOP[3]]);
    const clean = await diff(dir);
    expect(clean.exitCode).toBe(1);
    api.clearRequests();
    proxy.fail('PATCH', CM('a'), 429, { retryAfter: 1 });
    proxy.fail('GET', CM('b'), 503);
    proxy.hang('PATCH', CM('b'));
    const faulted = await diff(dir, { requestTimeout: Duration.millis(300) });
    expect(faulted.exitCode).toBe(1);
    expect(faulted.objects).toEqual(clean.objects);
    expect(writes()).toEqual([]);
  });

  test('fails with exit code 2 when the API server stays away, saying how often it tried; a rerun once it is back works', async () => {
    const dir = folder(SHOP);
    expect((await apply(dir)).report.ok).toBe(true);
    await proxy.stop();
    const report = await diff(dir, { retryTimeout: Duration.millis(600) });
    expect(report.exitCode).toBe(2);
    expect(report.error).toMatch(/^Cannot reach the API server at http:\/\/127\.0\.0\.1:\d+ while reading the API server's discovery of v1: .*ECONNREFUSED.* \(\d tries over \d\.\ds\)$/);
    await proxy.start();
    expect((await diff(dir)).exitCode).toBe(0);
  });
});

describe('status --watch while the API server fails', () => {
  beforeEach(async () => {
    controllers.stop();
    await proxy.close();
    await api.close();
    await startCluster([...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES, BUILT_IN_RESOURCES.find(r => r.kind === 'Namespace')!]);
    controllers.stop();
  });

  test('the API server stops while watching and starts again: the watch resumes and ends when the Function is ready', async () => {
    seed(api, '08-hpa-created');
    const stdout = capture();
    const stderr = capture();
    const io: StatusIo = { stdout, stderr, now: () => Date.parse('2026-03-20T09:05:00Z') };
    const done = runStatus({ kubeconfig, namespace: 'default', watch: true, retryTimeout: Duration.seconds(20) }, io).then(() => undefined, e => e);
    await api.waitForWatches(6);
    await proxy.stop();
    // While it is away, the controller makes the Function ready.
    const fn = api.get(objectPath(FUNCTIONS, 'scaling', 'default'))!;
    const conditions = [condition('Running', 'True', 'DeploymentReady', 'Deployment scaling-c2v5n is ready'), ...documents('08-hpa-created')[0].status.conditions.slice(1)];
    api.put({ ...fn, status: { ...fn.status, conditions } });
    await new Promise(resolve => setTimeout(resolve, 500));
    await proxy.start();
    expect(await done).toBeUndefined();
    expect(stderr.text()).toMatch(/kyma-serverless: the API server fails \(.*ECONNREFUSED.*\) while listing .*: trying again for up to 20s\n/);
    expect(stderr.text()).toMatch(/kyma-serverless: the API server answers again: listed .*; watching on\n/);
    expect(stdout.text()).toContain('scaling');
  });

  test('it stays away past --retry-timeout: the watch fails with exit code 1 and says so', async () => {
    seed(api, '08-hpa-created');
    const io: StatusIo = { stdout: capture(), stderr: capture(), now: () => Date.parse('2026-03-20T09:05:00Z') };
    const done = runStatus({ kubeconfig, namespace: 'default', watch: true, retryTimeout: Duration.millis(600) }, io).then(() => undefined, e => e);
    await api.waitForWatches(6);
    await proxy.stop();
    expect(await done).toMatchObject({ exitCode: 1, message: expect.stringMatching(/^Cannot reach the API server at .* while listing .*ECONNREFUSED.*\(\d tries over 0\.\ds\)$/) });
  });
});
