/**
 * `kyma-serverless status`: a Function's report, as `-o json` prints it (pure).
 */
import { statusReport } from '../../../src/cli/status';
import { recorded } from './_fixtures';

describe('statusReport', () => {
  test('reports the Function\'s name, runtime, conditions, objects and replicas', () => {
    const { fn, children } = recorded('09-ready');
    expect(statusReport(fn, children)).toEqual({
      namespace: 'default', name: 'hello', runtime: 'nodejs22', generation: 1, created: '2026-03-20T09:00:00Z',
      stage: 'ready', state: 'ready', reason: 'DeploymentReady', message: 'Deployment hello-x7b2c is ready', since: '2026-03-20T09:01:32Z',
      steps: ['source', 'build', 'deployment', 'service', 'ready'].map(stage => ({ stage, state: 'done' })),
      conditions: fn.status!.conditions,
      objects: { configMap: 'hello-5kq8n', job: 'hello-build-r9m4z', deployment: 'hello-x7b2c', service: 'hello' },
      replicas: { desired: 1, ready: 1 },
      endpoints: [],
      subscriptions: [],
    });
  });

  test('says a Function KEDA scaled to zero is idle, with its ScaledObject and no Pods; KEDA\'s HPA is not the Function\'s own', () => {
    const { fn, children } = recorded('11-keda-idle');
    expect(statusReport(fn, children)).toMatchObject({
      name: 'nightly', stage: 'ready', state: 'idle', reason: 'ScalerNotActive',
      message: 'scaled to zero by KEDA (ScaledObject nightly): no Pods run until a trigger is active',
      objects: { configMap: 'nightly-5kq8n', job: 'nightly-build-r9m4z', deployment: 'nightly-x7b2c', service: 'nightly', scaledObject: 'nightly' },
      replicas: { desired: 0, ready: 0 },
    });
    expect(statusReport(fn, children).objects.horizontalPodAutoscaler).toBeUndefined();
  });
});
