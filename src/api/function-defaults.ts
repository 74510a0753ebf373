/**
 * What a Function gets when it leaves a field out: the values the controller of the stack's
 * release would otherwise assume silently, written into the object so that `kubectl get -o yaml` shows them.
 * The defaulting webhook applies these; they live here, beside the rules, so that every
 * program that defaults a Function does it the same way.
 */
import { isObject } from './_json';
import { withServerDefaults } from './controller-fixed-point';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from './function-schema';
import { BuildProfile, FunctionProfile } from './profiles';
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from './release';
import { RuntimeFamily, runtimeFamily } from './runtimes';

/** The values {@link defaultFunction} fills in. */
export interface FunctionDefaults {
  /** `spec.replicas` of a Function without it. */
  readonly replicas: number;
  /** `spec.resourceConfiguration.function.profile` of a Function that gives neither a profile nor resources. */
  readonly functionProfile: FunctionProfile;
  /**
   * `spec.resourceConfiguration.build.profile` of a Function that gives neither a build profile nor
   * build resources, in a release that builds images (1.11.1); unused where nothing is built.
   */
  readonly buildProfile: BuildProfile;
}

/** Upstream 1.11.1's implicit values: one replica, the L preset, the normal build preset. */
export const DEFAULT_FUNCTION_DEFAULTS: FunctionDefaults = {
  replicas: 1,
  functionProfile: FunctionProfile.L,
  buildProfile: BuildProfile.NORMAL,
};

/** What inline Node.js dependencies become when blank: the controller writes the same into `package.json`. */
export const EMPTY_NODE_DEPENDENCIES = '{}';

type Json = { [key: string]: unknown };

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (isObject(value) && Object.keys(value).length === 0);
}

/**
 * Drops a `profile` that stands beside `resources` when the previous version of the Function had
 * that very profile and no resources: the Function moved to explicit resources, and the profile is
 * what an earlier defaulting (or the previous manifest) left behind. Neither server-side apply nor
 * `kubectl apply` removes a field its manager never set, so without this a Function whose preset
 * was defaulted could never move to explicit resources ("Use profile or resources").
 */
function withoutLeftoverProfile(config: unknown, previous: unknown): unknown {
  if (!isObject(config) || !isObject(previous) || isEmpty(config.profile) || config.resources === undefined || config.resources === null) return config;
  if (previous.profile !== config.profile || (previous.resources !== undefined && previous.resources !== null)) return config;
  const { profile: _, ...rest } = config;
  return rest;
}

/** Sets `profile` in a resource configuration that names neither a profile nor resources. */
function withProfile(config: unknown, profile: string): unknown {
  if (config !== undefined && config !== null && !isObject(config)) return config;
  const given = config ?? {};
  // Resources count as given even when empty: the CRD forbids a profile beside them.
  if (!isEmpty(given.profile) || (given.resources !== undefined && given.resources !== null)) return config;
  return { ...given, profile };
}

/**
 * Returns a Function with its defaults filled in; the input is not changed.
 *
 * - `spec.replicas`: `defaults.replicas` when absent (the CRD's own default is 1 too);
 * - `spec.resourceConfiguration.function.profile` and, in a release that builds images (1.11.1),
 *   `.build.profile`: the stack's default presets, when the Function names neither a profile nor
 *   resources for that container;
 * - inline Node.js `dependencies`: `{}` when absent or blank;
 * - `env[].valueFrom.fieldRef.apiVersion` and `.resourceFieldRef.divisor`: what the Function's
 *   Deployment holds (see `serverDefaultedFields`: without them the 1.11.1 controller updates the
 *   Deployment for ever).
 *
 * Given the version stored before (an UPDATE), it also drops what an earlier defaulting left that
 * now contradicts the Function: a profile beside resources the Function moved to, the `{}`
 * dependencies of a Node.js Function that became a Python one (pip cannot read `{}`), and, in a
 * release that builds nothing (1.13.0), a build block of only a profile that the stored version
 * holds as well: what 1.11.1's defaulting wrote, which the release ignores and its rules refuse
 * (`buildResources`). A build block the change adds or changes stays, to be refused with the reason.
 *
 * Anything that is not a Function, or whose fields have the wrong types, is returned as it is:
 * defaults never hide a problem that validation reports.
 *
 * @param fn a Function as JSON
 * @param defaults the stack's default values
 * @param previous the Function as stored before this change, on an update
 * @param release the stack's release
 * @returns a defaulted copy (equal to `fn` when there is nothing to fill in), or `fn` itself when it is no Function
 */
export function defaultFunction<T>(
  fn: T, defaults: FunctionDefaults = DEFAULT_FUNCTION_DEFAULTS, previous?: unknown, release: ServerlessRelease = DEFAULT_RELEASE,
): T {
  if (!isObject(fn) || fn.apiVersion !== FUNCTION_API_VERSION || fn.kind !== FUNCTION_KIND || !isObject(fn.spec)) return fn;
  const { buildsImages } = releaseFacts(release);
  const spec: Json = { ...fn.spec };
  const before: Json = isObject(previous) && isObject(previous.spec) ? previous.spec : {};
  dropLeftovers(spec, before);
  if (!buildsImages) dropLeftoverBuild(spec, before);

  if (spec.replicas === undefined || spec.replicas === null) spec.replicas = defaults.replicas;
  if (spec.env !== undefined) spec.env = withServerDefaults(spec.env);

  const resources = spec.resourceConfiguration;
  if (resources === undefined || resources === null || isObject(resources)) {
    const given: Json = resources ?? {};
    const next = {
      ...given,
      function: withProfile(given.function, defaults.functionProfile),
      ...(buildsImages ? { build: withProfile(given.build, defaults.buildProfile) } : {}),
    };
    spec.resourceConfiguration = next;
  }

  const source = spec.source;
  if (typeof spec.runtime === 'string' && runtimeFamily(spec.runtime) === RuntimeFamily.NODEJS && isObject(source) && isObject(source.inline)) {
    const deps = source.inline.dependencies;
    if (deps === undefined || deps === null || (typeof deps === 'string' && deps.trim() === '')) {
      spec.source = { ...source, inline: { ...source.inline, dependencies: EMPTY_NODE_DEPENDENCIES } };
    }
  }
  return { ...fn, spec } as T;
}

/**
 * Drops, in place, a build block of only a profile that the stored version holds as well: in a
 * release that builds nothing, what 1.11.1's defaulting left behind.
 */
function dropLeftoverBuild(spec: Json, before: Json): void {
  const resources = spec.resourceConfiguration;
  const previous = before.resourceConfiguration;
  if (!isObject(resources) || !isObject(previous) || !isObject(resources.build)) return;
  const build = resources.build;
  const onlyProfile = Object.keys(build).length === 1 && typeof build.profile === 'string';
  if (!onlyProfile || !isObject(previous.build) || Object.keys(previous.build).length !== 1 || previous.build.profile !== build.profile) return;
  const { build: _, ...rest } = resources;
  spec.resourceConfiguration = rest;
}

/** Drops, in place, what an earlier defaulting left in `spec` that the change now contradicts. */
function dropLeftovers(spec: Json, before: Json): void {
  const resources = spec.resourceConfiguration;
  const previous = before.resourceConfiguration;
  if (isObject(resources) && isObject(previous)) {
    const next: Json = { ...resources };
    for (const part of ['function', 'build']) {
      if (next[part] !== undefined) next[part] = withoutLeftoverProfile(next[part], previous[part]);
    }
    spec.resourceConfiguration = next;
  }
  const source = spec.source;
  const inline = isObject(source) && isObject(source.inline) ? source.inline : undefined;
  const previousInline = isObject(before.source) && isObject(before.source.inline) ? before.source.inline : undefined;
  if (inline && previousInline && inline.dependencies === EMPTY_NODE_DEPENDENCIES && previousInline.dependencies === EMPTY_NODE_DEPENDENCIES
    && typeof spec.runtime === 'string' && runtimeFamily(spec.runtime) === RuntimeFamily.PYTHON
    && typeof before.runtime === 'string' && runtimeFamily(before.runtime) === RuntimeFamily.NODEJS) {
    const { dependencies: _, ...rest } = inline;
    spec.source = { ...(source as Json), inline: rest };
  }
}
