/**
 * `kyma-serverless preflight`: each check judged alone, then the whole command against the fake
 * API server (over HTTP, through the real client-node) seeded from recorded response bodies.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { V1Deployment, V1ResourceQuota, VersionInfo } from '@kubernetes/client-node';
import { Command } from 'commander';
import { stringify } from 'yaml';
import { ServerlessRelease } from '../../src/api';
import { CliError } from '../../src/cli/errors';
import { program } from '../../src/cli/index';
import {
  CheckId, CheckStatus, GatewayUse, NamespaceFacts, ReleaseSource, PreflightOptions, PreflightReport, UPSTREAM_PUBLISHER_PROXY_ADDRESS, addPreflightCommand,
  buildPresetsOf, checkGatewayApiGateway, checkLimitRanges, checkPublisherProxy, checkQuotas, checkRequiredKind, checkServerVersion,
  PACKAGE_REGISTRY_SECRET, checkPackageRegistry, defaultBuildPresets, formatReport, functionPodLabels, selects, parseServerVersion, publisherProxyAddressOf, readDeclaredReach, runPreflight, selectFunctionNamespaces,
  serviceOfAddress,
} from '../../src/cli/preflight';
import { FakeCluster } from '../util/fake-cluster';
import { atDate } from '../util/fixed-date';
import { writeKubeconfig } from '../util/fake-kube-api';
import { fixture } from '../util/fixtures';
import { synthStack } from '../util/synth';

const HEALTHY = fixture('cluster', 'healthy');
/** Laid over HEALTHY: a 1.13.0 Function CRD, Functions as the 1.13.0 controller writes them, NetworkPolicies that deny team-a's egress but DNS. */
const BUILDLESS = fixture('cluster', 'buildless');
const DONE_WHEN = fixture('cluster', 'done-when');
/** The CRDs of Kyma's api-gateway and eventing modules, Istio, the Gateway API and cert-manager; their Gateways; the publisher proxy. */
const REACH = fixture('cluster', 'reach');
/** Manifests whose Functions are reached through an APIRule, a VirtualService with JWT, an HTTPRoute and a Subscription. */
const REACH_MANIFESTS = fixture('manifests', 'reach');
/** KEDA's CRDs, as its Helm chart installs them. */
const KEDA = fixture('cluster', 'keda');
/** Manifests of a Function KEDA scales: a ScaledObject (as synth writes it from the keda prop). */
const KEDA_MANIFESTS = fixture('manifests', 'keda');
/** The Prometheus Operator's CRDs: ServiceMonitor, PodMonitor, PrometheusRule. */
const MONITORING = fixture('cluster', 'monitoring');

/** The day the tests judge runtime support at: 2026-11-28, when nodejs22 still has support. */
const NOW = new Date('2026-11-28T12:00:00Z');
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

  test('under 1.13.0, a policy counts for the Function Pods its selector picks, by the labels the controller and the Function give them', () => {
    const labels = functionPodLabels({ metadata: { name: 'hello', uid: 'u-1' }, spec: { labels: { tier: 'web' } } });
    expect(labels).toEqual({
      'tier': 'web', 'serverless.kyma-project.io/function-name': 'hello', 'serverless.kyma-project.io/managed-by': 'function-controller',
      'serverless.kyma-project.io/uuid': 'u-1', 'serverless.kyma-project.io/resource': 'deployment',
    });
    expect(selects({}, labels)).toBe(true);
    expect(selects({ matchLabels: { tier: 'web' } }, labels)).toBe(true);
    expect(selects({ matchLabels: { tier: 'db' } }, labels)).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] }, labels)).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }, labels)).toBe(false);
    expect(selects({ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, labels)).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, labels)).toBe(false);
    const deny = { metadata: { name: 'deny' }, spec: { podSelector: {}, policyTypes: ['Egress'] } };
    const facts = { name: 'ns', exists: true, registrySecret: false, functionPods: { hello: labels } };
    expect(checkPackageRegistry({ ...facts, networkPolicies: [deny] })).toMatchObject({
      status: CheckStatus.FAIL, detail: expect.stringMatching(/NetworkPolicy deny blocks 443\/TCP to the registry and DNS \(53\) for the Pods of Function hello/),
    });
    // A rule to port 443 on a named port or only inside the cluster does not reach the registry; DNS to any peer does resolve.
    const inside = { metadata: { name: 'inside' }, spec: { podSelector: {}, egress: [{ to: [{ podSelector: {} }], ports: [{ port: 443 }, { port: 53, protocol: 'UDP' }] }] } };
    expect(checkPackageRegistry({ ...facts, networkPolicies: [inside] }).detail).toMatch(/NetworkPolicy inside blocks 443\/TCP to the registry for/);
    const open = { metadata: { name: 'open' }, spec: { podSelector: {}, egress: [{}] } };
    expect(checkPackageRegistry({ ...facts, networkPolicies: [deny, open] }).status).toBe(CheckStatus.PASS);
    // Ingress-only policies do not limit egress.
    const ingress = { metadata: { name: 'ingress' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } };
    expect(checkPackageRegistry({ ...facts, networkPolicies: [ingress] }).detail).toMatch(/no NetworkPolicy limits the egress of Function Pods$/);
    expect(checkPackageRegistry({ ...facts, exists: false, networkPolicies: [] }).status).toBe(CheckStatus.SKIP);
  });

  test('the table prints each fix indented under its failure, and a summary', () => {
    const report: PreflightReport = {
      ok: false,
      release: { release: ServerlessRelease.V1_11_1, source: ReleaseSource.DEFAULT },
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
      'Checked for Serverless 1.11.1, build-based (from the default: no --release, and no Function CRD in the manifests or the cluster).',
      '',
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

describe('checks of what the manifests declare to reach Functions, judged alone', () => {
  const declared = () => readDeclaredReach(REACH_MANIFESTS)!;
  const gatewayUse = (references: GatewayUse['references']): GatewayUse => ({ namespace: 'infra', name: 'public', references });
  const gateway = (listeners: object[]) => ({ metadata: { namespace: 'infra', name: 'public' }, spec: { listeners } }) as any;
  const route = { from: 'HTTPRoute team-a/catalog', namespace: 'team-a' };

  test('reads the kinds, Gateways, Subscriptions and publisher proxy the manifests declare, from one folder', () => {
    const reach = declared();
    expect(reach.kinds.map(k => [k.crd, k.versions, k.objects])).toEqual([
      ['apirules.gateway.kyma-project.io', ['v2'], ['APIRule team-a/hello']],
      ['virtualservices.networking.istio.io', ['v1beta1'], ['VirtualService team-a/orders']],
      ['gateways.networking.istio.io', ['v1beta1'], ['Gateway istio-system/functions']],
      ['requestauthentications.security.istio.io', ['v1'], ['RequestAuthentication team-a/orders']],
      ['authorizationpolicies.security.istio.io', ['v1'], ['AuthorizationPolicy team-a/orders']],
      ['httproutes.gateway.networking.k8s.io', ['v1'], ['HTTPRoute team-a/catalog']],
      ['subscriptions.eventing.kyma-project.io', ['v1alpha2'], ['Subscription team-a/hello-order-created']],
      ['certificates.cert-manager.io', ['v1'], ['Certificate istio-system/functions-tls']],
    ]);
    expect(reach.istioGateways.map(g => [`${g.namespace}/${g.name}`, g.references.map(r => r.from), g.created?.file])).toEqual([
      ['istio-system/functions', ['VirtualService team-a/orders'], path.join(REACH_MANIFESTS, '0000-serverless.k8s.yaml')],
      ['kyma-system/kyma-gateway', ['APIRule team-a/hello'], undefined],
    ]);
    expect(reach.gatewayApiGateways).toEqual([{ namespace: 'infra', name: 'public', references: [{ ...route, sectionName: 'https' }] }]);
    expect(reach.subscriptions).toEqual(['Subscription team-a/hello-order-created']);
    expect(reach.namespaces.get('team-a')).toMatchObject({ 'gateway-access': 'public' });
    expect(reach.publisherProxyAddress).toEqual({ address: UPSTREAM_PUBLISHER_PROXY_ADDRESS, source: `set in ${path.join(REACH_MANIFESTS, '0000-serverless.k8s.yaml')}` });
  });

  test('takes the publisher proxy from the manifests, else the running controller, else upstream\'s default, and finds its Service', () => {
    const controller = json('deployment-serverless-ctrl-mngr.json') as V1Deployment;
    const env = controller.spec!.template.spec!.containers[0].env!.find(e => e.name === 'APP_FUNCTION_PUBLISHER_PROXY_ADDRESS')!;
    env.value = 'http://publisher.eventing:8080/publish';
    const { publisherProxyAddress: _, ...withoutController } = declared();
    expect(publisherProxyAddressOf(declared(), controller).source).toMatch(/^set in .*0000-serverless\.k8s\.yaml$/);
    expect(publisherProxyAddressOf(withoutController, controller)).toEqual({
      address: 'http://publisher.eventing:8080/publish', source: 'set by Deployment kyma-system/serverless-ctrl-mngr in the cluster',
    });
    expect(publisherProxyAddressOf(withoutController, undefined)).toEqual({ address: UPSTREAM_PUBLISHER_PROXY_ADDRESS, source: 'upstream\'s default' });
    expect(serviceOfAddress(UPSTREAM_PUBLISHER_PROXY_ADDRESS)).toEqual({ namespace: 'kyma-system', name: 'eventing-publisher-proxy' });
    expect(serviceOfAddress('http://publisher.eventing:8080/publish')).toEqual({ namespace: 'eventing', name: 'publisher' });
    expect(serviceOfAddress('http://publisher.eventing.svc/publish')).toEqual({ namespace: 'eventing', name: 'publisher' });
    for (const outside of ['https://events.example.com/publish', 'http://10.0.0.7/publish', 'http://publisher/publish', 'not a url']) {
      expect(serviceOfAddress(outside)).toBeUndefined();
    }
    expect(checkPublisherProxy({ address: 'https://events.example.com/publish', source: 'x' }, ['Subscription a/b'])).toMatchObject({
      status: CheckStatus.SKIP, detail: 'https://events.example.com/publish (x) names no Service of the cluster: not checked',
    });
  });

  test('reads the ScaledObjects of Functions with keda', () => {
    expect(readDeclaredReach(KEDA_MANIFESTS)!.kinds).toEqual([
      { crd: 'scaledobjects.keda.sh', kind: 'ScaledObject', versions: ['v1alpha1'], objects: ['ScaledObject team-a/orders'] },
    ]);
  });

  test('a CRD must serve every version the manifests write, also one the manifests install themselves', () => {
    const kind = { crd: 'httproutes.gateway.networking.k8s.io', kind: 'HTTPRoute', versions: ['v1'], objects: ['HTTPRoute a/x', 'HTTPRoute a/y', 'HTTPRoute b/z'] };
    const crd = (versions: object[]) => ({ spec: { versions } }) as any;
    expect(checkRequiredKind(kind, crd([{ name: 'v1beta1', served: true, storage: true }]))).toEqual({
      id: CheckId.GATEWAY_API_CRD, title: 'crd HTTPRoute', status: CheckStatus.FAIL,
      detail: 'httproutes.gateway.networking.k8s.io does not serve v1 (versions: v1beta1 (storage)); HTTPRoute a/x, HTTPRoute a/y and 1 more need gateway.networking.k8s.io/v1',
      fix: 'upgrade the Gateway API CRDs to a release that serves gateway.networking.k8s.io/v1 (release 1.0 and later serve v1)',
    });
    const installed = { file: 'dist/0000-gateway-api.k8s.yaml', object: crd([{ name: 'v1', served: false, storage: true }]) };
    expect(checkRequiredKind(kind, undefined, installed)).toMatchObject({
      status: CheckStatus.FAIL, fix: 'serve v1 in the CRD httproutes.gateway.networking.k8s.io of dist/0000-gateway-api.k8s.yaml',
    });
    installed.object.spec.versions[0].served = true;
    expect(checkRequiredKind(kind, undefined, installed)).toMatchObject({
      status: CheckStatus.PASS, detail: 'httproutes.gateway.networking.k8s.io (in the manifests, dist/0000-gateway-api.k8s.yaml) serves v1 (3 HTTPRoutes in the manifests)',
    });
  });

  test('a Gateway API Gateway must have the listener a route names and admit routes of its namespace and kind', () => {
    const selector = { from: 'Selector', selector: { matchExpressions: [{ key: 'gateway-access', operator: 'In', values: ['public', 'partner'] }] } };
    const https = (namespaces: object) => ({ name: 'https', protocol: 'HTTPS', allowedRoutes: { namespaces } });
    const labels = new Map([['team-a', { 'gateway-access': 'partner' }]]);
    expect(checkGatewayApiGateway(gatewayUse([route]), [gateway([https(selector)])], labels).status).toBe(CheckStatus.PASS);
    expect(checkGatewayApiGateway(gatewayUse([route]), [gateway([https(selector)])], new Map())).toMatchObject({
      status: CheckStatus.FAIL,
      detail: 'Gateway infra/public exists, but no listener admits HTTPRoute team-a/catalog from namespace team-a (https: HTTPS, from Selector)',
      fix: 'let a listener admit HTTPRoutes from namespace team-a (allowedRoutes.namespaces.from: All, or a Selector that matches it): '
        + 'kubectl edit gateways.gateway.networking.k8s.io public -n infra',
    });
    // Same is the default; by name, the namespace's own label is always there.
    expect(checkGatewayApiGateway(gatewayUse([{ ...route, namespace: 'infra' }]), [gateway([{ name: 'http', protocol: 'HTTP' }])], new Map()).status).toBe(CheckStatus.PASS);
    const byName = { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } };
    expect(checkGatewayApiGateway(gatewayUse([route]), [gateway([https(byName)])], new Map()).status).toBe(CheckStatus.PASS);
    // A TCP listener, or one for other kinds, does not take HTTPRoutes.
    const tcp = { name: 'tcp', protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } };
    const grpc = { name: 'grpc', protocol: 'HTTPS', allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'GRPCRoute' }] } };
    expect(checkGatewayApiGateway(gatewayUse([route]), [gateway([tcp, grpc])], new Map()).status).toBe(CheckStatus.FAIL);
    expect(checkGatewayApiGateway(gatewayUse([{ ...route, sectionName: 'admin' }]), [gateway([https({ from: 'All' })])], new Map())).toMatchObject({
      status: CheckStatus.FAIL,
      detail: 'Gateway infra/public exists, but HTTPRoute team-a/catalog names listener admin, which it does not have (listeners: https)',
      fix: 'name one of its listeners in the parentRef\'s sectionName, or add listener admin: kubectl edit gateways.gateway.networking.k8s.io public -n infra',
    });
  });
});

describe('preflight against a cluster', () => {
  let cluster: FakeCluster;
  let kubeconfig: string;

  async function start(...folders: string[]): Promise<void> {
    cluster = await FakeCluster.start(...folders);
    kubeconfig = writeKubeconfig(cluster.api, path.join(dir, `kubeconfig-${Date.now()}-${Math.random()}.yaml`));
  }
  // Tests name the manifests they mean: the repository's dist/ (the default) changes with the app.
  const preflight = (options: Omit<PreflightOptions, 'kubeconfig'> = {}) => runPreflight({ kubeconfig, manifests: false, now: NOW, ...options });

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
      const manifests = args.some(a => a === '--manifests' || a === '--no-manifests') ? [] : ['--no-manifests'];
      await atDate(NOW, () => cli.parseAsync(['node', 'kyma-serverless', '--kubeconfig', kubeconfig, ...args, ...manifests]));
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

  test('lists the Functions on a runtime past or near its end of support as a warning, which does not fail the run', async () => {
    await start(HEALTHY);
    const legacy = json('functions.json').items[0];
    cluster.api.put({ apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', ...legacy, metadata: { name: 'legacy', namespace: 'team-a' }, spec: { ...legacy.spec, runtime: 'nodejs20' } });
    const report = await preflight();
    expect(report.ok).toBe(true);
    expect(report.checks.filter(c => c.id === CheckId.RUNTIME_SUPPORT)).toEqual([{
      id: 'runtime-support',
      title: 'runtime support',
      status: 'warn',
      detail: '1 Function on a runtime past or near its end of support: team-a/legacy (nodejs20, support ended April 2026)',
      fix: 'nodejs20 reached the end of its support in April 2026 (upstream\'s runtime deprecation schedule, '
        + 'https://github.com/kyma-project/serverless/blob/1.13.0/docs/user/00-90-runtime-deprecation-schedule.md); release 1.11.1 still runs it; '
        + 'move to release 1.13.0 and nodejs24',
    }]);
    // On 1 December 2026 the support of nodejs22, which the other Functions run on, has ended too; 1.11.1 has no newer Node.js.
    const later = await preflight({ now: new Date('2026-12-01T00:00:00Z') });
    expect(later.checks.find(c => c.id === CheckId.RUNTIME_SUPPORT)?.detail).toBe('2 Functions on a runtime past or near its end of support: '
      + 'team-a/legacy (nodejs20, support ended April 2026), team-b/orders (nodejs22, support ended November 2026)');
    const { stdout, exitCode } = await command(['preflight']);
    expect(exitCode).toBeUndefined();
    expect(stdout).toMatch(/\nwarn {4}runtime support {9}1 Function on a runtime past or near its end of support: team-a\/legacy \(nodejs20, support ended April 2026\)\n {8}fix: nodejs20 reached/);
    expect(stdout).toMatch(/\n\nPreflight passed \(12 passed, 0 failed, 1 warned\)\.\n$/);
  });

  test('the command exits 0 on a healthy cluster', async () => {
    await start(HEALTHY);
    const { stdout, exitCode } = await command(['preflight']);
    expect(exitCode).toBeUndefined();
    expect(stdout).toMatch(/^Checked for Serverless 1\.11\.1, build-based \(from the cluster's Function CRD\)\.\n\nRESULT {2}CHECK {19}DETAIL\npass {4}server version {10}v1\.29\.4 \(needs 1\.27 or later\)\n/);
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
    expect(Object.keys(report)).toEqual(['ok', 'release', 'checks']);
    expect(report.release).toEqual({ release: '1.11.1', source: 'cluster', cluster: '1.11.1' });
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

  describe('under Serverless 1.13.0 (buildless)', () => {
    const registrySecret = (namespace: string) => ({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: PACKAGE_REGISTRY_SECRET, namespace },
      data: { '.npmrc': Buffer.from('registry=https://mirror.example.com/\n//mirror.example.com/:_authToken=s3cr3t\n').toString('base64') },
    });

    test('reads the release from the cluster\'s Function CRD, checks no build Jobs or registry, and whether Function Pods reach the package registry', async () => {
      await start(HEALTHY, BUILDLESS);
      const report = await preflight();
      expect(report.release).toEqual({ release: ServerlessRelease.V1_13_0, source: ReleaseSource.CLUSTER, cluster: ServerlessRelease.V1_13_0 });
      expect(report.checks.map(c => [c.status, c.title])).toEqual([
        ['pass', 'server version'],
        ['pass', 'istio injector'],
        ['pass', 'istio-injection team-a'],
        ['pass', 'istio-injection team-b'],
        ['fail', 'package registry team-a'],
        ['pass', 'package registry team-b'],
        ['pass', 'function crd'],
        ['pass', 'priority class'],
      ]);
      expect(check(report, 'package registry team-a')).toMatchObject({
        id: CheckId.PACKAGE_REGISTRY, namespace: 'team-a',
        detail: 'no Secret serverless-package-registry-config: Functions install from the public registries (registry.npmjs.org, pypi.org) at every Pod start; '
          + 'NetworkPolicy allow-dns, default-deny-egress blocks 443/TCP to the registry for the Pods of Function hello: '
          + 'npm install / pip install fail at Pod start, and the Pods never become ready',
        fix: expect.stringMatching(/^add an egress rule for the Function Pods .* to 443\/TCP .* in namespace team-a; or create Secret serverless-package-registry-config in team-a /),
      });
      expect(check(report, 'package registry team-b').detail).toMatch(/; no NetworkPolicy limits the egress of Function Pods$/);
      const { stdout } = await command(['preflight']);
      expect(stdout).toMatch(/^Checked for Serverless 1\.13\.0, buildless: no build Jobs or registry; dependencies install at Pod start \(from the cluster's Function CRD\)\.\n/);
      // Reads the namespaces' NetworkPolicies, and Secrets by the one name only.
      const paths = cluster.api.requests.map(r => r.path.split('?')[0]);
      expect(paths).toContain('/apis/networking.k8s.io/v1/namespaces/team-a/networkpolicies');
      expect(paths.filter(p => p.includes('/secrets')).every(p => p.endsWith(`/secrets/${PACKAGE_REGISTRY_SECRET}`))).toBe(true);
    }, 30_000); // the fake API server over HTTP: seconds on a busy machine

    test('the registry Secret passes the namespace, with a caution when policies limit egress; its content is never printed', async () => {
      await start(HEALTHY, BUILDLESS);
      cluster.api.put(registrySecret('team-a'));
      const report = await preflight();
      expect(check(report, 'package registry team-a')).toMatchObject({
        status: CheckStatus.PASS,
        detail: expect.stringMatching(/^Secret serverless-package-registry-config is there: .*; NetworkPolicy allow-dns, default-deny-egress blocks 443\/TCP .*make sure they allow the mirror the Secret names$/),
      });
      const { stdout } = await command(['preflight', '-o', 'json']);
      expect(stdout).not.toMatch(/s3cr3t|mirror\.example\.com|npmrc"/);
    }, 30_000); // the fake API server over HTTP: seconds on a busy machine

    test('passes a namespace whose policies let Function Pods out on 443 through an ipBlock, and ignores policies for other Pods', async () => {
      await start(HEALTHY, BUILDLESS);
      cluster.api.put({
        apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'allow-registry', namespace: 'team-a' },
        spec: {
          podSelector: { matchLabels: { 'serverless.kyma-project.io/managed-by': 'function-controller' } }, policyTypes: ['Egress'],
          egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] } }], ports: [{ port: 443 }] }],
        },
      });
      cluster.api.put({
        apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'lock-db', namespace: 'team-b' },
        spec: { podSelector: { matchLabels: { app: 'db' } }, policyTypes: ['Egress'] },
      });
      const report = await preflight();
      expect(check(report, 'package registry team-a')).toMatchObject({
        status: CheckStatus.PASS, detail: expect.stringMatching(/; NetworkPolicy allow-dns, allow-registry, default-deny-egress lets Function Pods out on 443\/TCP and to DNS$/),
      });
      expect(check(report, 'package registry team-b').status).toBe(CheckStatus.PASS);
    }, 30_000); // the fake API server over HTTP: seconds on a busy machine

    test('--release 1.13.0 checks a 1.11.1 cluster for the move, and the Function CRD in the manifests names the release too', async () => {
      await start(HEALTHY);
      const report = await preflight({ release: '1.13.0' });
      expect(report.release).toEqual({ release: ServerlessRelease.V1_13_0, source: ReleaseSource.GIVEN, cluster: ServerlessRelease.V1_11_1 });
      expect(report.checks.some(c => c.id === CheckId.LIMIT_RANGE || c.id === CheckId.NODE_PORT)).toBe(false);
      expect(report.checks.filter(c => c.id === CheckId.PACKAGE_REGISTRY).map(c => c.status)).toEqual(['pass', 'pass']);
      expect(formatReport(report).split('\n')[0]).toBe('Checked for Serverless 1.13.0, buildless: no build Jobs or registry; dependencies install at Pod start '
        + '(from --release); the cluster\'s Function CRD is of 1.11.1: applying moves it to 1.13.0 (see docs/changing-a-running-system.md).');

      const manifests = fs.mkdtempSync(path.join(dir, 'manifests-'));
      const crd = JSON.parse(fs.readFileSync(path.join(BUILDLESS, 'customresourcedefinition-functions.json'), 'utf8'));
      fs.writeFileSync(path.join(manifests, '0000-serverless.k8s.yaml'), stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd }));
      expect((await preflight({ manifests })).release).toEqual({
        release: ServerlessRelease.V1_13_0, source: ReleaseSource.MANIFESTS, file: path.join(manifests, '0000-serverless.k8s.yaml'), cluster: ServerlessRelease.V1_11_1,
      });
      await expect(preflight({ manifests, release: '1.11.1' })).rejects.toThrow(/^--release 1\.11\.1 differs from the release of the Function CRD in .*0000-serverless\.k8s\.yaml \(1\.13\.0\)/);
      await expect(preflight({ release: '2' })).rejects.toThrow(/^--release \(2\) is no release this package deploys/);
    }, 30_000); // the fake API server over HTTP: seconds on a busy machine
  });

  test('-n checks that one namespace only', async () => {
    await start(HEALTHY);
    const report = await preflight({ namespace: 'team-b' });
    expect([...new Set(report.checks.filter(c => c.namespace).map(c => c.namespace))]).toEqual(['team-b']);
    // The Functions of that namespace only, for the runtime support check; none of the others'.
    expect(cluster.api.requestsOf('GET', /\/functions$/).map(r => r.path)).toEqual(['/apis/serverless.kyma-project.io/v1alpha2/namespaces/team-b/functions']);
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

  describe('what the manifests declare to reach Functions', () => {
    const reachChecks = (report: PreflightReport) => report.checks.slice(12);
    /** A copy of the reach manifests in a folder of its own, each file changed by `edit`. */
    function manifests(edit: (file: string, text: string) => string | undefined = (_, text) => text): string {
      const copy = fs.mkdtempSync(path.join(dir, 'manifests-'));
      for (const file of fs.readdirSync(REACH_MANIFESTS)) {
        const text = edit(file, fs.readFileSync(path.join(REACH_MANIFESTS, file), 'utf8'));
        if (text !== undefined) fs.writeFileSync(path.join(copy, file), text);
      }
      return copy;
    }
    const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;

    test('the repository\'s dist/, as synth writes it, needs the APIRule and Subscription CRDs, Kyma\'s gateway and the publisher proxy', async () => {
      await start(HEALTHY, REACH);
      const report = await preflight({ manifests: path.join(__dirname, '..', '..', 'dist') });
      const reach = report.checks.slice(12);
      expect(reach.map(c => [c.id, c.status])).toEqual([
        ['apirule-crd', 'pass'], ['eventing-crd', 'pass'], ['istio-gateway', 'pass'], ['publisher-proxy', 'pass'],
      ]);
      expect(reach.find(c => c.id === 'istio-gateway')!.detail).toMatch(/kyma-system\/kyma-gateway exists.*APIRule default-functions\/hello-node/);
    });

    test('a cluster with everything they need passes every check, after the cluster\'s', async () => {
      await start(HEALTHY, REACH);
      const report = await preflight({ manifests: REACH_MANIFESTS });
      expect(report.ok).toBe(true);
      expect(report.checks.slice(0, 12).map(c => c.id)).toEqual([
        'server-version', 'istio-injector', 'namespace-injection', 'namespace-injection', 'limitrange', 'limitrange', 'quota', 'quota',
        'storage-class', 'node-port', 'function-crd', 'priority-class',
      ]);
      const manifest = (file: string) => path.join(REACH_MANIFESTS, file);
      expect(reachChecks(report)).toEqual([
        { id: 'apirule-crd', title: 'crd APIRule', status: 'pass', detail: 'apirules.gateway.kyma-project.io serves v2 (1 APIRule in the manifests)' },
        { id: 'istio-crd', title: 'crd VirtualService', status: 'pass', detail: 'virtualservices.networking.istio.io serves v1beta1 (1 VirtualService in the manifests)' },
        { id: 'istio-crd', title: 'crd Gateway (Istio)', status: 'pass', detail: 'gateways.networking.istio.io serves v1beta1 (1 Gateway in the manifests)' },
        {
          id: 'istio-crd', title: 'crd RequestAuthentication', status: 'pass',
          detail: 'requestauthentications.security.istio.io serves v1 (1 RequestAuthentication in the manifests)',
        },
        { id: 'istio-crd', title: 'crd AuthorizationPolicy', status: 'pass', detail: 'authorizationpolicies.security.istio.io serves v1 (1 AuthorizationPolicy in the manifests)' },
        { id: 'gateway-api-crd', title: 'crd HTTPRoute', status: 'pass', detail: 'httproutes.gateway.networking.k8s.io serves v1 (1 HTTPRoute in the manifests)' },
        { id: 'eventing-crd', title: 'crd Subscription', status: 'pass', detail: 'subscriptions.eventing.kyma-project.io serves v1alpha2 (1 Subscription in the manifests)' },
        { id: 'cert-manager-crd', title: 'crd Certificate', status: 'pass', detail: 'certificates.cert-manager.io serves v1 (1 Certificate in the manifests)' },
        {
          id: 'istio-gateway', title: 'gateway istio-system/functions', status: 'pass',
          detail: `Istio Gateway istio-system/functions is in the manifests (${manifest('0000-serverless.k8s.yaml')}), for VirtualService team-a/orders`,
        },
        { id: 'istio-gateway', title: 'gateway kyma-system/kyma-gateway', status: 'pass', detail: 'Istio Gateway kyma-system/kyma-gateway exists, for APIRule team-a/hello' },
        { id: 'gateway-api-gateway', title: 'gateway infra/public', status: 'pass', detail: 'Gateway infra/public exists and admits HTTPRoute team-a/catalog' },
        {
          id: 'publisher-proxy', title: 'publisher proxy', status: 'pass',
          detail: 'Service kyma-system/eventing-publisher-proxy exists: Functions publish events to '
            + `http://eventing-publisher-proxy.kyma-system.svc.cluster.local/publish (set in ${manifest('0000-serverless.k8s.yaml')})`,
        },
      ]);
      expect(cluster.api.requests.every(r => r.method === 'GET')).toBe(true);
    });

    test('done when: a cluster without their CRDs fails a check per kind, each with the module or project to install', async () => {
      await start(HEALTHY);
      const { stdout, exitCode } = await command(['preflight', '--manifests', manifests()]);
      expect(exitCode).toBe(1);
      const lines = stdout.split('\n');
      expect(lines.slice(lines.findIndex(l => l.startsWith('fail    crd APIRule')))).toEqual([
        'fail    crd APIRule                       apirules.gateway.kyma-project.io is not installed; APIRule team-a/hello needs gateway.kyma-project.io/v2',
        '        fix: add Kyma\'s api-gateway module (kyma alpha add module api-gateway)',
        'fail    crd VirtualService                virtualservices.networking.istio.io is not installed; VirtualService team-a/orders needs networking.istio.io/v1beta1',
        '        fix: install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio)',
        'fail    crd Gateway (Istio)               gateways.networking.istio.io is not installed; Gateway istio-system/functions needs networking.istio.io/v1beta1',
        '        fix: install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio)',
        'fail    crd RequestAuthentication         requestauthentications.security.istio.io is not installed; RequestAuthentication team-a/orders needs security.istio.io/v1',
        '        fix: install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio)',
        'fail    crd AuthorizationPolicy           authorizationpolicies.security.istio.io is not installed; AuthorizationPolicy team-a/orders needs security.istio.io/v1',
        '        fix: install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio)',
        'fail    crd HTTPRoute                     httproutes.gateway.networking.k8s.io is not installed; HTTPRoute team-a/catalog needs gateway.networking.k8s.io/v1',
        '        fix: install the Gateway API CRDs (kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml)',
        'fail    crd Subscription                  subscriptions.eventing.kyma-project.io is not installed; Subscription team-a/hello-order-created needs eventing.kyma-project.io/v1alpha2',
        '        fix: add Kyma\'s eventing module and a backend for it (kyma alpha add module eventing; kyma alpha add module nats)',
        'fail    crd Certificate                   certificates.cert-manager.io is not installed; Certificate istio-system/functions-tls needs cert-manager.io/v1',
        '        fix: install cert-manager (helm install cert-manager jetstack/cert-manager -n cert-manager --create-namespace --set crds.enabled=true)',
        expect.stringMatching(/^pass {4}gateway istio-system\/functions {4}Istio Gateway istio-system\/functions is in the manifests \(.*0000-serverless\.k8s\.yaml\), for VirtualService team-a\/orders$/),
        'fail    gateway kyma-system/kyma-gateway  the cluster does not serve Istio\'s Gateway kind, so Istio Gateway kyma-system/kyma-gateway does not exist; APIRule team-a/hello names it',
        '        fix: install Istio (istioctl install) or add Kyma\'s istio module (kyma alpha add module istio), then create Istio Gateway kyma-system/kyma-gateway',
        'fail    gateway infra/public              the cluster does not serve the Gateway API\'s Gateway kind, so Gateway infra/public does not exist; HTTPRoute team-a/catalog names it as parent',
        '        fix: install the Gateway API CRDs (kubectl apply -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml) '
          + 'and a Gateway implementation, then create Gateway infra/public',
        expect.stringMatching(/^fail {4}publisher proxy {19}Service kyma-system\/eventing-publisher-proxy does not exist: Functions cannot publish events to http:\/\/eventing-publisher-proxy\.kyma-system\.svc\.cluster\.local\/publish \(set in .*\), and Subscription team-a\/hello-order-created needs Kyma's eventing$/),
        '        fix: add Kyma\'s eventing module and a backend for it (kyma alpha add module eventing; kyma alpha add module nats): it runs the publisher proxy; '
          + 'or set the ServerlessStack\'s controller.publisherProxyAddress to yours',
        '',
        'Preflight failed (13 passed, 11 failed): apply the fixes above and run it again.',
        '',
      ]);
    });

    test('ScaledObjects need KEDA\'s CRD: passes where KEDA is installed, fails with how to install it where not', async () => {
      await start(HEALTHY, KEDA);
      const installed = await preflight({ manifests: KEDA_MANIFESTS });
      expect(installed.ok).toBe(true);
      expect(reachChecks(installed)).toEqual([
        { id: 'keda-crd', title: 'crd ScaledObject', status: 'pass', detail: 'scaledobjects.keda.sh serves v1alpha1 (1 ScaledObject in the manifests)' },
      ]);
      await cluster.close();

      await start(HEALTHY);
      const { stdout, exitCode } = await command(['preflight', '--manifests', KEDA_MANIFESTS]);
      expect(exitCode).toBe(1);
      const lines = stdout.split('\n');
      expect(lines.slice(lines.findIndex(l => l.startsWith('fail    crd ScaledObject')))).toEqual([
        'fail    crd ScaledObject        scaledobjects.keda.sh is not installed; ScaledObject team-a/orders needs keda.sh/v1alpha1',
        '        fix: install KEDA (helm repo add kedacore https://kedacore.github.io/charts && helm install keda kedacore/keda -n keda --create-namespace)',
        '',
        'Preflight failed (12 passed, 1 failed): apply the fixes above and run it again.',
        '',
      ]);
    });

    test('-o json gives the new checks their ids', async () => {
      await start(HEALTHY);
      const { stdout } = await command(['-o', 'json', 'preflight', '--manifests', REACH_MANIFESTS]);
      const report = JSON.parse(stdout) as PreflightReport;
      expect(report.checks.filter(c => c.status === 'fail').map(c => [c.id, c.title])).toEqual([
        ['apirule-crd', 'crd APIRule'], ['istio-crd', 'crd VirtualService'], ['istio-crd', 'crd Gateway (Istio)'], ['istio-crd', 'crd RequestAuthentication'],
        ['istio-crd', 'crd AuthorizationPolicy'], ['gateway-api-crd', 'crd HTTPRoute'], ['eventing-crd', 'crd Subscription'], ['cert-manager-crd', 'crd Certificate'],
        ['istio-gateway', 'gateway kyma-system/kyma-gateway'], ['gateway-api-gateway', 'gateway infra/public'], ['publisher-proxy', 'publisher proxy'],
      ]);
      expect(report.checks.find(c => c.id === 'publisher-proxy')).toMatchObject({ fix: expect.stringContaining('kyma alpha add module eventing') });
    });

    test('fails when Kyma\'s APIRule CRD does not serve v2 (an api-gateway module older than 3.0)', async () => {
      await start(HEALTHY, REACH);
      const crd = cluster.api.get(crdPath('apirules.gateway.kyma-project.io'))!;
      crd.spec.versions = [{ ...crd.spec.versions[0], storage: true }];
      cluster.api.put(crd);
      const report = await preflight({ manifests: REACH_MANIFESTS });
      expect(failures(report)).toEqual([{
        id: CheckId.APIRULE_CRD, title: 'crd APIRule', status: CheckStatus.FAIL,
        detail: 'apirules.gateway.kyma-project.io does not serve v2 (versions: v1beta1 (storage)); APIRule team-a/hello needs gateway.kyma-project.io/v2',
        fix: 'upgrade Kyma\'s api-gateway module to a release that serves gateway.kyma-project.io/v2 (release 3.0 and later serve v2)',
      }]);
    });

    test('fails when a Gateway the manifests name neither exists nor is in the manifests, and names the ones there are', async () => {
      await start(HEALTHY, REACH);
      cluster.api.remove('/apis/networking.istio.io/v1beta1/namespaces/kyma-system/gateways/kyma-gateway');
      cluster.api.remove('/apis/gateway.networking.k8s.io/v1/namespaces/infra/gateways/public');
      const renamed = manifests((_file, text) => text.replace('istio-system/functions', 'istio-system/public').replace(/name: public\n/g, 'name: shared\n'));
      const report = await preflight({ manifests: renamed });
      expect(failures(report)).toEqual([
        expect.objectContaining({
          id: CheckId.ISTIO_GATEWAY, title: 'gateway istio-system/public',
          detail: 'Istio Gateway istio-system/public does not exist (the cluster has no Istio Gateway); VirtualService team-a/orders names it',
          fix: 'create Istio Gateway istio-system/public with a server for the endpoints\' hosts, or expose them through an existing Gateway (gateway: \'kyma-system/kyma-gateway\')',
        }),
        expect.objectContaining({
          id: CheckId.ISTIO_GATEWAY, title: 'gateway kyma-system/kyma-gateway',
          detail: 'Istio Gateway kyma-system/kyma-gateway does not exist (the cluster has no Istio Gateway); APIRule team-a/hello names it',
          fix: 'add Kyma\'s api-gateway module (kyma alpha add module api-gateway), with its Kyma Gateway enabled (the APIGateway CR\'s spec.enableKymaGateway: true, the default)',
        }),
        expect.objectContaining({
          id: CheckId.GATEWAY_API_GATEWAY, title: 'gateway infra/shared',
          detail: 'Gateway infra/shared does not exist (the cluster has no Gateway); HTTPRoute team-a/catalog names it as parent',
          fix: 'create Gateway infra/shared (gateway.networking.k8s.io/v1) with a listener for the routes\' hostnames, or name an existing one in the routes\' parentRefs',
        }),
      ]);
      // The Istio Gateway istio-system/functions of the manifests is no longer named: its check is gone.
      expect(report.checks.some(c => c.title === 'gateway istio-system/functions')).toBe(false);
    });

    test('fails when the Gateway admits no routes of the namespace, by the labels of the cluster\'s Namespace and the manifests\'', async () => {
      await start(HEALTHY, REACH);
      const unlabelled = manifests((_file, text) => text.replace('    gateway-access: public\n', ''));
      expect(failures(await preflight({ manifests: unlabelled }))).toEqual([expect.objectContaining({
        id: CheckId.GATEWAY_API_GATEWAY,
        detail: 'Gateway infra/public exists, but no listener admits HTTPRoute team-a/catalog from namespace team-a (https: HTTPS, from Selector)',
        fix: 'let a listener admit HTTPRoutes from namespace team-a (allowedRoutes.namespaces.from: All, or a Selector that matches it): '
          + 'kubectl edit gateways.gateway.networking.k8s.io public -n infra',
      })]);
      const teamA = cluster.api.get('/api/v1/namespaces/team-a')!;
      cluster.api.put({ ...teamA, metadata: { ...teamA.metadata, labels: { ...teamA.metadata!.labels, 'gateway-access': 'public' } } });
      expect((await preflight({ manifests: unlabelled })).ok).toBe(true);
    });

    test('checks the publisher proxy the running controller names when the manifests hold no controller, and skips an address outside the cluster', async () => {
      await start(HEALTHY, REACH);
      const functionsOnly = manifests(file => (file.startsWith('0000') ? undefined : fs.readFileSync(path.join(REACH_MANIFESTS, file), 'utf8')));
      const deploymentPath = '/apis/apps/v1/namespaces/kyma-system/deployments/serverless-ctrl-mngr';
      const deployment = cluster.api.get(deploymentPath)!;
      deployment.spec.template.spec.containers[0].env.find((e: any) => e.name === 'APP_FUNCTION_PUBLISHER_PROXY_ADDRESS').value = 'http://publisher.eventing/publish';
      cluster.api.put(deployment);
      const check = (report: PreflightReport) => report.checks.find(c => c.id === CheckId.PUBLISHER_PROXY);
      expect(check(await preflight({ manifests: functionsOnly }))).toEqual({
        id: CheckId.PUBLISHER_PROXY, title: 'publisher proxy', status: CheckStatus.FAIL,
        detail: 'Service eventing/publisher does not exist: Functions cannot publish events to http://publisher.eventing/publish '
          + '(set by Deployment kyma-system/serverless-ctrl-mngr in the cluster), and Subscription team-a/hello-order-created needs Kyma\'s eventing',
        fix: 'add Kyma\'s eventing module and a backend for it (kyma alpha add module eventing; kyma alpha add module nats): it runs the publisher proxy; '
          + 'or set the ServerlessStack\'s controller.publisherProxyAddress to yours',
      });
      cluster.api.remove(deploymentPath);
      expect(check(await preflight({ manifests: functionsOnly }))).toMatchObject({ status: CheckStatus.PASS, detail: expect.stringMatching(/\(upstream's default\)$/) });
      const outside = manifests((_file, text) => text.replace('http://eventing-publisher-proxy.kyma-system.svc.cluster.local/publish', 'https://events.example.com/publish'));
      expect(check(await preflight({ manifests: outside }))).toMatchObject({ status: CheckStatus.SKIP });
    });

    test('reads dist when it exists, nothing with --no-manifests, and refuses a folder that does not exist or does not parse', async () => {
      await start(HEALTHY);
      const cwd = process.cwd();
      const project = fs.mkdtempSync(path.join(dir, 'project-'));
      fs.cpSync(REACH_MANIFESTS, path.join(project, 'dist'), { recursive: true });
      try {
        process.chdir(project);
        expect((await preflight({ manifests: undefined })).checks).toHaveLength(24);
        expect((await preflight({ manifests: false })).checks).toHaveLength(12);
        fs.rmSync(path.join(project, 'dist'), { recursive: true });
        expect((await preflight({ manifests: undefined })).checks).toHaveLength(12);
      } finally {
        process.chdir(cwd);
      }
      await expect(preflight({ manifests: path.join(project, 'dist') })).rejects.toThrow(new CliError(
        `No folder ${path.join(project, 'dist')}: give --manifests the folder synth writes to, such as dist (or dist/prod), or --no-manifests`,
      ));
      const broken = manifests((file, text) => (file.startsWith('0001') ? text.replace('kind: HTTPRoute', 'kind: [HTTPRoute') : text));
      await expect(preflight({ manifests: broken })).rejects.toThrow(/^Cannot read the manifests of .* \(kyma-serverless validate .* checks more\):\n {2}.*0001-team-a\.k8s\.yaml: document 10 does not parse: /);
      // Only what the checks need is read: no Gateways with --no-manifests, or when the manifests create every one named.
      expect(cluster.api.requestsOf('GET', /gateways$/).map(r => r.path)).toEqual([
        '/apis/networking.istio.io/v1beta1/gateways', '/apis/gateway.networking.k8s.io/v1/gateways',
      ]);
    });

    test('a stack with monitoring needs the Prometheus Operator\'s CRDs: each missing one fails, with kube-prometheus-stack as the fix', async () => {
      const folder = fs.mkdtempSync(path.join(dir, 'monitoring-'));
      fs.writeFileSync(path.join(folder, '0000-serverless.k8s.yaml'), synthStack({ monitoring: {} }).map(o => stringify(o)).join('---\n'));
      await start(HEALTHY);
      const missing = (await preflight({ manifests: folder })).checks.slice(12);
      expect(missing.map(c => [c.id, c.title, c.status, c.detail])).toEqual([
        ['prometheus-operator-crd', 'crd ServiceMonitor', 'fail', 'servicemonitors.monitoring.coreos.com is not installed; '
          + 'ServiceMonitor kyma-system/serverless-controller-manager and ServiceMonitor kyma-system/serverless-webhook need monitoring.coreos.com/v1'],
        ['prometheus-operator-crd', 'crd PodMonitor', 'fail', 'podmonitors.monitoring.coreos.com is not installed; '
          + 'PodMonitor kyma-system/serverless-docker-registry needs monitoring.coreos.com/v1'],
        ['prometheus-operator-crd', 'crd PrometheusRule', 'fail', expect.stringMatching(
          /^prometheusrules\.monitoring\.coreos\.com is not installed; PrometheusRule kyma-system\/serverless-monitoring-rules-[0-9a-f]{8} needs monitoring\.coreos\.com\/v1$/)],
      ]);
      for (const check of missing) {
        expect(check.fix).toBe('install the Prometheus Operator with kube-prometheus-stack, which also runs the kube-state-metrics the alerts read '
          + '(helm install prometheus prometheus-community/kube-prometheus-stack -n monitoring --create-namespace), '
          + 'or set the ServerlessStack\'s monitoring.enabled to false');
      }
      await cluster.close();

      await start(HEALTHY, MONITORING);
      const report = await preflight({ manifests: folder });
      expect(report.ok).toBe(true);
      expect(report.checks.slice(12).map(c => [c.title, c.status, c.detail])).toEqual([
        ['crd ServiceMonitor', 'pass', 'servicemonitors.monitoring.coreos.com serves v1 (2 ServiceMonitors in the manifests)'],
        ['crd PodMonitor', 'pass', 'podmonitors.monitoring.coreos.com serves v1 (1 PodMonitor in the manifests)'],
        ['crd PrometheusRule', 'pass', 'prometheusrules.monitoring.coreos.com serves v1 (1 PrometheusRule in the manifests)'],
      ]);
    });

    test('--help says what is checked from the manifests', async () => {
      const cli = program();
      if (!cli.commands.some(c => c.name() === 'preflight')) addPreflightCommand(cli);
      let help = '';
      (cli.commands.find(c => c.name() === 'preflight') as Command).exitOverride().configureOutput({ writeOut: text => { help += text; } });
      await expect(cli.parseAsync(['node', 'kyma-serverless', 'preflight', '--help'])).rejects.toMatchObject({ code: 'commander.helpDisplayed' });
      expect(help).toContain('--manifests <dir>');
      expect(help).toContain('--no-manifests');
      expect(help).toContain('(default: dist when it exists)');
      expect(help).toContain('kyma-serverless preflight --context prod --manifests dist/prod');
    });
  });
});
