/**
 * What `apply` reports, as `-o json` prints it: the outcome of each object, of the prune, and of the run.
 */
import { ApplyPhase } from '../_plan';
import { Readiness } from './readiness';

/** What happened to an object. */
export enum ApplyOutcome {
  /** It did not exist (with `--dry-run`: it would be created). */
  CREATED = 'created',
  /** It existed and the apply changed it. */
  CONFIGURED = 'configured',
  /** It existed as applied. */
  UNCHANGED = 'unchanged',
  /** It was applied; whether it changed is not known (it could not be read before). */
  APPLIED = 'applied',
  /** A dry run could not check it: its Namespace or CRD is created by the apply itself. */
  SKIPPED = 'skipped',
  /**
   * The API server refused to change a field that cannot change, and the object opted in to
   * replacement (see `allowReplacement`): it was deleted and created again (with `--dry-run`: it would be).
   */
  REPLACED = 'replaced',
  /** The API server refused it. */
  FAILED = 'failed',
  /** An earlier step failed or timed out. */
  NOT_APPLIED = 'not-applied',
}

/** One object in the report. */
export interface AppliedObject {
  /** The file, relative to the folder. */
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** For namespaced objects: the manifest's namespace, else the one of `-n` or the context. */
  readonly namespace?: string;
  readonly name: string;
  readonly wave: number;
  readonly phase: ApplyPhase;
  readonly outcome: ApplyOutcome;
  /** Why it failed or was skipped. */
  readonly message?: string;
  /** For a kind apply waits for: what was last seen of it. */
  readonly readiness?: Readiness;
}

/** What `--prune` did with one object of the set that the folder no longer holds. */
export interface PrunedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** `pruned` (deleted; with `--dry-run`: would be), `kept` (left, with the reason), or `failed`. */
  readonly outcome: 'pruned' | 'kept' | 'failed';
  /** Why it was kept, or why deleting it failed. */
  readonly message?: string;
}

/** What {@link runApply} did. */
export interface ApplyReport {
  /** True when every object was applied and (with `wait`) every one waited for is ready. */
  readonly ok: boolean;
  readonly dir: string;
  readonly dryRun: boolean;
  readonly wait: boolean;
  readonly fieldManager: string;
  /** How long it took, in seconds. */
  readonly seconds: number;
  /** How many objects had each outcome. */
  readonly counts: { readonly [outcome: string]: number };
  /** Every object, in apply order. */
  readonly objects: readonly AppliedObject[];
  /** The ApplySet the objects were labelled into: its parent (`secrets/<name> -n <namespace>`) and id. */
  readonly applySet: { readonly parent: string; readonly id: string };
  /** With `prune`: the members of the set the folder no longer holds, in the order they were deleted. */
  readonly pruned?: readonly PrunedObject[];
  /** What went wrong, when `ok` is false. */
  readonly error?: string;
  /** True when Ctrl-C (or the caller's interrupt signal) ended the run: the command exits 130. */
  readonly interrupted?: boolean;
}
