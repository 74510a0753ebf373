/**
 * What `apply` writes: a line for each thing it does (on standard output, or on standard error
 * when standard output gets the JSON or YAML report), the closing line, the report (`report.ts`),
 * and the message of a run that ends early, saying what it left undone.
 */
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../../api';
import { ApplySetParent, parentLabel } from '../_applyset';
import { targetLabel } from '../_objects';
import { OutputStream, humanDuration } from '../status';
import { ObjectState, RunSettings, notApplied } from './plan';
import { ReadinessState } from './readiness';
import { AppliedObject, ApplyOutcome, ApplyReport, PrunedObject } from './report';

/** The width of the first column: outcomes (`configured`), `waiting`, `ready`. */
const OUTCOME_WIDTH = ApplyOutcome.CONFIGURED.length + 2;

/** `0.4s`, `12.5s`, then as the status command writes durations: `1m05s`. */
export const took = (ms: number) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : humanDuration(ms));

/** The lines of progress of one run. */
export class Progress {
  /**
   * @param io the run's streams
   * @param json whether standard output gets a JSON or YAML report: the lines then go to standard error
   */
  constructor(private readonly io: { readonly stdout: OutputStream; readonly stderr: OutputStream }, private readonly json: boolean) {}

  /** A line of its own: a step's title, the closing line. */
  public log(text: string): void {
    (this.json ? this.io.stderr : this.io.stdout).write(`${text}\n`);
  }

  /** A line about one object: `  configured  Deployment kyma-system/web`. */
  public line(what: string, text: string): void {
    this.log(`  ${what.padEnd(OUTCOME_WIDTH)}${text}`);
  }
}

/** What a run did, for its report. */
export interface RunRecord {
  readonly dir: string;
  readonly settings: RunSettings;
  readonly states: readonly ObjectState[];
  /** What prune did; the report holds this list when the run was asked to prune. */
  readonly pruned: PrunedObject[];
  readonly applySet: ApplySetParent;
  readonly startedAt: number;
  /** The run's clock. */
  readonly io: { readonly now: () => number };
}

/**
 * The report of a run; when it succeeded, also writes the closing line (with a count of each
 * outcome) and, for Functions applied, where to follow them.
 */
export function applyReport(run: RunRecord, progress: Progress, error: string | undefined, interrupted = false): ApplyReport {
  const { settings } = run;
  const objects: AppliedObject[] = run.states.map(s => ({
    file: s.planned.file,
    apiVersion: s.planned.object.apiVersion,
    kind: s.planned.object.kind,
    ...(s.namespace ?? s.planned.object.metadata.namespace ? { namespace: s.namespace ?? s.planned.object.metadata.namespace } : {}),
    name: s.planned.object.metadata.name,
    wave: s.planned.wave,
    phase: s.planned.phase,
    outcome: s.outcome,
    ...(s.message ? { message: s.message } : {}),
    ...(s.readiness ? { readiness: s.readiness } : {}),
  }));
  const counts: { [outcome: string]: number } = {};
  for (const outcome of Object.values(ApplyOutcome)) {
    const n = objects.filter(o => o.outcome === outcome).length;
    if (n) counts[outcome] = n;
  }
  const seconds = Math.round((run.io.now() - run.startedAt) / 100) / 10;
  if (!error) {
    const pruned = run.pruned.filter(p => p.outcome === 'pruned').length;
    const tally = [...Object.entries(counts).map(([outcome, n]) => `${n} ${outcome}`), ...(settings.prune ? [`${pruned} pruned`] : [])]
      .join(', ');
    progress.log(`${settings.dryRun ? 'Dry run of' : 'Applied'} ${objects.length} object${objects.length === 1 ? '' : 's'} in ${took(run.io.now() - run.startedAt)}: ${tally}.`);
    followFunctions(run, progress);
  }
  return {
    ok: !error, dir: run.dir, dryRun: settings.dryRun, wait: settings.wait, fieldManager: settings.fieldManager, seconds, counts, objects,
    applySet: { parent: parentLabel(run.applySet), id: run.applySet.id },
    ...(settings.prune ? { pruned: run.pruned } : {}),
    ...(error ? { error } : {}),
    ...(interrupted ? { interrupted } : {}),
  };
}

/** Points to `status --watch` for the Functions applied: apply does not wait for their builds. */
function followFunctions(run: RunRecord, progress: Progress): void {
  if (run.settings.dryRun) return;
  const functions = run.states.filter(s => s.planned.object.apiVersion === FUNCTION_API_VERSION && s.planned.object.kind === FUNCTION_KIND
    && s.outcome !== ApplyOutcome.UNCHANGED && s.outcome !== ApplyOutcome.SKIPPED);
  if (!functions.length) return;
  const namespaces = [...new Set(functions.map(s => s.namespace))];
  const where = namespaces.length === 1 ? `-n ${namespaces[0]}` : '-A';
  progress.log(`The Function Controller rolls the Functions out now (under 1.11.1 it builds them first); apply does not wait for them. Follow them with: kyma-serverless status ${where} --watch`);
}

/** How far prune got, for the message of a run that ends early. */
export interface PruneProgress {
  /** Whether the run was asked to prune. */
  readonly asked: boolean;
  /** Whether prune began deleting: until then, nothing was deleted. */
  readonly started: boolean;
  /** What prune did so far. */
  readonly pruned: readonly PrunedObject[];
}

/**
 * What an error leaves undone, added to its message: what was not applied, and that prune deleted nothing.
 *
 * @param apiServerFailed whether a request was tried again during the run
 */
export function withNotDone(error: string, states: readonly ObjectState[], prune: PruneProgress, apiServerFailed: boolean): string {
  const parts = [error];
  const rest = notApplied(states);
  if (rest && !error.includes(rest) && !error.startsWith('Nothing was applied')) parts.push(rest);
  if (prune.asked && !prune.started) parts.push('--prune did not run: nothing was deleted');
  // After a fault (the API server unreachable, overloaded, not answering), the way on is the same command.
  if (apiServerFailed) parts.push('The API server was failing: apply again once it answers, to go on from here (what is applied stays applied)');
  return parts.join('\n');
}

/** Ctrl-C: what was applied, what was not, and that nothing more will be deleted. */
export function interruptedMessage(states: readonly ObjectState[], prune: PruneProgress): string {
  const done = states.filter(s => s.outcome !== ApplyOutcome.NOT_APPLIED && s.outcome !== ApplyOutcome.FAILED).length;
  const parts = [`Interrupted: ${done} of ${states.length} object${states.length === 1 ? '' : 's'} applied`];
  const rest = notApplied(states);
  if (rest) parts.push(rest);
  if (prune.asked) {
    parts.push(prune.started
      ? `--prune was stopped: ${prune.pruned.filter(p => p.outcome === 'pruned').length} object(s) deleted; the ApplySet keeps the rest for the next --prune`
      : '--prune did not run: nothing was deleted');
  }
  parts.push('Apply again to go on from here: what is applied stays applied');
  return parts.join('\n');
}

/**
 * The timeout's message: what is not ready and why, what was not applied, and where to look.
 *
 * @param timeoutMs the run's `--timeout`
 * @param unserved the kind a custom resource was waiting to be served, if one was
 * @param failing how the API server was failing when the run timed out, if it was
 */
export function timedOutMessage(
  timeoutMs: number, states: readonly ObjectState[], unserved: string | undefined, failing: string | undefined,
): string {
  const notReady = states.filter(s => s.readiness && s.readiness.state !== ReadinessState.READY);
  const parts: string[] = [];
  if (notReady.length) parts.push(`not ready:\n${notReady.map(s => `  ${targetLabel(s)}: ${s.readiness!.message}`).join('\n')}`);
  if (unserved) parts.push(`still waiting for ${unserved}`);
  if (failing) parts.push(failing);
  const rest = notApplied(states);
  if (rest) parts.push(rest);
  if (notReady.length) {
    // The objects of one namespace (or cluster-scoped ones), for one kubectl command.
    const namespace = notReady[0].namespace;
    const names = notReady.filter(s => s.namespace === namespace).slice(0, 3)
      .map(s => `${s.planned.object.kind.toLowerCase()}/${s.planned.object.metadata.name}`);
    parts.push(`Find out why: kubectl describe${namespace ? ` -n ${namespace}` : ''} ${names.join(' ')}`
      + `${namespace ? `, kubectl get events -n ${namespace}` : ''}`);
  }
  return `Timed out after ${timeoutMs < 1000 ? `${timeoutMs}ms` : humanDuration(timeoutMs)}${parts.length ? `; ${parts.join('\n')}` : ''}`;
}
