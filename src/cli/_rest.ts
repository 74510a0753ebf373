/**
 * Raw calls to the Kubernetes API on client-node's own HTTP stack (kubeconfig credentials, TLS,
 * proxies), with JSON bodies sent and received as they are, and API discovery.
 *
 * Why not `KubernetesObjectApi`: in client-node 1.4 its `create` and `patch` pass the object
 * through the typed models of built-in kinds, which keep only the fields the models know, under
 * their wire names only when the two names agree. A CustomResourceDefinition loses `enum`,
 * `default`, `x-kubernetes-validations` and `x-kubernetes-preserve-unknown-fields` on the way,
 * and a server-side apply of what is left would remove them from the cluster. Its answers are
 * converted back into models too (timestamps into Dates), and the HTTP status, which tells
 * `created` from `configured`, is not returned.
 */
import type { KubeConfig } from '@kubernetes/client-node';

/** The media type of a server-side apply patch. */
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** One API call. */
export interface RestRequest {
  readonly method: 'GET' | 'PATCH' | 'DELETE';
  /** The path, such as `/apis/apps/v1/namespaces/x/deployments/y`. */
  readonly path: string;
  /** Query parameters; undefined ones are left out. */
  readonly query?: { readonly [name: string]: string | undefined };
  /** The body, sent as JSON (which is YAML too). */
  readonly body?: unknown;
  /**
   * The body's media type.
   *
   * @default 'application/json'
   */
  readonly contentType?: string;
  /** Aborts the call (a deadline). */
  readonly signal?: AbortSignal;
}

/** A successful answer. */
export interface RestResponse {
  /** The HTTP status: 200, or 201 for a create. */
  readonly status: number;
  /** The body, parsed from JSON. */
  readonly body: any;
}

/** Calls the API server of a kubeconfig's current context. */
export class RestClient {
  /**
   * A client for the current context of a kubeconfig.
   *
   * @throws when the kubeconfig has no current cluster
   */
  public static async create(kubeConfig: KubeConfig): Promise<RestClient> {
    const k8s = await import('@kubernetes/client-node');
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('The kubeconfig has no current cluster');
    const configuration = k8s.createConfiguration({
      baseServer: new k8s.ServerConfiguration(cluster.server, {}),
      authMethods: { default: kubeConfig },
    });
    return new RestClient(configuration, k8s.ApiException);
  }

  private constructor(
    private readonly configuration: import('@kubernetes/client-node').Configuration,
    private readonly ApiException: typeof import('@kubernetes/client-node').ApiException,
  ) {}

  /**
   * Makes one call.
   *
   * @returns the status and the parsed body of a 2xx answer
   * @throws ApiException (with `code` and the body's text) for any other status, as client-node's
   * own APIs do, so that {@link statusOf} and `describeApiError` read it
   */
  public async request(request: RestRequest): Promise<RestResponse> {
    const { HttpMethod } = await import('@kubernetes/client-node');
    const context = this.configuration.baseServer.makeRequestContext(request.path, HttpMethod[request.method]);
    context.setHeaderParam('Accept', 'application/json');
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) context.setQueryParam(name, value);
    }
    if (request.body !== undefined) {
      context.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      context.setBody(JSON.stringify(request.body));
    }
    if (request.signal) context.setSignal(request.signal);
    await this.configuration.authMethods.default?.applySecurityAuthentication(context);
    const response = await this.configuration.httpApi.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
      throw new this.ApiException(response.httpStatusCode, 'Unsuccessful HTTP Request', text, response.headers);
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return { status: response.httpStatusCode, body };
  }
}

/** A kind as discovery describes it. */
export interface ApiResource {
  /** The group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The resource's name in paths, such as `deployments`. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/** `apps/v1` → `{ group: 'apps', version: 'v1' }`; `v1` → the core group. */
export function parseApiVersion(apiVersion: string): { readonly group: string; readonly version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The path of an object, or of its collection without a name. */
export function resourcePath(resource: ApiResource, namespace?: string, name?: string): string {
  const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  const scope = resource.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${scope}/${resource.plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/**
 * The kinds the API server serves, from `/api/v1` and `/apis/<group>/<version>`, read once per
 * group version and read again when a kind is missing from what was read (a CRD applied since),
 * as `KubernetesObjectApi` does. A group version the server does not serve (404) is not remembered.
 */
export class Discovery {
  private readonly groupVersions = new Map<string, ApiResource[]>();

  constructor(private readonly client: RestClient) {}

  /**
   * The resource of a kind.
   *
   * @returns undefined when the server does not serve the kind in that apiVersion
   * @throws ApiException when discovery fails otherwise (403, 5xx, unreachable)
   */
  public async resourceOf(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ApiResource | undefined> {
    const known = this.groupVersions.get(apiVersion)?.find(r => r.kind === kind);
    if (known) return known;
    return (await this.read(apiVersion, signal))?.find(r => r.kind === kind);
  }

  /**
   * The resource of a kind given without a version (as an ApplySet parent lists its kinds): in the
   * group's preferred version.
   *
   * @param group the group; `''` for the core group
   * @returns undefined when the server does not serve the kind
   * @throws ApiException when discovery fails otherwise
   */
  public async resourceOfGroupKind(group: string, kind: string, signal?: AbortSignal): Promise<ApiResource | undefined> {
    if (!group) return this.resourceOf('v1', kind, signal);
    let body: any;
    try {
      body = (await this.client.request({ method: 'GET', path: `/apis/${group}`, signal })).body;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    }
    const version: string | undefined = body?.preferredVersion?.version ?? body?.versions?.[0]?.version;
    return version ? this.resourceOf(`${group}/${version}`, kind, signal) : undefined;
  }

  /**
   * The versions the server serves a group in, for messages.
   *
   * @returns none when the group is not served
   */
  public async versionsOf(group: string, signal?: AbortSignal): Promise<string[]> {
    try {
      const path = group ? `/apis/${group}` : '/api';
      const { body } = await this.client.request({ method: 'GET', path, signal });
      return group ? (body?.versions ?? []).map((v: { version: string }) => v.version) : body?.versions ?? [];
    } catch (e) {
      if ((e as { code?: number }).code === 404) return [];
      throw e;
    }
  }

  private async read(apiVersion: string, signal?: AbortSignal): Promise<ApiResource[] | undefined> {
    const { group, version } = parseApiVersion(apiVersion);
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    let body: any;
    try {
      body = (await this.client.request({ method: 'GET', path, signal })).body;
    } catch (e) {
      if ((e as { code?: number }).code === 404) {
        this.groupVersions.delete(apiVersion);
        return undefined;
      }
      throw e;
    }
    const resources: ApiResource[] = ((body?.resources ?? []) as { name: string; kind: string; namespaced: boolean }[])
      // Subresources (`deployments/status`) share their kind with the resource.
      .filter(r => !r.name.includes('/'))
      .map(r => ({ group, version, kind: r.kind, plural: r.name, namespaced: r.namespaced }));
    this.groupVersions.set(apiVersion, resources);
    return resources;
  }
}
