/**
 * The order of charts in Git: a chart can say which charts must be applied before it. It lives
 * below the Function namespace, which is such a chart, and `GitOpsApp`, which orders its files by it.
 */
import { Chart } from 'cdk8s';

/**
 * A chart that must be applied after other charts. `FunctionNamespace` is one (after its stack).
 *
 * `chart.addDependency(other)` orders files too, but cdk8s then makes every object of one chart
 * depend on every object of the other, which costs time and memory quadratic in the objects;
 * `GitOpsApp` orders the files by this instead.
 */
export interface IAppliedAfter {
  /** The charts whose files must come first. */
  readonly appliedAfter: Chart[];
}
