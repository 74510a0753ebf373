import { App, DependencyGraph } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import * as fc from 'fast-check';
import { ConstructTree } from '../../src/gitops/_tree';

/** A tree of constructs from parent indices (each parent comes before its children), with dependencies between them. */
function tree(parents: readonly number[], dependencies: ReadonlyArray<readonly [number, number]>, ids: (i: number) => string = i => `c${i}`): App {
  const app = new App();
  const constructs: IConstruct[] = [app];
  parents.forEach((parent, i) => constructs.push(new Construct(constructs[parent % constructs.length], ids(i))));
  for (const [source, target] of dependencies) constructs[source % constructs.length].node.addDependency(constructs[target % constructs.length]);
  return app;
}

const paths = (constructs: readonly IConstruct[]) => constructs.map(c => c.node.path);

/** Trees of up to 30 constructs, with dependencies that follow a random order of the constructs (no cycles). */
const acyclic = fc.array(fc.nat(), { maxLength: 30 }).chain(parents => {
  const indices = Array.from({ length: parents.length + 1 }, (_, i) => i);
  return fc.tuple(
    fc.constant(parents),
    fc.shuffledSubarray(indices, { minLength: indices.length, maxLength: indices.length }),
    fc.array(fc.tuple(fc.nat(parents.length), fc.nat(parents.length)), { maxLength: 20 }),
  ).map(([p, rank, pairs]) => [p, pairs
    .filter(([a, b]) => a !== b)
    .map(([a, b]) => (rank[a] > rank[b] ? [a, b] as const : [b, a] as const))] as const);
});

describe('ConstructTree', () => {
  test('lists every construct in preorder, and every subtree as findAll does', () => {
    fc.assert(fc.property(acyclic, ([parents, dependencies]) => {
      const app = tree(parents, dependencies);
      const walked = new ConstructTree(app);
      expect(paths(walked.all)).toEqual(paths(app.node.findAll()));
      for (const construct of app.node.findAll()) expect(paths(walked.subtree(construct))).toEqual(paths(construct.node.findAll()));
    }), { numRuns: 300 });
  });

  test('orders every subtree as cdk8s\'s DependencyGraph does', () => {
    fc.assert(fc.property(acyclic, ([parents, dependencies]) => {
      const app = tree(parents, dependencies);
      const walked = new ConstructTree(app);
      for (const construct of app.node.findAll()) {
        expect(paths(walked.topology(construct))).toEqual(paths(new DependencyGraph(construct.node).topology()));
      }
    }), { numRuns: 300 });
  });

  test('orders top-level constructs with numeric ids as cdk8s does, which orders them by number', () => {
    const app = tree([0, 0, 0, 1], [[4, 2]], i => ['10', 'b', '2', 'x'][i]);
    expect(paths(new ConstructTree(app).topology(app))).toEqual(paths(new DependencyGraph(app.node).topology()));
    expect(paths(new ConstructTree(app).topology(app)).slice(0, 3)).toEqual(['2', '10', '']);
  });

  test('fails on a cycle as cdk8s does', () => {
    const app = tree([0, 0, 1], [[1, 3], [3, 1]]);
    expect(() => new DependencyGraph(app.node).topology()).toThrow(/cycle/);
    expect(() => new ConstructTree(app).topology(app)).toThrow(/cycle/);
    // A cycle that nothing else depends on leaves no construct out of cdk8s's graph either.
    const closed = tree([0, 0], [[1, 2], [2, 1]]);
    expect(() => new ConstructTree(closed).topology(closed)).toThrow(/cycle/);
  });
});
