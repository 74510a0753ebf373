/**
 * What `status` knows of the cluster: the Functions and their objects, listed once and kept up to
 * date by the watches of `_watch.ts`.
 */
import { FUNCTION_CRD_NAME } from '../../api/crd';
import { functionCrdRelease } from '../../api/crd-release';
import { ServerlessRelease } from '../../api/release';
import { Cluster, describeApiError, statusOf } from '../_kube';
import { RetryOptions, withRetries } from '../_rest';
import { humanDuration } from './render';
import { Kind, Selectors } from './_kinds';
import { FunctionStatusReport, statusReport } from './report';
import { FunctionChildren, FunctionResource } from './resources';

/** What a kind's list left: its objects by `namespace/name`, and the resourceVersion to watch from. */
interface Listed {
  readonly objects: Map<string, any>;
  resourceVersion?: string;
}

const objectKey = (object: any) => `${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''}`;

/**
 * The Functions and their objects, listed once and (for `--watch`) kept up to date from watches.
 * Kinds other than Functions that the user may not list (403) or the cluster does not serve (404)
 * are left out, with a warning: their progress then comes from the conditions. A kind that reaches
 * Functions (APIRules, ...) whose CRD is not installed (404) is left out without one (most clusters
 * serve only some of them) and kept in {@link unserved}: the Functions that need it say so.
 */
export class FunctionStore {
  /** Listed kinds, by key; a child kind is missing when it could not be listed. */
  public readonly listed = new Map<Kind['key'], Listed>();
  /** The kinds that reach or scale Functions that the cluster does not serve (it answered 404). */
  public readonly unserved = new Set<Kind['key']>();
  /**
   * How lists are timed out and tried again while the API server fails in a way that passes (it
   * restarts, drops connections, answers 429 or 503): see `RestClient`.
   */
  public retry: RetryOptions = {};
  private readonly warned = new Set<Kind['key']>();
  /** Whether the API server was failing: said once, and once more when it answers again. */
  private failing = false;
  /** Ends the tries of lists under way once the command is done. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly cluster: Cluster,
    private readonly kinds: readonly Kind[],
    private readonly namespace: string | undefined,
    private readonly name: string | undefined,
    /** Told, once per kind, of a kind that could not be listed. */
    private readonly warn: (message: string) => void,
  ) {}

  /** The selectors of a kind: the Function's name, the controller's labels, or synth's (see {@link Kind.selectors}). */
  public selectors(kind: Kind): Selectors {
    return kind.selectors(this.name);
  }

  /**
   * The release of the cluster's Function CRD (its annotation, else its shape), read by
   * {@link listAll}; undefined when it cannot be read: each Function's status then tells.
   */
  public release?: ServerlessRelease;

  /** Lists every kind: Functions first, then the others at once; reads the cluster's release beside them. */
  public async listAll(): Promise<void> {
    await this.list(this.kinds[0]);
    await Promise.all([...this.kinds.slice(1).map(kind => this.list(kind)), this.readRelease()]);
  }

  /** Reads the Function CRD for the release: a user who may not read CRDs still gets a status. */
  private async readRelease(): Promise<void> {
    try {
      const k8s = await import('@kubernetes/client-node');
      const crd = await this.cluster.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: FUNCTION_CRD_NAME });
      this.release = functionCrdRelease(crd).release;
    } catch {
      // Forbidden, not found, or an annotation of no release of this package: each Function's status tells.
    }
  }

  /**
   * Lists one kind, replacing what was known of it.
   *
   * @throws CliError for API errors, but 403 and 404 of the kinds other than Functions, which only
   * warn (or, for a 404 of a kind that reaches Functions, leave it out and keep it in {@link unserved})
   */
  public async list(kind: Kind): Promise<void> {
    try {
      const list = await withRetries(`GET ${kind.path(this.namespace)}`, () => kind.list(this.namespace, this.selectors(kind)), {
        ...this.retry,
        onRetry: notice => {
          const retryFor = this.retry.retryTimeoutMs ?? 120_000;
          if (!this.failing) {
            this.failing = true;
            this.warn(`the API server fails (${notice.reason.split('\n')[0]}) while listing ${kind.noun}: trying again `
              + `for up to ${retryFor < 1000 ? `${retryFor}ms` : humanDuration(retryFor)}`);
          }
          this.retry.onRetry?.(notice);
        },
      }, this.stopping.signal);
      if (this.failing) {
        this.failing = false;
        this.warn(`the API server answers again: listed ${kind.noun}; watching on`);
      }
      // client-node turns timestamps of typed lists into Dates: back to the API's JSON.
      const items = JSON.parse(JSON.stringify(list.items ?? [])) as any[];
      this.listed.set(kind.key, { objects: new Map(items.map(i => [objectKey(i), i])), resourceVersion: list.metadata?.resourceVersion });
      this.unserved.delete(kind.key);
    } catch (e) {
      const code = statusOf(e);
      if (kind.key !== 'functions' && (code === 403 || code === 404)) {
        this.listed.delete(kind.key);
        if (kind.reach && code === 404) {
          this.unserved.add(kind.key);
          return;
        }
        if (!this.warned.has(kind.key)) {
          this.warned.add(kind.key);
          const where = this.namespace === undefined ? 'in any namespace' : `in namespace ${this.namespace}`;
          const consequence = kind.missing ?? (kind.reach ? 'the Functions\' endpoints and Subscriptions of that kind are not shown'
            : 'their progress comes from the Functions\' conditions alone');
          this.warn(`cannot list ${kind.noun} ${where} (${code === 403 ? 'forbidden' : 'not served'}): ${consequence}`);
        }
        return;
      }
      throw describeApiError(e, `listing ${kind.noun}`, this.cluster);
    }
  }

  /** Stops trying lists again: the command is done. */
  public stop(): void {
    this.stopping.abort(new Error('the watch has ended'));
  }

  /** Applies one watch event; returns whether it changed anything. */
  public apply(kind: Kind, type: string, object: any): boolean {
    const listed = this.listed.get(kind.key);
    if (!listed) return false;
    const version = object?.metadata?.resourceVersion;
    if (version) listed.resourceVersion = version;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        listed.objects.set(objectKey(object), object);
        return true;
      case 'DELETED':
        return listed.objects.delete(objectKey(object));
      default:
        return false;
    }
  }

  /** The Functions, sorted by namespace and name. */
  public functions(): FunctionResource[] {
    return [...(this.listed.get('functions')?.objects.values() ?? [])]
      .sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
  }

  /** The objects of every kind but Functions, by their {@link Kind} key; a kind not listed is left out. */
  public children(): FunctionChildren {
    const of = (key: keyof FunctionChildren) => {
      const listed = this.listed.get(key);
      return listed ? [...listed.objects.values()] : undefined;
    };
    const children: { -readonly [key in keyof FunctionChildren]: FunctionChildren[key] } = {};
    for (const { key } of this.kinds) if (key !== 'functions') children[key] = of(key);
    return children;
  }

  /** Every Function's report. */
  public reports(): FunctionStatusReport[] {
    const children = this.children();
    const unserved = this.kinds.filter(k => this.unserved.has(k.key)).flatMap(k => (k.reach ? [k.reach] : []));
    return this.functions().map(fn => statusReport(fn, children, this.release, unserved));
  }
}
