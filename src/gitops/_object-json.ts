/**
 * What an API object's `toJson()` gives, for the objects of cdk8s's own `ApiObject` class and of
 * cdk8s-plus-27's generated classes (`k8s.KubeDeployment`, ..., which the L2 constructs make), without
 * cdk8s's generic walk of their data: the stack's 60-odd objects spent most of their render in it
 * (`resolve` and `sanitizeValue`, which ask every resolver of the app about every value, each with
 * a new context and key path), run cold.
 *
 * `ApiObject.toJson` resolves `{ ...props, metadata: metadata.toJson() }`, sorts its keys, applies
 * the object's JSON patches and puts `apiVersion`, `kind` and `metadata` first; a generated class
 * then renders that with its `toJson_<Class>Props`. This does the same with the resolver of
 * src/function/_resolved-json.ts, for what it knows for certain: an object without JSON patches but
 * the one that drops the namespace of a cluster-scoped object (`remove /metadata/namespace`), in
 * an app with cdk8s's built-in resolvers only, whose class's `toJson` is the code this module was
 * written for (compared by its text, so another version of cdk8s or cdk8s-plus-27 renders its own
 * way). Anything else (an object of another class, a token the resolver leaves to cdk8s) is
 * rendered by its own `toJson()`. The tests compare both ways on generated objects and on every
 * object of the stack.
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { UNRESOLVED, metadataJson, resolvedJson, resolvesAsBuiltIn } from '../function/_resolved-json';

/** The text of cdk8s's `ApiObject.prototype.toJson` that {@link builtInJson} does the work of. */
const API_OBJECT_TO_JSON = `toJson() {
        try {
            const data = {
                ...this.props,
                metadata: this.metadata.toJson(),
            };
            const sortKeys = process.env.CDK8S_DISABLE_SORT ? false : true;
            const json = (0, _util_1.sanitizeValue)((0, resolve_1.resolve)([], data, this), { sortKeys });
            const patched = json_patch_1.JsonPatch.apply(json, ...this.patches);
            // reorder top-level keys so that we first have "apiVersion", "kind" and
            // "metadata" and then all the rest
            const result = {};
            const orderedKeys = ['apiVersion', 'kind', 'metadata', ...Object.keys(patched)];
            for (const k of orderedKeys) {
                if (k in patched) {
                    result[k] = patched[k];
                }
            }
            return result;
        }
        catch (e) {
            throw new Error(\`Failed serializing construct at path '\${this.node.path}' with name '\${this.name}': \${e}\`);
        }
    }`;

/** The text of a generated class's `toJson`, its name written `CLASS`. */
const GENERATED_TO_JSON = `toJson() {
        const resolved = super.toJson();
        return {
            ...CLASS.GVK,
            ...toJson_CLASSProps(resolved),
        };
    }`;

/** How an object of a class is rendered: `undefined` for a class this module leaves to its own `toJson`. */
interface Rendering {
  /** The class's `apiVersion` and `kind`, which its `toJson` puts first; none for cdk8s's ApiObject. */
  readonly gvk?: { readonly apiVersion: string; readonly kind: string };
  /** What the class renders cdk8s's JSON with; none for cdk8s's ApiObject. */
  readonly toJsonProps?: (resolved: unknown) => unknown;
}

/** The classes that render as this module knows, by prototype; filled on first use. */
let renderings: Map<object, Rendering | undefined> | undefined;

function renderingOf(prototype: object): Rendering | undefined {
  if (!renderings) {
    renderings = new Map();
    // The ApiObject of the cdk8s that cdk8s-plus-27 extends: the one this app's objects are of.
    if (ApiObject.prototype.toJson.toString() === API_OBJECT_TO_JSON) {
      renderings.set(ApiObject.prototype, {});
      for (const [name, value] of Object.entries(k8s)) {
        if (typeof value !== 'function' || !ApiObject.prototype.isPrototypeOf(value.prototype)) continue;
        const toJsonProps = (k8s as unknown as { readonly [name: string]: unknown })[`toJson_${name}Props`];
        const gvk = (value as { readonly GVK?: { apiVersion: string; kind: string } }).GVK;
        const generated = Object.getPrototypeOf(value.prototype) === ApiObject.prototype
          && Object.prototype.hasOwnProperty.call(value.prototype, 'toJson')
          && value.prototype.toJson.toString() === GENERATED_TO_JSON.split('CLASS').join(name);
        if (generated && typeof toJsonProps === 'function' && typeof gvk?.apiVersion === 'string' && typeof gvk.kind === 'string') {
          renderings.set(value.prototype, { gvk, toJsonProps: toJsonProps as (resolved: unknown) => unknown });
        }
      }
    }
  }
  return renderings.get(prototype);
}

/**
 * `object.toJson()`: rendered here for an object of cdk8s's ApiObject or of a generated class of
 * cdk8s-plus-27 (see the module's comment), else by the object itself.
 *
 * @param object the API object
 * @returns its JSON, as its `toJson()` gives it
 */
export function apiObjectJson(object: ApiObject): any {
  const rendering = renderingOf(Object.getPrototypeOf(object));
  const resolved = rendering ? builtInJson(object) : UNRESOLVED;
  if (resolved === UNRESOLVED) return object.toJson();
  return rendering!.toJsonProps ? { ...rendering!.gvk, ...rendering!.toJsonProps(resolved) as object } : resolved;
}

/** Whether a JSON patch is `JsonPatch.remove('/metadata/namespace')`, as the stack's cluster-scoped objects have it. */
function removesNamespace(patch: unknown): boolean {
  if (!(patch instanceof JsonPatch)) return false;
  const operation = (patch as unknown as { _toJson(): unknown })._toJson() as { readonly [key: string]: unknown };
  return typeof operation === 'object' && operation !== null && Object.keys(operation).length === 2
    && operation.op === 'remove' && operation.path === '/metadata/namespace';
}

/** The fields of cdk8s's ApiObject that its `toJson` reads (private in its types). */
interface ApiObjectFields {
  readonly props?: unknown;
  readonly patches?: unknown;
}

/**
 * What cdk8s's `ApiObject.prototype.toJson` returns for the object, or {@link UNRESOLVED} when it
 * holds what the resolver leaves to cdk8s (or has JSON patches, or the app resolvers of its own).
 * It throws what that `toJson` throws, wrapped as it wraps it.
 */
function builtInJson(object: ApiObject): unknown {
  const { props, patches } = object as unknown as ApiObjectFields;
  if (!Array.isArray(patches) || !patches.every(removesNamespace) || typeof props !== 'object' || props === null || !resolvesAsBuiltIn(object)) {
    return UNRESOLVED;
  }
  try {
    const metadata = metadataJson(object.metadata);
    if (metadata === UNRESOLVED) return UNRESOLVED;
    const json = resolvedJson({ ...props, metadata });
    if (json === UNRESOLVED || typeof json !== 'object' || json === null || Array.isArray(json)) return UNRESOLVED;
    const data = json as { readonly [key: string]: unknown };
    if (patches.length) {
      // What the patch does to the sorted JSON (fast-json-patch deletes the key); it fails without metadata, which cdk8s then says.
      if (typeof data.metadata !== 'object' || data.metadata === null || Array.isArray(data.metadata)) return UNRESOLVED;
      delete (data.metadata as { namespace?: unknown }).namespace;
    }
    // `apiVersion`, `kind` and `metadata` first, then the rest in key order, as cdk8s orders them.
    const result: { [key: string]: unknown } = {};
    for (const key of ['apiVersion', 'kind', 'metadata', ...Object.keys(data)]) if (key in data) result[key] = data[key];
    return result;
  } catch (e) {
    throw new Error(`Failed serializing construct at path '${object.node.path}' with name '${object.name}': ${e}`);
  }
}
