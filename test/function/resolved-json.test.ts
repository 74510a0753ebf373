import * as os from 'node:os';
import { ApiObject, App, Chart, IResolver, JsonPatch, Lazy, ResolutionContext, Size, Testing } from 'cdk8s';
import { ConfigMap, Cpu, EnvFieldPaths, EnvValue, ResourceFieldPaths, Secret } from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import {
  BuildResources, FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitAuthType, KedaTrigger, KymaFunction,
  ServerlessRelease, ServerlessStack,
} from '../../src';
import { UNRESOLVED, metadataJson, resolvedJson, resolvesAsBuiltIn } from '../../src/function/_resolved-json';
import {
  FunctionSpecResourceConfigurationFunctionResourcesLimits, FunctionSpecResourceConfigurationFunctionResourcesRequests,
} from '../../imports/serverless.kyma-project.io';

/** What cdk8s's ApiObject.toJson makes of data under `spec`: `sanitizeValue(resolve(...))`, keys sorted. */
function cdk8sJson(data: unknown): unknown {
  const chart = Testing.chart();
  return new ApiObject(chart, 'Object', { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'thing' }, spec: data }).toJson().spec;
}

/** A class instance that resolves itself, as cdk8s's implicit tokens do. */
class Token {
  constructor(private readonly value: unknown) {}
  public resolve(): unknown {
    return this.value;
  }
}

const key = fc.oneof(fc.constantFrom('a', 'b', 'B', '10', '2', 'value', 'resolve', 'spec', ''), fc.string({ maxLength: 6 }));
const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined));
const quantity = fc.constantFrom('100m', '1Gi', '2').chain(q => fc.constantFrom(
  FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString(q),
  FunctionSpecResourceConfigurationFunctionResourcesLimits.fromString(q),
));

const { value } = fc.letrec<{ value: unknown }>(tie => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    quantity,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5, noNullPrototype: true }),
    tie('value').map(v => Lazy.any({ produce: () => v })),
  ),
}));

describe('resolvedJson', () => {
  test('gives what cdk8s\'s resolve and sanitizeValue give, for any data of scalars, lists, maps, Lazy values and quantities', () => {
    fc.assert(fc.property(value, data => {
      const ours = resolvedJson(data);
      expect(ours).not.toBe(UNRESOLVED);
      expect(ours).toStrictEqual(cdk8sJson(data));
      // Key order too: the YAML writer writes keys in the order they come.
      expect(JSON.stringify(ours)).toBe(JSON.stringify(cdk8sJson(data)));
    }), { numRuns: 500 });
  });

  test.each<[string, unknown]>([
    ['an implicit token', { a: new Token('x') }],
    ['a map with a resolve function', { a: { resolve: () => 'x' } }],
    ['a function', { a: () => 'x' }],
    ['a list with a hole', { a: [1, , 3] }], // eslint-disable-line no-sparse-arrays
    ['a list with a value', { a: Object.assign([1], { value: 'x' }) }],
    ['a map without a prototype', { a: Object.assign(Object.create(null), { b: 1 }) }],
    ['an object of a class', { a: new Date(0) }],
    ['a key __proto__', { a: JSON.parse('{"__proto__": 1}') }],
    ['an own constructor', { a: { constructor: 'x' } }],
    ['a symbol', { a: Symbol('x') }],
    ['a big integer', { a: BigInt(1) }],
  ])('leaves %s to cdk8s', (_, data) => {
    expect(resolvedJson(data)).toBe(UNRESOLVED);
  });

  test('resolves a Lazy value that produces a quantity', () => {
    const data = { a: Lazy.any({ produce: () => FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString('1Gi') }) };
    expect(resolvedJson(data)).toEqual({ a: { value: '1Gi' } });
    expect(resolvedJson(data)).toEqual(cdk8sJson(data));
  });
});

describe('metadataJson', () => {
  const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constant(''));
  const maybeLazy = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(arbitrary, arbitrary.map(v => Lazy.any({ produce: () => v })));
  const strings = fc.dictionary(key, maybeLazy(fc.oneof(text, fc.constant(undefined))), { maxKeys: 4, noNullPrototype: true });
  const metadata = fc.record({
    name: fc.option(text, { nil: undefined }),
    namespace: fc.option(text, { nil: undefined }),
    labels: fc.option(strings, { nil: undefined }),
    annotations: fc.option(strings, { nil: undefined }),
    finalizers: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
    ownerReferences: fc.option(fc.array(fc.record({ apiVersion: text, kind: text, name: text, uid: text }).map(owner => ({ ...owner })), { maxLength: 2 }), { nil: undefined }),
    extra: fc.dictionary(fc.constantFrom('generateName', 'uid', 'managedFields', 'x', 'z'), value, { maxKeys: 3, noNullPrototype: true }),
  });

  test('gives what cdk8s\'s metadata.toJson gives, for any name, namespace, labels, annotations, finalizers, owners and other fields', () => {
    fc.assert(fc.property(metadata, fc.array(fc.tuple(key, text), { maxLength: 2 }), (given, added) => {
      const { extra, ...fields } = given;
      const object = new ApiObject(Testing.chart(), 'Object', { apiVersion: 'v1', kind: 'Thing', metadata: { ...extra, ...fields } });
      for (const [k, v] of added) {
        object.metadata.addLabel(k, v);
        object.metadata.addAnnotation(`a.example.com/${k}`, v);
      }
      const ours = metadataJson(object.metadata);
      expect(ours).not.toBe(UNRESOLVED);
      expect(ours).toStrictEqual(object.metadata.toJson());
      expect(JSON.stringify(ours)).toBe(JSON.stringify(object.metadata.toJson()));
    }), { numRuns: 500 });
  });

  test('leaves to cdk8s a metadata with a field of its own that this module does not know', () => {
    const object = new ApiObject(Testing.chart(), 'Object', { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'thing' } });
    Object.assign(object.metadata, { generatedName: 'other' });
    expect(metadataJson(object.metadata)).toBe(UNRESOLVED);
  });

  test('leaves a metadata with an implicit token to cdk8s', () => {
    const object = new ApiObject(Testing.chart(), 'Object', { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'thing' } });
    object.metadata.add('token', new Token('x'));
    expect(metadataJson(object.metadata)).toBe(UNRESOLVED);
  });
});

describe('resolvesAsBuiltIn', () => {
  const noop: IResolver = { resolve: (_: ResolutionContext) => undefined };

  test('holds for an app with cdk8s\'s resolvers only', () => {
    expect(resolvesAsBuiltIn(new Chart(new App(), 'chart'))).toBe(true);
  });

  test('does not hold for an app with a resolver of its own', () => {
    expect(resolvesAsBuiltIn(new Chart(new App({ resolvers: [noop] }), 'chart'))).toBe(false);
  });

  test('does not hold when CDK8S_DISABLE_SORT is set', () => {
    process.env.CDK8S_DISABLE_SORT = '1';
    try {
      expect(resolvesAsBuiltIn(new Chart(new App(), 'chart'))).toBe(false);
    } finally {
      delete process.env.CDK8S_DISABLE_SORT;
    }
  });
});

describe('a KymaFunction\'s object', () => {
  const noop: IResolver = { resolve: (_: ResolutionContext) => undefined };

  /** Functions with every prop that reaches the spec, under a release, in an app. */
  function functions(app: App, release: ServerlessRelease): KymaFunction[] {
    const stack = new ServerlessStack(app, 'serverless', { release });
    const team = new FunctionNamespace(app, 'team-a', { stack });
    const secret = Secret.fromSecretName(team, 'Creds', 'creds');
    const config = ConfigMap.fromConfigMapName(team, 'Config', 'settings');
    const resources = { cpu: { request: Cpu.millis(250), limit: Cpu.units(1) }, memory: { request: Size.mebibytes(256), limit: Size.mebibytes(512) } };
    const builds = release === ServerlessRelease.V1_11_1;
    const runtime = builds ? FunctionRuntime.NODEJS_22 : FunctionRuntime.NODEJS_24;
    const full = new KymaFunction(team, 'full', {
      runtime,
      source: FunctionSource.fromInline('exports.main = () => "hi";\n', '{ "dependencies": {} }'),
      env: {
        PLAIN: EnvValue.fromValue('x'),
        PASSWORD: EnvValue.fromSecretValue({ secret, key: 'password' }, { optional: true }),
        LEVEL: EnvValue.fromConfigMap(config, 'level'),
        POD: EnvValue.fromFieldRef(EnvFieldPaths.POD_NAME),
        CPU: EnvValue.fromResource(ResourceFieldPaths.CPU_LIMIT, { divisor: '1m' }),
      },
      secretMounts: [{ secretName: 'tls', mountPath: '/etc/tls' }],
      resources: FunctionResources.custom(resources),
      ...(builds ? { buildResources: BuildResources.custom(resources) } : {}),
      scale: { minReplicas: 1, maxReplicas: 3 },
      labels: { zone: 'b', app: 'orders', '10': 'ten', '2': 'two' },
      annotations: { 'z.example.com/owner': 'team-a', 'a.example.com/tier': 'gold' },
      runtimeImageOverride: 'europe-docker.pkg.dev/kyma-project/prod/function-runtime-nodejs22:main',
      acceptWarnings: ['undeclaredImport'],
      ...(builds ? {} : { containerSecurityContext: { readOnlyRootFilesystem: true }, podSecurityContext: { runAsUser: 2000 } }),
    });
    full.subscribe({ source: 'commerce', types: ['order.created.v1'] });
    const git = new KymaFunction(team, 'git', {
      runtime: FunctionRuntime.PYTHON_312,
      source: FunctionSource.fromGitRepository({
        url: 'https://github.com/example/functions.git', baseDir: '/orders', reference: 'main', auth: { type: GitAuthType.BASIC, secretName: 'git-creds' },
      }),
      keda: { maxReplicas: 4, triggers: [KedaTrigger.cron({ timezone: 'UTC', start: '0 8 * * *', end: '0 18 * * *', desiredReplicas: 2 })] },
      resources: FunctionResources.preset(FunctionProfile.S),
    });
    // Tokens in the metadata: cdk8s resolves them when it renders the metadata.
    git.apiObject.metadata.addLabel('late', Lazy.any({ produce: () => 'resolved' }));
    const patched = new KymaFunction(team, 'patched', { runtime, source: FunctionSource.fromInline('exports.main = () => 1;\n'), replicas: 2 });
    patched.apiObject.addJsonPatch(JsonPatch.add('/spec/labels', { patched: 'yes' }));
    return [full, git, patched];
  }

  /** The YAML of an app, and how many Functions cdk8s's ApiObject.toJson rendered. */
  function synth(app: App, release: ServerlessRelease): { yaml: string; byCdk8s: number } {
    functions(app, release);
    const toJson = jest.spyOn(ApiObject.prototype, 'toJson');
    try {
      const yaml = app.synthYaml();
      return { yaml, byCdk8s: toJson.mock.contexts.filter(o => (o as ApiObject).kind === 'Function').length };
    } finally {
      toJson.mockRestore();
    }
  }

  test.each([ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0])('is what cdk8s renders, resolving every value, under release %s', release => {
    const ours = synth(new App({ outdir: os.tmpdir() }), release);
    const cdk8s = synth(new App({ outdir: os.tmpdir(), resolvers: [noop] }), release);
    expect(ours.yaml).toBe(cdk8s.yaml);
    expect(ours.yaml).toContain('patched: "yes"');
    expect(ours.yaml).toContain('late: resolved');
    // With the app's own resolver, cdk8s renders each of the three Functions; without, only the patched one.
    expect(cdk8s.byCdk8s).toBe(3);
    expect(ours.byCdk8s).toBe(1);
  });
});
