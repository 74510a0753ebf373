/**
 * `kyma-serverless preflight`: each check judged alone, then the whole command against the fake
 * API server (over HTTP, through the real client-node) seeded from recorded response bodies.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { V1Deployment, V1ResourceQuota, VersionInfo } from '@kubernetes/client-node';
import { Command } from 'commander';
import { CliError } from '../../src/cli/_kube';
import { program } from '../../src/cli/index';
import {
  CheckId, CheckStatus, NamespaceFacts, PreflightOptions, PreflightReport, addPreflightCommand, buildPresetsOf, checkLimitRanges, checkQuotas,
  checkServerVersion, defaultBuildPresets, formatReport, parseServerVersion, runPreflight, selectFunctionNamespaces,
} from '../../src/cli/preflight';
import { FakeCluster } from '../util/fake-cluster';
import { writeKubeconfig } from '../util/fake-kube-api';
import { fixture } from '../util/fixtures';

const HEALTHY = fixture('cluster', 'healthy');
const DONE_WHEN = fixture('cluster', 'done-when');

const json = (file: string) => JSON.parse(fs.readFileSync(path.join(HEALTHY, file), 'utf8'));
const version = (v: Partial<VersionInfo>) => ({ major: '', minor: '', gitVersion: '', ...v }) as VersionInfo;
const failures = (report: PreflightReport) => report.checks.filter(c => c.status === CheckStatus.FAIL);
const check = (report: PreflightReport, title: string) => report.checks.find(c => c.title === title)!;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'preflight-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('checks, judged alone', () => {
  test('reads a server version from major/minor, a minor like "27+", or gitVersion', () => {
    expect(parseServerVersion(version({ major: '1', minor: '29', gitVersion: 'v1.29.4' }))).toEqual({ major: 1, minor: 29 });
    expect(parseServerVersion(version({ major: '1', minor: '27+', gitVersion: 'v1.27.16-eks-a18cd3a' }))).toEqual({ major: 1, minor: 27 });
    expect(parseServerVersion(version({ gitVersion: 'v1.30.2-gke.1587003' }))).toEqual({ major: 1, minor: 30 });
    expect(parseServerVersion(version({ gitVersion: 'unknown' }))).toBeUndefined();
    expect(checkServerVersion(version({ major: '1', minor: '27+', gitVersion: 'v1.27.16-eks-a18cd3a' })).status).toBe(CheckStatus.PASS);
    expect(checkServerVersion(version({ major: '2', minor: '0', gitVersion: 'v2.0.0' })).status).toBe(CheckStatus.PASS);
    expect(checkServerVersion(version({ gitVersion: 'unknown' }))).toMatchObject({
      status: CheckStatus.FAIL, detail: expect.stringMatching(/cannot tell the version/),
    });
  });

  test('takes the build presets from the controller\'s APP_FUNCTION_RESOURCE_CONFIG, else upstream\'s', () => {
    const deployment = json('deployment-serverless-ctrl-mngr.json') as V1Deployment;
    const fromController = buildPresetsOf(deployment);
    expect(fromController.source).toBe('kyma-system/serverless-ctrl-mngr');
    expect(fromController.defaultPreset).toBe('normal');
    expect(fromController.presets.fast).toEqual({ requestCpu: '900m', requestMemory: '1100Mi', limitCpu: '1700m', limitMemory: '1100Mi' });
    expect(buildPresetsOf(undefined)).toEqual(defaultBuildPresets());

    const env = deployment.spec!.template.spec!.containers[0].env!.find(e => e.name === 'APP_FUNCTION_RESOURCE_CONFIG')!;
    env.value = 'buildJob: {resources: {defaultPreset: huge, presets: {huge: {requestCpu: 2, requestMemory: 4Gi, limitCpu: 3, limitMemory: 6Gi}}}}';
    expect(buildPresetsOf(deployment)).toEqual({
      presets: { huge: { requestCpu: '2', requestMemory: '4Gi', limitCpu: '3', limitMemory: '6Gi' } },
      defaultPreset: 'huge',
      source: 'kyma-system/serverless-ctrl-mngr',
    });
    env.value = 'buildJob: [';
    expect(buildPresetsOf(deployment)).toMatchObject({
      defaultPreset: 'normal', source: expect.stringMatching(/^upstream defaults \(APP_FUNCTION_RESOURCE_CONFIG .* is not YAML/),
    });
  });

  test('finds Function namespaces from Functions and managed-by labels, never the system namespace', () => {
    const namespaces = json('namespaces.json').items;
    expect(selectFunctionNamespaces(undefined, namespaces, ['team-b', 'team-b'], 'kyma-system')).toEqual(['team-a', 'team-b']);
    expect(selectFunctionNamespaces(undefined, namespaces, [], 'kyma-system')).toEqual(['team-a']);
    expect(selectFunctionNamespaces(['team-c', 'team-a'], namespaces, ['team-b'], 'kyma-system')).toEqual(['team-a', 'team-c']);
  });

  test('a Pod LimitRange counts, a Container one without max does not', () => {
    const facts: NamespaceFacts = {
      name: 'ns',
      namespace: { metadata: { name: 'ns' } },
      limitRanges: [{
        metadata: { name: 'lr' },
        spec: { limits: [{ type: 'Container', _default: { cpu: '100m' } }, { type: 'Pod', max: { memory: '1Gi' } }] },
      }],
      resourceQuotas: [],
    };
    expect(checkLimitRanges(facts, defaultBuildPresets())).toMatchObject({
      status: CheckStatus.FAIL,
      detail: 'LimitRange lr allows at most memory 1Gi per Pod; build Jobs need cpu 1700m (preset fast), memory 1100Mi (preset normal)',
      fix: 'raise the Pod max of LimitRange lr to at least memory 1100Mi (FunctionNamespace\'s LimitRange does): kubectl edit limitrange lr -n ns',
    });
  });

  test('a quota counts hard minus used, in every unit the API server writes', () => {
    const quota = (hard: Record<string, string>, used: Record<string, string>): V1ResourceQuota =>
      ({ metadata: { name: 'q' }, spec: { hard }, status: { hard, used } });
    const facts = (q: V1ResourceQuota): NamespaceFacts =>
      ({ name: 'ns', namespace: { metadata: { name: 'ns' } }, limitRanges: [], resourceQuotas: [q] });
    const presets = defaultBuildPresets();
    const roomy = quota({ 'cpu': '2', 'memory': '1Gi', 'pods': '10' }, { cpu: '1500m', memory: '324Mi', pods: '9' });
    expect(checkQuotas(facts(roomy), presets).status).toBe(CheckStatus.PASS);
    expect(checkQuotas(facts(quota({ 'cpu': '2', 'memory': '1Gi' }, { cpu: '1501m', memory: '325Mi' })), presets)).toMatchObject({
      status: CheckStatus.FAIL,
      detail: 'ResourceQuota q has room for cpu 499m (needs 500m), memory 699Mi (needs 700Mi): no room for a build Job of the default preset normal',
      fix: 'raise spec.hard of ResourceQuota q to at least cpu 2001m, memory 1025Mi, or free what is used: kubectl edit resourcequota q -n ns',
    });
    // Without a status yet (the quota controller has not counted), the hard limits alone decide.
    expect(checkQuotas(facts({ metadata: { name: 'q' }, spec: { hard: { 'count/jobs.batch': '0' } } }), presets)).toMatchObject({
      status: CheckStatus.FAIL, detail: expect.stringMatching(/^ResourceQuota q has room for count\/jobs.batch 0 \(needs 1\)/),
    });
  });

  test('the table prints each fix indented under its failure, and a summary', () => {
    const report: PreflightReport = {
      ok: false,
      checks: [
        { id: CheckId.SERVER_VERSION, title: 'server version', status: CheckStatus.PASS, detail: 'v1.29.4 (needs 1.27 or later)' },
        {
          id: CheckId.NAMESPACE_INJECTION, namespace: 'b', title: 'istio-injection b', status: CheckStatus.FAIL,
          detail: 'namespace b is not labelled', fix: 'kubectl label ...',
        },
        { id: CheckId.STORAGE_CLASS, title: 'storage class', status: CheckStatus.SKIP, detail: 'external registry' },
      ],
    };
    expect(formatReport(report)).toBe([
      'RESULT  CHECK              DETAIL',
      'pass    server version     v1.29.4 (needs 1.27 or later)',
      'fail    istio-injection b  namespace b is not labelled',
      '        fix: kubectl label ...',
      'skip    storage class      external registry',
      '',
      'Preflight failed (1 passed, 1 failed, 1 skipped): apply the fixes above and run it again.',
    ].join('\n'));
  });
});

describe('preflight against a cluster', () => {
  let cluster: FakeCluster;
  let kubeconfig: string;

  async function start(...folders: string[]): Promise<void> {
    cluster = await FakeCluster.start(...folders);
    kubeconfig = writeKubeconfig(cluster.api, path.join(dir, `kubeconfig-${Date.now()}-${Math.random()}.yaml`));
  }
  const preflight = (options: Omit<PreflightOptions, 'kubeconfig'> = {}) => runPreflight({ kubeconfig, ...options });

  /** Runs the command as main() would, with stdout captured. */
  async function command(args: string[]): Promise<{ stdout: string; exitCode: number | undefined }> {
    const cli = program();
    if (!cli.commands.some(c => c.name() === 'preflight')) addPreflightCommand(cli);
    let stdout = '';
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout += chunk.toString();
      return true;
    });
    try {
      await cli.parseAsync(['node', 'kyma-serverless', '--kubeconfig', kubeconfig, ...args]);
    } finally {
      write.mockRestore();
    }
    const exitCode = process.exitCode as number | undefined;
    process.exitCode = undefined;
    return { stdout, exitCode };
  }

  afterEach(async () => {
    process.exitCode = undefined;
    await cluster?.close();
    cluster = undefined!;
  });

  test('a healthy cluster passes every check', async () => {
    await start(HEALTHY);
    const report = await preflight();
    expect(report.ok).toBe(true);
    expect(report.checks.map(c => [c.status, c.title])).toEqual([
      ['pass', 'server version'],
      ['pass', 'istio injector'],
      ['pass', 'istio-injection team-a'],
      ['pass', 'istio-injection team-b'],
      ['pass', 'limitrange team-a'],
      ['pass', 'limitrange team-b'],
      ['pass', 'quota team-a'],
      ['pass', 'quota team-b'],
      ['pass', 'storage class'],
      ['pass', 'node port'],
      ['pass', 'function crd'],
      ['pass', 'priority class'],
    ]);
    expect(cluster.api.requests.every(r => r.method === 'GET')).toBe(true);
  });

  test('the command exits 0 on a healthy cluster', async () => {
    await start(HEALTHY);
    const { stdout, exitCode } = await command(['preflight']);
    expect(exitCode).toBeUndefined();
    expect(stdout).toMatch(/^RESULT {2}CHECK {19}DETAIL\npass {4}server version {10}v1\.29\.4 \(needs 1\.27 or later\)\n/);
    expect(stdout).toMatch(/\n\nPreflight passed \(12 passed, 0 failed\)\.\n$/);
  });

  test('done when: a namespace without istio-injection and one with a small LimitRange fail, with both fixes', async () => {
    await start(HEALTHY, DONE_WHEN);
    const { stdout, exitCode } = await command(['preflight']);
    expect(exitCode).toBe(1);
    expect(stdout).toContain([
      'fail    istio-injection team-b  namespace team-b is not labelled istio-injection=enabled',
      '        fix: kubectl label namespace team-b istio-injection=enabled --overwrite',
    ].join('\n'));
    expect(stdout).toContain([
      'fail    limitrange team-a       LimitRange platform-limits allows at most cpu 1, memory 1Gi per Container; '
        + 'build Jobs need cpu 1700m (preset fast), memory 1100Mi (preset normal)',
      '        fix: raise the Container max of LimitRange platform-limits to at least cpu 1700m, memory 1100Mi '
        + '(FunctionNamespace\'s LimitRange does): kubectl edit limitrange platform-limits -n team-a',
    ].join('\n'));
    expect(stdout).toContain('Preflight failed (10 passed, 2 failed)');
  });

  test('-o json prints {ok, checks: [{id, title, status, detail, fix?}]}', async () => {
    await start(HEALTHY, DONE_WHEN);
    const { stdout, exitCode } = await command(['-o', 'json', 'preflight']);
    expect(exitCode).toBe(1);
    const report = JSON.parse(stdout);
    expect(Object.keys(report)).toEqual(['ok', 'checks']);
    expect(report.ok).toBe(false);
    expect(report.checks).toHaveLength(12);
    expect(report.checks[0]).toEqual({ id: 'server-version', title: 'server version', status: 'pass', detail: 'v1.29.4 (needs 1.27 or later)' });
    expect(report.checks.filter((c: any) => c.status === 'fail')).toEqual([
      {
        id: 'namespace-injection', namespace: 'team-b', title: 'istio-injection team-b', status: 'fail',
        detail: 'namespace team-b is not labelled istio-injection=enabled', fix: 'kubectl label namespace team-b istio-injection=enabled --overwrite',
      },
      expect.objectContaining({
        id: 'limitrange', namespace: 'team-a', status: 'fail', fix: expect.stringContaining('kubectl edit limitrange platform-limits -n team-a'),
      }),
    ]);
  });

  test('--help shows examples', async () => {
    const cli = program();
    if (!cli.commands.some(c => c.name() === 'preflight')) addPreflightCommand(cli);
    const preflightCommand = cli.commands.find(c => c.name() === 'preflight') as Command;
    let help = '';
    preflightCommand.exitOverride().configureOutput({ writeOut: text => { help += text; } });
    await expect(cli.parseAsync(['node', 'kyma-serverless', 'preflight', '--help'])).rejects.toMatchObject({ code: 'commander.helpDisplayed' });
    expect(help).toContain('--namespaces <list>');
    expect(help).toContain('--node-port <n>');
    expect(help).toContain('Examples:');
    expect(help).toContain('kyma-serverless preflight --context staging --namespaces team-a,team-b');
  });

  describe('each failing check alone', () => {
    beforeEach(() => start(HEALTHY));

    test('fails when the server is older than 1.27', async () => {
      cluster.version = { ...cluster.version, minor: '26', gitVersion: 'v1.26.15' };
      const report = await preflight();
      expect(failures(report)).toEqual([{
        id: CheckId.SERVER_VERSION, title: 'server version', status: CheckStatus.FAIL,
        detail: 'v1.26.15 is too old (needs 1.27 or later)', fix: 'upgrade the cluster to Kubernetes 1.27 or later',
      }]);
    });

    test('fails when Istio\'s sidecar injector is missing', async () => {
      cluster.api.remove('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/istio-sidecar-injector');
      const report = await preflight();
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.ISTIO_INJECTOR,
        detail: expect.stringContaining('no MutatingWebhookConfiguration has a *.sidecar-injector.istio.io webhook'),
        fix: expect.stringMatching(/install Istio .* Kyma's istio module/),
      })]);
    });

    test('fails when a Function namespace has istio-injection=disabled', async () => {
      const teamA = cluster.api.get('/api/v1/namespaces/team-a')!;
      cluster.api.put({ ...teamA, metadata: { ...teamA.metadata, labels: { ...teamA.metadata!.labels, 'istio-injection': 'disabled' } } });
      const report = await preflight();
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.NAMESPACE_INJECTION, namespace: 'team-a',
        detail: 'namespace team-a is labelled istio-injection=disabled, not istio-injection=enabled',
        fix: 'kubectl label namespace team-a istio-injection=enabled --overwrite',
      })]);
    });

    test('fails when a given namespace does not exist, and skips its other checks', async () => {
      const report = await preflight({ namespaces: ['team-a', 'team-c'] });
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.NAMESPACE_INJECTION, title: 'istio-injection team-c', detail: 'namespace team-c does not exist',
        fix: 'create it (FunctionNamespace does), or: '
          + 'kubectl create namespace team-c && kubectl label namespace team-c istio-injection=enabled --overwrite',
      })]);
      expect(check(report, 'limitrange team-c')).toMatchObject({ status: CheckStatus.SKIP, detail: 'namespace team-c does not exist' });
      expect(check(report, 'quota team-c').status).toBe(CheckStatus.SKIP);
      expect(report.checks.some(c => c.namespace === 'team-b')).toBe(false);
    });

    test('fails when a LimitRange is below a larger build preset the controller is configured with', async () => {
      const path_ = '/apis/apps/v1/namespaces/kyma-system/deployments/serverless-ctrl-mngr';
      const deployment = cluster.api.get(path_)!;
      const env = deployment.spec.template.spec.containers[0].env.find((e: any) => e.name === 'APP_FUNCTION_RESOURCE_CONFIG');
      env.value = env.value.replace(/(fast:\n(?: {8}\w+: \S+\n)*? {8}limitCpu:) 1700m/, '$1 1900m');
      expect(env.value).toContain('limitCpu: 1900m');
      cluster.api.put(deployment);
      const report = await preflight();
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.LIMIT_RANGE, namespace: 'team-a',
        detail: 'LimitRange team-a-limitrange-c86e640c allows at most cpu 1700m per Container; '
          + 'build Jobs need cpu 1900m (preset fast), memory 1100Mi (preset normal)',
        fix: 'raise the Container max of LimitRange team-a-limitrange-c86e640c to at least cpu 1900m '
          + '(FunctionNamespace\'s LimitRange does): kubectl edit limitrange team-a-limitrange-c86e640c -n team-a',
      })]);
    });

    test('fails when a ResourceQuota has no room left for a build Job', async () => {
      cluster.api.put({
        apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute', namespace: 'team-b' },
        spec: { hard: { 'requests.cpu': '2', 'limits.memory': '4Gi', 'pods': '10', 'count/jobs.batch': '3' } },
        status: {
          hard: { 'requests.cpu': '2', 'limits.memory': '4Gi', 'pods': '10', 'count/jobs.batch': '3' },
          used: { 'requests.cpu': '1800m', 'limits.memory': '2Gi', 'pods': '4', 'count/jobs.batch': '3' },
        },
      });
      const report = await preflight();
      expect(failures(report)).toEqual([{
        id: CheckId.QUOTA, namespace: 'team-b', title: 'quota team-b', status: CheckStatus.FAIL,
        detail: 'ResourceQuota compute has room for requests.cpu 200m (needs 500m), count/jobs.batch 0 (needs 1): '
          + 'no room for a build Job of the default preset normal',
        fix: 'raise spec.hard of ResourceQuota compute to at least requests.cpu 2300m, count/jobs.batch 4, '
          + 'or free what is used: kubectl edit resourcequota compute -n team-b',
      }]);
    });

    test('fails when no StorageClass is the default', async () => {
      const standard = cluster.api.get('/apis/storage.k8s.io/v1/storageclasses/standard')!;
      cluster.api.put({ ...standard, metadata: { ...standard.metadata, annotations: {} } });
      const report = await preflight();
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.STORAGE_CLASS,
        detail: 'no default StorageClass (none of local-path, standard is marked default): '
          + 'the internal registry\'s PersistentVolumeClaim would stay Pending',
        fix: 'mark one default: kubectl patch storageclass local-path '
          + '-p \'{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}}}\', '
          + 'or set Registry.internal({ storageClassName: \'local-path\' })',
      })]);
    });

    test('takes the beta default-class annotation too', async () => {
      const standard = cluster.api.get('/apis/storage.k8s.io/v1/storageclasses/standard')!;
      const annotations = { 'storageclass.beta.kubernetes.io/is-default-class': 'true' };
      cluster.api.put({ ...standard, metadata: { ...standard.metadata, annotations } });
      expect(check(await preflight(), 'storage class').status).toBe(CheckStatus.PASS);
    });

    test('fails when another Service holds the registry\'s NodePort', async () => {
      cluster.api.put({
        apiVersion: 'v1', kind: 'Service', metadata: { name: 'legacy-gateway', namespace: 'team-b' },
        spec: {
          type: 'NodePort', selector: { app: 'legacy' },
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 32137 }],
        },
      });
      const report = await preflight();
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.NODE_PORT,
        detail: 'NodePort 32137 is taken by Service team-b/legacy-gateway',
        fix: 'free it (kubectl edit service legacy-gateway -n team-b), or set Registry.internal({ nodePort }) and --node-port to a free port',
      })]);
      expect(check(await preflight({ nodePort: 32200 }), 'node port')).toMatchObject({ status: CheckStatus.PASS, detail: 'NodePort 32200 is free' });
    });

    test('skips the registry checks with --external-registry, without reading StorageClasses or Services', async () => {
      const standard = cluster.api.get('/apis/storage.k8s.io/v1/storageclasses/standard')!;
      cluster.api.put({ ...standard, metadata: { ...standard.metadata, annotations: {} } });
      cluster.api.clearRequests();
      const report = await preflight({ externalRegistry: true });
      expect(report.ok).toBe(true);
      expect(check(report, 'storage class').status).toBe(CheckStatus.SKIP);
      expect(check(report, 'node port').status).toBe(CheckStatus.SKIP);
      expect(cluster.api.requests.map(r => r.path)).not.toContain('/api/v1/services');
      expect(cluster.api.requests.map(r => r.path)).not.toContain('/apis/storage.k8s.io/v1/storageclasses');
    });

    test('fails when the Function CRD does not store v1alpha2', async () => {
      const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/functions.serverless.kyma-project.io';
      const crd = cluster.api.get(crdPath)!;
      const v1alpha2 = crd.spec.versions[0];
      crd.spec.versions = [{ ...v1alpha2, name: 'v1alpha1', storage: true }, { ...v1alpha2, storage: false }];
      cluster.api.put(crd);
      const report = await preflight();
      expect(failures(report)).toEqual([expect.objectContaining({
        id: CheckId.FUNCTION_CRD,
        detail: 'functions.serverless.kyma-project.io stores another version than v1alpha2 (versions: v1alpha1 (storage), v1alpha2)',
        fix: 'make v1alpha2 the storage version: apply the stack\'s CRD, which serves and stores v1alpha2',
      })]);
    });

    test('passes when the stack is not installed yet (no CRD, PriorityClass, controller or registry)', async () => {
      cluster.api.remove('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/functions.serverless.kyma-project.io');
      cluster.api.remove('/apis/scheduling.k8s.io/v1/priorityclasses/serverless-priority');
      cluster.api.remove('/apis/apps/v1/namespaces/kyma-system/deployments/serverless-ctrl-mngr');
      cluster.api.remove('/api/v1/namespaces/kyma-system/services/serverless-docker-registry');
      const report = await preflight();
      expect(report.ok).toBe(true);
      expect(check(report, 'function crd').detail).toBe('functions.serverless.kyma-project.io is absent: the stack installs it');
      expect(check(report, 'priority class').detail).toBe('serverless-priority is absent: the stack creates it with value 2000000');
      expect(check(report, 'node port').detail).toBe('NodePort 32137 is free');
      // Without the CRD, only FunctionNamespaces (managed-by) are found: team-b held Functions only.
      expect(report.checks.filter(c => c.id === CheckId.NAMESPACE_INJECTION).map(c => c.namespace)).toEqual(['team-a']);
    });

    test('fails when serverless-priority has another value', async () => {
      const priorityClass = cluster.api.get('/apis/scheduling.k8s.io/v1/priorityclasses/serverless-priority')!;
      cluster.api.put({ ...priorityClass, value: 1000000 });
      const report = await preflight();
      expect(failures(report)).toEqual([{
        id: CheckId.PRIORITY_CLASS, title: 'priority class', status: CheckStatus.FAIL,
        detail: 'serverless-priority has value 1000000; the stack sets 2000000',
        fix: 'the value is immutable: kubectl delete priorityclass serverless-priority, then sync the stack',
      }]);
    });
  });

  test('-n checks that one namespace only', async () => {
    await start(HEALTHY);
    const report = await preflight({ namespace: 'team-b' });
    expect([...new Set(report.checks.filter(c => c.namespace).map(c => c.namespace))]).toEqual(['team-b']);
    expect(cluster.api.requestsOf('GET', /\/functions$/)).toHaveLength(0);
  });

  test('skips the namespace checks when no Function namespace is found', async () => {
    await start();
    const report = await preflight();
    expect(report.checks.filter(c => [CheckId.NAMESPACE_INJECTION, CheckId.LIMIT_RANGE, CheckId.QUOTA].includes(c.id))).toEqual([
      expect.objectContaining({
        id: CheckId.NAMESPACE_INJECTION, status: CheckStatus.SKIP, detail: 'no Function namespaces found: give --namespaces (or -n) to check some',
      }),
      expect.objectContaining({ id: CheckId.LIMIT_RANGE, status: CheckStatus.SKIP }),
      expect.objectContaining({ id: CheckId.QUOTA, status: CheckStatus.SKIP }),
    ]);
  });

  test('throws a clear error when the API server cannot be reached', async () => {
    await start(HEALTHY);
    const url = cluster.api.url;
    await cluster.close();
    const error = await preflight().catch(e => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error.message).toMatch(new RegExp(`^Cannot reach the API server at ${url} while reading the server version: ECONNREFUSED`));
    cluster = undefined!;
  });

  test('throws a clear error when listing is forbidden', async () => {
    await start(HEALTHY);
    cluster.api.failNext('GET', '/api/v1/namespaces', 403);
    await expect(preflight()).rejects.toThrow(new CliError(
      'Not allowed while listing Namespaces: namespaces is forbidden: User "system:serviceaccount:kyma-system:serverless-webhook" '
      + 'cannot list resource "namespaces" in API group "" at the cluster scope',
    ));
  });
});
