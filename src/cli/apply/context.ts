/**
 * What the parts of one `apply` run share: the plan and its objects' states, the cluster and its
 * client, the folder's ApplySet, the clock and the lines of progress.
 */
import { ApplySet } from '../_applyset';
import { Cluster } from '../_kube';
import { PlanResolver } from '../_objects';
import { ApplyPlan } from '../_plan';
import { Discovery, RestClient } from '../_rest';
import { ApplyIo } from './options';
import { Progress } from './output';
import { ObjectState, RunSettings } from './plan';
import { RunClock } from './retries';

/** One run, as its waves and its prune see it. */
export interface RunContext {
  readonly plan: ApplyPlan;
  readonly settings: RunSettings;
  /** Every planned object, in apply order. */
  readonly states: ObjectState[];
  readonly cluster: Cluster;
  readonly client: RestClient;
  readonly discovery: Discovery;
  /** Which resource serves each kind, and which namespace each object goes to. */
  readonly resolver: PlanResolver;
  /** The folder's ApplySet: its parent and the label of its members. */
  readonly applySet: ApplySet;
  readonly io: ApplyIo;
  readonly clock: RunClock;
  readonly progress: Progress;
}
