/**
 * lib/cel/cel.js (scripts/bundle-cel.ts): the bundled CEL interpreter gives every rule of the
 * Function CRDs the answer `@bufbuild/cel` gives, errors included, and is what npm run bundle
 * wrote (npm test runs it first).
 */
import * as fs from 'node:fs';
import type * as Cel from '@bufbuild/cel';
import { CEL_BUNDLE, CEL_EXPORTS, bundleCel } from '../../scripts/bundle-cel';
import { ServerlessRelease, functionSchema } from '../../src/api';
import { JsonSchemaProps } from '../../src/api/schema';

type CelModule = Pick<typeof Cel, 'celEnv' | 'isCelError' | 'parse' | 'plan'> & { strings: typeof import('@bufbuild/cel/ext').strings };

const bundled = require(CEL_BUNDLE) as CelModule;
const packages: CelModule = { ...require('@bufbuild/cel') as typeof Cel, strings: (require('@bufbuild/cel/ext') as typeof import('@bufbuild/cel/ext')).strings };

/** Every CEL rule of a schema, with the path of its node. */
function rulesOf(schema: JsonSchemaProps, at = ''): { at: string; rule: string }[] {
  return [
    ...(schema['x-kubernetes-validations'] ?? []).map(r => ({ at, rule: r.rule })),
    ...Object.entries(schema.properties ?? {}).flatMap(([key, child]) => rulesOf(child, `${at}.${key}`)),
    ...(schema.items ? rulesOf(schema.items, `${at}[]`) : []),
    ...(typeof schema.additionalProperties === 'object' ? rulesOf(schema.additionalProperties, `${at}{}`) : []),
  ];
}

/** JSON as the validator binds it to `self`: objects as maps, whole numbers as ints. */
function toCel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value;
}

/** Values of `self` for every rule: some that pass, some that fail, some of the wrong shape. */
const SELVES: unknown[] = [
  {}, { inline: { source: 'x' } }, { gitRepository: { url: 'u' }, inline: { source: 'x' } }, { gitRepository: {} },
  { baseDir: ' ', reference: 'main' }, { baseDir: '/x', reference: '' }, { baseDir: '/x', reference: 'main' },
  { profile: 'M' }, { profile: 'XXL' }, { profile: 'fast', resources: {} }, { resources: { limits: { cpu: '1' } } },
  { minReplicas: 1, maxReplicas: 3 }, { minReplicas: 4, maxReplicas: 3 }, { minReplicas: 1 },
  { labels: { a: 'b' } }, { annotations: {} },
  [], ['serverless.kyma-project.io/x'], ['app', 'x'.repeat(64)], ['proxy.istio.io/config'],
  [{ name: 'FUNC_PORT', value: '1' }], [{ name: 'GREETING' }], [{ value: 'no name' }],
  '', '  ', 'secret', 3, null,
];

/** What a rule says of each self, `error: ...` where it cannot be evaluated. */
function outcomes(module: CelModule, rule: string): unknown[] {
  const program = module.plan(module.celEnv({ funcs: module.strings }), module.parse(rule)) as unknown as (bindings: { self: unknown }) => unknown;
  return SELVES.map(self => {
    const result = program({ self: toCel(self) });
    return module.isCelError(result) ? `error: ${result.message}` : result;
  });
}

describe('the CEL bundle', () => {
  test('is what npm run bundle wrote from the current sources and lock file', () => {
    expect(fs.readFileSync(CEL_BUNDLE, 'utf8')).toBe(bundleCel());
  });

  test('exports what the validator uses, not the packages themselves', () => {
    for (const name of Object.values(CEL_EXPORTS).flat()) expect(typeof (bundled as unknown as Record<string, unknown>)[name]).not.toBe('undefined');
    expect(bundled.plan).not.toBe(packages.plan);
  });

  const rules = [...new Set(Object.values(ServerlessRelease).flatMap(release => rulesOf(functionSchema(release)).map(r => r.rule)))];

  test.each(rules)('%s: the answer of @bufbuild/cel for each self', rule => {
    const answers = outcomes(bundled, rule);
    expect(answers).toEqual(outcomes(packages, rule));
    // The samples reach both answers of every rule.
    expect(answers).toContain(true);
    expect(answers).toContain(false);
  });
});
