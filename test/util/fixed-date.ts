/**
 * Runs code with `Date` fixed at one moment, and everything else of the clock (timers, I/O,
 * process.hrtime) as it runs: for commands that read the date, such as the runtime support notices.
 */
import type { Config } from '@jest/types';

/** Every clock jest can fake but Date. */
const ALL_BUT_DATE: Config.FakeableAPI[] = ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame',
  'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'];

/**
 * Runs `body` while `new Date()` and `Date.now()` give `now`.
 *
 * @returns what `body` returns
 */
export async function atDate<T>(now: Date, body: () => Promise<T> | T): Promise<T> {
  jest.useFakeTimers({ now: now.getTime(), doNotFake: ALL_BUT_DATE });
  try {
    return await body();
  } finally {
    jest.useRealTimers();
  }
}
