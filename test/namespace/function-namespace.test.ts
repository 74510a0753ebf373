import { Size, Testing } from 'cdk8s';
import { Cpu, k8s } from 'cdk8s-plus-27';
import {
  BuildProfile, FunctionNamespace, FunctionProfile, FunctionRuntime, FunctionSource, KymaFunction, PackageRegistry, PodSecurityLevel,
  ServerlessRelease, ServerlessStack,
} from '../../src';
import { GIT_INIT_LIMITS, PACKAGE_REGISTRY_SECRET_NAME } from '../../src/namespace/function-namespace';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { find } from '../util/synth';

const synth = (props: any = {}) => Testing.synth(new FunctionNamespace(Testing.app(), 'team-a', props));

describe('FunctionNamespace', () => {
  const objects = synth();

  test('every object is valid against the Kubernetes 1.27 schema', () => {
    expectValidKubernetesObjects(objects);
  });

  test('the namespace has Istio sidecar injection and PodSecurity labels, and no namespace of its own', () => {
    const namespace = find(objects, 'Namespace');
    expect(namespace.metadata.name).toBe('team-a');
    expect(namespace.metadata.namespace).toBeUndefined();
    expect(namespace.metadata.labels).toMatchObject({ 'istio-injection': 'enabled', 'pod-security.kubernetes.io/enforce': 'baseline' });
  });

  test('the LimitRange lets the largest build Job and Function preset in', () => {
    const limits = find(objects, 'LimitRange').spec.limits;
    expect(limits).toEqual([{
      type: 'Container',
      // fast build: 1700m; XL Function: 2048Mi.
      max: { cpu: '1700m', memory: '2048Mi' },
      default: { cpu: '800m', memory: '1024Mi' },
      defaultRequest: { cpu: '400m', memory: '512Mi' },
    }]);
    expect(find(objects, 'LimitRange').metadata.namespace).toBe('team-a');
  });

  test('the LimitRange follows the stack\'s presets, never going below what builds need', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', {
      buildPresets: { [BuildProfile.FAST]: { requestCpu: Cpu.units(1), requestMemory: Size.gibibytes(2), limitCpu: Cpu.units(3), limitMemory: Size.gibibytes(4) } },
    });
    const ns = new FunctionNamespace(app, 'team-b', { stack });
    expect(find(Testing.synth(ns), 'LimitRange').spec.limits[0].max).toEqual({ cpu: '3', memory: '4Gi' });
    expect(ns.maxContainerResources.cpu.amount).toBe('3');
  });

  test('name overrides the id', () => {
    expect(find(synth({ name: 'payments' }), 'Namespace').metadata.name).toBe('payments');
  });

  test('a quota that fits a build Job is rendered', () => {
    const quota = find(synth({ quota: { requestsCpu: Cpu.units(4), limitsMemory: Size.gibibytes(8), pods: 20 } }), 'ResourceQuota');
    expect(quota.spec.hard).toEqual({ 'requests.cpu': '4', 'limits.memory': '8Gi', 'pods': 20 });
    expect(quota.metadata.namespace).toBe('team-a');
  });

  test('no quota by default', () => {
    expect(objects.filter(o => o.kind === 'ResourceQuota')).toEqual([]);
  });

  test.each([
    [{ limitsCpu: Cpu.millis(1000) }, '\'quota.limitsCpu\' (1000m) leaves no room for one build Job of the largest build preset: raise it to at least 1700m'],
    [{ requestsMemory: Size.mebibytes(512) }, '\'quota.requestsMemory\' (512Mi) leaves no room for one build Job of the largest build preset: raise it to at least 1100Mi'],
    [{ pods: 1 }, '\'quota.pods\' (1) must be a whole number of at least 2'],
    [{}, '\'quota\' sets no limit'],
  ])('throws when the quota is %p', (quota, message) => {
    expect(() => synth({ quota })).toThrow(message);
  });

  test('throws when the name is not a DNS-1123 label', () => {
    expect(() => synth({ name: 'Team_A' })).toThrow('\'name\' (Team_A) must be a DNS-1123 label');
  });

  test.each(['kube-system', 'kyma-system'])('throws when the stack\'s controller copies nothing into the namespace (%s)', name => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless');
    expect(() => new FunctionNamespace(app, name, { stack })).toThrow(`'name' (${name}) is a namespace the stack's controller copies no registry credentials and Dockerfiles into`);
  });

  test('follows the stack\'s own controller.excludedNamespaces, not the default list', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', { controller: { excludedNamespaces: ['istio-system'] } });
    expect(() => new FunctionNamespace(app, 'istio-system', { stack })).toThrow('(\'controller.excludedNamespaces\'), so its Functions could never be built');
    expect(new FunctionNamespace(app, 'kube-public', { stack }).name).toBe('kube-public');
  });

  test('matches the snapshot', () => {
    expect(objects).toMatchSnapshot();
  });

  test('under release 1.11.1 it enforces baseline, has no NetworkPolicy unless asked, and refuses a package registry', () => {
    const ns = new FunctionNamespace(Testing.app(), 'team-a');
    expect(ns.podSecurityEnforce).toBe(PodSecurityLevel.BASELINE);
    expect(() => synth({ packageRegistry: PackageRegistry.fromSecret() })).toThrow('\'packageRegistry\' (serverless-package-registry-config): '
      + 'release 1.11.1 installs dependencies when it builds the image, from the public registries, and reads no package registry Secret: '
      + 'use release 1.13.0 (the stack\'s \'release\'), or remove it');
  });

  test('under release 1.11.1 egress needs no package registry: dependencies are installed by the build', () => {
    const policy = find(synth({ egress: {} }), 'NetworkPolicy');
    expect(policy.spec.egress).toHaveLength(3);
  });
});

describe('FunctionNamespace under release 1.13.0', () => {
  const V1_13_0 = ServerlessRelease.V1_13_0;
  const synth113 = (props: any = {}) => Testing.synth(new FunctionNamespace(Testing.app(), 'team-a', { release: V1_13_0, ...props }));
  const objects = synth113();
  const HELLO = 'exports.main = () => "hi"';

  test('every object is valid against the Kubernetes 1.27 schema, with every option on', () => {
    expectValidKubernetesObjects(objects);
    expectValidKubernetesObjects(synth113({
      quota: { requestsCpu: Cpu.units(2), limitsMemory: Size.gibibytes(4), pods: 10 },
      packageRegistry: PackageRegistry.fromSecret(),
      egress: { packageRegistry: [{ cidr: '10.20.0.0/16', ports: [443, 8081] }], allow: [{ cidr: '2001:db8::/64' }] },
    }));
  });

  test('the LimitRange fits the largest Function preset and the Git init container, not build presets', () => {
    expect(find(objects, 'LimitRange').spec.limits).toEqual([{
      type: 'Container',
      // XL Function: 1600m and 2048Mi; no build preset (fast build: 1700m) counts.
      max: { cpu: '1600m', memory: '2048Mi' },
      default: { cpu: '800m', memory: '1024Mi' },
      defaultRequest: { cpu: '400m', memory: '512Mi' },
    }]);
    // Small presets: the init container that clones Git sources (200m, 512Mi) sets the maximum.
    const app = Testing.app();
    const small = { requestCpu: Cpu.millis(10), requestMemory: Size.mebibytes(16), limitCpu: Cpu.millis(100), limitMemory: Size.mebibytes(128) };
    const stack = new ServerlessStack(app, 'serverless', {
      release: V1_13_0,
      functionPresets: { XS: small, S: small, M: small, L: small, XL: small } as any,
      defaultFunctionPreset: FunctionProfile.S,
    });
    const ns = new FunctionNamespace(app, 'team-b', { stack });
    expect(find(Testing.synth(ns), 'LimitRange').spec.limits[0].max).toEqual({ cpu: GIT_INIT_LIMITS.cpu.amount, memory: GIT_INIT_LIMITS.memory.asString() });
  });

  test('enforces Pod Security restricted, and baseline once a Git Function lands in it', () => {
    const labels = find(objects, 'Namespace').metadata.labels;
    expect(labels).toMatchObject({
      'istio-injection': 'enabled',
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
    const ns = new FunctionNamespace(Testing.app(), 'team-a', { release: V1_13_0 });
    new KymaFunction(ns, 'inline', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO) });
    expect(ns.podSecurityEnforce).toBe(PodSecurityLevel.RESTRICTED);
    new KymaFunction(ns, 'git', {
      runtime: FunctionRuntime.NODEJS_22,
      source: FunctionSource.fromGitRepository({ url: 'https://github.com/kyma-project/serverless.git', baseDir: 'examples/hello', reference: 'main' }),
    });
    expect(ns.podSecurityEnforce).toBe(PodSecurityLevel.BASELINE);
    expect(find(Testing.synth(ns), 'Namespace').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted',
    });
  });

  test.each([
    [{ limitsCpu: Cpu.millis(500) }, '\'quota.limitsCpu\' (500m) leaves no room for one Function Pod of the default Function preset: raise it to at least 800m'],
    [{ requestsMemory: Size.mebibytes(256) }, '\'quota.requestsMemory\' (256Mi) leaves no room for one Function Pod of the default Function preset: raise it to at least 512Mi'],
    [{ pods: 1 }, '\'quota.pods\' (1) must be a whole number of at least 2: a Function Pod and the Pod that replaces it in a rolling update'],
  ])('throws when the quota is %p, checked without build Jobs', (quota, message) => {
    expect(() => synth113({ quota })).toThrow(message);
  });

  test('a quota below a build Job but above a Function Pod is rendered', () => {
    const quota = find(synth113({ quota: { limitsCpu: Cpu.millis(1000) } }), 'ResourceQuota');
    expect(quota.spec.hard).toEqual({ 'limits.cpu': '1000m' });
  });

  test('packageRegistry names the Secret on the Namespace, and writes no Secret', () => {
    const out = synth113({ packageRegistry: PackageRegistry.fromSecret() });
    expect(find(out, 'Namespace').metadata.annotations).toEqual({ 'cdk8s-kyma-serverless/package-registry-secret': PACKAGE_REGISTRY_SECRET_NAME });
    expect(out.filter(o => o.kind === 'Secret')).toEqual([]);
  });

  test('fails when the chart declares the package registry Secret with its content', () => {
    const ns = new FunctionNamespace(Testing.app(), 'team-a', { release: V1_13_0, packageRegistry: PackageRegistry.fromSecret() });
    new k8s.KubeSecret(ns, 'Registry', { metadata: { name: PACKAGE_REGISTRY_SECRET_NAME }, stringData: { '.npmrc': '//registry.example.com/:_authToken=x' } });
    expect(() => Testing.synth(ns)).toThrow('[team-a] team-a/Registry: the Secret serverless-package-registry-config holds the package registry\'s credentials, '
      + 'which must not be written to Git');
  });

  test('egress limits the Function Pods to DNS, istiod, Kyma\'s eventing and tracing, the package registry and what is allowed', () => {
    const policy = find(synth113({ egress: { packageRegistry: [{ cidr: '10.20.0.0/16' }], allow: [{ cidr: '192.0.2.10/32', ports: [5432] }] } }), 'NetworkPolicy');
    expect(policy.spec.podSelector).toEqual({
      matchLabels: { 'serverless.kyma-project.io/managed-by': 'function-controller', 'serverless.kyma-project.io/resource': 'deployment' },
    });
    expect(policy.spec.policyTypes).toEqual(['Egress']);
    const byPorts = policy.spec.egress.map((rule: any) => [rule.to, rule.ports.map((p: any) => `${p.protocol}/${p.port}`).join(',')]);
    expect(byPorts).toEqual([
      [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], 'UDP/53,TCP/53'],
      [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'istio-system' } }, podSelector: { matchLabels: { app: 'istiod' } } }], 'TCP/15012'],
      [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kyma-system' } } }], 'TCP/8080,TCP/4317,TCP/4318'],
      [[{ ipBlock: { cidr: '10.20.0.0/16' } }], 'TCP/443'],
      [[{ ipBlock: { cidr: '192.0.2.10/32' } }], 'TCP/5432'],
    ]);
  });

  test('throws when egress gives no package registry, saying why the public registries cannot be named', () => {
    expect(() => synth113({ egress: {} })).toThrow('\'egress.packageRegistry\' is not given: under release 1.13.0 Function Pods install their dependencies '
      + 'at every start, from registry.npmjs.org and pypi.org');
    expect(() => synth113({ egress: { packageRegistry: [] } })).not.toThrow();
  });

  test.each([
    [{ packageRegistry: [{ cidr: 'registry.npmjs.org' }] }, '\'egress.packageRegistry[0].cidr\' (registry.npmjs.org) is not a CIDR'],
    [{ packageRegistry: [], allow: [{ cidr: '10.0.0.300/32' }] }, '\'egress.allow[0].cidr\' (10.0.0.300/32) is not a CIDR'],
    [{ packageRegistry: [{ cidr: '10.0.0.0/8', ports: [70000] }] }, '\'egress.packageRegistry[0].ports\' (70000) must be a port number'],
  ])('throws when egress is %p', (egress, message) => {
    expect(() => synth113({ egress })).toThrow(message);
  });

  test('Functions may run in a namespace the 1.11.1 controller excludes, but not in the stack\'s own', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', { release: V1_13_0 });
    expect(new FunctionNamespace(app, 'kube-public', { stack }).name).toBe('kube-public');
    expect(() => new FunctionNamespace(app, 'kyma-system', { stack })).toThrow('\'name\' (kyma-system) is the stack\'s own namespace');
  });
});
