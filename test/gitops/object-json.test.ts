/**
 * apiObjectJson (src/gitops/_object-json.ts) gives what an object's own `toJson()` gives, byte for
 * byte once written: for every object of the stack and its namespaces, and for generated objects of
 * cdk8s's ApiObject and of cdk8s-plus-27's generated classes; anything else is rendered by the object.
 */
import { ApiObject, App, Chart, IResolver, JsonPatch, Lazy, ResolutionContext, Size, Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import {
  FunctionNamespace, GitOpsApp, Registry, ServerlessRelease, ServerlessStack, ServerlessStackProps, WebhookCertificates,
} from '../../src';
import { apiObjectJson } from '../../src/gitops/_object-json';

/** Renders an object both ways: how many times its own `toJson` ran for apiObjectJson, and both results (or errors). */
function bothWays(object: ApiObject): { own: number; fast: unknown; slow: unknown } {
  const toJson = jest.spyOn(object, 'toJson');
  const outcome = (render: () => unknown) => {
    try {
      const value = render();
      return { json: JSON.stringify(value), value };
    } catch (e) {
      return { error: (e as Error).message };
    }
  };
  const fast = outcome(() => apiObjectJson(object));
  const own = toJson.mock.calls.length;
  toJson.mockRestore();
  return { own, fast, slow: outcome(() => object.toJson()) };
}

const objectsOf = (app: App) => app.node.findAll().filter(ApiObject.isApiObject);

describe('apiObjectJson', () => {
  test.each<[string, ServerlessStackProps]>([
    ['the default stack', {}],
    ['release 1.13.0', { release: ServerlessRelease.V1_13_0 }],
    ['an external registry, no network policies', { registry: Registry.external({ secretName: 'registry' }), networkPolicies: false }],
    ['cert-manager certificates and monitoring', { webhook: { certificates: WebhookCertificates.certManager() }, monitoring: {} }],
    ['no webhook', { webhook: { enabled: false } }],
  ])('renders every object of %s and its namespaces as its toJson does, itself', (_, props) => {
    const app = new GitOpsApp({ outdir: 'unused' });
    const stack = new ServerlessStack(app, 'serverless', props);
    new FunctionNamespace(app, 'team-a', { stack, egress: { packageRegistry: [] } });
    new FunctionNamespace(app, 'team-b', { stack, quota: { pods: 20, limitsMemory: Size.gibibytes(8) }, egress: { packageRegistry: [], allow: [] } });
    const objects = objectsOf(app);
    expect(objects.length).toBeGreaterThan(15);
    for (const object of objects) {
      const { own, fast, slow } = bothWays(object);
      expect({ path: object.node.path, ...fast as object }).toStrictEqual({ path: object.node.path, ...slow as object });
      // None needs cdk8s's walk, but the objects of other packages' classes.
      if (ApiObject.prototype.isPrototypeOf(Object.getPrototypeOf(object)) && Object.getPrototypeOf(object).constructor.name.startsWith('Kube')) {
        expect({ path: object.node.path, own }).toEqual({ path: object.node.path, own: 0 });
      }
    }
  });

  // Data of any shape cdk8s resolves: scalars, lists, maps, Lazy values, tokens it leaves to cdk8s, undefined and null.
  class Token {
    constructor(private readonly value: unknown) {}
    public resolve(): unknown {
      return this.value;
    }
  }
  const key = fc.oneof(fc.constantFrom('a', 'b', 'B', '10', 'value', 'spec', 'metadata', 'kind', 'apiVersion', 'namespace', ''), fc.string({ maxLength: 5 }));
  const scalar = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined));
  const { value } = fc.letrec<{ value: unknown }>(tie => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true }),
      tie('value').map(v => Lazy.any({ produce: () => v })),
      scalar.map(v => new Token(v)),
      fc.constantFrom(k8s.Quantity.fromString('1Gi'), k8s.IntOrString.fromNumber(8080)),
    ),
  }));
  const labels = fc.dictionary(fc.constantFrom('app', 'b', 'tier'), fc.oneof(fc.string({ maxLength: 4 }), fc.constant(undefined)), { maxKeys: 3 });
  const metadata = fc.record({
    name: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }),
    namespace: fc.option(fc.constantFrom('ns'), { nil: undefined }),
    labels: fc.option(labels, { nil: undefined }),
    annotations: fc.option(labels, { nil: undefined }),
    finalizers: fc.option(fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 }), { nil: undefined }),
  }, { requiredKeys: [] });
  // Props of any keys but `apiVersion` and `kind`, which the classes take from their own.
  const props = fc.dictionary(key.filter(k => k !== 'apiVersion' && k !== 'kind'), value, { maxKeys: 4 });
  const patches = fc.array(fc.constantFrom(
    () => JsonPatch.remove('/metadata/namespace'),
    () => JsonPatch.add('/metadata/labels/extra', 'x'),
    () => JsonPatch.replace('/spec', 1),
    () => JsonPatch.remove('/metadata/nothing'),
  ), { maxLength: 2 });

  test('renders generated objects of cdk8s\'s ApiObject and of cdk8s-plus-27\'s classes as their toJson does, and throws what it throws', () => {
    let own = 0;
    fc.assert(fc.property(
      fc.constantFrom('ApiObject', 'KubeConfigMap', 'KubeDeployment', 'KubeService', 'KubeNamespace', 'KubeClusterRole'),
      fc.option(fc.constantFrom('chart-ns'), { nil: undefined }), metadata, props, patches, fc.boolean(),
      (kind, namespace, meta, data, patchMakers, lazyLabel) => {
        const chart = new Chart(Testing.app(), 'chart', { namespace, labels: { chart: 'label' } });
        const object = kind === 'ApiObject'
          ? new ApiObject(chart, 'Object', { ...data, apiVersion: 'v1', kind: 'Thing', metadata: meta as never })
          : new (k8s as unknown as Record<string, new (scope: Chart, id: string, props: unknown) => ApiObject>)[kind](chart, 'Object', { ...data, metadata: meta });
        for (const make of patchMakers) object.addJsonPatch(make());
        if (lazyLabel) object.metadata.addLabel('added', Lazy.any({ produce: () => 'later' }) as unknown as string);
        const both = bothWays(object);
        own += both.own;
        expect(both.fast).toStrictEqual(both.slow);
      },
    ), { numRuns: 1500 });
    // Some needed cdk8s's own walk (tokens, other patches), most did not.
    expect(own).toBeGreaterThan(0);
    expect(own).toBeLessThan(1500);
  });

  test('leaves to the object itself a class that renders its own way, and an app with a resolver of its own', () => {
    class Custom extends ApiObject {
      public override toJson(): any {
        return { ...super.toJson(), custom: true };
      }
    }
    const chart = Testing.chart();
    const custom = new Custom(chart, 'Custom', { apiVersion: 'v1', kind: 'Thing' });
    expect(bothWays(custom)).toMatchObject({ own: 1, fast: { value: { custom: true } } });
    class Subclass extends k8s.KubeConfigMap {}
    expect(bothWays(new Subclass(chart, 'Sub', { data: { a: 'b' } })).own).toBe(1);

    const upper: IResolver = { resolve: (context: ResolutionContext) => { if (context.value === 'lower') context.replaceValue('UPPER'); } };
    const app = new App({ resolvers: [upper] });
    const object = new k8s.KubeConfigMap(new Chart(app, 'chart'), 'Map', { data: { a: 'lower' } });
    const both = bothWays(object);
    expect(both).toMatchObject({ own: 1, fast: { value: { data: { a: 'UPPER' } } } });
    expect(both.fast).toStrictEqual(both.slow);
  });

  test('wraps what a Lazy value throws as cdk8s does', () => {
    const object = new k8s.KubeConfigMap(Testing.chart(), 'Map', { data: Lazy.any({ produce: () => { throw new Error('no data'); } }) as never });
    const both = bothWays(object);
    expect(both.fast).toEqual({ error: expect.stringMatching(/^Failed serializing construct at path '.*Map' with name '.*': Error: no data$/) });
    expect(both.fast).toStrictEqual(both.slow);
  });
});
