/**
 * The runtimes of the Function API and the environment variables the controller reserves.
 *
 * What each release accepts is a fact of the release: `releaseFacts(release).runtimes` and
 * `.reservedEnvNames`. The constants here are those of 1.11.1, the default release.
 */
import { ServerlessRelease, releaseFacts } from './release';

/**
 * The runtimes the 1.11.1 Function CRD accepts, in the CRD's order (a test holds it equal to
 * `releaseFacts(ServerlessRelease.V1_11_1).runtimes`). For another release, use `releaseFacts(release).runtimes`.
 */
export const RUNTIMES = ['nodejs20', 'nodejs22', 'python312'] as const;

/** A runtime of the 1.11.1 Function API, as it appears on the wire (`spec.runtime`); see `KnownRuntimeName` for every release's. */
export type RuntimeName = typeof RUNTIMES[number];

/** The language family of a runtime: it decides the handler and dependencies file names. */
export enum RuntimeFamily {
  NODEJS = 'nodejs',
  PYTHON = 'python',
}

/** The files of a Function's source: the controller stores them under these names. */
export interface RuntimeFiles {
  /** The handler, which exports `main(event, context)`. */
  readonly handler: string;
  /** The dependencies file. */
  readonly dependencies: string;
  /** Extensions of other source files of the language, which an inline source cannot carry. */
  readonly sourceExtensions: string[];
}

/** The source files of each runtime family. */
export const RUNTIME_FILES: { readonly [F in RuntimeFamily]: RuntimeFiles } = {
  [RuntimeFamily.NODEJS]: { handler: 'handler.js', dependencies: 'package.json', sourceExtensions: ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'] },
  [RuntimeFamily.PYTHON]: { handler: 'handler.py', dependencies: 'requirements.txt', sourceExtensions: ['.py'] },
};

const NODEJS_RUNTIME = /^nodejs\d+$/;
const PYTHON_RUNTIME = /^python\d+$/;

/** Tells the family of a runtime name, or `undefined` for a name we do not know. */
export function runtimeFamily(runtime: string): RuntimeFamily | undefined {
  // Expressions made once: each check of a Function asks, several times.
  if (NODEJS_RUNTIME.test(runtime)) return RuntimeFamily.NODEJS;
  if (PYTHON_RUNTIME.test(runtime)) return RuntimeFamily.PYTHON;
  return undefined;
}

/**
 * Environment variable names the 1.11.1 Function CRD rejects in `spec.env`, because the controller
 * sets them on every Function container. For another release, use `releaseFacts(release).reservedEnvNames`.
 */
export const RESERVED_ENV_NAMES: readonly string[] = releaseFacts(ServerlessRelease.V1_11_1).reservedEnvNames;
