import { Size, Testing } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { FunctionProfile, BuildProfile, ServerlessStack, DEFAULT_FUNCTION_PRESETS, DEFAULT_BUILD_PRESETS, functionCrdSpec, Registry } from '../../src';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { envOf, find, synthStack } from '../util/synth';

const CLUSTER_SCOPED = new Set([
  'Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration',
]);

describe('ServerlessStack with defaults', () => {
  const objects = synthStack();

  test('every object is valid against the Kubernetes 1.27 schema', () => {
    expectValidKubernetesObjects(objects);
  });

  test('renders the whole stack, namespace and CRD first', () => {
    expect(objects.map(o => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/kyma-system',
      'CustomResourceDefinition/functions.serverless.kyma-project.io',
      'PriorityClass/serverless-priority',
      'ServiceAccount/serverless-controller-manager',
      'ClusterRole/serverless',
      'ClusterRoleBinding/serverless',
      'Role/serverless-leader-election',
      'RoleBinding/serverless-leader-election',
      'ConfigMap/serverless-configuration',
      'Deployment/serverless-ctrl-mngr',
      'Service/serverless-controller-manager',
      'ConfigMap/dockerfile-nodejs20',
      'ConfigMap/dockerfile-nodejs22',
      'ConfigMap/dockerfile-python312',
      'ServiceAccount/serverless-function',
      'ConfigMap/serverless-docker-registry-config',
      'PersistentVolumeClaim/serverless-docker-registry',
      'ServiceAccount/serverless-registry-credentials',
      'Role/serverless-registry-credentials',
      'RoleBinding/serverless-registry-credentials',
      'ConfigMap/serverless-registry-credentials-script',
      expect.stringMatching(/^Job\/serverless-registry-credentials-[0-9a-f]{8}$/),
      'Deployment/serverless-docker-registry',
      'Service/serverless-docker-registry',
      'ServiceAccount/serverless-webhook',
      'Role/serverless-webhook',
      'RoleBinding/serverless-webhook',
      'ClusterRole/serverless-webhook',
      'ClusterRoleBinding/serverless-webhook',
      'ConfigMap/serverless-webhook-config',
      'ConfigMap/serverless-webhook-server',
      'Deployment/serverless-webhook',
      'PodDisruptionBudget/serverless-webhook',
      'Service/serverless-webhook',
      'MutatingWebhookConfiguration/defaulting.webhook.serverless.kyma-project.io',
      'ValidatingWebhookConfiguration/validation.webhook.serverless.kyma-project.io',
      'NetworkPolicy/kyma-project.io--serverless-default-deny',
      'NetworkPolicy/kyma-project.io--serverless-allow-egress',
      'NetworkPolicy/kyma-project.io--serverless-allow-metrics',
      'NetworkPolicy/kyma-project.io--serverless-allow-registry',
      'NetworkPolicy/kyma-project.io--serverless-allow-to-apiserver',
      'NetworkPolicy/kyma-project.io--serverless-to-dns',
      'NetworkPolicy/kyma-project.io--serverless-allow-webhook',
    ]);
  });

  test('namespaced objects are in kyma-system and cluster-scoped ones have no namespace', () => {
    for (const o of objects) {
      expect({ object: `${o.kind}/${o.metadata.name}`, namespace: o.metadata.namespace })
        .toEqual({ object: `${o.kind}/${o.metadata.name}`, namespace: CLUSTER_SCOPED.has(o.kind) ? undefined : 'kyma-system' });
    }
  });

  test('carries no Secret: credentials are made inside the cluster', () => {
    expect(objects.filter(o => o.kind === 'Secret')).toEqual([]);
    const literalSecrets = objects.flatMap(o => o.spec?.template?.spec?.containers ?? [])
      .flatMap((c: any) => c.env ?? []).filter((e: any) => /(PASSWORD|TOKEN|_SECRET)$/.test(e.name) && e.value !== undefined);
    expect(literalSecrets).toEqual([]);
  });

  test('every object carries the stack labels', () => {
    for (const o of objects) {
      expect(o.metadata.labels).toMatchObject({
        'app.kubernetes.io/part-of': 'serverless',
        'app.kubernetes.io/managed-by': 'cdk8s-kyma-serverless',
        'kyma-project.io/module': 'serverless',
      });
    }
  });

  test('the CRD is the one generated from src/api', () => {
    expect(find(objects, 'CustomResourceDefinition').spec).toEqual(functionCrdSpec());
  });

  test('the namespace enforces PSS baseline and warns on restricted, without sidecars', () => {
    expect(find(objects, 'Namespace').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn': 'restricted',
      'istio-injection': 'disabled',
    });
  });

  test('synthesizes the same bytes twice', () => {
    expect(JSON.stringify(synthStack())).toEqual(JSON.stringify(objects));
  });

  test('matches the snapshot', () => {
    // The webhook's bundle is 200 KiB of base64 that changes with every change of src/webhook/:
    // test/stack/webhook.test.ts and webhook-program.test.ts check it; here it is a placeholder.
    const program = objects.find(o => o.kind === 'ConfigMap' && o.metadata.name === 'serverless-webhook-server');
    const placeholder = { ...program, binaryData: { 'server.js.gz': '<bundle>' }, metadata: { ...program.metadata, annotations: { 'cdk8s-kyma-serverless/program-sha256': '<sha256>' } } };
    const stable = objects.map(o => (o === program ? placeholder : o)).map(o => (o.kind === 'Deployment' && o.metadata.name === 'serverless-webhook'
      ? { ...o, spec: { ...o.spec, template: { ...o.spec.template, metadata: { ...o.spec.template.metadata, annotations: { ...o.spec.template.metadata.annotations, 'checksum/program': '<sha256>' } } } } }
      : o));
    expect(stable).toMatchSnapshot();
  });

  test('exposes its resolved settings', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless');
    expect(stack.namespace).toBe('kyma-system');
    expect(stack.version).toBe('1.11.1');
    expect(stack.defaultFunctionPreset).toBe(FunctionProfile.L);
    expect(stack.defaultBuildPreset).toBe(BuildProfile.NORMAL);
    expect(stack.functionPresets).toEqual(DEFAULT_FUNCTION_PRESETS);
    expect(stack.buildPresets).toEqual(DEFAULT_BUILD_PRESETS);
    expect(stack.images.controller).toBe('europe-docker.pkg.dev/kyma-project/prod/function-controller:1.11.1');
  });
});

describe('ServerlessStack options', () => {
  test('another namespace moves every object and the controller\'s base namespace', () => {
    const objects = synthStack({ namespace: 'serverless-system' });
    expect(find(objects, 'Namespace').metadata.name).toBe('serverless-system');
    const env = envOf(find(objects, 'Deployment', 'serverless-ctrl-mngr').spec.template.spec.containers[0]);
    expect(env.APP_KUBERNETES_BASE_NAMESPACE).toBe('serverless-system');
    expect(env.APP_KUBERNETES_EXCLUDED_NAMESPACES).toBe('serverless-system,kube-node-lease,kube-public,kube-system');
    const job = find(objects, 'Job');
    expect(envOf(job.spec.template.spec.containers[0]).PUSH_REGISTRY_ADDRESS)
      .toBe('serverless-docker-registry.serverless-system.svc.cluster.local:5000');
    for (const binding of objects.filter(o => o.kind === 'ClusterRoleBinding')) expect(binding.subjects[0].namespace).toBe('serverless-system');
    const webhooks = [find(objects, 'MutatingWebhookConfiguration'), find(objects, 'ValidatingWebhookConfiguration')];
    for (const configuration of webhooks) expect(configuration.webhooks[0].clientConfig.service.namespace).toBe('serverless-system');
  });

  test('version picks the images of that release', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', { version: '1.10.0' });
    expect(stack.images.controller).toBe('europe-docker.pkg.dev/kyma-project/prod/function-controller:1.10.0');
    expect(stack.images.runtimes.python312).toBe('europe-docker.pkg.dev/kyma-project/prod/function-runtime-python312:1.10.0');
  });

  test('networkPolicies: false renders none', () => {
    expect(synthStack({ networkPolicies: false }).filter(o => o.kind === 'NetworkPolicy')).toEqual([]);
  });

  test('extra labels land on every object', () => {
    for (const o of synthStack({ labels: { team: 'platform' } })) expect(o.metadata.labels.team).toBe('platform');
  });

  test('an external registry renders no registry objects', () => {
    const objects = synthStack({ registry: Registry.external({ secretName: 'my-registry' }) });
    expect(objects.filter(o => o.metadata.name.startsWith('serverless-docker-registry'))).toEqual([]);
    expect(objects.filter(o => o.kind === 'Job')).toEqual([]);
    expectValidKubernetesObjects(objects);
  });

  test.each([
    [{ targetCpuUtilizationPercentage: 0 }, '\'targetCpuUtilizationPercentage\' (0) must be a whole number from 1 to 100'],
    [{ targetCpuUtilizationPercentage: 101 }, '\'targetCpuUtilizationPercentage\' (101) must be a whole number from 1 to 100'],
    [{ maxSimultaneousBuilds: 0 }, '\'maxSimultaneousBuilds\' (0) must be a whole number of at least 1'],
    [{ maxSimultaneousBuilds: 1.5 }, '\'maxSimultaneousBuilds\' (1.5) must be a whole number of at least 1'],
    [{ controller: { replicas: 0 } }, '\'controller.replicas\' (0) must be a whole number of at least 1'],
    [{ namespace: 'Kyma_System' }, '\'namespace\' (Kyma_System) must be a DNS-1123 label'],
    [{ images: { controller: 'function-controller' } }, 'Image \'controller\' (function-controller) must be a full image reference'],
    [{ functionPresets: { XS: { requestCpu: Cpu.millis(500), requestMemory: Size.mebibytes(64), limitCpu: Cpu.millis(100), limitMemory: Size.mebibytes(128) } } },
      '\'functionPresets.XS.requestCpu\' (500m) must be less than or equal to \'limitCpu\' (100m)'],
    [{ buildPresets: { slow: { requestCpu: Cpu.millis(100), requestMemory: Size.mebibytes(100), limitCpu: Cpu.millis(700), limitMemory: Size.mebibytes(700) } } },
      '\'buildPresets.slow.requestCpu\' (100m) must be at least 200m\n\'buildPresets.slow.requestMemory\' (100Mi) must be at least 200Mi'],
  ])('throws when given %j', (props, message) => {
    expect(() => new ServerlessStack(Testing.app(), 'serverless', props as any)).toThrow(message);
  });
});
