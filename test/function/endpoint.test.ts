import { Duration, Testing } from 'cdk8s';
import {
  EndpointAuth, Exposure, FunctionEndpoint, FunctionNamespace, FunctionRuntime, FunctionSource, GatewayTls, HttpMethod, KymaFunction,
  ServerlessStack, ServerlessStackProps,
} from '../../src';
import { FUNCTION_LABEL, URL_ANNOTATION, validateApiRule } from '../../src/api';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { upstreamCrdValidator } from '../util/upstream-crds';

const HELLO = 'exports.main = () => "hi"';
const JWT = { issuer: 'https://login.example.com', jwksUri: 'https://login.example.com/.well-known/jwks.json' };

/** A Function in a FunctionNamespace of a stack with the given props; returns it and the namespace. */
function functionIn(stackProps: ServerlessStackProps = {}) {
  const app = Testing.app();
  const stack = new ServerlessStack(app, 'serverless', stackProps);
  const team = new FunctionNamespace(app, 'team-a', { stack });
  const fn = new KymaFunction(team, 'orders', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(HELLO) });
  return { app, stack, team, fn };
}

function synthErrors(team: FunctionNamespace): string {
  try {
    Testing.synth(team);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('synth succeeded');
}

const ofKind = (objects: any[], kind: string) => objects.filter(o => o.kind === kind);

describe('expose() through Istio', () => {
  const { team, fn } = functionIn();
  const endpoint = fn.expose({
    host: 'orders.example.com',
    via: Exposure.istio({ gateway: 'istio-system/public' }),
    auth: EndpointAuth.jwt({ ...JWT, requiredScopes: ['orders:read'], audiences: ['orders'] }),
    paths: [{ path: '/orders/{*}', methods: [HttpMethod.GET] }, { path: '/orders', methods: [HttpMethod.GET, HttpMethod.POST] }],
    timeout: Duration.seconds(30),
  });
  const objects = Testing.synth(team);

  test('answers at its URL', () => {
    expect(endpoint.url).toBe('https://orders.example.com');
    expect(endpoint).toBeInstanceOf(FunctionEndpoint);
    expect(endpoint.restrictsCallers).toBe(true);
  });

  test('binds a VirtualService to the gateway, one route per path in order, to the Function\'s Service', () => {
    const [service] = ofKind(objects, 'VirtualService');
    expect(service.metadata).toMatchObject({ name: 'orders', namespace: 'team-a', labels: { [FUNCTION_LABEL]: 'orders' }, annotations: { [URL_ANNOTATION]: 'https://orders.example.com' } });
    expect(service.spec.hosts).toEqual(['orders.example.com']);
    expect(service.spec.gateways).toEqual(['istio-system/public']);
    expect(service.spec.http.map((r: any) => r.match)).toEqual([
      [{ uri: { regex: '^/orders/([A-Za-z0-9-._~!$&\'()*+,;=:@]|%[0-9a-fA-F]{2})+$' }, method: { regex: '^(GET)$' } }],
      [{ uri: { exact: '/orders' }, method: { regex: '^(GET|POST)$' } }],
    ]);
    for (const route of service.spec.http) {
      expect(route.route).toEqual([{ destination: { host: 'orders.team-a.svc.cluster.local', port: { number: 80 } } }]);
      expect(route.timeout).toBe('30s');
    }
  });

  test('requires a token of the issuer with the scopes and audiences, on the Function\'s Pods', () => {
    const [authentication] = ofKind(objects, 'RequestAuthentication');
    const selector = { matchLabels: { 'serverless.kyma-project.io/function-name': 'orders', 'serverless.kyma-project.io/resource': 'deployment' } };
    expect(authentication.spec).toEqual({ selector, jwtRules: [{ ...JWT, audiences: ['orders'], forwardOriginalToken: true }] });
    const [policy] = ofKind(objects, 'AuthorizationPolicy');
    expect(policy.spec.selector).toEqual(selector);
    expect(policy.spec.action).toBe('ALLOW');
    // Two paths, three claims the scopes may be in.
    expect(policy.spec.rules).toHaveLength(6);
    expect(policy.spec.rules[0]).toEqual({
      from: [{ source: { requestPrincipals: ['https://login.example.com/*'] } }],
      to: [{ operation: { hosts: ['orders.example.com'], paths: ['/orders/{*}'], methods: ['GET'] } }],
      when: [{ key: 'request.auth.claims[scp]', values: ['orders:read'] }, { key: 'request.auth.claims[aud]', values: ['orders'] }],
    });
  });

  test('every object passes its schema', () => {
    expectValidKubernetesObjects(objects);
  });
});

describe('expose() through an APIRule', () => {
  test('writes an APIRule v2 that upstream\'s CRD accepts, with noAuth only when asked for', () => {
    const { team, fn } = functionIn();
    fn.expose({ host: 'orders.example.com', via: Exposure.apiRule(), auth: EndpointAuth.none() });
    const [rule] = ofKind(Testing.synth(team), 'APIRule');
    expect(rule).toEqual({
      apiVersion: 'gateway.kyma-project.io/v2',
      kind: 'APIRule',
      metadata: expect.objectContaining({ name: 'orders', namespace: 'team-a' }),
      spec: {
        hosts: ['orders.example.com'],
        gateway: 'kyma-system/kyma-gateway',
        service: { name: 'orders', namespace: 'team-a', port: 80 },
        rules: [{ path: '/*', methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'], noAuth: true }],
      },
    });
    expect(validateApiRule(rule)).toEqual([]);
    expect(upstreamCrdValidator('apirule').validate(rule)).toEqual([]);
  });

  test('writes JWT, scopes, CORS and the timeout as the APIRule spells them', () => {
    const { team, fn } = functionIn();
    fn.expose({
      host: 'orders.example.com',
      via: Exposure.apiRule({ gateway: 'kyma-system/kyma-gateway' }),
      auth: EndpointAuth.jwt({ ...JWT, requiredScopes: ['read'] }),
      cors: { allowOrigins: ['https://shop.example.com'], allowCredentials: true, maxAge: Duration.minutes(10) },
      timeout: Duration.minutes(2),
      paths: [{ path: '/orders', methods: [HttpMethod.GET] }],
    });
    const [rule] = ofKind(Testing.synth(team), 'APIRule');
    expect(rule.spec.rules).toEqual([{
      path: '/orders',
      // Browsers send CORS preflights as OPTIONS.
      methods: ['GET', 'OPTIONS'],
      jwt: { authentications: [JWT], authorizations: [{ requiredScopes: ['read'] }] },
    }]);
    expect(rule.spec.timeout).toBe(120);
    expect(rule.spec.corsPolicy).toEqual({ allowOrigins: [{ exact: 'https://shop.example.com' }], allowMethods: ['GET', 'OPTIONS'], allowCredentials: true, maxAge: 600 });
    expect(validateApiRule(rule)).toEqual([]);
    expect(upstreamCrdValidator('apirule').validate(rule)).toEqual([]);
  });
});

describe('expose() through Gateway API', () => {
  test('writes an HTTPRoute with one match per path and method, attached to the Gateway', () => {
    const { team, fn } = functionIn();
    fn.expose({
      host: 'orders.example.com',
      via: Exposure.gatewayApi({ parentRefs: [{ name: 'public', namespace: 'gateways', sectionName: 'https' }] }),
      auth: EndpointAuth.none(),
      paths: [{ path: '/orders/{**}', methods: [HttpMethod.GET, HttpMethod.POST] }],
    });
    const objects = Testing.synth(team);
    const [route] = ofKind(objects, 'HTTPRoute');
    expect(route.spec).toEqual({
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public', namespace: 'gateways', sectionName: 'https' }],
      hostnames: ['orders.example.com'],
      rules: [{
        matches: [{ path: { type: 'PathPrefix', value: '/orders' }, method: 'GET' }, { path: { type: 'PathPrefix', value: '/orders' }, method: 'POST' }],
        backendRefs: [{ name: 'orders', port: 80 }],
      }],
    });
    expect(ofKind(objects, 'AuthorizationPolicy')).toEqual([]);
    expectValidKubernetesObjects(objects);
  });
});

describe('the stack\'s exposure defaults', () => {
  test('give via and the domain of short host names', () => {
    const { team, fn } = functionIn({ exposure: { via: Exposure.apiRule(), domain: 'apps.example.com' } });
    const endpoint = fn.expose({ host: 'orders', auth: EndpointAuth.none() });
    expect(endpoint.url).toBe('https://orders.apps.example.com');
    expect(ofKind(Testing.synth(team), 'APIRule')[0].spec.hosts).toEqual(['orders.apps.example.com']);
  });

  test('can create the Istio Gateway of the domain, with a cert-manager certificate', () => {
    const { stack } = functionIn({
      exposure: {
        via: Exposure.istio({ gateway: 'istio-system/functions' }),
        domain: 'apps.example.com',
        gateway: { tls: GatewayTls.certManager({ issuer: { name: 'letsencrypt' } }) },
      },
    });
    const objects = Testing.synth(stack);
    const gateway = objects.find(o => o.kind === 'Gateway');
    expect(gateway.metadata).toMatchObject({ name: 'functions', namespace: 'istio-system' });
    expect(gateway.spec.servers).toEqual([
      { port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*.apps.example.com'], tls: { mode: 'SIMPLE', credentialName: 'functions-tls' } },
      { port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*.apps.example.com'], tls: { httpsRedirect: true } },
    ]);
    const certificate = objects.find(o => o.kind === 'Certificate');
    expect(certificate.metadata).toMatchObject({ name: 'functions', namespace: 'istio-system' });
    expect(certificate.spec).toMatchObject({ secretName: 'functions-tls', dnsNames: ['*.apps.example.com', 'apps.example.com'] });
    expectValidKubernetesObjects([gateway, certificate]);
  });

  test('throws when the stack\'s domain is not a domain', () => {
    expect(() => functionIn({ exposure: { via: Exposure.apiRule(), domain: 'Not A Domain' } })).toThrow(/'exposure.domain' \(Not A Domain\)/);
  });
});

describe('expose() fails synth naming the prop', () => {
  test.each([
    ['auth is missing', { host: 'orders.example.com', via: Exposure.apiRule() }, /'auth' is not set: give EndpointAuth\.jwt/],
    ['via is missing and the stack has no default', { host: 'orders.example.com', auth: EndpointAuth.none() }, /'via' is not set, and the stack sets no default: give Exposure\.istio/],
    ['the host is short and the stack has no domain', { host: 'orders', via: Exposure.apiRule(), auth: EndpointAuth.none() }, /'host' \(orders\) is a short name/],
    ['a path lacks its leading /', { host: 'o.example.com', via: Exposure.apiRule(), auth: EndpointAuth.none(), paths: [{ path: 'orders' }] }, /'paths\[0\]\.path' \(orders\)/],
    ['the issuer is a host name without its scheme', { host: 'o.example.com', via: Exposure.apiRule(), auth: EndpointAuth.jwt({ issuer: 'login.example.com', jwksUri: JWT.jwksUri }) },
      /'auth\.jwt\.issuer' \("login\.example\.com"\): a host name without a scheme: .*such as https:\/\/login\.example\.com/],
    ['the jwksUri has no scheme', { host: 'o.example.com', via: Exposure.apiRule(), auth: EndpointAuth.jwt({ issuer: JWT.issuer, jwksUri: 'keys.example.com/jwks' }) },
      /'auth\.jwt\.jwksUri' \("keys\.example\.com\/jwks"\): value is empty or not a valid uri.*: give the full URL, such as https:\/\/keys\.example\.com\/jwks/],
    ['jwt has no issuer', { host: 'o.example.com', via: Exposure.apiRule(), auth: EndpointAuth.jwt({ issuer: '', jwksUri: JWT.jwksUri }) }, /'auth\.jwt\.issuer' \(""\)/],
    ['the gateway is no namespace/name', { host: 'o.example.com', via: Exposure.istio({ gateway: 'public' }), auth: EndpointAuth.none() }, /'via' \(Exposure\.istio, gateway "public"\)/],
    ['Gateway API is asked for CORS', {
      host: 'o.example.com', via: Exposure.gatewayApi({ parentRefs: [{ name: 'gw' }] }), auth: EndpointAuth.none(), cors: { allowOrigins: ['https://a.example.com'] },
    }, /'cors' is not available with Exposure\.gatewayApi/],
    ['Gateway API is asked for a segment wildcard', {
      host: 'o.example.com', via: Exposure.gatewayApi({ parentRefs: [{ name: 'gw' }] }), auth: EndpointAuth.none(), paths: [{ path: '/a/{*}/b' }],
    }, /'paths\[0\]\.path' \(\/a\/\{\*\}\/b\) cannot be matched by a Gateway API HTTPRoute/],
  ] as const)('when %s', (_what, options, message) => {
    const { team, fn } = functionIn();
    fn.expose(options as any);
    expect(synthErrors(team)).toMatch(new RegExp(`\\[team-a/orders/Endpoint\\] ${message.source}`));
  });
});

describe('a Function both exposed and subscribed', () => {
  test('admits Kyma Eventing\'s deliveries when its endpoint restricts callers', () => {
    const { team, fn } = functionIn();
    fn.subscribe({ source: 'commerce', types: ['order.created.v1'] });
    fn.expose({ host: 'orders.example.com', via: Exposure.apiRule(), auth: EndpointAuth.jwt(JWT) });
    const policies = ofKind(Testing.synth(team), 'AuthorizationPolicy');
    expect(policies.map(p => p.metadata.name)).toEqual(['orders-eventing']);
    expect(policies[0].spec.rules).toEqual([{ to: [{ operation: { hosts: ['orders.team-a.svc.cluster.local', 'orders.team-a.svc.cluster.local:80'], methods: ['POST'] } }] }]);
  });

  test('adds nothing when its endpoint admits everyone', () => {
    const { team, fn } = functionIn();
    fn.expose({ host: 'orders.example.com', via: Exposure.istio({ gateway: 'istio-system/public' }), auth: EndpointAuth.none() });
    fn.subscribe({ source: 'commerce', types: ['order.created.v1'] });
    expect(ofKind(Testing.synth(team), 'AuthorizationPolicy')).toEqual([]);
  });
});
