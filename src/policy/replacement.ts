/**
 * Changes the API server refuses to make in place, and the way through each: written once, for
 * the check of `kyma-serverless synth` (the new output against the previous one), for
 * `kyma-serverless diff` (which recognizes them in the answer of a server-side dry run) and for
 * `kyma-serverless apply` (which replaces an object that opted in).
 *
 * Some fields cannot change once an object exists: a PersistentVolumeClaim cannot shrink, a
 * Deployment's selector, a Job's Pod template, a CRD's scope are fixed. A sync that changes one
 * fails in the middle: Argo CD needs `Replace=true,Force=true` on the object to delete and
 * create it instead, Flux the annotation `kustomize.toolkit.fluxcd.io/force: enabled`. An object
 * opts in with {@link allowReplacement} (constructs of this package through a prop, such as
 * `Registry.internal({ replaceStorage: true })`), and what the replacement costs is said with it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from 'cdk8s';
import { isObject } from '../api/_json';
import { parseQuantity } from '../api/quantity';
// Types only: what reads manifest files loads when an output is read (not when a construct opts in).
import type * as ManifestFiles from './_manifest-files';

/** The annotation of Argo CD's per-object sync options (as `SYNC_OPTIONS_ANNOTATION` of the GitOps layer). */
const ARGO_CD_SYNC_OPTIONS = 'argocd.argoproj.io/sync-options';

/** The Argo CD sync options that delete and create an object the API server refuses to change. */
export const ARGO_CD_REPLACE_SYNC_OPTIONS: readonly string[] = ['Replace=true', 'Force=true'];

/** The Flux annotation that recreates an object whose change touches an immutable field. */
export const FLUX_FORCE_ANNOTATION = { key: 'kustomize.toolkit.fluxcd.io/force', value: 'enabled' } as const;

type Json = { readonly [key: string]: any };

/** A value at a dotted path. */
function at(object: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), object);
}

/** `apps/Deployment`, `/Service`. */
function groupKindOf(object: Json | undefined): string {
  const apiVersion = String(object?.apiVersion ?? '');
  return `${apiVersion.includes('/') ? apiVersion.split('/')[0] : ''}/${object?.kind}`;
}

/** A field whose change the API server refuses, with its two values when they are known. */
export interface ImmutableFieldChange {
  /** The field, as the API server names it (`spec.resources.requests.storage`). */
  readonly field: string;
  /** Its value before (from the previous manifest); undefined when not known. */
  readonly before?: unknown;
  /** Its value after. */
  readonly after?: unknown;
}

/** One cause of a 422 Invalid answer, as the API server lists it in `details.causes`. */
export interface StatusCause {
  readonly reason?: string;
  readonly field?: string;
  readonly message?: string;
}

/** A kind of change the API server refuses to make in place. */
export interface ImmutableFieldRule {
  /** A stable id, such as `pvc-storage-decrease`. */
  readonly id: string;
  /** The kinds it applies to, as `group/Kind` (`/PersistentVolumeClaim`, `apps/Deployment`). */
  readonly kinds: readonly string[];
  /** What the API server refuses, in its words. */
  readonly refusal: string;
  /** What deleting and creating an object of these kinds costs, unless an opt-in says more. */
  readonly cost: string;
  /**
   * The refused change between two versions of an object's manifest, if there is one.
   *
   * @internal
   */
  readonly _detect: (before: Json, after: Json) => ImmutableFieldChange | undefined;
  /**
   * Whether a cause of the API server's 422 answer is this rule's.
   *
   * @internal
   */
  readonly _matches: (cause: StatusCause) => boolean;
}

const changed = (before: Json, after: Json, field: string): ImmutableFieldChange | undefined => {
  const [b, a] = [at(before, field), at(after, field)];
  return isDeepStrictEqual(b, a) ? undefined : { field, before: b, after: a };
};

const without = (value: unknown, keys: readonly string[]) =>
  (isObject(value) ? Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k))) : value);

const causeIs = (field: RegExp, message: RegExp) => (cause: StatusCause) => field.test(cause.field ?? '') && message.test(cause.message ?? '');

const WORKLOADS = ['apps/Deployment', 'apps/ReplicaSet', 'apps/DaemonSet', 'apps/StatefulSet'];
const STATEFUL_SET_MUTABLE = [
  'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds', 'selector',
];
const STORAGE_CLASS_FIXED = ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode'];

/**
 * The changes the API server refuses to make in place (Kubernetes 1.27 and later), each with its
 * cost when the object is deleted and created instead. Messages are the API server's own.
 */
export const IMMUTABLE_FIELD_RULES: readonly ImmutableFieldRule[] = [
  {
    id: 'pvc-storage-decrease',
    kinds: ['/PersistentVolumeClaim'],
    refusal: 'spec.resources.requests.storage: Forbidden: field can not be less than previous value',
    cost: 'its volume and every byte on it are deleted, unless the PersistentVolume\'s reclaim policy is Retain',
    _detect: (before, after) => {
      const field = 'spec.resources.requests.storage';
      const [b, a] = [at(before, field), at(after, field)];
      const [bytesBefore, bytesAfter] = [parseQuantity(String(b)), parseQuantity(String(a))];
      return bytesBefore !== undefined && bytesAfter !== undefined && bytesAfter < bytesBefore ? { field, before: b, after: a } : undefined;
    },
    _matches: causeIs(/^spec\.resources\.requests\.storage$/, /less than previous value/),
  },
  {
    id: 'pvc-spec',
    kinds: ['/PersistentVolumeClaim'],
    refusal: 'spec: Forbidden: spec is immutable after creation except resources.requests for bound claims',
    cost: 'its volume and every byte on it are deleted, unless the PersistentVolume\'s reclaim policy is Retain',
    _detect: (before, after) => {
      // A class the manifest did not name is the cluster's default, which only a dry run knows.
      const classBefore = at(before, 'spec.storageClassName');
      if (classBefore !== undefined && classBefore !== at(after, 'spec.storageClassName')) return changed(before, after, 'spec.storageClassName');
      const rest = (o: Json) => ({
        spec: without(o.spec, ['storageClassName', 'volumeName', 'resources']), resources: without(o.spec?.resources, ['requests']),
      });
      return isDeepStrictEqual(rest(before), rest(after)) ? undefined : { field: 'spec', before: rest(before), after: rest(after) };
    },
    _matches: causeIs(/^spec$/, /spec is immutable after creation/),
  },
  {
    id: 'workload-selector',
    kinds: WORKLOADS,
    refusal: 'spec.selector: Invalid value: ...: field is immutable',
    cost: 'its Pods are deleted with it: the workload is down until the new Pods are ready',
    _detect: (before, after) => changed(before, after, 'spec.selector'),
    _matches: causeIs(/^spec\.selector$/, /field is immutable/),
  },
  {
    id: 'statefulset-spec',
    kinds: ['apps/StatefulSet'],
    refusal: 'spec: Forbidden: updates to statefulset spec for fields other than \'replicas\', \'ordinals\', \'template\', \'updateStrategy\', '
      + '\'persistentVolumeClaimRetentionPolicy\' and \'minReadySeconds\' are forbidden',
    cost: 'its Pods are deleted with it (the PersistentVolumeClaims of its volumeClaimTemplates stay, unless its retention policy deletes them)',
    _detect: (before, after) => {
      const rest = (o: Json) => without(o.spec, STATEFUL_SET_MUTABLE);
      return isDeepStrictEqual(rest(before), rest(after)) ? undefined : { field: 'spec', before: rest(before), after: rest(after) };
    },
    _matches: causeIs(/^spec$/, /updates to statefulset spec for fields other than/),
  },
  {
    id: 'job-template',
    kinds: ['batch/Job'],
    refusal: 'spec.template: Invalid value: ...: field is immutable',
    cost: 'the Job runs again',
    _detect: (before, after) => changed(before, after, 'spec.template') ?? changed(before, after, 'spec.selector')
      ?? changed(before, after, 'spec.completions') ?? changed(before, after, 'spec.completionMode'),
    _matches: causeIs(/^spec\.(template|selector|completions|completionMode)$/, /field is immutable/),
  },
  {
    id: 'service-cluster-ip',
    kinds: ['/Service'],
    refusal: 'spec.clusterIPs[0]: Invalid value: ...: may not change once set',
    cost: 'its cluster IP changes: clients that resolved the old one reconnect',
    _detect: (before, after) => {
      const [b, a] = [at(before, 'spec.clusterIP'), at(after, 'spec.clusterIP')];
      return b !== undefined && b !== '' && b !== a ? { field: 'spec.clusterIP', before: b, after: a } : undefined;
    },
    _matches: causeIs(/^spec\.clusterIPs?(\[\d+\])?$/, /may not change once set|field is immutable/),
  },
  {
    id: 'immutable-data',
    kinds: ['/ConfigMap', '/Secret'],
    refusal: 'data: Forbidden: field is immutable when `immutable` is set',
    cost: 'Pods that use it see the new one only once they restart',
    _detect: (before, after) => {
      if (before.immutable !== true) return undefined;
      return changed(before, after, 'data') ?? changed(before, after, 'binaryData') ?? changed(before, after, 'stringData')
        ?? changed(before, after, 'immutable');
    },
    _matches: causeIs(/^(data|binaryData|immutable)$/, /field is immutable when `immutable` is set/),
  },
  {
    id: 'secret-type',
    kinds: ['/Secret'],
    refusal: 'type: Invalid value: ...: field is immutable',
    cost: 'Pods that use it see the new one only once they restart',
    _detect: (before, after) => {
      const [b, a] = [before.type ?? 'Opaque', after.type ?? 'Opaque'];
      return b === a ? undefined : { field: 'type', before: b, after: a };
    },
    _matches: causeIs(/^type$/, /field is immutable/),
  },
  {
    id: 'crd-scope',
    kinds: ['apiextensions.k8s.io/CustomResourceDefinition'],
    refusal: 'spec.scope: Invalid value: ...: field is immutable',
    cost: 'every custom resource of the kind, in the whole cluster, is deleted with it',
    _detect: (before, after) => changed(before, after, 'spec.scope'),
    _matches: causeIs(/^spec\.scope$/, /field is immutable/),
  },
  {
    id: 'priority-class-value',
    kinds: ['scheduling.k8s.io/PriorityClass'],
    refusal: 'value: Forbidden: may not be changed in an update.',
    cost: 'none for running Pods (they keep the priority they were admitted with); Pods created while it is missing are refused',
    _detect: (before, after) => changed(before, after, 'value'),
    _matches: causeIs(/^value$/, /may not be changed in an update/),
  },
  {
    id: 'role-ref',
    kinds: ['rbac.authorization.k8s.io/RoleBinding', 'rbac.authorization.k8s.io/ClusterRoleBinding'],
    refusal: 'roleRef: Invalid value: ...: cannot change roleRef',
    cost: 'its subjects lack the role\'s permissions between the delete and the create',
    _detect: (before, after) => changed(before, after, 'roleRef'),
    _matches: causeIs(/^roleRef$/, /cannot change roleRef/),
  },
  {
    id: 'storage-class',
    kinds: ['storage.k8s.io/StorageClass'],
    refusal: 'parameters: Forbidden: updates to parameters are forbidden.',
    cost: 'none for existing volumes; claims created while it is missing stay Pending',
    _detect: (before, after) => STORAGE_CLASS_FIXED.map(field => changed(before, after, field)).find(Boolean),
    _matches: causeIs(new RegExp(`^(${STORAGE_CLASS_FIXED.join('|')})$`), /forbidden|immutable/i),
  },
];

/** Any other field the API server calls immutable: recognized in its answer only. */
const ANY_IMMUTABLE_FIELD: ImmutableFieldRule = {
  id: 'immutable-field',
  kinds: [],
  refusal: 'field is immutable',
  cost: 'whatever the object holds is deleted with it',
  _detect: () => undefined,
  _matches: cause => /field is immutable|may not change once set|may not be changed|is immutable/.test(cause.message ?? ''),
};

/**
 * How an object of this package's constructs opts in to being replaced, and what that costs: the
 * synth check and `diff` name the prop to set, and say what is lost.
 */
export interface ReplacementOptIn {
  /** Whether an object is the one this opt-in is for. */
  readonly matches: (object: Json) => boolean;
  /** The prop that opts in, as the user writes it: `Registry.internal({ replaceStorage: true })`. */
  readonly prop: string;
  /** What replacing it costs, beyond the rule's own cost. */
  readonly cost: string;
}

/** A change the API server will refuse, and the way through it. */
export interface RefusedChange {
  /** The rule's id (see {@link IMMUTABLE_FIELD_RULES}; `immutable-field` for others the API server names). */
  readonly rule: string;
  /** The field, and its values where known. */
  readonly change: ImmutableFieldChange;
  /** What the API server answers (its message, when the change was sent; the rule's words otherwise). */
  readonly refusal: string;
  /** Whether the object opted in to replacement (it carries the Argo CD and Flux annotations). */
  readonly replacementAllowed: boolean;
  /** The prop or call that opts the object in. */
  readonly optIn: string;
  /** What deleting and creating the object costs. */
  readonly cost: string;
  /** The ways through, one sentence each. */
  readonly wayThrough: readonly string[];
}

/** Whether an object carries both the Argo CD sync options and the Flux annotation that replace it. */
export function allowsReplacement(object: unknown): boolean {
  const annotations = (isObject(object) && isObject(object.metadata) && isObject(object.metadata.annotations)
    ? object.metadata.annotations : {}) as { [key: string]: unknown };
  const options = String(annotations[ARGO_CD_SYNC_OPTIONS] ?? '').split(',').map(o => o.trim());
  return ARGO_CD_REPLACE_SYNC_OPTIONS.every(o => options.includes(o)) && annotations[FLUX_FORCE_ANNOTATION.key] === FLUX_FORCE_ANNOTATION.value;
}

/**
 * Lets GitOps engines, and `kyma-serverless apply`, replace an object when a change touches a
 * field the API server refuses to change: adds `Replace=true,Force=true` to its Argo CD sync
 * options and `kustomize.toolkit.fluxcd.io/force: enabled`. Replacing deletes the object and
 * creates it again: what it holds is lost (a PersistentVolumeClaim's data). Set it for the sync
 * that needs it; with it, Argo CD replaces the object on every sync that changes it.
 *
 * @param object the object, such as `ApiObject.of(deployment)` of a cdk8s-plus Deployment
 * @see https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#replace-resource-instead-of-applying-changes
 * @see https://fluxcd.io/flux/components/kustomize/kustomizations/#force
 */
export function allowReplacement(object: ApiObject): void {
  const existing = String(object.metadata.toJson().annotations?.[ARGO_CD_SYNC_OPTIONS] ?? '');
  const options = existing.split(',').map(o => o.trim()).filter(Boolean);
  for (const option of ARGO_CD_REPLACE_SYNC_OPTIONS) if (!options.includes(option)) options.push(option);
  object.metadata.addAnnotation(ARGO_CD_SYNC_OPTIONS, options.join(','));
  object.metadata.addAnnotation(FLUX_FORCE_ANNOTATION.key, FLUX_FORCE_ANNOTATION.value);
}

/** `persistentvolumeclaim/data -n team-a`, for a kubectl command. */
function kubectlTarget(object: Json): string {
  const namespace = object.metadata?.namespace;
  return `${String(object.kind).toLowerCase()}/${object.metadata?.name}${namespace ? ` -n ${namespace}` : ''}`;
}

function refused(
  rule: ImmutableFieldRule, change: ImmutableFieldChange, refusal: string, object: Json, optIns: readonly ReplacementOptIn[],
): RefusedChange {
  const optIn = optIns.find(o => o.matches(object));
  const optInText = optIn?.prop ?? `allowReplacement() on the construct's ApiObject (import { allowReplacement } from 'cdk8s-kyma-serverless')`;
  const annotations = `${ARGO_CD_SYNC_OPTIONS}: ${ARGO_CD_REPLACE_SYNC_OPTIONS.join(',')} `
    + `and ${FLUX_FORCE_ANNOTATION.key}: ${FLUX_FORCE_ANNOTATION.value}`;
  return {
    rule: rule.id,
    change,
    refusal,
    replacementAllowed: allowsReplacement(object),
    optIn: optInText,
    cost: optIn ? `${rule.cost}; ${optIn.cost}` : rule.cost,
    wayThrough: [
      `opt in to replacing it: ${optInText} writes ${annotations}, so that Argo CD, Flux and kyma-serverless apply delete it and create it again`,
      `or delete it yourself before the sync: kubectl delete ${kubectlTarget(object)}, then sync (or kyma-serverless apply)`,
      'or keep the field as it is in the cluster',
    ],
  };
}

/**
 * The changes between two versions of an object's manifest that every cluster refuses.
 *
 * @param before the object as the previous output has it
 * @param after the object as the new output has it
 * @param optIns how this package's constructs opt in, to name the prop
 * @returns the refused changes, none when the API server takes the change
 */
export function refusedChanges(before: unknown, after: unknown, optIns: readonly ReplacementOptIn[] = []): RefusedChange[] {
  if (!isObject(before) || !isObject(after)) return [];
  const groupKind = groupKindOf(after);
  if (groupKind !== groupKindOf(before)) return [];
  return IMMUTABLE_FIELD_RULES.filter(rule => rule.kinds.includes(groupKind)).flatMap(rule => {
    const change = rule._detect(before, after);
    return change ? [refused(rule, change, rule.refusal, after, optIns)] : [];
  });
}

/**
 * The refused change an API server's answer reports, when it refused an object for an immutable
 * field: a 422 Invalid whose causes name one (as a server-side dry run answers too).
 *
 * @param object the object that was sent
 * @param code the HTTP status of the answer
 * @param body the answer's Status body
 * @param optIns how this package's constructs opt in, to name the prop
 * @returns the refused change, or undefined when the answer is about something else
 */
export function refusedChangeOfAnswer(
  object: unknown, code: number | undefined, body: unknown, optIns: readonly ReplacementOptIn[] = [],
): RefusedChange | undefined {
  if (code !== 422 || !isObject(object) || !isObject(body)) return undefined;
  const causes = (isObject(body.details) && Array.isArray(body.details.causes) ? body.details.causes : []) as StatusCause[];
  const groupKind = groupKindOf(object);
  const rules = [...IMMUTABLE_FIELD_RULES.filter(r => r.kinds.includes(groupKind)), ANY_IMMUTABLE_FIELD];
  for (const rule of rules) {
    const cause = causes.find(c => rule._matches(c));
    if (cause) {
      // The API server's words without the Go dumps of the values it adds (of a whole Pod template, for a Job).
      const words = String(cause.message ?? '').split('\n')[0].replace(/(Invalid value: )(.{40,}): ([^:]+)$/, '$1...: $3');
      const refusal = `${cause.field ? `${cause.field}: ` : ''}${words}`;
      return refused(rule, { field: cause.field ?? '' }, refusal, object, optIns);
    }
  }
  return undefined;
}

/** A refused change between two outputs of synth: where, and which object. */
export interface RefusedOutputChange extends RefusedChange {
  /** The file of the new output, relative to the output folder (`dev/0000-serverless.k8s.yaml`). */
  readonly file: string;
  /** `PersistentVolumeClaim kyma-system/serverless-docker-registry`. */
  readonly object: string;
}

/** The manifest files under a folder, relative to it, with their text. */
function readTree(dir: string): Map<string, string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { manifestFiles } = require('./_manifest-files') as typeof ManifestFiles;
  return new Map(manifestFiles(dir, true).map(file => [path.relative(dir, file), fs.readFileSync(file, 'utf8')]));
}

/** The objects of files, by folder (every folder is one cluster's), then by identity. */
function objectsByFolder(files: readonly (readonly [string, string])[]): Map<string, Map<string, { readonly file: string; readonly object: Json }>> {
  const folders = new Map<string, Map<string, { file: string; object: Json }>>();
  for (const [file, text] of files) {
    const folder = path.dirname(file);
    const objects = folders.get(folder) ?? new Map<string, { file: string; object: Json }>();
    folders.set(folder, objects);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    for (const { object } of (require('./_manifest-files') as typeof ManifestFiles).parseManifests(text)) {
      if (!isObject(object) || !isObject(object.metadata)) continue;
      objects.set(`${groupKindOf(object)}|${object.metadata.namespace ?? ''}|${object.metadata.name}`, { file, object });
    }
  }
  return folders;
}

/**
 * The changes from one output of synth to the next that every cluster refuses, folder by folder
 * (`dist/`, `dist/dev/`: one environment each), for objects in both. Files equal in both are not
 * read: what they hold did not change.
 *
 * @param previousDir the output as it is (the previous synth's)
 * @param nextDir the new output
 * @param optIns how this package's constructs opt in, to name the prop
 */
export function refusedOutputChanges(previousDir: string, nextDir: string, optIns: readonly ReplacementOptIn[] = []): RefusedOutputChange[] {
  const [before, after] = [readTree(previousDir), readTree(nextDir)];
  const previous = objectsByFolder([...before].filter(([file, text]) => after.get(file) !== text));
  const changes: RefusedOutputChange[] = [];
  for (const [folder, objects] of objectsByFolder([...after].filter(([file, text]) => before.get(file) !== text))) {
    for (const [identity, { file, object }] of objects) {
      const was = previous.get(folder)?.get(identity);
      if (!was) continue;
      const namespace = object.metadata?.namespace;
      const label = `${object.kind} ${namespace ? `${namespace}/` : ''}${object.metadata?.name}`;
      for (const change of refusedChanges(was.object, object, optIns)) changes.push({ ...change, file, object: label });
    }
  }
  return changes;
}
