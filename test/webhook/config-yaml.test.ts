import * as fc from 'fast-check';
import { dump } from 'js-yaml';
import { ServerlessRelease } from '../../src/api';
import { plainYamlOf } from '../../src/webhook/_config-yaml';
import { WEBHOOK_NAMES, WebhookConfig, renderWebhookConfig, resolveWebhookConfig } from '../../src/webhook/config';

/** What renderWebhookConfig wrote before src/webhook/_config-yaml.ts, and still writes for what that module leaves to js-yaml. */
const jsYaml = (value: unknown) => dump(value, { sortKeys: true, lineWidth: -1, skipInvalid: true });

/** Strings near the edges of what js-yaml writes plain: types it would read them as, indicators, quotes, white space, non-ASCII. */
const EDGY_STRINGS = [
  '', 'a', 'L', 'normal', 'kyma-system', 'serverless-webhook', 'defaulting.webhook.serverless.kyma-project.io', 'a/b', 'a_b', 'a.', 'a-', 'a/',
  '1.11.1', '1.13.0', '0.0.0', '01.2.3', '1.5', '1', '-1', '+1', '0x1f', '0o7', '1e3', '1_000', '.inf', '.nan', '.5', '1:30', '190:20:30',
  '2026-12-02', '2001-12-14t21:59:43.10-05:00', 'null', 'Null', 'NULL', '~', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
  'y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO', 'on', 'On', 'ON', 'off', 'Off', 'OFF', 'nULL', 'tRUE', 'yES', 'oN',
  'a b', ' a', 'a ', 'a:b', 'a: b', 'a #b', 'a#b', '#a', '-a', '- a', '?a', ':a', '&a', '*a', '!a', '|a', '>a', "'a", '"a', '%a', '@a', '`a',
  '[a]', '{a}', 'a,b', 'a\nb', 'a\tb', 'caf\u00e9', '\u03b3', 'a\u2028b', '<<', '=', 'a'.repeat(1030),
];
const name = fc.oneof(fc.constantFrom(...EDGY_STRINGS), fc.stringMatching(/^[A-Za-z0-9._/: #-]{0,12}$/), fc.string({ maxLength: 6 }));
const scalar = fc.oneof(
  name,
  fc.integer(), fc.maxSafeInteger(), fc.constantFrom(0, -0, 1.5, 1e21, -1e21, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, -Infinity),
  fc.double(), fc.boolean(), fc.constantFrom(undefined, null),
);
const value = fc.letrec<{ map: Record<string, unknown>; value: unknown }>(tie => ({
  map: fc.dictionary(name, tie('value'), { maxKeys: 5 }),
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), fc.array(scalar, { maxLength: 3 })),
})).map;

/** Compares plainYamlOf with js-yaml on generated values, wherever it answers; how many times it did. */
function answersAsJsYaml(values: fc.Arbitrary<unknown>, numRuns: number): number {
  let answered = 0;
  fc.assert(fc.property(values, map => {
    const text = plainYamlOf(map);
    if (text === undefined) return;
    answered++;
    expect(text).toBe(jsYaml(map));
  }), { numRuns });
  return answered;
}

describe("the webhook configuration's own YAML writer", () => {
  test('writes what js-yaml writes wherever it answers', () => {
    // Rarely, on values this wild (the next test gives it maps it answers for): but it does.
    expect(answersAsJsYaml(value, 4000)).toBeGreaterThan(5);
  });

  test('writes what js-yaml writes for maps of names, versions, integers and flags', () => {
    const plainName = fc.oneof(fc.stringMatching(/^[A-Za-z][A-Za-z0-9._/-]{0,10}$/), fc.stringMatching(/^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$/));
    const plainValue = fc.letrec<{ map: Record<string, unknown>; value: unknown }>(tie => ({
      map: fc.dictionary(plainName, tie('value'), { minKeys: 1, maxKeys: 5 }),
      value: fc.oneof({ depthSize: 'small' }, plainName, fc.maxSafeInteger(), fc.boolean(), fc.constant(undefined), tie('map')),
    })).map;
    // Not all: a map of undefined values only, and the words js-yaml quotes, are left to it.
    expect(answersAsJsYaml(plainValue, 2000)).toBeGreaterThan(1000);
  });

  test('leaves to js-yaml what it would write otherwise', () => {
    for (const map of [{}, { a: {} }, { a: { b: undefined } }, { a: [] }, { a: ['x'] }, { a: null }, { a: 'yes' }, { a: '' }, { a: 'a b' },
      { a: 1.5 }, { a: -0 }, { a: 2 ** 53 }, { 'a b': 1 }, { ['a'.repeat(1024)]: 1 }, { a: new Date(0) }, { a: () => 1 }, { a: 1n }, { a: Symbol('s') }]) {
      expect(plainYamlOf(map)).toBeUndefined();
      expect(renderWebhookConfig(map as unknown as WebhookConfig)).toBe(jsYaml(map));
    }
    for (const other of [undefined, null, 'a', 1, ['a'], new Map([['a', 1]])]) expect(plainYamlOf(other)).toBeUndefined();
  });

  test("answers for the stack's configurations, which render as js-yaml renders them", () => {
    const configs: WebhookConfig[] = [
      resolveWebhookConfig(),
      resolveWebhookConfig({ release: ServerlessRelease.V1_13_0, requestTimeoutSeconds: 30, shutdownDelaySeconds: 0 }),
      resolveWebhookConfig({ defaults: { replicas: 0 }, selfManagedTls: { namespace: 'kyma-system' } }),
      resolveWebhookConfig({ release: ServerlessRelease.V1_11_1, selfManagedTls: { namespace: 'other', secretName: 'tls', renewBeforeDays: 364 } }),
    ];
    for (const config of configs) {
      expect(plainYamlOf(config)).toBe(jsYaml(config));
      expect(renderWebhookConfig(config)).toBe(jsYaml(config));
    }
    expect(renderWebhookConfig(configs[2])).toContain(`  validatingWebhookConfiguration: ${WEBHOOK_NAMES.validating}\n`);
  });
});
