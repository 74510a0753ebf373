/**
 * lib/cel/cel.js (scripts/bundle-cel.ts): the bundled CEL interpreter gives every rule of the
 * Function CRDs the answer `@bufbuild/cel` gives, errors included, from the parse it holds of every
 * rule of the package's schemas, and is what npm run bundle wrote (npm test runs it first).
 */
import * as fs from 'node:fs';
import type * as Cel from '@bufbuild/cel';
import { CEL_BUNDLE, CEL_EXPORTS, bundleCel, shippedRules } from '../../scripts/bundle-cel';
import { ServerlessRelease, functionSchema } from '../../src/api';
import { JsonSchemaProps } from '../../src/api/schema';

type CelModule = Pick<typeof Cel, 'celEnv' | 'isCelError' | 'plan'> & { strings: typeof import('@bufbuild/cel/ext').strings };
type Expr = ReturnType<typeof Cel.parse>['expr'];

const bundled = require(CEL_BUNDLE) as CelModule & { parse?: unknown; parsedRules: { [rule: string]: Expr } };
const packages = { ...require('@bufbuild/cel') as typeof Cel, strings: (require('@bufbuild/cel/ext') as typeof import('@bufbuild/cel/ext')).strings };

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
function outcomes(module: CelModule, expr: Parameters<typeof Cel.plan>[1]): unknown[] {
  const program = module.plan(module.celEnv({ funcs: module.strings }), expr) as unknown as (bindings: { self: unknown }) => unknown;
  return SELVES.map(self => {
    const result = program({ self: toCel(self) });
    return module.isCelError(result) ? `error: ${result.message}` : result;
  });
}

describe('the CEL bundle', () => {
  const rules = [...new Set(Object.values(ServerlessRelease).flatMap(release => rulesOf(functionSchema(release)).map(r => r.rule)))];

  test('is what npm run bundle wrote from the current sources and lock file', () => {
    expect(fs.readFileSync(CEL_BUNDLE, 'utf8')).toBe(bundleCel());
  });

  test('exports what the validator uses, not the packages themselves, and no parser', () => {
    for (const name of Object.values(CEL_EXPORTS).flat()) expect(typeof (bundled as unknown as Record<string, unknown>)[name]).not.toBe('undefined');
    expect(bundled.plan).not.toBe(packages.plan);
    expect(bundled.parse).toBeUndefined();
    // The parser's grammar names its tokens: none is left.
    expect(bundleCel()).not.toContain('relational operator');
  });

  test('holds the parse of every rule of the Function, APIRule and Subscription schemas, as @bufbuild/cel parses it', () => {
    const shipped = shippedRules();
    expect(shipped).toEqual(expect.arrayContaining(rules));
    expect(Object.keys(bundled.parsedRules).sort()).toEqual(shipped);
    for (const rule of shipped) expect(bundled.parsedRules[rule]).toEqual(packages.parse(rule).expr);
  });

  test.each(rules)('%s: the answer of @bufbuild/cel for each self', rule => {
    const answers = outcomes(bundled, bundled.parsedRules[rule]);
    expect(answers).toEqual(outcomes(packages, packages.parse(rule)));
    // The samples reach both answers of every rule.
    expect(answers).toContain(true);
    expect(answers).toContain(false);
  });
});
