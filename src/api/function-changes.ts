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
import { PACKAGE_REGISTRY_CONFIG_SECRET } from './runtime-contract';
import { changedPaths, isObject } from './_json';
import { ServerlessRelease, releaseFacts } from './release';
import { RuntimeFamily, runtimeFamily } from './runtimes';

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

/** The Secret in a Function's namespace that 1.13.0's runtime images read their package registry from (`.npmrc`, `pip.conf`). */
export const PACKAGE_REGISTRY_SECRET = PACKAGE_REGISTRY_CONFIG_SECRET;

/** The public package registries the runtime images install from by default. */
const PUBLIC_REGISTRY: { readonly [family in RuntimeFamily]: string } = {
  [RuntimeFamily.NODEJS]: 'registry.npmjs.org (npm install)',
  [RuntimeFamily.PYTHON]: 'pypi.org and files.pythonhosted.org (pip install)',
};

/** What moving a Function from one release's controller to another's does to it. */
export interface FunctionReleaseMove {
  readonly from: ServerlessRelease;
  readonly to: ServerlessRelease;
  /** Whether its Pods are replaced. */
  readonly restarts: boolean;
  /** What happens to it, a sentence each. */
  readonly happens: readonly string[];
  /** What it needs from then on that it did not need before, a sentence each. */
  readonly needs: readonly string[];
  /** One line for people: what happens, then what it needs. */
  readonly summary: string;
}

/** Whether an inline Function names dependencies to install: entries in package.json, or lines of requirements.txt. */
function hasDependencies(family: RuntimeFamily | undefined, dependencies: unknown): boolean {
  if (typeof dependencies !== 'string' || !dependencies.trim()) return false;
  if (family === RuntimeFamily.PYTHON) return dependencies.split('\n').some(line => line.replace(/#.*/, '').trim() !== '');
  try {
    const json = JSON.parse(dependencies);
    return isObject(json) && isObject(json.dependencies) && Object.keys(json.dependencies).length > 0;
  } catch {
    return true;
  }
}

/**
 * What changing the controller under a running Function from one release to another does to it,
 * judged from the Function alone (the cluster's facts, such as a package registry Secret, are the
 * caller's to add). From 1.11.1 to 1.13.0: the 1.13.0 controller takes over the Function's
 * Deployment and replaces its Pod template, so every Function restarts, on the runtime image
 * instead of a built one; dependencies are installed at every Pod start; `scaleConfig` is no longer
 * the controller's HPA; build resources no longer apply. Back from 1.13.0 to 1.11.1: every Function
 * is built again (into a registry that starts empty), then restarts.
 *
 * @param fn the Function, as the cluster or a folder holds it
 * @param from the release of the controller that runs it now
 * @param to the release of the controller that will run it
 */
export function functionReleaseMoveOf(fn: unknown, from: ServerlessRelease, to: ServerlessRelease): FunctionReleaseMove {
  const spec = isObject(fn) && isObject(fn.spec) ? fn.spec : {};
  const namespace = isObject(fn) && isObject(fn.metadata) ? String(fn.metadata.namespace ?? '') : '';
  const runtime = String(spec.runtime ?? '');
  const family = runtimeFamily(runtime);
  const [before, after] = [releaseFacts(from), releaseFacts(to)];
  const happens: string[] = [];
  const needs: string[] = [];
  if (from === to || before.buildsImages === after.buildsImages) {
    return { from, to, restarts: false, happens, needs, summary: 'nothing changes for it' };
  }
  const inline = isObject(spec.source) && isObject(spec.source.inline) ? spec.source.inline : undefined;
  const git = isObject(spec.source) && isObject(spec.source.gitRepository) ? spec.source.gitRepository : undefined;
  const scale = isObject(spec.scaleConfig) ? spec.scaleConfig : undefined;
  const scales = scale !== undefined && scale.minReplicas !== scale.maxReplicas;
  const build = isObject(spec.resourceConfiguration) && spec.resourceConfiguration.build !== undefined;
  if (before.buildsImages) {
    const image = typeof spec.runtimeImageOverride === 'string' && spec.runtimeImageOverride
      ? spec.runtimeImageOverride : `the ${runtime} runtime image of ${to}`;
    happens.push(`Pods restarted: the ${to} controller takes over its Deployment and runs ${image}, with no build`);
    if (git) happens.push(`its Pods clone ${git.url ?? 'the repository'} at every start (an init container), at the commit the controller resolves`);
    else if (inline && hasDependencies(family, inline.dependencies)) happens.push('its dependencies are installed at every Pod start, which makes each start slower');
    happens.push('its Pods run as user 1000 with a read-only root file system: only /tmp is writable');
    if (scales) happens.push('`scale` is a HorizontalPodAutoscaler written beside the Function (the controller writes none), which replaces the controller\'s');
    if (build) happens.push('its build resources no longer apply: nothing builds');
    if (after.deprecatedRuntimes[runtime]) happens.push(`${runtime} is deprecated in ${to} (end of life ${after.deprecatedRuntimes[runtime]}): move to a newer runtime`);
    if (git) needs.push(`egress from its Pods and from the controller to ${git.url ?? 'the Git server'}`);
    if ((inline && hasDependencies(family, inline.dependencies)) || git) {
      needs.push(`egress from its Pods to ${family ? PUBLIC_REGISTRY[family] : 'the package registry'}, or a mirror named in the Secret `
        + `${PACKAGE_REGISTRY_SECRET}${namespace ? ` in ${namespace}` : ''}`);
    }
  } else {
    happens.push(`a build Job builds its image into the registry (which starts empty), then new Pods replace the old ones`);
    happens.push('its dependencies are installed once, at build time');
    if (scales) happens.push('`scale` is the controller\'s HorizontalPodAutoscaler again');
    needs.push('a build: the registry, and the build Job\'s resources in its namespace (LimitRange, ResourceQuota)');
  }
  const summary = `${happens.join('; ')}${needs.length ? `. Needs: ${needs.join('; ')}` : ''}`;
  return { from, to, restarts: true, happens, needs, summary };
}
