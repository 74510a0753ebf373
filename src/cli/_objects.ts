/**
 * The objects of a plan in a cluster: which resource serves each kind, which namespace each object
 * goes to, and what an API error about one of them means. `apply` and `diff` share it, so that a
 * diff dry-runs exactly the requests an apply sends.
 */
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api';
import { FUNCTION_CRD_NAME } from '../api/crd';
import { Cluster, describeApiError, statusOf } from './_kube';
import { ApplyPlan, BUILT_IN_GROUPS, Manifest, PlannedObject, objectLabel } from './_plan';
import { ApiResource, Discovery, isRetryable, parseApiVersion, triesOf } from './_rest';

/** One planned object, and where it goes in the cluster once resolved. */
export interface ObjectTarget {
  readonly planned: PlannedObject;
  /** The resource that serves its kind; undefined while a CRD of the plan is not served yet. */
  resource?: ApiResource;
  /** For namespaced kinds: the manifest's namespace, else the one of `-n` or the context. */
  namespace?: string;
}

/** The message, reason and details of an API error's Status body. */
export function statusBody(e: unknown): { message?: string; reason?: string; details?: { name?: string; kind?: string; causes?: unknown[] } } {
  const body = (e as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body);
    } catch {
      return { message: body };
    }
  }
  return (body && typeof body === 'object' ? body : {}) as ReturnType<typeof statusBody>;
}

/**
 * Errors worth another try: the server is busy or unreachable, or a webhook it calls is not
 * answering yet (see `isRetryable` in `_rest.ts`, which the client's own retries follow).
 */
export function transient(e: unknown): boolean {
  return isRetryable(e);
}

/** `Deployment kyma-system/web` of a target, with the namespace it goes to. */
export function targetLabel(target: ObjectTarget): string {
  const { object } = target.planned;
  return objectLabel(object.kind, object.metadata.name, target.namespace ?? object.metadata.namespace);
}

/** A target and its file, for errors: `Deployment kyma-system/web (0000-serverless.k8s.yaml)`. */
export function targetWhere(target: ObjectTarget): string {
  return `${targetLabel(target)} (${target.planned.file})`;
}

/** The object to send: as in the file, with the namespace it goes to. */
export function targetBody(target: ObjectTarget): Manifest {
  const { object } = target.planned;
  const { namespace: _namespace, ...metadata } = object.metadata;
  return { ...object, metadata: target.namespace === undefined ? metadata : { ...metadata, namespace: target.namespace } } as Manifest;
}

/** What a resolver needs from the command that runs it. */
export interface ResolverContext {
  /** The namespace of `-n`, if given. */
  readonly namespace?: string;
  /** A signal that aborts a request at the command's deadline. */
  readonly signal: () => AbortSignal | undefined;
  /** Turns a failed request into the command's error. */
  readonly requestError: (e: unknown, what: string) => Error;
}

/** Finds the resource and namespace of every object of a plan, through the API server's discovery. */
export class PlanResolver {
  constructor(
    private readonly plan: ApplyPlan,
    private readonly cluster: Cluster,
    private readonly discovery: Discovery,
    private readonly context: ResolverContext,
  ) {}

  /**
   * Sets the resource and namespace of every target. Kinds a CRD of the plan defines, not served
   * yet, keep no resource.
   *
   * @returns the problems, each naming the objects and what to do; none when every kind is known
   */
  public async resolveAll(targets: readonly ObjectTarget[]): Promise<string[]> {
    const problems: string[] = [];
    const byKind = new Map<string, ObjectTarget[]>();
    for (const target of targets) {
      const key = `${target.planned.object.apiVersion} ${target.planned.object.kind}`;
      byKind.set(key, [...(byKind.get(key) ?? []), target]);
    }
    for (const [, ofKind] of byKind) {
      const { object } = ofKind[0].planned;
      const resource = await this.discover(object.apiVersion, object.kind);
      const crd = this.crdInPlan(object.apiVersion, object.kind);
      if (!resource && !crd) {
        problems.push(await this.notServed(ofKind));
        continue;
      }
      const namespaced = resource ? resource.namespaced : crd?.object.spec?.scope !== 'Cluster';
      for (const target of ofKind) {
        target.resource = resource;
        problems.push(...this.placeIn(target, namespaced));
      }
    }
    return problems;
  }

  /** The resource of a kind, or undefined when the API server does not serve it. */
  public async discover(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    try {
      return await this.discovery.resourceOf(apiVersion, kind, this.context.signal());
    } catch (e) {
      throw this.context.requestError(e, `reading the API server's discovery of ${apiVersion}`);
    }
  }

  /** The CRD of the plan that defines a kind in a served version, if one does. */
  public crdInPlan(apiVersion: string, kind: string): PlannedObject | undefined {
    const { group, version } = parseApiVersion(apiVersion);
    return this.plan.steps.flatMap(s => s.objects).find(p => p.group === 'apiextensions.k8s.io' && p.object.kind === 'CustomResourceDefinition'
      && p.object.spec?.group === group && p.object.spec?.names?.kind === kind
      && (p.object.spec?.versions ?? []).some((v: { name?: string; served?: boolean }) => v.name === version && v.served !== false));
  }

  /** Whether the plan creates a Namespace of this name. */
  public createsNamespace(name: string | undefined): boolean {
    return this.plan.steps.some(s => s.objects.some(p => p.group === '' && p.object.kind === 'Namespace' && p.object.metadata.name === name));
  }

  /** Sets the namespace of a target: its own, else `-n`'s or the context's; returns the problems. */
  private placeIn(target: ObjectTarget, namespaced: boolean): string[] {
    const own = target.planned.object.metadata.namespace;
    if (!namespaced) return [];
    const given = this.context.namespace;
    if (own && given && own !== given) {
      return [`${targetWhere(target)}: its namespace ${own} is not the one -n gives (${given}): leave -n out to apply the folder as it is`];
    }
    target.namespace = own || this.cluster.namespace;
    return [];
  }

  /** Why a kind cannot be applied, and what to do. */
  private async notServed(targets: readonly ObjectTarget[]): Promise<string> {
    const { object, group } = targets[0].planned;
    const { version } = parseApiVersion(object.apiVersion);
    const objects = targets.map(targetWhere).join(', ');
    let versions: string[] = [];
    try {
      versions = await this.discovery.versionsOf(group, this.context.signal());
    } catch {
      // Only for the message.
    }
    const servedAs = versions.length ? ` (it serves ${group || 'the core group'} in ${versions.join(', ')})` : '';
    if (BUILT_IN_GROUPS.has(group)) {
      return `${objects}: the API server does not serve ${object.kind} in ${object.apiVersion}${servedAs}: change the manifest's apiVersion`;
    }
    const install = object.apiVersion === FUNCTION_API_VERSION && object.kind === FUNCTION_KIND
      ? `install the Function CRD ${FUNCTION_CRD_NAME} first: apply the folder that holds the ServerlessStack's manifests`
      : `install the CustomResourceDefinition that defines kind ${object.kind} in group ${group} first`;
    return `${objects}: the cluster does not serve ${object.kind} in ${object.apiVersion}${servedAs || ` (no CRD of group ${group} is installed)`}, `
      + `and no CustomResourceDefinition in ${this.plan.dir} defines it in version ${version}: ${install}`;
  }
}

/**
 * What went wrong with one object's request, and what to do about it.
 *
 * @param e the error of the request
 * @param target the object, resolved
 * @param cluster the cluster, for messages about reaching it
 * @param dir the folder of manifests, for a missing namespace
 * @param doing what the request did: `reading`, `applying`, `dry-running`
 * @param waitHint what to add to a failed webhook call: how waiting would have helped, if it would
 */
export function describeObjectError(e: unknown, target: ObjectTarget, cluster: Cluster, dir: string, doing: string, waitHint = ''): string {
  const message = objectErrorMessage(e, target, cluster, dir, doing, waitHint);
  const tries = triesOf(e);
  return tries && !message.includes(tries) ? `${message}${tries}` : message;
}

function objectErrorMessage(e: unknown, target: ObjectTarget, cluster: Cluster, dir: string, doing: string, waitHint: string): string {
  const code = statusOf(e);
  const { message = (e as Error).message, details } = statusBody(e);
  const resource = target.resource!;
  const qualified = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
  const scope = resource.namespaced ? ` -n ${target.namespace}` : '';
  switch (code) {
    case undefined:
    case 401:
      return describeApiError(e, `${doing} it`, cluster).message;
    case 403:
      return `forbidden: ${message}. Server-side apply needs the verbs create and patch (and get, to report and wait) on ${qualified} `
        + `${resource.namespaced ? `in namespace ${target.namespace}` : 'at the cluster scope'}: `
        + `check with kubectl auth can-i patch ${qualified}${scope}`;
    case 404:
      if (details?.kind === 'namespaces' && target.namespace !== undefined) {
        return `namespace ${target.namespace} does not exist: add a Namespace manifest for it to ${dir}, `
          + `or create it: kubectl create namespace ${target.namespace}`;
      }
      return `not found: ${message}`;
    case 409:
      return `${message}. Another field manager owns these fields: take them over with --force-conflicts, or leave them out of the manifest`;
    case 422:
      return `invalid: ${message}`;
    default:
      if (code === 500 && /failed calling webhook/i.test(message)) {
        return `${message}. The API server could not call an admission webhook: check that its Pods are ready, its Service has endpoints `
          + `and its configuration's caBundle signs its certificate${waitHint}`;
      }
      return `the API server answered ${code}: ${message}`;
  }
}
