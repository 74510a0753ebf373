/**
 * FunctionRuntime: the language and version a Function runs on.
 */
import { RUNTIMES, RUNTIME_FILES, RuntimeFamily, RuntimeFiles, runtimeFamily } from '../api';

/**
 * The runtime of a Function (`spec.runtime`). The 1.11.1 CRD this package deploys allows
 * `NODEJS_20`, `NODEJS_22` and `PYTHON_312`; the set is open (`of()`) for the runtimes a later CRD adds.
 *
 * @see https://kyma-project.io/#/serverless-manager/user/technical-reference/07-10-sample-functions
 */
export class FunctionRuntime {
  /** Node.js 20. */
  public static readonly NODEJS_20 = new FunctionRuntime('nodejs20', RuntimeFamily.NODEJS);
  /** Node.js 22. */
  public static readonly NODEJS_22 = new FunctionRuntime('nodejs22', RuntimeFamily.NODEJS);
  /** Python 3.12. */
  public static readonly PYTHON_312 = new FunctionRuntime('python312', RuntimeFamily.PYTHON);

  /** Every runtime this class names, in the CRD's order. */
  public static readonly ALL: readonly FunctionRuntime[] = [FunctionRuntime.NODEJS_20, FunctionRuntime.NODEJS_22, FunctionRuntime.PYTHON_312];

  /**
   * A runtime by its name on the wire (`spec.runtime`), such as `nodejs22`.
   *
   * The Function CRD this package deploys (upstream 1.11.1) allows three runtimes: `nodejs20`,
   * `nodejs22` and `python312`, the ones this class names; for those names `of()` returns the
   * same objects. Another name is only for a newer CRD and controller: `of('nodejs24')` returns a
   * runtime of the Node.js family, but synth checks every Function against the CRD of this package
   * and fails, naming the construct and the allowed names (`'runtime' (spec.runtime): Unsupported
   * value: "nodejs24": supported values: "nodejs20", "nodejs22", "python312"`), until a version of
   * this package ships a CRD that lists it.
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
      throw new Error(`Unknown runtime '${name}': a runtime name is 'nodejs' or 'python' and a version, such as ${RUNTIMES.map(r => `'${r}'`).join(', ')}`);
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

  /** The name of the runtime. */
  public toString(): string {
    return this.name;
  }
}
