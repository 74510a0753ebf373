import * as fs from 'node:fs';
import * as path from 'node:path';
import * as fc from 'fast-check';
import { SUBSCRIPTION_RULES, TypeMatching, validateSubscription } from '../../src/api';
import {
  eventSourceProblems, eventTypeProblems, eventTypesProblems, maxInFlightMessagesProblems, sinkProblems, typeMatchingProblems,
} from '../../src/api/subscription-rules';
import { serviceSinkUrl } from '../../src/api/subscription-schema';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from '../util/fixtures';

const CATALOG = new Map(SUBSCRIPTION_RULES.map(r => [r.id, r]));

/** A Subscription of the Function orders to two types of the application shop. */
function validSubscription(): any {
  return {
    apiVersion: 'eventing.kyma-project.io/v1alpha2',
    kind: 'Subscription',
    metadata: { name: 'orders', namespace: 'team-a' },
    spec: {
      sink: 'http://orders.team-a.svc.cluster.local',
      source: 'shop',
      types: ['order.created.v1', 'order.updated.v1'],
      typeMatching: 'standard',
      config: { maxInFlightMessages: '5' },
    },
  };
}

function changed(change: (s: any) => void): any {
  const s = validSubscription();
  change(s);
  return s;
}

function violation(rule: string, at: string, message: string | RegExp): object {
  return expect.objectContaining({ rule, path: at, message: typeof message === 'string' ? message : expect.stringMatching(message) });
}

interface RuleCase {
  readonly failsWhen: string;
  readonly fail: (s: any) => void;
  readonly path: string;
  readonly message: string | RegExp;
  readonly accepts: string;
  readonly pass: (s: any) => void;
}

/** A failing and a passing case for every rule of SUBSCRIPTION_RULES, by rule id. */
const RULE_CASES: Readonly<Record<string, RuleCase>> = {
  'openapi.required': {
    failsWhen: 'the sink is missing',
    fail: s => delete s.spec.sink,
    path: 'spec.sink',
    message: 'Required value',
    accepts: 'a spec with only its required fields',
    pass: s => { s.spec = { sink: s.spec.sink, source: s.spec.source, types: s.spec.types }; },
  },
  'openapi.type': {
    failsWhen: 'maxInFlightMessages is a number',
    fail: s => { s.spec.config.maxInFlightMessages = 10; },
    path: 'spec.config.maxInFlightMessages',
    message: 'Invalid value: 10: must be of type string',
    accepts: 'maxInFlightMessages as a string',
    pass: s => { s.spec.config.maxInFlightMessages = '10'; },
  },
  'openapi.format': {
    failsWhen: 'a condition\'s time is no time',
    fail: s => { s.status = { ready: false, types: [], conditions: [{ status: 'False', lastTransitionTime: 'now' }] }; },
    path: 'status.conditions[0].lastTransitionTime',
    message: /^Invalid value: "now": must match format "date-time"$/,
    accepts: 'an RFC 3339 time',
    pass: s => { s.status = { ready: false, types: [], conditions: [{ status: 'False', lastTransitionTime: '2026-11-23T10:00:00Z' }] }; },
  },
  'openapi.additionalProperties': {
    failsWhen: 'the spec has the v1alpha1 field filter',
    fail: s => { s.spec.filter = { filters: [] }; },
    path: 'spec',
    message: 'unknown field "filter"',
    accepts: 'the read-only id, which the schema declares',
    pass: s => { s.spec.id = 'a1b2'; },
  },
  'typeMatching': {
    failsWhen: 'typeMatching is capitalized',
    fail: s => { s.spec.typeMatching = 'Exact'; },
    path: 'spec.typeMatching',
    message: 'Invalid value: "Exact": must be a valid TypeMatching value exact or standard',
    accepts: 'exact',
    pass: s => { s.spec.typeMatching = 'exact'; },
  },
  'eventSource': {
    failsWhen: 'the source is empty with standard matching',
    fail: s => { s.spec.source = ''; },
    path: 'spec.source',
    message: 'Invalid value: "": must not be empty',
    accepts: 'an empty source with exact matching',
    pass: s => { s.spec.source = ''; s.spec.typeMatching = 'exact'; },
  },
  'eventTypes': {
    failsWhen: 'a type is listed twice',
    fail: s => { s.spec.types.push('order.created.v1'); },
    path: 'spec.types[2]',
    message: 'Invalid value: "order.created.v1": must not have duplicate types',
    accepts: 'types that differ in case only',
    pass: s => { s.spec.types.push('Order.created.v1'); },
  },
  'eventType': {
    failsWhen: 'a type has one segment',
    fail: s => { s.spec.types = ['created']; },
    path: 'spec.types[0]',
    message: 'Invalid value: "created": must have minimum 2 segments',
    accepts: 'a type of two segments',
    pass: s => { s.spec.types = ['order.created']; },
  },
  'maxInFlightMessages': {
    failsWhen: 'maxInFlightMessages is no integer',
    fail: s => { s.spec.config.maxInFlightMessages = '2.5'; },
    path: 'spec.config.maxInFlightMessages',
    message: 'Invalid value: "2.5": maxInFlightMessages must be a stringified int value',
    accepts: 'an integer with a sign, as Go reads it',
    pass: s => { s.spec.config.maxInFlightMessages = '+20'; },
  },
  'maxInFlightPositive': {
    failsWhen: 'maxInFlightMessages is 0',
    fail: s => { s.spec.config.maxInFlightMessages = '0'; },
    path: 'spec.config.maxInFlightMessages',
    message: 'Invalid value: "0": must be at least 1: NATS JetStream reads 0 as its own default and -1 as no limit',
    accepts: 'one message in flight',
    pass: s => { s.spec.config.maxInFlightMessages = '1'; },
  },
  'qos': {
    failsWhen: 'qos is exactly once',
    fail: s => { s.spec.config.qos = 'EXACTLY_ONCE'; },
    path: 'spec.config.qos',
    message: 'Invalid value: "EXACTLY_ONCE": must be a valid QoS value AT_LEAST_ONCE or AT_MOST_ONCE',
    accepts: 'a qos written with dashes',
    pass: s => { s.spec.config.qos = 'AT-MOST-ONCE'; },
  },
  'webhookAuthType': {
    failsWhen: 'the webhook auth type is client_credentials',
    fail: s => { s.spec.config.type = 'client_credentials'; },
    path: 'spec.config.type',
    message: 'Invalid value: "client_credentials": must be a valid Auth Type value oauth2',
    accepts: 'oauth2',
    pass: s => { s.spec.config.type = 'oauth2'; },
  },
  'webhookGrantType': {
    failsWhen: 'the grant type is password',
    fail: s => { s.spec.config.grantType = 'password'; },
    path: 'spec.config.grantType',
    message: 'Invalid value: "password": must be a valid Grant Type value client_credentials',
    accepts: 'client_credentials',
    pass: s => { s.spec.config.grantType = 'client_credentials'; },
  },
  'sinkUrl': {
    failsWhen: 'the sink has no scheme',
    fail: s => { s.spec.sink = 'orders.team-a.svc.cluster.local'; },
    path: 'spec.sink',
    message: 'Invalid value: "orders.team-a.svc.cluster.local": must have URL scheme \'http\' or \'https\'',
    accepts: 'https with a port and a path',
    pass: s => { s.spec.sink = 'https://orders.team-a.svc.cluster.local:8443/events'; },
  },
  'sinkHost': {
    failsWhen: 'the sink is the short Service name',
    fail: s => { s.spec.sink = 'http://orders.team-a'; },
    path: 'spec.sink',
    message: 'Invalid value: "http://orders.team-a": must have valid sink URL suffix svc.cluster.local',
    accepts: 'the full name with port 80',
    pass: s => { s.spec.sink = 'http://orders.team-a.svc.cluster.local:80'; },
  },
  'sinkNamespace': {
    failsWhen: 'the sink is in another namespace',
    fail: s => { s.spec.sink = 'http://orders.team-b.svc.cluster.local'; },
    path: 'metadata.namespace',
    message: 'Invalid value: "http://orders.team-b.svc.cluster.local": must have the same namespace as the subscriber: team-b',
    accepts: 'the Subscription moved to the sink\'s namespace',
    pass: s => { s.spec.sink = 'http://orders.team-b.svc.cluster.local'; s.metadata.namespace = 'team-b'; },
  },
};

const CASES = Object.entries(RULE_CASES).map(([id, c]) => ({ id, ...c }));

describe('every rule of a Subscription', () => {
  test('has one failing and one passing case here, and nothing else', () => {
    const ids = SUBSCRIPTION_RULES.map(r => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(RULE_CASES).sort()).toEqual([...ids].sort());
  });

  test('starts from a Subscription that is valid', () => {
    expect(validateSubscription(validSubscription())).toEqual([]);
  });

  test.each(CASES)('fails when $failsWhen ($id)', ({ id, fail, path: at, message }) => {
    expect(validateSubscription(changed(fail))).toContainEqual(violation(id, at, message));
  });

  test.each(CASES)('accepts $accepts ($id)', ({ pass }) => {
    expect(validateSubscription(changed(pass))).toEqual([]);
  });

  test('gives each violation of the failing cases its rule\'s hint from the catalog', () => {
    for (const { id, fail } of CASES) {
      for (const v of validateSubscription(changed(fail))) {
        expect({ case: id, rule: v.rule, hint: v.hint }).toEqual({ case: id, rule: v.rule, hint: CATALOG.get(v.rule ?? '')?.hint ?? 'a rule of the catalog' });
      }
    }
  });
});

describe('upstream samples', () => {
  (HAS_UPSTREAM_REFERENCE ? test : test.skip)('every sample Subscription passes', () => {
    const samples = fs.readdirSync(UPSTREAM_REFERENCE).filter(f => f.startsWith('sample-subscription-'))
      .flatMap(f => loadYamlDocuments(path.join(UPSTREAM_REFERENCE, f)));
    expect(samples.length).toBeGreaterThanOrEqual(4);
    for (const sample of samples) expect({ name: sample.metadata.name, violations: validateSubscription(sample) }).toEqual({ name: sample.metadata.name, violations: [] });
  });
});

describe('the whole object', () => {
  test('reads a missing typeMatching as standard: the legacy prefix is rejected', () => {
    const s = changed(x => { delete x.spec.typeMatching; x.spec.types = ['sap.kyma.custom.shop.order.created.v1']; });
    expect(validateSubscription(s)).toEqual([violation('eventType', 'spec.types[0]', 'Invalid value: "sap.kyma.custom.shop.order.created.v1": must not have sap.kyma.custom as type prefix')]);
  });

  test('accepts the legacy prefix with exact matching', () => {
    expect(validateSubscription(changed(x => { x.spec.typeMatching = 'exact'; x.spec.types = ['sap.kyma.custom.shop.order.created.v1']; }))).toEqual([]);
  });

  test('fails when there are no types', () => {
    expect(validateSubscription(changed(x => { x.spec.types = []; }))).toEqual([violation('eventTypes', 'spec.types', 'Invalid value: "": must not be empty')]);
  });

  test('fails when a type is empty', () => {
    expect(validateSubscription(changed(x => { x.spec.types.push(''); }))).toEqual([violation('eventType', 'spec.types[2]', 'Invalid value: "": must not be of length zero')]);
  });

  test('compares the sink with the default namespace when the Subscription has none', () => {
    const s = changed(x => { delete x.metadata.namespace; });
    expect(validateSubscription(s)).toEqual([]);
    expect(validateSubscription(s, { defaultNamespace: 'team-a' })).toEqual([]);
    expect(validateSubscription(s, { defaultNamespace: 'default' })).toEqual([violation('sinkNamespace', 'metadata.namespace', /must have the same namespace as the subscriber: team-a$/)]);
  });

  test.each([null, 'Subscription', 1, []])('fails without throwing when the object is %p', object => {
    expect(validateSubscription(object)).not.toEqual([]);
  });

  test('reports every fault of a spec together', () => {
    const s = changed(x => { x.spec = { sink: '', source: '', types: [], typeMatching: 'any', config: { maxInFlightMessages: 'x', qos: 'x' } }; });
    expect(validateSubscription(s).map(v => v.rule)).toEqual(['typeMatching', 'eventSource', 'eventTypes', 'maxInFlightMessages', 'qos', 'sinkUrl']);
  });
});

describe('sinks', () => {
  test.each([
    ['http://orders.team-a.svc.cluster.local', 'team-a'],
    ['https://orders.team-a.svc.cluster.local:8443/path?q=1', 'team-a'],
    ['http://orders.team-a.svc.cluster.local', undefined],
  ])('accepts %p in namespace %p', (sink, namespace) => {
    expect(sinkProblems(sink, namespace)).toEqual([]);
  });

  test.each([
    ['', 'must not be empty'],
    ['HTTP://orders.team-a.svc.cluster.local', 'must have URL scheme \'http\' or \'https\''],
    ['ftp://orders.team-a.svc.cluster.local', 'must have URL scheme \'http\' or \'https\''],
    ['http://orders.team-a.svc.cluster.local:http', 'failed to parse subscription sink URL: parse "http://orders.team-a.svc.cluster.local:http": invalid port ":http" after host'],
    ['http://orders.team-a.svc.cluster.local.', 'must have valid sink URL suffix svc.cluster.local'],
    ['http://orders.svc.cluster.local', 'must have sink URL with 5 sub-domains: orders.svc.cluster.local'],
    ['http://v1.orders.team-a.svc.cluster.local', 'must have sink URL with 5 sub-domains: v1.orders.team-a.svc.cluster.local'],
    ['http://orders.team-b.svc.cluster.local', 'must have the same namespace as the subscriber: team-b'],
  ])('fails when the sink is %p in team-a', (sink, message) => {
    expect(sinkProblems(sink, 'team-a')).toEqual([message]);
  });

  const label = fc.stringMatching(/^[a-z]([-a-z0-9]{0,20}[a-z0-9])?$/);

  test('accepts the sink URL of any Service in its own namespace, and no other namespace', () => {
    fc.assert(fc.property(label, label, label, (service, namespace, other) => {
      const own = sinkProblems(serviceSinkUrl(service, namespace), namespace);
      const elsewhere = sinkProblems(serviceSinkUrl(service, namespace), other);
      return own.length === 0 && (namespace === other ? elsewhere.length === 0 : elsewhere[0] === `must have the same namespace as the subscriber: ${namespace}`);
    }));
  });
});

describe('sources, types and settings', () => {
  test.each(['shop', 'my-app', '/default/sap.kyma/tunas-develop', 'https://shop.example.com/events', ' ', '?', 'a#b'])('accepts the source %p', source => {
    expect(eventSourceProblems(source)).toEqual([]);
  });

  test.each(['#', ':shop', '1a:b', 'shop%zz', 'shop\n', 'http://shop:port'])('fails when the source is %p', source => {
    expect(eventSourceProblems(source, TypeMatching.EXACT)).toEqual(['must be valid as per RFC 3986']);
  });

  test('allows an empty source only with exact matching', () => {
    expect(eventSourceProblems('')).toEqual(['must not be empty']);
    expect(eventSourceProblems('', TypeMatching.EXACT)).toEqual([]);
  });

  test.each([
    ['', 'must not be of length zero'],
    ['order', 'must have minimum 2 segments'],
    ['sap.kyma.custom.app.order.created.v1', 'must not have sap.kyma.custom as type prefix'],
  ])('fails when the type is %p', (type, message) => {
    expect(eventTypeProblems(type)).toEqual([message]);
  });

  test.each(['order.created', 'order.created.v1', 'a.b.c.d.e', '.', 'order created.v1'])('accepts the type %p', type => {
    expect(eventTypeProblems(type)).toEqual([]);
  });

  test('checks a list of types: not empty, none twice, each valid', () => {
    expect(eventTypesProblems(['order.created.v1', 'order.updated.v1'])).toEqual([]);
    expect(eventTypesProblems([])).toEqual(['must not be empty']);
    expect(eventTypesProblems(['a.b', 'a.b', 'sap.kyma.custom.x'])).toEqual([
      'types[1] ("a.b"): must not have duplicate types',
      'types[2] ("sap.kyma.custom.x"): must not have sap.kyma.custom as type prefix',
    ]);
    expect(eventTypesProblems(['sap.kyma.custom.x.y'], TypeMatching.EXACT)).toEqual([]);
  });

  test('checks typeMatching values', () => {
    expect(typeMatchingProblems('standard')).toEqual([]);
    expect(typeMatchingProblems('exact')).toEqual([]);
    expect(typeMatchingProblems('')).toEqual(['must be a valid TypeMatching value exact or standard']);
  });

  test.each(['1', '10', '+5', '007', '9223372036854775807'])('accepts maxInFlightMessages %p', value => {
    expect(maxInFlightMessagesProblems(value)).toEqual([]);
  });

  test.each(['', ' 10', '1e3', '10.0', '9223372036854775808', '0x10', '1_000'])('fails when maxInFlightMessages is %p, which Go cannot read', value => {
    expect(maxInFlightMessagesProblems(value)).toEqual(['maxInFlightMessages must be a stringified int value']);
  });

  test.each(['0', '-1', '-0', '-9223372036854775808'])('fails when maxInFlightMessages is %p, which caps nothing', value => {
    expect(maxInFlightMessagesProblems(value)).toEqual(['must be at least 1: NATS JetStream reads 0 as its own default and -1 as no limit']);
  });

  test('accepts any positive integer as maxInFlightMessages', () => {
    fc.assert(fc.property(fc.integer({ min: 1 }), n => maxInFlightMessagesProblems(String(n)).length === 0));
  });
});
