import * as fs from 'node:fs';
import * as path from 'node:path';
import * as fc from 'fast-check';
import { APIRULE_RULES, validateApiRule } from '../../src/api';
import {
  HostForm, apiRuleTimeoutProblems, audiencesProblems, endpointPathProblems, gatewayReferenceProblems, hostForm, hostProblems, jwtIssuerProblems,
  jwtIssuerSchemeProblems, pathConflicts, requiredScopesProblems, uriProblems,
} from '../../src/api/apirule-rules';
import { APIRULE_PATH_PATTERN, ApiRuleRules } from '../../src/api/apirule-schema';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from '../util/fixtures';

const CATALOG = new Map(APIRULE_RULES.map(r => [r.id, r]));
const ISSUER = 'https://id.example.com';
const JWKS = 'https://id.example.com/oauth2/certs';

/** An APIRule exposing a Function with every field this package emits: two jwt rules, a public rule with its own Service, CORS. */
function validApiRule(): any {
  const authentication = () => ({ issuer: ISSUER, jwksUri: JWKS });
  return {
    apiVersion: 'gateway.kyma-project.io/v2',
    kind: 'APIRule',
    metadata: { name: 'orders', namespace: 'team-a' },
    spec: {
      hosts: ['orders'],
      gateway: 'kyma-system/kyma-gateway',
      service: { name: 'orders', namespace: 'team-a', port: 80 },
      timeout: 60,
      corsPolicy: {
        allowOrigins: [{ exact: 'https://shop.example.com' }],
        allowMethods: ['GET', 'POST'],
        allowHeaders: ['Authorization', 'Content-Type'],
        allowCredentials: true,
        maxAge: 600,
      },
      rules: [
        {
          path: '/orders/{*}',
          methods: ['GET'],
          jwt: { authentications: [authentication()], authorizations: [{ requiredScopes: ['orders:read'] }] },
          timeout: 30,
        },
        {
          path: '/orders',
          methods: ['POST'],
          jwt: { authentications: [authentication()], authorizations: [{ requiredScopes: ['orders:write'], audiences: ['shop'] }] },
        },
        { path: '/health', methods: ['GET'], noAuth: true, service: { name: 'orders-health', port: 8080 } },
        { path: '/{**}', methods: ['OPTIONS'], noAuth: true },
      ],
    },
  };
}

function changed(change: (rule: any) => void): any {
  const rule = validApiRule();
  change(rule);
  return rule;
}

function violation(rule: string, path: string, message: string | RegExp): object {
  return expect.objectContaining({ rule, path, message: typeof message === 'string' ? message : expect.stringMatching(message) });
}

interface RuleCase {
  readonly failsWhen: string;
  readonly fail: (r: any) => void;
  readonly path: string;
  readonly message: string | RegExp;
  readonly accepts: string;
  readonly pass: (r: any) => void;
}

const LABEL_63 = 'a'.repeat(63);
const HOST_255 = [LABEL_63, LABEL_63, LABEL_63, LABEL_63].join('.');

/** A failing and a passing case for every rule of APIRULE_RULES, by rule id. */
const RULE_CASES: Readonly<Record<string, RuleCase>> = {
  'openapi.required': {
    failsWhen: 'a rule has no methods',
    fail: r => delete r.spec.rules[0].methods,
    path: 'spec.rules[0].methods',
    message: 'Required value',
    accepts: 'a spec with only the fields the CRD and the controller require',
    pass: r => { r.spec = { hosts: r.spec.hosts, gateway: r.spec.gateway, service: { name: 'orders', port: 80 }, rules: [{ path: '/*', methods: ['GET'], noAuth: true }] }; },
  },
  'openapi.type': {
    failsWhen: 'the timeout is a string',
    fail: r => { r.spec.timeout = '30s'; },
    path: 'spec.timeout',
    message: 'Invalid value: "30s": must be of type integer',
    accepts: 'the timeout in seconds',
    pass: r => { r.spec.timeout = 30; },
  },
  'openapi.enum': {
    failsWhen: 'a method is in lower case',
    fail: r => { r.spec.rules[0].methods = ['get']; },
    path: 'spec.rules[0].methods[0]',
    message: /^Unsupported value: "get": supported values: "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"$/,
    accepts: 'the last method of the enum',
    pass: r => { r.spec.rules[0].methods = ['PATCH']; },
  },
  'openapi.minimum': {
    failsWhen: 'the port is 0',
    fail: r => { r.spec.service.port = 0; },
    path: 'spec.service.port',
    message: 'Invalid value: 0: should be greater than or equal to 1',
    accepts: 'port 1 and a CORS max age of 1 second',
    pass: r => { r.spec.service.port = 1; r.spec.corsPolicy.maxAge = 1; },
  },
  'openapi.maximum': {
    failsWhen: 'a rule\'s timeout is 3901 seconds',
    fail: r => { r.spec.rules[0].timeout = 3901; },
    path: 'spec.rules[0].timeout',
    message: 'Invalid value: 3901: should be less than or equal to 3900',
    accepts: 'a timeout of 3900 seconds and port 65535',
    pass: r => { r.spec.rules[0].timeout = 3900; r.spec.service.port = 65535; },
  },
  'openapi.maxLength': {
    failsWhen: 'the host has 258 characters',
    fail: r => { r.spec.hosts = [`${HOST_255}.ab`]; },
    path: 'spec.hosts[0]',
    message: 'Too long: may not be more than 255 bytes',
    accepts: 'a host of 255 characters',
    pass: r => { r.spec.hosts = [HOST_255]; },
  },
  'openapi.minItems': {
    failsWhen: 'there are no rules',
    fail: r => { r.spec.rules = []; },
    path: 'spec.rules',
    message: 'Invalid value: 0: should have at least 1 items',
    accepts: 'one rule',
    pass: r => { r.spec.rules = r.spec.rules.slice(0, 1); },
  },
  'openapi.maxItems': {
    failsWhen: 'there are two hosts',
    fail: r => { r.spec.hosts = ['orders', 'shop']; },
    path: 'spec.hosts',
    message: 'Too many: 2: must have at most 1 items',
    accepts: 'one host',
    pass: r => { r.spec.hosts = ['shop']; },
  },
  'openapi.pattern': {
    failsWhen: 'a path ends in a v1beta1-style /*',
    fail: r => { r.spec.rules[0].path = '/orders/*'; },
    path: 'spec.rules[0].path',
    message: `Invalid value: "/orders/*": should match '${APIRULE_PATH_PATTERN}'`,
    accepts: 'the v2 form /orders/{**}',
    pass: r => { r.spec.rules[0].path = '/orders/{**}'; },
  },
  'openapi.format': {
    failsWhen: 'status.lastProcessedTime is not a time',
    fail: r => { r.status = { state: 'Ready', lastProcessedTime: 'yesterday' }; },
    path: 'status.lastProcessedTime',
    message: /^Invalid value: "yesterday": must match format "date-time"$/,
    accepts: 'an RFC 3339 time',
    pass: r => { r.status = { state: 'Ready', lastProcessedTime: '2026-11-23T10:00:00Z' }; },
  },
  'openapi.additionalProperties': {
    failsWhen: 'the spec has the v1beta1 field host',
    fail: r => { r.spec.host = 'orders.example.com'; },
    path: 'spec',
    message: 'unknown field "host"',
    accepts: 'request headers and cookies, which the schema declares',
    pass: r => { r.spec.rules[0].request = { headers: { 'x-team': 'a' }, cookies: { session: 'x' } }; },
  },
  'hostFormat': {
    failsWhen: 'the host has upper-case letters',
    fail: r => { r.spec.hosts = ['Orders.example.com']; },
    path: 'spec.hosts[0]',
    message: `Invalid value: "Orders.example.com": ${ApiRuleRules.hostFormat.message}`,
    accepts: 'a wildcard host',
    pass: r => { r.spec.hosts = ['*.example.com']; },
  },
  'gatewayFormat': {
    failsWhen: 'the Gateway has the v1beta1 form',
    fail: r => { r.spec.gateway = 'kyma-gateway.kyma-system.svc.cluster.local'; },
    path: 'spec.gateway',
    message: 'Invalid value: "kyma-gateway.kyma-system.svc.cluster.local": Gateway must be in the namespace/name format',
    accepts: 'a Gateway of 63-character namespace and name',
    pass: r => { r.spec.gateway = `${LABEL_63}/${LABEL_63}`; },
  },
  'externalGatewayFormat': {
    failsWhen: 'the ExternalGateway has no namespace',
    fail: r => { delete r.spec.gateway; r.spec.externalGateway = 'my-external'; },
    path: 'spec.externalGateway',
    message: 'Invalid value: "my-external": ExternalGateway must be in the namespace/name format',
    accepts: 'an ExternalGateway as namespace/name',
    pass: r => { delete r.spec.gateway; r.spec.externalGateway = 'kyma-system/my-external'; },
  },
  'oneAccessStrategy': {
    failsWhen: 'a jwt rule is also noAuth',
    fail: r => { r.spec.rules[0].noAuth = true; },
    path: 'spec.rules[0]',
    message: 'Invalid value: "object": One of the following fields must be set: noAuth, jwt, extAuth',
    accepts: 'a jwt rule with noAuth: false',
    pass: r => { r.spec.rules[0].noAuth = false; },
  },
  'apiRuleName': {
    failsWhen: 'the name has 64 characters',
    fail: r => { r.metadata.name = 'o'.repeat(64); },
    path: 'metadata.name',
    message: /^Too long: "o{64}" has 64 characters; the controller labels its objects with the name, and a label value has at most 63$/,
    accepts: 'a name of 63 characters',
    pass: r => { r.metadata.name = 'o'.repeat(63); },
  },
  'gatewayOneOf': {
    failsWhen: 'there is no gateway',
    fail: r => { delete r.spec.gateway; },
    path: 'spec',
    message: 'Either gateway or externalGateway must be specified',
    accepts: 'an externalGateway instead of the gateway',
    pass: r => { delete r.spec.gateway; r.spec.externalGateway = 'kyma-system/external'; },
  },
  'ruleService': {
    failsWhen: 'there is no spec.service and a rule has none',
    fail: r => { delete r.spec.service; },
    path: 'spec.rules[0].service',
    message: 'The rule must define a service, because no service is defined on spec level',
    accepts: 'no spec.service when every rule has its own',
    pass: r => { delete r.spec.service; for (const rule of r.spec.rules) rule.service ??= { name: 'orders', port: 80 }; },
  },
  'pathOperators': {
    failsWhen: 'a path has two {**}',
    fail: r => { r.spec.rules[1].path = '/{**}/orders/{**}'; },
    path: 'spec.rules[1].path',
    message: 'Only one {**} operator is allowed in the path.',
    accepts: 'a literal segment after {**}',
    pass: r => { r.spec.rules[1].path = '/{**}/orders'; },
  },
  'pathConflict': {
    failsWhen: 'a later rule\'s path is covered by an earlier one for the same method',
    fail: r => { r.spec.rules.splice(2, 0, { path: '/orders/{*}/items', methods: ['GET'], noAuth: true }); r.spec.rules[0].path = '/orders/{**}'; },
    path: 'spec.rules[2].path',
    message: 'Path /orders/{*}/items with method GET conflicts with at least one of the previous rule paths',
    accepts: 'the specific path first',
    pass: r => { r.spec.rules.unshift({ path: '/orders/{*}/items', methods: ['GET'], noAuth: true }); r.spec.rules[1].path = '/orders/{**}'; },
  },
  'jwtAuthentications': {
    failsWhen: 'a jwt rule has no authentication',
    fail: r => { r.spec.rules[0].jwt.authentications = []; },
    path: 'spec.rules[0].jwt.authentications',
    message: 'A JWT config must have at least one authentication',
    accepts: 'two authentications',
    pass: r => { r.spec.rules[0].jwt.authentications.push({ issuer: 'https://other.example.com', jwksUri: 'https://other.example.com/certs' }); },
  },
  'jwtIssuer': {
    failsWhen: 'the issuer URL has a space in its host',
    fail: r => { r.spec.rules[0].jwt.authentications[0].issuer = 'https://id example.com'; },
    path: 'spec.rules[0].jwt.authentications[0].issuer',
    message: 'value is empty or not a valid uri err=parse "https://id example.com": invalid character " " in host name',
    accepts: 'an issuer that is no URI and has no \':\'',
    pass: r => { for (const rule of r.spec.rules.slice(0, 2)) rule.jwt.authentications[0].issuer = 'id.example.com'; },
  },
  'jwtJwksUri': {
    failsWhen: 'the jwksUri has no scheme',
    fail: r => { r.spec.rules[0].jwt.authentications[0].jwksUri = 'id.example.com/certs'; },
    path: 'spec.rules[0].jwt.authentications[0].jwksUri',
    message: 'value is empty or not a valid uri err=parse "id.example.com/certs": invalid URI for request',
    accepts: 'an absolute path, which the controller takes',
    pass: r => { for (const rule of r.spec.rules.slice(0, 2)) rule.jwt.authentications[0].jwksUri = '/certs'; },
  },
  'jwtTokenFromMixed': {
    failsWhen: 'one authentication reads a header and the next a parameter',
    fail: r => {
      r.spec.rules[0].jwt.authentications = [
        { issuer: ISSUER, jwksUri: JWKS, fromHeaders: [{ name: 'x-token' }] },
        { issuer: 'https://b.example.com', jwksUri: JWKS, fromParams: ['token'] },
      ];
    },
    path: 'spec.rules[0].jwt.authentications[1].fromParams',
    message: 'mixture of multiple fromHeaders and fromParams is not supported',
    accepts: 'two authentications that read headers',
    pass: r => {
      r.spec.rules[0].jwt.authentications = [
        { issuer: 'https://a.example.com', jwksUri: JWKS, fromHeaders: [{ name: 'x-token' }] },
        { issuer: 'https://b.example.com', jwksUri: JWKS, fromHeaders: [{ name: 'x-other', prefix: 'Token ' }] },
      ];
    },
  },
  'jwtTokenFromMultiple': {
    failsWhen: 'an authentication reads two parameters',
    fail: r => { r.spec.rules[0].jwt.authentications[0] = { issuer: 'https://a.example.com', jwksUri: JWKS, fromParams: ['token', 'jwt'] }; },
    path: 'spec.rules[0].jwt.authentications[0].fromParams',
    message: 'multiple fromParams are not supported',
    accepts: 'one parameter',
    pass: r => { r.spec.rules[0].jwt.authentications[0] = { issuer: 'https://a.example.com', jwksUri: JWKS, fromParams: ['token'] }; },
  },
  'jwtAuthorizations': {
    failsWhen: 'authorizations is an empty list',
    fail: r => { r.spec.rules[0].jwt.authorizations = []; },
    path: 'spec.rules[0].jwt.authorizations',
    message: 'authorizations defined, but no configuration exists',
    accepts: 'no authorizations: any valid token',
    pass: r => { delete r.spec.rules[0].jwt.authorizations; },
  },
  'jwtClaimValues': {
    failsWhen: 'a required scope is empty',
    fail: r => { r.spec.rules[1].jwt.authorizations[0].requiredScopes = ['orders:write', '']; },
    path: 'spec.rules[1].jwt.authorizations[0].requiredScopes',
    message: 'scope value is empty',
    accepts: 'an authorization with only audiences',
    pass: r => { r.spec.rules[1].jwt.authorizations[0] = { audiences: ['shop'] }; },
  },
  'jwtSameIssuer': {
    failsWhen: 'the second rule reads the same issuer\'s tokens from another header',
    fail: r => { r.spec.rules[1].jwt.authentications[0].fromHeaders = [{ name: 'x-token' }]; },
    path: 'spec.rules[1].jwt.authentications[0]',
    message: 'multiple jwt configurations that differ for the same issuer',
    accepts: 'the same header in both rules',
    pass: r => { for (const rule of r.spec.rules.slice(0, 2)) rule.jwt.authentications[0].fromHeaders = [{ name: 'x-token', prefix: 'Bearer ' }]; },
  },
  'corsOrigin': {
    failsWhen: 'an origin match has a misspelled key',
    fail: r => { r.spec.corsPolicy.allowOrigins = [{ exakt: 'https://shop.example.com' }]; },
    path: 'spec.corsPolicy.allowOrigins[0].exakt',
    message: /^Invalid value: "exakt": not a string match; the api-gateway controller reads it as a prefix match/,
    accepts: 'a regex and a prefix match',
    pass: r => { r.spec.corsPolicy.allowOrigins = [{ regex: 'https://.*\\.example\\.com' }, { prefix: 'https://shop' }]; },
  },
};

const CASES = Object.entries(RULE_CASES).map(([id, c]) => ({ id, ...c }));

describe('every rule of an APIRule', () => {
  test('has one failing and one passing case here, and nothing else', () => {
    const ids = APIRULE_RULES.map(r => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(RULE_CASES).sort()).toEqual([...ids].sort());
  });

  test('catalogs every CEL rule of the CRD under its key in ApiRuleRules', () => {
    expect(Object.keys(ApiRuleRules).filter(id => !CATALOG.has(id))).toEqual([]);
  });

  test('starts from an APIRule that is valid', () => {
    expect(validateApiRule(validApiRule())).toEqual([]);
  });

  test.each(CASES)('fails when $failsWhen ($id)', ({ id, fail, path: at, message }) => {
    expect(validateApiRule(changed(fail))).toContainEqual(violation(id, at, message));
  });

  test.each(CASES)('accepts $accepts ($id)', ({ pass }) => {
    expect(validateApiRule(changed(pass))).toEqual([]);
  });

  test('gives each violation of the failing cases its rule\'s hint from the catalog', () => {
    for (const { id, fail } of CASES) {
      for (const v of validateApiRule(changed(fail))) {
        expect({ case: id, rule: v.rule, hint: v.hint }).toEqual({ case: id, rule: v.rule, hint: CATALOG.get(v.rule ?? '')?.hint ?? 'a rule of the catalog' });
      }
    }
  });
});

describe('upstream samples', () => {
  (HAS_UPSTREAM_REFERENCE ? test : test.skip)('every sample APIRule v2 passes', () => {
    const samples = fs.readdirSync(UPSTREAM_REFERENCE).filter(f => f.startsWith('sample-apirule-v2-'))
      .flatMap(f => loadYamlDocuments(path.join(UPSTREAM_REFERENCE, f)));
    expect(samples.length).toBeGreaterThanOrEqual(6);
    for (const sample of samples) expect({ name: sample.metadata.name, violations: validateApiRule(sample) }).toEqual({ name: sample.metadata.name, violations: [] });
  });
});

describe('the whole object', () => {
  test('fails when both gateway and externalGateway are set', () => {
    expect(validateApiRule(changed(r => { r.spec.externalGateway = 'kyma-system/external'; }))).toEqual([
      violation('gatewayOneOf', 'spec', 'Only one of gateway or externalGateway can be specified'),
    ]);
  });

  test('fails when the spec is missing, and nothing else', () => {
    expect(validateApiRule({ apiVersion: 'gateway.kyma-project.io/v2', kind: 'APIRule', metadata: { name: 'x' } })).toEqual([
      violation('openapi.required', 'spec', 'Required value'),
    ]);
  });

  test.each([null, 'APIRule', 42, []])('fails without throwing when the object is %p', object => {
    expect(validateApiRule(object)).not.toEqual([]);
  });

  test('checks the restrictions of extAuth like a jwt', () => {
    const rule = changed(r => { r.spec.rules[3] = { path: '/{**}', methods: ['OPTIONS'], extAuth: { authorizers: ['oauth2-proxy'], restrictions: { authentications: [] } } }; });
    expect(validateApiRule(rule)).toEqual([violation('jwtAuthentications', 'spec.rules[3].extAuth.restrictions.authentications', 'A JWT config must have at least one authentication')]);
  });

  test('fails when an audience list is empty', () => {
    expect(validateApiRule(changed(r => { r.spec.rules[1].jwt.authorizations[0].audiences = []; }))).toEqual([
      violation('jwtClaimValues', 'spec.rules[1].jwt.authorizations[0].audiences', 'value is empty'),
    ]);
  });

  test('reports a path conflict per method', () => {
    const rule = changed(r => { r.spec.rules = [{ path: '/*', methods: ['GET', 'POST'], noAuth: true }, { path: '/a', methods: ['POST', 'GET', 'PUT'], noAuth: true }]; });
    expect(validateApiRule(rule).map(v => v.message)).toEqual([
      'Path /a with method POST conflicts with at least one of the previous rule paths',
      'Path /a with method GET conflicts with at least one of the previous rule paths',
    ]);
  });

  test('fails when the same issuer reads parameters in one rule and the default header in another', () => {
    const rule = changed(r => { r.spec.rules[0].jwt.authentications[0].fromParams = ['token']; });
    expect(validateApiRule(rule)).toEqual([violation('jwtSameIssuer', 'spec.rules[1].jwt.authentications[0]', 'multiple jwt configurations that differ for the same issuer')]);
  });

  test('accepts the same issuer with another key set configured differently', () => {
    const rule = changed(r => { r.spec.rules[1].jwt.authentications[0] = { issuer: ISSUER, jwksUri: `${JWKS}/v2`, fromParams: ['token'] }; });
    expect(validateApiRule(rule)).toEqual([]);
  });

  test('fails when an origin match is empty', () => {
    expect(validateApiRule(changed(r => { r.spec.corsPolicy.allowOrigins = [{}]; }))).toEqual([
      violation('corsOrigin', 'spec.corsPolicy.allowOrigins[0]', /^Invalid value: \{\}: matches no origin/),
    ]);
  });
});

describe('hosts', () => {
  test.each([
    ['orders', HostForm.SHORT], ['a', HostForm.SHORT], ['orders.example.com', HostForm.FQDN], ['example.com', HostForm.FQDN], ['1.23', HostForm.FQDN],
    ['*.example.com', HostForm.WILDCARD], ['*.local.kyma.dev', HostForm.WILDCARD], [HOST_255, HostForm.FQDN],
  ])('%p is a host of the form %p', (host, form) => {
    expect(hostProblems(host)).toEqual([]);
    expect(hostForm(host)).toBe(form);
  });

  test.each([
    ['upper case', 'Orders'], ['a one-letter top label', 'orders.example.c'], ['a wildcard alone', '*'], ['a wildcard on a short host', '*.orders'],
    ['a wildcard in the middle', 'a.*.example.com'], ['a leading dash', '-orders'], ['a trailing dot', 'orders.example.com.'], ['an underscore', 'my_host'],
    ['a port', 'orders.example.com:443'], ['a 64-character label', `${'a'.repeat(64)}.com`], ['nothing', ''],
  ])('fails when the host has %s', (_what, host) => {
    expect(hostProblems(host)).toEqual([ApiRuleRules.hostFormat.message]);
    expect(hostForm(host)).toBeUndefined();
  });

  test('fails when the host is over 255 characters, though every label is valid', () => {
    expect(hostProblems(`${HOST_255}.ab`)).toEqual(['must have at most 255 characters (it has 258)']);
  });
});

describe('Gateway references and timeouts', () => {
  test.each(['kyma-system/kyma-gateway', 'a/b', `${LABEL_63}/${LABEL_63}`])('accepts the Gateway %p', gateway => {
    expect(gatewayReferenceProblems(gateway)).toEqual([]);
  });

  test.each(['kyma-gateway', 'kyma-gateway.kyma-system.svc.cluster.local', 'Kyma-System/gw', 'a/b/c', '/gw'])('fails when the Gateway is %p', gateway => {
    expect(gatewayReferenceProblems(gateway)).toEqual(['Gateway must be in the namespace/name format']);
  });

  test('fails when the Gateway is over 127 characters', () => {
    expect(gatewayReferenceProblems(`${'a'.repeat(64)}/${LABEL_63}`)).toEqual(['must have at most 127 characters (it has 128)', 'Gateway must be in the namespace/name format']);
  });

  test.each([1, 180, 3900])('accepts a timeout of %p seconds', seconds => {
    expect(apiRuleTimeoutProblems(seconds)).toEqual([]);
  });

  test.each([0, 3901, 1.5, -1])('fails when the timeout is %p seconds', seconds => {
    expect(apiRuleTimeoutProblems(seconds)).toEqual([`must be a whole number of seconds from 1 to 3900 (it is ${seconds})`]);
  });
});

describe('paths', () => {
  const PATH = new RegExp(APIRULE_PATH_PATTERN);
  const OPERATOR_MESSAGES = ['Only one {**} operator is allowed in the path.', 'The {**} operator must be the last operator in the path.'];

  test.each([
    '/', '/*', '/{*}', '/{**}', '/orders', '/orders/{*}', '/orders/{*}/items', '/orders/{**}', '/orders/{**}/items', '/{*}/{**}', '/a//b',
    '/%2Fencoded', "/a-._~!$&'()+,;=:@b",
  ])('accepts %p', p => {
    expect(endpointPathProblems(p)).toEqual([]);
  });

  test.each([
    ['', 'must start with \'/\''],
    ['orders', 'must start with \'/\''],
    ['/orders/*', '\'*\' may appear only as the whole path \'/*\', or in the operators \'{*}\' and \'{**}\', each a whole segment'],
    ['/.*', '\'*\' may appear only as the whole path \'/*\', or in the operators \'{*}\' and \'{**}\', each a whole segment'],
    ['/orders{*}', '\'{\' and \'}\' may appear only in the operators \'{*}\' and \'{**}\', each a whole segment'],
    ['/{id}', '\'{\' and \'}\' may appear only in the operators \'{*}\' and \'{**}\', each a whole segment'],
    ['/a%2', '\'%\' must start an escape of two hex digits, such as %20'],
    ['/a b?c', 'must not contain " ", "?": a path has letters, digits, %-escapes and - . _ ~ ! $ & \' ( ) + , ; = : @'],
    ['/{**}/{**}', 'Only one {**} operator is allowed in the path.'],
    ['/{**}/{*}', 'The {**} operator must be the last operator in the path.'],
  ])('fails when the path is %p', (p, message) => {
    expect(endpointPathProblems(p)).toEqual([message]);
  });

  test('names every problem of a path', () => {
    expect(endpointPathProblems('/a*/{x}/%zz/é')).toHaveLength(4);
  });

  test('finds a problem of syntax exactly when the CRD\'s pattern fails, for any path', () => {
    const segment = fc.oneof(
      fc.constantFrom('{*}', '{**}', '*', '', '%2F', '%', '{', '}', 'orders'),
      fc.string({ unit: fc.constantFrom(...'aZ09-._~!$&\'()+,;=:@%*{}/ ?#é'.split('')), maxLength: 6 }),
    );
    const path = fc.tuple(fc.constantFrom('/', '', '//'), fc.array(segment, { maxLength: 5 })).map(([lead, segments]) => lead + segments.join('/'));
    fc.assert(fc.property(path, p => {
      const syntaxOk = endpointPathProblems(p).every(m => OPERATOR_MESSAGES.includes(m));
      return syntaxOk === PATH.test(p);
    }), { numRuns: 2000 });
  });

  test('reports the CRD pattern in validateApiRule exactly when endpointPathProblems finds a problem of syntax', () => {
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...'/a*{}%2 '.split('')), maxLength: 8 }), p => {
      const violations = validateApiRule(changed(r => { r.spec.rules[3].path = p; }));
      const syntaxOk = endpointPathProblems(p).every(m => OPERATOR_MESSAGES.includes(m));
      return violations.some(v => v.rule === 'openapi.pattern') === !syntaxOk;
    }), { numRuns: 300 });
  });
});

describe('path conflicts', () => {
  const rules = (...paths: Array<string | [string, string[]]>) => paths.map(p => (typeof p === 'string' ? { path: p, methods: ['GET'] } : { path: p[0], methods: p[1] }));

  test.each([
    [['/anything/{**}', '/anything/{*}/one']],
    [['/*', '/orders']],
    [['/{**}', '/']],
    [['/orders', '/orders']],
    [['/orders/{*}', '/orders/42']],
    [['/orders/{*}', '/orders/{*}']],
    [['/a/{**}/b', '/a/b']],
    [['/a/{**}/b', '/a/x/y/b']],
    [['/a/{**}', '/a/']],
    [['/a/b', '/a', '/a']],
  ])('finds a conflict in %p', paths => {
    const found = pathConflicts(rules(...paths));
    expect(found).toEqual([{ index: paths.length - 1, method: 'GET', message: `Path ${paths[paths.length - 1]} with method GET conflicts with at least one of the previous rule paths` }]);
  });

  test.each([
    [['/anything/{*}/one', '/anything/{**}']],
    [['/orders', '/*']],
    [['/orders/42', '/orders/{*}']],
    [['/orders/{*}', '/orders/42/items']],
    [['/a/{**}', '/a']],
    [['/a/{**}/b', '/a/b/c']],
    [['/a/{**}/{*}', '/a/b']],
  ])('finds no conflict in %p', paths => {
    expect(pathConflicts(rules(...paths))).toEqual([]);
  });

  test('finds no conflict between rules of different methods', () => {
    expect(pathConflicts(rules(['/*', ['GET']], ['/orders', ['POST']]))).toEqual([]);
  });

  test('counts each method of a rule once', () => {
    expect(pathConflicts(rules(['/*', ['GET']], ['/orders', ['GET', 'GET']]))).toHaveLength(1);
  });

  const validPath = fc.array(fc.constantFrom('orders', '{*}', 'items', '42', ''), { minLength: 1, maxLength: 4 })
    .chain(segments => fc.boolean().map(last => `/${[...segments, ...(last ? ['{**}'] : [])].join('/')}`));

  test('a path always conflicts with itself, and /* before any path', () => {
    fc.assert(fc.property(validPath, p => pathConflicts(rules(p, p)).length === 1 && pathConflicts(rules('/*', p)).length === 1));
  });

  test('a path without operators never covers another path', () => {
    const literal = fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 }).map(s => `/${s.join('/')}`);
    fc.assert(fc.property(literal, literal, (a, b) => (pathConflicts(rules(a, b)).length === 1) === (a === b)));
  });
});

describe('URIs and JWT values', () => {
  test.each([
    'https://id.example.com/oauth2/certs', 'http://localhost:8080/jwks', 'https://[::1]:8443/certs', '/certs', 'urn:example:issuer', 'https://id.example.com?x=1',
  ])('accepts the URI %p', uri => {
    expect(uriProblems(uri)).toEqual([]);
  });

  test.each([
    ['', 'value is empty or not a valid uri err=value is empty'],
    ['id.example.com/certs', 'value is empty or not a valid uri err=parse "id.example.com/certs": invalid URI for request'],
    ['://id.example.com', 'value is empty or not a valid uri err=parse "://id.example.com": missing protocol scheme'],
    ['https://id.example.com:port/certs', 'value is empty or not a valid uri err=parse "https://id.example.com:port/certs": invalid port ":port" after host'],
    ['https://id.example.com/%zz', 'value is empty or not a valid uri err=parse "https://id.example.com/%zz": invalid URL escape "%zz"'],
    ['https://id.example.com/\n', 'value is empty or not a valid uri err=parse "https://id.example.com/\\n": net/url: invalid control character in URL'],
    ['https://[::1/certs', 'value is empty or not a valid uri err=parse "https://[::1/certs": missing \']\' in host'],
  ])('fails when the URI is %p', (uri, message) => {
    expect(uriProblems(uri)).toEqual([message]);
  });

  test.each(['https://id.example.com', 'my-issuer', 'urn:issuer', 'has spaces but no colon'])('accepts the issuer %p', issuer => {
    expect(jwtIssuerProblems(issuer)).toEqual([]);
  });

  test.each(['', 'https://id example.com', ':issuer'])('fails when the issuer is %p', issuer => {
    expect(jwtIssuerProblems(issuer)).toEqual([expect.stringMatching(/^value is empty or not a valid uri err=/)]);
  });

  test('checks scopes and audiences like the controller', () => {
    expect(requiredScopesProblems(undefined)).toEqual([]);
    expect(requiredScopesProblems(['read'])).toEqual([]);
    expect(requiredScopesProblems([])).toEqual(['value is empty']);
    expect(requiredScopesProblems(['read', ''])).toEqual(['scope value is empty']);
    expect(audiencesProblems([''])).toEqual(['audience value is empty']);
  });
});

describe('jwtIssuerSchemeProblems', () => {
  test.each(['login.example.com', 'login.example.com/realms/shop', 'LOGIN.Example.COM'])('flags the host name %s, giving it with https://', issuer => {
    expect(jwtIssuerSchemeProblems(issuer)).toEqual([expect.stringMatching(new RegExp(`^a host name without a scheme: .*such as https://${issuer.replace(/[./]/g, '\\$&')}$`))]);
  });

  test.each(['https://login.example.com', 'http://127.0.0.1:8080', 'kubernetes/serviceaccount', 'my-issuer', 'urn:example:issuer'])('lets %s pass', issuer => {
    expect(jwtIssuerSchemeProblems(issuer)).toEqual([]);
  });
});
