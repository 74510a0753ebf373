/**
 * A small Kubernetes REST client on `node:https` and `node:http`, for the few calls the webhook's
 * self-managed TLS makes: read, create and replace Secrets and webhook configurations.
 *
 * It exists so that the webhook server bundles into one small file that runs on plain Node.js:
 * `@kubernetes/client-node` alone would add megabytes. It connects like client-go: in a Pod
 * through its ServiceAccount (re-reading the rotating token), elsewhere through a kubeconfig.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { load } from 'js-yaml';

/** The metadata of an object, as far as the webhook reads and writes it. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  [key: string]: unknown;
}

/** A Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A core/v1 Secret. */
export interface Secret extends KubeObject {
  type?: string;
  /** Values are base64. */
  data?: { [key: string]: string };
  [key: string]: unknown;
}

/** How the API server reaches a webhook. */
export interface WebhookClientConfig {
  /** The PEM CA bundle, base64. */
  caBundle?: string;
  service?: { name: string; namespace: string; path?: string; port?: number };
  url?: string;
}

/** One webhook of a Mutating- or ValidatingWebhookConfiguration. */
export interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  [key: string]: unknown;
}

/** An admissionregistration.k8s.io/v1 Mutating- or ValidatingWebhookConfiguration. */
export interface WebhookConfiguration extends KubeObject {
  webhooks?: Webhook[];
  [key: string]: unknown;
}

/** A kind of object and where the API serves it; `T` is its JSON type. */
export class KubeResource<T extends KubeObject> {
  /** core/v1 Secrets. */
  public static readonly SECRETS = new KubeResource<Secret>('', 'v1', 'secrets', 'Secret', true);

  /** admissionregistration.k8s.io/v1 MutatingWebhookConfigurations. */
  public static readonly MUTATING_WEBHOOK_CONFIGURATIONS = new KubeResource<WebhookConfiguration>(
    'admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false);

  /** admissionregistration.k8s.io/v1 ValidatingWebhookConfigurations. */
  public static readonly VALIDATING_WEBHOOK_CONFIGURATIONS = new KubeResource<WebhookConfiguration>(
    'admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false);

  /** Only here so that `T` belongs to the type: a `KubeResource<Secret>` is not a `KubeResource<WebhookConfiguration>`. */
  private declare readonly objectType?: T;

  /**
   * @param group the API group; `''` for the core group
   * @param version the API version, such as `v1`
   * @param plural the resource name in paths, such as `secrets`
   * @param kind the kind, such as `Secret`
   * @param namespaced whether its objects live in a namespace
   */
  constructor(
    public readonly group: string,
    public readonly version: string,
    public readonly plural: string,
    public readonly kind: string,
    public readonly namespaced: boolean,
  ) {}

  /**
   * The API path of an object, or of the collection without a name.
   *
   * @throws when a namespaced kind gets no namespace, or a cluster-scoped one gets one
   */
  public path(name: string | undefined, namespace: string | undefined): string {
    if (this.namespaced && !namespace) throw new Error(`${this.kind}s live in a namespace: give one`);
    if (!this.namespaced && namespace) throw new Error(`${this.kind}s are cluster-scoped: give no namespace (got '${namespace}')`);
    const groupVersion = this.group ? `/apis/${this.group}/${this.version}` : `/api/${this.version}`;
    const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${groupVersion}${scope}/${this.plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
  }
}

/** How to reach and authenticate to an API server. */
export interface KubeConnection {
  /** The API server's URL: `https://host:port`, or `http://` (a local proxy, a test server), optionally with a path prefix. */
  readonly server: string;
  /**
   * PEM of the CAs that signed the API server's certificate.
   *
   * @default - Node.js's built-in CAs
   */
  readonly certificateAuthority?: string;
  /**
   * Accept any server certificate (`insecure-skip-tls-verify`).
   *
   * @default false
   */
  readonly insecureSkipTlsVerify?: boolean;
  /**
   * The name to check the server certificate against (`tls-server-name`).
   *
   * @default - the server URL's host
   */
  readonly tlsServerName?: string;
  /**
   * PEM client certificate (with `clientKey`).
   *
   * @default - none
   */
  readonly clientCertificate?: string;
  /**
   * PEM key of `clientCertificate`.
   *
   * @default - none
   */
  readonly clientKey?: string;
  /**
   * A bearer token.
   *
   * @default - none
   */
  readonly token?: string;
  /**
   * A file holding a bearer token, re-read periodically (bound ServiceAccount tokens rotate);
   * wins over `token`.
   *
   * @default - none
   */
  readonly tokenFile?: string;
  /**
   * Basic authentication (with `password`).
   *
   * @default - none
   */
  readonly username?: string;
  /**
   * Basic authentication (with `username`).
   *
   * @default - none
   */
  readonly password?: string;
  /**
   * The context's namespace, or the Pod's.
   *
   * @default - none
   */
  readonly namespace?: string;
  /** Where the connection came from, for messages: a kubeconfig and its context, or the Pod's ServiceAccount. */
  readonly source: string;
}

/** The HTTP status of a failed request, and the API server's message. */
export class KubeApiError extends Error {
  /**
   * @param code the HTTP status code (named `code` as client-node's `ApiException.code`, so that `statusOf` reads both)
   * @param reason the Status `reason` (`NotFound`, `Conflict`, ...), else the HTTP reason phrase
   * @param body the answer's body as text
   * @param method the request's method
   * @param path the request's path
   * @param message the whole message
   */
  constructor(
    public readonly code: number,
    public readonly reason: string,
    public readonly body: string,
    public readonly method: string,
    public readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** Options of {@link KubeClient}. */
export interface KubeClientOptions {
  /**
   * How long one request may take, from its start to the end of the answer, in seconds.
   *
   * @default 30
   */
  readonly timeoutSeconds?: number;
  /**
   * How often to re-read a `tokenFile`, in seconds (client-go: about every minute).
   *
   * @default 60
   */
  readonly tokenRefreshSeconds?: number;
}

/** Options of a write. */
export interface WriteOptions {
  /**
   * The `fieldManager` the API server records for the write.
   *
   * @default - none (the API server derives one from the user agent)
   */
  readonly fieldManager?: string;
}

const USER_AGENT = 'kyma-serverless-webhook';

/**
 * Reads, creates and replaces objects through the Kubernetes REST API, with JSON bodies and a
 * timeout per request. A refused request throws a {@link KubeApiError} with the HTTP status and
 * the API server's Status message; an unreachable server or a timeout throws an `Error` naming
 * the server (with the network error as its `cause`).
 */
export class KubeClient {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;
  private readonly tokenRefreshMs: number;
  private cachedToken?: { readonly value: string; readonly readAt: number };

  /**
   * @param connection where the API server is, and the credentials
   * @param options timeouts
   * @throws when the server URL is not an http(s) URL
   */
  constructor(public readonly connection: KubeConnection, options: KubeClientOptions = {}) {
    let base: URL;
    try {
      base = new URL(connection.server);
    } catch {
      throw new Error(`The API server URL '${connection.server}' of ${connection.source} is not a URL`);
    }
    if (base.protocol !== 'https:' && base.protocol !== 'http:') {
      throw new Error(`The API server URL '${connection.server}' of ${connection.source} must start with https:// (or http://)`);
    }
    this.base = base;
    this.timeoutMs = (options.timeoutSeconds ?? 30) * 1000;
    this.tokenRefreshMs = (options.tokenRefreshSeconds ?? 60) * 1000;
    // No keep-alive: a few requests every few minutes gain nothing from it, and a reused socket the
    // API server has closed meanwhile fails the request.
    this.agent = base.protocol === 'https:'
      ? new https.Agent({
        ca: connection.insecureSkipTlsVerify ? undefined : connection.certificateAuthority,
        rejectUnauthorized: !connection.insecureSkipTlsVerify,
        servername: connection.tlsServerName,
        cert: connection.clientCertificate,
        key: connection.clientKey,
      })
      : new http.Agent();
  }

  /**
   * Reads an object.
   *
   * @param namespace for namespaced kinds
   * @throws KubeApiError with code 404 when it does not exist
   */
  public async read<T extends KubeObject>(resource: KubeResource<T>, name: string, namespace?: string): Promise<T> {
    return this.request<T>('GET', resource.path(name, namespace));
  }

  /**
   * Creates an object in the namespace of its metadata.
   *
   * @returns the object as stored
   * @throws KubeApiError with code 409 when it exists already
   */
  public async create<T extends KubeObject>(resource: KubeResource<T>, body: T, options: WriteOptions = {}): Promise<T> {
    return this.request<T>('POST', resource.path(undefined, body.metadata?.namespace), body, options);
  }

  /**
   * Replaces an object, named by its metadata. With a `metadata.resourceVersion`, only that version.
   *
   * @returns the object as stored
   * @throws KubeApiError with code 409 when the object changed since that version, 404 when it does not exist
   */
  public async replace<T extends KubeObject>(resource: KubeResource<T>, body: T, options: WriteOptions = {}): Promise<T> {
    const name = body.metadata?.name;
    if (!name) throw new Error(`Cannot replace a ${resource.kind} without metadata.name`);
    return this.request<T>('PUT', resource.path(name, body.metadata?.namespace), body, options);
  }

  /**
   * Sends one request and parses the JSON answer.
   *
   * @param method `GET`, `POST`, `PUT`, ...
   * @param apiPath the API path, such as `/api/v1/namespaces/ns/secrets/name`
   * @param body a JSON body
   * @param options the write's query parameters
   */
  public async request<T>(method: string, apiPath: string, body?: unknown, options: WriteOptions = {}): Promise<T> {
    const url = new URL(this.base.href);
    url.pathname = `${this.base.pathname.replace(/\/+$/, '')}${apiPath}`;
    if (options.fieldManager) url.searchParams.set('fieldManager', options.fieldManager);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const headers: http.OutgoingHttpHeaders = { 'Accept': 'application/json', 'User-Agent': USER_AGENT };
    if (payload) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const authorization = await this.authorization();
    if (authorization) headers.Authorization = authorization;
    const { status, text } = await this.send(url, method, apiPath, headers, payload);
    if (status >= 200 && status < 300) {
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new Error(`${method} ${apiPath}: the API server at ${this.connection.server} answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
    }
    throw this.apiError(status, text, method, apiPath);
  }

  private send(url: URL, method: string, apiPath: string, headers: http.OutgoingHttpHeaders, payload: Buffer | undefined): Promise<{ status: number; text: string }> {
    const where = `the API server at ${this.connection.server}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | undefined, result?: { status: number; text: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(result!);
      };
      const request = (url.protocol === 'https:' ? https : http).request(url, { method, headers, agent: this.agent }, response => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => settle(undefined, { status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', e => settle(new Error(`${method} ${apiPath}: the answer of ${where} broke off: ${e.message}`, { cause: e })));
      });
      const timer = setTimeout(() => {
        settle(new Error(`${method} ${apiPath}: ${where} did not answer within ${this.timeoutMs / 1000}s`));
        request.destroy();
      }, this.timeoutMs);
      request.on('error', e => settle(new Error(`${method} ${apiPath}: cannot reach ${where}: ${e.message}`, { cause: e })));
      request.end(payload);
    });
  }

  private apiError(status: number, text: string, method: string, apiPath: string): KubeApiError {
    let reason = http.STATUS_CODES[status] ?? 'Error';
    let message = text.trim().slice(0, 500) || reason;
    try {
      const parsed = JSON.parse(text) as { kind?: unknown; reason?: unknown; message?: unknown };
      if (parsed?.kind === 'Status') {
        if (typeof parsed.reason === 'string' && parsed.reason) reason = parsed.reason;
        if (typeof parsed.message === 'string' && parsed.message) message = parsed.message;
      }
    } catch {
      // Not a Status (a proxy's HTML page): keep the text.
    }
    const hint = status === 401 ? ` (check the credentials of ${this.connection.source})` : '';
    return new KubeApiError(status, reason, text, method, apiPath, `${status} ${reason}: ${message}${hint}`);
  }

  private async authorization(): Promise<string | undefined> {
    const { tokenFile, token, username, password } = this.connection;
    if (tokenFile) return `Bearer ${await this.fileToken(tokenFile)}`;
    if (token) return `Bearer ${token}`;
    if (username !== undefined || password !== undefined) return `Basic ${Buffer.from(`${username ?? ''}:${password ?? ''}`, 'utf8').toString('base64')}`;
    return undefined;
  }

  /** The token of a file, re-read once it is `tokenRefreshSeconds` old; the last good one while the file cannot be read. */
  private async fileToken(file: string): Promise<string> {
    const cached = this.cachedToken;
    if (cached && Date.now() - cached.readAt < this.tokenRefreshMs) return cached.value;
    try {
      const value = (await fs.promises.readFile(file, 'utf8')).trim();
      if (!value) throw new Error('the file is empty');
      this.cachedToken = { value, readAt: Date.now() };
      return value;
    } catch (e) {
      // The kubelet swaps the file atomically, so this is rare; the last token is likely still good.
      if (cached) return cached.value;
      throw new Error(`Cannot read the token file ${file} of ${this.connection.source}: ${(e as Error).message}`);
    }
  }
}

/** Where a Pod's ServiceAccount token, CA and namespace are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Options of {@link inClusterConnection}. */
export interface InClusterOptions {
  /**
   * The folder with `token`, `ca.crt` and `namespace`.
   *
   * @default SERVICE_ACCOUNT_DIR
   */
  readonly serviceAccountDir?: string;
  /**
   * The environment, with `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`.
   *
   * @default process.env
   */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The connection of a Pod: the API server from `KUBERNETES_SERVICE_HOST` and
 * `KUBERNETES_SERVICE_PORT`, the Pod's ServiceAccount token (re-read as it rotates) and the
 * cluster's CA. The CA is read once.
 *
 * @throws when not in a Pod, or the ServiceAccount token or CA cannot be read
 */
export function inClusterConnection(options: InClusterOptions = {}): KubeConnection {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error('No kubeconfig, and not in a Kubernetes Pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set): '
      + 'give a kubeconfig with --kubeconfig or KUBECONFIG');
  }
  const source = `the Pod's ServiceAccount (${dir})`;
  const read = (name: string, what: string, fix: string) => {
    const file = path.join(dir, name);
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`Cannot read the ${what} ${file}: ${(e as Error).message}; ${fix}`);
    }
  };
  const mount = 'does the Pod mount its ServiceAccount token (automountServiceAccountToken)?';
  const token = read('token', 'ServiceAccount token', mount);
  if (!token.trim()) throw new Error(`The ServiceAccount token ${path.join(dir, 'token')} is empty; ${mount}`);
  const certificateAuthority = read('ca.crt', 'cluster CA', mount);
  let namespace: string | undefined;
  try {
    namespace = fs.readFileSync(path.join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  // An IPv6 address goes in brackets in a URL.
  const hostInUrl = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return { server: `https://${hostInUrl}:${port}`, certificateAuthority, tokenFile: path.join(dir, 'token'), namespace, source };
}

type YamlMap = { [key: string]: unknown };

const isMap = (value: unknown): value is YamlMap => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A named entry of a kubeconfig list, with the folder its relative paths are resolved in. */
interface Named {
  readonly value: YamlMap;
  readonly file: string;
}

interface MergedKubeconfig {
  readonly clusters: Map<string, Named>;
  readonly users: Map<string, Named>;
  readonly contexts: Map<string, Named>;
  readonly currentContext?: string;
}

/** Reads kubeconfig files and merges them as client-go does: for every name, the first file that defines it wins. */
function readKubeconfigs(files: readonly string[]): MergedKubeconfig {
  const merged = { clusters: new Map<string, Named>(), users: new Map<string, Named>(), contexts: new Map<string, Named>() };
  let currentContext: string | undefined;
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`Cannot read the kubeconfig ${file}: ${(e as Error).message}`);
    }
    let config: unknown;
    try {
      config = load(text) ?? {};
    } catch (e) {
      throw new Error(`The kubeconfig ${file} is not YAML: ${(e as Error).message}`);
    }
    if (!isMap(config)) throw new Error(`The kubeconfig ${file} is not a YAML map`);
    const lists = [['clusters', 'cluster', merged.clusters], ['users', 'user', merged.users], ['contexts', 'context', merged.contexts]] as const;
    for (const [list, key, into] of lists) {
      const entries = config[list] ?? [];
      if (!Array.isArray(entries)) throw new Error(`The kubeconfig ${file}: '${list}' must be a list`);
      entries.forEach((entry: unknown, i) => {
        if (!isMap(entry) || typeof entry.name !== 'string' || !entry.name) throw new Error(`The kubeconfig ${file}: ${list}[${i}] has no name`);
        const value = entry[key] ?? {};
        if (!isMap(value)) throw new Error(`The kubeconfig ${file}: ${list}[${i}] ('${entry.name}') has no '${key}' map`);
        if (!into.has(entry.name)) into.set(entry.name, { value, file });
      });
    }
    const current = config['current-context'];
    if (!currentContext && typeof current === 'string' && current) currentContext = current;
  }
  return { ...merged, currentContext };
}

/**
 * The connection of a kubeconfig's context.
 *
 * Supported: clusters with `server`, `certificate-authority` or `certificate-authority-data`,
 * `insecure-skip-tls-verify` (which then ignores any CA) and `tls-server-name`; users with
 * `token`, `tokenFile`, `client-certificate`/`client-key` or their `-data` forms, or
 * `username`/`password`, or none of them (anonymous). `-data` wins over the file it stands for,
 * relative file paths are resolved against the folder of the kubeconfig that names them. Several
 * files are merged as client-go merges `KUBECONFIG`: for every cluster, user and context name, and
 * for `current-context`, the first file that sets it wins.
 *
 * @param files one kubeconfig file, or several to merge
 * @param context the context to use; else the `current-context`
 * @throws naming the file and entry: when a file cannot be read, the context, its cluster or its user
 *   does not exist, or the user authenticates with `exec` or `auth-provider` (credential plugins)
 */
export function kubeconfigConnection(files: string | readonly string[], context?: string): KubeConnection {
  const list = typeof files === 'string' ? [files] : files;
  if (!list.length) throw new Error('No kubeconfig file given');
  const config = readKubeconfigs(list);
  const where = list.length === 1 ? `the kubeconfig ${list[0]}` : `the kubeconfigs ${list.join(', ')}`;
  const contextName = context ?? config.currentContext;
  if (!contextName) {
    throw new Error(`${where[0].toUpperCase()}${where.slice(1)} has no current-context: give a context, or set one with \`kubectl config use-context\``);
  }
  const contextEntry = config.contexts.get(contextName);
  if (!contextEntry) throw new Error(`No context '${contextName}' in ${where}; it has: ${[...config.contexts.keys()].join(', ') || 'none'}`);
  const clusterName = contextEntry.value.cluster;
  const cluster = typeof clusterName === 'string' ? config.clusters.get(clusterName) : undefined;
  if (!cluster) throw new Error(`The context '${contextName}' in ${where} names the cluster '${String(clusterName ?? '')}', which it does not define`);
  const userName = contextEntry.value.user;
  const user = typeof userName === 'string' && userName ? config.users.get(userName) : undefined;
  if (typeof userName === 'string' && userName && !user) {
    throw new Error(`The context '${contextName}' in ${where} names the user '${userName}', which it does not define`);
  }
  const source = `context '${contextName}' of ${where}`;

  const clusterFields = cluster.value;
  const server = clusterFields.server;
  if (typeof server !== 'string' || !server) throw new Error(`The cluster '${clusterName}' in ${cluster.file} has no server`);
  if (clusterFields['proxy-url'] !== undefined) {
    throw new Error(`The cluster '${clusterName}' in ${cluster.file} uses proxy-url, which this client does not support: use a kubeconfig without it`);
  }
  const insecureSkipTlsVerify = clusterFields['insecure-skip-tls-verify'] === true;

  let userFields: YamlMap = {};
  if (user) {
    userFields = user.value;
    const unsupported = (kind: string) => new Error(
      `The user '${userName}' in ${user.file} authenticates with ${kind}, which this client does not support; `
      + 'it supports token, tokenFile, client-certificate and client-key (or their -data forms), and username and password: '
      + 'use such a user, for example with a ServiceAccount token');
    if (userFields['auth-provider'] !== undefined) throw unsupported(`auth-provider (${String((userFields['auth-provider'] as YamlMap)?.name ?? 'unnamed')})`);
    if (userFields.exec !== undefined) throw unsupported('exec (a credential plugin)');
    if (userFields.as !== undefined || userFields['as-groups'] !== undefined || userFields['as-uid'] !== undefined) {
      throw unsupported('impersonation (as)');
    }
  }
  const text = (fields: YamlMap, key: string, owner: Named, what: string): string | undefined => {
    const dataValue = fields[`${key}-data`];
    if (typeof dataValue === 'string' && dataValue) return Buffer.from(dataValue, 'base64').toString('utf8');
    const fileValue = fields[key];
    if (typeof fileValue !== 'string' || !fileValue) return undefined;
    const file = path.resolve(path.dirname(owner.file), fileValue);
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`Cannot read the ${key} file ${file} of the ${what} in ${owner.file}: ${(e as Error).message}`);
    }
  };
  const clientCertificate = user && text(userFields, 'client-certificate', user, `user '${userName}'`);
  const clientKey = user && text(userFields, 'client-key', user, `user '${userName}'`);
  if (user && (clientCertificate === undefined) !== (clientKey === undefined)) {
    throw new Error(`The user '${userName}' in ${user.file} has a client ${clientCertificate ? 'certificate without a key' : 'key without a certificate'}`);
  }
  const tokenFile = typeof userFields.tokenFile === 'string' && userFields.tokenFile && user
    ? path.resolve(path.dirname(user.file), userFields.tokenFile)
    : undefined;
  const string = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  return {
    server,
    certificateAuthority: insecureSkipTlsVerify ? undefined : text(clusterFields, 'certificate-authority', cluster, `cluster '${clusterName}'`),
    insecureSkipTlsVerify,
    tlsServerName: string(clusterFields['tls-server-name']),
    clientCertificate,
    clientKey,
    token: string(userFields.token),
    tokenFile,
    username: string(userFields.username),
    password: string(userFields.password),
    namespace: string(contextEntry.value.namespace),
    source,
  };
}

/** Options of {@link defaultConnection}. */
export interface DefaultConnectionOptions extends InClusterOptions {
  /**
   * A kubeconfig file, which wins over everything else.
   *
   * @default - `KUBECONFIG`, else `~/.kube/config`, else the Pod's ServiceAccount
   */
  readonly kubeconfig?: string;
  /**
   * The kubeconfig context.
   *
   * @default - the kubeconfig's current-context
   */
  readonly context?: string;
  /**
   * The home folder, where `.kube/config` is looked for.
   *
   * @default - `HOME`, else the user's home folder
   */
  readonly homeDir?: string;
}

/**
 * Picks the connection as kubectl and client-node do: an explicit kubeconfig file; else the files
 * of `KUBECONFIG` (separated by the platform's path delimiter; missing ones are skipped, the rest
 * merged); else `~/.kube/config` if it exists; else the Pod's ServiceAccount.
 *
 * @throws when the chosen kubeconfig cannot be used (see {@link kubeconfigConnection}), when none
 *   of the files of `KUBECONFIG` exists, or when there is no kubeconfig outside a Pod
 */
export function defaultConnection(options: DefaultConnectionOptions = {}): KubeConnection {
  if (options.kubeconfig) return kubeconfigConnection(options.kubeconfig, options.context);
  const env = options.env ?? process.env;
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  if (listed.length) {
    const existing = listed.filter(file => fs.existsSync(file));
    if (!existing.length) throw new Error(`None of the files in KUBECONFIG exists: ${listed.join(', ')}`);
    return kubeconfigConnection(existing, options.context);
  }
  let home = options.homeDir ?? env.HOME;
  if (!home) {
    try {
      home = os.homedir();
    } catch {
      home = undefined;
    }
  }
  const homeConfig = home ? path.join(home, '.kube', 'config') : undefined;
  if (homeConfig && fs.existsSync(homeConfig)) return kubeconfigConnection(homeConfig, options.context);
  return inClusterConnection(options);
}
