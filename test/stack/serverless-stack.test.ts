import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration, Size, Testing } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { stringify } from 'yaml';
import { FunctionProfile, BuildProfile, ServerlessStack, Registry, ServerlessRelease } from '../../src';
import { DEFAULT_FUNCTION_PRESETS, DEFAULT_BUILD_PRESETS, functionCrdSpec } from '../../src/api';
import { validateManifests } from '../../src/policy/manifests';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { envOf, find, synthStack } from '../util/synth';

const CLUSTER_SCOPED = new Set([
  'Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration',
]);

/**
 * The output with the webhook's bundle as a placeholder: it is 200 KiB of base64 that changes with
 * every change of src/webhook/; test/stack/webhook.test.ts and webhook-program.test.ts check it.
 */
function withoutWebhookBundle(objects: any[]): any[] {
  const program = objects.find(o => o.kind === 'ConfigMap' && o.metadata.name === 'serverless-webhook-server');
  const placeholder = { ...program, binaryData: { 'server.js.br': '<bundle>' }, metadata: { ...program.metadata, annotations: { 'cdk8s-kyma-serverless/program-sha256': '<sha256>' } } };
  return objects.map(o => (o === program ? placeholder : o)).map(o => (o.kind === 'Deployment' && o.metadata.name === 'serverless-webhook'
    ? { ...o, spec: { ...o.spec, template: { ...o.spec.template, metadata: { ...o.spec.template.metadata, annotations: { ...o.spec.template.metadata.annotations, 'checksum/program': '<sha256>' } } } } }
    : o));
}

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
    expect(withoutWebhookBundle(objects)).toMatchSnapshot();
  });

  test('exposes its resolved settings', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless');
    expect(stack.namespace).toBe('kyma-system');
    expect(stack.systemNamespace).toBe('kyma-system');
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
    [{ functionPresets: { XXL: DEFAULT_FUNCTION_PRESETS.XL } }, '\'functionPresets.XXL\' names no function profile: use one of XS, S, M, L, XL'],
    [{ buildPresets: { quick: DEFAULT_BUILD_PRESETS.fast } }, '\'buildPresets.quick\' names no build profile: use one of local-dev, slow, normal, fast'],
  ])('throws when given %j', (props, message) => {
    expect(() => new ServerlessStack(Testing.app(), 'serverless', props as any)).toThrow(message);
  });
});

describe('ServerlessStack of release 1.13.0 (buildless)', () => {
  const V1_13_0 = { release: ServerlessRelease.V1_13_0 };
  const objects = synthStack(V1_13_0);

  test('every object is valid against the Kubernetes 1.27 schema', () => {
    expectValidKubernetesObjects(objects);
  });

  test('renders the controller with its two configuration files, the webhook and the policies: nothing of a build pipeline', () => {
    expect(objects.map(o => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/kyma-system',
      'CustomResourceDefinition/functions.serverless.kyma-project.io',
      'PriorityClass/serverless-priority',
      'ServiceAccount/serverless-controller-manager',
      'ClusterRole/serverless',
      'ClusterRoleBinding/serverless',
      'Role/serverless-leader-election',
      'RoleBinding/serverless-leader-election',
      'ConfigMap/serverless-config',
      'ConfigMap/serverless-log-config',
      'Deployment/serverless-ctrl-mngr',
      'Service/serverless-controller-manager',
      // The one-time clean-up of what a 1.11.1 stack left behind (src/stack/build-mode-cleanup.ts).
      'ServiceAccount/serverless-build-mode-cleanup',
      'ClusterRole/serverless-build-mode-cleanup',
      'Role/serverless-build-mode-cleanup',
      'ClusterRoleBinding/serverless-build-mode-cleanup',
      'RoleBinding/serverless-build-mode-cleanup',
      'ConfigMap/serverless-build-mode-cleanup-script',
      expect.stringMatching(/^Job\/serverless-build-mode-cleanup-[0-9a-f]{8}$/),
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
      'NetworkPolicy/kyma-project.io--serverless-allow-to-apiserver',
      'NetworkPolicy/kyma-project.io--serverless-to-dns',
      'NetworkPolicy/kyma-project.io--serverless-allow-webhook',
    ]);
  });

  test('nothing of the registry, the build Jobs or the runtime Dockerfiles is there, under any name, but the clean-up of them', () => {
    const cleanup = (o: any) => o.metadata.name.startsWith('serverless-build-mode-cleanup');
    const text = JSON.stringify(objects.filter(o => !cleanup(o)));
    expect(objects.filter(o => !cleanup(o) &&  ['Job', 'PersistentVolumeClaim', 'Secret', 'HorizontalPodAutoscaler'].includes(o.kind))).toEqual([]);
    expect(text).not.toMatch(/docker-registry|registry-config-default|registry-credentials|dockerfile-|kaniko|function-build-init|serverless-function"/);
    expect(objects.some(o => o.metadata.labels?.['serverless.kyma-project.io/config'])).toBe(false);
  });

  test('every image is upstream\'s 1.13.0, and the Function CRD names the release', () => {
    const images = objects.flatMap(o => o.spec?.template?.spec?.containers ?? []).map((c: any) => c.image);
    // The controller; the clean-up Job and the webhook server run on the official Node.js image.
    expect(images).toEqual([
      'europe-docker.pkg.dev/kyma-project/prod/function-buildless-controller:1.13.0', 'docker.io/library/node:22.12.0-alpine3.20', 'docker.io/library/node:22.12.0-alpine3.20',
    ]);
    expect(find(objects, 'CustomResourceDefinition').metadata.annotations['cdk8s-kyma-serverless/release']).toBe('1.13.0');
    expect(find(objects, 'Deployment', 'serverless-ctrl-mngr').metadata.labels['app.kubernetes.io/version']).toBe('1.13.0');
  });

  test('the namespace enforces PSS restricted: without the registry no Pod of it needs baseline', () => {
    expect(find(objects, 'Namespace').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted',
    });
    for (const pod of objects.filter(o => o.kind === 'Deployment').map(d => d.spec.template.spec)) {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true });
      }
    }
  });

  test('synthesizes the same bytes twice', () => {
    expect(JSON.stringify(synthStack(V1_13_0))).toBe(JSON.stringify(objects));
  });

  test('passes validateManifests: schemas and security policies, with no finding', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stack-113-'));
    try {
      fs.writeFileSync(path.join(dir, 'stack.yaml'), objects.map(o => stringify(o)).join('---\n'));
      const report = validateManifests(dir);
      expect(report.objects).toBe(objects.length);
      expect(report.findings.map(f => `${f.severity} ${f.object} ${f.rule}: ${f.message}`)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('matches the snapshot', () => {
    expect(withoutWebhookBundle(objects)).toMatchSnapshot();
  });

  test('exposes its release, no registry, the controller and the CPU target Functions\' autoscalers aim at', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', { ...V1_13_0, targetCpuUtilizationPercentage: 70 });
    expect(stack.release).toBe(ServerlessRelease.V1_13_0);
    expect(stack.version).toBe('1.13.0');
    expect(stack.registry).toBeUndefined();
    expect(stack.targetCpuUtilizationPercentage).toBe(70);
    expect(new ServerlessStack(Testing.app(), 'serverless', V1_13_0).targetCpuUtilizationPercentage).toBe(50);
    expect(new ServerlessStack(Testing.app(), 'serverless').targetCpuUtilizationPercentage).toBe(50);
    expect(stack.images.controller).toBe('europe-docker.pkg.dev/kyma-project/prod/function-buildless-controller:1.13.0');
    expect(stack.images.functionInit).toBe('europe-docker.pkg.dev/kyma-project/prod/function-buildless-init:1.13.0');
    expect(stack.images.buildInit).toBeUndefined();
    expect(stack.images.runtimes.nodejs24).toBe('europe-docker.pkg.dev/kyma-project/prod/function-runtime-nodejs24:1.13.0');
    expect(stack.webhook?.release).toBe(ServerlessRelease.V1_13_0);
  });

  test('throws when targetCpuUtilizationPercentage is out of range, as under 1.11.1', () => {
    expect(() => synthStack({ ...V1_13_0, targetCpuUtilizationPercentage: 0 })).toThrow(/'targetCpuUtilizationPercentage' \(0\) must be a whole number from 1 to 100/);
  });

  test('version changes the tag of upstream\'s 1.13.0 images, not the configuration', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', { ...V1_13_0, version: '1.13.1' });
    expect(stack.images.controller).toBe('europe-docker.pkg.dev/kyma-project/prod/function-buildless-controller:1.13.1');
    expect(stack.images.runtimes.python312).toBe('europe-docker.pkg.dev/kyma-project/prod/function-runtime-python312:1.13.1');
    expect(Testing.synth(stack).some(o => o.metadata.name === 'serverless-config')).toBe(true);
  });

  describe('refuses the build pipeline\'s props, each with the reason', () => {
    const cases: [string, object, RegExp][] = [
      ['registry', { registry: Registry.internal() }, /'registry' \(\w+\) is a setting of the build pipeline, which release 1.13.0 does not have: nothing is built or pushed/],
      ['buildPresets', { buildPresets: { fast: DEFAULT_BUILD_PRESETS.fast } }, /'buildPresets' .* no build Job runs/],
      ['defaultBuildPreset', { defaultBuildPreset: BuildProfile.FAST }, /'defaultBuildPreset' \("fast"\) .* no build Job runs/],
      ['maxSimultaneousBuilds', { maxSimultaneousBuilds: 3 }, /'maxSimultaneousBuilds' \(3\) .* no build Job runs/],
      ['controller.buildExecutorArgs', { controller: { buildExecutorArgs: ['--cache=false'] } }, /'controller.buildExecutorArgs' \(\["--cache=false"\]\) .* no kaniko Job runs/],
      ['controller.excludedNamespaces', { controller: { excludedNamespaces: ['kube-system'] } },
        /'controller.excludedNamespaces' \(\["kube-system"\]\) .* copies nothing into namespaces, and runs Functions in every one/],
      ['controller.resyncPeriod', { controller: { resyncPeriod: Duration.minutes(1) } }, /'controller.resyncPeriod' .* no registry Secret, runtime Dockerfile or Function ServiceAccount/],
    ];
    test.each(cases)('throws when %s is given', (_prop, props, message) => {
      expect(() => synthStack({ ...V1_13_0, ...props })).toThrow(message);
      expect(() => synthStack({ ...V1_13_0, ...props })).toThrow(/Remove it, or deploy release 1.11.1/);
    });

    test('names every such prop at once', () => {
      expect(() => synthStack({ ...V1_13_0, maxSimultaneousBuilds: 3, defaultBuildPreset: BuildProfile.FAST }))
        .toThrow(/'defaultBuildPreset'[^\n]*\n'maxSimultaneousBuilds'/);
    });

    test('the same props are still taken under 1.11.1', () => {
      expect(() => synthStack({ maxSimultaneousBuilds: 3, controller: { resyncPeriod: Duration.minutes(1) } })).not.toThrow();
    });
  });
});
