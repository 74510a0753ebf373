/**
 * An app with one Function exposed with JWT, one subscribed Function, and a 90/10 traffic split,
 * through every kind of exposure: it synthesizes, `kyma-serverless validate` accepts its folder,
 * its APIRules and Subscriptions pass upstream's CRDs (schema and CEL rules), and its Istio and
 * Gateway API objects pass their models.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { VirtualService } from '@kubernetes-models/istio/networking.istio.io/v1beta1/VirtualService';
import { AuthorizationPolicy } from '@kubernetes-models/istio/security.istio.io/v1/AuthorizationPolicy';
import { RequestAuthentication } from '@kubernetes-models/istio/security.istio.io/v1/RequestAuthentication';
import {
  EndpointAuth, Exposure, FunctionNamespace, FunctionRuntime, FunctionSource, FunctionTraffic, GitOpsApp, KymaFunction, ServerlessStack,
} from '../../src';
import { FUNCTION_LABEL, OBJECT_KINDS_ANNOTATION } from '../../src/api';
import { groupKindOf, objectKindsOf } from '../../src/api/labels';
import { Severity, validateManifests } from '../../src/policy/manifests';
import { loadYamlDocuments } from '../util/fixtures';
import { upstreamCrdValidator } from '../util/upstream-crds';

const JWT = { issuer: 'https://login.example.com', jwksUri: 'https://login.example.com/.well-known/jwks.json', requiredScopes: ['orders:write'] };

function synthReachApp(dir: string): any[] {
  const app = new GitOpsApp({ outdir: dir });
  const stack = new ServerlessStack(app, 'serverless', { exposure: { via: Exposure.apiRule(), domain: 'apps.example.com' } });
  const team = new FunctionNamespace(app, 'team-a', { stack });
  const node = (id: string, code = `exports.main = () => "${id}"`) =>
    new KymaFunction(team, id, { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(code) });

  // Exposed with JWT, through the stack's APIRule default.
  node('orders').expose({ host: 'orders', auth: EndpointAuth.jwt(JWT) });
  // Subscribed.
  new KymaFunction(team, 'invoices', { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline('def main(event, context):\n    return ""\n') })
    .subscribe({ source: 'orders', types: ['order.created.v1'] });
  // A 90/10 split, exposed through Istio and through Gateway API.
  const split = new FunctionTraffic(team, 'Catalog', {
    name: 'catalog',
    routes: [{ function: node('catalog-v1'), percent: 90 }, { function: node('catalog-v2'), percent: 10, tag: 'canary' }],
  });
  split.expose({ host: 'catalog.apps.example.com', via: Exposure.istio({ gateway: 'kyma-system/kyma-gateway' }), auth: EndpointAuth.jwt(JWT) });
  split.expose({ host: 'catalog-gw.apps.example.com', via: Exposure.gatewayApi({ parentRefs: [{ name: 'public', namespace: 'infra' }] }), auth: EndpointAuth.none() });
  app.synth();
  return fs.readdirSync(dir).filter(f => f.endsWith('.k8s.yaml')).sort().flatMap(f => loadYamlDocuments(path.join(dir, f)));
}

describe('an app whose Functions people can reach', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reach-'));
  const objects = synthReachApp(dir);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const ofKind = (kind: string) => objects.filter(o => o.kind === kind);

  test('synthesizes every object of the three', () => {
    const reach = objects.filter(o => ['APIRule', 'Subscription', 'VirtualService', 'HTTPRoute', 'AuthorizationPolicy', 'RequestAuthentication'].includes(o.kind)
      || (o.kind === 'Service' && o.metadata.namespace === 'team-a'));
    expect(reach.map(o => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'APIRule/orders',
      'AuthorizationPolicy/catalog-endpoint-catalog-v1-jwt', 'AuthorizationPolicy/catalog-endpoint-catalog-v2-jwt',
      'HTTPRoute/catalog-endpoint-2',
      'RequestAuthentication/catalog-endpoint-catalog-v1-jwt', 'RequestAuthentication/catalog-endpoint-catalog-v2-jwt',
      'Service/canary-catalog', 'Service/catalog',
      'Subscription/invoices',
      'VirtualService/canary-catalog', 'VirtualService/catalog', 'VirtualService/catalog-endpoint',
    ]);
  });

  test('passes kyma-serverless validate', () => {
    const report = validateManifests(dir);
    expect(report.findings.filter(f => f.severity === Severity.ERROR)).toEqual([]);
    expect(report.findings).toEqual([]);
  });

  test('its APIRule and Subscription pass upstream\'s CRDs, schema and CEL rules', () => {
    expect(ofKind('APIRule')).toHaveLength(1);
    for (const rule of ofKind('APIRule')) expect(upstreamCrdValidator('apirule').validate(rule)).toEqual([]);
    expect(ofKind('Subscription')).toHaveLength(1);
    for (const subscription of ofKind('Subscription')) expect(upstreamCrdValidator('subscription').validate(subscription)).toEqual([]);
  });

  test('its Istio and Gateway API objects pass their models', () => {
    const models: { [kind: string]: new (data: any) => { validate(): void } } = { VirtualService, AuthorizationPolicy, RequestAuthentication, HTTPRoute };
    for (const [kind, Model] of Object.entries(models)) {
      expect(ofKind(kind).length).toBeGreaterThan(0);
      for (const object of ofKind(kind)) expect(() => new Model(object).validate()).not.toThrow();
    }
  });

  test('names on each Function the kinds of the objects labelled with its name, which status reads when a cluster lacks one', () => {
    const functions = ofKind('Function');
    const kindsOf = (fn: any) => objects.filter(o => o !== fn && o.metadata.namespace === fn.metadata.namespace
      && o.metadata.labels?.[FUNCTION_LABEL] === fn.metadata.name).map(o => groupKindOf(o.apiVersion, o.kind));
    expect(Object.fromEntries(functions.map(fn => [fn.metadata.name, fn.metadata.annotations?.[OBJECT_KINDS_ANNOTATION]]))).toEqual({
      'orders': 'APIRule.gateway.kyma-project.io',
      'invoices': 'Subscription.eventing.kyma-project.io',
      // The split's objects are labelled with the split, not with the Functions behind it.
      'catalog-v1': undefined,
      'catalog-v2': undefined,
    });
    for (const fn of functions) expect(objectKindsOf(fn.metadata.annotations)).toEqual([...new Set(kindsOf(fn))].sort());
  });

  test('splits 90/10, in the mesh and at the gateways', () => {
    const weights = (o: any) => (o.spec.http?.[0].route ?? o.spec.rules[0].backendRefs).map((r: any) => r.weight);
    const split = objects.filter(o => (o.kind === 'VirtualService' && ['catalog', 'catalog-endpoint'].includes(o.metadata.name)) || o.kind === 'HTTPRoute');
    expect(split.map(weights)).toEqual([[90, 10], [90, 10], [90, 10]]);
  });
});
