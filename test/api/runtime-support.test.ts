import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  RELEASES, RUNTIME_NOTICE_DAYS, RUNTIME_SUPPORT, RUNTIME_SUPPORT_SOURCE, ServerlessRelease, releaseFacts, runtimeNotice, runtimeSupport, supportEndsAt,
} from '../../src/api';
import { HAS_UPSTREAM_REFERENCE_1_13_0, UPSTREAM_REFERENCE_1_13_0 } from '../util/upstream-crds';

const { V1_11_1, V1_13_0 } = ServerlessRelease;
/** The day the issue was written: nodejs20 past its end, nodejs22 in its last month, python312 ending in March 2027. */
const TODAY = new Date('2026-11-28T12:00:00Z');

describe('the table of runtime support', () => {
  (HAS_UPSTREAM_REFERENCE_1_13_0 ? test : test.skip)('holds the rows of upstream\'s runtime deprecation schedule in shared/reference, in its order', () => {
    const text = fs.readFileSync(path.join(UPSTREAM_REFERENCE_1_13_0, 'runtime-deprecation-schedule.md'), 'utf8');
    const table = /\| Runtime \| Planned Deprecation \| Estimated EOL \|\n\| --- \| --- \| --- \|\n((?:\|.*\|\n)+)/.exec(text);
    expect(table).not.toBeNull();
    const rows = table![1].trim().split('\n').map(line => line.split('|').slice(1, -1).map(cell => cell.trim()));
    const dated = (cell: string) => (cell === 'TBD' ? undefined : cell);
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(RUNTIME_SUPPORT.map(r => [r.title, r.deprecation, r.endOfSupport])).toEqual(rows.map(([title, deprecation, eol]) => [title, dated(deprecation), dated(eol)]));
  });

  test('names each runtime as spec.runtime does, and covers every runtime of every release', () => {
    for (const row of RUNTIME_SUPPORT) {
      const [, language, version] = /^(Node\.js|Python) (\d+)(?:\.(\d+))?$/.exec(row.title) ?? [];
      expect(`${row.title}: ${row.runtime}`).toBe(`${row.title}: ${language === 'Node.js' ? 'nodejs' : 'python'}${row.title.split(' ')[1].replace('.', '')}`);
      expect(version).toBeDefined();
    }
    for (const release of RELEASES) for (const runtime of releaseFacts(release).runtimes) expect(`${runtime}: ${runtimeSupport(runtime) !== undefined}`).toBe(`${runtime}: true`);
    expect(RUNTIME_SUPPORT_SOURCE).toMatch(/^https:\/\/github\.com\/kyma-project\/serverless\/blob\/1\.13\.0\/docs\/user\/.*runtime-deprecation-schedule\.md$/);
  });

  test('a release\'s deprecated runtimes carry the table\'s end of support', () => {
    for (const release of RELEASES) {
      for (const [runtime, when] of Object.entries(releaseFacts(release).deprecatedRuntimes)) expect(`${release} ${runtime}: ${when}`).toBe(`${release} ${runtime}: ${runtimeSupport(runtime)?.endOfSupport}`);
    }
  });

  test('support lasts through the last day of the month the schedule names', () => {
    expect(supportEndsAt('April 2026').toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(supportEndsAt('December 2026').toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(() => supportEndsAt('TBD')).toThrow(/not a month of the runtime deprecation schedule: TBD/);
    expect(() => supportEndsAt('Smarch 2026')).toThrow(/not a month/);
  });
});

describe('runtimeNotice', () => {
  test('nodejs20 is past its end: 1.11.1 has no newer Node.js with support left, so the move is to release 1.13.0 and nodejs24', () => {
    expect(runtimeNotice('nodejs20', V1_11_1, TODAY)).toEqual({
      runtime: 'nodejs20',
      release: V1_11_1,
      endOfSupport: 'April 2026',
      ended: true,
      moveTo: { release: V1_13_0, runtime: 'nodejs24' },
      source: RUNTIME_SUPPORT_SOURCE,
      message: `nodejs20 reached the end of its support in April 2026 (upstream's runtime deprecation schedule, ${RUNTIME_SUPPORT_SOURCE}); `
        + 'release 1.11.1 still runs it; move to release 1.13.0 and nodejs24',
    });
    expect(runtimeNotice('nodejs20', V1_13_0, TODAY)).toMatchObject({ ended: true, moveTo: { runtime: 'nodejs24' }, message: expect.stringMatching(/; move to nodejs24$/) });
  });

  test('nodejs22 in its last 90 days: a notice where the release has nodejs24 (1.13.0), none where it has nothing newer (1.11.1) until its end', () => {
    expect(runtimeNotice('nodejs22', V1_13_0, TODAY)).toMatchObject({
      ended: false,
      moveTo: { runtime: 'nodejs24' },
      message: `nodejs22 reaches the end of its support in November 2026 (upstream's runtime deprecation schedule, ${RUNTIME_SUPPORT_SOURCE}); move to nodejs24`,
    });
    expect(runtimeNotice('nodejs22', V1_11_1, TODAY)).toBeUndefined();
    expect(runtimeNotice('nodejs22', V1_11_1, new Date('2026-11-30T23:59:59Z'))).toBeUndefined();
    expect(runtimeNotice('nodejs22', V1_11_1, new Date('2026-12-01T00:00:00Z'))).toMatchObject({ ended: true, moveTo: { release: V1_13_0, runtime: 'nodejs24' } });
  });

  test('the 90 days are counted to the first day without support', () => {
    const end = supportEndsAt('November 2026').getTime();
    const day = 24 * 60 * 60 * 1000;
    expect(runtimeNotice('nodejs22', V1_13_0, new Date(end - RUNTIME_NOTICE_DAYS * day - 1))).toBeUndefined();
    expect(runtimeNotice('nodejs22', V1_13_0, new Date(end - RUNTIME_NOTICE_DAYS * day))).toMatchObject({ ended: false });
    expect(runtimeNotice('nodejs22', V1_13_0, new Date(end - 1))).toMatchObject({ ended: false });
    expect(runtimeNotice('nodejs22', V1_13_0, new Date(end))).toMatchObject({ ended: true });
  });

  test('python312 has support left today; near its end no release has a newer Python, so the notice waits for the end, with nothing to move to', () => {
    expect(runtimeNotice('python312', V1_13_0, TODAY)).toBeUndefined();
    expect(runtimeNotice('python312', V1_13_0, new Date('2027-03-15T00:00:00Z'))).toBeUndefined();
    const ended = runtimeNotice('python312', V1_13_0, new Date('2027-04-01T00:00:00Z'));
    expect(ended).toMatchObject({ ended: true, endOfSupport: 'March 2027' });
    expect(ended?.moveTo).toBeUndefined();
    expect(ended?.message).toMatch(/release 1\.13\.0 still runs it$/);
  });

  test('nothing for a runtime the schedule does not date, or one the release does not have (the Function rules refuse that)', () => {
    expect(runtimeNotice('nodejs24', V1_13_0, new Date('2030-01-01T00:00:00Z'))).toBeUndefined();
    expect(runtimeNotice('nodejs24', V1_11_1, TODAY)).toBeUndefined();
    expect(runtimeNotice('nodejs18', V1_11_1, TODAY)).toBeUndefined();
  });
});
