/**
 * `kyma-serverless status`: a Function's endpoints and Subscriptions, judged from their status, and
 * how they change the Function's progress (pure).
 */
import { FUNCTION_LABEL, OBJECT_KINDS_ANNOTATION } from '../../../src/api/labels';
import { API_RULE, HTTP_ROUTE, KEDA, SCALED_OBJECT, SUBSCRIPTION } from '../../../src/cli/_reach-kinds';
import {
  EndpointKind, PipelineStage, ProgressState, ReachResource, ReachState, explanation, functionProgress, functionReach, missingKindLines, missingKindsOf,
  renderSteps, statusReport, withReach,
} from '../../../src/cli/status';
import { recorded, recordedReach } from './_fixtures';

/** The time the ready Function of 09-ready.yaml (and its renamed copies) became ready. */
const READY_SINCE = '2026-03-20T09:01:32Z';

/** A copy of a reach object with another status. */
const withStatus = (o: ReachResource, status: ReachResource['status']): ReachResource => ({ ...o, status });

describe('functionReach', () => {
  test('an APIRule in state Ready and a ready Subscription are ready, with the endpoint\'s URL', () => {
    const { fn, children } = recordedReach('reach-apirule-ready');
    expect(functionReach(fn, children, READY_SINCE)).toEqual({
      endpoints: [{ kind: EndpointKind.API_RULE, name: 'hello', url: 'https://hello.example.com', ready: true, state: ReachState.READY }],
      subscriptions: [{
        name: 'hello-order-created', types: ['order.created.v1'], sink: 'http://hello.default.svc.cluster.local', ready: true, state: ReachState.READY,
      }],
    });
  });

  test('an APIRule in Error fails with its description once the Function is ready', () => {
    const { fn, children } = recordedReach('reach-apirule-error');
    expect(functionReach(fn, children, READY_SINCE).endpoints).toEqual([{
      kind: EndpointKind.API_RULE, name: 'orders', url: 'https://orders.example.com', ready: false, state: ReachState.FAILED,
      message: 'Error: Validation errors: Attribute \'spec.gateway\': Gateway not found',
    }]);
  });

  test('an APIRule in Error or Warning is pending while the Function is not ready, or when processed before it was', () => {
    const { fn, children } = recordedReach('reach-apirule-error');
    expect(functionReach(fn, children, undefined).endpoints[0]).toMatchObject({
      state: ReachState.PENDING,
      message: 'Error: Validation errors: Attribute \'spec.gateway\': Gateway not found (judged once the Function is ready: until then its Service may be missing)',
    });
    const early = withStatus(children.apiRules![0], { state: 'Warning', description: 'Sidecar missing', lastProcessedTime: '2026-03-20T09:01:32Z' });
    expect(functionReach(fn, { ...children, apiRules: [early] }, READY_SINCE).endpoints[0]).toMatchObject({
      state: ReachState.PENDING, message: 'Warning: Sidecar missing (from before the Function was ready: waiting for the controller to try again)',
    });
    const untimed = withStatus(children.apiRules![0], { state: 'Error', description: 'x' });
    expect(functionReach(fn, { ...children, apiRules: [untimed] }, READY_SINCE).endpoints[0].state).toBe(ReachState.FAILED);
  });

  test('an APIRule without a status, or Processing, is pending', () => {
    const { fn, children } = recordedReach('reach-apirule-pending');
    expect(functionReach(fn, children, READY_SINCE).endpoints).toEqual([{
      kind: EndpointKind.API_RULE, name: 'payments', url: 'https://payments.example.com', ready: false, state: ReachState.PENDING,
      message: 'no status yet: the API Gateway controller has not processed it',
    }]);
    const processing = withStatus(children.apiRules![0], { state: 'Processing' });
    expect(functionReach(fn, { ...children, apiRules: [processing] }, READY_SINCE).endpoints[0]).toMatchObject({ state: ReachState.PENDING, message: 'Processing' });
  });

  test('a Subscription that is not ready is pending, with its False condition\'s reason and message, and never failed', () => {
    const { fn, children } = recordedReach('reach-subscription-not-ready');
    expect(functionReach(fn, children, READY_SINCE)).toEqual({
      endpoints: [],
      subscriptions: [{
        name: 'invoices-order-created', types: ['order.created.v1', 'order.cancelled.v1'], sink: 'http://invoices.default.svc.cluster.local',
        ready: false, state: ReachState.PENDING,
        message: 'Subscription spec has validation errors: Sink validation failed: service invoices.default not found in the cluster',
      }],
    });
    const fresh = withStatus(children.subscriptions![0], undefined);
    expect(functionReach(fn, { ...children, subscriptions: [fresh] }, READY_SINCE).subscriptions[0])
      .toMatchObject({ state: ReachState.PENDING, message: 'no status yet: the eventing manager has not processed it' });
  });

  test('an HTTPRoute is ready when every parent Gateway accepted it and resolved its references', () => {
    const { fn, children } = recordedReach('reach-httproute-accepted');
    expect(functionReach(fn, children, READY_SINCE).endpoints).toEqual([
      { kind: EndpointKind.HTTP_ROUTE, name: 'catalog', url: 'https://catalog.example.com', ready: true, state: ReachState.READY },
    ]);
  });

  test('an HTTPRoute a Gateway does not accept fails, even before the Function is ready', () => {
    const { fn, children } = recordedReach('reach-httproute-not-accepted');
    const failed = {
      kind: EndpointKind.HTTP_ROUTE, name: 'search', url: 'https://search.example.com', ready: false, state: ReachState.FAILED,
      message: 'Gateway infra/public does not accept it: NotAllowedByListeners: hostnames matched parent hostname "*.example.com", '
        + 'but namespace "default" is not allowed by the parent',
    };
    expect(functionReach(fn, children, READY_SINCE).endpoints).toEqual([failed]);
    expect(functionReach(fn, children, undefined).endpoints).toEqual([failed]);
  });

  test('an HTTPRoute is pending without a status from a parent, with conditions of an older generation, or while its backend is missing', () => {
    const { fn, children } = recordedReach('reach-httproute-accepted');
    const route = children.httpRoutes![0];
    const reach = (status: ReachResource['status'], metadata = route.metadata) => functionReach(fn, { ...children, httpRoutes: [{ ...route, metadata, status }] }, READY_SINCE).endpoints[0];
    expect(reach(undefined)).toMatchObject({ state: ReachState.PENDING, message: 'no status from Gateway infra/public yet: no Gateway controller has taken the route' });
    expect(reach(route.status, { ...route.metadata, generation: 2 })).toMatchObject({ state: ReachState.PENDING, message: 'Gateway infra/public has not processed generation 2 yet' });
    const parent = route.status!.parents![0];
    const unresolved = { ...parent, conditions: [parent.conditions![0], {
      type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound', message: 'backend(catalog.default.svc.cluster.local) not found', observedGeneration: 1,
      lastTransitionTime: '2026-03-20T09:00:01Z',
    }] };
    expect(reach({ parents: [unresolved] })).toMatchObject({
      state: ReachState.PENDING,
      message: 'Gateway infra/public cannot resolve its references: BackendNotFound: backend(catalog.default.svc.cluster.local) not found '
        + '(from before the Function was ready: waiting for the controller to try again)',
    });
    const later = { ...unresolved, conditions: [parent.conditions![0], { ...unresolved.conditions[1], lastTransitionTime: '2026-03-20T09:05:00Z' }] };
    expect(reach({ parents: [later] }).state).toBe(ReachState.FAILED);
    const waiting = { ...parent, conditions: [{ type: 'Accepted', status: 'Unknown', reason: 'Pending', message: 'Waiting for controller' }] };
    expect(reach({ parents: [waiting] })).toMatchObject({ state: ReachState.PENDING, message: 'Gateway infra/public: Accepted is Unknown (Pending: Waiting for controller)' });
  });

  test('a VirtualService without a status is ready once applied; with one, Istio\'s analysis and Reconciled condition count', () => {
    const { fn, children } = recordedReach('reach-virtualservice');
    const service = children.virtualServices![0];
    expect(functionReach(fn, children, READY_SINCE).endpoints).toEqual([
      { kind: EndpointKind.VIRTUAL_SERVICE, name: 'cart', url: 'https://cart.example.com', ready: true, state: ReachState.READY },
    ]);
    const reach = (status: ReachResource['status'], functionReady = true) =>
      functionReach(fn, { ...children, virtualServices: [withStatus(service, status)] }, functionReady ? READY_SINCE : undefined).endpoints[0];
    const notFound = { level: 'ERROR', type: { code: 'IST0101', name: 'ReferencedResourceNotFound' }, documentationUrl: 'https://istio.io/latest/docs/reference/config/analysis/ist0101/' };
    expect(reach({ observedGeneration: '1', validationMessages: [notFound] })).toMatchObject({
      state: ReachState.FAILED, message: 'Istio\'s analysis: IST0101 ReferencedResourceNotFound (https://istio.io/latest/docs/reference/config/analysis/ist0101/)',
    });
    expect(reach({ validationMessages: [notFound] }, false).state).toBe(ReachState.PENDING);
    expect(reach({ observedGeneration: 0 })).toMatchObject({ state: ReachState.PENDING, message: 'Istio has not processed generation 1 yet (the status is of generation 0)' });
    expect(reach({ conditions: [{ type: 'Reconciled', status: 'False', message: '1/2 proxies up to date.' }] }))
      .toMatchObject({ state: ReachState.PENDING, message: 'Reconciled is False (1/2 proxies up to date.)' });
    expect(reach({ conditions: [{ type: 'Reconciled', status: 'True' }], validationMessages: [{ ...notFound, level: 'WARNING' }] }))
      .toMatchObject({ state: ReachState.READY, message: expect.stringMatching(/^Istio's analysis: IST0101/) });
  });

  test('picks the Function\'s own objects by the label cdk8s-kyma-serverless/function and the namespace, and leaves out kinds not listed', () => {
    const { fn, children } = recordedReach('reach-apirule-ready');
    const rule = children.apiRules![0];
    const other = { ...rule, metadata: { ...rule.metadata, name: 'other', labels: { [FUNCTION_LABEL]: 'other' } } };
    const elsewhere = { ...rule, metadata: { ...rule.metadata, name: 'elsewhere', namespace: 'shop' } };
    expect(functionReach(fn, { ...children, apiRules: [other, elsewhere, rule] }, READY_SINCE).endpoints.map(e => e.name)).toEqual(['hello']);
    expect(functionReach(fn, { services: children.services }, READY_SINCE)).toEqual({ endpoints: [], subscriptions: [] });
  });
});

describe('withReach', () => {
  const report = (name: Parameters<typeof recordedReach>[0]) => statusReport(recordedReach(name).fn, recordedReach(name).children);

  test('a ready Function with ready endpoints and Subscriptions is ready, with a last step reach', () => {
    const ready = report('reach-apirule-ready');
    expect(ready).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.READY, reason: 'DeploymentReady' });
    expect(renderSteps(ready.steps)).toBe('source ✓ build ✓ deploy ✓ service ✓ ready ✓ reach ✓');
  });

  test('a ready Function waits at stage reach for an endpoint or a Subscription that is not ready', () => {
    const waiting = report('reach-subscription-not-ready');
    expect(waiting).toMatchObject({ stage: PipelineStage.REACH, state: ProgressState.PROGRESSING });
    expect(explanation(waiting)).toBe('Subscription invoices-order-created: Subscription spec has validation errors: '
      + 'Sink validation failed: service invoices.default not found in the cluster');
    expect(renderSteps(waiting.steps)).toBe('source ✓ build ✓ deploy ✓ service ✓ ready ✓ reach …');
    expect(explanation(report('reach-apirule-pending'))).toBe('APIRule payments: no status yet: the API Gateway controller has not processed it');
  });

  test('a failed endpoint fails the Function at stage reach', () => {
    const failed = report('reach-apirule-error');
    expect(failed).toMatchObject({ stage: PipelineStage.REACH, state: ProgressState.FAILED });
    expect(failed.reason).toBeUndefined();
    expect(explanation(failed)).toBe('APIRule orders: Error: Validation errors: Attribute \'spec.gateway\': Gateway not found');
    expect(renderSteps(failed.steps)).toBe('source ✓ build ✓ deploy ✓ service ✓ ready ✓ reach ✗');
  });

  test('a Function on its way keeps its stage, with reach pending; a failed Function keeps its failure', () => {
    const building = recorded('03-build-job-running');
    const { children } = recordedReach('reach-apirule-error');
    const rule = { ...children.apiRules![0], metadata: { ...children.apiRules![0].metadata, labels: { [FUNCTION_LABEL]: 'building' } } };
    const progress = statusReport(building.fn, { ...building.children, apiRules: [rule] });
    expect(progress).toMatchObject({ stage: PipelineStage.BUILD, state: ProgressState.PROGRESSING, reason: 'JobRunning' });
    expect(renderSteps(progress.steps)).toBe('source ✓ build … deploy · service · ready · reach ·');
    expect(progress.endpoints[0].state).toBe(ReachState.PENDING);

    const broken = recorded('04-build-failed');
    const route = recordedReach('reach-httproute-not-accepted').children.httpRoutes![0];
    const failed = statusReport(broken.fn, { ...broken.children, httpRoutes: [{ ...route, metadata: { ...route.metadata, labels: { [FUNCTION_LABEL]: 'broken' } } }] });
    expect(failed).toMatchObject({ stage: PipelineStage.BUILD, state: ProgressState.FAILED, reason: 'JobFailed' });
    expect(renderSteps(failed.steps)).toBe('source ✓ build ✗ deploy · service · ready · reach ✗');
  });

  test('a Function without endpoints or Subscriptions keeps its progress as it is', () => {
    const { fn, children } = recorded('09-ready');
    const progress = functionProgress(fn, children);
    expect(withReach(progress, { endpoints: [], subscriptions: [] })).toBe(progress);
    expect(statusReport(fn, children).steps.map(s => s.stage)).not.toContain(PipelineStage.REACH);
  });

  test('an idle Function (scaled to zero by KEDA) is deployed: ready endpoints keep it idle, one not ready is waited for', () => {
    const idle = recorded('11-keda-idle');
    const rule = { ...recordedReach('reach-apirule-ready').children.apiRules![0] };
    rule.metadata = { ...rule.metadata, name: 'nightly', labels: { [FUNCTION_LABEL]: 'nightly' } };
    const withRule = (status: ReachResource['status']) => statusReport(idle.fn, { ...idle.children, apiRules: [withStatus(rule, status)] });
    const ready = withRule(rule.status);
    expect(ready).toMatchObject({ stage: PipelineStage.READY, state: ProgressState.IDLE });
    expect(renderSteps(ready.steps)).toBe('source ✓ build ✓ deploy ✓ service ✓ ready ✓ reach ✓');
    expect(withRule(undefined)).toMatchObject({ stage: PipelineStage.REACH, state: ProgressState.PROGRESSING });
  });
});


describe('the kinds a Function needs that the cluster does not serve', () => {
  const needing = (kinds: string | undefined) => {
    const { fn, children } = recorded('03-build-job-running');
    const annotations: { [key: string]: string } = kinds === undefined ? {} : { [OBJECT_KINDS_ANNOTATION]: kinds };
    return { fn: { ...fn, metadata: { ...fn.metadata, annotations } }, children };
  };
  const API_RULE_MISSING = {
    kind: 'APIRule', crd: 'apirules.gateway.kyma-project.io', provider: 'Kyma\'s api-gateway module',
    fix: 'add Kyma\'s api-gateway module (kyma alpha add module api-gateway)',
  };

  test('are those of the unserved kinds that its annotation names, with who installs each and how, from the table of kinds', () => {
    const { fn } = needing('APIRule.gateway.kyma-project.io,AuthorizationPolicy.security.istio.io,Subscription.eventing.kyma-project.io');
    expect(missingKindsOf(fn, [API_RULE, HTTP_ROUTE, SCALED_OBJECT])).toEqual([API_RULE_MISSING]);
    expect(missingKindsOf(fn, [])).toEqual([]);
    expect(missingKindsOf(needing(undefined).fn, [API_RULE, SUBSCRIPTION])).toEqual([]);
    expect(missingKindsOf(needing('ScaledObject.keda.sh').fn, [API_RULE, SCALED_OBJECT])).toEqual([{
      kind: 'ScaledObject', crd: 'scaledobjects.keda.sh', provider: 'KEDA', fix: KEDA.fix,
    }]);
  });

  test('fail the Function at reach, whatever its pipeline\'s progress, unless the pipeline failed first', () => {
    const { fn, children } = needing('APIRule.gateway.kyma-project.io');
    const report = statusReport(fn, children, undefined, [API_RULE]);
    expect(report).toMatchObject({
      stage: PipelineStage.REACH, state: ProgressState.FAILED, missingKinds: [API_RULE_MISSING],
      message: 'its APIRule cannot exist: the cluster does not serve apirules.gateway.kyma-project.io; add Kyma\'s api-gateway module (kyma alpha add module api-gateway)',
    });
    expect(renderSteps(report.steps)).toBe('source ✓ build … deploy · service · ready · reach ✗');
    expect(statusReport(fn, children, undefined, [HTTP_ROUTE])).toMatchObject({ stage: PipelineStage.BUILD, state: ProgressState.PROGRESSING });
    expect(statusReport(fn, children, undefined, [HTTP_ROUTE]).missingKinds).toBeUndefined();

    const failed = recorded('04-build-failed');
    const failedFn = { ...failed.fn, metadata: { ...failed.fn.metadata, annotations: { [OBJECT_KINDS_ANNOTATION]: 'APIRule.gateway.kyma-project.io' } } };
    expect(statusReport(failedFn, failed.children, undefined, [API_RULE])).toMatchObject({ stage: PipelineStage.BUILD, state: ProgressState.FAILED });
  });

  test('are said once per kind after the table, naming every Function that needs it', () => {
    const lines = missingKindLines([
      { namespace: 'a', name: 'one', missingKinds: [API_RULE_MISSING] },
      { namespace: 'a', name: 'two' },
      { namespace: 'b', name: 'three', missingKinds: [API_RULE_MISSING] },
    ]);
    expect(lines).toEqual([
      'The cluster does not serve apirules.gateway.kyma-project.io, so the APIRules of 2 Functions cannot exist (a/one, b/three): '
        + 'add Kyma\'s api-gateway module (kyma alpha add module api-gateway)',
    ]);
    expect(missingKindLines([{ namespace: 'a', name: 'two' }])).toEqual([]);
  });
});
