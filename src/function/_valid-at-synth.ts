/**
 * The Functions that each app's KymaFunctions validated at synth, so that a GitOpsApp's check of
 * its output does not check them again: kept per app (by its root construct), by namespace and
 * name, with the release they were checked against and what the rules read of them.
 */
import { isDeepStrictEqual } from 'node:util';
import { IConstruct } from 'constructs';
import { ServerlessRelease } from '../api/release';
import { isObject } from '../api/_json';

type Json = { readonly [key: string]: unknown };

const VALID_AT_SYNTH = new WeakMap<IConstruct, Map<string, { readonly release: ServerlessRelease; readonly judged: unknown }>>();

/** What `validateFunction` reads of a Function: the object with `metadata` cut to its name and namespace. */
function judgedPart(object: Json, metadata: Json): unknown {
  const { name, generateName, namespace } = metadata;
  return { ...object, metadata: { name, generateName, namespace } };
}

function keyOf(metadata: Json): string {
  return `${String(metadata.namespace)}/${String(metadata.name)}`;
}

/**
 * Remembers a Function that passed `validateFunction` while its construct was validated. The
 * object must not change afterwards.
 *
 * @param app the root construct of the app
 * @param object the Function, as it was validated
 * @param release the release it was validated against
 */
export function rememberValidFunction(app: IConstruct, object: { readonly metadata: Json }, release: ServerlessRelease): void {
  let valid = VALID_AT_SYNTH.get(app);
  if (!valid) VALID_AT_SYNTH.set(app, valid = new Map());
  valid.set(keyOf(object.metadata), { release, judged: judgedPart(object, object.metadata) });
}

/**
 * Whether a Function of an app's output, as it stands, passed `validateFunction` against a release
 * at synth already: what the rules read of it equals what they read of the Function its construct
 * validated against that release.
 *
 * @param app the root construct of the app
 * @param object a Function of its output
 * @param release the release its output is checked against
 */
export function wasValidAtSynth(app: IConstruct, object: unknown, release: ServerlessRelease): boolean {
  if (!isObject(object) || !isObject(object.metadata)) return false;
  const validated = VALID_AT_SYNTH.get(app)?.get(keyOf(object.metadata));
  return validated !== undefined && validated.release === release && sameData(validated.judged, judgedPart(object, object.metadata));
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
