/**
 * How long upstream supports each runtime, and the notice for a Function whose runtime is at or
 * past its end: one table, from upstream's runtime deprecation schedule (`RUNTIME_SUPPORT_SOURCE`),
 * which a test holds equal to the schedule's copy in the reference folder.
 *
 * A notice never refuses a Function: a date must not turn yesterday's green build red. Synth and
 * `kyma-serverless validate` print it (an option makes it fail), `status` and `preflight` list the
 * Functions of a cluster it concerns. A runtime the release does not have at all is refused by the
 * Function rules, as before; this module says nothing about it.
 */
import { RELEASES, ReleaseFacts, ServerlessRelease, releaseFacts } from './release';
import { runtimeFamily } from './runtimes';

/** Where the dates of {@link RUNTIME_SUPPORT} come from. */
export const RUNTIME_SUPPORT_SOURCE = 'https://github.com/kyma-project/serverless/blob/1.13.0/docs/user/00-90-runtime-deprecation-schedule.md';

/** One runtime of upstream's deprecation schedule. */
export interface RuntimeSupport {
  /** The runtime as `spec.runtime` names it, such as `nodejs22`. */
  readonly runtime: string;
  /** The runtime as the schedule names it, such as `Node.js 22`. */
  readonly title: string;
  /** The month upstream plans to deprecate it, as the schedule gives it (`July 2026`); none while the schedule says TBD. */
  readonly deprecation?: string;
  /**
   * The month its support ends, as the schedule gives it (`November 2026`); none while the schedule
   * says TBD. Support lasts through the last day of that month.
   */
  readonly endOfSupport?: string;
}

/** Upstream's runtime deprecation schedule, in its order ({@link RUNTIME_SUPPORT_SOURCE}). */
export const RUNTIME_SUPPORT: readonly RuntimeSupport[] = [
  { runtime: 'nodejs20', title: 'Node.js 20', deprecation: 'February 2026', endOfSupport: 'April 2026' },
  { runtime: 'nodejs22', title: 'Node.js 22', deprecation: 'July 2026', endOfSupport: 'November 2026' },
  { runtime: 'nodejs24', title: 'Node.js 24' },
  { runtime: 'python312', title: 'Python 3.12', deprecation: 'September 2026', endOfSupport: 'March 2027' },
  { runtime: 'python314', title: 'Python 3.14' },
];

/** How close to its end a runtime gets a notice when its release has a newer one of the same language. */
export const RUNTIME_NOTICE_DAYS = 90;

const DAY_MS = 24 * 60 * 60 * 1000;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * The first moment without support, for a month as the schedule gives it: the first day of the next month, UTC.
 *
 * @param month such as `April 2026`
 * @throws for a text that is no month and year
 */
export function supportEndsAt(month: string): Date {
  const match = /^([A-Z][a-z]+) (\d{4})$/.exec(month);
  const index = match ? MONTHS.indexOf(match[1]) : -1;
  if (!match || index < 0) throw new Error(`not a month of the runtime deprecation schedule: ${month}`);
  return new Date(Date.UTC(Number(match[2]), index + 1, 1));
}

/**
 * The environment variable that sets the day runtime support is judged at, as `YYYY-MM-DD`, for
 * synth, `validate`, `status` and `preflight` (and the apps synth runs): a fixed clock for tests
 * and CI that must not change with the date, or a look ahead. Unset, it is today.
 */
export const RUNTIME_SUPPORT_DATE_ENV = 'KYMA_SERVERLESS_TODAY';

/**
 * The time runtime support is judged at: midday UTC of the day {@link RUNTIME_SUPPORT_DATE_ENV}
 * gives, else now.
 *
 * @throws when the variable is set to something else than a date
 */
export function runtimeSupportNow(): Date {
  const day = process.env[RUNTIME_SUPPORT_DATE_ENV];
  if (day === undefined || day === '') return new Date();
  const at = /^\d{4}-\d{2}-\d{2}$/.test(day) ? new Date(`${day}T12:00:00Z`) : undefined;
  if (!at || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== day) {
    throw new Error(`${RUNTIME_SUPPORT_DATE_ENV} (${day}) is no day: give it as YYYY-MM-DD, or unset it for today`);
  }
  return at;
}

/** The row of a runtime in {@link RUNTIME_SUPPORT}, if the schedule lists it. */
export function runtimeSupport(runtime: string): RuntimeSupport | undefined {
  return RUNTIME_SUPPORT.find(r => r.runtime === runtime);
}

/** What a Function on a runtime at or past its end should move to. */
export interface RuntimeMove {
  /** The release to move to, when the Function's own release has no runtime to move to. */
  readonly release?: ServerlessRelease;
  /** The runtime to move to. */
  readonly runtime: string;
}

/** The notice for a Function whose runtime is past its end of support, or near it. */
export interface RuntimeNotice {
  /** The runtime. */
  readonly runtime: string;
  /** The release the Function runs on. */
  readonly release: ServerlessRelease;
  /** The month its support ends, as the schedule gives it. */
  readonly endOfSupport: string;
  /** Whether its support has ended; otherwise it ends within {@link RUNTIME_NOTICE_DAYS} days. */
  readonly ended: boolean;
  /** What to move to: a newer runtime of the same language with support left, in this release or a later one. */
  readonly moveTo?: RuntimeMove;
  /** Where the date comes from ({@link RUNTIME_SUPPORT_SOURCE}). */
  readonly source: string;
  /** The notice in one sentence: the runtime, the date, what to move to and the source. */
  readonly message: string;
}

/** Whether a runtime has support for longer than the notice period after `now`. */
function lastsBeyondNotice(runtime: string, now: Date): boolean {
  const end = runtimeSupport(runtime)?.endOfSupport;
  return end === undefined || supportEndsAt(end).getTime() - now.getTime() > RUNTIME_NOTICE_DAYS * DAY_MS;
}

/** The number in a runtime's name (`22` of `nodejs22`, `312` of `python312`), to compare runtimes of one language. */
function versionOf(runtime: string): number {
  return Number(/\d+$/.exec(runtime)?.[0] ?? 0);
}

/** The newest runtimes of a release in the language of `runtime`, newer than it, newest first. */
function newerOf(runtime: string, facts: ReleaseFacts): string[] {
  const family = runtimeFamily(runtime);
  return facts.runtimes.filter(r => runtimeFamily(r) === family && versionOf(r) > versionOf(runtime))
    .sort((a, b) => versionOf(b) - versionOf(a));
}

/**
 * The notice for a Function on a runtime under a release: when the runtime's support has ended,
 * or ends within {@link RUNTIME_NOTICE_DAYS} days while the release has a newer runtime of the
 * same language.
 *
 * @param runtime `spec.runtime`
 * @param release the release the Function runs on
 * @param now the time to judge at (tests fix it)
 * @returns the notice; none for a runtime with support left, one the schedule does not date, or one the release does not have (the Function rules refuse that)
 */
export function runtimeNotice(runtime: string, release: ServerlessRelease, now: Date): RuntimeNotice | undefined {
  const facts = releaseFacts(release);
  const end = runtimeSupport(runtime)?.endOfSupport;
  if (end === undefined || !(facts.runtimes as readonly string[]).includes(runtime)) return undefined;
  const left = supportEndsAt(end).getTime() - now.getTime();
  const ended = left <= 0;
  if (!ended && (left > RUNTIME_NOTICE_DAYS * DAY_MS || newerOf(runtime, facts).length === 0)) return undefined;
  const moveTo = moveOf(runtime, release, now);
  const move = moveTo ? `; move to ${moveTo.release ? `release ${moveTo.release} and ` : ''}${moveTo.runtime}` : '';
  const message = `${runtime} ${ended ? 'reached the end of its support in' : 'reaches the end of its support in'} ${end} (upstream's runtime deprecation schedule, `
    + `${RUNTIME_SUPPORT_SOURCE})${ended ? `; release ${release} still runs it` : ''}${move}`;
  return { runtime, release, endOfSupport: end, ended, ...(moveTo ? { moveTo } : {}), source: RUNTIME_SUPPORT_SOURCE, message };
}

/** The newest runtime of the same language with support beyond the notice period: in the release, else in the first later release that has one. */
function moveOf(runtime: string, release: ServerlessRelease, now: Date): RuntimeMove | undefined {
  const own = newerOf(runtime, releaseFacts(release)).find(r => lastsBeyondNotice(r, now));
  if (own) return { runtime: own };
  for (const later of RELEASES.slice(RELEASES.indexOf(release) + 1)) {
    const there = newerOf(runtime, releaseFacts(later)).find(r => lastsBeyondNotice(r, now));
    if (there) return { release: later, runtime: there };
  }
  return undefined;
}
