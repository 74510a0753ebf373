/**
 * `kyma-serverless status` against the fake API server over HTTP with the real client-node, once and
 * watching, and as a command; and the fake's selectors and watches it relies on.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { Duration } from 'cdk8s';
import { Command } from 'commander';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { FUNCTION_LABEL } from '../../../src/api/labels';
import { program } from '../../../src/cli';
import { CliError } from '../../../src/cli/errors';
import { OutputFormat } from '../../../src/cli/_output';
import { FunctionStatusReport, StatusIo, StatusOptions, addStatusCommand, parseDuration, runStatus } from '../../../src/cli/status';
import {
  API_RULES, DEFAULT_RESOURCES, DEPLOYMENTS, FUNCTIONS, FUNCTION_RESOURCES, FakeKubeApi, HTTP_ROUTES, JOBS, KubeObject, REACH_RESOURCES, SCALED_OBJECTS,
  SUBSCRIPTIONS, kubeConfigFor, matchesLabelSelector, objectPath, parseLabelSelector, writeKubeconfig,
} from '../../util/fake-kube-api';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../../util/fake-cluster';
import { BUILDLESS_FIXTURES, FIXTURES, NOW, REACH_FIXTURES, condition, documents, reachDocuments, seed, seedNeeding, seedReach } from './_fixtures';

/** The day runtime support is judged at: 2026-11-28, past the end of nodejs20 and before that of nodejs22. */
const TODAY = new Date('2026-11-28T12:00:00Z');

/** A stream that keeps what is written; a terminal when asked. */
function capture(tty = false) {
  let text = '';
  return {
    isTTY: tty,
    columns: tty ? 160 : undefined,
    write: (chunk: string) => { text += chunk; return true; },
    text: () => text,
    lines: () => text.split('\n').filter(Boolean),
  };
}

/** Waits until a condition holds (a line printed, a watch open). */
async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  for (const start = Date.now(); !check(); await new Promise(resolve => setTimeout(resolve, 10))) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
  }
}

/** A stored object changed as the controller (or Kubernetes) would change it. */
function change(api: FakeKubeApi, type: typeof FUNCTIONS, namespace: string, name: string, edit: (o: KubeObject) => void): void {
  const object = api.get(objectPath(type, name, namespace))!;
  edit(object);
  api.put(object);
}

describe('parseDuration', () => {
  test('parses durations with units, and refuses others', () => {
    expect(parseDuration('10m').toMilliseconds()).toBe(600_000);
    expect(parseDuration('1h30m').toMilliseconds()).toBe(5_400_000);
    expect(parseDuration('250ms').toMilliseconds()).toBe(250);
    for (const bad of ['10', 'ten minutes', '5d', '']) expect(() => parseDuration(bad)).toThrow(/is not a duration: give a number and a unit, such as 90s, 10m or 1h30m/);
  });
});

describe('the fake API server\'s selectors, watches and Function kinds', () => {
  let api: FakeKubeApi;
  const cm = (name: string, namespace: string, labels: { [k: string]: string }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels } });
  const get = (urlPath: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> => new Promise((resolve, reject) => {
    http.get(`${api.url}${urlPath}`, { headers: { authorization: `Bearer ${api.token}` } }, res => {
      let body = '';
      res.on('data', chunk => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    }).on('error', reject);
  });

  beforeEach(async () => {
    api = await FakeKubeApi.start({ resources: [...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES] });
    api.put(cm('a', 'one', { app: 'x', tier: 'web' }));
    api.put(cm('b', 'one', { app: 'y' }));
    api.put(cm('c', 'two', { app: 'x' }));
  });
  afterEach(() => api.close());

  test('parses equality label selectors and matches labels with them', () => {
    expect(parseLabelSelector('a=b, c==d,e!=f,g,!h')).toEqual([
      { key: 'a', operator: '=', value: 'b' }, { key: 'c', operator: '=', value: 'd' }, { key: 'e', operator: '!=', value: 'f' },
      { key: 'g', operator: 'exists' }, { key: 'h', operator: '!exists' },
    ]);
    expect(matchesLabelSelector({ g: '', e: 'x', a: 'b', c: 'd' }, 'a=b,c==d,e!=f,g,!h')).toBe(true);
    expect(matchesLabelSelector({ a: 'b', h: '1' }, 'a=b,!h')).toBe(false);
  });

  test('filters lists by label selector and field selector, in a namespace and across namespaces', async () => {
    const names = async (query: string) => JSON.parse((await get(`/api/v1/${query}`)).body).items.map((i: KubeObject) => i.metadata!.name);
    expect(await names('configmaps?labelSelector=app%3Dx')).toEqual(['a', 'c']);
    expect(await names('namespaces/one/configmaps?labelSelector=app%21%3Dx')).toEqual(['b']);
    expect(await names('configmaps?labelSelector=tier')).toEqual(['a']);
    expect(await names('configmaps?labelSelector=!tier,app')).toEqual(['b', 'c']);
    expect(await names('configmaps?fieldSelector=metadata.name%3Dc')).toEqual(['c']);
    const bad = await get('/api/v1/configmaps?labelSelector=a%3D%3D%3Db');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ reason: 'BadRequest', message: expect.stringContaining('unable to parse requirement') });
  });

  test('streams a watch: existing objects first without a resourceVersion, then changes, by namespace and selector, until closed', async () => {
    const events: string[] = [];
    const ended: unknown[] = [];
    const watch = new Watch(kubeConfigFor(api));
    const abort = await watch.watch('/api/v1/namespaces/one/configmaps', { labelSelector: 'app=x' }, (type, object) => events.push(`${type} ${object.metadata.name}`), e => ended.push(e));
    await api.waitForWatches(1);
    api.put(cm('d', 'one', { app: 'x' }));
    api.put(cm('e', 'two', { app: 'x' }));
    api.put(cm('f', 'one', { app: 'y' }));
    api.remove('/api/v1/namespaces/one/configmaps/a');
    await until(() => events.length === 3, 'three events');
    expect(events).toEqual(['ADDED a', 'ADDED d', 'DELETED a']);
    api.closeWatches();
    await until(() => ended.length === 1, 'the watch to end');
    expect(ended).toEqual([null]);
    expect(api.openWatches).toBe(0);
    abort.abort();
  });

  test('answers a watch in chunks, and sends what changed after its resourceVersion, deletes included', async () => {
    const list = JSON.parse((await get('/api/v1/namespaces/one/configmaps')).body);
    api.put(cm('d', 'one', {}));
    api.remove('/api/v1/namespaces/one/configmaps/b');
    const watchRequest = new Promise<{ headers: http.IncomingHttpHeaders; body: string }>(resolve => {
      http.get(`${api.url}/api/v1/namespaces/one/configmaps?watch=1&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=0.2`,
        { headers: { authorization: `Bearer ${api.token}` } }, res => {
          let body = '';
          res.on('data', chunk => { body += chunk; });
          res.on('end', () => resolve({ headers: res.headers, body }));
        });
    });
    const { headers, body } = await watchRequest;
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(body.trim().split('\n').map(line => JSON.parse(line)).map(e => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED d', 'DELETED b']);
  });

  test('answers a watch from a forgotten resourceVersion with a 410 Expired ERROR event', async () => {
    const list = JSON.parse((await get('/api/v1/configmaps')).body);
    api.put(cm('d', 'one', {}));
    api.expireWatchHistory();
    const { body } = await get(`/api/v1/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    expect(JSON.parse(body)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  test('serves Functions with a status subresource and a generation', async () => {
    const custom = kubeConfigFor(api).makeApiClient(CustomObjectsApi);
    const group = { group: 'serverless.kyma-project.io', version: 'v1alpha2', namespace: 'one', plural: 'functions' };
    const body = { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'f' }, spec: { runtime: 'nodejs22' }, status: { x: 1 } };
    const created = await custom.createNamespacedCustomObject({ ...group, body });
    expect(created).toMatchObject({ metadata: { generation: 1 } });
    expect(created.status).toBeUndefined();
    const withStatus = await custom.replaceNamespacedCustomObjectStatus({ ...group, name: 'f', body: { ...created, spec: { runtime: 'python312' }, status: { conditions: [] } } });
    expect(withStatus).toMatchObject({ metadata: { generation: 1 }, spec: { runtime: 'nodejs22' }, status: { conditions: [] } });
    const updated = await custom.replaceNamespacedCustomObject({ ...group, name: 'f', body: { ...withStatus, spec: { runtime: 'python312' }, status: {} } });
    expect(updated).toMatchObject({ metadata: { generation: 2 }, spec: { runtime: 'python312' }, status: { conditions: [] } });
    expect(api.get(objectPath(JOBS, undefined, 'one'))).toMatchObject({ kind: 'JobList', items: [] });
  });
});

describe('kyma-serverless status', () => {
  let api: FakeKubeApi;
  let dir: string;
  let kubeconfig: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'status-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    api = await FakeKubeApi.start({ resources: [...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES] });
    kubeconfig = writeKubeconfig(api, path.join(dir, 'config'), { namespace: 'default' });
  });
  afterEach(() => api.close());

  /** Runs the status with captured streams; ages count to three days after now. */
  async function status(options: Partial<StatusOptions> = {}, tty = false) {
    const stdout = capture(tty);
    const stderr = capture();
    const later = Date.now() + (3 * 24 * 60 + 30) * 60_000;
    const io: StatusIo = { stdout, stderr, now: () => later, date: () => TODAY, interrupt: (options as { interrupt?: AbortSignal }).interrupt };
    const error = await runStatus({ kubeconfig, output: OutputFormat.TABLE, ...options }, io).then(() => undefined, e => e);
    return { stdout: stdout.text(), stderr: stderr.text(), error };
  }

  /** Starts a watch with captured streams and a fixed clock; resolves to its error, if any. */
  function watch(options: Partial<StatusOptions> = {}, tty = false, interrupt?: AbortSignal) {
    const stdout = capture(tty);
    const stderr = capture();
    const io: StatusIo = { stdout, stderr, now: () => NOW, interrupt };
    const done = runStatus({ kubeconfig, output: OutputFormat.TABLE, watch: true, ...options }, io).then(() => undefined, e => e as CliError);
    return { stdout, stderr, done };
  }

  test('shows a Function at each stage as a table', async () => {
    for (const name of FIXTURES.slice(0, 9)) seed(api, name);
    const { stdout, error } = await status();
    expect(stdout).toBe(`${[
      'NAME       RUNTIME    STAGE       STATE        AGE  REASON',
      'broken     nodejs22   build       failed       3d   JobFailed: Job broken-build-l6v5t failed, it will be re-run',
      'building   nodejs22   build       progressing  3d   JobRunning: Job building-build-8fz4m is still in progress',
      'built      nodejs20   deployment  progressing  3d   JobFinished: Job built-build-p2k9s finished',
      'deploying  nodejs22   service     progressing  3d   DeploymentCreated: Deployment deploying-9qkzv created',
      'exposing   python312  hpa         progressing  3d   ServiceCreated: Service exposing created',
      'hello      nodejs22   ready       ready        3d   DeploymentReady: Deployment hello-x7b2c is ready',
      'scaling    nodejs22   ready       progressing  3d   HorizontalPodAutoscalerCreated: HorizontalPodAutoscaler scaling-j8t3k created',
      'sourced    nodejs22   build       progressing  3d   ConfigMapCreated: ConfigMap sourced-7xk2p created',
      'waiting    nodejs22   source      progressing  3d   waiting for the controller',
      '',
      // nodejs20 is past its end on TODAY, and 1.11.1 has no newer Node.js with support left; nodejs22's ends in 2 days, and 1.11.1 has none newer.
      '1 Function on a runtime past or near its end of support:',
      '  default/built: nodejs20 reached the end of its support in April 2026 (upstream\'s runtime deprecation schedule, '
        + 'https://github.com/kyma-project/serverless/blob/1.13.0/docs/user/00-90-runtime-deprecation-schedule.md); release 1.11.1 still runs it; move to release 1.13.0 and nodejs24',
    ].join('\n')}\n`);
    expect(error).toMatchObject({ name: 'CliError', exitCode: 1, message: '1 of 9 Functions failed: default/broken' });
    // Each kind listed once, by the controller's labels.
    expect(api.requestsOf('GET', '/apis/batch/v1/namespaces/default/jobs').map(r => r.query.labelSelector))
      .toEqual(['serverless.kyma-project.io/managed-by=function-controller,serverless.kyma-project.io/function-name']);
  });

  test('names a Function whose controller keeps updating its Deployment, with the fix, and fails', async () => {
    seed(api, '12-deployment-update-loop');
    const { stdout, error } = await status({ namespace: 'default-functions' });
    const [header, row] = stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+RUNTIME\s+STAGE\s+STATE\s+AGE\s+REASON$/);
    expect(row).toMatch(/^looping\s+nodejs22\s+deployment\s+failed\s+\S+\s+DeploymentUpdateLoop: the controller updates Deployment looping-\w+ on every reconcile/);
    expect(row).toContain('Fix: give spec.env[1].valueFrom.fieldRef.apiVersion: v1 and apply the Function again');
    expect(error).toMatchObject({ name: 'CliError', exitCode: 1 });
    expect(error.message).toBe('1 of 1 Function failed: default-functions/looping');
    const json: FunctionStatusReport[] = JSON.parse((await status({ namespace: 'default-functions', output: OutputFormat.JSON })).stdout);
    expect(json[0]).toMatchObject({ name: 'looping', stage: 'deployment', state: 'failed', reason: 'DeploymentUpdateLoop' });
  });

  test('shows the same data as YAML with -o yaml', async () => {
    for (const name of FIXTURES.slice(0, 9)) seed(api, name);
    const json = JSON.parse((await status({ output: OutputFormat.JSON })).stdout);
    const { stdout } = await status({ output: OutputFormat.YAML });
    expect(stdout).toMatch(/^- namespace: default\n  name: broken\n/);
    expect(parseYaml(stdout)).toEqual(json);
  });

  test('shows a Function at each stage as JSON', async () => {
    for (const name of FIXTURES.slice(0, 9)) seed(api, name);
    const { stdout } = await status({ output: OutputFormat.JSON });
    const reports: FunctionStatusReport[] = JSON.parse(stdout);
    expect(reports.map(r => [r.name, r.stage, r.state, r.reason])).toEqual([
      ['broken', 'build', 'failed', 'JobFailed'],
      ['building', 'build', 'progressing', 'JobRunning'],
      ['built', 'deployment', 'progressing', 'JobFinished'],
      ['deploying', 'service', 'progressing', 'DeploymentCreated'],
      ['exposing', 'hpa', 'progressing', 'ServiceCreated'],
      ['hello', 'ready', 'ready', 'DeploymentReady'],
      ['scaling', 'ready', 'progressing', 'HorizontalPodAutoscalerCreated'],
      ['sourced', 'build', 'progressing', 'ConfigMapCreated'],
      ['waiting', 'source', 'progressing', undefined],
    ]);
    expect(reports.find(r => r.name === 'scaling')).toMatchObject({
      steps: [
        { stage: 'source', state: 'done' }, { stage: 'build', state: 'done' }, { stage: 'deployment', state: 'done' },
        { stage: 'service', state: 'done' }, { stage: 'hpa', state: 'done' }, { stage: 'ready', state: 'in-progress' },
      ],
      objects: { configMap: 'scaling-f6g9h', job: 'scaling-build-x4r8p', deployment: 'scaling-c2v5n', service: 'scaling', horizontalPodAutoscaler: 'scaling-j8t3k' },
      replicas: { desired: 1, ready: 0 },
    });
    expect(reports.find(r => r.name === 'waiting')).toMatchObject({ message: 'waiting for the controller', conditions: [], objects: {} });
  });

  test('done when: a building, a ready and a failed Function, as a table and as JSON, exit code 1 for the failed one', async () => {
    for (const name of ['03-build-job-running', '09-ready', '04-build-failed'] as const) seed(api, name);
    const asTable = await status();
    expect(asTable.stdout).toBe(`${[
      'NAME      RUNTIME   STAGE  STATE        AGE  REASON',
      'broken    nodejs22  build  failed       3d   JobFailed: Job broken-build-l6v5t failed, it will be re-run',
      'building  nodejs22  build  progressing  3d   JobRunning: Job building-build-8fz4m is still in progress',
      'hello     nodejs22  ready  ready        3d   DeploymentReady: Deployment hello-x7b2c is ready',
    ].join('\n')}\n`);
    expect(asTable.error).toBeInstanceOf(CliError);
    expect(asTable.error).toMatchObject({ exitCode: 1, message: '1 of 3 Functions failed: default/broken' });

    const asJson = await status({ output: OutputFormat.JSON });
    expect(JSON.parse(asJson.stdout).map((r: FunctionStatusReport) => ({ name: r.name, stage: r.stage, state: r.state, reason: r.reason, message: r.message }))).toEqual([
      { name: 'broken', stage: 'build', state: 'failed', reason: 'JobFailed', message: 'Job broken-build-l6v5t failed, it will be re-run' },
      { name: 'building', stage: 'build', state: 'progressing', reason: 'JobRunning', message: 'Job building-build-8fz4m is still in progress' },
      { name: 'hello', stage: 'ready', state: 'ready', reason: 'DeploymentReady', message: 'Deployment hello-x7b2c is ready' },
    ]);
    expect(asJson.error).toMatchObject({ exitCode: 1 });
  });

  test('exits 0 while Functions are only building', async () => {
    seed(api, '03-build-job-running');
    seed(api, '09-ready');
    expect((await status()).error).toBeUndefined();
  });

  test('shows every namespace with -A, and one Function by name', async () => {
    seed(api, '09-ready');
    seed(api, '10-git-ready');
    const all = await status({ allNamespaces: true });
    expect(all.stdout).toBe(`${[
      'NAMESPACE  NAME        RUNTIME    STAGE  STATE  AGE  REASON',
      'default    hello       nodejs22   ready  ready  3d   DeploymentReady: Deployment hello-x7b2c is ready',
      'shop       orders-api  python312  ready  ready  3d   DeploymentReady: Deployment orders-api-v6p9s is ready',
    ].join('\n')}\n`);
    const one = await status({ name: 'orders-api', namespace: 'shop' });
    expect(one.stdout).toMatch(/^NAME {8}RUNTIME {4}STAGE.*\norders-api {2}python312 {2}ready/);
    expect(api.requestsOf('GET', '/apis/serverless.kyma-project.io/v1alpha2/namespaces/shop/functions').map(r => r.query.fieldSelector)).toEqual(['metadata.name=orders-api']);
    expect(api.requestsOf('GET', '/api/v1/namespaces/shop/services').map(r => r.query.labelSelector))
      .toEqual(['serverless.kyma-project.io/managed-by=function-controller,serverless.kyma-project.io/function-name=orders-api']);
  });

  test('fails when the named Function does not exist', async () => {
    seed(api, '09-ready');
    const { error } = await status({ name: 'nope' });
    expect(error).toBeInstanceOf(CliError);
    expect(error.message).toBe('Function nope not found in namespace default');
  });

  test('says so when there are no Functions, and exits 0', async () => {
    expect(await status()).toEqual({ stdout: '', stderr: 'No Functions found in namespace default.\n', error: undefined });
    expect(await status({ output: OutputFormat.JSON, allNamespaces: true })).toEqual({ stdout: '[]\n', stderr: 'No Functions found in any namespace.\n', error: undefined });
  });

  test('fails with a clear message when the API server cannot be reached', async () => {
    const url = api.url;
    await api.close();
    const { error, stderr } = await status({ retryTimeout: Duration.millis(400) });
    expect(stderr).toMatch(/^kyma-serverless: the API server fails \(request to .* failed, reason: connect ECONNREFUSED .*\) while listing Functions: trying again for up to 400ms\n/);
    expect(error).toBeInstanceOf(CliError);
    expect(error.message).toMatch(new RegExp(`^Cannot reach the API server at ${url} while listing Functions: ECONNREFUSED`));
  });

  test('names the API error when Functions cannot be listed', async () => {
    api.failNext('GET', /\/functions$/, 403);
    const { error } = await status();
    expect(error.message).toBe('Not allowed while listing Functions: functions.serverless.kyma-project.io is forbidden: '
      + 'User "system:serviceaccount:kyma-system:serverless-webhook" cannot list resource "functions" in API group "serverless.kyma-project.io" in the namespace "default"');
  });

  test('goes on from the conditions alone when a kind of the controller\'s objects may not be listed', async () => {
    seed(api, '05-build-job-finished');
    api.failNext('GET', /\/jobs$/, 403);
    const { stdout, stderr, error } = await status();
    expect(stderr).toBe('kyma-serverless: cannot list build Jobs in namespace default (forbidden): their progress comes from the Functions\' conditions alone\n');
    expect(stdout).toContain('built  nodejs20  deployment  progressing');
    expect(error).toBeUndefined();
  });

  test('refuses a name with -A, and --timeout without --watch', async () => {
    expect((await status({ name: 'x', allNamespaces: true })).error.message).toBe('A Function name cannot be given with --all-namespaces: give its namespace with -n instead');
    expect((await status({ timeout: parseDuration('1m') })).error.message).toBe('--timeout applies only with --watch');
  });

  describe('--watch', () => {
    const job = (name: string) => api.get(objectPath(JOBS, undefined, 'default'))!.items.find((j: KubeObject) => j.metadata!.labels!['serverless.kyma-project.io/function-name'] === name);
    const completeJob = (name: string) => {
      const finished = documents('05-build-job-finished').find(o => o.kind === 'Job')!;
      change(api, JOBS, 'default', job(name).metadata.name, o => { o.status = finished.status; });
    };
    const setConditions = (name: string, conditions: object[]) => change(api, FUNCTIONS, 'default', name, o => { o.status = { ...o.status, conditions }; });

    test('follows a building Function through the watch API until it is ready (exit 0), a line per change', async () => {
      const fn = seed(api, '03-build-job-running');
      const { stdout, done } = watch({ name: 'building' });
      await api.waitForWatches(6);
      await until(() => stdout.lines().length === 1, 'the first line');

      completeJob('building');
      await until(() => stdout.lines().length === 2, 'the Job\'s success');
      const configured = fn.status.conditions[1];
      const built = condition('BuildReady', 'True', 'JobFinished', 'Job building-build-8fz4m finished', '2026-03-20T09:01:15Z');
      setConditions('building', [built, configured]);
      await until(() => stdout.lines().length === 3, 'BuildReady True');

      const deployment = documents('09-ready').find(o => o.kind === 'Deployment')!;
      const labels = job('building').metadata.labels;
      api.put({ ...deployment, metadata: { name: 'building-6tq2x', namespace: 'default', labels }, status: documents('06-deployment-created').find(o => o.kind === 'Deployment')!.status });
      setConditions('building', [condition('Running', 'Unknown', 'DeploymentCreated', 'Deployment building-6tq2x created', '2026-03-20T09:01:16Z'), built, configured]);
      await until(() => stdout.lines().length === 5, 'the Deployment');

      api.put({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'building', namespace: 'default', labels }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
      await until(() => stdout.lines().length === 6, 'the Service');
      change(api, DEPLOYMENTS, 'default', 'building-6tq2x', o => { o.status = deployment.status; });
      setConditions('building', [condition('Running', 'True', 'DeploymentReady', 'Deployment building-6tq2x is ready', '2026-03-20T09:01:40Z'), built, configured]);

      expect(await done).toBeUndefined();
      expect(stdout.lines()).toEqual([
        '2026-03-20T09:05:00Z default/building build progressing JobRunning: Job building-build-8fz4m is still in progress',
        '2026-03-20T09:05:00Z default/building deployment progressing JobRunning: Job building-build-8fz4m is still in progress',
        '2026-03-20T09:05:00Z default/building deployment progressing JobFinished: Job building-build-8fz4m finished',
        // The Deployment and its condition arrive over two watches, in either order.
        expect.stringMatching(/^2026-03-20T09:05:00Z default\/building (deployment|service) progressing (JobFinished: Job building-build-8fz4m finished|DeploymentCreated: Deployment building-6tq2x created)$/),
        '2026-03-20T09:05:00Z default/building service progressing DeploymentCreated: Deployment building-6tq2x created',
        '2026-03-20T09:05:00Z default/building ready progressing DeploymentCreated: Deployment building-6tq2x created',
        '2026-03-20T09:05:00Z default/building ready ready DeploymentReady: Deployment building-6tq2x is ready',
      ]);
      await until(() => api.openWatches === 0, 'the watches to be closed');
    });

    test('ends with exit code 1 when the build fails, naming the Function and the reason', async () => {
      seed(api, '03-build-job-running');
      seed(api, '09-ready');
      const { stdout, done } = watch();
      await api.waitForWatches(6);
      setConditions('building', [condition('BuildReady', 'False', 'JobFailed', 'Job building-build-8fz4m failed, it will be re-run'), condition('ConfigurationReady', 'True', 'ConfigMapCreated', 'x')]);
      const error = await done;
      expect(error).toMatchObject({ name: 'CliError', exitCode: 1, message: 'Function default/building failed: JobFailed: Job building-build-8fz4m failed, it will be re-run' });
      expect(stdout.lines()).toEqual([
        '2026-03-20T09:05:00Z default/building build progressing JobRunning: Job building-build-8fz4m is still in progress',
        '2026-03-20T09:05:00Z default/hello ready ready DeploymentReady: Deployment hello-x7b2c is ready',
        '2026-03-20T09:05:00Z default/building build failed JobFailed: Job building-build-8fz4m failed, it will be re-run',
      ]);
    });

    test('ends at once when every Function is ready, or one failed, already', async () => {
      seed(api, '09-ready');
      expect(await watch().done).toBeUndefined();
      seed(api, '04-build-failed');
      expect(await watch().done).toMatchObject({ exitCode: 1 });
      await until(() => api.openWatches === 0, 'the watches to be closed');
    });

    test('prints a JSON object per change with -o json', async () => {
      seed(api, '08-hpa-created');
      const { stdout, done } = watch({ output: OutputFormat.JSON });
      await api.waitForWatches(6);
      setConditions('scaling', [condition('Running', 'True', 'DeploymentReady', 'Deployment scaling-c2v5n is ready'), ...documents('08-hpa-created')[0].status.conditions.slice(1)]);
      expect(await done).toBeUndefined();
      const lines = stdout.lines().map(l => JSON.parse(l));
      expect(lines.map(l => [l.time, l.name, l.stage, l.state, l.reason])).toEqual([
        ['2026-03-20T09:05:00Z', 'scaling', 'ready', 'progressing', 'HorizontalPodAutoscalerCreated'],
        ['2026-03-20T09:05:00Z', 'scaling', 'ready', 'ready', 'DeploymentReady'],
      ]);
      expect(lines[1].steps.every((s: { state: string }) => s.state === 'done')).toBe(true);
    });

    test('prints a YAML document per change with -o yaml, each after ---', async () => {
      seed(api, '08-hpa-created');
      const { stdout, done } = watch({ output: OutputFormat.YAML });
      await api.waitForWatches(6);
      setConditions('scaling', [condition('Running', 'True', 'DeploymentReady', 'Deployment scaling-c2v5n is ready'), ...documents('08-hpa-created')[0].status.conditions.slice(1)]);
      expect(await done).toBeUndefined();
      const text = stdout.text();
      expect(text).toMatch(/^---\ntime: 2026-03-20T09:05:00Z\n/);
      const changes = parseAllDocuments(text).map(d => d.toJS());
      expect(changes.map(c => [c.time, c.name, c.state, c.reason])).toEqual([
        ['2026-03-20T09:05:00Z', 'scaling', 'progressing', 'HorizontalPodAutoscalerCreated'],
        ['2026-03-20T09:05:00Z', 'scaling', 'ready', 'DeploymentReady'],
      ]);
    });

    test('gives up after --timeout with exit code 1, saying which Functions are not ready', async () => {
      seed(api, '03-build-job-running');
      seed(api, '08-hpa-created');
      seed(api, '09-ready');
      const started = Date.now();
      const error = await watch({ timeout: parseDuration('300ms') }).done;
      // Not before the timeout; how long after it depends on the machine's load, not on the watch.
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(error).toMatchObject({
        exitCode: 1,
        message: 'Timed out after 300ms; not ready: default/building (build, JobRunning), default/scaling (ready, HorizontalPodAutoscalerCreated)',
      });
    });

    test('ends with exit code 130 when interrupted', async () => {
      seed(api, '03-build-job-running');
      const interrupt = new AbortController();
      const { done } = watch({}, false, interrupt.signal);
      await api.waitForWatches(6);
      interrupt.abort();
      expect(await done).toMatchObject({ exitCode: 130, message: 'Interrupted; not ready: default/building (build, JobRunning)' });
      await until(() => api.openWatches === 0, 'the watches to be closed');
    });

    test('watches again when the API server ends a watch, and lists again when its resourceVersion expired', async () => {
      seed(api, '03-build-job-running');
      const { stdout, done } = watch({ name: 'building' });
      await api.waitForWatches(6);
      api.closeWatches();
      completeJob('building');
      await until(() => stdout.lines().length === 2, 'the Job\'s success after the watch ended');
      await api.waitForWatches(6);
      api.expireWatchHistory();
      api.closeWatches();
      change(api, FUNCTIONS, 'default', 'building', o => { o.status.conditions = [condition('Running', 'True', 'DeploymentReady', 'ok'), condition('BuildReady', 'True', 'JobFinished', 'ok'), o.status.conditions[1]]; });
      expect(await done).toBeUndefined();
      expect(stdout.lines().at(-1)).toBe('2026-03-20T09:05:00Z default/building ready ready DeploymentReady: ok');
    });

    test('fails when the watched Function is deleted', async () => {
      seed(api, '03-build-job-running');
      const { done } = watch({ name: 'building' });
      await api.waitForWatches(6);
      api.remove(objectPath(FUNCTIONS, 'building', 'default'));
      expect(await done).toMatchObject({ exitCode: 1, message: 'Function building was deleted from namespace default' });
    });

    test('redraws a table in place on a terminal', async () => {
      seed(api, '03-build-job-running');
      const { stdout, done } = watch({ name: 'building' }, true);
      await api.waitForWatches(6);
      completeJob('building');
      await until(() => stdout.text().includes('build ✓'), 'a second frame');
      setConditions('building', [condition('Running', 'True', 'DeploymentReady', 'ok'), condition('BuildReady', 'True', 'JobFinished', 'ok'), documents('03-build-job-running')[0].status.conditions[1]]);
      expect(await done).toBeUndefined();
      const frames = stdout.text().split('\x1b[J').filter(Boolean);
      expect(frames.length).toBeGreaterThanOrEqual(3);
      expect(frames[0]).toBe([
        'NAME      PROGRESS                                     STATE        AGE  REASON',
        'building  source ✓ build … deploy · service · ready ·  progressing  0s   JobRunning: Job building-build-8fz4m is still in progress',
        '',
        '1 Function: 0 ready, 1 progressing, 0 failed (watching 0s)',
      ].map(l => `\r\x1b[2K${l}\n`).join(''));
      // Each later frame moves back up over the four lines of the one before.
      for (const frame of frames.slice(1)) expect(frame.startsWith('\x1b[4A\r\x1b[2K')).toBe(true);
      expect(frames.at(-1)).toContain('building  source ✓ build ✓ deploy ✓ service ✓ ready ✓  ready');
    });
  });

  describe('endpoints and Subscriptions', () => {
    /** Serves the kinds that reach Functions, but those left out (a CRD not installed). */
    const serveReach = (...without: typeof API_RULES[]) => REACH_RESOURCES.filter(t => !without.includes(t)).forEach(t => api.addResource(t));

    test('shows each Function\'s endpoints and Subscriptions as REACH and URL, and fails for a refused endpoint', async () => {
      serveReach();
      for (const name of REACH_FIXTURES) seedReach(api, name);
      seed(api, '03-build-job-running');
      const { stdout, stderr, error } = await status();
      expect(stdout).toBe(`${[
        'NAME      RUNTIME   STAGE  STATE        REACH  AGE  URL                           REASON',
        'building  nodejs22  build  progressing         3d                                 JobRunning: Job building-build-8fz4m is still in progress',
        'cart      nodejs22  ready  ready        1/1    3d   https://cart.example.com      DeploymentReady: Deployment cart-x7b2c is ready',
        'catalog   nodejs22  ready  ready        1/1    3d   https://catalog.example.com   DeploymentReady: Deployment catalog-x7b2c is ready',
        'hello     nodejs22  ready  ready        2/2    3d   https://hello.example.com     DeploymentReady: Deployment hello-x7b2c is ready',
        'invoices  nodejs22  reach  progressing  0/1    3d                                 Subscription invoices-order-created: Subscription spec has validation errors: '
          + 'Sink validation failed: service invoices.default not found in the cluster',
        'orders    nodejs22  reach  failed       0/1    3d   https://orders.example.com    APIRule orders: Error: Validation errors: Attribute \'spec.gateway\': Gateway not found',
        'payments  nodejs22  reach  progressing  0/1    3d   https://payments.example.com  APIRule payments: no status yet: the API Gateway controller has not processed it',
        'search    nodejs22  reach  failed       0/1    3d   https://search.example.com    HTTPRoute search: Gateway infra/public does not accept it: '
          + 'NotAllowedByListeners: hostnames matched parent hostname "*.example.com", but namespace "default" is not allowed by the parent',
      ].join('\n')}\n`);
      expect(stderr).toBe('');
      expect(error).toMatchObject({ exitCode: 1, message: '2 of 8 Functions failed: default/orders, default/search' });
      // Each kind listed once, by the label synth writes.
      for (const plural of ['apirules', 'httproutes', 'virtualservices', 'subscriptions']) {
        expect(api.requestsOf('GET', new RegExp(`/namespaces/default/${plural}$`)).map(r => r.query.labelSelector)).toEqual([FUNCTION_LABEL]);
      }
    });

    test('prints endpoints [{ kind, name, url, ready, state, message }] and subscriptions [{ name, types, sink, ready, state, message }] with -o json', async () => {
      serveReach();
      for (const name of ['reach-apirule-ready', 'reach-apirule-error', 'reach-subscription-not-ready'] as const) seedReach(api, name);
      const reports: FunctionStatusReport[] = JSON.parse((await status({ output: OutputFormat.JSON })).stdout);
      expect(reports.map(r => ({ name: r.name, stage: r.stage, state: r.state, endpoints: r.endpoints, subscriptions: r.subscriptions }))).toEqual([
        {
          name: 'hello', stage: 'ready', state: 'ready',
          endpoints: [{ kind: 'APIRule', name: 'hello', url: 'https://hello.example.com', ready: true, state: 'ready' }],
          subscriptions: [{ name: 'hello-order-created', types: ['order.created.v1'], sink: 'http://hello.default.svc.cluster.local', ready: true, state: 'ready' }],
        },
        {
          name: 'invoices', stage: 'reach', state: 'progressing',
          endpoints: [],
          subscriptions: [{
            name: 'invoices-order-created', types: ['order.created.v1', 'order.cancelled.v1'], sink: 'http://invoices.default.svc.cluster.local', ready: false, state: 'pending',
            message: 'Subscription spec has validation errors: Sink validation failed: service invoices.default not found in the cluster',
          }],
        },
        {
          name: 'orders', stage: 'reach', state: 'failed',
          endpoints: [{
            kind: 'APIRule', name: 'orders', url: 'https://orders.example.com', ready: false, state: 'failed',
            message: 'Error: Validation errors: Attribute \'spec.gateway\': Gateway not found',
          }],
          subscriptions: [],
        },
      ]);
      expect(reports[2]).toMatchObject({ message: 'APIRule orders: Error: Validation errors: Attribute \'spec.gateway\': Gateway not found' });
      expect(reports[2].steps.at(-1)).toEqual({ stage: 'reach', state: 'failed' });
    });

    test('leaves out quietly a kind whose CRD is not installed, such as APIRules without Kyma\'s API Gateway, when no Function needs it', async () => {
      serveReach(API_RULES);
      seed(api, '09-ready');
      api.put(reachDocuments('reach-apirule-ready').find(o => o.kind === 'Subscription')!);
      seedReach(api, 'reach-httproute-accepted');
      const { stdout, stderr, error } = await status();
      expect(stderr).toBe('');
      expect(error).toBeUndefined();
      expect(stdout).toBe(`${[
        'NAME     RUNTIME   STAGE  STATE  REACH  AGE  URL                          REASON',
        'catalog  nodejs22  ready  ready  1/1    3d   https://catalog.example.com  DeploymentReady: Deployment catalog-x7b2c is ready',
        'hello    nodejs22  ready  ready  1/1    3d                                DeploymentReady: Deployment hello-x7b2c is ready',
      ].join('\n')}\n`);
      expect(api.requestsOf('GET', '/apis/gateway.kyma-project.io/v2/namespaces/default/apirules').map(r => r.status)).toEqual([404]);
    });

    describe('a kind the cluster does not serve, for the Functions whose annotation names it', () => {
      const API_GATEWAY = 'add Kyma\'s api-gateway module (kyma alpha add module api-gateway)';
      const CANNOT = `its APIRule cannot exist: the cluster does not serve apirules.gateway.kyma-project.io; ${API_GATEWAY}`;
      /** hello, exposed through an APIRule and subscribed, with its Subscription; catalog, exposed through an HTTPRoute, with it. */
      const seedBoth = (...unserved: typeof API_RULES[]) => {
        // Only the objects of the kinds the cluster serves can be there.
        const served = (o: KubeObject) => !unserved.some(t => t.kind === o.kind);
        seedNeeding(api, 'hello', ['APIRule.gateway.kyma-project.io', 'Subscription.eventing.kyma-project.io'], reachDocuments('reach-apirule-ready').filter(served));
        seedNeeding(api, 'catalog', ['HTTPRoute.gateway.networking.k8s.io'], reachDocuments('reach-httproute-accepted').filter(served));
      };

      test('names the CRD and the module that installs it, on the Function\'s line and once after the table, and fails it at reach', async () => {
        serveReach(API_RULES);
        seedBoth(API_RULES);
        const { stdout, stderr, error } = await status();
        expect(stdout).toBe(`${[
          'NAME     RUNTIME   STAGE  STATE   REACH  AGE  URL                          REASON',
          'catalog  nodejs22  ready  ready   1/1    3d   https://catalog.example.com  DeploymentReady: Deployment catalog-x7b2c is ready',
          `hello    nodejs22  reach  failed  1/2    3d                                ${CANNOT}`,
          '',
          `The cluster does not serve apirules.gateway.kyma-project.io, so the APIRules of 1 Function cannot exist (default/hello): ${API_GATEWAY}`,
        ].join('\n')}\n`);
        expect(stderr).toBe('');
        expect(error).toMatchObject({ exitCode: 1, message: '1 of 2 Functions failed: default/hello' });
        expect(api.requestsOf('GET', '/apis/gateway.kyma-project.io/v2/namespaces/default/apirules').map(r => r.status)).toEqual([404]);
      });

      test('says it once for every Function that needs the kind, lists the kinds in -o json, and a watch ends at once with exit code 1', async () => {
        serveReach(API_RULES, SUBSCRIPTIONS);
        seedBoth(API_RULES, SUBSCRIPTIONS);
        seedNeeding(api, 'orders', ['APIRule.gateway.kyma-project.io']);
        const json = await status({ output: OutputFormat.JSON });
        const reports: FunctionStatusReport[] = JSON.parse(json.stdout);
        expect(reports.map(r => ({ name: r.name, stage: r.stage, state: r.state, message: r.message, missingKinds: r.missingKinds }))).toEqual([
          { name: 'catalog', stage: 'ready', state: 'ready', message: 'Deployment catalog-x7b2c is ready', missingKinds: undefined },
          {
            name: 'hello', stage: 'reach', state: 'failed', message: CANNOT,
            missingKinds: [
              { kind: 'APIRule', crd: 'apirules.gateway.kyma-project.io', provider: 'Kyma\'s api-gateway module', fix: API_GATEWAY },
              {
                kind: 'Subscription', crd: 'subscriptions.eventing.kyma-project.io', provider: 'Kyma\'s eventing module',
                fix: 'add Kyma\'s eventing module and a backend for it (kyma alpha add module eventing; kyma alpha add module nats)',
              },
            ],
          },
          {
            name: 'orders', stage: 'reach', state: 'failed', message: CANNOT,
            missingKinds: [{ kind: 'APIRule', crd: 'apirules.gateway.kyma-project.io', provider: 'Kyma\'s api-gateway module', fix: API_GATEWAY }],
          },
        ]);
        // Beside a document, the lines go to standard error: one per kind, each Function named once.
        expect(json.stderr).toBe([
          `The cluster does not serve apirules.gateway.kyma-project.io, so the APIRules of 2 Functions cannot exist (default/hello, default/orders): ${API_GATEWAY}`,
          'The cluster does not serve subscriptions.eventing.kyma-project.io, so the Subscriptions of 1 Function cannot exist (default/hello): '
            + 'add Kyma\'s eventing module and a backend for it (kyma alpha add module eventing; kyma alpha add module nats)',
        ].join('\n') + '\n');
        expect(await watch({ name: 'orders' }).done).toMatchObject({ exitCode: 1, message: `Function default/orders failed: ${CANNOT}` });
      });

      test('says nothing of it where the cluster serves it, nor for a Function whose annotation does not name it', async () => {
        serveReach();
        seedBoth();
        const served = await status();
        expect(served.stdout).toBe(`${[
          'NAME     RUNTIME   STAGE  STATE  REACH  AGE  URL                          REASON',
          'catalog  nodejs22  ready  ready  1/1    3d   https://catalog.example.com  DeploymentReady: Deployment catalog-x7b2c is ready',
          'hello    nodejs22  ready  ready  2/2    3d   https://hello.example.com    DeploymentReady: Deployment hello-x7b2c is ready',
        ].join('\n')}\n`);
        expect(served.stderr).toBe('');
        expect(served.error).toBeUndefined();
        api.close();

        // Gateway API's CRDs missing: catalog needs them, hello does not, and only catalog says so.
        api = await FakeKubeApi.start({ resources: [...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES] });
        kubeconfig = writeKubeconfig(api, path.join(dir, 'config'), { namespace: 'default' });
        serveReach(HTTP_ROUTES);
        seedBoth(HTTP_ROUTES);
        const { stdout, stderr } = await status();
        expect(stdout.split('\n').filter(l => /does not serve/.test(l))).toEqual([
          'catalog  nodejs22  reach  failed  0/1    3d                              its HTTPRoute cannot exist: the cluster does not serve httproutes.gateway.networking.k8s.io; '
            + 'install the Gateway API CRDs (kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml)',
          'The cluster does not serve httproutes.gateway.networking.k8s.io, so the HTTPRoutes of 1 Function cannot exist (default/catalog): '
            + 'install the Gateway API CRDs (kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml)',
        ]);
        expect(stdout).toContain('hello    nodejs22  ready  ready   2/2');
        expect(stderr).toBe('');
      });
    });

    test('leaves out no kind\'s columns when no Function has endpoints or Subscriptions, and selects one Function\'s by name', async () => {
      serveReach();
      seed(api, '09-ready');
      seedReach(api, 'reach-virtualservice');
      const { stdout } = await status({ name: 'hello' });
      expect(stdout).toMatch(/^NAME {3}RUNTIME {3}STAGE {2}STATE {2}AGE {2}REASON\nhello /);
      expect(api.requestsOf('GET', '/apis/networking.istio.io/v1beta1/namespaces/default/virtualservices').map(r => r.query.labelSelector))
        .toEqual([`${FUNCTION_LABEL}=hello`]);
    });

    test('warns once when a kind that reaches Functions may not be listed, and shows the others', async () => {
      serveReach();
      seedReach(api, 'reach-apirule-ready');
      api.failNext('GET', /\/subscriptions$/, 403);
      const { stdout, stderr, error } = await status();
      expect(stderr).toBe('kyma-serverless: cannot list Subscriptions in namespace default (forbidden): '
        + 'the Functions\' endpoints and Subscriptions of that kind are not shown\n');
      expect(stdout).toContain('hello  nodejs22  ready  ready  1/1    3d   https://hello.example.com');
      expect(error).toBeUndefined();
    });

    test('--watch follows a ready Function until its Subscription is ready, and watches the kinds that reach Functions too', async () => {
      serveReach(API_RULES);
      seedReach(api, 'reach-subscription-not-ready');
      const { stdout, done } = watch({ name: 'invoices' });
      await api.waitForWatches(9);
      const subscription = api.get(objectPath(SUBSCRIPTIONS, 'invoices-order-created', 'default'))!;
      const ready = reachDocuments('reach-apirule-ready').find(o => o.kind === 'Subscription')!.status;
      api.put({ ...subscription, status: { ...ready, types: subscription.status.types } });
      expect(await done).toBeUndefined();
      expect(stdout.lines()).toEqual([
        '2026-03-20T09:05:00Z default/invoices reach progressing Subscription invoices-order-created: Subscription spec has validation errors: '
          + 'Sink validation failed: service invoices.default not found in the cluster',
        '2026-03-20T09:05:00Z default/invoices ready ready DeploymentReady: Deployment invoices-x7b2c is ready',
      ]);
      expect(api.requestsOf('GET', '/apis/eventing.kyma-project.io/v1alpha2/namespaces/default/subscriptions').map(r => r.query.watch))
        .toEqual([undefined, 'true']);
    });

    test('--watch ends with exit code 1 when an HTTPRoute\'s Gateway stops accepting it', async () => {
      serveReach();
      seedReach(api, 'reach-httproute-accepted');
      // Keeps the watch going: its APIRule has no status yet.
      seedReach(api, 'reach-apirule-pending');
      const { done } = watch();
      await api.waitForWatches(10);
      const route = api.get(objectPath(HTTP_ROUTES, 'catalog', 'default'))!;
      const refused = reachDocuments('reach-httproute-not-accepted')[0].status;
      api.put({ ...route, status: refused });
      expect(await done).toMatchObject({
        exitCode: 1,
        message: 'Function default/catalog failed: HTTPRoute catalog: Gateway infra/public does not accept it: NotAllowedByListeners: '
          + 'hostnames matched parent hostname "*.example.com", but namespace "default" is not allowed by the parent',
      });
    });
  });

  describe('Functions KEDA scales', () => {
    const IDLE = 'ScalerNotActive: scaled to zero by KEDA (ScaledObject nightly): no Pods run until a trigger is active';
    /** Sets the Active condition of the ScaledObject, as KEDA does when a trigger comes and goes. */
    const setActive = (status: string, reason: string, message: string) => change(api, SCALED_OBJECTS, 'default', 'nightly', o => {
      o.status = { ...o.status, conditions: o.status.conditions.map((c: { type: string }) => (c.type === 'Active' ? { type: 'Active', status, reason, message } : c)) };
    });

    test('shows a Function KEDA scaled to zero as idle, not failed and not waiting: exit 0, and -o json says so', async () => {
      api.addResource(SCALED_OBJECTS);
      seed(api, '11-keda-idle');
      seed(api, '09-ready');
      const asTable = await status();
      expect(asTable.stdout).toBe(`${[
        'NAME     RUNTIME   STAGE  STATE  AGE  REASON',
        'hello    nodejs22  ready  ready  3d   DeploymentReady: Deployment hello-x7b2c is ready',
        `nightly  nodejs22  ready  idle   3d   ${IDLE}`,
      ].join('\n')}\n`);
      expect(asTable.error).toBeUndefined();
      expect(asTable.stderr).toBe('');
      // Listed once, by the label synth writes on the ScaledObject; KEDA's own HPA is not the controller's.
      expect(api.requestsOf('GET', '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects').map(r => r.query.labelSelector)).toEqual([FUNCTION_LABEL]);

      const [, nightly] = JSON.parse((await status({ output: OutputFormat.JSON })).stdout) as FunctionStatusReport[];
      expect(nightly).toMatchObject({
        name: 'nightly', stage: 'ready', state: 'idle', reason: 'ScalerNotActive', since: '2026-03-20T09:01:58Z',
        objects: { deployment: 'nightly-x7b2c', service: 'nightly', scaledObject: 'nightly' },
        replicas: { desired: 0, ready: 0 },
      });
      expect(nightly.objects.horizontalPodAutoscaler).toBeUndefined();
    });

    test('shows it as ready, without a word, where KEDA is not installed, and warns when ScaledObjects may not be listed', async () => {
      api.addResource(SCALED_OBJECTS);
      seed(api, '11-keda-idle');
      // 404, as where KEDA's CRD is not installed.
      api.failNext('GET', /\/scaledobjects$/, 404);
      const unserved = await status();
      expect(unserved.stdout).toContain('nightly  nodejs22  ready  ready  3d   DeploymentReady: Deployment nightly-x7b2c is ready');
      expect(unserved.stderr).toBe('');
      api.failNext('GET', /\/scaledobjects$/, 403);
      const forbidden = await status();
      expect(forbidden.stderr).toBe('kyma-serverless: cannot list ScaledObjects in namespace default (forbidden): Functions KEDA scaled to zero show as ready, not idle\n');
      expect(forbidden.error).toBeUndefined();
    });

    test('--watch treats idle as done: it ends at once, and when a Function KEDA is waking goes back to zero', async () => {
      api.addResource(SCALED_OBJECTS);
      seed(api, '11-keda-idle');
      expect(await watch().done).toBeUndefined();

      setActive('True', 'ScalerActive', 'Scaling is performed because triggers are active');
      const { stdout, done } = watch({ output: OutputFormat.JSON });
      await api.waitForWatches(7);
      setActive('False', 'ScalerNotActive', 'Scaling is not performed because triggers are not active');
      expect(await done).toBeUndefined();
      expect(stdout.lines().map(l => JSON.parse(l)).map(l => [l.name, l.stage, l.state, l.reason])).toEqual([
        ['nightly', 'ready', 'progressing', 'ScalerActive'],
        ['nightly', 'ready', 'idle', 'ScalerNotActive'],
      ]);
      await until(() => api.openWatches === 0, 'the watches to be closed');
    });
  });

  describe('as a command', () => {
    function cli(): Command {
      const cmd = program();
      // Until src/cli/index.ts adds the command itself.
      if (!cmd.commands.some(c => c.name() === 'status')) addStatusCommand(cmd);
      for (const c of [cmd, ...cmd.commands]) c.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
      return cmd;
    }

    test('prints help with examples', () => {
      const status = cli().commands.find(c => c.name() === 'status')!;
      let help = '';
      status.configureOutput({ writeOut: text => { help += text; } }).outputHelp();
      expect(help).toContain('Usage: kyma-serverless status [options] [name]');
      expect(help).toContain('--timeout <duration>');
      expect(help).toContain('kyma-serverless status hello -n shop --watch --timeout 10m');
    });

    test('takes the global options after the command, and a duration for --timeout', async () => {
      seed(api, '10-git-ready');
      const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        await cli().parseAsync(['node', 'kyma-serverless', 'status', 'orders-api', '-n', 'shop', '--kubeconfig', kubeconfig, '-o', 'json', '--watch', '--timeout', '5s']);
        const printed = write.mock.calls.map(c => String(c[0])).join('');
        expect(JSON.parse(printed)).toMatchObject({ namespace: 'shop', name: 'orders-api', state: 'ready' });
      } finally {
        write.mockRestore();
      }
      await expect(cli().parseAsync(['node', 'kyma-serverless', 'status', '--watch', '--timeout', '5'])).rejects.toThrow(/'5' is not a duration/);
    });
  });
});

describe('kyma-serverless status on a 1.13.0 cluster', () => {
  let api: FakeKubeApi;
  let dir: string;
  let kubeconfig: string;
  const crd = (annotations?: Record<string, string>, shortNames?: string[]) => ({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: 'functions.serverless.kyma-project.io', ...(annotations ? { annotations } : {}) },
    spec: {
      group: 'serverless.kyma-project.io', scope: 'Namespaced',
      names: { kind: 'Function', plural: 'functions', singular: 'function', ...(shortNames ? { shortNames } : {}) },
      versions: [{ name: 'v1alpha2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'status-113-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    api = await FakeKubeApi.start({ resources: [...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES, CUSTOM_RESOURCE_DEFINITIONS] });
    kubeconfig = writeKubeconfig(api, path.join(dir, 'config'), { namespace: 'default' });
  });
  afterEach(() => api.close());

  async function status(options: Partial<StatusOptions> = {}) {
    const stdout = capture();
    const stderr = capture();
    // The fake stamps objects with the time they were stored: half an hour on, they are 30m old, shown in whole minutes
    // (5m would show seconds, 5m1s once storing and reading them straddle a second on a busy machine).
    const io: StatusIo = { stdout, stderr, now: () => Date.now() + 30 * 60_000 };
    const error = await runStatus({ kubeconfig, output: OutputFormat.TABLE, ...options }, io).then(() => undefined, e => e);
    return { stdout: stdout.text(), stderr: stderr.text(), error };
  }

  test('reads the release from the Function CRD and shows 1.13.0\'s stages, the Pods installing dependencies and the Git commit', async () => {
    api.put(crd({ 'cdk8s-kyma-serverless/release': '1.13.0' }, ['fn', 'fns']));
    for (const name of BUILDLESS_FIXTURES) seed(api, name);
    const { stdout, error } = await status();
    expect(stdout.split('\n')).toEqual([
      'NAME        RUNTIME   STAGE       STATE        AGE  REASON',
      'from-git    nodejs22  ready       ready        30m  DeploymentReady: Deployment from-git-q7w2e is ready',
      'installing  nodejs24  ready       progressing  30m  DeploymentWaiting: Deployment installing-5m2xq is not ready yet: its Pods install the Function\'s '
        + 'dependencies (npm install) at every start, and are not ready until that is done (kubectl logs -n default deployment/installing-5m2xq shows it)',
      'invalid     nodejs24  configured  failed       30m  InvalidFunctionSpec: invalid spec.secretMounts: [secretMounts has duplicated mountPath values: /etc/secret]',
      'running     nodejs24  ready       ready        30m  DeploymentReady: Deployment running-8x2kq is ready',
      '',
      // 1.13.0 runs nodejs24: a Function on nodejs22 hears of its end 90 days ahead.
      '1 Function on a runtime past or near its end of support:',
      '  default/from-git: nodejs22 reaches the end of its support in November 2026 (upstream\'s runtime deprecation schedule, '
        + 'https://github.com/kyma-project/serverless/blob/1.13.0/docs/user/00-90-runtime-deprecation-schedule.md); move to nodejs24',
      '',
    ]);
    expect(error).toBeInstanceOf(CliError);
    const json = await status({ output: OutputFormat.JSON });
    const reports = JSON.parse(json.stdout) as FunctionStatusReport[];
    const fromGit = reports.find(r => r.name === 'from-git')!;
    expect(fromGit).toMatchObject({ release: '1.13.0', commit: '9ff7d2da8c1e4b6f0a3d5e7c9b1f2a4d6e8c0b13', objects: { deployment: 'from-git-q7w2e', service: 'from-git' } });
    expect(fromGit.steps.map(s => s.stage)).toEqual(['configured', 'deployment', 'service', 'ready']);
  }, 30_000); // the fake API server over HTTP: seconds on a busy machine

  test('without the annotation, tells 1.13.0 by the CRD\'s short names; without a readable CRD, by each Function\'s status', async () => {
    api.put(crd(undefined, ['fn', 'fns']));
    seed(api, '113-01-installing');
    seed(api, '09-ready');
    // A Function of 1.11.1's shape on a 1.13.0 cluster (left from before the move) is judged by the cluster's release.
    let reports = JSON.parse((await status({ output: OutputFormat.JSON })).stdout) as FunctionStatusReport[];
    expect(reports.map(r => [r.name, r.release, r.steps[0].stage])).toEqual([['hello', '1.13.0', 'configured'], ['installing', '1.13.0', 'configured']]);
    api.remove('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/functions.serverless.kyma-project.io');
    reports = JSON.parse((await status({ output: OutputFormat.JSON })).stdout) as FunctionStatusReport[];
    expect(reports.map(r => [r.name, r.release, r.steps[0].stage])).toEqual([['hello', undefined, 'source'], ['installing', '1.13.0', 'configured']]);
  }, 30_000); // the fake API server over HTTP: seconds on a busy machine
});

describe('the HorizontalPodAutoscalers status lists', () => {
  test('are those labelled with a Function\'s name, whoever manages them: under 1.13.0 synth writes the one of scale', async () => {
    const api = await FakeKubeApi.start({ resources: [...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'status-hpa-'));
    try {
      const kubeconfig = writeKubeconfig(api, path.join(dir, 'config'), { namespace: 'default' });
      seed(api, '113-02-ready');
      const io: StatusIo = { stdout: capture(), stderr: capture(), now: () => Date.now() };
      await runStatus({ kubeconfig, output: OutputFormat.JSON }, io);
      expect(api.requestsOf('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers').map(r => r.query.labelSelector))
        .toEqual(['serverless.kyma-project.io/function-name']);
    } finally {
      await api.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000); // the fake API server over HTTP: seconds on a busy machine
});
