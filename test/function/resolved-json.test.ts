import * as os from 'node:os';
import { ApiObject, App, Chart, IResolver, JsonPatch, Lazy, ResolutionContext, Size, Testing } from 'cdk8s';
import { ConfigMap, Cpu, EnvFieldPaths, EnvValue, ResourceFieldPaths, Secret } from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import {
  BuildResources, FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitAuthType, KedaTrigger, KymaFunction,
  ServerlessRelease, ServerlessStack,
} from '../../src';
import { UNRESOLVED, holdsNoToken, inResolvedForm, metadataJson, resolvedJson, resolvesAsBuiltIn } from '../../src/function/_resolved-json';
import { renderedAsValidated } from '../../src/function/_valid-at-synth';
import {
  FunctionSpec, FunctionSpecResourceConfigurationFunctionResourcesLimits, FunctionSpecResourceConfigurationFunctionResourcesRequests, toJson_FunctionSpec,
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

describe('holdsNoToken and inResolvedForm', () => {
  const QUANTITIES: ReadonlySet<object> = new Set([FunctionSpecResourceConfigurationFunctionResourcesRequests, FunctionSpecResourceConfigurationFunctionResourcesLimits]
    .map(union => union.prototype));
  const text = fc.oneof(fc.constantFrom('a', 'b', 'B', 'z', '10', '2', 'value', ''), fc.string({ maxLength: 4 }));
  const lazy = <T>(arbitrary: fc.Arbitrary<T>) => arbitrary.map(v => Lazy.any({ produce: () => v }));
  /** A value where the spec has one of a type: mostly that type, sometimes anything else. */
  const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(fc.oneof({ arbitrary, weight: 60 }, { arbitrary: value, weight: 1 }, { arbitrary: lazy(arbitrary), weight: 1 }), { nil: undefined, freq: 3 });
  /** Maps of any keys, in key order as often as not. */
  const map = <T>(arbitrary: fc.Arbitrary<T>) => fc.tuple(fc.dictionary(key, arbitrary, { maxKeys: 3, noNullPrototype: true }), fc.boolean())
    .map(([entries, sorted]) => (sorted ? Object.fromEntries(Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : entries));
  const strings = map(fc.oneof({ arbitrary: text, weight: 30 }, { arbitrary: fc.constantFrom(null, undefined), weight: 1 }, { arbitrary: value, weight: 1 }));
  const quantities = map(fc.oneof({ arbitrary: quantity, weight: 30 }, { arbitrary: fc.constantFrom(null, undefined, '1'), weight: 1 }));
  /** Records as KymaFunction builds them; `value` above brings in maps without a prototype. */
  const record = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }) => fc.record(model, { noNullPrototype: true });
  const keyRef = record({ key: maybe(text), name: maybe(text), optional: maybe(fc.boolean()) });
  const resources = record({ profile: maybe(text), resources: maybe(record({ limits: maybe(quantities), requests: maybe(quantities) })) });
  /** Data of a Function's spec as KymaFunction renders it (FunctionSpec), its fields in either order, with tokens, nulls and other values anywhere. */
  const spec = fc.record({
    runtime: maybe(text),
    runtimeImageOverride: maybe(text),
    source: maybe(record({
      inline: maybe(record({ source: maybe(text), dependencies: maybe(text) })),
      gitRepository: maybe(record({ url: maybe(text), baseDir: maybe(text), reference: maybe(text), auth: maybe(record({ type: maybe(text), secretName: maybe(text) })) })),
    })),
    env: maybe(fc.array(record({
      name: maybe(text),
      value: maybe(text),
      valueFrom: maybe(record({
        configMapKeyRef: maybe(keyRef),
        fieldRef: maybe(record({ fieldPath: maybe(text), apiVersion: maybe(text) })),
        resourceFieldRef: maybe(record({ resource: maybe(text), containerName: maybe(text), divisor: maybe(quantity) })),
        secretKeyRef: maybe(keyRef),
      })),
    }), { maxLength: 2 })),
    secretMounts: maybe(fc.array(record({ secretName: maybe(text), mountPath: maybe(text) }), { maxLength: 2 })),
    resourceConfiguration: maybe(record({ function: maybe(resources), build_: maybe(resources) })),
    replicas: maybe(fc.integer()),
    scaleConfig: maybe(record({ minReplicas: maybe(fc.integer()), maxReplicas: maybe(fc.integer()) })),
    labels: maybe(strings),
    annotations: maybe(strings),
    template: maybe(record({ labels: maybe(strings), annotations: maybe(strings) })),
  }, { requiredKeys: [], noNullPrototype: true }).chain(given => fc.boolean().map(reversed => (reversed ? Object.fromEntries(Object.entries(given).reverse()) : given)));

  test('toJson_FunctionSpec of a spec that holds no token, when in resolved form, is what it gives of the resolved spec', () => {
    let plain = 0;
    fc.assert(fc.property(spec, data => {
      let json: unknown;
      try {
        json = toJson_FunctionSpec(data as FunctionSpec);
      } catch {
        return;
      }
      if (!holdsNoToken(data, QUANTITIES)) return;
      const resolved = resolvedJson(data);
      expect(resolved).not.toBe(UNRESOLVED);
      if (!inResolvedForm(json)) return;
      plain++;
      const rendered = toJson_FunctionSpec(resolved as FunctionSpec);
      expect(json).toStrictEqual(rendered);
      // Key order too: the YAML writer writes keys in the order they come.
      expect(JSON.stringify(json)).toBe(JSON.stringify(rendered));
    }), { numRuns: 2000 });
    // Enough of the runs take the way synth takes for a Function's object.
    expect(plain).toBeGreaterThan(200);
  });

  test('holdsNoToken holds for what resolvedJson takes as it is, and not for a Lazy value or what it leaves to cdk8s', () => {
    fc.assert(fc.property(value, data => {
      const holdsLazy = (v: unknown): boolean => v instanceof Lazy || (typeof v === 'object' && v !== null && Object.values(v).some(holdsLazy));
      if (holdsLazy(data)) return;
      expect(holdsNoToken(data, QUANTITIES)).toBe(resolvedJson(data) !== UNRESOLVED);
    }), { numRuns: 500 });
    expect(holdsNoToken({ a: [Lazy.any({ produce: () => 1 })] }, QUANTITIES)).toBe(false);
    expect(holdsNoToken({ a: new Token('x') }, QUANTITIES)).toBe(false);
    expect(holdsNoToken({ a: FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString('1') }, QUANTITIES)).toBe(true);
    // A union value of another class, or one with other fields, which resolvedJson gives as `{ value }` alone.
    expect(holdsNoToken({ a: FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString('1') }, new Set())).toBe(false);
    expect(holdsNoToken({ a: Object.assign(FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString('1'), { name: 'x' }) }, QUANTITIES)).toBe(false);
    expect(holdsNoToken({ a: Object.assign(Object.create(null), { value: '1' }) }, QUANTITIES)).toBe(false);
    expect(holdsNoToken(JSON.parse('{"__proto__": 1}'), QUANTITIES)).toBe(false);
  });

  test.each<[string, unknown]>([
    ['a map out of key order', { b: 1, a: 1 }],
    ['a key that starts with a digit', { '1a': 1 }],
    ['a null value', { a: null }],
    ['an undefined value', { a: undefined }],
    ['a list with undefined', [undefined]],
    ['a list with a hole', [1, , 3]], // eslint-disable-line no-sparse-arrays
    ['a map without a prototype', Object.assign(Object.create(null), { a: 1 })],
    ['a union value', FunctionSpecResourceConfigurationFunctionResourcesRequests.fromString('1')],
    ['a Lazy value', Lazy.any({ produce: () => 1 })],
    ['a key __proto__', JSON.parse('{"__proto__": 1}')],
  ])('inResolvedForm does not hold for %s', (_, json) => {
    expect(inResolvedForm({ z: json })).toBe(false);
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

  test('gives what cdk8s\'s metadata.toJson gives for the usual metadata: names, and labels and annotations of strings (the shortcut it takes)', () => {
    const usual = fc.record({
      name: fc.option(text, { nil: undefined }),
      namespace: fc.option(text, { nil: undefined }),
      labels: fc.option(fc.dictionary(key, text, { maxKeys: 4, noNullPrototype: true }), { nil: undefined }),
      annotations: fc.option(fc.dictionary(key, text, { maxKeys: 4, noNullPrototype: true }), { nil: undefined }),
      finalizers: fc.boolean().map(empty => (empty ? [] as string[] : undefined)),
      ownerReferences: fc.boolean().map(empty => (empty ? [] : undefined)),
    }, { requiredKeys: [] });
    fc.assert(fc.property(usual, fc.array(fc.tuple(key, text), { maxLength: 2 }), (fields, added) => {
      const object = new ApiObject(Testing.chart(), 'Object', { apiVersion: 'v1', kind: 'Thing', metadata: fields });
      for (const [k, v] of added) {
        object.metadata.addLabel(k, v);
        object.metadata.addAnnotation(`a.example.com/${k}`, v);
      }
      const ours = metadataJson(object.metadata);
      expect(ours).toStrictEqual(object.metadata.toJson());
      expect(JSON.stringify(ours)).toBe(JSON.stringify(object.metadata.toJson()));
    }), { numRuns: 1000 });
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
    // Maps in key order, no token: its object writes the spec's JSON validation checked.
    const sorted = new KymaFunction(team, 'sorted', {
      runtime,
      source: FunctionSource.fromInline('exports.main = () => "sorted";\n', '{ "dependencies": {} }'),
      env: { PLAIN: EnvValue.fromValue('x'), PASSWORD: EnvValue.fromSecretValue({ secret, key: 'password' }), CPU: EnvValue.fromResource(ResourceFieldPaths.CPU_LIMIT, { divisor: '1m' }) },
      secretMounts: [{ secretName: 'tls', mountPath: '/etc/tls' }],
      resources: FunctionResources.custom(resources),
      ...(builds ? { buildResources: BuildResources.custom(resources) } : {}),
      scale: { minReplicas: 1, maxReplicas: 2 },
      labels: { app: 'orders', zone: 'b' },
      annotations: { 'a.example.com/tier': 'gold', 'z.example.com/owner': 'team-a' },
      ...(builds ? {} : { containerSecurityContext: { readOnlyRootFilesystem: true }, podSecurityContext: { runAsUser: 2000 } }),
    });
    return [full, git, patched, sorted];
  }

  /** The YAML of an app, how many Functions cdk8s's ApiObject.toJson rendered, and which wrote the spec validation checked. */
  function synth(app: App, release: ServerlessRelease): { yaml: string; byCdk8s: number; asValidated: string[] } {
    const objects = functions(app, release).map(f => f.apiObject);
    const toJson = jest.spyOn(ApiObject.prototype, 'toJson');
    const rendered = new Map<ApiObject, unknown[]>();
    try {
      for (const object of objects) {
        const render = object.toJson.bind(object);
        jest.spyOn(object, 'toJson').mockImplementation(() => {
          const json = render();
          rendered.set(object, [...rendered.get(object) ?? [], json]);
          return json;
        });
      }
      const yaml = app.synthYaml();
      const asValidated = objects.filter(o => (rendered.get(o) ?? []).some(json => renderedAsValidated(json, o))).map(o => o.node.scope!.node.id);
      return { yaml, byCdk8s: toJson.mock.contexts.filter(o => (o as ApiObject).kind === 'Function').length, asValidated };
    } finally {
      toJson.mockRestore();
      jest.restoreAllMocks();
    }
  }

  test.each([ServerlessRelease.V1_11_1, ServerlessRelease.V1_13_0])('is what cdk8s renders, resolving every value, under release %s', release => {
    const ours = synth(new App({ outdir: os.tmpdir() }), release);
    const cdk8s = synth(new App({ outdir: os.tmpdir(), resolvers: [noop] }), release);
    expect(ours.yaml).toBe(cdk8s.yaml);
    expect(ours.yaml).toContain('patched: "yes"');
    expect(ours.yaml).toContain('late: resolved');
    // With the app's own resolver, cdk8s renders each of the four Functions; without, only the patched one,
    expect(cdk8s.byCdk8s).toBe(4);
    expect(ours.byCdk8s).toBe(1);
    // and those whose spec holds no token and whose maps are in key order write the JSON validation checked (the
    // token of git's is in its metadata, which is rendered as before).
    expect(ours.asValidated).toEqual(['git', 'sorted']);
    expect(cdk8s.asValidated).toEqual([]);
  });
});
