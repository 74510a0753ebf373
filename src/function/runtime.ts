/**
 * FunctionRuntime: the language and version a Function runs on.
 */
import { KNOWN_RUNTIMES, RELEASES, ServerlessRelease, releaseFacts } from '../api/release';
import { RUNTIME_FILES, RuntimeFamily, RuntimeFiles, runtimeFamily } from '../api/runtimes';

/**
 * The runtime of a Function (`spec.runtime`).
 *
 * Each release of the stack accepts its own set: 1.11.1 `NODEJS_20`, `NODEJS_22` and
 * `PYTHON_312`; 1.13.0 those and `NODEJS_24`. Synth checks every Function against the release of
 * its stack (`ServerlessStack`'s `release`) and fails for a runtime that release does not have,
 * naming the release that has it. The set is open (`of()`) for the runtimes a later release adds.
 *
 * @see https://kyma-project.io/#/serverless-manager/user/technical-reference/07-10-sample-functions
 * @see https://github.com/kyma-project/serverless/blob/main/docs/user/technical-reference/07-15-runtime-deprecation-schedule.md
 */
export class FunctionRuntime {
  /**
   * Node.js 20, in releases 1.11.1 and 1.13.0.
   *
   * @deprecated Node.js 20 reached its end of life in April 2026 and upstream retires the runtime:
   * use {@link FunctionRuntime.NODEJS_22}, or {@link FunctionRuntime.NODEJS_24} under release 1.13.0.
   */
  public static readonly NODEJS_20 = new FunctionRuntime('nodejs20', RuntimeFamily.NODEJS);
  /** Node.js 22, in releases 1.11.1 and 1.13.0 (end of life November 2026). */
  public static readonly NODEJS_22 = new FunctionRuntime('nodejs22', RuntimeFamily.NODEJS);
  /** Node.js 24, in release 1.13.0 only: under 1.11.1 synth fails, naming the release that has it. */
  public static readonly NODEJS_24 = new FunctionRuntime('nodejs24', RuntimeFamily.NODEJS);
  /** Python 3.12, in releases 1.11.1 and 1.13.0 (end of life March 2027). */
  public static readonly PYTHON_312 = new FunctionRuntime('python312', RuntimeFamily.PYTHON);

  /**
   * Every runtime this class names: those of every release this package deploys, in the order of
   * the newest release's CRD. Which of them a stack accepts depends on its release
   * ({@link FunctionRuntime.releases}).
   */
  public static readonly ALL: FunctionRuntime[] = Object.freeze([
    FunctionRuntime.NODEJS_20, FunctionRuntime.NODEJS_22, FunctionRuntime.NODEJS_24, FunctionRuntime.PYTHON_312,
  ]) as FunctionRuntime[];

  /**
   * A runtime by its name on the wire (`spec.runtime`), such as `nodejs22`.
   *
   * For the names of {@link FunctionRuntime.ALL} (`nodejs20`, `nodejs22`, `nodejs24`, `python312`:
   * the runtimes of the releases this package deploys) `of()` returns the same objects. Another
   * name is only for a later release: `of('nodejs26')` returns a runtime of the Node.js family,
   * but synth checks every Function against the CRD of its stack's release and fails, naming the
   * construct and the runtimes that release allows, until a version of this package deploys a
   * release that lists it. A runtime of another release than the stack's (`nodejs24` under
   * 1.11.1) fails synth too, naming the release that has it.
   *
   * @param name the value of `spec.runtime`
   * @returns the named runtime when there is one, otherwise a new runtime of the family the name implies
   * @throws when the name implies no family (it must start with `nodejs` or `python`)
   */
  public static of(name: string): FunctionRuntime {
    const known = FunctionRuntime.ALL.find(r => r.name === name);
    if (known) return known;
    const family = runtimeFamily(name);
    if (!family) {
      throw new Error(`Unknown runtime '${name}': a runtime name is 'nodejs' or 'python' and a version, such as ${KNOWN_RUNTIMES.map(r => `'${r}'`).join(', ')}`);
    }
    return new FunctionRuntime(name, family);
  }

  /** The files of a source for this runtime (`handler.js` and `package.json`, or `handler.py` and `requirements.txt`). */
  public readonly files: RuntimeFiles;

  private constructor(
    /** The value of `spec.runtime`, such as `nodejs22`. */
    public readonly name: string,
    /** The language family. */
    public readonly family: RuntimeFamily,
  ) {
    this.files = RUNTIME_FILES[family];
  }

  /** The releases whose Function CRD accepts this runtime, oldest first (none for a runtime of a later release). */
  public get releases(): ServerlessRelease[] {
    return RELEASES.filter(release => (releaseFacts(release).runtimes as readonly string[]).includes(this.name));
  }

  /**
   * When upstream ended the runtime's life, if it did in the given release (`'April 2026'` for
   * Node.js 20 in 1.13.0).
   *
   * @param release the release
   * @returns the date, or `undefined` while the runtime is supported
   */
  public endOfLife(release: ServerlessRelease): string | undefined {
    return releaseFacts(release).deprecatedRuntimes[this.name];
  }

  /** The name of the runtime. */
  public toString(): string {
    return this.name;
  }
}
