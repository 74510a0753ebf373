import * as path from 'node:path';
import {
  APIRULE_API_VERSION, APIRULE_GROUP, APIRULE_KIND, APIRULE_VERSION, ApiRule, HTTP_METHODS, HttpMethod, JsonSchemaProps, apiRuleSchema,
  apiRuleSchemaValidator,
} from '../../src/api';
import { ApiRuleRules } from '../../src/api/apirule-schema';
import { compileSchemaValidator } from '../../src/api/schema-compiler';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from '../util/fixtures';
import { flattenSchema } from '../util/schema-facts';

/** The `v2` schema of the upstream APIRule CRD, read at test time; undefined when shared/reference is not beside the checkout. */
function upstreamV2(): { crd: any; schema: JsonSchemaProps } | undefined {
  if (!HAS_UPSTREAM_REFERENCE) return undefined;
  const crd = loadYamlDocuments(path.join(UPSTREAM_REFERENCE, 'apirule-crd.yaml'))[0];
  return { crd, schema: crd.spec.versions.find((v: any) => v.name === 'v2').schema.openAPIV3Schema };
}

const upstream = upstreamV2();
const withUpstream = upstream ? test : test.skip;
const eachWithUpstream = upstream ? test.each : test.skip.each;

/** An APIRule the way `fn.expose()` writes one, typed by our interfaces. */
const exposed: ApiRule = {
  apiVersion: APIRULE_API_VERSION,
  kind: APIRULE_KIND,
  metadata: { name: 'hello', namespace: 'team-a' },
  spec: {
    hosts: ['hello'],
    gateway: 'kyma-system/kyma-gateway',
    service: { name: 'hello', namespace: 'team-a', port: 80 },
    rules: [
      {
        path: '/admin/{**}',
        methods: [HttpMethod.GET, HttpMethod.POST],
        jwt: {
          authentications: [{ issuer: 'https://id.example.com', jwksUri: 'https://id.example.com/certs', fromHeaders: [{ name: 'x-jwt', prefix: 'Bearer ' }] }],
          authorizations: [{ requiredScopes: ['admin'], audiences: ['hello'] }],
        },
        timeout: 10,
      },
      { path: '/*', methods: [HttpMethod.GET], noAuth: true },
    ],
    corsPolicy: { allowOrigins: [{ exact: 'https://app.example.com' }], allowMethods: ['GET'], allowHeaders: ['Authorization'], exposeHeaders: ['x-id'], allowCredentials: false, maxAge: 60 },
    timeout: 300,
  },
};

function object(change: (o: any) => void = () => {}): any {
  const o = structuredClone(exposed) as any;
  change(o);
  return o;
}

describe('the APIRule schema', () => {
  test('names the v2 API', () => {
    expect(APIRULE_API_VERSION).toBe('gateway.kyma-project.io/v2');
    expect([APIRULE_GROUP, APIRULE_VERSION, APIRULE_KIND]).toEqual(['gateway.kyma-project.io', 'v2', 'APIRule']);
  });

  test('lists the methods in the CRD\'s order', () => {
    expect(HTTP_METHODS).toEqual(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
  });

  test('has the 4 CEL rules, each on its node', () => {
    const facts = flattenSchema(apiRuleSchema());
    const rulesAt = (at: string) => facts[at]['x-kubernetes-validations'];
    expect(rulesAt('spec.hosts[]')).toEqual([ApiRuleRules.hostFormat]);
    expect(rulesAt('spec.gateway')).toEqual([ApiRuleRules.gatewayFormat]);
    expect(rulesAt('spec.externalGateway')).toEqual([ApiRuleRules.externalGatewayFormat]);
    expect(rulesAt('spec.rules[]')).toEqual([ApiRuleRules.oneAccessStrategy]);
    expect(Object.values(facts).filter(f => f['x-kubernetes-validations'])).toHaveLength(4);
  });

  test('is a structural schema with our descriptions: every node has a type, required fields exist, metadata is left to the API server', () => {
    const problems: string[] = [];
    const visit = (node: JsonSchemaProps, at: string) => {
      if (!node.type) problems.push(`${at}: no type`);
      if (node.properties && node.additionalProperties) problems.push(`${at}: both properties and additionalProperties`);
      for (const key of node.required ?? []) if (!node.properties?.[key]) problems.push(`${at}: required ${key} is not a property`);
      // Strings in lists and maps are described by their list or map.
      const plainItem = (at.endsWith('[]') || at.endsWith('{}')) && node.type === 'string';
      if (!node.description && at !== '.metadata' && !plainItem) problems.push(`${at}: no description`);
      for (const [name, child] of Object.entries(node.properties ?? {})) visit(child, `${at}.${name}`);
      if (node.items) visit(node.items, `${at}[]`);
      if (node.additionalProperties) visit(node.additionalProperties, `${at}{}`);
    };
    visit(apiRuleSchema(), '');
    expect(problems).toEqual([]);
    expect(apiRuleSchema().properties!.metadata).toEqual({ type: 'object' });
  });

  test('accepts the object our interfaces describe', () => {
    expect(apiRuleSchemaValidator().validate(exposed)).toEqual([]);
  });
});

describe('the APIRule schema against upstream API Gateway 3.10.0', () => {
  withUpstream('has every field path, type, enum, bound, pattern, format, required field and CEL rule of the CRD\'s v2 schema, and nothing else', () => {
    const ours = flattenSchema(apiRuleSchema());
    const theirs = flattenSchema(upstream!.schema);
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort());
    for (const [fieldPath, facts] of Object.entries(theirs)) expect({ path: fieldPath, facts: ours[fieldPath] }).toEqual({ path: fieldPath, facts });
  });

  withUpstream('is the CRD\'s v2 version, served, not stored (v2alpha1 is), with a status subresource', () => {
    const { crd } = upstream!;
    expect(crd.spec.group).toBe(APIRULE_GROUP);
    expect(crd.spec.names.kind).toBe(APIRULE_KIND);
    const v2 = crd.spec.versions.find((v: any) => v.name === APIRULE_VERSION);
    expect({ served: v2.served, storage: v2.storage, subresources: v2.subresources }).toEqual({ served: true, storage: false, subresources: { status: {} } });
  });

  const valid: Array<[string, any]> = [
    ['the exposed Function', object()],
    ['a wildcard host with an ExternalGateway', object(o => { o.spec.hosts = ['*.example.com']; delete o.spec.gateway; o.spec.externalGateway = 'kyma-system/external'; })],
    ['extAuth with restrictions and request headers', object(o => {
      o.spec.rules[0] = { path: '/{*}/x', methods: ['PUT'], extAuth: { authorizers: ['oauth2-proxy'], restrictions: { authentications: [{ issuer: 'i', jwksUri: 'j' }] } }, request: { headers: { a: 'b' } } };
    })],
    ['a Service without namespace on a rule', object(o => { o.spec.rules[1].service = { name: 'other', port: 65535, external: false }; })],
    ['a status', object(o => { o.status = { state: 'Ready', description: 'Reconciled successfully', lastProcessedTime: '2026-11-23T10:00:00Z' }; })],
  ];

  eachWithUpstream(valid)('accepts %s, as upstream does', (_what, o) => {
    expect(apiRuleSchemaValidator().validate(o)).toEqual([]);
    expect(compileSchemaValidator(upstream!.schema).validate(o)).toEqual([]);
  });

  /** Each breaks one constraint of the CRD. */
  const invalid: Array<[string, (o: any) => void]> = [
    ['no spec', o => { delete o.spec; }],
    ['no hosts', o => { delete o.spec.hosts; }],
    ['no host in the list', o => { o.spec.hosts = []; }],
    ['two hosts', o => { o.spec.hosts = ['a', 'b']; }],
    ['an upper-case host', o => { o.spec.hosts = ['Hello']; }],
    ['a host of 256 characters', o => { o.spec.hosts = [`${'a.'.repeat(127)}ab`]; }],
    ['a Gateway in the v1beta1 form', o => { o.spec.gateway = 'kyma-gateway.kyma-system.svc.cluster.local'; }],
    ['a Gateway of 128 characters', o => { o.spec.gateway = `${'a'.repeat(64)}/${'b'.repeat(63)}`; }],
    ['an ExternalGateway without namespace', o => { o.spec.externalGateway = 'external'; }],
    ['no rules', o => { o.spec.rules = []; }],
    ['a rule without path', o => { delete o.spec.rules[0].path; }],
    ['a rule without methods', o => { o.spec.rules[0].methods = []; }],
    ['a lower-case method', o => { o.spec.rules[0].methods = ['get']; }],
    ['a path with a regex', o => { o.spec.rules[0].path = '/admin/.*'; }],
    ['a path without a leading slash', o => { o.spec.rules[0].path = 'admin'; }],
    ['a rule with jwt and noAuth', o => { o.spec.rules[0].noAuth = true; }],
    ['a rule with no strategy but noAuth: false', o => { o.spec.rules[1].noAuth = false; }],
    ['a rule with jwt and extAuth', o => { o.spec.rules[0].extAuth = { authorizers: ['x'] }; }],
    ['extAuth without authorizers', o => { o.spec.rules[1] = { path: '/*', methods: ['GET'], extAuth: { authorizers: [] } }; }],
    ['an authentication without jwksUri', o => { delete o.spec.rules[0].jwt.authentications[0].jwksUri; }],
    ['a token header without name', o => { o.spec.rules[0].jwt.authentications[0].fromHeaders = [{ prefix: 'Bearer ' }]; }],
    ['port 0', o => { o.spec.service.port = 0; }],
    ['port 65536', o => { o.spec.service.port = 65536; }],
    ['a Service without port', o => { delete o.spec.service.port; }],
    ['a Service namespace with upper-case letters', o => { o.spec.service.namespace = 'Team-A'; }],
    ['a timeout of 0', o => { o.spec.timeout = 0; }],
    ['a rule timeout of 3901', o => { o.spec.rules[0].timeout = 3901; }],
    ['a timeout as a duration text', o => { o.spec.timeout = '30s'; }],
    ['a CORS max age of 0', o => { o.spec.corsPolicy.maxAge = 0; }],
    ['an origin as a plain string', o => { o.spec.corsPolicy.allowOrigins = ['https://app.example.com']; }],
    ['an origin match with a number', o => { o.spec.corsPolicy.allowOrigins = [{ exact: 1 }]; }],
    ['the v1beta1 field host', o => { o.spec.host = 'hello.example.com'; }],
    ['the v1beta1 field accessStrategies', o => { o.spec.rules[1].accessStrategies = [{ handler: 'allow' }]; }],
    ['an unknown status state', o => { o.status = { state: 'OK' }; }],
    ['a status without state', o => { o.status = { description: 'x' }; }],
  ];

  eachWithUpstream(invalid)('rejects %s, with upstream\'s violations', (_what, change) => {
    const o = object(change);
    const ours = apiRuleSchemaValidator().validate(o);
    expect(ours).not.toEqual([]);
    expect(ours).toEqual(compileSchemaValidator(upstream!.schema).validate(o));
  });
});
