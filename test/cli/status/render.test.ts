/**
 * `kyma-serverless status`: the table, the frames of the live display and the ages (pure).
 */
import { URL_ANNOTATION } from '../../../src/api/labels';
import { humanDuration, renderFrame, renderTable, statusReport } from '../../../src/cli/status';
import { NOW, REACH_FIXTURES, recorded, recordedReach } from './_fixtures';

describe('rendering', () => {
  const reports = (['03-build-job-running', '04-build-failed', '08-hpa-created', '09-ready'] as const).map(n => statusReport(recorded(n).fn, recorded(n).children));

  test('a frame of the live display: a row per Function with its steps, and a summary', () => {
    const frame = renderFrame(reports, { now: Date.parse('2026-03-20T09:04:10Z'), startedAt: Date.parse('2026-03-20T09:03:55Z') });
    expect(frame).toBe([
      'NAME      PROGRESS                                           STATE        AGE    REASON',
      'building  source ✓ build … deploy · service · ready ·        progressing  4m10s  JobRunning: Job building-build-8fz4m is still in progress',
      'broken    source ✓ build ✗ deploy · service · ready ·        failed       4m10s  JobFailed: Job broken-build-l6v5t failed, it will be re-run',
      'scaling   source ✓ build ✓ deploy ✓ service ✓ hpa ✓ ready …  progressing  4m10s  HorizontalPodAutoscalerCreated: HorizontalPodAutoscaler scaling-j8t3k created',
      'hello     source ✓ build ✓ deploy ✓ service ✓ ready ✓        ready        4m10s  DeploymentReady: Deployment hello-x7b2c is ready',
      '',
      '4 Functions: 1 ready, 2 progressing, 1 failed (watching 15s)',
    ].join('\n'));
  });

  test('counts the idle Functions (scaled to zero by KEDA) in the summary, when there are some', () => {
    const idle = statusReport(recorded('11-keda-idle').fn, recorded('11-keda-idle').children);
    const frame = renderFrame([reports[3], idle], { now: NOW }).split('\n');
    expect(frame[2]).toBe('nightly  source ✓ build ✓ deploy ✓ service ✓ ready ✓  idle   5m   '
      + 'ScalerNotActive: scaled to zero by KEDA (ScaledObject nightly): no Pods run until a trigger is active');
    expect(frame.at(-1)).toBe('2 Functions: 1 ready, 1 idle, 0 progressing, 0 failed');
    expect(renderTable([idle], { now: NOW })).toBe([
      'NAME     RUNTIME   STAGE  STATE  AGE  REASON',
      'nightly  nodejs22  ready  idle   5m   ScalerNotActive: scaled to zero by KEDA (ScaledObject nightly): no Pods run until a trigger is active',
    ].join('\n'));
  });

  test('cuts lines to the terminal\'s width, so that redrawing stays in place', () => {
    const frame = renderFrame(reports, { now: NOW, columns: 60, allNamespaces: true });
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(59);
    expect(frame.split('\n')[1]).toMatch(/^default {4}building {2}source ✓ .*…$/);
  });

  test('counts the Functions that do not fit the terminal\'s height in one line', () => {
    const frame = renderFrame(reports, { now: NOW, rows: 7 });
    expect(frame.split('\n')).toEqual([
      expect.stringMatching(/^NAME {6}PROGRESS/),
      expect.stringMatching(/^building {2}source ✓ build …/),
      expect.stringMatching(/^broken {4}source ✓ build ✗/),
      '… 2 more',
      '',
      '4 Functions: 1 ready, 2 progressing, 1 failed',
    ]);
  });

  test('adds REACH and URL to the table when a Function has endpoints or Subscriptions', () => {
    const reached = REACH_FIXTURES.map(n => statusReport(recordedReach(n).fn, recordedReach(n).children));
    const route = recordedReach('reach-httproute-accepted');
    const twoUrls = statusReport(route.fn, { ...route.children, httpRoutes: [...route.children.httpRoutes!, {
      ...route.children.httpRoutes![0], metadata: { ...route.children.httpRoutes![0].metadata, name: 'catalog-www', annotations: { [URL_ANNOTATION]: 'https://www.example.com/catalog' } },
    }] });
    expect(renderTable([...reached, twoUrls, reports[0]], { now: NOW })).toBe([
      'NAME      RUNTIME   STAGE  STATE        REACH  AGE  URL                               REASON',
      'hello     nodejs22  ready  ready        2/2    5m   https://hello.example.com         DeploymentReady: Deployment hello-x7b2c is ready',
      'orders    nodejs22  reach  failed       0/1    5m   https://orders.example.com        APIRule orders: Error: Validation errors: Attribute \'spec.gateway\': Gateway not found',
      'payments  nodejs22  reach  progressing  0/1    5m   https://payments.example.com      APIRule payments: no status yet: the API Gateway controller has not processed it',
      'invoices  nodejs22  reach  progressing  0/1    5m                                     Subscription invoices-order-created: Subscription spec has validation errors: '
        + 'Sink validation failed: service invoices.default not found in the cluster',
      'catalog   nodejs22  ready  ready        1/1    5m   https://catalog.example.com       DeploymentReady: Deployment catalog-x7b2c is ready',
      'search    nodejs22  reach  failed       0/1    5m   https://search.example.com        HTTPRoute search: Gateway infra/public does not accept it: NotAllowedByListeners: '
        + 'hostnames matched parent hostname "*.example.com", but namespace "default" is not allowed by the parent',
      'cart      nodejs22  ready  ready        1/1    5m   https://cart.example.com          DeploymentReady: Deployment cart-x7b2c is ready',
      'catalog   nodejs22  ready  ready        2/2    5m   https://catalog.example.com (+1)  DeploymentReady: Deployment catalog-x7b2c is ready',
      'building  nodejs22  build  progressing         5m                                     JobRunning: Job building-build-8fz4m is still in progress',
    ].join('\n'));
    expect(renderTable([reports[0]], { now: NOW })).toMatch(/^NAME {6}RUNTIME {3}STAGE  STATE {8}AGE  REASON\n/);
  });

  test('ages the way kubectl shows them', () => {
    expect([45, 200, 1500, 7500, 30_000, 200_000, 900_000].map(s => humanDuration(s * 1000))).toEqual(['45s', '3m20s', '25m', '125m', '8h', '2d7h', '10d']);
  });
});
