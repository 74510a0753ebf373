/**
 * The ApplySet of a folder (KEP-3659): the objects `kyma-serverless apply` applied from it, so that
 * what was removed from the folder can be found and deleted, and `kubectl` sees the same set.
 *
 * As `kubectl apply --prune --applyset` does, apply labels every object it sends
 * `applyset.kubernetes.io/part-of: <id>` and keeps a parent object (a Secret) labelled
 * `applyset.kubernetes.io/id: <id>`, whose annotations list the kinds (`contains-group-kinds`) and
 * namespaces (`additional-namespaces`) the set spans. The id is kubectl's:
 * `applyset-<base64url(sha256(<name>.<namespace>.<kind>.<group>))>-v1` of the parent. The label is
 * added when applying, not at synth: `dist/` stays as Argo CD and Flux sync it, and
 * `kubectl apply --applyset` refuses manifests that carry it already.
 *
 * The members of a set are found by that label. Some of them were never applied: the Function
 * Controller copies a Function's labels onto the ConfigMap, Job, Deployment, Service and HPA it
 * makes (owned by the Function), and the labels of `dockerfile-*` ConfigMaps, of the registry
 * Secret and of the `serverless-function` ServiceAccount onto their copies in every namespace.
 * So an orphan (a member no longer in the folder) is deleted only when this tool applied it (its
 * field manager has an Apply entry) and nothing owns it (KEP-3659: objects with owner references
 * are not the set's to delete); Namespaces and CRDs, whose deletion takes objects outside the set
 * with them, are reported and left to the user.
 */
import { createHash } from 'node:crypto';
import { packageRoot } from '../_package-root';
import { SYNC_WAVE_ANNOTATION, syncWaveOf } from '../gitops/sync-waves';
import { statusOf } from './_kube';
import { CliError } from './errors';
import { ObjectTarget } from './_objects';
import { ApplyPhase, ApplyPlan, Manifest, objectLabel, phaseOf } from './_plan';
import { APPLY_PATCH, ApiResource, Discovery, RestClient, parseApiVersion, resourcePath } from './_rest';

/** The label that makes an object a member of an ApplySet, with the set's id. */
export const APPLYSET_PART_OF_LABEL = 'applyset.kubernetes.io/part-of';
/** The label that makes an object an ApplySet parent, with the set's id. */
export const APPLYSET_ID_LABEL = 'applyset.kubernetes.io/id';
/** The parent's annotation naming the tool that manages the set, as `<tool>/<version>`. */
export const APPLYSET_TOOLING_ANNOTATION = 'applyset.kubernetes.io/tooling';
/** The parent's annotation listing the kinds of its members, as sorted `Kind.group`. */
export const APPLYSET_GROUP_KINDS_ANNOTATION = 'applyset.kubernetes.io/contains-group-kinds';
/**
 * What kubectl 1.27 and 1.28 read instead of {@link APPLYSET_GROUP_KINDS_ANNOTATION} (and require):
 * the resources of the members, sorted `plural.group`. Written beside it, so that those kubectl
 * versions read the set too.
 */
export const APPLYSET_GROUP_RESOURCES_ANNOTATION = 'applyset.kubernetes.io/contains-group-resources';
/** The parent's annotation listing the namespaces of members beyond its own, sorted. */
export const APPLYSET_NAMESPACES_ANNOTATION = 'applyset.kubernetes.io/additional-namespaces';

/** The name of the ApplySet parent Secret, unless `--applyset` names another. */
export const DEFAULT_APPLYSET_NAME = 'kyma-serverless-applyset';

/** The tool's name in the parent's tooling annotation; the parent's field manager is `<tool>-applyset`, as kubectl's. */
const TOOL = 'kyma-serverless';

/** The kinds an ApplySet parent can be without a CRD of its own (KEP-3659: Secrets and ConfigMaps). */
const PARENT_RESOURCES: { readonly [plural: string]: ApiResource } = {
  secrets: { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  configmaps: { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
};

/**
 * The id of the ApplySet of a parent, as kubectl computes it.
 *
 * @example applySetId({ name: 'kyma-serverless-applyset', namespace: 'kyma-system', kind: 'Secret', group: '' })
 */
export function applySetId(parent: { readonly name: string; readonly namespace: string; readonly kind: string; readonly group: string }): string {
  const hash = createHash('sha256').update([parent.name, parent.namespace, parent.kind, parent.group].join('.')).digest('base64url');
  return `applyset-${hash}-v1`;
}

/** The ApplySet parent object of a folder. */
export interface ApplySetParent {
  readonly resource: ApiResource;
  readonly name: string;
  readonly namespace: string;
  /** The set's id, the value of the labels. */
  readonly id: string;
}

/** `secrets/kyma-serverless-applyset -n kyma-system`. */
export function parentLabel(parent: ApplySetParent): string {
  return `${parent.resource.plural}/${parent.name} -n ${parent.namespace}`;
}

/** A kind as the parent lists it: `Deployment.apps`, `ConfigMap`. */
export function groupKindOf(apiVersion: string, kind: string): string {
  const { group } = parseApiVersion(apiVersion);
  return group ? `${kind}.${group}` : kind;
}

/** `Deployment.apps` → `{ group: 'apps', kind: 'Deployment' }`, as kubectl parses a group kind. */
function parseGroupKind(text: string): { readonly group: string; readonly kind: string } {
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', kind: text } : { group: text.slice(dot + 1), kind: text.slice(0, dot) };
}

const sortedList = (values: Iterable<string>) => [...new Set(values)].filter(Boolean).sort();
const splitList = (text: string | undefined) => (text ? text.split(',').map(v => v.trim()).filter(Boolean) : []);

/**
 * The parent of a folder's ApplySet.
 *
 * @param plan the folder's plan
 * @param reference `--applyset`: `[secrets|configmaps/]name`; else {@link DEFAULT_APPLYSET_NAME}
 * @param fallbackNamespace the namespace when the folder creates none (`-n`, or the context's)
 * @returns the parent: in the namespace of the folder's first Namespace in apply order (the
 * stack's for `dist/`, a team's for a folder of its FunctionNamespace), else in `fallbackNamespace`
 * @throws CliError when the reference is not a Secret or ConfigMap
 */
export function applySetParentOf(plan: ApplyPlan, reference: string | undefined, fallbackNamespace: string): ApplySetParent {
  const text = reference ?? DEFAULT_APPLYSET_NAME;
  const slash = text.indexOf('/');
  const type = slash < 0 ? 'secrets' : text.slice(0, slash).replace(/\.$/, '');
  const name = slash < 0 ? text : text.slice(slash + 1);
  const resource = PARENT_RESOURCES[type];
  if (!resource || !name) {
    throw new CliError(`--applyset ${text}: give [secrets/|configmaps/]name: an ApplySet parent is a Secret (the default) or a ConfigMap`);
  }
  const firstNamespace = plan.steps.flatMap(s => s.objects).find(p => p.group === '' && p.object.kind === 'Namespace');
  const namespace = firstNamespace?.object.metadata.name ?? fallbackNamespace;
  return { resource, name, namespace, id: applySetId({ name, namespace, kind: resource.kind, group: resource.group }) };
}

/** What the parent in the cluster says of the set. */
export interface ApplySetState {
  /** Whether the parent exists. */
  readonly exists: boolean;
  /** The kinds of its members, `Kind.group`, sorted. */
  readonly groupKinds: readonly string[];
  /** The namespaces of its members, its own included, sorted. */
  readonly namespaces: readonly string[];
}

/** The kinds and namespaces a set spans. */
export type ApplySetScope = Pick<ApplySetState, 'groupKinds' | 'namespaces'>;

/** A member of the set, as the API server lists it. */
export interface ApplySetMember {
  readonly resource: ApiResource;
  readonly object: any;
}

/** Why an orphan is left where it is. */
export enum KeptReason {
  /** Another object owns it: the garbage collector deletes it with its owner. */
  OWNED = 'owned',
  /** It carries the set's label but this tool never applied it: another writer copied the label. */
  NOT_APPLIED = 'not-applied',
  /** Deleting it deletes objects outside the set: a Namespace, a CustomResourceDefinition. */
  DELETES_MORE = 'deletes-more',
}

/** A member of the set that the folder no longer holds. */
export interface Orphan extends ApplySetMember {
  /** Its sync wave: its annotation, else the wave synth gives its kind. */
  readonly wave: number;
  readonly phase: ApplyPhase;
  /** Why it is not deleted; undefined for an orphan that prune deletes. */
  readonly kept?: KeptReason;
  /** The reason, in words, with what to do. */
  readonly keptBecause?: string;
}

/** `Function default-functions/hello`. */
export function memberLabel(member: ApplySetMember): string {
  return objectLabel(member.resource.kind, member.object?.metadata?.name, member.object?.metadata?.namespace);
}

/** `kubectl delete -n x function/y`. */
function kubectlDelete(member: ApplySetMember): string {
  const namespace = member.object?.metadata?.namespace;
  const qualified = member.resource.group ? `${member.resource.plural}.${member.resource.group}` : member.resource.plural;
  return `kubectl delete${namespace ? ` -n ${namespace}` : ''} ${qualified}/${member.object?.metadata?.name}`;
}

/** Reads, writes and lists one ApplySet. */
export class ApplySet {
  /** The parent's field manager, as kubectl's is `kubectl-applyset`. */
  public static readonly FIELD_MANAGER = `${TOOL}-applyset`;

  constructor(private readonly client: RestClient, public readonly parent: ApplySetParent) {}

  /** The value of the parent's tooling annotation: `kyma-serverless/v0.1.0`. */
  public static tooling(): string {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return `${TOOL}/v${(require(`${packageRoot()}/package.json`) as { version: string }).version}`;
  }

  /** The kinds and namespaces of two scopes together. */
  public static union(a: ApplySetScope, b: ApplySetScope): ApplySetScope {
    return { groupKinds: sortedList([...a.groupKinds, ...b.groupKinds]), namespaces: sortedList([...a.namespaces, ...b.namespaces]) };
  }

  /** An object to send, with the set's label added. */
  public labelled(body: Manifest): Manifest {
    const labels = { ...(body.metadata.labels as { [key: string]: string } | undefined), [APPLYSET_PART_OF_LABEL]: this.parent.id };
    return { ...body, metadata: { ...body.metadata, labels } };
  }

  /**
   * Reads the parent.
   *
   * @throws CliError when another tool manages the set, or its id label does not match
   */
  public async read(signal?: AbortSignal): Promise<ApplySetState> {
    let body: any;
    try {
      body = (await this.client.request({ method: 'GET', path: this.parentPath(), signal })).body;
    } catch (e) {
      if (statusOf(e) === 404) return { exists: false, groupKinds: [], namespaces: [] };
      throw e;
    }
    const annotations: { [key: string]: string } = body?.metadata?.annotations ?? {};
    const tooling = annotations[APPLYSET_TOOLING_ANNOTATION];
    const where = `The ApplySet parent ${parentLabel(this.parent)}`;
    if (tooling && tooling.split('/')[0] !== TOOL) {
      throw new CliError(`${where} is managed by ${tooling}, not ${TOOL}: name another parent with --applyset, `
        + 'or go on with the tool that manages it');
    }
    const id = body?.metadata?.labels?.[APPLYSET_ID_LABEL];
    if (id !== undefined && id !== this.parent.id) {
      throw new CliError(`${where} has the label ${APPLYSET_ID_LABEL}=${id}, not ${this.parent.id} (the id of its name, namespace and kind): `
        + `it is not this set's parent: name another with --applyset`);
    }
    return {
      exists: true,
      groupKinds: sortedList(splitList(annotations[APPLYSET_GROUP_KINDS_ANNOTATION])),
      namespaces: sortedList([this.parent.namespace, ...splitList(annotations[APPLYSET_NAMESPACES_ANNOTATION])]),
    };
  }

  /** What the parent lists for a set of objects: their kinds, and their namespaces. */
  public static scopeOf(targets: readonly ObjectTarget[]): ApplySetScope {
    return {
      groupKinds: sortedList(targets.map(t => groupKindOf(t.planned.object.apiVersion, t.planned.object.kind))),
      namespaces: sortedList(targets.map(t => (t.resource?.namespaced === false ? '' : t.namespace ?? ''))),
    };
  }

  /**
   * Writes the parent with server-side apply, as its own field manager: the kinds (and, for kubectl
   * 1.27 and 1.28, their resources) and namespaces given, the tooling and the id. A conflict on its
   * fields is taken over, as kubectl does.
   *
   * @param resources the resources of kinds the API server does not serve yet (a CRD the same apply creates)
   */
  public async write(
    scope: ApplySetScope, discovery: Discovery, resources: readonly ApiResource[], dryRun: boolean, signal?: AbortSignal,
  ): Promise<void> {
    const { resource, name, namespace, id } = this.parent;
    const groupResources: string[] = [];
    for (const groupKind of scope.groupKinds) {
      const { group, kind } = parseGroupKind(groupKind);
      const served = resources.find(r => r.group === group && r.kind === kind) ?? await discovery.resourceOfGroupKind(group, kind, signal);
      if (served) groupResources.push(group ? `${served.plural}.${group}` : served.plural);
    }
    const body = {
      apiVersion: resource.version, kind: resource.kind,
      metadata: {
        name, namespace,
        labels: { [APPLYSET_ID_LABEL]: id },
        annotations: {
          [APPLYSET_TOOLING_ANNOTATION]: ApplySet.tooling(),
          [APPLYSET_GROUP_KINDS_ANNOTATION]: sortedList(scope.groupKinds).join(','),
          [APPLYSET_GROUP_RESOURCES_ANNOTATION]: sortedList(groupResources).join(','),
          [APPLYSET_NAMESPACES_ANNOTATION]: sortedList(scope.namespaces).filter(n => n !== namespace).join(','),
        },
      },
    };
    await this.client.request({
      method: 'PATCH', path: this.parentPath(), body, contentType: APPLY_PATCH, signal,
      query: { fieldManager: ApplySet.FIELD_MANAGER, force: 'true', dryRun: dryRun ? 'All' : undefined },
    });
  }

  /**
   * Lists the members: every object of the given kinds, in the given namespaces (or at the
   * cluster scope), that carries the set's label. A kind the API server does not serve any
   * more (its CRD was removed) has no members left.
   */
  public async members(discovery: Discovery, scope: ApplySetScope, signal?: AbortSignal): Promise<ApplySetMember[]> {
    const members: ApplySetMember[] = [];
    for (const groupKind of sortedList(scope.groupKinds)) {
      const { group, kind } = parseGroupKind(groupKind);
      const resource = await discovery.resourceOfGroupKind(group, kind, signal);
      if (!resource) continue;
      for (const namespace of resource.namespaced ? sortedList(scope.namespaces) : [undefined]) {
        const { body } = await this.client.request({
          method: 'GET', path: resourcePath(resource, namespace), query: { labelSelector: `${APPLYSET_PART_OF_LABEL}=${this.parent.id}` }, signal,
        });
        // Only what carries the set's label is a member, whatever the answer holds (a proxy or an
        // aggregated API that ignores the selector must never make prune delete another's object).
        for (const item of body?.items ?? []) {
          if (item?.metadata?.labels?.[APPLYSET_PART_OF_LABEL] !== this.parent.id) continue;
          members.push({ resource, object: { apiVersion: body.apiVersion, kind, ...item } });
        }
      }
    }
    return members;
  }

  /**
   * The members the folder no longer holds, in the order prune deletes them: the reverse of apply
   * (later sync waves first, custom resources before built-in kinds), so that a Function goes
   * after its APIRules, Subscriptions and ScaledObjects.
   *
   * @param members the members, as {@link members} lists them
   * @param planned the folder's objects, resolved
   * @param fieldManager the field manager apply uses: only what it applied is deleted
   */
  public static orphansOf(members: readonly ApplySetMember[], planned: readonly ObjectTarget[], fieldManager: string): Orphan[] {
    const identity = (group: string, kind: string, namespace: string | undefined, name: string) => `${group}|${kind}|${namespace ?? ''}|${name}`;
    const inFolder = new Set(planned.map(t => identity(t.planned.group, t.planned.object.kind,
      t.resource?.namespaced === false ? undefined : t.namespace, t.planned.object.metadata.name)));
    const orphans = members
      .filter(m => !inFolder.has(identity(m.resource.group, m.resource.kind, m.resource.namespaced ? m.object.metadata?.namespace : undefined,
        m.object.metadata?.name)))
      .map(m => ApplySet.orphan(m, fieldManager));
    const phases = [ApplyPhase.PREREQUISITES, ApplyPhase.BUILT_IN, ApplyPhase.CUSTOM_RESOURCES];
    return orphans.sort((a, b) => b.wave - a.wave || phases.indexOf(b.phase) - phases.indexOf(a.phase)
      || memberLabel(a).localeCompare(memberLabel(b)));
  }

  private static orphan(member: ApplySetMember, fieldManager: string): Orphan {
    const { object, resource } = member;
    const annotation = object.metadata?.annotations?.[SYNC_WAVE_ANNOTATION];
    const wave = annotation !== undefined && /^\s*[-+]?\d+\s*$/.test(annotation) ? Number(annotation) : Number(syncWaveOf(object));
    const base = { ...member, wave, phase: phaseOf(object.apiVersion, resource.kind) };
    const owners: { kind?: string; name?: string }[] = object.metadata?.ownerReferences ?? [];
    if (owners.length) {
      return { ...base, kept: KeptReason.OWNED, keptBecause: `owned by ${owners.map(o => `${o.kind} ${o.name}`).join(', ')}: deleted with it` };
    }
    const managers: { manager?: string; operation?: string }[] = object.metadata?.managedFields ?? [];
    if (!managers.some(m => m.manager === fieldManager && m.operation === 'Apply')) {
      const writers = sortedList(managers.map(m => m.manager ?? '')).join(', ') || 'another writer';
      return {
        ...base, kept: KeptReason.NOT_APPLIED,
        keptBecause: `never applied by field manager ${fieldManager}: ${writers} wrote it with the set's label copied from another object`,
      };
    }
    if (resource.group === '' && resource.kind === 'Namespace') {
      return {
        ...base, kept: KeptReason.DELETES_MORE,
        keptBecause: 'deleting a Namespace deletes everything in it, also what is not in the set: '
          + `when it is empty of yours, ${kubectlDelete(member)}`,
      };
    }
    if (resource.group === 'apiextensions.k8s.io' && resource.kind === 'CustomResourceDefinition') {
      return {
        ...base, kept: KeptReason.DELETES_MORE,
        keptBecause: 'deleting a CustomResourceDefinition deletes every custom resource of its kind in the cluster: '
          + `if none is needed, ${kubectlDelete(member)}`,
      };
    }
    return base;
  }

  private parentPath(): string {
    return resourcePath(this.parent.resource, this.parent.namespace, this.parent.name);
  }
}
