import { Testing } from 'cdk8s';
import { FunctionNamespace, FunctionRuntime, FunctionSource, FunctionSubscription, KymaFunction, TypeMatching } from '../../src';
import { FUNCTION_LABEL, validateSubscription } from '../../src/api';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { upstreamCrdValidator } from '../util/upstream-crds';

function receiver() {
  const team = new FunctionNamespace(Testing.app(), 'team-a');
  const fn = new KymaFunction(team, 'receiver', { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline('def main(event, context):\n    return "ok"\n') });
  return { team, fn };
}

function synthErrors(team: FunctionNamespace): string {
  try {
    Testing.synth(team);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('synth succeeded');
}

describe('subscribe()', () => {
  test('writes a Subscription whose sink is the Function\'s Service, with Kyma\'s defaults written out', () => {
    const { team, fn } = receiver();
    const subscription = fn.subscribe({ source: 'commerce', types: ['order.created.v1', 'order.cancelled.v1'] });
    expect(subscription).toBeInstanceOf(FunctionSubscription);
    expect(subscription.sink).toBe('http://receiver.team-a.svc.cluster.local');
    const objects = Testing.synth(team).filter(o => o.kind === 'Subscription');
    expect(objects).toEqual([{
      apiVersion: 'eventing.kyma-project.io/v1alpha2',
      kind: 'Subscription',
      metadata: { name: 'receiver', namespace: 'team-a', labels: expect.objectContaining({ [FUNCTION_LABEL]: 'receiver' }) },
      spec: {
        sink: 'http://receiver.team-a.svc.cluster.local',
        source: 'commerce',
        types: ['order.created.v1', 'order.cancelled.v1'],
        typeMatching: 'standard',
        config: { maxInFlightMessages: '10' },
      },
    }]);
    expect(validateSubscription(objects[0])).toEqual([]);
    expect(upstreamCrdValidator('subscription').validate(objects[0])).toEqual([]);
    expectValidKubernetesObjects(objects);
  });

  test('names further Subscriptions of the Function -2, -3, and takes exact matching and the in-flight limit', () => {
    const { team, fn } = receiver();
    fn.subscribe({ source: 'commerce', types: ['order.created.v1'] });
    const second = fn.subscribe({ source: '/default/sap.kyma/tunas', types: ['sap.kyma.custom.commerce.order.created.v1'], typeMatching: TypeMatching.EXACT, maxInFlightMessages: 3 });
    expect(second.name).toBe('receiver-2');
    const written = Testing.synth(team).find(o => o.kind === 'Subscription' && o.metadata.name === 'receiver-2');
    expect(written.spec).toMatchObject({ typeMatching: 'exact', config: { maxInFlightMessages: '3' } });
    expect(validateSubscription(written)).toEqual([]);
  });

  test.each([
    ['an event type has too few segments', { source: 'commerce', types: ['created'] }, /'types\[0\]' \("created"\): .*2 segments/],
    ['a type is given twice', { source: 'commerce', types: ['a.b', 'a.b'] }, /'types\[1\]' \("a\.b"\) is given twice/],
    ['there is no type', { source: 'commerce', types: [] }, /'types' is empty/],
    ['the source is empty with standard matching', { source: '', types: ['a.b'] }, /'source' \(""\)/],
    ['the in-flight limit is 0', { source: 'commerce', types: ['a.b'], maxInFlightMessages: 0 }, /'maxInFlightMessages' \(0\) must be a whole number of at least 1/],
  ] as const)('fails synth naming the prop when %s', (_what, options, message) => {
    const { team, fn } = receiver();
    fn.subscribe(options as any);
    expect(synthErrors(team)).toMatch(new RegExp(`\\[team-a/receiver/Subscription\\] ${message.source}`));
  });
});
