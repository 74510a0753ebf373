/**
 * What `apply` takes: the command's options, and where it writes.
 */
import { Duration } from 'cdk8s';
import { ClusterOptions } from '../_kube';
import { OutputFormat } from '../_output';
import { OutputStream } from '../status';

/** Options of {@link runApply}: the cluster options and the command's own. */
export interface ApplyOptions extends ClusterOptions {
  /**
   * Wait after each step until what it applied is ready.
   *
   * @default true
   */
  readonly wait?: boolean;
  /**
   * How long the whole apply may take, waits included.
   *
   * @default Duration.minutes(10)
   */
  readonly timeout?: Duration;
  /**
   * How often to read the objects waited for.
   *
   * @default Duration.seconds(2)
   */
  readonly pollInterval?: Duration;
  /**
   * How long one request may go unanswered before it is abandoned and tried again (an API server
   * or a proxy that accepts the connection and never answers).
   *
   * @default Duration.seconds(30)
   */
  readonly requestTimeout?: Duration;
  /**
   * How long one request is tried again while the API server fails in a way that passes: it is
   * unreachable (restarting), drops the connection, does not answer, or answers 429, 502, 503,
   * 504, or 500 from a webhook it cannot call. Pauses double from 250 ms up to 8 s, or follow the
   * answer's `Retry-After`. `timeout` bounds it too.
   *
   * @default Duration.minutes(2)
   */
  readonly retryTimeout?: Duration;
  /**
   * Send every object with `dryRun=All`: the API server validates and admits it, and stores nothing.
   *
   * @default false
   */
  readonly dryRun?: boolean;
  /**
   * Take over fields another field manager owns (`force=true`), rather than fail on the conflict.
   *
   * @default false
   */
  readonly forceConflicts?: boolean;
  /**
   * The field manager the cluster records as owner of the applied fields.
   *
   * @default 'kyma-serverless'
   */
  readonly fieldManager?: string;
  /**
   * After a successful apply, delete the members of the folder's ApplySet that the folder no
   * longer holds (and that this field manager applied and nothing owns), in reverse apply order.
   *
   * @default false
   */
  readonly prune?: boolean;
  /**
   * The ApplySet parent: `[secrets/|configmaps/]name`, in the namespace of the folder's first
   * Namespace (else `-n`'s, or the context's).
   *
   * @default 'kyma-serverless-applyset'
   */
  readonly applyset?: string;
  /**
   * The output format: with JSON or YAML, the lines of progress go to standard error, and standard
   * output gets the report.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
}

/** Where {@link runApply} writes, and its clock. */
export interface ApplyIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** The time in milliseconds since the epoch. */
  readonly now: () => number;
  /**
   * Aborted on Ctrl-C: the request under way is abandoned, nothing more is applied or pruned, and
   * the report says what was and was not done (the command exits 130).
   *
   * @default - never interrupted
   */
  readonly interrupt?: AbortSignal;
}
