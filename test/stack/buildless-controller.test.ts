import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duration, Size, Testing } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { parse } from 'yaml';
import { BuildlessFunctionController, FunctionProfile, LogFormat, LogLevel, ServerlessRelease, ServerlessStack } from '../../src';
import { BUILDLESS_CONFIG_RENAMES, BUILDLESS_CONTROLLER_NAMES, BUILDLESS_FUNCTION_RECONCILER } from '../../src/stack/buildless-controller';
import { CONTROLLER_NAMES } from '../../src/stack/controller';
import { fixture } from '../util/fixtures';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { envOf, find, synthStack } from '../util/synth';

const V1_13_0 = { release: ServerlessRelease.V1_13_0 };
const FACTS = JSON.parse(fs.readFileSync(fixture('upstream-1.13.0-controller-facts.json'), 'utf8'));
/** Upstream's 1.13.0 chart values, where the checkout has shared/reference beside it. */
const UPSTREAM_VALUES = [
  path.resolve(__dirname, '..', '..', '..', 'shared', 'reference', 'upstream-1.13.0', 'buildless-values.yaml'),
  '/work/shared/reference/upstream-1.13.0/buildless-values.yaml',
].find(f => fs.existsSync(f));

const controllerOf = (objects: any[]) => find(objects, 'Deployment', 'serverless-ctrl-mngr');
const configOf = (objects: any[]) => parse(find(objects, 'ConfigMap', 'serverless-config').data['function-config.yaml']);

/** Every key path of a YAML mapping, down to `presets` (whose keys are preset names, not configuration keys). */
function keyPaths(value: any, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, child]) => {
    const here = `${prefix}${key}`;
    return child !== null && typeof child === 'object' && key !== 'presets' ? keyPaths(child, `${here}.`) : [here];
  });
}

describe('the 1.13.0 controller', () => {
  const objects = synthStack(V1_13_0);
  const deployment = controllerOf(objects);
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const config = configOf(objects);

  test('every object is valid against the Kubernetes schema', () => {
    expectValidKubernetesObjects(objects);
  });

  test('runs upstream\'s 1.13.0 buildless controller with /app/manager, as upstream\'s chart does', () => {
    expect(container.image).toBe(FACTS.images.controller);
    expect(container.command).toEqual(['/app/manager']);
  });

  test('keeps the 1.11.1 Deployment\'s name and selector, so that the move updates it in place', () => {
    const old = controllerOf(synthStack());
    expect(deployment.metadata.name).toBe(old.metadata.name);
    expect(deployment.spec.selector).toEqual(old.spec.selector);
    expect(deployment.spec.selector.matchLabels).toEqual(FACTS.deploymentSelector);
    expect(pod.serviceAccountName).toBe(old.spec.template.spec.serviceAccountName);
  });

  test('sets upstream\'s environment, FIPS off, and HOME, which the FROM-scratch image lacks', () => {
    expect(envOf(container)).toEqual({
      APP_FUNCTION_CONFIG_PATH: FACTS.configFile,
      APP_LOG_CONFIG_PATH: FACTS.logConfigFile,
      APP_KYMA_FIPS_MODE_ENABLED: 'false',
      GODEBUG: FACTS.godebug,
      HOME: '/tmp',
    });
    expect(Object.keys(envOf(container))).toEqual(expect.arrayContaining(FACTS.env));
  });

  test('mounts its two configuration files where the environment says, and a writable HOME', () => {
    const mounts = Object.fromEntries(container.volumeMounts.map((m: any) => [m.name, m.mountPath]));
    const volumes = Object.fromEntries(pod.volumes.map((v: any) => [v.name, v.configMap?.name ?? 'emptyDir']));
    expect(mounts).toEqual({ 'configuration': '/appconfig', 'log-configuration': '/logconfig', 'tmpdir': '/tmp' });
    expect(volumes).toEqual({ 'configuration': FACTS.configMapName, 'log-configuration': FACTS.logConfigMapName, 'tmpdir': 'emptyDir' });
    expect(parse(find(objects, 'ConfigMap', 'serverless-log-config').data['log-config.yaml'])).toEqual({ logFormat: 'json', logLevel: 'info' });
  });

  test('probes /healthz and /readyz on 8090, with a liveness timeout that outlasts the check\'s two 10 s waits; metrics on 8080', () => {
    expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 8090 }, timeoutSeconds: 25 });
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 8090 } });
    expect(container.ports).toEqual([
      { name: 'http-metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8090, protocol: 'TCP' },
    ]);
    const service = find(objects, 'Service', 'serverless-controller-manager');
    expect(service.spec.ports).toEqual([{ name: 'http-metrics', port: 8080, targetPort: 8080, protocol: 'TCP' }]);
  });

  test('runs under PSS restricted, with the stack\'s PriorityClass', () => {
    expect(pod.securityContext).toEqual({ runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, runAsNonRoot: true,
    });
    expect(pod.priorityClassName).toBe('serverless-priority');
  });

  test('restarts when its configuration changes (the binary reads it once), not when only the log level does', () => {
    const checksum = (o: any[]) => controllerOf(o).spec.template.metadata.annotations['checksum/config'];
    expect(checksum(objects)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(synthStack({ ...V1_13_0, logLevel: LogLevel.DEBUG }))).toBe(checksum(objects));
    expect(checksum(synthStack({ ...V1_13_0, defaultFunctionPreset: FunctionProfile.M }))).not.toBe(checksum(objects));
  });

  test('function-config.yaml has every key of upstream\'s chart, under the name the 1.13.0 binary reads', () => {
    const renamed = new Map(BUILDLESS_CONFIG_RENAMES.map(r => [r.upstream, r.ours]));
    const expected = (FACTS.chartConfigKeys as string[]).flatMap(key => (renamed.has(key) ? (renamed.get(key) ? [renamed.get(key)!] : []) : [key]));
    expect(keyPaths(config).sort()).toEqual([...expected, 'leaderElectionID'].sort());
    // Every key we write is one the Go struct declares.
    expect(keyPaths(config).filter(key => !FACTS.structConfigKeys.includes(key))).toEqual([]);
    // And every rename says why.
    for (const rename of BUILDLESS_CONFIG_RENAMES) expect(rename.why.length).toBeGreaterThan(20);
  });

  test('function-config.yaml holds upstream\'s values', () => {
    const v = FACTS.configValues;
    expect(config).toEqual({
      metricsPort: v.metricsPort,
      leaderElectionEnabled: true,
      leaderElectionID: FACTS.structDefaults.leaderElectionID,
      healthz: { healthzPort: v.healthzPort, healthzLivenessTimeout: v.healthzLivenessTimeout },
      images: {
        repoFetcher: FACTS.images.repoFetcher,
        nodejs20: FACTS.images.nodejs20,
        nodejs22: FACTS.images.nodejs22,
        nodejs24: FACTS.images.nodejs24,
        python312: FACTS.images.python312,
      },
      packageRegistryConfigSecretName: v.packageRegistryConfigSecretName,
      functionTraceCollectorEndpoint: v.functionTraceCollectorEndpoint,
      functionPublisherProxyAddress: v.functionPublisherProxyAddress,
      functionReadyRequeueDuration: v.functionReadyRequeueDuration,
      resourcesConfiguration: {
        function: {
          resources: { minRequestCPU: v.minRequestCpu, minRequestMemory: v.minRequestMemory, defaultPreset: v.defaultPreset, presets: v.presets },
        },
      },
    });
  });

  test('the leader-election id of the configuration is the one Lease the Role lets it renew', () => {
    const role = find(objects, 'Role', CONTROLLER_NAMES.leaderElection);
    expect(role.rules.find((r: any) => r.resourceNames).resourceNames).toEqual([config.leaderElectionID]);
  });

  (UPSTREAM_VALUES ? test : test.skip)('its images are the ones upstream\'s 1.13.0 chart values name', () => {
    const images = parse(fs.readFileSync(UPSTREAM_VALUES!, 'utf8')).global.images;
    expect(container.image).toBe(images.function_controller);
    expect(config.images).toEqual({
      repoFetcher: images.function_init,
      nodejs20: images.function_runtime_nodejs20,
      nodejs22: images.function_runtime_nodejs22,
      nodejs24: images.function_runtime_nodejs24,
      python312: images.function_runtime_python312,
    });
  });

  test('takes the stack\'s presets, endpoints, requeue, replicas, resources and log settings', () => {
    const tuned = synthStack({
      ...V1_13_0,
      defaultFunctionPreset: FunctionProfile.S,
      functionPresets: { XS: { requestCpu: Cpu.millis(20), requestMemory: Size.mebibytes(32), limitCpu: Cpu.millis(100), limitMemory: Size.mebibytes(64) } },
      logLevel: LogLevel.DEBUG,
      logFormat: LogFormat.CONSOLE,
      controller: {
        replicas: 2,
        traceCollectorEndpoint: 'http://otel.example:4318/v1/traces',
        publisherProxyAddress: 'http://publisher.example/publish',
        functionReadyRequeue: Duration.seconds(90),
        resources: { requestCpu: Cpu.millis(20), requestMemory: Size.mebibytes(100), limitCpu: Cpu.units(1), limitMemory: Size.gibibytes(2) },
      },
    });
    const c = configOf(tuned);
    expect(c.resourcesConfiguration.function.resources.defaultPreset).toBe('S');
    expect(c.resourcesConfiguration.function.resources.presets.XS).toEqual({ requestCpu: '20m', requestMemory: '32Mi', limitCpu: '100m', limitMemory: '64Mi' });
    expect(c.functionTraceCollectorEndpoint).toBe('http://otel.example:4318/v1/traces');
    expect(c.functionPublisherProxyAddress).toBe('http://publisher.example/publish');
    expect(c.functionReadyRequeueDuration).toBe('90s');
    expect(parse(find(tuned, 'ConfigMap', 'serverless-log-config').data['log-config.yaml'])).toEqual({ logFormat: 'console', logLevel: 'debug' });
    expect(controllerOf(tuned).spec.replicas).toBe(2);
    expect(controllerOf(tuned).spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: '20m', memory: '100Mi' }, limits: { cpu: '1', memory: '2Gi' },
    });
    expect(find(tuned, 'PodDisruptionBudget', 'serverless-ctrl-mngr').spec.maxUnavailable).toBe(1);
    expectValidKubernetesObjects(tuned);
  });

  test('is the stack\'s controller, with nothing excluded and the reconciler its metrics name', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', V1_13_0);
    expect(stack.controller).toBeInstanceOf(BuildlessFunctionController);
    expect(stack.controller.excludedNamespaces).toEqual([]);
    expect(stack.controller.functionReconciler).toBe(BUILDLESS_FUNCTION_RECONCILER);
    expect(BUILDLESS_CONTROLLER_NAMES.functionConfig).toBe(FACTS.configMapName);
  });
});

describe('the 1.13.0 controller\'s RBAC', () => {
  const objects = synthStack(V1_13_0);
  const clusterRole = find(objects, 'ClusterRole', 'serverless');
  const lines = (rules: any[]) => rules.flatMap((r: any) => r.apiGroups.flatMap((g: string) => r.resources.flatMap((res: string) =>
    r.verbs.map((v: string) => `${g || 'core'}/${res} ${v}`)))).sort();

  test('grants exactly the calls the 1.13.0 binary makes, and the owner-reference finalizer update', () => {
    expect(lines(clusterRole.rules)).toEqual([
      'apps/deployments create', 'apps/deployments deletecollection', 'apps/deployments list', 'apps/deployments update', 'apps/deployments watch',
      'core/events create', 'core/events patch',
      'core/secrets get',
      'core/services create', 'core/services list', 'core/services update', 'core/services watch',
      'serverless.kyma-project.io/functions get', 'serverless.kyma-project.io/functions list', 'serverless.kyma-project.io/functions watch',
      'serverless.kyma-project.io/functions/finalizers update',
      'serverless.kyma-project.io/functions/status update',
    ]);
  });

  test('covers every call seen from upstream\'s controller on a real API server', () => {
    const granted = new Set([...lines(clusterRole.rules), ...lines(find(objects, 'Role', 'serverless-leader-election').rules)]
      .map(l => l.replace(/^[^/]+\//, '')));
    expect((FACTS.callsSeen as string[]).filter(call => !granted.has(call))).toEqual([]);
  });

  test('is narrower than upstream\'s ClusterRole: no Secret is listed, watched, updated or deleted, nothing of Functions is created', () => {
    const upstream = new Set(lines(FACTS.clusterRoleRules));
    expect(lines(clusterRole.rules).filter(l => !upstream.has(l))).toEqual(['serverless.kyma-project.io/functions/finalizers update']);
    expect(lines(clusterRole.rules).filter(l => l.startsWith('core/secrets'))).toEqual(['core/secrets get']);
  });

  test('binds the controller\'s ServiceAccount cluster-wide, and leader election in its namespace only', () => {
    const binding = find(objects, 'ClusterRoleBinding', 'serverless');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'serverless-controller-manager', namespace: 'kyma-system' }]);
    expect(binding.metadata.namespace).toBeUndefined();
    expect(find(objects, 'RoleBinding', 'serverless-leader-election').metadata.namespace).toBe('kyma-system');
  });
});
