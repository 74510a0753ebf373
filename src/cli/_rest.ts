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
import { statusOf } from '../_api-errors';

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

/** How {@link RestClient} tries a request again. Durations in milliseconds. */
export interface RetryOptions {
  /**
   * How long one try of a request may go unanswered before it is abandoned (and tried again):
   * an API server, proxy or load balancer that accepts the connection and never answers.
   *
   * @default 30_000
   */
  readonly requestTimeoutMs?: number;
  /**
   * How long one request is tried again while the API server fails in a way that passes: it is
   * unreachable or drops the connection, does not answer within `requestTimeoutMs`, answers 429
   * (too many requests), 502, 503 or 504, or 500 with a `Retry-After` or from an admission
   * webhook it cannot call. The caller's signal (a command's deadline, Ctrl-C) ends it sooner.
   *
   * @default 120_000
   */
  readonly retryTimeoutMs?: number;
  /**
   * The first pause between tries; each next one doubles, up to 8 s. A `Retry-After` of the
   * answer is waited instead, when it is longer.
   *
   * @default 250
   */
  readonly backoffMs?: number;
  /** Told before each pause, for progress lines. */
  readonly onRetry?: (retry: RetryNotice) => void;
}

/** A request about to be tried again. */
export interface RetryNotice {
  readonly method: string;
  readonly path: string;
  /** The try that failed, from 1. */
  readonly attempt: number;
  /** The pause before the next try. */
  readonly delayMs: number;
  /** Whether the pause is the server's `Retry-After`. */
  readonly retryAfter: boolean;
  /** What failed: `503 ServiceUnavailable: ...`, `ECONNREFUSED`, `no answer within 30s`. */
  readonly reason: string;
}

/** The longest pause between two tries of a request, unless `Retry-After` asks for more. */
const MAX_BACKOFF_MS = 8_000;

/** Network errors that pass: the server restarts, a connection was dropped, a route flaps. */
const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET',
]);

/** A try that got no answer within the request timeout. */
export class RequestTimeoutError extends Error {
  public readonly code = 'ETIMEDOUT';
  constructor(public readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs < 1000 ? `${timeoutMs}ms` : `${Math.round(timeoutMs / 100) / 10}s`}`);
    this.name = 'RequestTimeoutError';
  }
}

/** The message of an API error's Status body, if it has one. */
function statusMessage(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  if (typeof body !== 'string') return '';
  try {
    return String((JSON.parse(body) as { message?: string }).message ?? '');
  } catch {
    return body;
  }
}

/** The network error code of a failed call (node-fetch's FetchError keeps the system error's). */
function networkCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown }).code ?? (e as { errno?: unknown }).errno ?? (e as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Whether a failed call is worth another try: the API server was unreachable or dropped the
 * connection, gave no answer in time, or answered 429, 502, 503, 504, or 500 with a `Retry-After`
 * or about an admission webhook it could not call (its Pods are starting).
 */
export function isRetryable(e: unknown): boolean {
  const code = statusOf(e);
  if (code === undefined) {
    if (e instanceof RequestTimeoutError) return true;
    const network = networkCode(e);
    return network !== undefined && RETRYABLE_NETWORK_CODES.has(network)
      || /socket hang up|other side closed|premature close/i.test((e as Error)?.message ?? '');
  }
  if (code === 429 || code === 502 || code === 503 || code === 504) return true;
  return code === 500 && (retryAfterMs(e) !== undefined
    || /failed calling webhook|no endpoints available|connection refused/i.test(statusMessage(e)));
}

/** The answer's `Retry-After` (seconds, or an HTTP date), in milliseconds. */
export function retryAfterMs(e: unknown, now = Date.now()): number | undefined {
  const headers = (e as { headers?: { [name: string]: string } }).headers;
  const value = headers?.['retry-after'] ?? headers?.['Retry-After'];
  if (value === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `503 ServiceUnavailable: the server is ...`, `ECONNREFUSED`: what a failed try was, in a few words. */
export function failureReason(e: unknown): string {
  const code = statusOf(e);
  if (code !== undefined) {
    const message = statusMessage(e);
    return `${code}${message ? `: ${message}` : ''}`;
  }
  if (e instanceof RequestTimeoutError) return e.message;
  const network = networkCode(e);
  const message = (e as Error)?.message ?? String(e);
  return network && !message.includes(network) ? `${network} ${message}` : message;
}

/**
 * What a request that was tried more than once says: the error of its last try, with `attempts`
 * and `retriedMs` set, so that messages can say how long it was tried.
 */
export interface RetriedError {
  readonly attempts?: number;
  readonly retriedMs?: number;
}

/** ` (5 tries over 2.1s)` of an error a request gave up with after retries; '' for one try. */
export function triesOf(e: unknown): string {
  const { attempts, retriedMs } = (e ?? {}) as RetriedError;
  if (!attempts || attempts < 2) return '';
  return ` (${attempts} tries over ${((retriedMs ?? 0) / 1000).toFixed(1)}s)`;
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Calls the API server of a kubeconfig's current context. */
export class RestClient {
  /**
   * A client for the current context of a kubeconfig.
   *
   * @param retry how requests are timed out and tried again
   * @throws when the kubeconfig has no current cluster
   */
  public static async create(kubeConfig: KubeConfig, retry: RetryOptions = {}): Promise<RestClient> {
    const k8s = await import('@kubernetes/client-node');
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('The kubeconfig has no current cluster');
    const configuration = k8s.createConfiguration({
      baseServer: new k8s.ServerConfiguration(cluster.server, {}),
      authMethods: { default: kubeConfig },
    });
    return new RestClient(configuration, k8s.ApiException, retry);
  }

  private constructor(
    private readonly configuration: import('@kubernetes/client-node').Configuration,
    private readonly ApiException: typeof import('@kubernetes/client-node').ApiException,
    private readonly retry: RetryOptions,
  ) {}

  /**
   * Makes one call, tried again while it fails in a way that passes ({@link isRetryable}), with a
   * pause that doubles from `backoffMs` (or the answer's `Retry-After`), until `retryTimeoutMs`.
   * Every request this client makes is idempotent: reads, server-side applies, deletes.
   *
   * @returns the status and the parsed body of a 2xx answer
   * @throws ApiException (with `code` and the body's text) for any other status, as client-node's
   * own APIs do, so that {@link statusOf} and `describeApiError` read it; after retries, the last
   * try's error with `attempts` and `retriedMs` ({@link RetriedError}). When the request's own
   * signal aborts (a deadline, Ctrl-C), its reason, at once.
   */
  public async request(request: RestRequest): Promise<RestResponse> {
    const requestTimeoutMs = this.retry.requestTimeoutMs ?? 30_000;
    const retryTimeoutMs = this.retry.retryTimeoutMs ?? 120_000;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const perTry = new AbortController();
      const timer = setTimeout(() => perTry.abort(new RequestTimeoutError(requestTimeoutMs)), requestTimeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, perTry.signal]) : perTry.signal;
      let failure: unknown;
      try {
        return await this.once(request, signal);
      } catch (e) {
        if (request.signal?.aborted) throw e;
        failure = perTry.signal.aborted ? perTry.signal.reason : e;
      } finally {
        clearTimeout(timer);
      }
      const elapsed = Date.now() - started;
      const retryAfter = retryAfterMs(failure);
      const backoff = Math.min(MAX_BACKOFF_MS, (this.retry.backoffMs ?? 250) * 2 ** (attempt - 1));
      const delayMs = Math.max(backoff, retryAfter ?? 0);
      if (!isRetryable(failure) || elapsed + delayMs > retryTimeoutMs) {
        if (failure && typeof failure === 'object') Object.assign(failure, { attempts: attempt, retriedMs: elapsed });
        throw failure;
      }
      this.retry.onRetry?.({
        method: request.method, path: request.path, attempt, delayMs, retryAfter: retryAfter !== undefined && retryAfter >= backoff,
        reason: failureReason(failure),
      });
      await pause(delayMs, request.signal);
    }
  }

  private async once(request: RestRequest, signal: AbortSignal): Promise<RestResponse> {
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
    context.setSignal(signal);
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

/**
 * Calls `call` until it succeeds, as {@link RestClient.request} tries a request again: for calls
 * made through client-node's typed APIs (the lists of `status`). A try that takes longer than
 * `requestTimeoutMs` is abandoned (its answer, if one comes, is ignored) and counts as failed.
 *
 * @param what the call, for {@link RetryNotice}: `GET /apis/.../functions`
 * @param signal ends the tries (the command is done): the pause rejects with its reason
 * @throws the last try's error, with `attempts` and `retriedMs`, when it is not worth another try
 * or `retryTimeoutMs` has passed
 */
export async function withRetries<T>(what: string, call: () => Promise<T>, retry: RetryOptions = {}, signal?: AbortSignal): Promise<T> {
  const requestTimeoutMs = retry.requestTimeoutMs ?? 30_000;
  const retryTimeoutMs = retry.retryTimeoutMs ?? 120_000;
  const started = Date.now();
  const [method, ...rest] = what.split(' ');
  for (let attempt = 1; ; attempt++) {
    let timer: NodeJS.Timeout | undefined;
    let failure: unknown;
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new RequestTimeoutError(requestTimeoutMs)), requestTimeoutMs);
        }),
      ]);
    } catch (e) {
      failure = e;
    } finally {
      clearTimeout(timer);
    }
    const elapsed = Date.now() - started;
    const retryAfter = retryAfterMs(failure);
    const backoff = Math.min(MAX_BACKOFF_MS, (retry.backoffMs ?? 250) * 2 ** (attempt - 1));
    const delayMs = Math.max(backoff, retryAfter ?? 0);
    if (!isRetryable(failure) || elapsed + delayMs > retryTimeoutMs) {
      if (failure && typeof failure === 'object') Object.assign(failure, { attempts: attempt, retriedMs: elapsed });
      throw failure;
    }
    if (signal?.aborted) throw failure;
    retry.onRetry?.({
      method, path: rest.join(' '), attempt, delayMs, retryAfter: retryAfter !== undefined && retryAfter >= backoff, reason: failureReason(failure),
    });
    await pause(delayMs, signal);
  }
}
