import { Duration, Size, Testing } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { parse } from 'yaml';
import { BuildProfile, FunctionProfile, LogLevel, LogFormat, ServerlessStack } from '../../src';
import { envOf, find, synthStack } from '../util/synth';

const controllerOf = (objects: any[]) => find(objects, 'Deployment', 'serverless-ctrl-mngr');
const containerOf = (objects: any[]) => controllerOf(objects).spec.template.spec.containers[0];

describe('the controller Deployment', () => {
  const objects = synthStack();
  const deployment = controllerOf(objects);
  const pod = deployment.spec.template.spec;
  const container = containerOf(objects);
  const env = envOf(container);

  test('runs upstream\'s 1.11.1 image', () => {
    expect(container.image).toBe('europe-docker.pkg.dev/kyma-project/prod/function-controller:1.11.1');
  });

  test('sets every configuration key of 1.11.1 with its default', () => {
    expect(env).toEqual({
      APP_METRICS_ADDRESS: ':8080',
      APP_HEALTHZ_ADDRESS: ':8090',
      APP_HEALTHZ_LIVENESS_TIMEOUT: '10s',
      APP_LEADER_ELECTION_ENABLED: 'true',
      APP_LEADER_ELECTION_ID: 'serverless-controller-leader-election-helper',
      APP_LOG_CONFIG_PATH: '/appconfig/log-config.yaml',
      APP_KUBERNETES_BASE_NAMESPACE: 'kyma-system',
      APP_KUBERNETES_BASE_DEFAULT_SECRET_NAME: 'serverless-registry-config-default',
      APP_KUBERNETES_EXCLUDED_NAMESPACES: 'kyma-system,kube-node-lease,kube-public,kube-system',
      APP_KUBERNETES_CONFIG_MAP_REQUEUE_DURATION: '5m',
      APP_KUBERNETES_SECRET_REQUEUE_DURATION: '5m',
      APP_KUBERNETES_SERVICE_ACCOUNT_REQUEUE_DURATION: '5m',
      APP_FUNCTION_TRACE_COLLECTOR_ENDPOINT: 'http://telemetry-otlp-traces.kyma-system.svc.cluster.local:4318/v1/traces',
      APP_FUNCTION_PUBLISHER_PROXY_ADDRESS: 'http://eventing-publisher-proxy.kyma-system.svc.cluster.local/publish',
      APP_FUNCTION_IMAGE_REGISTRY_DEFAULT_DOCKER_CONFIG_SECRET_NAME: 'serverless-registry-config-default',
      APP_FUNCTION_PACKAGE_REGISTRY_CONFIG_SECRET_NAME: 'serverless-package-registry-config',
      APP_FUNCTION_IMAGE_PULL_ACCOUNT_NAME: 'serverless-function',
      APP_FUNCTION_TARGET_CPU_UTILIZATION_PERCENTAGE: '50',
      APP_FUNCTION_REQUEUE_DURATION: '5m',
      APP_FUNCTION_FUNCTION_READY_REQUEUE_DURATION: '5m',
      APP_FUNCTION_BUILD_EXECUTOR_ARGS:
        '--insecure,--skip-tls-verify,--skip-unused-stages,--log-format=text,--cache=true,--use-new-run,--compressed-caching=false',
      APP_FUNCTION_BUILD_EXECUTOR_IMAGE: 'europe-docker.pkg.dev/kyma-project/prod/external/gcr.io/kaniko-project/executor:v1.24.0',
      APP_FUNCTION_BUILD_REPO_FETCHER_IMAGE: 'europe-docker.pkg.dev/kyma-project/prod/function-build-init:1.11.1',
      APP_FUNCTION_BUILD_MAX_SIMULTANEOUS_JOBS: '5',
      APP_FUNCTION_RESOURCE_CONFIG: expect.any(String),
    });
  });

  test('never sets GODEBUG: the image\'s FIPS setting must stand', () => {
    expect(Object.keys(env)).not.toContain('GODEBUG');
  });

  test('hands the presets over under the keys the controller reads', () => {
    const config = parse(env.APP_FUNCTION_RESOURCE_CONFIG);
    expect(config.function.resources).toMatchObject({ minRequestedCPU: '10m', minRequestedMemory: '16Mi', defaultPreset: 'L' });
    expect(config.buildJob.resources).toMatchObject({ minRequestedCPU: '200m', minRequestedMemory: '200Mi', defaultPreset: 'normal' });
    expect(JSON.stringify(config)).not.toMatch(/minRequestCpu|minRequestMemory/);
    expect(Object.keys(config.function.resources.presets)).toEqual(['XS', 'S', 'M', 'L', 'XL']);
    expect(config.function.resources.presets.XS).toEqual({ requestCpu: '50m', requestMemory: '64Mi', limitCpu: '150m', limitMemory: '256Mi' });
    expect(Object.keys(config.buildJob.resources.presets)).toEqual(['local-dev', 'slow', 'normal', 'fast']);
    expect(config.buildJob.resources.presets.normal).toEqual({ requestCpu: '500m', requestMemory: '700Mi', limitCpu: '1100m', limitMemory: '1100Mi' });
  });

  test('runs restricted: non-root, no escalation, no capabilities, RuntimeDefault seccomp, read-only root', () => {
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, privileged: false, readOnlyRootFilesystem: true,
    });
  });

  test('probes health and readiness on 8090 with upstream\'s timings', () => {
    expect(container.livenessProbe).toEqual({
      httpGet: { path: '/healthz/', port: 8090 }, initialDelaySeconds: 50, timeoutSeconds: 60, periodSeconds: 120, failureThreshold: 3, successThreshold: 1,
    });
    expect(container.readinessProbe).toEqual({
      httpGet: { path: '/readyz/', port: 8090 }, initialDelaySeconds: 10, timeoutSeconds: 10, periodSeconds: 30, failureThreshold: 3, successThreshold: 1,
    });
  });

  test('has upstream\'s resources, priority class and a writable /tmp', () => {
    expect(container.resources).toEqual({ requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '600m', memory: '1Gi' } });
    expect(pod.priorityClassName).toBe('serverless-priority');
    expect(container.volumeMounts).toContainEqual({ name: 'tmpdir', mountPath: '/tmp' });
  });

  test('carries the labels the NetworkPolicies select on, and keeps upstream\'s selector', () => {
    expect(deployment.spec.template.metadata.labels).toMatchObject({
      'kyma-project.io/module': 'serverless',
      'networking.serverless.kyma-project.io/to-apiserver': 'allowed',
      'networking.serverless.kyma-project.io/from-serverless': 'allowed',
    });
    expect(deployment.spec.selector.matchLabels).toEqual({
      'app': 'serverless', 'app.kubernetes.io/name': 'serverless', 'app.kubernetes.io/instance': 'serverless',
    });
    expect(deployment.spec.template.metadata.annotations['sidecar.istio.io/inject']).toBe('false');
  });

  test('mounts the log configuration it reads', () => {
    expect(parse(find(objects, 'ConfigMap', 'serverless-configuration').data['log-config.yaml'])).toEqual({ logFormat: 'json', logLevel: 'info' });
  });

  test('exposes metrics through a Service that selects its Pods', () => {
    const service = find(objects, 'Service', 'serverless-controller-manager');
    expect(service.spec.ports).toEqual([{ name: 'http-metrics', port: 8080, targetPort: 8080, protocol: 'TCP' }]);
    for (const [k, v] of Object.entries(service.spec.selector)) expect(deployment.spec.template.metadata.labels[k]).toBe(v);
  });

  test('has no PodDisruptionBudget with one replica', () => {
    expect(objects.filter(o => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'serverless-ctrl-mngr')).toEqual([]);
  });
});

describe('controller RBAC', () => {
  const objects = synthStack();
  const clusterRole = find(objects, 'ClusterRole', 'serverless');

  test('grants exactly what the 1.11.1 controller calls, and no wildcard', () => {
    const granted = clusterRole.rules.flatMap((r: any) => r.apiGroups.flatMap((g: string) =>
      r.resources.flatMap((res: string) => r.verbs.map((v: string) => `${g || 'core'}/${res}:${v}`)))).sort();
    expect(granted).toEqual([
      'apps/deployments:create', 'apps/deployments:deletecollection', 'apps/deployments:get', 'apps/deployments:list',
      'apps/deployments:update', 'apps/deployments:watch',
      'autoscaling/horizontalpodautoscalers:create', 'autoscaling/horizontalpodautoscalers:deletecollection',
      'autoscaling/horizontalpodautoscalers:get', 'autoscaling/horizontalpodautoscalers:list',
      'autoscaling/horizontalpodautoscalers:update', 'autoscaling/horizontalpodautoscalers:watch',
      'batch/jobs:create', 'batch/jobs:deletecollection', 'batch/jobs:get', 'batch/jobs:list', 'batch/jobs:update', 'batch/jobs:watch',
      'core/configmaps:create', 'core/configmaps:delete', 'core/configmaps:deletecollection', 'core/configmaps:get',
      'core/configmaps:list', 'core/configmaps:update', 'core/configmaps:watch',
      'core/events:create', 'core/events:patch',
      'core/namespaces:get', 'core/namespaces:list', 'core/namespaces:watch',
      'core/secrets:create', 'core/secrets:delete', 'core/secrets:get', 'core/secrets:list', 'core/secrets:update', 'core/secrets:watch',
      'core/serviceaccounts:create', 'core/serviceaccounts:get', 'core/serviceaccounts:list', 'core/serviceaccounts:update',
      'core/serviceaccounts:watch',
      'core/services:create', 'core/services:delete', 'core/services:get', 'core/services:list', 'core/services:update', 'core/services:watch',
      'serverless.kyma-project.io/functions/finalizers:update',
      'serverless.kyma-project.io/functions/status:get', 'serverless.kyma-project.io/functions/status:update',
      'serverless.kyma-project.io/functions:get', 'serverless.kyma-project.io/functions:list', 'serverless.kyma-project.io/functions:watch',
    ]);
    expect(JSON.stringify(objects.filter(o => /Role/.test(o.kind)))).not.toContain('"*"');
  });

  test('drops what 1.11.1\'s chart grants but no code uses: RBAC objects and PodSecurityPolicies', () => {
    const groups = clusterRole.rules.flatMap((r: any) => r.apiGroups);
    expect(groups).not.toContain('rbac.authorization.k8s.io');
    expect(groups).not.toContain('policy');
  });

  test('binds the ClusterRole to the controller\'s ServiceAccount', () => {
    const binding = find(objects, 'ClusterRoleBinding', 'serverless');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'serverless' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'serverless-controller-manager', namespace: 'kyma-system' }]);
    expect(controllerOf(objects).spec.template.spec.serviceAccountName).toBe('serverless-controller-manager');
  });

  test('lets leader election use its Lease (which upstream forgot)', () => {
    const role = find(objects, 'Role', 'serverless-leader-election');
    expect(role.rules).toContainEqual({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] });
    expect(role.rules).toContainEqual({
      apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['serverless-controller-leader-election-helper'], verbs: ['get', 'update'],
    });
    expect(find(objects, 'RoleBinding', 'serverless-leader-election').subjects[0].name).toBe('serverless-controller-manager');
  });
});

describe('controller options', () => {
  test('more than one replica adds a PodDisruptionBudget over the controller Pods', () => {
    const objects = synthStack({ controller: { replicas: 2 } });
    expect(controllerOf(objects).spec.replicas).toBe(2);
    const pdb = find(objects, 'PodDisruptionBudget', 'serverless-ctrl-mngr');
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: controllerOf(objects).spec.selector.matchLabels } });
  });

  test('presets, defaults, builds and CPU target reach the controller', () => {
    const objects = synthStack({
      functionPresets: { [FunctionProfile.XS]: { requestCpu: Cpu.millis(20), requestMemory: Size.mebibytes(32), limitCpu: Cpu.millis(100), limitMemory: Size.mebibytes(128) } },
      defaultFunctionPreset: FunctionProfile.S,
      defaultBuildPreset: BuildProfile.FAST,
      maxSimultaneousBuilds: 2,
      targetCpuUtilizationPercentage: 70,
      logLevel: LogLevel.DEBUG,
      logFormat: LogFormat.CONSOLE,
      controller: { resyncPeriod: Duration.seconds(90), buildExecutorArgs: ['--insecure'], traceCollectorEndpoint: 'http://otel:4318/v1/traces' },
    });
    const env = envOf(containerOf(objects));
    const config = parse(env.APP_FUNCTION_RESOURCE_CONFIG);
    expect(config.function.resources.presets.XS).toEqual({ requestCpu: '20m', requestMemory: '32Mi', limitCpu: '100m', limitMemory: '128Mi' });
    expect(config.function.resources.presets.L.limitCpu).toBe('800m');
    expect(config.function.resources.defaultPreset).toBe('S');
    expect(config.buildJob.resources.defaultPreset).toBe('fast');
    expect(env.APP_FUNCTION_BUILD_MAX_SIMULTANEOUS_JOBS).toBe('2');
    expect(env.APP_FUNCTION_TARGET_CPU_UTILIZATION_PERCENTAGE).toBe('70');
    expect(env.APP_KUBERNETES_SECRET_REQUEUE_DURATION).toBe('90s');
    expect(env.APP_FUNCTION_BUILD_EXECUTOR_ARGS).toBe('--insecure');
    expect(env.APP_FUNCTION_TRACE_COLLECTOR_ENDPOINT).toBe('http://otel:4318/v1/traces');
    expect(parse(find(objects, 'ConfigMap', 'serverless-configuration').data['log-config.yaml'])).toEqual({ logFormat: 'console', logLevel: 'debug' });
  });

  test('copies nothing into the namespaces Kubernetes makes for itself, unless told otherwise', () => {
    expect(envOf(containerOf(synthStack())).APP_KUBERNETES_EXCLUDED_NAMESPACES).toBe('kyma-system,kube-node-lease,kube-public,kube-system');
    const custom = synthStack({ controller: { excludedNamespaces: ['istio-system', 'kube-system'] } });
    expect(envOf(containerOf(custom)).APP_KUBERNETES_EXCLUDED_NAMESPACES).toBe('kyma-system,istio-system,kube-system');
    expect(envOf(containerOf(synthStack({ controller: { excludedNamespaces: [] } }))).APP_KUBERNETES_EXCLUDED_NAMESPACES).toBe('kyma-system');
  });

  test('throws when an excluded namespace is no namespace name', () => {
    expect(() => synthStack({ controller: { excludedNamespaces: ['Kube System'] } }))
      .toThrow('\'controller.excludedNamespaces\' holds "Kube System", which is no namespace name');
  });

  test('image overrides reach the controller and its build Jobs', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', {
      images: { controller: 'registry.example.com/kyma/function-controller:1.11.1-patched', buildExecutor: 'registry.example.com/kaniko:v1.24.0' },
    });
    const container = containerOf(Testing.synth(stack));
    expect(container.image).toBe('registry.example.com/kyma/function-controller:1.11.1-patched');
    expect(envOf(container).APP_FUNCTION_BUILD_EXECUTOR_IMAGE).toBe('registry.example.com/kaniko:v1.24.0');
  });
});
