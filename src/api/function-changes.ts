/**
 * What a change to a Function does in the cluster: a rule of the Function API, written once.
 *
 * The 1.11.1 controller decides from the Function alone what to do when it changes (see its
 * `inlineFnSrcChanged`, `gitFnSrcChanged`, `fnJobChanged` and `equalDeployments`): a new image tag
 * (from the source, the dependencies, the runtime and the base image, or the Git commit) means a
 * new build Job and then a rollout; a change of the Function container (env, resources), of the
 * Pod template (labels, annotations, secret mounts) means a rollout with the same image; replicas
 * and scaling bounds change the number of Pods only. Build resources and Git credentials are used
 * by the next build: the controller starts none for them. `kyma-serverless diff` tells users which
 * of these a change is before it reaches the cluster.
 */
import { changedPaths, isObject } from './_json';

/** What a change to a Function does, from the least to the most disruptive. */
export enum FunctionChangeKind {
  /** Nothing the controller reads changed (annotations of the Function itself, for example). */
  NONE = 'none',
  /** The Function's own labels: the controller relabels its objects; no Pod restarts, no build. */
  METADATA = 'metadata',
  /** Build resources or Git credentials: used by the next build; the controller starts none for them. */
  NEXT_BUILD = 'next-build',
  /** `replicas` or `scaleConfig`: Pods are added or removed (or the HorizontalPodAutoscaler's bounds move); none restarts. */
  RESCALE = 'rescale',
  /** Env, Function resources, Pod labels and annotations, secret mounts: new Pods replace the old ones, with the same image. */
  ROLLOUT = 'rollout',
  /** Source, dependencies, runtime, base image, Git repository, reference or base directory: a build Job, then a rollout. */
  NEW_BUILD = 'new-build',
}

const ORDER: readonly FunctionChangeKind[] = [
  FunctionChangeKind.NONE, FunctionChangeKind.METADATA, FunctionChangeKind.NEXT_BUILD,
  FunctionChangeKind.RESCALE, FunctionChangeKind.ROLLOUT, FunctionChangeKind.NEW_BUILD,
];

/** The fields of a Function and what a change to each does; the first prefix that matches a changed path wins. */
const FIELD_EFFECTS: readonly { readonly path: readonly string[]; readonly kind: FunctionChangeKind; readonly what: string }[] = [
  { path: ['spec', 'source', 'inline', 'source'], kind: FunctionChangeKind.NEW_BUILD, what: 'source' },
  { path: ['spec', 'source', 'inline', 'dependencies'], kind: FunctionChangeKind.NEW_BUILD, what: 'dependencies' },
  { path: ['spec', 'source', 'gitRepository', 'auth'], kind: FunctionChangeKind.NEXT_BUILD, what: 'Git credentials' },
  { path: ['spec', 'source', 'gitRepository', 'reference'], kind: FunctionChangeKind.NEW_BUILD, what: 'Git reference' },
  { path: ['spec', 'source', 'gitRepository', 'baseDir'], kind: FunctionChangeKind.NEW_BUILD, what: 'Git base directory' },
  { path: ['spec', 'source'], kind: FunctionChangeKind.NEW_BUILD, what: 'source' },
  { path: ['spec', 'runtime'], kind: FunctionChangeKind.NEW_BUILD, what: 'runtime' },
  { path: ['spec', 'runtimeImageOverride'], kind: FunctionChangeKind.NEW_BUILD, what: 'base image' },
  { path: ['spec', 'resourceConfiguration', 'build'], kind: FunctionChangeKind.NEXT_BUILD, what: 'build resources' },
  { path: ['spec', 'resourceConfiguration', 'function'], kind: FunctionChangeKind.ROLLOUT, what: 'resources' },
  { path: ['spec', 'env'], kind: FunctionChangeKind.ROLLOUT, what: 'env' },
  { path: ['spec', 'labels'], kind: FunctionChangeKind.ROLLOUT, what: 'Pod labels' },
  { path: ['spec', 'annotations'], kind: FunctionChangeKind.ROLLOUT, what: 'Pod annotations' },
  { path: ['spec', 'secretMounts'], kind: FunctionChangeKind.ROLLOUT, what: 'secretMounts' },
  { path: ['spec', 'replicas'], kind: FunctionChangeKind.RESCALE, what: 'replicas' },
  { path: ['spec', 'scaleConfig'], kind: FunctionChangeKind.RESCALE, what: 'scaleConfig' },
  // A field the controller of 1.11.1 does not know: it may well restart the Pods.
  { path: ['spec'], kind: FunctionChangeKind.ROLLOUT, what: 'spec' },
  { path: ['metadata', 'labels'], kind: FunctionChangeKind.METADATA, what: 'labels' },
];

/** What a change to a Function does, and which of its fields changed. */
export interface FunctionChange {
  /** The most disruptive effect of the changed fields. */
  readonly kind: FunctionChangeKind;
  /** What changed, in words (`source`, `env`), in field order, each once. */
  readonly what: readonly string[];
  /** The changed fields, as dotted paths (`spec.env`, `spec.source.inline.source`). */
  readonly fields: readonly string[];
  /** One sentence for people: `new build (source changed): a build Job makes a new image, then new Pods replace the old ones`. */
  readonly summary: string;
}

const CONSEQUENCES: { readonly [kind in FunctionChangeKind]: string } = {
  [FunctionChangeKind.NONE]: 'nothing changes for the controller',
  [FunctionChangeKind.METADATA]: 'the controller relabels the Function\'s objects; no build, no Pod restarts',
  [FunctionChangeKind.NEXT_BUILD]: 'used by the next build; the controller starts no build for it',
  [FunctionChangeKind.RESCALE]: 'Pods are added or removed; none restarts',
  [FunctionChangeKind.ROLLOUT]: 'new Pods replace the old ones, with the same image',
  [FunctionChangeKind.NEW_BUILD]: 'a build Job makes a new image, then new Pods replace the old ones',
};

const TITLES: { readonly [kind in FunctionChangeKind]: string } = {
  [FunctionChangeKind.NONE]: 'nothing',
  [FunctionChangeKind.METADATA]: 'relabel',
  [FunctionChangeKind.NEXT_BUILD]: 'next build',
  [FunctionChangeKind.RESCALE]: 'rescale',
  [FunctionChangeKind.ROLLOUT]: 'rollout',
  [FunctionChangeKind.NEW_BUILD]: 'new build',
};

/** `new build`, `rollout`: the words for a kind of change. */
export function functionChangeTitle(kind: FunctionChangeKind): string {
  return TITLES[kind];
}

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.every((part, i) => path[i] === part);

/**
 * What changing a Function from one state to another does, judged from the parts the controller
 * reads: `spec` and the Function's labels (which it copies onto its objects). Status and other
 * metadata are left out.
 *
 * @param before the Function as it is (in the cluster, or in the previous manifests)
 * @param after the Function as it will be
 * @returns the most disruptive effect, and what changed
 *
 * @example
 * functionChangeOf(live, dryRun).kind === FunctionChangeKind.NEW_BUILD   // its source changed
 */
export function functionChangeOf(before: unknown, after: unknown): FunctionChange {
  const part = (o: unknown) => ({
    spec: isObject(o) ? o.spec : undefined,
    metadata: { labels: isObject(o) && isObject(o.metadata) ? o.metadata.labels : undefined },
  });
  const paths = changedPaths(part(before), part(after));
  let kind = FunctionChangeKind.NONE;
  const what: string[] = [];
  for (const path of paths) {
    const effect = FIELD_EFFECTS.find(e => startsWith(path, e.path));
    if (!effect) continue;
    if (ORDER.indexOf(effect.kind) > ORDER.indexOf(kind)) kind = effect.kind;
    if (!what.includes(effect.what)) what.push(effect.what);
  }
  const changed = what.length ? ` (${what.join(', ')} changed)` : '';
  return { kind, what, fields: paths.map(p => p.join('.')), summary: `${TITLES[kind]}${changed}: ${CONSEQUENCES[kind]}` };
}
