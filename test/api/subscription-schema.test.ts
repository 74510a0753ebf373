import * as path from 'node:path';
import {
  JsonSchemaProps, SUBSCRIPTION_API_VERSION, SUBSCRIPTION_GROUP, SUBSCRIPTION_KIND, SUBSCRIPTION_VERSION, Subscription, TypeMatching,
  subscriptionSchema, subscriptionSchemaValidator,
} from '../../src/api';
import { compileSchemaValidator } from '../../src/api/schema-compiler';
import { CLUSTER_LOCAL_SUFFIX, SUBSCRIPTION_DEFAULT_CONFIG, serviceSinkUrl } from '../../src/api/subscription-schema';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from '../util/fixtures';
import { flattenSchema } from '../util/schema-facts';

/** The upstream Subscription CRD, read at test time; undefined when shared/reference is not beside the checkout. */
function upstreamCrd(): { crd: any; schema: JsonSchemaProps } | undefined {
  if (!HAS_UPSTREAM_REFERENCE) return undefined;
  const crd = loadYamlDocuments(path.join(UPSTREAM_REFERENCE, 'subscription-crd.yaml'))[0];
  return { crd, schema: crd.spec.versions[0].schema.openAPIV3Schema };
}

const upstream = upstreamCrd();
const withUpstream = upstream ? test : test.skip;
const eachWithUpstream = upstream ? test.each : test.skip.each;

/** A Subscription the way `fn.subscribe()` writes one, typed by our interfaces. */
const subscribed: Subscription = {
  apiVersion: SUBSCRIPTION_API_VERSION,
  kind: SUBSCRIPTION_KIND,
  metadata: { name: 'orders-created', namespace: 'team-a' },
  spec: {
    sink: serviceSinkUrl('orders', 'team-a'),
    source: 'shop',
    types: ['order.created.v1', 'order.updated.v1'],
    typeMatching: TypeMatching.STANDARD,
    config: { maxInFlightMessages: '5' },
  },
};

function object(change: (o: any) => void = () => {}): any {
  const o = structuredClone(subscribed) as any;
  change(o);
  return o;
}

describe('the Subscription schema', () => {
  test('names the v1alpha2 API', () => {
    expect(SUBSCRIPTION_API_VERSION).toBe('eventing.kyma-project.io/v1alpha2');
    expect([SUBSCRIPTION_GROUP, SUBSCRIPTION_VERSION, SUBSCRIPTION_KIND]).toEqual(['eventing.kyma-project.io', 'v1alpha2', 'Subscription']);
  });

  test('writes a Function\'s sink as its in-cluster Service URL', () => {
    expect(serviceSinkUrl('orders', 'team-a')).toBe(`http://orders.team-a.${CLUSTER_LOCAL_SUFFIX}`);
  });

  test('defaults typeMatching to standard and config to 10 messages in flight, and has no CEL rule', () => {
    const facts = flattenSchema(subscriptionSchema());
    expect(facts['spec.typeMatching'].default).toBe(TypeMatching.STANDARD);
    expect(facts['spec.config'].default).toEqual(SUBSCRIPTION_DEFAULT_CONFIG);
    expect(SUBSCRIPTION_DEFAULT_CONFIG).toEqual({ maxInFlightMessages: '10' });
    expect(Object.values(facts).filter(f => f['x-kubernetes-validations'])).toEqual([]);
  });

  test('is a structural schema with our descriptions', () => {
    const problems: string[] = [];
    const visit = (node: JsonSchemaProps, at: string) => {
      if (!node.type) problems.push(`${at}: no type`);
      for (const key of node.required ?? []) if (!node.properties?.[key]) problems.push(`${at}: required ${key} is not a property`);
      const plainItem = (at.endsWith('[]') || at.endsWith('{}')) && node.type === 'string';
      if (!node.description && at !== '.metadata' && !plainItem && !/\[\]$/.test(at)) problems.push(`${at}: no description`);
      for (const [name, child] of Object.entries(node.properties ?? {})) visit(child, `${at}.${name}`);
      if (node.items) visit(node.items, `${at}[]`);
      if (node.additionalProperties) visit(node.additionalProperties, `${at}{}`);
    };
    visit(subscriptionSchema(), '');
    expect(problems).toEqual([]);
  });

  test('accepts the object our interfaces describe', () => {
    expect(subscriptionSchemaValidator().validate(subscribed)).toEqual([]);
  });
});

describe('the Subscription schema against upstream eventing manager 1.6.3', () => {
  withUpstream('has every field path, type, default, format and required field of the CRD, and nothing else', () => {
    const ours = flattenSchema(subscriptionSchema());
    const theirs = flattenSchema(upstream!.schema);
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
    for (const [fieldPath, facts] of Object.entries(theirs)) expect({ path: fieldPath, facts: ours[fieldPath] }).toEqual({ path: fieldPath, facts });
  });

  withUpstream('is the CRD\'s only version, served and stored', () => {
    const { crd } = upstream!;
    expect(crd.spec.group).toBe(SUBSCRIPTION_GROUP);
    expect(crd.spec.names.kind).toBe(SUBSCRIPTION_KIND);
    expect(crd.spec.versions.map((v: any) => [v.name, v.served, v.storage])).toEqual([[SUBSCRIPTION_VERSION, true, true]]);
  });

  const valid: Array<[string, any]> = [
    ['the subscribed Function', object()],
    ['only the required fields', object(o => { o.spec = { sink: o.spec.sink, source: 'shop', types: ['a.b'] }; })],
    ['EventMesh settings', object(o => { o.spec.config = { qos: 'AT_LEAST_ONCE', type: 'oauth2', grantType: 'client_credentials', tokenUrl: 'https://t' }; })],
    ['a status', object(o => { o.status = { ready: true, types: [{ originalType: 'a.b', cleanType: 'a.b' }], conditions: [{ status: 'True', lastTransitionTime: '2026-11-23T10:00:00Z' }] }; })],
  ];

  eachWithUpstream(valid)('accepts %s, as upstream does', (_what, o) => {
    expect(subscriptionSchemaValidator().validate(o)).toEqual([]);
    expect(compileSchemaValidator(upstream!.schema).validate(o)).toEqual([]);
  });

  /** Each breaks one constraint of the CRD. */
  const invalid: Array<[string, (o: any) => void]> = [
    ['no sink', o => { delete o.spec.sink; }],
    ['no source', o => { delete o.spec.source; }],
    ['no types', o => { delete o.spec.types; }],
    ['types as one string', o => { o.spec.types = 'order.created.v1'; }],
    ['a number in config', o => { o.spec.config = { maxInFlightMessages: 10 }; }],
    ['typeMatching as a boolean', o => { o.spec.typeMatching = true; }],
    ['the v1alpha1 field filter', o => { o.spec.filter = { filters: [] }; }],
    ['a status without ready', o => { o.status = { types: [] }; }],
    ['a condition without status', o => { o.status = { ready: false, types: [], conditions: [{ type: 'Subscribed' }] }; }],
    ['a condition time that is no time', o => { o.status = { ready: false, types: [], conditions: [{ status: 'False', lastTransitionTime: 'now' }] }; }],
  ];

  eachWithUpstream(invalid)('rejects %s, with upstream\'s violations', (_what, change) => {
    const o = object(change);
    const ours = subscriptionSchemaValidator().validate(o);
    expect(ours).not.toEqual([]);
    expect(ours).toEqual(compileSchemaValidator(upstream!.schema).validate(o));
  });
});
