/**
 * The construct tree of an app, walked once per synth: every construct in preorder (the order of
 * `node.findAll()`), each subtree a run of that list, and the dependency order of a subtree as
 * cdk8s's `DependencyGraph` gives it. cdk8s builds a DependencyGraph of the whole app for
 * `App.charts` and one per chart for its objects, each walking its tree twice and naming every
 * vertex by its path: with 10,000 Functions, more than the objects' own rendering.
 */
import { DependencyGraph } from 'cdk8s';
import { IConstruct } from 'constructs';
import { _work } from '../api/_work';

/** A canonical array index: a key that JavaScript objects order before every other key. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** The constructs of a tree, in preorder, and where each subtree ends. */
export class ConstructTree {
  /** Every construct of the tree, in preorder. */
  public readonly all: readonly IConstruct[];
  private readonly position = new Map<IConstruct, number>();
  /** For each construct (by position), the position after its subtree. */
  private readonly ends: number[] = [];

  /** @param root the root of the tree, usually the app */
  constructor(private readonly root: IConstruct) {
    const all: IConstruct[] = [];
    const visit = (construct: IConstruct) => {
      const at = all.length;
      all.push(construct);
      this.position.set(construct, at);
      this.ends.push(at + 1);
      // Indexed: once per construct, run cold, where `for...of` steps an iterator.
      const children = construct.node.children;
      for (let i = 0; i < children.length; i++) visit(children[i]);
      this.ends[at] = all.length;
    };
    visit(root);
    this.all = all;
    _work.treeWalks++;
  }

  /**
   * A construct and everything under it, in preorder: `construct.node.findAll()`.
   *
   * @param construct a construct of the tree
   */
  public subtree(construct: IConstruct): readonly IConstruct[] {
    if (construct === this.root) return this.all;
    const start = this.position.get(construct);
    if (start === undefined) return construct.node.findAll();
    return this.all.slice(start, this.ends[start]);
  }

  /**
   * The constructs under a construct, itself included, in the order of cdk8s's
   * `new DependencyGraph(construct.node).topology()`: every construct after those it depends on,
   * else in preorder. Left to cdk8s (with its error) when the dependencies have a cycle, reach
   * out of the tree, or a top-level construct's id is an array index, by which cdk8s's graph,
   * which keys its vertices by path, orders them.
   *
   * @param construct a construct of the tree
   */
  public topology(construct: IConstruct): IConstruct[] {
    const start = this.position.get(construct);
    if (start === undefined || this.root.node.children.some(child => ARRAY_INDEX.test(child.node.id))) {
      return new DependencyGraph(construct.node).topology();
    }
    const end = this.ends[start];
    /** The dependencies of each construct in the subtree that has any, by position: in order, once each. */
    const outbound = new Map<number, number[]>();
    const depended = new Set<number>();
    for (let source = start; source < end; source++) {
      const dependencies = this.all[source].node.dependencies;
      if (!dependencies.length) continue;
      for (const dependency of dependencies) {
        const target = this.position.get(dependency);
        if (target === undefined) return new DependencyGraph(construct.node).topology();
        // cdk8s's graph leaves out dependencies on constructs of other subtrees.
        if (target < start || target >= end) continue;
        let targets = outbound.get(source);
        if (!targets) outbound.set(source, targets = []);
        if (!targets.includes(target)) targets.push(target);
        depended.add(target);
      }
    }
    const order: IConstruct[] = [];
    /** By position from the start: 1 while a construct's dependencies are visited, 2 once it is in the order. */
    const state = new Uint8Array(end - start);
    const visit = (at: number): boolean => {
      const seen = state[at - start];
      if (seen) return seen === 2;
      state[at - start] = 1;
      // Most constructs depend on none: no list, no iterator.
      const targets = outbound.get(at);
      if (targets) for (let i = 0; i < targets.length; i++) if (!visit(targets[i])) return false;
      state[at - start] = 2;
      order.push(this.all[at]);
      return true;
    };
    for (let at = start; at < end; at++) {
      // The constructs nothing depends on are the roots of cdk8s's graph, in preorder.
      if (depended.has(at)) continue;
      if (!visit(at)) return new DependencyGraph(construct.node).topology();
    }
    // A construct left out is on a cycle that nothing outside it depends on.
    if (order.length !== end - start) return new DependencyGraph(construct.node).topology();
    return order;
  }
}
