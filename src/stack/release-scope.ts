/**
 * How constructs find the release of the stack they belong to, without holding the stack.
 *
 * A `ServerlessStack` and a `FunctionNamespace` mark themselves with their release. A Function
 * takes the release of its FunctionNamespace; outside one, the release of the app's stacks when
 * they agree on one; otherwise the default. Functions are checked and rendered by it.
 */
import { IConstruct } from 'constructs';
import { DEFAULT_RELEASE, ServerlessRelease } from '../api/release';

const RELEASE_SYMBOL = Symbol.for('cdk8s-kyma-serverless.release');

/** The releases of the stacks of each app, by its root construct. */
const STACK_RELEASES = new WeakMap<IConstruct, Set<ServerlessRelease>>();

/** What each app (by its root construct) calls when a stack of it is created. */
const STACK_LISTENERS = new WeakMap<IConstruct, (() => void)[]>();

/**
 * Calls a listener whenever a stack is created in the construct's app, which may change the
 * release of constructs outside any FunctionNamespace or stack: what a construct whose children
 * depend on its release listens to, so that its tree is decided before synth.
 *
 * @param construct any construct of the app
 * @param listener what to call, after the stack has marked its release
 * @internal
 */
export function _onStackRelease(construct: IConstruct, listener: () => void): void {
  const root = construct.node.root;
  const listeners = STACK_LISTENERS.get(root) ?? [];
  STACK_LISTENERS.set(root, listeners);
  listeners.push(listener);
}

/**
 * Marks a construct as deciding the release of what it holds.
 *
 * @param construct a ServerlessStack or FunctionNamespace
 * @param release its release
 * @param stack whether the construct is a stack (the app's stacks decide for Functions outside any namespace)
 * @internal
 */
export function _markRelease(construct: IConstruct, release: ServerlessRelease, stack: boolean): void {
  Object.defineProperty(construct, RELEASE_SYMBOL, { value: release });
  if (!stack) return;
  const root = construct.node.root;
  STACK_RELEASES.set(root, (STACK_RELEASES.get(root) ?? new Set()).add(release));
  for (const listener of STACK_LISTENERS.get(root) ?? []) listener();
}

function markedRelease(construct: IConstruct): ServerlessRelease | undefined {
  return (construct as unknown as { [RELEASE_SYMBOL]?: ServerlessRelease })[RELEASE_SYMBOL];
}

/**
 * The release a construct runs under: that of the nearest enclosing construct marked with one
 * (a FunctionNamespace, a ServerlessStack); else that of the app's stacks, when they all deploy
 * the same release; else {@link DEFAULT_RELEASE}.
 *
 * Call it once construction is done (in a validation or a renderer): a stack created after a
 * Function still counts.
 *
 * @param construct any construct of the app
 * @returns the release
 */
export function releaseOf(construct: IConstruct): ServerlessRelease {
  // From the construct up to the root, by parent: no list of its scopes is built (every Function asks, more than once).
  for (let scope: IConstruct | undefined = construct; scope; scope = scope.node.scope) {
    const release = markedRelease(scope);
    if (release) return release;
  }
  const stacks = STACK_RELEASES.get(construct.node.root);
  return stacks?.size === 1 ? stacks.values().next().value! : DEFAULT_RELEASE;
}
