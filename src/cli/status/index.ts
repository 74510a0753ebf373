/**
 * `kyma-serverless status`: where each Function is in the Function controller's pipeline (source
 * ConfigMap, build Job, Deployment, Service, HorizontalPodAutoscaler, ready), from its conditions
 * and from the objects the controller labels with the Function's name, whether KEDA scaled it to
 * zero (idle), and whether its endpoints (APIRules, HTTPRoutes, VirtualServices) and Subscriptions
 * are ready; once, or followed live through the watch API.
 *
 * This file holds the command and re-exports the rest: `resources.ts` (the JSON it reads),
 * `model.ts` (the pipeline), `reach.ts` (endpoints and Subscriptions), `report.ts` (a Function's
 * report, as `-o json` prints it), `render.ts` (tables, frames and lines), and the cluster side in
 * `_kinds.ts`, `_store.ts` and `_watch.ts`.
 */
import { Duration } from 'cdk8s';
import { Command, InvalidArgumentError, Option } from 'commander';
import { FUNCTION_LABEL, OBJECT_KINDS_ANNOTATION } from '../../api/labels';
import { runtimeSupportNow } from '../../api/runtime-support';
import { Cluster, ClusterOptions, connect, describeApiError } from '../_kube';
import { CliError } from '../errors';
import { OutputFormat, formatDocument, isStructured } from '../_output';
import { Kind, kindsOf } from './_kinds';
import { FunctionStore } from './_store';
import { StoreWatch } from './_watch';
import { ProgressState } from './model';
import { missingKindLines } from './reach';
import { changeLine, explanation, humanDuration, isoSeconds, renderFrame, renderTable } from './render';
import { runtimeSupportLines } from './runtime-support';
import { FunctionStatusReport } from './report';

export type { FunctionProgress, PipelineStep } from './model';
export { DEPLOYMENT_UPDATE_LOOP, PipelineStage, ProgressState, StepState, autoscales, functionProgress, functionRelease, scaledObjectOf } from './model';
export type { EndpointStatus, FunctionReach, MissingKind, SubscriptionStatus } from './reach';
export { EndpointKind, ReachState, functionReach, missingKindLines, missingKindMessage, missingKindsOf, withReach } from './reach';
export type { FrameOptions, RenderOptions } from './render';
export { changeLine, explanation, humanDuration, reachCount, renderFrame, renderSteps, renderTable, urlSummary } from './render';
export type { FunctionStatusReport } from './report';
export { statusReport } from './report';
export type {
  ChildResource, FunctionChildren, FunctionResource, ParentReference, ReachResource, ResourceCondition, ResourceMetadata, ScaledObjectResource,
} from './resources';

/**
 * Parses a duration as kubectl takes it: a number and a unit (`ms`, `s`, `m`, `h`), repeated,
 * such as `90s`, `10m` or `1h30m`.
 *
 * @throws InvalidArgumentError when the text is no such duration
 */
export function parseDuration(text: string): Duration {
  const units: { readonly [unit: string]: number } = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map(p => p[0]).join('') !== text.trim()) {
    throw new InvalidArgumentError(`'${text}' is not a duration: give a number and a unit, such as 90s, 10m or 1h30m`);
  }
  return Duration.millis(Math.round(parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * units[unit], 0)));
}

/** Options of {@link runStatus}: the global cluster options and the command's own. */
export interface StatusOptions extends ClusterOptions {
  /**
   * One Function's name.
   *
   * @default - every Function of the namespace
   */
  readonly name?: string;
  /**
   * Every namespace's Functions (`-A`).
   *
   * @default false
   */
  readonly allNamespaces?: boolean;
  /**
   * Follow the Functions until every one is ready (or idle: scaled to zero by KEDA), or one fails.
   *
   * @default false
   */
  readonly watch?: boolean;
  /**
   * With `watch`: how long to wait for every Function to be ready or idle.
   *
   * @default - no limit
   */
  readonly timeout?: Duration;
  /**
   * The output format.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
  /**
   * How long one list may go unanswered before it is abandoned and tried again.
   *
   * @default Duration.seconds(30)
   */
  readonly requestTimeout?: Duration;
  /**
   * How long a list is tried again while the API server is unreachable (restarting), does not
   * answer, or answers 429, 502, 503 or 504; with `watch`, the watches resume from where they were
   * once it answers again. After that long, the command fails.
   *
   * @default Duration.minutes(2)
   */
  readonly retryTimeout?: Duration;
}

/** A stream the status writes to: stdout, or a test's stand-in. */
export interface OutputStream {
  write(text: string): unknown;
  /** Whether it is a terminal: the watch then redraws a table in place. */
  readonly isTTY?: boolean;
  /** The terminal's width. */
  readonly columns?: number;
  /** The terminal's height. */
  readonly rows?: number;
}

/** Where {@link runStatus} writes, its clock, and the signal that interrupts a watch. */
export interface StatusIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** The time in milliseconds since the epoch. */
  readonly now: () => number;
  /**
   * The day runtime support is judged at (see `runtimeSupportLines`).
   *
   * @default - now, or the day the environment variable KYMA_SERVERLESS_TODAY gives
   */
  readonly date?: () => Date;
  /**
   * Aborted on Ctrl-C: a watch ends with exit code 130.
   *
   * @default - never interrupted
   */
  readonly interrupt?: AbortSignal;
}

/** The process's own streams and clock. */
export function processIo(interrupt?: AbortSignal): StatusIo {
  return { stdout: process.stdout, stderr: process.stderr, now: Date.now, interrupt };
}

/**
 * Prints the Functions' status, once or (with `watch`) until they are all ready.
 *
 * Without `watch`, it prints a table (or a JSON array) and fails when a Function has failed.
 * With `watch`, it follows the Functions and their objects through the watch API: on a terminal
 * it redraws the table in place; elsewhere it prints a line (or with JSON output, a JSON object)
 * per change. It returns once every Function is ready or idle (KEDA scaled it to zero: done too).
 *
 * @throws CliError when a Function failed, the named Function does not exist, the watch timed out
 * (exit code 1) or was interrupted (130), or the API server could not be asked
 */
export async function runStatus(options: StatusOptions, io: StatusIo = processIo()): Promise<void> {
  if (options.name !== undefined && options.allNamespaces) {
    throw new CliError('A Function name cannot be given with --all-namespaces: give its namespace with -n instead');
  }
  if (options.timeout !== undefined && !options.watch) throw new CliError('--timeout applies only with --watch');
  const cluster = await connect(options);
  const namespace = options.allNamespaces ? undefined : cluster.namespace;
  const kinds = await kindsOf(cluster.kubeConfig);
  const store = new FunctionStore(cluster, kinds, namespace, options.name, message => io.stderr.write(`kyma-serverless: ${message}\n`));
  store.retry = { requestTimeoutMs: options.requestTimeout?.toMilliseconds(), retryTimeoutMs: options.retryTimeout?.toMilliseconds() };
  await store.listAll();
  const structured = isStructured(options.output);
  const out = (text: string) => io.stdout.write(`${text}\n`);

  const reports = store.reports();
  if (!reports.length) {
    if (options.name !== undefined) throw new CliError(`Function ${options.name} not found in namespace ${namespace}`);
    if (structured) out(formatDocument([], options.output!));
    io.stderr.write(`No Functions found ${namespace === undefined ? 'in any namespace' : `in namespace ${namespace}`}.\n`);
    return;
  }
  if (!options.watch) {
    out(structured ? formatDocument(reports, options.output!) : renderTable(reports, { now: io.now(), allNamespaces: options.allNamespaces }));
    // Kinds the cluster lacks for some Functions, then runtimes past or near their end of support: after the table, or on stderr beside a document.
    for (const lines of [missingKindLines(reports), runtimeSupportLines(reports, io.date?.() ?? runtimeSupportNow())]) {
      if (lines.length) (structured ? io.stderr : io.stdout).write(`${structured ? '' : '\n'}${lines.join('\n')}\n`);
    }
    const failed = reports.filter(r => r.state === ProgressState.FAILED);
    if (failed.length) {
      throw new CliError(`${failed.length} of ${reports.length} Function${reports.length === 1 ? '' : 's'} failed: ${failed.map(label).join(', ')}`);
    }
    return;
  }
  await follow(cluster, kinds, store, namespace, options, io);
}

const label = (r: FunctionStatusReport) => `${r.namespace}/${r.name}`;

/** Whether a Function is where it is going: ready, or idle (scaled to zero by KEDA). */
const done = (r: FunctionStatusReport) => r.state === ProgressState.READY || r.state === ProgressState.IDLE;

/** The watch: renders every change and settles once the Functions are ready or idle, one failed, time is up, or Ctrl-C. */
async function follow(
  cluster: Cluster, kinds: readonly Kind[], store: FunctionStore, namespace: string | undefined, options: StatusOptions, io: StatusIo,
): Promise<void> {
  const structured = isStructured(options.output);
  // One document per change: a JSON object per line, or a YAML document after '---'.
  const document = (value: object) => (options.output === OutputFormat.YAML ? formatDocument(value, OutputFormat.YAML, true) : JSON.stringify(value));
  const live = io.stdout.isTTY === true && !structured;
  const startedAt = io.now();
  const printed = new Map<string, string>();
  let drawnLines = 0;

  const draw = (reports: FunctionStatusReport[]) => {
    const { columns, rows } = io.stdout;
    const frame = renderFrame(reports, { now: io.now(), allNamespaces: options.allNamespaces, columns, rows, startedAt });
    const lines = frame.split('\n');
    // Back to the first line of the last frame, then each line cleared and written, then the rest cleared.
    io.stdout.write(`${drawnLines ? `\x1b[${drawnLines}A` : ''}${lines.map(l => `\r\x1b[2K${l}\n`).join('')}\x1b[J`);
    drawnLines = lines.length;
  };

  const print = (reports: FunctionStatusReport[]) => {
    const now = io.now();
    const seen = new Set<string>();
    for (const report of reports) {
      seen.add(label(report));
      const text = structured ? document({ time: isoSeconds(now), ...report }) : changeLine(report, now);
      // A change is a change of what the line says, not of the time on it.
      const key = structured ? JSON.stringify(report) : changeLine(report, 0);
      if (printed.get(label(report)) === key) continue;
      printed.set(label(report), key);
      io.stdout.write(`${text}\n`);
    }
    for (const gone of [...printed.keys()].filter(k => !seen.has(k))) {
      printed.delete(gone);
      const [ns, name] = gone.split('/');
      const text = structured ? document({ time: isoSeconds(now), namespace: ns, name, deleted: true }) : `${isoSeconds(now)} ${gone} deleted`;
      io.stdout.write(`${text}\n`);
    }
  };

  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let ticker: NodeJS.Timeout | undefined;
    let timer: NodeJS.Timeout | undefined;
    let watch: StoreWatch | undefined;
    const onInterrupt = () => settle(new CliError(`Interrupted; ${notReady(store.reports())}`, 130));
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      watch?.stop();
      clearInterval(ticker);
      clearTimeout(timer);
      io.interrupt?.removeEventListener('abort', onInterrupt);
      if (error) reject(error);
      else resolve();
    };
    const update = () => {
      if (settled) return;
      const reports = store.reports();
      if (live) draw(reports);
      else print(reports);
      if (options.name !== undefined && !reports.length) {
        settle(new CliError(`Function ${options.name} was deleted from namespace ${namespace}`));
        return;
      }
      const failed = reports.filter(r => r.state === ProgressState.FAILED);
      if (failed.length) settle(new CliError(`Function ${failed.map(r => `${label(r)} failed: ${explanation(r)}`).join('; Function ')}`));
      else if (reports.every(done)) settle();
    };

    if (io.interrupt?.aborted) return onInterrupt();
    io.interrupt?.addEventListener('abort', onInterrupt);
    if (options.timeout) {
      const timeout = options.timeout;
      const ms = timeout.toMilliseconds();
      const after = ms < 1000 ? `${ms}ms` : humanDuration(ms);
      timer = setTimeout(() => settle(new CliError(`Timed out after ${after}; ${notReady(store.reports())}`)), ms);
    }
    if (live) ticker = setInterval(() => !settled && draw(store.reports()), 1_000);
    update();
    if (settled) return;
    watch = new StoreWatch(cluster.kubeConfig, store, kinds, namespace, update, e => settle(e));
    watch.start().catch(e => settle(describeApiError(e, 'watching Functions', cluster)));
  });
}

/** `not ready: ns/a (build, JobRunning), ns/b (ready, DeploymentWaiting)`. */
function notReady(reports: readonly FunctionStatusReport[]): string {
  const waiting = reports.filter(r => !done(r));
  if (!waiting.length) return 'every Function is ready or idle';
  return `not ready: ${waiting.map(r => `${label(r)} (${[r.stage, r.reason ?? r.message].filter(Boolean).join(', ')})`).join(', ')}`;
}

/** Adds `status` to a program whose global options are those of `kyma-serverless`. */
export function addStatusCommand(program: Command): void {
  program.command('status')
    .description('Show where each Function is in the build pipeline (source ConfigMap, build Job, Deployment, Service, HPA, ready), '
      + 'whether KEDA scaled it to zero, and whether its endpoints and Subscriptions are ready')
    .argument('[name]', 'one Function (default: every Function in the namespace)')
    .option('-A, --all-namespaces', 'Functions of every namespace')
    .option('-w, --watch', 'follow the Functions until every one is ready or idle (exit 0) or one fails (exit 1)')
    .addOption(new Option('--timeout <duration>', 'with --watch: give up after this long (exit 1), e.g. 90s, 10m, 1h30m').argParser(parseDuration))
    .addOption(new Option('--request-timeout <duration>', 'abandon a list the API server does not answer within this, and try it again')
      .argParser(parseDuration).default(Duration.seconds(30), '30s'))
    .addOption(new Option('--retry-timeout <duration>', 'while the API server is unreachable or answers 429, 502, 503 or 504, '
      + 'try again for this long (the watch resumes where it was)').argParser(parseDuration).default(Duration.minutes(2), '2m'))
    .addHelpText('after', `
Stages: source (inline sources in a ConfigMap, or Git sources fetched), build (the build Job),
deployment, service, hpa (only with scaleConfig minReplicas != maxReplicas), ready, and reach (only
for Functions with endpoints or Subscriptions). They come from the Function's conditions, from the
objects the controller labels serverless.kyma-project.io/function-name=<name>, and from the
APIRules, HTTPRoutes, VirtualServices and Subscriptions synth labels
${FUNCTION_LABEL}=<name>. A kind whose CRD is not installed is left out, but
for the Functions whose annotation ${OBJECT_KINDS_ANNOTATION} names it: they fail at
reach, since their objects of that kind cannot exist, and a line after the table names the CRD,
the Functions and the Kyma module (or project) that installs it.
REACH counts those that are ready; URL is the endpoint's URL.

A Function with keda whose ScaledObject (labelled the same) scaled it to zero is idle: built and
deployed, with no Pods until a trigger is active (its spec.replicas, or its Deployment's, is 0).
Idle is done, like ready: not a failure, and nothing to wait for. Once a trigger is active, the
Function is progressing at ready while KEDA starts its Pods.

A Function is ready once its pipeline is ready and its endpoints and Subscriptions are too: an
APIRule in state Ready, an HTTPRoute Accepted with ResolvedRefs by every parent Gateway, a
VirtualService applied (and Reconciled, with Istio's status feature on), a Subscription with ready
true. An APIRule in Error or Warning, or an HTTPRoute a Gateway does not accept, fails the Function;
failures that its missing Service explains count only once the Function is ready. A Subscription
that is not ready is waited for, never failed.

Faults: while the API server restarts (or answers 429, 502, 503, 504, or does not answer), lists are
tried again for --retry-timeout, and a watch resumes from where it was once it answers again.

Exit code: 0 when no Function failed (without --watch; building is not failing) or every Function is
ready or idle (with --watch); 1 when a Function failed, the watch timed out, or the cluster cannot be
asked; 130 when the watch is interrupted.

Examples:
  # Every Function of the current namespace
  kyma-serverless status

  # One Function, followed until it is ready; give up after 10 minutes
  kyma-serverless status hello -n shop --watch --timeout 10m

  # Every namespace, as JSON for scripts
  kyma-serverless status -A -o json

  # In CI, after applying the manifests: one line per change, fails when a build fails
  kyma-serverless apply dist/ --wait && kyma-serverless status -n shop --watch --timeout 15m
`)
    .action(async (name: string | undefined, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<Omit<StatusOptions, 'name'>>();
      const interrupt = new AbortController();
      const onSigint = () => interrupt.abort();
      if (options.watch) process.once('SIGINT', onSigint);
      try {
        await runStatus({ ...options, name }, processIo(interrupt.signal));
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}
