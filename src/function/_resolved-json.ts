/**
 * What cdk8s's `ApiObject.toJson` makes of an object's data, `sanitizeValue(resolve([], data))`,
 * for the data a KymaFunction renders, without cdk8s's generic walk: that walk asks every
 * resolver of the app about every value, with a new context and key path for each, and costs
 * more than everything else a Function's output takes (a third of writing 10,000 Functions).
 *
 * It answers only for data whose result it knows for certain: under the app's built-in
 * resolvers alone, strings, numbers, booleans, `null` and `undefined`, arrays without holes,
 * plain objects, cdk8s `Lazy` values and union values (the generated classes of quantities:
 * `{ value }`). For anything else (a token with `resolve()`, an object of another class or
 * realm, a function, a key `__proto__` or `constructor`) it answers {@link UNRESOLVED}, and the
 * caller takes cdk8s's way. The tests compare both ways on generated data.
 */
import { ApiObjectMetadataDefinition, App, ImplicitTokenResolver, Lazy, LazyResolver, NumberStringUnionResolver } from 'cdk8s';
import { IConstruct } from 'constructs';

/** The answer for data this module leaves to cdk8s. */
export const UNRESOLVED: unique symbol = Symbol('unresolved');

/**
 * Whether the app of a construct resolves with cdk8s's built-in resolvers only, in their order,
 * and sorts keys (`CDK8S_DISABLE_SORT` unset): what {@link resolvedJson} does.
 */
export function resolvesAsBuiltIn(construct: IConstruct): boolean {
  if (process.env.CDK8S_DISABLE_SORT) return false;
  const resolvers = (App.of(construct) as App).resolvers;
  return resolvers !== undefined && resolvers.length === 3 && resolvers[0].constructor === LazyResolver
    && resolvers[1].constructor === ImplicitTokenResolver && resolvers[2].constructor === NumberStringUnionResolver;
}

/** What {@link resolvedJson} first makes of a value. */
enum Kind {
  /** `null` or `undefined`: dropped from maps. */
  ABSENT,
  /** A string, number or boolean: kept as it is. */
  SCALAR,
  /** An object: looked into. */
  OBJECT,
  /** A function, symbol or big integer: left to cdk8s. */
  OTHER,
}

function kindOf(value: unknown): Kind {
  if (value === null || value === undefined) return Kind.ABSENT;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return Kind.SCALAR;
    case 'object':
      return Kind.OBJECT;
    default:
      return Kind.OTHER;
  }
}

/** A list resolvedJson takes as a list: an Array without a `value` (NumberStringUnionResolver would replace the list with a string or number one). */
function isPlainList(list: readonly unknown[] & { readonly value?: unknown }): boolean {
  return Object.getPrototypeOf(list) === Array.prototype && list.value === undefined;
}

/**
 * `sanitizeValue(resolve([], value, object), { sortKeys: true })` of cdk8s under its built-in
 * resolvers: tokens resolved, `null` and `undefined` dropped from maps (and written as
 * `undefined` in lists), keys sorted. With `dropEmpty`, what `filterEmptyArrays` and
 * `filterEmptyObjects` add, as cdk8s renders metadata: empty lists and maps dropped too.
 *
 * @param value the data
 * @param dropEmpty whether empty lists and maps are dropped
 * @returns the JSON, or {@link UNRESOLVED} when the data holds something cdk8s would treat otherwise
 */
export function resolvedJson(value: unknown, dropEmpty = false): unknown {
  const kind = kindOf(value);
  if (kind !== Kind.OBJECT) return kind === Kind.ABSENT ? undefined : kind === Kind.SCALAR ? value : UNRESOLVED;
  const object = value as { readonly [key: string]: unknown };
  if (object instanceof Lazy) return resolvedJson(object.produce(), dropEmpty);
  // An implicit token (ImplicitTokenResolver).
  if (typeof object.resolve === 'function') return UNRESOLVED;
  if (Array.isArray(object)) {
    if (!isPlainList(object)) return UNRESOLVED;
    if (dropEmpty && !object.length) return undefined;
    const result = new Array<unknown>(object.length);
    for (let i = 0; i < object.length; i++) {
      if (!(i in object)) return UNRESOLVED;
      const item = resolvedJson(object[i], dropEmpty);
      if (item === UNRESOLVED) return UNRESOLVED;
      result[i] = item;
    }
    return result;
  }
  if (Object.prototype.hasOwnProperty.call(object, 'constructor')) return UNRESOLVED;
  if (object.constructor !== Object) {
    // A union value of a generated class (NumberStringUnionResolver): `{ value }`.
    const union = object.value;
    return typeof union === 'string' || typeof union === 'number' ? { value: union } : UNRESOLVED;
  }
  // A map as resolve() takes it, which sanitizeValue() takes too: only one of this realm, straight from Object.
  if (Object.getPrototypeOf(object) !== Object.prototype) return UNRESOLVED;
  const keys = sortedKeys(object);
  const result: { [key: string]: unknown } = {};
  let kept = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === '__proto__') return UNRESOLVED;
    const item = resolvedJson(object[key], dropEmpty);
    if (item === UNRESOLVED) return UNRESOLVED;
    if (item !== undefined) {
      result[key] = item;
      kept++;
    }
  }
  return dropEmpty && !kept ? undefined : result;
}

/**
 * Whether {@link resolvedJson} takes data as it is: it holds no token (no `Lazy`, nothing with a
 * `resolve()`) and nothing it leaves to cdk8s or gives in another shape, only scalars, lists
 * without holes, plain maps, and union values of the given classes (generated classes whose
 * instances hold `value` alone, which it gives as `{ value }`: the same fields). Walked without
 * building anything.
 *
 * @param value the data
 * @param unions the prototypes of the union classes the data may hold
 */
export function holdsNoToken(value: unknown, unions: ReadonlySet<object>): boolean {
  const kind = kindOf(value);
  if (kind !== Kind.OBJECT) return kind !== Kind.OTHER;
  const object = value as { readonly [key: string]: unknown };
  // An implicit token (resolvedJson asks before anything else); a Lazy is no plain map nor union, below.
  if (typeof object.resolve === 'function') return false;
  if (Array.isArray(object)) {
    if (!isPlainList(object)) return false;
    for (let i = 0; i < object.length; i++) {
      if (!(i in object)) return false;
      const item = object[i];
      // A string, the commonest value, is taken here rather than by a call.
      if (typeof item !== 'string' && !holdsNoToken(item, unions)) return false;
    }
    return true;
  }
  const prototype = Object.getPrototypeOf(object);
  if (prototype !== Object.prototype) {
    if (!unions.has(prototype) || (typeof object.value !== 'string' && typeof object.value !== 'number')) return false;
    const keys = Object.keys(object);
    return keys.length === 1 && keys[0] === 'value' && !Object.prototype.hasOwnProperty.call(object, 'constructor');
  }
  // A plain map, which resolvedJson takes as a map (not a union) only without these.
  if (Object.prototype.hasOwnProperty.call(object, 'constructor') || object.constructor !== Object) return false;
  for (const key in object) {
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    if (key === '__proto__') return false;
    const item = object[key];
    if (typeof item !== 'string' && !holdsNoToken(item, unions)) return false;
  }
  return true;
}

/**
 * Whether JSON is what {@link resolvedJson} gives back as it is: scalars, lists without holes or
 * `undefined`, and plain maps (straight from Object) without `null` or `undefined` values, whose
 * keys are in sorted order. A map with a key that starts with a digit, which JavaScript may put
 * before the others, does not count.
 *
 * @param value the JSON
 */
export function inResolvedForm(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return true;
    case 'object':
      if (value === null) return false;
      break;
    default:
      return false;
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return false;
      const item: unknown = value[i];
      // A string, the commonest value, is taken here rather than by a call.
      if (typeof item !== 'string' && !inResolvedForm(item)) return false;
    }
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  let previous: string | undefined;
  // Own keys in the order of Object.keys (a plain object's prototype has no enumerable keys, which for...in would visit after).
  for (const key in value as object) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
    const first = key.charCodeAt(0);
    if ((first >= 48 && first <= 57) || key === '__proto__' || (previous !== undefined && !(previous < key))) return false;
    const item = (value as { readonly [key: string]: unknown })[key];
    if (typeof item !== 'string' && !inResolvedForm(item)) return false;
    previous = key;
  }
  return true;
}

/** The fields cdk8s's ApiObjectMetadataDefinition keeps (private in its types), that its `toJson` renders. */
interface MetadataFields {
  readonly name?: unknown;
  readonly namespace?: unknown;
  readonly labels?: unknown;
  readonly annotations?: unknown;
  readonly finalizers?: unknown;
  readonly ownerReferences?: unknown;
  readonly _additionalAttributes?: unknown;
}

/** The own fields of cdk8s's ApiObjectMetadataDefinition: those above, and the object it belongs to. */
const METADATA_FIELDS: ReadonlySet<string> = new Set(['name', 'namespace', 'labels', 'annotations', 'finalizers', 'ownerReferences', 'apiObject', '_additionalAttributes']);

/**
 * cdk8s's `metadata.toJson()` under its built-in resolvers, without its generic walk: the same
 * data (`{ ...additional attributes, name, namespace, annotations, finalizers, ownerReferences,
 * labels }`), resolved and sanitized with empty lists and maps dropped, keys sorted.
 *
 * @param metadata the metadata of an API object of an app that {@link resolvesAsBuiltIn}
 * @returns the JSON, or {@link UNRESOLVED} when the metadata holds something cdk8s would treat
 * otherwise, or its fields are not those of the cdk8s this module was written for
 */
export function metadataJson(metadata: ApiObjectMetadataDefinition): unknown {
  // A field this module does not know might be one that toJson renders: cdk8s renders it then.
  // (Indexed loops here and below: every object's metadata comes this way, run cold, where `for...of` steps an iterator.)
  const fieldNames = Object.keys(metadata);
  for (let i = 0; i < fieldNames.length; i++) if (!METADATA_FIELDS.has(fieldNames[i])) return UNRESOLVED;
  const fields = metadata as unknown as MetadataFields;
  const { labels, annotations, finalizers, ownerReferences, _additionalAttributes: additional } = fields;
  if (!isPlainMap(labels) || !isPlainMap(annotations) || !isPlainMap(additional) || !Array.isArray(finalizers) || !Array.isArray(ownerReferences)) {
    return UNRESOLVED;
  }
  const usual = usualMetadataJson(fields);
  if (usual !== NOT_USUAL) return usual;
  // Copied key by key: the attributes are a map cdk8s deleted a key from, which V8 spreads slowly.
  const data: { [key: string]: unknown } = {};
  const keys = Object.keys(additional);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === '__proto__') return UNRESOLVED;
    data[key] = (additional as { readonly [key: string]: unknown })[key];
  }
  Object.assign(data, { name: fields.name, namespace: fields.namespace, annotations, finalizers, ownerReferences, labels });
  return resolvedJson(data, true);
}

/** The fields metadataJson sets over the additional attributes. */
const RENDERED_FIELDS: ReadonlySet<string> = new Set(['name', 'namespace', 'annotations', 'finalizers', 'ownerReferences', 'labels']);

/** The answer of {@link usualMetadataJson} for metadata it leaves to the general way. */
const NOT_USUAL: unique symbol = Symbol('not usual');

/**
 * What {@link metadataJson} gives of the usual metadata, without building its data and walking it
 * with resolvedJson: no attributes but those the fields replace, no finalizers and owners (empty
 * plain lists), a name and a namespace that are strings (or absent), and labels and annotations that are maps of strings.
 * The same checks as resolvedJson's on each, in the same key order: `{ annotations, labels, name,
 * namespace }`, each dropped when empty or absent. {@link NOT_USUAL} for anything else.
 */
function usualMetadataJson(fields: MetadataFields): unknown {
  const { name, namespace, finalizers, ownerReferences, _additionalAttributes: additional } = fields;
  // cdk8s keeps the fields it was given among the attributes too (name, namespace, labels): the fields below replace them.
  const keys = Object.keys(additional as object);
  for (let i = 0; i < keys.length; i++) if (!RENDERED_FIELDS.has(keys[i])) return NOT_USUAL;
  if (!isEmptyPlainList(finalizers) || !isEmptyPlainList(ownerReferences)) return NOT_USUAL;
  if ((name !== undefined && name !== null && typeof name !== 'string') || (namespace !== undefined && namespace !== null && typeof namespace !== 'string')) {
    return NOT_USUAL;
  }
  const annotations = stringMapJson(fields.annotations);
  if (annotations === NOT_USUAL) return NOT_USUAL;
  const labels = stringMapJson(fields.labels);
  if (labels === NOT_USUAL) return NOT_USUAL;
  const json: { [key: string]: unknown } = {};
  let kept = 0;
  if (annotations !== undefined) json.annotations = annotations, kept++;
  if (labels !== undefined) json.labels = labels, kept++;
  if (typeof name === 'string') json.name = name, kept++;
  if (typeof namespace === 'string') json.namespace = namespace, kept++;
  return kept ? json : undefined;
}

/** Whether resolvedJson, dropping empty lists, drops a value as an empty list: an Array of this realm, without `value` or `resolve()`. */
function isEmptyPlainList(value: unknown): boolean {
  if (!Array.isArray(value) || value.length || value instanceof Lazy) return false;
  return typeof (value as { readonly resolve?: unknown }).resolve !== 'function' && isPlainList(value);
}

/**
 * `resolvedJson(map, true)` of a plain map whose values are all strings (the map with its keys
 * sorted, or `undefined` when it has none); {@link NOT_USUAL} for any other value.
 */
function stringMapJson(value: unknown): { [key: string]: string } | undefined | typeof NOT_USUAL {
  if (typeof value !== 'object' || value === null || value instanceof Lazy || Array.isArray(value)) return NOT_USUAL;
  const map = value as { readonly [key: string]: unknown };
  if (typeof map.resolve === 'function' || Object.prototype.hasOwnProperty.call(map, 'constructor') || map.constructor !== Object
    || Object.getPrototypeOf(map) !== Object.prototype) {
    return NOT_USUAL;
  }
  const keys = sortedKeys(map);
  if (!keys.length) return undefined;
  const result: { [key: string]: string } = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const item = map[key];
    if (key === '__proto__' || typeof item !== 'string') return NOT_USUAL;
    result[key] = item;
  }
  return result;
}

function isPlainMap(value: unknown): value is object {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * `Object.keys(object).sort()`: by UTF-16 code units, as `<` compares strings. Most maps have a
 * few keys, often in order already, which an insertion sort puts in order faster than `sort()`.
 */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > key; j--) keys[j + 1] = keys[j];
    keys[j + 1] = key;
  }
  return keys;
}
