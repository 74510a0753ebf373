/**
 * The time of one `apply` run and the faults it outlasts: the deadline (`--timeout`), Ctrl-C, the
 * pauses between reads, and the requests tried again while the API server fails. The client
 * (`RestClient` in `../_rest.ts`) tries a request again within `--retry-timeout` and tells the run,
 * which says so in a `retrying` line; a run that ends early ends with one of the errors below.
 */
import { Duration } from 'cdk8s';
import { Cluster, describeApiError } from '../_kube';
import { RetryNotice } from '../_rest';
import { ApplyIo, ApplyOptions } from './options';
import { Progress } from './output';

/** Ends the run: the deadline passed. */
export class TimedOut extends Error {}

/** Ends the run: Ctrl-C. */
export class Interrupted extends Error {}

/** Ends the run: the message says why. */
export class Stop extends Error {}

/** The deadline of one run, its Ctrl-C, and the requests its client tried again. */
export class RunClock {
  /** When the run started, in milliseconds since the epoch. */
  public readonly startedAt: number;
  /** The run's `--timeout`, in milliseconds. */
  public readonly timeoutMs: number;
  private readonly deadline: number;
  private readonly pollMs: number;
  private readonly requestTimeoutMs: number;
  /** The last request tried again, and when: for the message of a timeout during its pauses. */
  private lastRetry?: RetryNotice & { readonly at: number };

  constructor(
    private readonly io: ApplyIo,
    options: ApplyOptions,
    private readonly cluster: Cluster,
    private readonly progress: Progress,
  ) {
    this.startedAt = io.now();
    this.timeoutMs = (options.timeout ?? Duration.minutes(10)).toMilliseconds();
    this.deadline = this.startedAt + this.timeoutMs;
    this.pollMs = Math.max(1, (options.pollInterval ?? Duration.seconds(2)).toMilliseconds());
    this.requestTimeoutMs = (options.requestTimeout ?? Duration.seconds(30)).toMilliseconds();
  }

  /** Tells the run of a request the client tries again (called by the client). */
  public retrying(notice: RetryNotice): void {
    this.lastRetry = { ...notice, at: this.io.now() };
    const seconds = notice.delayMs < 1000 ? `${notice.delayMs}ms` : `${(notice.delayMs / 1000).toFixed(1)}s`;
    this.progress.line('retrying', `${notice.method} ${notice.path}: ${notice.reason.split('\n')[0]}; try ${notice.attempt + 1} in ${seconds}`
      + `${notice.retryAfter ? ' (the server\'s Retry-After)' : ''}`);
  }

  /** Whether the client tried a request again during the run: the API server was failing. */
  public get retried(): boolean {
    return this.lastRetry !== undefined;
  }

  /** How the API server was failing, when the last request tried again is still within its pause and its answer's wait. */
  public failing(): string | undefined {
    const retry = this.lastRetry;
    if (retry && this.io.now() <= retry.at + retry.delayMs + this.requestTimeoutMs) {
      return `the API server was failing: ${retry.method} ${retry.path}: ${retry.reason.split('\n')[0]} (${retry.attempt} tries)`;
    }
    return undefined;
  }

  public interrupted(): boolean {
    return this.io.interrupt?.aborted === true;
  }

  public remaining(): number {
    return this.deadline - this.io.now();
  }

  /** Aborts a request at the deadline, or on Ctrl-C. */
  public signal(): AbortSignal {
    if (this.interrupted()) throw new Interrupted();
    const remaining = this.remaining();
    if (remaining <= 0) throw new TimedOut();
    const deadline = AbortSignal.timeout(remaining);
    return this.io.interrupt ? AbortSignal.any([deadline, this.io.interrupt]) : deadline;
  }

  /** Throws the run's end when a request failed because of the deadline or Ctrl-C. */
  public rethrowTimeout(e: unknown): void {
    if (e instanceof Interrupted || this.interrupted()) throw new Interrupted();
    const name = (e as { name?: string; type?: string }).name;
    if (name === 'AbortError' || name === 'TimeoutError' || (e as { type?: string }).type === 'aborted' || this.remaining() <= 0) throw new TimedOut();
  }

  /** Waits one poll interval, or less at the deadline; Ctrl-C ends the wait. */
  public async sleep(): Promise<void> {
    if (this.interrupted()) throw new Interrupted();
    const remaining = this.remaining();
    if (remaining <= 0) throw new TimedOut();
    await new Promise<void>(resolve => {
      const done = () => {
        clearTimeout(timer);
        this.io.interrupt?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(this.pollMs, remaining));
      this.io.interrupt?.addEventListener('abort', done, { once: true });
    });
    if (this.interrupted()) throw new Interrupted();
    if (this.remaining() <= 0) throw new TimedOut();
  }

  /** A failed request as the run's error: its end at the deadline or on Ctrl-C, else what went wrong and what to do. */
  public requestError(e: unknown, what: string): Error {
    if (this.interrupted()) return new Interrupted();
    if ((e as { name?: string }).name === 'AbortError' || this.remaining() <= 0) return new TimedOut();
    return describeApiError(e, what, this.cluster);
  }
}
