import { Testing } from 'cdk8s';
import { EndpointAuth, Exposure, FunctionNamespace, FunctionRuntime, FunctionSource, FunctionTraffic, KymaFunction } from '../../src';
import { TRAFFIC_LABEL } from '../../src/api';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';

function versions(namespace = 'team-a') {
  const app = Testing.app();
  const team = new FunctionNamespace(app, namespace);
  const fn = (id: string) => new KymaFunction(team, id, { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline(`exports.main = () => "${id}"`) });
  return { app, team, v1: fn('orders-v1'), v2: fn('orders-v2') };
}

function synthErrors(team: FunctionNamespace): string {
  try {
    Testing.synth(team);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('synth succeeded');
}

describe('FunctionTraffic', () => {
  const { team, v1, v2 } = versions();
  const traffic = new FunctionTraffic(team, 'Orders', { name: 'orders', routes: [{ function: v1, percent: 90 }, { function: v2, percent: 10, tag: 'canary' }] });
  const objects = Testing.synth(team).filter(o => o.metadata.labels?.[TRAFFIC_LABEL] === 'orders');

  test('gives the split a stable in-cluster name: a Service without selector', () => {
    expect(traffic.url).toBe('http://orders.team-a.svc.cluster.local');
    const service = objects.find(o => o.kind === 'Service' && o.metadata.name === 'orders');
    expect(service.spec.selector).toBeUndefined();
    expect(service.spec.ports).toEqual([expect.objectContaining({ name: 'http', port: 80 })]);
  });

  test('sends 90 % to orders-v1 and 10 % to orders-v2 in the mesh', () => {
    const service = objects.find(o => o.kind === 'VirtualService' && o.metadata.name === 'orders');
    expect(service.spec).toEqual({
      hosts: ['orders.team-a.svc.cluster.local'],
      gateways: ['mesh'],
      http: [{
        route: [
          { destination: { host: 'orders-v1.team-a.svc.cluster.local', port: { number: 80 } }, weight: 90 },
          { destination: { host: 'orders-v2.team-a.svc.cluster.local', port: { number: 80 } }, weight: 10 },
        ],
      }],
    });
  });

  test('gives a tagged route a name of its own, canary-orders, all to its Function', () => {
    expect(objects.find(o => o.kind === 'Service' && o.metadata.name === 'canary-orders').spec.selector).toBeUndefined();
    expect(objects.find(o => o.kind === 'VirtualService' && o.metadata.name === 'canary-orders').spec).toEqual({
      hosts: ['canary-orders.team-a.svc.cluster.local'],
      gateways: ['mesh'],
      http: [{ route: [{ destination: { host: 'orders-v2.team-a.svc.cluster.local', port: { number: 80 } } }] }],
    });
  });

  test('every object passes its schema', () => {
    expect(objects.map(o => `${o.kind}/${o.metadata.name}`).sort()).toEqual(['Service/canary-orders', 'Service/orders', 'VirtualService/canary-orders', 'VirtualService/orders']);
    expectValidKubernetesObjects(objects);
  });

  test('expose() through Istio keeps the weights, and requires JWT on both Functions', () => {
    const s = versions();
    const split = new FunctionTraffic(s.team, 'Orders', { name: 'orders', routes: [{ function: s.v1, percent: 90 }, { function: s.v2, percent: 10 }] });
    const endpoint = split.expose({
      host: 'orders.example.com', via: Exposure.istio({ gateway: 'istio-system/public' }),
      auth: EndpointAuth.jwt({ issuer: 'https://login.example.com', jwksUri: 'https://login.example.com/keys' }),
    });
    expect(endpoint.url).toBe('https://orders.example.com');
    const out = Testing.synth(s.team);
    const gatewayBound = out.find(o => o.kind === 'VirtualService' && o.spec.gateways?.[0] === 'istio-system/public');
    expect(gatewayBound.spec.http[0].route.map((r: any) => [r.destination.host, r.weight])).toEqual([
      ['orders-v1.team-a.svc.cluster.local', 90], ['orders-v2.team-a.svc.cluster.local', 10],
    ]);
    expect(out.filter(o => o.kind === 'AuthorizationPolicy').map(o => o.spec.selector.matchLabels['serverless.kyma-project.io/function-name']))
      .toEqual(['orders-v1', 'orders-v2']);
    expectValidKubernetesObjects(out);
  });
});

describe('FunctionTraffic fails synth naming the prop', () => {
  test('when the percents add up to 99', () => {
    const { team, v1, v2 } = versions();
    new FunctionTraffic(team, 'Orders', { name: 'orders', routes: [{ function: v1, percent: 90 }, { function: v2, percent: 9 }] });
    expect(synthErrors(team)).toMatch(/\[team-a\/Orders\] 'routes'.*99.*100/);
  });

  test('when a route\'s Function is in another namespace', () => {
    const { app, team, v1 } = versions();
    const other = new FunctionNamespace(app, 'team-b');
    const stranger = new KymaFunction(other, 'orders-v3', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 3') });
    new FunctionTraffic(team, 'Orders', { name: 'orders', routes: [{ function: v1, percent: 50 }, { function: stranger, percent: 50 }] });
    expect(synthErrors(team)).toMatch(/'routes\[1\]\.function' \(orders-v3\) is in namespace team-b, the split in team-a/);
  });

  test('when it is exposed through an APIRule', () => {
    const { team, v1, v2 } = versions();
    const split = new FunctionTraffic(team, 'Orders', { name: 'orders', routes: [{ function: v1, percent: 50 }, { function: v2, percent: 50 }] });
    split.expose({ host: 'orders.example.com', via: Exposure.apiRule(), auth: EndpointAuth.none() });
    expect(synthErrors(team)).toMatch(/\[team-a\/Orders\/Endpoint\] 'via' \(Exposure\.apiRule\) cannot expose a traffic split/);
  });

  test('when a tag makes a name longer than 63 characters', () => {
    const { team, v1, v2 } = versions();
    new FunctionTraffic(team, 'Orders', { name: 'orders', routes: [{ function: v1, percent: 50, tag: 'x'.repeat(60) }, { function: v2, percent: 50 }] });
    expect(synthErrors(team)).toMatch(/\[team-a\/Orders\] 'routes\[0\]\.tag'/);
  });
});
