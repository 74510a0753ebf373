/**
 * How `status` shows Functions: the table, the frames of the live display, the lines of a watch
 * on a pipe, and the ages and reasons in them. Pure: the time is always given.
 */
import { table } from '../_output';
import { FunctionProgress, PipelineStage, PipelineStep, ProgressState, StepState } from './model';
import { FunctionStatusReport } from './report';
import { time } from './resources';

/**
 * A duration the way kubectl shows ages: `45s`, `3m20s`, `25m`, `2h5m`, `20h`, `3d4h`, `12d`.
 *
 * @param ms the duration in milliseconds
 */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (h < 3) return `${m}m`;
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  return `${d}d`;
}

/** `Reason: message` on one line (the controller's DeploymentFailed messages span lines). */
export function explanation(report: FunctionProgress): string {
  const message = report.message?.replace(/\s+/g, ' ').trim();
  if (report.reason && message) return `${report.reason}: ${message}`;
  return report.reason ?? message ?? '';
}

const SYMBOLS: { readonly [state in StepState]: string } = {
  [StepState.DONE]: '✓',
  [StepState.IN_PROGRESS]: '…',
  [StepState.PENDING]: '·',
  [StepState.FAILED]: '✗',
};

const STEP_LABELS: { readonly [stage in PipelineStage]: string } = {
  [PipelineStage.CONFIGURED]: 'configured',
  [PipelineStage.SOURCE]: 'source',
  [PipelineStage.BUILD]: 'build',
  [PipelineStage.DEPLOYMENT]: 'deploy',
  [PipelineStage.SERVICE]: 'service',
  [PipelineStage.HPA]: 'hpa',
  [PipelineStage.READY]: 'ready',
  [PipelineStage.REACH]: 'reach',
};

/**
 * The steps in a few characters each: `source ✓ build … deploy · service · ready ·` (✓ done,
 * … in progress, · pending, ✗ failed).
 */
export function renderSteps(steps: readonly PipelineStep[]): string {
  return steps.map(s => `${STEP_LABELS[s.stage]} ${SYMBOLS[s.state]}`).join(' ');
}

/** Options of {@link renderTable} and {@link renderFrame}. */
export interface RenderOptions {
  /** The time ages are counted to, in milliseconds since the epoch. */
  readonly now: number;
  /**
   * Whether to show the NAMESPACE column.
   *
   * @default false
   */
  readonly allNamespaces?: boolean;
}

const age = (report: FunctionStatusReport, now: number) => (report.created ? humanDuration(now - time(report.created)) : '');

/**
 * How many of a Function's endpoints and Subscriptions are ready, of how many: `1/2`; empty without
 * any. A kind of them the cluster does not serve counts as one not ready.
 */
export function reachCount(report: FunctionStatusReport): string {
  const all = [...report.endpoints, ...report.subscriptions];
  const total = all.length + (report.missingKinds?.length ?? 0);
  return total ? `${all.filter(o => o.ready).length}/${total}` : '';
}

/** A Function's first endpoint URL, and how many other URLs it has: `https://hello.example.com (+1)`. */
export function urlSummary(report: FunctionStatusReport): string {
  const urls = [...new Set(report.endpoints.map(e => e.url).filter((u): u is string => !!u))];
  return urls.length > 1 ? `${urls[0]} (+${urls.length - 1})` : urls[0] ?? '';
}

/**
 * The table `status` prints: NAME RUNTIME STAGE STATE AGE REASON, NAMESPACE first with `-A`, and
 * when some Function has endpoints or Subscriptions (or needs a kind of them the cluster lacks), REACH after STATE (how many of them are
 * ready, of all) and URL after AGE (see {@link urlSummary}).
 */
export function renderTable(reports: readonly FunctionStatusReport[], options: RenderOptions): string {
  const reached = reports.some(r => r.endpoints.length || r.subscriptions.length || r.missingKinds?.length);
  const header = ['NAME', 'RUNTIME', 'STAGE', 'STATE', ...(reached ? ['REACH'] : []), 'AGE', ...(reached ? ['URL'] : []), 'REASON'];
  const rows = reports.map(r => [
    r.name, r.runtime ?? '', r.stage, r.state, ...(reached ? [reachCount(r)] : []), age(r, options.now), ...(reached ? [urlSummary(r)] : []), explanation(r),
  ]);
  return options.allNamespaces
    ? table(['NAMESPACE', ...header], rows.map((row, i) => [reports[i].namespace, ...row]))
    : table(header, rows);
}

/** Options of {@link renderFrame}. */
export interface FrameOptions extends RenderOptions {
  /**
   * The terminal's width: longer lines are cut, so that redrawing in place stays in place.
   *
   * @default - lines are not cut
   */
  readonly columns?: number;
  /**
   * The terminal's height: Functions that do not fit are counted in one line, since a frame
   * taller than the terminal cannot be redrawn in place.
   *
   * @default - every Function has a row
   */
  readonly rows?: number;
  /**
   * When the watch started, for the elapsed time in the last line.
   *
   * @default - no elapsed time
   */
  readonly startedAt?: number;
}

/**
 * One frame of the live display: a row per Function with its steps, and a summary line.
 *
 * @returns the frame's lines, without a trailing newline
 */
export function renderFrame(reports: readonly FunctionStatusReport[], options: FrameOptions): string {
  const header = ['NAME', 'PROGRESS', 'STATE', 'AGE', 'REASON'];
  // Header, rows, blank line, summary, and the line the cursor rests on must fit.
  const room = options.rows && options.rows > 5 ? options.rows - 4 : Infinity;
  const shown = reports.length > room ? reports.slice(0, room - 1) : reports;
  const rows = shown.map(r => [r.name, renderSteps(r.steps), r.state, age(r, options.now), explanation(r)]);
  const body = (options.allNamespaces
    ? table(['NAMESPACE', ...header], rows.map((row, i) => [shown[i].namespace, ...row]))
    : table(header, rows)) + (shown.length < reports.length ? `\n… ${reports.length - shown.length} more` : '');
  const count = (state: ProgressState) => reports.filter(r => r.state === state).length;
  const elapsed = options.startedAt === undefined ? '' : ` ${humanDuration(options.now - options.startedAt)}`;
  const idle = count(ProgressState.IDLE) ? `${count(ProgressState.IDLE)} idle, ` : '';
  const summary = `${reports.length} Function${reports.length === 1 ? '' : 's'}: ${count(ProgressState.READY)} ready, ${idle}`
    + `${count(ProgressState.PROGRESSING)} progressing, ${count(ProgressState.FAILED)} failed${elapsed ? ` (watching${elapsed})` : ''}`;
  const lines = [...body.split('\n'), '', summary];
  const columns = options.columns;
  return (columns && columns > 1 ? lines.map(l => (l.length > columns - 1 ? `${l.slice(0, columns - 2)}…` : l)) : lines).join('\n');
}

/**
 * A time as the watch prints it: ISO 8601 in UTC, to the second (`2026-03-20T09:05:00Z`).
 *
 * @param ms the time in milliseconds since the epoch
 * @internal
 */
export const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** A line of the watch on a pipe: `<time> <namespace>/<name> <stage> <state> <reason>: <message>`. */
export function changeLine(report: FunctionStatusReport, now: number): string {
  return [isoSeconds(now), `${report.namespace}/${report.name}`, report.stage, report.state, explanation(report)].filter(Boolean).join(' ');
}
