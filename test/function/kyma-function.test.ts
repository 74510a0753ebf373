import { Chart, Size, Testing } from 'cdk8s';
import { ConfigMap, Cpu, EnvFieldPaths, EnvValue, ResourceFieldPaths, Secret } from 'cdk8s-plus-27';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import {
  BuildProfile, BuildResources, FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitAuthType, KedaTrigger,
  KymaFunction, KymaFunctionProps, ServerlessRelease, ServerlessStack,
} from '../../src';
import { FUNCTION_LABEL, OBJECT_KINDS_ANNOTATION, validateFunction } from '../../src/api';
import { SOURCE_SHA256_ANNOTATION } from '../../src/function/kyma-function';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import * as rules from '../../src/api/function-rules';

const HELLO = 'exports.main = () => "hi"';

function chart(namespace = 'team-a'): Chart {
  return new Chart(Testing.app(), 'test', { namespace });
}

function synthFunction(props: Partial<KymaFunctionProps> = {}, scope: Chart = chart()): any {
  new KymaFunction(scope, 'hello', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromInline(HELLO),
    ...props,
  });
  const functions = Testing.synth(scope).filter(o => o.kind === 'Function');
  expect(functions).toHaveLength(1);
  expectValidKubernetesObjects(functions);
  expect(validateFunction(functions[0])).toEqual([]);
  return functions[0];
}

function synthError(props: Partial<KymaFunctionProps>, scope: Chart = chart()): string {
  new KymaFunction(scope, 'hello', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), ...props });
  try {
    Testing.synth(scope);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('synth succeeded');
}

describe('KymaFunction', () => {
  test('emits one Function with the construct id as name, in the chart\'s namespace', () => {
    const fn = synthFunction();
    expect(fn.apiVersion).toBe('serverless.kyma-project.io/v1alpha2');
    expect(fn.metadata).toMatchObject({ name: 'hello', namespace: 'team-a' });
    expect(fn.spec).toEqual({ runtime: 'nodejs22', replicas: 1, source: { inline: { source: HELLO } } });
  });

  test('lands in the enclosing FunctionNamespace', () => {
    const app = Testing.app();
    const team = new FunctionNamespace(app, 'team-b');
    const fn = new KymaFunction(team, 'hello', { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline('def main(e, c): return 1') });
    expect(fn.namespace).toBe('team-b');
    expect(Testing.synth(team).find(o => o.kind === 'Function').metadata.namespace).toBe('team-b');
  });

  test('name and namespace props win over the id and the chart', () => {
    const fn = synthFunction({ name: 'other', namespace: 'elsewhere' });
    expect(fn.metadata).toMatchObject({ name: 'other', namespace: 'elsewhere' });
  });

  test('renders env in the order given, from every kind of EnvValue', () => {
    const scope = chart();
    const secret = Secret.fromSecretName(scope, 'Creds', 'creds');
    const config = ConfigMap.fromConfigMapName(scope, 'Config', 'settings');
    const fn = synthFunction({
      env: {
        PLAIN: EnvValue.fromValue('x'),
        PASSWORD: EnvValue.fromSecretValue({ secret, key: 'password' }, { optional: true }),
        LEVEL: EnvValue.fromConfigMap(config, 'level'),
        POD: EnvValue.fromFieldRef(EnvFieldPaths.POD_NAME),
        CPU: EnvValue.fromResource(ResourceFieldPaths.CPU_LIMIT, { divisor: '1m' }),
        URL: EnvValue.fromValue('http://$(POD):8080'),
      },
    }, scope);
    expect(fn.spec.env).toEqual([
      { name: 'PLAIN', value: 'x' },
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password', optional: true } } },
      { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level' } } },
      { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
      { name: 'URL', value: 'http://$(POD):8080' },
    ]);
  });

  test('addEnv and addSecretMount after construction still show up', () => {
    const scope = chart();
    const fn = new KymaFunction(scope, 'hello', { runtime: FunctionRuntime.NODEJS_20, source: FunctionSource.fromInline(HELLO) });
    fn.addEnv('LATE', EnvValue.fromValue('1'));
    fn.addSecretMount({ secretName: 'tls', mountPath: '/etc/tls' });
    const spec = Testing.synth(scope).find(o => o.kind === 'Function').spec;
    expect(spec.env).toEqual([{ name: 'LATE', value: '1' }]);
    expect(spec.secretMounts).toEqual([{ secretName: 'tls', mountPath: '/etc/tls' }]);
  });

  test('throws when addEnv names a variable twice', () => {
    const fn = new KymaFunction(chart(), 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), env: { A: EnvValue.fromValue('1') },
    });
    expect(() => fn.addEnv('A', EnvValue.fromValue('2'))).toThrow('\'env.A\' is defined twice');
  });

  test('renders presets and explicit resources', () => {
    const fn = synthFunction({
      resources: FunctionResources.preset(FunctionProfile.M),
      buildResources: BuildResources.custom({
        cpu: { request: Cpu.millis(300), limit: Cpu.units(1) },
        memory: { request: Size.mebibytes(300), limit: Size.gibibytes(1) },
      }),
    });
    expect(fn.spec.resourceConfiguration).toEqual({
      function: { profile: 'M' },
      build: { resources: { requests: { cpu: '300m', memory: '300Mi' }, limits: { cpu: '1', memory: '1Gi' } } },
    });
  });

  test('throws when custom resources set nothing', () => {
    expect(() => FunctionResources.custom({})).toThrow('FunctionResources.custom() sets no request or limit');
    expect(() => BuildResources.custom({ cpu: {} })).toThrow('BuildResources.custom() sets no request or limit');
  });

  test('an autoscaled Function leaves replicas to the autoscaler', () => {
    const scope = chart();
    const fn = new KymaFunction(scope, 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), scale: { minReplicas: 2, maxReplicas: 5 },
    });
    expect(fn.replicas).toBe(2);
    const objects = Testing.synth(scope);
    const spec = objects.find(o => o.kind === 'Function').spec;
    expect(spec.scaleConfig).toEqual({ minReplicas: 2, maxReplicas: 5 });
    expect(spec.replicas).toBeUndefined();
    // Under 1.11.1 the controller creates the autoscaler.
    expect(objects.filter(o => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(fn.autoscaler).toBeUndefined();
  });

  test('equal scale bounds give that many replicas and no autoscaler', () => {
    const fn = synthFunction({ scale: { minReplicas: 3, maxReplicas: 3 } });
    expect(fn.spec.replicas).toBe(3);
  });

  test('replicas 0 stops the Function', () => {
    expect(synthFunction({ replicas: 0 }).spec.replicas).toBe(0);
  });

  test('renders labels, annotations and the runtime image override; drops empty maps', () => {
    const fn = synthFunction({
      labels: { team: 'a' },
      annotations: {},
      runtimeImageOverride: 'registry.example.com/node:22-custom',
    });
    expect(fn.spec.labels).toEqual({ team: 'a' });
    expect(fn.spec.annotations).toBeUndefined();
    expect(fn.spec.runtimeImageOverride).toBe('registry.example.com/node:22-custom');
  });

  test('renders a Git source with auth', () => {
    const fn = synthFunction({
      source: FunctionSource.fromGitRepository({
        url: 'git@github.com:acme/functions.git', baseDir: 'orders', reference: 'v1.2.0', auth: { type: GitAuthType.KEY, secretName: 'git-key' },
      }),
    });
    expect(fn.spec.source).toEqual({
      gitRepository: { url: 'git@github.com:acme/functions.git', baseDir: 'orders', reference: 'v1.2.0', auth: { type: 'key', secretName: 'git-key' } },
    });
  });

  test('a Function read from a folder carries the hash of its files', () => {
    const fn = synthFunction({ source: FunctionSource.fromDirectory('functions/hello-node') });
    expect(fn.metadata.annotations[SOURCE_SHA256_ANNOTATION]).toMatch(/^[0-9a-f]{64}$/);
  });

  test('matches the snapshot', () => {
    const app = Testing.app();
    const team = new FunctionNamespace(app, 'team-a', { stack: new ServerlessStack(app, 'serverless') });
    new KymaFunction(team, 'orders', {
      runtime: FunctionRuntime.PYTHON_312,
      source: FunctionSource.fromInline('def main(event, context):\n    return "ok"\n', 'requests==2.32.3\n'),
      env: { LOG_LEVEL: EnvValue.fromValue('info') },
      scale: { minReplicas: 1, maxReplicas: 5 },
      resources: FunctionResources.preset(FunctionProfile.S),
      buildResources: BuildResources.preset(BuildProfile.FAST),
    });
    expect(Testing.synth(team).filter(o => o.kind === 'Function')).toMatchSnapshot();
  });
});

describe('KymaFunction validation at synth', () => {
  test('fails with every problem at once, each with the construct path, prop, value and fix', () => {
    const message = synthError({
      name: 'Hello',
      env: { '1A': EnvValue.fromValue('x') },
      scale: { minReplicas: 3, maxReplicas: 1 },
      labels: { 'serverless.kyma-project.io/owner': 'me' },
    });
    const lines = message.split('\n').slice(1).map(l => l.trim());
    expect(lines).toEqual(expect.arrayContaining([
      expect.stringMatching(/^\[test\/hello\] 'name' \(metadata\.name\): Invalid value: "Hello": a Function name must be a DNS-1035 label.*; rename the Function/),
      expect.stringMatching(/^\[test\/hello\] 'env\.1A' \(spec\.env\[0\]\.name\): Invalid value: "1A": .*; rename the variable$/),
      expect.stringMatching(/^\[test\/hello\] 'scale' \(spec\.scaleConfig\): Invalid value: \{"maxReplicas":1,"minReplicas":3\}: minReplicas should be less than or equal maxReplicas; /),
      expect.stringMatching(/^\[test\/hello\] 'labels' \(spec\.labels\): .*Labels has key starting with serverless\.kyma-project\.io\//),
    ]));
    expect(lines).toHaveLength(4);
  });

  test('fails when both replicas and scale are given', () => {
    expect(synthError({ replicas: 2, scale: { minReplicas: 1, maxReplicas: 2 } }))
      .toMatch(/\[test\/hello\] 'replicas' \(2\) and 'scale' \(\{"minReplicas":1,"maxReplicas":2\}\) cannot be used together/);
  });

  test('fails when replicas is negative or not whole', () => {
    expect(synthError({ replicas: -1 })).toMatch(/'replicas' \(spec\.replicas\): Invalid value: -1: should be greater than or equal to 0/);
    expect(synthError({ replicas: 1.5 })).toMatch(/'replicas' \(spec\.replicas\): Invalid value: 1\.5: must be of type integer/);
  });

  test('fails when two Functions of an app have the same name in a namespace, naming both construct paths', () => {
    const app = Testing.app();
    const team = new FunctionNamespace(app, 'team-a');
    const other = new Chart(app, 'other', { namespace: 'team-a' });
    const props = { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO) };
    new KymaFunction(team, 'hello', props);
    new KymaFunction(other, 'greeter', { ...props, name: 'hello' });
    new KymaFunction(other, 'hello', { ...props, namespace: 'team-b' });
    const fix = 'and the cluster keeps one: give one of them another name (its construct id, or \'name\') or namespace';
    let message = '';
    try {
      app.synth();
    } catch (e) {
      message = (e as Error).message;
    }
    // other/hello is in team-b: no namesake.
    expect(message).toBe([
      'Validation failed with the following errors:',
      `  [team-a/hello] 'name' (hello): other/greeter is a Function of the same name in namespace team-a, ${fix}`,
      `  [other/greeter] 'name' (hello): team-a/hello is a Function of the same name in namespace team-a, ${fix}`,
    ].join('\n'));
  });

  test('fails when the Function has no namespace', () => {
    expect(synthError({}, new Chart(Testing.app(), 'test'))).toMatch(/\[test\/hello\] 'namespace' is not set/);
  });

  test('fails when a reserved variable is set', () => {
    expect(synthError({ env: { FUNC_PORT: EnvValue.fromValue('9000') } }))
      .toMatch(/'env' \(spec\.env\): Invalid value: \[\{"name":"FUNC_PORT","value":"9000"\}\]: Following envs are reserved/);
  });

  test('fails when Node.js dependencies are not a package.json', () => {
    expect(synthError({ source: FunctionSource.fromInline(HELLO, 'lodash') }))
      .toMatch(/'source' \(spec\.source\.inline\.dependencies\): Invalid value: "lodash": Node\.js dependencies must be a package\.json/);
  });

  test('fails when resources break the controller\'s rules', () => {
    const message = synthError({
      resources: FunctionResources.custom({ cpu: { request: Cpu.millis(5), limit: Cpu.millis(4) } }),
      buildResources: BuildResources.custom({ memory: { request: Size.mebibytes(100) } }),
    });
    expect(message).toMatch(/'resources' \(spec\.resourceConfiguration\.function\.resources\.requests\.cpu\): Invalid value: "5m": must be less than or equal to cpu limit of 4m/);
    expect(message).toMatch(/'resources' \(spec\.resourceConfiguration\.function\.resources\.limits\.cpu\): Invalid value: "4m": must be at least 10m/);
    expect(message).toMatch(/'buildResources' \(spec\.resourceConfiguration\.build\.resources\.requests\.memory\): Invalid value: "100Mi": must be at least 200Mi/);
  });

  test('fails when explicit resources exceed the FunctionNamespace\'s LimitRange', () => {
    const team = new FunctionNamespace(Testing.app(), 'team-a');
    new KymaFunction(team, 'big', {
      runtime: FunctionRuntime.NODEJS_22,
      source: FunctionSource.fromInline(HELLO),
      resources: FunctionResources.custom({ cpu: { limit: Cpu.units(4) }, memory: { limit: Size.gibibytes(8) } }),
    });
    expect(() => Testing.synth(team)).toThrow(/\[team-a\/big\] 'resources' \(limits\.cpu 4\): above 1700m, the most the LimitRange of namespace team-a allows/);
    expect(() => Testing.synth(team)).toThrow(/'resources' \(limits\.memory 8Gi\): above 2048Mi/);
  });

  test('fails when the runtime is one the stack\'s CRD does not list', () => {
    expect(synthError({ runtime: FunctionRuntime.of('nodejs26') }))
      .toMatch(/'runtime' \(spec\.runtime\): Unsupported value: "nodejs26": supported values: "nodejs20", "nodejs22", "python312"; use one of the supported values/);
  });

  test('fails when a folder does not fit the runtime, naming the folder', () => {
    expect(synthError({ runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromDirectory('functions/hello-python') }))
      .toMatch(/\[test\/hello\] 'source': folder 'functions\/hello-python' holds handler\.py, a python handler, but the runtime is nodejs22/);
  });
});

describe('KymaFunction keda', () => {
  const requests = KedaTrigger.prometheus({ serverAddress: 'http://prometheus.monitoring:9090', query: 'sum(rate(istio_requests_total{destination_workload="hello"}[1m]))', threshold: 20 });

  test('a Function with keda gets a ScaledObject that scales it through its scale subresource, and leaves replicas to KEDA', () => {
    const scope = chart();
    const fn = new KymaFunction(scope, 'hello', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), keda: { maxReplicas: 4, triggers: [requests] } });
    expect(fn.scaledObject?.node.path).toBe('test/hello/ScaledObject');
    expect(fn.replicas).toBe(0);
    const objects = Testing.synth(scope);
    expectValidKubernetesObjects(objects);
    const [function_, scaledObject] = objects;
    expect(function_.kind).toBe('Function');
    expect(function_.spec.scaleConfig).toBeUndefined();
    expect(function_.spec.replicas).toBeUndefined();
    expect(validateFunction(function_)).toEqual([]);
    // Names the kind a cluster without KEDA lacks for it, for `kyma-serverless status`.
    expect(function_.metadata.annotations[OBJECT_KINDS_ANNOTATION]).toBe('ScaledObject.keda.sh');
    expect(scaledObject.kind).toBe('ScaledObject');
    expect(scaledObject.metadata).toEqual({ name: 'hello', namespace: 'team-a', labels: { [FUNCTION_LABEL]: 'hello' } });
    expect(scaledObject.spec.scaleTargetRef).toEqual({ apiVersion: function_.apiVersion, kind: function_.kind, name: function_.metadata.name });
    expect(scaledObject.spec).toMatchObject({ minReplicaCount: 0, maxReplicaCount: 4 });
    expect(() => new ScaledObject(scaledObject).validate()).not.toThrow();
  });

  test('a Function without keda has no ScaledObject', () => {
    const scope = chart();
    expect(new KymaFunction(scope, 'hello', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO) }).scaledObject).toBeUndefined();
    const objects = Testing.synth(scope);
    expect(objects.map(o => o.kind)).toEqual(['Function']);
    expect(objects[0].metadata.annotations).toBeUndefined();
  });

  test('starts with the minimum of KEDA', () => {
    const fn = new KymaFunction(chart(), 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), keda: { minReplicas: 2, maxReplicas: 4, triggers: [requests] },
    });
    expect(fn.replicas).toBe(2);
  });

  test('a CPU trigger takes the CPU request of a preset, of explicit resources, or of the FunctionNamespace\'s LimitRange', () => {
    const cpu = { minReplicas: 1, maxReplicas: 3, triggers: [KedaTrigger.cpu({ utilization: 60 })] };
    expect(() => synthFunction({ keda: cpu, resources: FunctionResources.preset(FunctionProfile.S) })).not.toThrow();
    expect(() => synthFunction({ keda: cpu, resources: FunctionResources.custom({ cpu: { limit: Cpu.millis(500) } }) })).not.toThrow();
    const team = new FunctionNamespace(Testing.app(), 'team-a');
    new KymaFunction(team, 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), keda: cpu, resources: FunctionResources.custom({ memory: { request: Size.mebibytes(64) } }),
    });
    expect(() => Testing.synth(team)).not.toThrow();
  });

  test('fails when scale and keda are both given', () => {
    expect(synthError({ scale: { minReplicas: 1, maxReplicas: 3 }, keda: { maxReplicas: 3, triggers: [requests] } }))
      .toMatch(/\[test\/hello\] 'scale' \(\{"minReplicas":1,"maxReplicas":3\}\) and 'keda' cannot be used together: .*KEDA refuses to scale a Function another autoscaler scales/);
  });

  test('fails when replicas and keda are both given', () => {
    expect(synthError({ replicas: 2, keda: { maxReplicas: 3, triggers: [requests] } }))
      .toMatch(/\[test\/hello\] 'replicas' \(2\) and 'keda' cannot be used together: KEDA sets the Function's replicas, from 'keda\.minReplicas' to 'keda\.maxReplicas'; remove 'replicas'/);
  });

  test.each([
    ['maxReplicas is below minReplicas', { minReplicas: 3, maxReplicas: 1, triggers: [requests] }, /\[test\/hello\/ScaledObject\] 'keda\.maxReplicas' \(1\) is below minReplicas \(3\)/],
    ['minReplicas is negative', { minReplicas: -1, maxReplicas: 1, triggers: [requests] }, /\[test\/hello\/ScaledObject\] 'keda\.minReplicas' \(-1\) must be a whole number of at least 0/],
    ['maxReplicas is a fraction', { maxReplicas: 1.5, triggers: [requests] }, /\[test\/hello\/ScaledObject\] 'keda\.maxReplicas' \(1\.5\) must be a whole number of at least 1/],
    ['there is no trigger', { maxReplicas: 2, triggers: [] }, /\[test\/hello\/ScaledObject\] 'keda\.triggers' is empty/],
    ['a prometheus trigger lacks its address', { maxReplicas: 2, triggers: [KedaTrigger.prometheus({ query: 'up', threshold: 1 } as any)] },
      /\[test\/hello\/ScaledObject\] 'keda\.triggers\[0\]\.serverAddress' is required for a prometheus trigger/],
    ['a cron trigger lacks its Pods', { maxReplicas: 2, triggers: [KedaTrigger.cron({ timezone: 'UTC', start: '0 8 * * *', end: '0 9 * * *' } as any)] },
      /\[test\/hello\/ScaledObject\] 'keda\.triggers\[0\]\.desiredReplicas' is required for a cron trigger/],
    ['a cpu trigger is above 100 percent', { minReplicas: 1, maxReplicas: 2, triggers: [KedaTrigger.cpu({ utilization: 101 })] },
      /\[test\/hello\/ScaledObject\] 'keda\.triggers\[0\]\.utilization' \(101\) must be a whole percentage from 1 to 100/],
    ['a cpu trigger alone is asked to scale to zero', { minReplicas: 0, maxReplicas: 2, triggers: [KedaTrigger.cpu({ utilization: 60 })] },
      /\[test\/hello\/ScaledObject\] 'keda\.minReplicas' \(0\): a cpu trigger cannot scale to zero on its own/],
  ])('fails when %s, naming the prop', (_case, keda, message) => {
    expect(synthError({ keda })).toMatch(message);
  });

  test('fails when a CPU trigger scales Pods that request no CPU, outside a FunctionNamespace', () => {
    expect(synthError({
      resources: FunctionResources.custom({ memory: { request: Size.mebibytes(64), limit: Size.mebibytes(128) } }),
      keda: { minReplicas: 1, maxReplicas: 3, triggers: [requests, KedaTrigger.cpu({ utilization: 60 })] },
    })).toMatch(/\[test\/hello\] 'keda\.triggers\[1\]' \(cpu\): the Function's Pods request no cpu \('resources' sets none\), .*; give 'resources' a cpu request, use a preset/);
  });

  test('reports the problems of keda with the Function\'s own, all at once', () => {
    const lines = synthError({ replicas: 1, scale: { minReplicas: 1, maxReplicas: 2 }, keda: { minReplicas: 2, maxReplicas: 1, triggers: [] } })
      .split('\n').slice(1).map(l => l.trim());
    expect(lines).toEqual([
      expect.stringMatching(/^\[test\/hello\] 'replicas' \(1\) and 'scale'/),
      expect.stringMatching(/^\[test\/hello\] 'scale' .* and 'keda' cannot be used together/),
      expect.stringMatching(/^\[test\/hello\] 'replicas' \(1\) and 'keda' cannot be used together/),
      expect.stringMatching(/^\[test\/hello\/ScaledObject\] 'keda\.maxReplicas' \(1\) is below minReplicas \(2\)/),
      expect.stringMatching(/^\[test\/hello\/ScaledObject\] 'keda\.triggers' is empty/),
    ]);
  });
});

describe('validation at synth', () => {
  test('judges exactly the object synth writes', () => {
    const spy = jest.spyOn(rules, 'validateFunction');
    try {
      const chart = Testing.chart();
      const fn = new KymaFunction(chart, 'orders', {
        namespace: 'shop',
        runtime: FunctionRuntime.NODEJS_22,
        source: FunctionSource.fromInline('exports.main = () => 1', '{"dependencies":{}}'),
        env: { A: EnvValue.fromValue('1'), B: EnvValue.fromSecretValue({ secret: Secret.fromSecretName(chart, 'S', 'creds'), key: 'token' }) },
        resources: FunctionResources.custom({ cpu: { request: Cpu.millis(100), limit: Cpu.millis(200) }, memory: { request: Size.mebibytes(64), limit: Size.mebibytes(128) } }),
        scale: { minReplicas: 1, maxReplicas: 3 },
        labels: { team: 'shop' },
        annotations: { 'example.com/owner': 'shop' },
      });
      fn.addSecretMount({ secretName: 'tls', mountPath: '/tls' });
      const written = Testing.synth(chart).find(o => o.kind === 'Function');
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0][0]).toEqual(written);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('KymaFunction under release 1.13.0', () => {
  const V1_13_0 = ServerlessRelease.V1_13_0;
  const team = (props: { stack?: ServerlessStack } = {}) => new FunctionNamespace(props.stack ? props.stack.node.root as any : Testing.app(), 'team-a',
    props.stack ? { stack: props.stack } : { release: V1_13_0 });
  const add = (scope: Chart, props: Partial<KymaFunctionProps> = {}) => new KymaFunction(scope, 'hello', {
    runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO), ...props,
  });
  const errorOf = (scope: Chart): string => {
    try {
      Testing.synth(scope);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('synth succeeded');
  };

  test('scale writes an autoscaling/v2 HPA on the Function\'s scale subresource, and the Function has no scaleConfig and no replicas', () => {
    const scope = team();
    const fn = add(scope, { scale: { minReplicas: 2, maxReplicas: 5 }, labels: { app: 'hello' } });
    const objects = Testing.synth(scope);
    expectValidKubernetesObjects(objects);
    const spec = objects.find(o => o.kind === 'Function').spec;
    expect(spec.scaleConfig).toBeUndefined();
    expect(spec.replicas).toBeUndefined();
    expect(objects.find(o => o.kind === 'Function').metadata.annotations).toEqual({ [OBJECT_KINDS_ANNOTATION]: 'HorizontalPodAutoscaler.autoscaling' });
    expect(fn.replicas).toBe(2);
    const hpas = objects.filter(o => o.kind === 'HorizontalPodAutoscaler');
    expect(hpas).toHaveLength(1);
    expect(hpas[0]).toEqual({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: {
        name: 'hello',
        namespace: 'team-a',
        labels: { 'app.kubernetes.io/managed-by': 'cdk8s-kyma-serverless', [FUNCTION_LABEL]: 'hello', 'serverless.kyma-project.io/function-name': 'hello' },
      },
      spec: {
        scaleTargetRef: { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', name: 'hello' },
        minReplicas: 2,
        maxReplicas: 5,
        // No stack: upstream's default target.
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
      },
    });
    expect(fn.autoscaler?.name).toBe('hello');
  });

  test('the HPA aims at the stack\'s targetCpuUtilizationPercentage', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', { release: V1_13_0, targetCpuUtilizationPercentage: 70 });
    const scope = team({ stack });
    const fn = add(scope, { scale: { minReplicas: 1, maxReplicas: 3 } });
    expect(fn.targetCpuUtilizationPercentage).toBe(70);
    const hpa = Testing.synth(scope).find(o => o.kind === 'HorizontalPodAutoscaler');
    expect(hpa.spec.metrics[0].resource.target.averageUtilization).toBe(70);
  });

  test('equal scale bounds give that many replicas, no scaleConfig and no HPA', () => {
    const scope = team();
    add(scope, { scale: { minReplicas: 3, maxReplicas: 3 } });
    const objects = Testing.synth(scope);
    expectValidKubernetesObjects(objects);
    const spec = objects.find(o => o.kind === 'Function').spec;
    expect(spec.replicas).toBe(3);
    expect(spec.scaleConfig).toBeUndefined();
    expect(objects.filter(o => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
  });

  test('a Function outside a FunctionNamespace follows a 1.13.0 stack created after it', () => {
    const app = Testing.app();
    const scope = new Chart(app, 'test', { namespace: 'team-a' });
    const fn = add(scope, { scale: { minReplicas: 1, maxReplicas: 4 } });
    expect(fn.autoscaler).toBeUndefined();
    new ServerlessStack(app, 'serverless', { release: V1_13_0 });
    const objects = Testing.synth(scope);
    expect(objects.find(o => o.kind === 'Function').spec.scaleConfig).toBeUndefined();
    expect(objects.filter(o => o.kind === 'HorizontalPodAutoscaler').map(o => o.metadata.name)).toEqual(['hello']);
  });

  test('keda is unchanged: a ScaledObject on the scale subresource and no HPA', () => {
    const scope = team();
    add(scope, { keda: { maxReplicas: 4, triggers: [KedaTrigger.cron({ timezone: 'Europe/Berlin', start: '0 8 * * *', end: '0 18 * * *', desiredReplicas: 2 })] } });
    const objects = Testing.synth(scope);
    expect(objects.filter(o => o.kind === 'ScaledObject')).toHaveLength(1);
    expect(objects.filter(o => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(objects.find(o => o.kind === 'Function').spec.replicas).toBeUndefined();
  });

  test('fails when buildResources are given: nothing builds', () => {
    const scope = team();
    add(scope, { buildResources: BuildResources.preset(BuildProfile.FAST) });
    expect(errorOf(scope)).toContain('[team-a/hello] \'buildResources\' ({"profile":"fast"}): release 1.13.0 builds no image; remove buildResources');
  });

  test('fails when the scale bounds are not whole, below 1 or swapped, naming the prop', () => {
    let scope = team();
    add(scope, { scale: { minReplicas: 0, maxReplicas: 3 } });
    expect(errorOf(scope)).toContain('\'scale.minReplicas\' (0): must be a whole number of at least 1');
    scope = team();
    add(scope, { scale: { minReplicas: 4, maxReplicas: 2 } });
    expect(errorOf(scope)).toContain('\'scale.maxReplicas\' (2) must be a whole number of at least \'scale.minReplicas\' (4): swap the bounds or raise maxReplicas');
  });

  test('fails when explicit resources request no CPU for the HPA to aim at, outside a FunctionNamespace', () => {
    const app = Testing.app();
    new ServerlessStack(app, 'serverless', { release: V1_13_0 });
    const scope = new Chart(app, 'test', { namespace: 'team-a' });
    add(scope, { scale: { minReplicas: 1, maxReplicas: 3 }, resources: FunctionResources.custom({ memory: { request: Size.mebibytes(128) } }) });
    expect(errorOf(scope)).toContain('[test/hello] \'scale\' ({"minReplicas":1,"maxReplicas":3}): the HorizontalPodAutoscaler aims at a share of the Pods\' CPU request, '
      + 'and \'resources\' requests no cpu; give \'resources\' a cpu request, use a preset');
    // A preset requests CPU.
    const other = Testing.app();
    new ServerlessStack(other, 'serverless', { release: V1_13_0 });
    const ok = new Chart(other, 'ok', { namespace: 'team-b' });
    add(ok, { scale: { minReplicas: 1, maxReplicas: 3 }, resources: FunctionResources.preset(FunctionProfile.S) });
    expect(Testing.synth(ok).filter(o => o.kind === 'HorizontalPodAutoscaler')).toHaveLength(1);
  });

  test('fails when security contexts make the Pods break Pod Security restricted, which the namespace enforces', () => {
    const scope = team();
    add(scope, { containerSecurityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } }, podSecurityContext: { runAsUser: 0 } });
    const message = errorOf(scope);
    expect(message).toContain('[team-a/hello] \'containerSecurityContext\' (privileged): runs privileged, which Pod Security restricted refuses, '
      + 'and namespace team-a enforces it');
    expect(message).toContain('\'containerSecurityContext\' (capabilities.drop): does not drop ALL capabilities');
    expect(message).toContain('\'containerSecurityContext\' (capabilities.add): adds SYS_ADMIN');
    expect(message).toContain('\'podSecurityContext\' (runAsUser): the Pod runs as root (runAsUser 0)');
  });
  test('security contexts render into spec.containerSecurityContext and spec.podSecurityContext', () => {
    const scope = team();
    add(scope, {
      containerSecurityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      podSecurityContext: { runAsUser: 2000, seccompProfile: { type: 'RuntimeDefault' } },
    });
    const objects = Testing.synth(scope);
    expectValidKubernetesObjects(objects, { release: ServerlessRelease.V1_13_0 });
    const fn = objects.find(o => o.kind === 'Function');
    expect(fn.spec.containerSecurityContext).toEqual({ readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(fn.spec.podSecurityContext).toEqual({ runAsUser: 2000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(Object.keys(fn.spec)).toEqual([...Object.keys(fn.spec)].sort());
  });

  test.each(['containerSecurityContext', 'podSecurityContext'] as const)('fails under release 1.11.1 when %s is given, saying to use release 1.13.0', prop => {
    const scope = chart();
    add(scope, { [prop]: { runAsUser: 2000 } });
    const message = errorOf(scope);
    expect(message).toContain(`[test/hello] '${prop}' ({"runAsUser":2000}): release 1.11.1 has no spec.${prop}`);
    expect(message).toContain('use release 1.13.0 (the stack\'s \'release\'), or remove it');
    // One problem for the field, in the words of the release: not the schema's unknown field.
    expect(message).not.toContain(`unknown field "${prop}"`);
  });
});
