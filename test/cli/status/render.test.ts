/**
 * `kyma-serverless status`: the table, the frames of the live display and the ages (pure).
 */
import { humanDuration, renderFrame, statusReport } from '../../../src/cli/status';
import { NOW, recorded } from './_fixtures';

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

  test('ages the way kubectl shows them', () => {
    expect([45, 200, 1500, 7500, 30_000, 200_000, 900_000].map(s => humanDuration(s * 1000))).toEqual(['45s', '3m20s', '25m', '125m', '8h', '2d7h', '10d']);
  });
});
