/**
 * The plan of one `apply` run, known before it sends anything: the folder's objects in the order
 * of their steps (`planApply` in `../_plan.ts` orders them), each with what became of it so far,
 * and what the options ask of the run.
 */
import { CliError } from '../errors';
import { ObjectTarget } from '../_objects';
import { ApplyPlan, DEFAULT_FIELD_MANAGER, stepTitle } from '../_plan';
import { ApplyOptions } from './options';
import { Readiness } from './readiness';
import { ApplyOutcome } from './report';

/** The live state of one planned object. */
export interface ObjectState extends ObjectTarget {
  outcome: ApplyOutcome;
  message?: string;
  readiness?: Readiness;
  /** The object as the API server last returned it. */
  live?: any;
  /** Whether it failed because the API server failed (unreachable, overloaded) after every retry, not because of the object. */
  fault?: boolean;
}

/** Every object of a plan in apply order, none applied yet. */
export function objectStates(plan: ApplyPlan): ObjectState[] {
  return plan.steps.flatMap(step => step.objects.map(planned => ({ planned, outcome: ApplyOutcome.NOT_APPLIED })));
}

/** What the options ask of a run, with their defaults. */
export interface RunSettings {
  /** The field manager of every apply. */
  readonly fieldManager: string;
  /** Whether every request is a dry run. */
  readonly dryRun: boolean;
  /** Whether the run waits after each step (never in a dry run). */
  readonly wait: boolean;
  /** Whether the run prunes once everything is applied. */
  readonly prune: boolean;
  /** Whether applies take over fields of other field managers. */
  readonly forceConflicts: boolean;
}

/** The settings of a run with these options. */
export function runSettings(options: ApplyOptions): RunSettings {
  const dryRun = options.dryRun ?? false;
  return {
    fieldManager: options.fieldManager ?? DEFAULT_FIELD_MANAGER,
    dryRun,
    wait: (options.wait ?? true) && !dryRun,
    prune: !!options.prune,
    forceConflicts: !!options.forceConflicts,
  };
}

/** `not applied: 2 objects of wave 0, custom resources`; empty when every object was sent. */
export function notApplied(states: readonly ObjectState[]): string {
  const rest = states.filter(s => s.outcome === ApplyOutcome.NOT_APPLIED);
  if (!rest.length) return '';
  const steps = [...new Set(rest.map(s => stepTitle(s.planned)))];
  return `not applied: ${rest.length} object${rest.length === 1 ? '' : 's'} of ${steps.join('; ')}`;
}

/**
 * A folder without a Namespace names no ApplySet of its own: the default parent would be in the
 * context's namespace, shared by every such folder, and pruning one would delete the other's objects.
 *
 * @throws CliError when `prune` is asked for such a folder without `applyset`
 */
export function requireApplySetForPrune(plan: ApplyPlan, options: Pick<ApplyOptions, 'prune' | 'applyset'>): void {
  if (!options.prune || options.applyset || plan.steps.some(s => s.objects.some(p => p.group === '' && p.object.kind === 'Namespace'))) return;
  throw new CliError(`${plan.dir} holds no Namespace to keep its ApplySet parent in: name the parent with --applyset (such as `
    + '--applyset my-app), one for each folder you apply into the cluster, so that pruning one folder never deletes another\'s objects');
}
