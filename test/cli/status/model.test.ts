/**
 * `kyma-serverless status`: the derivation of each Function's progress from its conditions and objects (pure).
 */
import { FUNCTION_LABEL } from '../../../src/api/labels';
import { ServerlessRelease } from '../../../src/api/release';
import {
  DEPLOYMENT_UPDATE_LOOP, FunctionProgress, PipelineStage, ProgressState, StepState, explanation, functionProgress, functionRelease, renderSteps, scaledObjectOf,
} from '../../../src/cli/status';
import { BUILDLESS_FIXTURES, FixtureName, condition, recorded } from './_fixtures';

describe('functionProgress', () => {
  const cases: [FixtureName, PipelineStage, ProgressState, string, string | undefined][] = [
    ['01-waiting-for-controller', PipelineStage.SOURCE, ProgressState.PROGRESSING, 'source … build · deploy · service · ready ·', 'waiting for the controller'],
    ['02-source-configmap-created', PipelineStage.BUILD, ProgressState.PROGRESSING, 'source ✓ build … deploy · service · ready ·', 'ConfigMapCreated: ConfigMap sourced-7xk2p created'],
    ['03-build-job-running', PipelineStage.BUILD, ProgressState.PROGRESSING, 'source ✓ build … deploy · service · ready ·', 'JobRunning: Job building-build-8fz4m is still in progress'],
    ['04-build-failed', PipelineStage.BUILD, ProgressState.FAILED, 'source ✓ build ✗ deploy · service · ready ·', 'JobFailed: Job broken-build-l6v5t failed, it will be re-run'],
    ['05-build-job-finished', PipelineStage.DEPLOYMENT, ProgressState.PROGRESSING, 'source ✓ build ✓ deploy … service · ready ·', 'JobFinished: Job built-build-p2k9s finished'],
    ['06-deployment-created', PipelineStage.SERVICE, ProgressState.PROGRESSING, 'source ✓ build ✓ deploy ✓ service … ready ·', 'DeploymentCreated: Deployment deploying-9qkzv created'],
    ['07-service-created', PipelineStage.HPA, ProgressState.PROGRESSING, 'source ✓ build ✓ deploy ✓ service ✓ hpa … ready ·', 'ServiceCreated: Service exposing created'],
    ['08-hpa-created', PipelineStage.READY, ProgressState.PROGRESSING, 'source ✓ build ✓ deploy ✓ service ✓ hpa ✓ ready …', 'HorizontalPodAutoscalerCreated: HorizontalPodAutoscaler scaling-j8t3k created'],
    ['09-ready', PipelineStage.READY, ProgressState.READY, 'source ✓ build ✓ deploy ✓ service ✓ ready ✓', 'DeploymentReady: Deployment hello-x7b2c is ready'],
    ['10-git-ready', PipelineStage.READY, ProgressState.READY, 'source ✓ build ✓ deploy ✓ service ✓ ready ✓', 'DeploymentReady: Deployment orders-api-v6p9s is ready'],
  ];

  test.each(cases)('%s: stage %s, %s', (name, stage, state, steps, why) => {
    const { fn, children } = recorded(name);
    const progress = functionProgress(fn, children);
    expect(progress).toMatchObject({ stage, state });
    expect(renderSteps(progress.steps)).toBe(steps);
    expect(explanation(progress)).toBe(why ?? '');
  });

  test.each(cases)('%s: the same from the conditions alone, when the objects cannot be listed', (name, stage, state) => {
    expect(functionProgress(recorded(name).fn)).toMatchObject({ stage, state });
  });

  test('shows progress between condition updates: a build Job that succeeded before BuildReady says so', () => {
    const { fn, children } = recorded('03-build-job-running');
    const job = recorded('05-build-job-finished').children.jobs![0];
    const succeeded = { ...children.jobs![0], status: job.status };
    const progress = functionProgress(fn, { ...children, jobs: [succeeded] });
    expect(progress).toMatchObject({ stage: PipelineStage.DEPLOYMENT, state: ProgressState.PROGRESSING, reason: 'JobRunning' });
  });

  test('fails at build when the newest build Job failed before BuildReady says so', () => {
    const { fn, children } = recorded('03-build-job-running');
    const failed = { ...children.jobs![0], status: recorded('04-build-failed').children.jobs![0].status };
    expect(functionProgress(fn, { ...children, jobs: [failed] })).toMatchObject({
      stage: PipelineStage.BUILD, state: ProgressState.FAILED, reason: 'BackoffLimitExceeded',
      message: 'Job building-build-8fz4m failed: Job has reached the specified backoff limit',
    });
  });

  test('treats a running newest Job as a rebuild, whatever an older BuildReady says', () => {
    const { fn, children } = recorded('09-ready');
    const rebuild = { ...recorded('03-build-job-running').children.jobs![0] };
    rebuild.metadata = { ...rebuild.metadata, name: 'hello-build-zz9zz', creationTimestamp: '2026-03-20T10:00:00Z', labels: children.jobs![0].metadata!.labels };
    const progress = functionProgress(fn, { ...children, jobs: [...children.jobs!, rebuild] });
    expect(progress.state).toBe(ProgressState.PROGRESSING);
    expect(renderSteps(progress.steps)).toBe('source ✓ build … deploy ✓ service ✓ ready ·');
  });

  test('ignores objects of another Function of the same name (another uid) and of other Functions', () => {
    const { fn, children } = recorded('05-build-job-finished');
    const leftover = recorded('06-deployment-created').children.deployments![0];
    const other = { ...leftover, metadata: { ...leftover.metadata, labels: { ...leftover.metadata!.labels, 'serverless.kyma-project.io/function-name': 'built' } } };
    const progress = functionProgress(fn, { ...children, deployments: [leftover, other], services: [] });
    expect(progress.stage).toBe(PipelineStage.DEPLOYMENT);
  });

  test('fails at deployment with the controller\'s message on one line', () => {
    const { fn } = recorded('06-deployment-created');
    const message = 'Deployment deploying-9qkzv failed with condition: \n- type: Progressing\n  status: "False"\n  reason: ProgressDeadlineExceeded\n';
    const failed = { ...fn, status: { conditions: [condition('Running', 'False', 'DeploymentFailed', message), ...fn.status!.conditions!.slice(1)] } };
    const progress = functionProgress(failed);
    expect(progress).toMatchObject({ stage: PipelineStage.DEPLOYMENT, state: ProgressState.FAILED, reason: 'DeploymentFailed', message });
    expect(explanation(progress)).toBe('DeploymentFailed: Deployment deploying-9qkzv failed with condition: - type: Progressing status: "False" reason: ProgressDeadlineExceeded');
  });

  test('fails at source with the controller\'s validation errors', () => {
    const { fn } = recorded('01-waiting-for-controller');
    const invalid = { ...fn, status: { conditions: [condition('ConfigurationReady', 'False', 'InvalidFunctionSpec', 'invalid runtime value: cannot find runtime: nodejs18')] } };
    expect(functionProgress(invalid)).toMatchObject({ stage: PipelineStage.SOURCE, state: ProgressState.FAILED, steps: expect.arrayContaining([{ stage: PipelineStage.SOURCE, state: StepState.FAILED }]) });
  });

  test('waits for the controller when the status is of an older generation', () => {
    const { fn, children } = recorded('09-ready');
    const changed = { ...fn, metadata: { ...fn.metadata, generation: 3 }, status: { ...fn.status, observedGeneration: 2 } };
    expect(functionProgress(changed, children)).toMatchObject({
      stage: PipelineStage.SOURCE, state: ProgressState.PROGRESSING, message: 'waiting for the controller to process generation 3 (the status is of generation 2)',
    });
  });

  test('is not ready while the inline sources in the ConfigMap are not those of the spec (right after an apply)', () => {
    const { fn, children } = recorded('09-ready');
    const changed = { ...fn, spec: { ...fn.spec, source: { inline: { source: 'exports.main = () => "Hi";\n' } } } };
    expect(functionProgress(changed, children)).toMatchObject({
      stage: PipelineStage.SOURCE, state: ProgressState.PROGRESSING, message: 'waiting for the controller to update ConfigMap hello-5kq8n with the changed sources',
    });
  });

  test('is not ready while the status is of another runtime or Git reference', () => {
    const { fn, children } = recorded('10-git-ready');
    const moved = { ...fn, spec: { ...fn.spec, source: { gitRepository: { ...fn.spec!.source!.gitRepository, reference: 'v2' } } } };
    expect(functionProgress(moved, children)).toMatchObject({ state: ProgressState.PROGRESSING, message: expect.stringMatching(/^waiting for the controller to fetch v2 \/api \(the status is of main \/api; the 1.11.1 controller checks the repository again only functionReadyRequeue \(5 minutes by default\) after its last check, unless the Function has the annotation serverless\.kyma-project\.io\/continuousGitCheckout: "true"\)$/) });
    const switched = { ...fn, spec: { ...fn.spec, runtime: 'nodejs22' } };
    expect(functionProgress(switched, children)).toMatchObject({ state: ProgressState.PROGRESSING, message: 'waiting for the controller to switch the runtime to nodejs22 (the status is of python312)' });
  });

  test('is ready when all three conditions are True, as upstream reads them, whatever objects were listed', () => {
    const { fn } = recorded('09-ready');
    expect(functionProgress(fn, { deployments: [], services: [] })).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.READY });
  });
});

describe('functionProgress of a Function KEDA scales', () => {
  const IDLE = 'ScalerNotActive: scaled to zero by KEDA (ScaledObject nightly): no Pods run until a trigger is active';
  const withConditions = (fn: any, running: object) => ({ ...fn, status: { ...fn.status, conditions: [running, ...fn.status.conditions.slice(1)] } });

  test('is idle when KEDA scaled it to zero: done, not failed, not ready with no Pods', () => {
    const { fn, children } = recorded('11-keda-idle');
    const progress = functionProgress(fn, children);
    expect(progress).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.IDLE, since: '2026-03-20T09:01:58Z' });
    expect(renderSteps(progress.steps)).toBe('source ✓ build ✓ deploy ✓ service ✓ ready ✓');
    expect(explanation(progress)).toBe(IDLE);
    expect(scaledObjectOf(fn, children)?.metadata?.name).toBe('nightly');
  });

  test('is idle whatever the controller last said of the Deployment of no Pods: never progressing forever', () => {
    const { fn, children } = recorded('11-keda-idle');
    for (const running of [
      condition('Running', 'Unknown', 'MinReplicasNotAvailable', 'Minimum replcas not available for deployment nightly-x7b2c'),
      condition('Running', 'Unknown', 'DeploymentWaiting', 'Deployment nightly-x7b2c is not ready yet'),
      condition('Running', 'Unknown', 'DeploymentUpdated', 'Deployment nightly-x7b2c updated'),
    ]) {
      expect(functionProgress(withConditions(fn, running), children)).toMatchObject({ state: ProgressState.IDLE });
    }
  });

  test('takes the Deployment\'s replicas when the Function has none', () => {
    const { fn, children } = recorded('11-keda-idle');
    const { replicas: _, ...spec } = fn.spec!;
    expect(functionProgress({ ...fn, spec }, children).state).toBe(ProgressState.IDLE);
    const deployment = { ...children.deployments![0], spec: { replicas: 1 } };
    expect(functionProgress({ ...fn, spec }, { ...children, deployments: [deployment] }).state).toBe(ProgressState.READY);
  });

  test('is progressing at ready once a trigger is active: KEDA is starting its Pods', () => {
    const { fn, children } = recorded('11-keda-idle');
    const so = children.scaledObjects![0];
    const active = {
      ...so,
      status: { ...so.status, conditions: [{ type: 'Active', status: 'True', reason: 'ScalerActive', message: 'Scaling is performed because triggers are active' }] },
    };
    const progress = functionProgress(fn, { ...children, scaledObjects: [active] });
    expect(progress).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.PROGRESSING, reason: 'ScalerActive' });
    expect(renderSteps(progress.steps)).toBe('source ✓ build ✓ deploy ✓ service ✓ ready …');
    expect(explanation(progress)).toBe('ScalerActive: a trigger of ScaledObject nightly is active: KEDA is starting the Function\'s Pods');
  });

  test('is not idle while it rebuilds or after a failure, nor without a ScaledObject of its own', () => {
    const { fn, children } = recorded('11-keda-idle');
    const rebuild = { ...recorded('03-build-job-running').children.jobs![0] };
    rebuild.metadata = { ...rebuild.metadata, creationTimestamp: '2026-03-20T10:00:00Z', labels: children.jobs![0].metadata!.labels };
    expect(functionProgress(fn, { ...children, jobs: [...children.jobs!, rebuild] })).toMatchObject({ stage: PipelineStage.BUILD, state: ProgressState.PROGRESSING });
    const failed = withConditions(fn, condition('Running', 'False', 'DeploymentFailed', 'Deployment nightly-x7b2c failed'));
    expect(functionProgress(failed, children)).toMatchObject({ stage: PipelineStage.DEPLOYMENT, state: ProgressState.FAILED });
    // Not known (no KEDA in the cluster), another Function's, or one that scales something else: as any Function of 0 replicas.
    expect(functionProgress(fn, { ...children, scaledObjects: undefined }).state).toBe(ProgressState.READY);
    const so = children.scaledObjects![0];
    const others = { ...so, metadata: { ...so.metadata, labels: { 'cdk8s-kyma-serverless/function': 'other' } } };
    expect(functionProgress(fn, { ...children, scaledObjects: [others] }).state).toBe(ProgressState.READY);
    const deployment = { ...so, spec: { ...so.spec, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'nightly' } } };
    expect(functionProgress(fn, { ...children, scaledObjects: [deployment] }).state).toBe(ProgressState.READY);
  });
});

describe('functionProgress of a Function the controller keeps updating', () => {
  const FIX = /Fix: give spec\.env\[1\]\.valueFrom\.fieldRef\.apiVersion: v1 and apply the Function again/;

  test('fails at the Deployment, with the cause and the fix, instead of deploying for ever (recorded from the 1.11.1 controller)', () => {
    const { fn, children } = recorded('12-deployment-update-loop');
    const progress = functionProgress(fn, children);
    expect(progress).toMatchObject({ stage: PipelineStage.DEPLOYMENT, state: ProgressState.FAILED, reason: DEPLOYMENT_UPDATE_LOOP });
    expect(renderSteps(progress.steps)).toBe('source ✓ build ✓ deploy ✗ service · ready ·');
    expect(progress.message).toMatch(/^the controller updates Deployment looping-\w+ on every reconcile and never creates the Service, as it compares env as text: env "POD_NAME" selects a Pod field without apiVersion/);
    expect(progress.message).toMatch(FIX);
    // The Deployment's generation does not climb: the API server stores nothing new.
    expect(children.deployments![0].metadata!.generation).toBe(1);
  });

  test('says the same from the conditions alone, naming the Deployment of the condition', () => {
    const { fn } = recorded('12-deployment-update-loop');
    expect(functionProgress(fn)).toMatchObject({ state: ProgressState.FAILED, reason: DEPLOYMENT_UPDATE_LOOP, message: expect.stringMatching(FIX) });
  });

  test('is an ordinary update once the fieldRef has its apiVersion', () => {
    const { fn, children } = recorded('12-deployment-update-loop');
    const fixed = JSON.parse(JSON.stringify(fn));
    fixed.spec.env[1].valueFrom.fieldRef.apiVersion = 'v1';
    expect(functionProgress(fixed, children)).toMatchObject({ stage: PipelineStage.SERVICE, state: ProgressState.PROGRESSING, reason: 'DeploymentUpdated' });
  });

  test('is no loop before the controller updates the Deployment', () => {
    const { fn, children } = recorded('12-deployment-update-loop');
    const created = { ...fn, status: { ...fn.status, conditions: [condition('Running', 'Unknown', 'DeploymentCreated', 'Deployment looping-x created'), ...fn.status!.conditions!.slice(1)] } };
    const progress = functionProgress(created, children);
    expect(progress.state).toBe(ProgressState.PROGRESSING);
    expect(progress.reason).not.toBe(DEPLOYMENT_UPDATE_LOOP);
    expect(renderSteps(progress.steps)).toBe('source ✓ build ✓ deploy ✓ service … ready ·');
  });
});

describe('functionProgress under Serverless 1.13.0 (buildless)', () => {
  const progress113 = (name: typeof BUILDLESS_FIXTURES[number]) => {
    const { fn, children } = recorded(name);
    return functionProgress(fn, children, ServerlessRelease.V1_13_0);
  };
  const steps = (p: FunctionProgress) => p.steps.map(s => `${s.stage} ${s.state}`);

  test('has no source or build step: configured, Deployment, Service, ready', () => {
    const ready = progress113('113-02-ready');
    expect(ready).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.READY, reason: 'DeploymentReady' });
    expect(steps(ready)).toEqual(['configured done', 'deployment done', 'service done', 'ready done']);
  });

  test('says that a Pod not ready yet installs the Function\'s dependencies at its start', () => {
    const installing = progress113('113-01-installing');
    expect(installing).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.PROGRESSING, reason: 'DeploymentWaiting' });
    expect(installing.message).toBe('Deployment installing-5m2xq is not ready yet: its Pods install the Function\'s dependencies (npm install) at every start, '
      + 'and are not ready until that is done (kubectl logs -n default deployment/installing-5m2xq shows it)');
    expect(steps(installing)).toEqual(['configured done', 'deployment done', 'service done', 'ready in-progress']);
    // Without dependencies there is nothing to install: the controller's message alone.
    const { fn, children } = recorded('113-01-installing');
    const bare = { ...fn, spec: { ...fn.spec, source: { inline: { source: 'exports.main = () => 1;', dependencies: '{"dependencies":{}}' } } } };
    expect(functionProgress(bare, children, ServerlessRelease.V1_13_0).message).toBe('Deployment installing-5m2xq is not ready yet');
    const python = {
      ...fn, spec: { ...fn.spec, runtime: 'python312', source: { inline: { source: 'def main(e, c): return 1', dependencies: 'requests==2.32.3\n' } } },
      status: { ...fn.status, runtime: 'python312' },
    };
    expect(functionProgress(python, children, ServerlessRelease.V1_13_0).message).toMatch(/\(pip install\)/);
  });

  test('fails at configured when the controller refuses the spec', () => {
    expect(progress113('113-04-invalid')).toMatchObject({
      stage: PipelineStage.CONFIGURED, state: ProgressState.FAILED, reason: 'InvalidFunctionSpec', message: expect.stringMatching(/duplicated mountPath/),
    });
  });

  test('a Git Function whose reference changed waits for the controller to resolve it, naming the commit it runs', () => {
    const { fn, children } = recorded('113-03-git-ready');
    expect(functionProgress(fn, children, ServerlessRelease.V1_13_0).state).toBe(ProgressState.READY);
    const moved = { ...fn, spec: { ...fn.spec, source: { gitRepository: { ...fn.spec!.source!.gitRepository, reference: 'v2.0.0' } } } };
    expect(functionProgress(moved, children, ServerlessRelease.V1_13_0)).toMatchObject({
      state: ProgressState.PROGRESSING,
      message: 'waiting for the controller to resolve v2.0.0 /examples/nodejs to a commit and roll the Deployment out (the status is of main /examples/nodejs, '
        + 'commit 9ff7d2da8c1e; the 1.13.0 controller checks the repository again every 5 minutes)',
    });
  });

  test('an autoscaled Function has an hpa step, which does not hold it back from ready (the controller makes none)', () => {
    const { fn, children } = recorded('113-01-installing');
    const scaled = { ...fn, spec: { ...fn.spec, scaleConfig: { minReplicas: 1, maxReplicas: 3 } } };
    expect(steps(functionProgress(scaled, children, ServerlessRelease.V1_13_0))).toEqual(['configured done', 'deployment done', 'service done', 'hpa pending', 'ready in-progress']);
    const hpa = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'installing', namespace: 'default', labels: { [FUNCTION_LABEL]: 'installing' } } };
    expect(steps(functionProgress(scaled, { ...children, horizontalPodAutoscalers: [hpa] }, ServerlessRelease.V1_13_0))).toContain('hpa done');
    const { fn: ready, children: readyChildren } = recorded('113-02-ready');
    expect(functionProgress({ ...ready, spec: { ...ready.spec, scaleConfig: { minReplicas: 1, maxReplicas: 3 } } }, readyChildren, ServerlessRelease.V1_13_0).state)
      .toBe(ProgressState.READY);
  });

  test('functionRelease: the cluster\'s, else told by the status', () => {
    expect(functionRelease(recorded('09-ready').fn)).toBe(ServerlessRelease.V1_11_1);
    expect(functionRelease(recorded('113-02-ready').fn)).toBe(ServerlessRelease.V1_13_0);
    expect(functionRelease(recorded('01-waiting-for-controller').fn)).toBe(ServerlessRelease.V1_11_1);
    expect(functionRelease(recorded('01-waiting-for-controller').fn, ServerlessRelease.V1_13_0)).toBe(ServerlessRelease.V1_13_0);
  });
});
