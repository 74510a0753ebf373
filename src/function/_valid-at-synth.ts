/**
 * The Functions that each app's KymaFunctions validated at synth, so that a GitOpsApp's check of
 * its output does not check them again: kept per app (by its root construct), by namespace and
 * name, with the release they were checked against and what the rules read of them.
 */
import { isDeepStrictEqual } from 'node:util';
import { IConstruct } from 'constructs';
import { ServerlessRelease } from '../api/release';
import { isObject } from '../api/_json';
import { _work } from '../api/_work';

type Json = { readonly [key: string]: unknown };

/** A Function validated at synth: the object, as it was validated, and the release. */
interface Validated {
  readonly release: ServerlessRelease;
  readonly object: Json;
}

/** By app, namespace and name (each as `String` gives it). */
const VALID_AT_SYNTH = new WeakMap<IConstruct, Map<string, Map<string, Validated>>>();

/** What `validateFunction` reads of a Function: the object with `metadata` cut to its name and namespace. */
function judgedPart(object: Json, metadata: Json): unknown {
  const { name, generateName, namespace } = metadata;
  return { ...object, metadata: { name, generateName, namespace } };
}

/** Each Function object's render that handed over the spec its KymaFunction validated, by the JSON it returned. */
const RENDERED_AS_VALIDATED = new WeakMap<object, IConstruct>();

/**
 * Records that a Function's object rendered this JSON with the very spec its KymaFunction
 * validated (built once for both), handed over to this render alone.
 *
 * @param json what the object's `toJson` returns
 * @param apiObject the object
 * @internal
 */
export function _renderedAsValidated(json: object, apiObject: IConstruct): void {
  RENDERED_AS_VALIDATED.set(json, apiObject);
}

/**
 * Whether an object's `toJson` returned this JSON with the spec its KymaFunction validated (see
 * {@link _renderedAsValidated}).
 *
 * @param json what `apiObject.toJson()` returned
 * @param apiObject the object whose `toJson` returned it
 */
export function renderedAsValidated(json: unknown, apiObject: IConstruct): boolean {
  return typeof json === 'object' && json !== null && RENDERED_AS_VALIDATED.get(json) === apiObject;
}

/**
 * Remembers a Function that passed `validateFunction` while its construct was validated. The
 * object must not change afterwards: its spec may be what the Function's object renders.
 *
 * @param app the root construct of the app
 * @param object the Function, as it was validated
 * @param release the release it was validated against
 */
export function rememberValidFunction(app: IConstruct, object: Json & { readonly metadata: Json }, release: ServerlessRelease): void {
  let valid = VALID_AT_SYNTH.get(app);
  if (!valid) VALID_AT_SYNTH.set(app, valid = new Map());
  const namespace = String(object.metadata.namespace);
  let inNamespace = valid.get(namespace);
  if (!inNamespace) valid.set(namespace, inNamespace = new Map());
  inNamespace.set(String(object.metadata.name), { release, object });
}

/**
 * Whether a Function of an app's output, as it stands, passed `validateFunction` against a release
 * at synth already: what the rules read of it equals what they read of the Function its construct
 * validated against that release. When its spec is the very object that was validated (its
 * object's render took it over, see {@link renderedAsValidated}), only the caller can tell that
 * nothing changed it since: without `unchanged` the answer is no.
 *
 * @param app the root construct of the app
 * @param object a Function of its output
 * @param release the release its output is checked against
 * @param unchanged whether the object is as its `toJson` returned it, which nothing else has held
 */
export function wasValidAtSynth(app: IConstruct, object: unknown, release: ServerlessRelease, unchanged = false): boolean {
  if (!isObject(object) || !isObject(object.metadata)) return false;
  const validated = VALID_AT_SYNTH.get(app)?.get(String(object.metadata.namespace))?.get(String(object.metadata.name));
  if (validated === undefined || validated.release !== release) return false;
  const judged = validated.object;
  if (object.spec !== judged.spec) {
    _work.functionComparisons++;
    return sameData(judgedPart(judged, judged.metadata as Json), judgedPart(object, object.metadata));
  }
  // The same spec, unchanged: what else the rules read of the object (all of it but the metadata they do not read).
  const [a, b] = [judged.metadata as Json, object.metadata];
  return unchanged && sameFields(judged, object) && sameData(a.name, b.name) && sameData(a.generateName, b.generateName) && sameData(a.namespace, b.namespace);
}

/** Whether two objects have the same keys, and the same values under each but `metadata` and `spec`. */
function sameFields(a: Json, b: Json): boolean {
  let keys = 0;
  for (const key in a) {
    if (!Object.prototype.hasOwnProperty.call(b, key) || (key !== 'metadata' && key !== 'spec' && !sameData(a[key], b[key]))) return false;
    keys++;
  }
  for (const _key in b) keys--;
  return keys === 0;
}

/**
 * `isDeepStrictEqual` for plain JSON data (objects of no other prototype, arrays, primitives), in
 * a quarter of its time: a rendered Function is such data. Symbol keys are not compared (no rule
 * reads them); objects of other classes are left to `isDeepStrictEqual`.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b);
  if (a === b) return true;
  const prototype = Object.getPrototypeOf(a);
  if (prototype !== Object.getPrototypeOf(b)) return false;
  if (prototype === Array.prototype) {
    const [x, y] = [a as unknown[], b as unknown[]];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameData(x[i], y[i]) || (x[i] === undefined && (i in x) !== (i in y))) return false;
    return true;
  }
  if (prototype !== Object.prototype && prototype !== null) return isDeepStrictEqual(a, b);
  let keys = 0;
  for (const key in a) {
    if (!Object.prototype.hasOwnProperty.call(b, key) || !sameData((a as Json)[key], (b as Json)[key])) return false;
    keys++;
  }
  for (const _key in b) keys--;
  return keys === 0;
}
