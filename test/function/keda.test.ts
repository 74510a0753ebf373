import { Chart, Duration, JsonPatch, Testing } from 'cdk8s';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { FunctionScaledObject, FunctionScaledObjectProps, KedaTrigger } from '../../src';
import { FUNCTION_LABEL } from '../../src/api';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';

const PROMETHEUS = { serverAddress: 'http://prometheus.monitoring.svc.cluster.local:9090', query: 'sum(rate(istio_requests_total{destination_workload="orders"}[2m]))', threshold: 50 };
const OFFICE_HOURS = { timezone: 'Europe/Berlin', start: '0 8 * * 1-5', end: '0 18 * * 1-5', desiredReplicas: 2 };

function chart(): Chart {
  return new Chart(Testing.app(), 'test', { namespace: 'team-a' });
}

function scaledObject(props: Partial<FunctionScaledObjectProps> = {}, scope: Chart = chart()): { construct: FunctionScaledObject; object: any } {
  const construct = new FunctionScaledObject(scope, 'Scaler', {
    functionName: 'orders', namespace: 'team-a', maxReplicas: 5, triggers: [KedaTrigger.prometheus(PROMETHEUS)], ...props,
  });
  const objects = Testing.synth(scope);
  expectValidKubernetesObjects(objects);
  return { construct, object: objects.find(o => o.kind === 'ScaledObject') };
}

function synthErrors(props: Partial<FunctionScaledObjectProps>): string {
  const scope = chart();
  new FunctionScaledObject(scope, 'Scaler', { functionName: 'orders', namespace: 'team-a', maxReplicas: 5, triggers: [KedaTrigger.prometheus(PROMETHEUS)], ...props });
  try {
    Testing.synth(scope);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('synth succeeded');
}

describe('KedaTrigger', () => {
  test('prometheus() gives KEDA\'s prometheus scaler its address, query and threshold, as strings', () => {
    const trigger = KedaTrigger.prometheus({ ...PROMETHEUS, threshold: 12.5 });
    expect(trigger.type).toBe('prometheus');
    expect(trigger.metadata).toEqual({ serverAddress: PROMETHEUS.serverAddress, query: PROMETHEUS.query, threshold: '12.5' });
    expect(trigger._problems()).toEqual([]);
  });

  test('cron() gives the time zone, the period and the Pods in it', () => {
    const trigger = KedaTrigger.cron(OFFICE_HOURS);
    expect(trigger.type).toBe('cron');
    expect(trigger.metadata).toEqual({ timezone: 'Europe/Berlin', start: '0 8 * * 1-5', end: '0 18 * * 1-5', desiredReplicas: '2' });
    expect(KedaTrigger.cron({ ...OFFICE_HOURS, timezone: 'UTC', start: '@daily', end: '30 23 * * *' })._problems()).toEqual([]);
  });

  test('cpu() is a Utilization metric of KEDA\'s cpu scaler', () => {
    const trigger = KedaTrigger.cpu({ utilization: 60 });
    expect(trigger._toKube()).toEqual({ type: 'cpu', metricType: 'Utilization', metadata: { value: '60' } });
  });

  test('of() takes any scaler and its settings as they are', () => {
    const metadata = { queueName: 'orders', mode: 'QueueLength', value: '20', hostFromEnv: 'RABBITMQ_URL' };
    const trigger = KedaTrigger.of('rabbitmq', metadata);
    expect(trigger._toKube()).toEqual({ type: 'rabbitmq', metadata });
    expect(trigger._problems()).toEqual([]);
  });

  test.each([
    ['prometheus without an address', KedaTrigger.prometheus({ ...PROMETHEUS, serverAddress: '' }), ['\'serverAddress\' is required for a prometheus trigger']],
    ['prometheus with an address that is no URL', KedaTrigger.prometheus({ ...PROMETHEUS, serverAddress: 'prometheus:9090' }),
      ['\'serverAddress\' ("prometheus:9090") must be an http:// or https:// URL, such as http://prometheus.monitoring.svc.cluster.local:9090']],
    ['prometheus with a blank query and a threshold of 0', KedaTrigger.prometheus({ ...PROMETHEUS, query: ' ', threshold: 0 }),
      ['\'query\' is required for a prometheus trigger', '\'threshold\' (0) must be a number above 0: the value of the query one Pod takes']],
    ['prometheus given in JavaScript without its options', KedaTrigger.prometheus({} as any),
      ['\'serverAddress\' is required for a prometheus trigger', '\'query\' is required for a prometheus trigger', '\'threshold\' is required for a prometheus trigger']],
    ['cron in an unknown time zone', KedaTrigger.cron({ ...OFFICE_HOURS, timezone: 'Mars/Olympus' }),
      ['\'timezone\' ("Mars/Olympus") is not an IANA time zone: give one such as Europe/Berlin, America/New_York or UTC']],
    ['cron with four fields and a bad character', KedaTrigger.cron({ ...OFFICE_HOURS, start: '0 8 * *', end: '0 18 * * MON#1' }), [
      '\'start\' ("0 8 * *") has 4 fields: give five (minute hour day-of-month month day-of-week), such as 0 8 * * 1-5',
      '\'end\' ("0 18 * * MON#1") \'MON#1\' is no cron field: use digits, names, *, ranges (1-5), lists (1,3) and steps (*/15)',
    ]],
    ['cron whose period is empty, with no Pods in it', KedaTrigger.cron({ ...OFFICE_HOURS, end: '0 8 * * 1-5', desiredReplicas: 0 }),
      ['\'end\' ("0 8 * * 1-5") is the same as start: the period would be empty', '\'desiredReplicas\' (0) must be a whole number of at least 1']],
    ['cron given in JavaScript without its options', KedaTrigger.cron({} as any), [
      '\'timezone\' is required for a cron trigger', '\'start\' is required for a cron trigger', '\'end\' is required for a cron trigger',
      '\'desiredReplicas\' is required for a cron trigger',
    ]],
    ['cpu above 100 percent', KedaTrigger.cpu({ utilization: 150 }), ['\'utilization\' (150) must be a whole percentage from 1 to 100']],
    ['cpu with a fraction of a percent', KedaTrigger.cpu({ utilization: 0.5 }), ['\'utilization\' (0.5) must be a whole percentage from 1 to 100']],
    ['cpu given in JavaScript without utilization', KedaTrigger.cpu({} as any), ['\'utilization\' is required for a cpu trigger']],
    ['of() without a type, with a number', KedaTrigger.of('', { value: 20 as any }),
      ['\'type\' ("") must name a scaler of KEDA, such as rabbitmq or kafka', '\'metadata.value\' (20) must be a string, as KEDA takes every setting']],
  ])('reports %s, naming the option', (_case, trigger, problems) => {
    expect(trigger._problems()).toEqual(problems);
  });
});

describe('FunctionScaledObject', () => {
  test('scales the Function through its scale subresource, from 0, with KEDA\'s defaults written out', () => {
    const { construct, object } = scaledObject({ labels: { [FUNCTION_LABEL]: 'orders' } });
    expect(construct).toMatchObject({ name: 'orders', minReplicas: 0, maxReplicas: 5 });
    expect(object).toEqual({
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'orders', namespace: 'team-a', labels: { [FUNCTION_LABEL]: 'orders' } },
      spec: {
        scaleTargetRef: { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', name: 'orders' },
        minReplicaCount: 0,
        maxReplicaCount: 5,
        pollingInterval: 30,
        cooldownPeriod: 300,
        advanced: { restoreToOriginalReplicaCount: true },
        triggers: [{ type: 'prometheus', metadata: { serverAddress: PROMETHEUS.serverAddress, query: PROMETHEUS.query, threshold: '50' } }],
      },
    });
    expect(() => new ScaledObject(object).validate()).not.toThrow();
  });

  test('takes the bounds, the periods and several triggers', () => {
    const { object } = scaledObject({
      minReplicas: 1, maxReplicas: 10, cooldownPeriod: Duration.minutes(10), pollingInterval: Duration.seconds(15),
      triggers: [KedaTrigger.cron(OFFICE_HOURS), KedaTrigger.cpu({ utilization: 70 })],
    });
    expect(object.spec).toMatchObject({ minReplicaCount: 1, maxReplicaCount: 10, cooldownPeriod: 600, pollingInterval: 15 });
    expect(object.spec.triggers.map((t: any) => t.type)).toEqual(['cron', 'cpu']);
  });

  test('starts at 1 Pod when every trigger is a CPU trigger, which cannot wake a Function from zero', () => {
    const { construct, object } = scaledObject({ triggers: [KedaTrigger.cpu({ utilization: 60 })] });
    expect(construct.minReplicas).toBe(1);
    expect(object.spec.minReplicaCount).toBe(1);
  });

  test('names the HPA after the Function when KEDA\'s name for it, keda-hpa-<name>, would be too long for a label value', () => {
    const long = `f${'x'.repeat(59)}`;
    expect(scaledObject({ functionName: long }).object.spec.advanced).toEqual({ restoreToOriginalReplicaCount: true, horizontalPodAutoscalerConfig: { name: long } });
    expect(scaledObject({ functionName: 'f'.repeat(54) }).object.spec.advanced.horizontalPodAutoscalerConfig).toBeUndefined();
  });

  test.each([
    ['minReplicas is negative', { minReplicas: -1 }, /\[test\/Scaler\] 'minReplicas' \(-1\) must be a whole number of at least 0/],
    ['maxReplicas is a fraction', { maxReplicas: 2.5 }, /\[test\/Scaler\] 'maxReplicas' \(2\.5\) must be a whole number of at least 1/],
    ['maxReplicas is 0', { maxReplicas: 0 }, /'maxReplicas' \(0\) must be a whole number of at least 1/],
    ['maxReplicas is below minReplicas', { minReplicas: 3, maxReplicas: 2 }, /\[test\/Scaler\] 'maxReplicas' \(2\) is below minReplicas \(3\): raise it, or lower minReplicas/],
    ['maxReplicas is missing in JavaScript', { maxReplicas: undefined }, /'maxReplicas' is required: the most Pods KEDA runs/],
    ['there is no trigger', { triggers: [] }, /\[test\/Scaler\] 'triggers' is empty: give at least one, such as KedaTrigger\.prometheus/],
    ['a trigger lacks its options', { triggers: [KedaTrigger.cron(OFFICE_HOURS), KedaTrigger.prometheus({ ...PROMETHEUS, threshold: -1 })] },
      /\[test\/Scaler\] 'triggers\[1\]\.threshold' \(-1\) must be a number above 0/],
    ['a CPU trigger alone is asked to scale to zero', { minReplicas: 0, triggers: [KedaTrigger.cpu({ utilization: 60 })] },
      /'minReplicas' \(0\): a cpu trigger cannot scale to zero on its own, .*; give minReplicas of at least 1, or add a trigger of another type/],
    ['the polling interval is a fraction of a second', { pollingInterval: Duration.millis(1500) },
      /\[test\/Scaler\] 'pollingInterval' \(1 second 500 millis\) must be a whole number of seconds, at least 1/],
  ])('fails when %s, naming the option', (_case, props, message) => {
    expect(synthErrors(props as Partial<FunctionScaledObjectProps>)).toMatch(message);
  });

  test('reports every problem together', () => {
    const message = synthErrors({ minReplicas: 4, maxReplicas: 2, triggers: [KedaTrigger.cpu({ utilization: 0 })] });
    expect(message.split('\n').filter(l => l.includes('[test/Scaler]'))).toHaveLength(2);
  });

  test('checks the ScaledObject against KEDA\'s schema at synth when the options pass', () => {
    const scope = chart();
    const { apiObject } = new FunctionScaledObject(scope, 'Scaler', { functionName: 'orders', namespace: 'team-a', maxReplicas: 5, triggers: [KedaTrigger.cron(OFFICE_HOURS)] });
    apiObject.addJsonPatch(JsonPatch.replace('/spec/maxReplicaCount', 'many'));
    expect(() => Testing.synth(scope)).toThrow(/\[test\/Scaler\] ScaledObject orders is invalid: .*maxReplicaCount must be integer/);
  });
});

describe('the KEDA model', () => {
  test('is loaded only for a Function with keda: others do not pay for it at synth', () => {
    let loads = 0;
    jest.isolateModules(() => {
      jest.doMock('@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject', () => {
        loads++;
        return jest.requireActual('@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject');
      });
      // The library and cdk8s of this registry: constructs of one cdk8s only.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const cdk8s = require('cdk8s') as typeof import('cdk8s');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const lib = require('../../src') as typeof import('../../src');
      const scope = new cdk8s.Chart(cdk8s.Testing.app(), 'test', { namespace: 'team-a' });
      new lib.KymaFunction(scope, 'plain', { runtime: lib.FunctionRuntime.NODEJS_22, source: lib.FunctionSource.fromInline('exports.main = () => 1') });
      cdk8s.Testing.synth(scope);
      expect(loads).toBe(0);
      new lib.KymaFunction(scope, 'scaled', {
        runtime: lib.FunctionRuntime.NODEJS_22, source: lib.FunctionSource.fromInline('exports.main = () => 1'),
        keda: { maxReplicas: 2, triggers: [lib.KedaTrigger.cron(OFFICE_HOURS)] },
      });
      cdk8s.Testing.synth(scope);
      expect(loads).toBe(1);
    });
  });
});
