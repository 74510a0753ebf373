/**
 * What a change to one object means: the words `kyma-serverless diff` puts beside it. Functions'
 * meaning is the Function API's rule ({@link functionChangeOf}); workloads say whether their Pods
 * restart, Services, webhooks and RBAC what changes in access; orphans what their deletion takes.
 */
import { FUNCTION_GROUP, FUNCTION_KIND, FunctionChangeKind, functionChangeOf } from '../../api';
import { changedPaths, isObject } from '../../api/_json';
import { functionChangeTitle } from '../../api/function-changes';
import { RefusedChange } from '../../policy/replacement';
import { APPLYSET_PART_OF_LABEL } from '../_applyset';
import { parseApiVersion } from '../_rest';

/** What the diff found for one object. */
export enum DiffOutcome {
  /** Not in the cluster: apply creates it. */
  CREATE = 'create',
  /** In the cluster, and apply changes it. */
  CHANGE = 'change',
  /** In the cluster as apply would leave it. */
  UNCHANGED = 'unchanged',
  /** Apply would fail: the API server refuses to change a field in place. */
  REFUSED = 'refused',
  /** In the cluster's ApplySet, no longer in the folder: `apply --prune` deletes it. */
  ORPHANED = 'orphaned',
  /** The dry run failed for another reason (forbidden, invalid, a webhook denied it). */
  FAILED = 'failed',
}

/** The diff of one object. */
export interface ObjectDiff {
  /** The file, relative to the folder; none for orphans. */
  readonly file?: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly outcome: DiffOutcome;
  /** A word or two for the first column: `new build`, `rollout`, `restart`, `access`, `changed`. */
  readonly title: string;
  /** What it means, in a sentence. */
  readonly meaning: string;
  /** For Functions: what the change does (the Function API's rule). */
  readonly functionChange?: FunctionChangeKind;
  /** The fields that change, as dotted paths. */
  readonly fields?: readonly string[];
  /** The fields that change, as YAML lines: `  ` kept for context, `- ` before, `+ ` after. */
  readonly diff?: string;
  /** For a refused change: the field, the API server's words, the ways through and the cost. */
  readonly refused?: RefusedChange;
  /** Fields another field manager owns with other values: apply fails on them without `--force-conflicts`. */
  readonly conflict?: string;
  /** Whether apply adds the object to the folder's ApplySet (its label is new). */
  readonly joinsApplySet?: boolean;
  /** For an orphan apply --prune leaves: why. */
  readonly kept?: string;
  /** Why the dry run failed. */
  readonly message?: string;
}

type Json = { readonly [key: string]: any };

/** Metadata the API server writes on every write: never a change of the manifests. */
const VOLATILE_METADATA = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink'];

/**
 * An object as diff compares it: without status, the metadata the API server writes on every
 * write, and the ApplySet label (reported on its own).
 */
export function comparable(object: unknown): Json {
  if (!isObject(object)) return {};
  const { status: _status, metadata, ...rest } = object;
  const meta = Object.fromEntries(Object.entries(metadata ?? {}).filter(([key]) => !VOLATILE_METADATA.includes(key)));
  if (isObject(meta.labels)) {
    const { [APPLYSET_PART_OF_LABEL]: _member, ...labels } = meta.labels;
    if (Object.keys(labels).length) meta.labels = labels;
    else delete meta.labels;
  }
  return { ...rest, metadata: meta };
}

/** The dotted paths of the leaves in which two values differ; lists are compared whole. */
export function changedFields(before: unknown, after: unknown): string[] {
  return changedPaths(before, after).map(path => path.join('.'));
}

/** A Function's `group/Kind`, as {@link groupKind} gives it. */
const FUNCTION_GROUP_KIND = `${FUNCTION_GROUP}/${FUNCTION_KIND}`;
const groupKind = (object: Json) => `${parseApiVersion(String(object.apiVersion ?? '')).group}/${object.kind}`;
const under = (fields: readonly string[], ...prefixes: string[]) => fields.filter(f => prefixes.some(p => f === p || f.startsWith(`${p}.`)));

/** `get, list on secrets` for each rule of a Role or ClusterRole, to tell granted from revoked. */
function ruleLines(role: Json | undefined): string[] {
  return ((role?.rules ?? []) as Json[]).map(rule => {
    const what = [...(rule.resources ?? []), ...(rule.nonResourceURLs ?? [])].join(', ');
    const groups = (rule.apiGroups ?? []).map((g: string) => (g === '' ? 'core' : g)).join(', ');
    const names = rule.resourceNames?.length ? ` named ${rule.resourceNames.join(', ')}` : '';
    return `${(rule.verbs ?? []).join(', ')} on ${what}${groups ? ` (${groups})` : ''}${names}`;
  });
}

/** `ServiceAccount kyma-system/x` for each subject of a binding. */
function subjectLines(binding: Json | undefined): string[] {
  return ((binding?.subjects ?? []) as Json[]).map(s => `${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}`);
}

/** `grants a; revokes b`, of two lists. */
function grantsAndRevokes(before: readonly string[], after: readonly string[], grant: string, revoke: string): string {
  const added = after.filter(line => !before.includes(line));
  const removed = before.filter(line => !after.includes(line));
  return [added.length ? `${grant} ${added.join('; ')}` : '', removed.length ? `${revoke} ${removed.join('; ')}` : ''].filter(Boolean).join('; ');
}

/** What a change means, by kind. */
interface Meaning {
  readonly title: string;
  readonly meaning: string;
  readonly functionChange?: FunctionChangeKind;
}

/**
 * What changing an object from `live` to `after` (the API server's answer to the dry run) means.
 *
 * @param live the object in the cluster
 * @param after the object as apply would leave it
 * @param fields the fields that change (see {@link changedFields} of {@link comparable} objects)
 */
export function changeMeaning(live: Json, after: Json, fields: readonly string[]): Meaning {
  const listed = (list: readonly string[]) => list.slice(0, 4).join(', ') + (list.length > 4 ? `, and ${list.length - 4} more` : '');
  const generic = { title: 'changed', meaning: `${listed(fields)} change` };
  switch (groupKind(after)) {
    case FUNCTION_GROUP_KIND: {
      const change = functionChangeOf(live, after);
      return { title: functionChangeTitle(change.kind), meaning: change.summary, functionChange: change.kind };
    }
    case 'apps/Deployment':
    case 'apps/StatefulSet':
    case 'apps/DaemonSet': {
      if (under(fields, 'spec.template').length) {
        const recreate = after.spec?.strategy?.type === 'Recreate';
        return {
          title: 'restart',
          meaning: `Pods restarted: the Pod template changes (${listed(under(fields, 'spec.template'))}); `
            + `${recreate ? 'all old Pods stop before the new ones start (Recreate)' : 'new Pods replace the old ones one by one'}`,
        };
      }
      if (fields.every(f => f === 'spec.replicas')) {
        return { title: 'rescale', meaning: `rescale: ${live.spec?.replicas} → ${after.spec?.replicas} replicas` };
      }
      return { title: 'changed', meaning: `no Pod restarts: ${listed(fields)} change` };
    }
    case '/Service': {
      const access = under(fields, 'spec.ports', 'spec.selector', 'spec.type', 'spec.externalTrafficPolicy', 'spec.loadBalancerSourceRanges');
      return access.length ? { title: 'access', meaning: `who reaches it, and how, changes: ${listed(access)}` } : generic;
    }
    case 'admissionregistration.k8s.io/MutatingWebhookConfiguration':
    case 'admissionregistration.k8s.io/ValidatingWebhookConfiguration':
      return { title: 'access', meaning: `which requests the API server sends to the webhook, and what a failure does, changes: ${listed(fields)}` };
    case 'rbac.authorization.k8s.io/Role':
    case 'rbac.authorization.k8s.io/ClusterRole': {
      const change = grantsAndRevokes(ruleLines(live), ruleLines(after), 'grants', 'revokes');
      return { title: 'access', meaning: change ? `access changes: ${change}` : generic.meaning };
    }
    case 'rbac.authorization.k8s.io/RoleBinding':
    case 'rbac.authorization.k8s.io/ClusterRoleBinding': {
      const change = grantsAndRevokes(subjectLines(live), subjectLines(after), `${after.roleRef?.kind} ${after.roleRef?.name} to`, 'takes it from');
      return { title: 'access', meaning: change ? `access changes: gives ${change}` : generic.meaning };
    }
    case 'networking.k8s.io/NetworkPolicy':
      return { title: 'access', meaning: `which traffic is allowed changes: ${listed(fields)}` };
    case '/PersistentVolumeClaim':
      return under(fields, 'spec.resources.requests.storage').length
        ? { title: 'resize', meaning: `the volume grows to ${after.spec?.resources?.requests?.storage} (if its StorageClass allows expansion)` }
        : generic;
    default:
      return generic;
  }
}

/** What creating an object means. */
export function createMeaning(object: Json): Meaning {
  if (groupKind(object) === FUNCTION_GROUP_KIND) {
    return {
      title: 'create', meaning: 'a new Function: the controller builds its image, then runs it', functionChange: FunctionChangeKind.NEW_BUILD,
    };
  }
  return { title: 'create', meaning: 'created' };
}

/** What deleting an orphan takes with it. */
export function orphanMeaning(object: Json): string {
  switch (groupKind(object)) {
    case FUNCTION_GROUP_KIND:
      return 'the Function stops: its Deployment, Service, HorizontalPodAutoscaler, build Jobs and source ConfigMap are deleted with it';
    case 'gateway.kyma-project.io/APIRule':
    case 'networking.istio.io/VirtualService':
    case 'gateway.networking.k8s.io/HTTPRoute':
      return 'its URL stops answering';
    case 'eventing.kyma-project.io/Subscription':
      return 'its events stop reaching the Function';
    case 'keda.sh/ScaledObject':
      return 'KEDA stops scaling the Function; it keeps the replicas it has';
    case '/PersistentVolumeClaim':
      return 'its volume and the data on it are deleted, unless the PersistentVolume\'s reclaim policy is Retain';
    case 'apps/Deployment':
    case 'apps/StatefulSet':
    case 'apps/DaemonSet':
      return 'its Pods stop';
    default:
      return 'deleted';
  }
}
