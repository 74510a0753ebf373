/**
 * A fault-injecting HTTP proxy in front of the fake API server (`fake-kube-api.ts`), for tests of
 * what the command line does when the API server fails while it runs. Requests travel through the
 * same client-node HTTP stack, sockets and timeouts as against a real cluster; the proxy forwards
 * them unchanged (watches stream through) unless a fault matches:
 *
 * - {@link FaultProxy.fail}: an error Status as kube-apiserver words it (429 with `Retry-After`
 *   as its priority-and-fairness filter sends, 500, 502, 503, 504), instead of forwarding;
 * - {@link FaultProxy.hang}: the request is read and never answered (the socket stays open);
 * - {@link FaultProxy.reset}: the connection is destroyed without an answer (`socket hang up`);
 * - {@link FaultProxy.stop} and {@link FaultProxy.start}: the API server goes away (connections
 *   dropped, new ones refused: `ECONNREFUSED`) and comes back on the same port, with its store
 *   (as kube-apiserver restarted over the same etcd);
 * - {@link FaultProxy.rewrite}: the answer's body is changed on its way back (a server that
 *   ignores a label selector);
 * - {@link FaultProxy.onRequest}: a hook per request, to fault at a moment (stop after the third
 *   apply, Ctrl-C during a step).
 *
 * @example
 * const api = await FakeKubeApi.start();
 * const proxy = await FaultProxy.start(api.url);
 * writeKubeconfig(api, file, { server: proxy.url });
 * proxy.fail('PATCH', /configmaps/, 429, { retryAfter: 1 });
 * ...
 * await proxy.close(); await api.close();
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the proxy saw it. */
export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: { readonly [key: string]: string };
  /** When it arrived (Date.now()). */
  readonly at: number;
  /** The fault it met, if one: `fail 503`, `hang`, `reset`. */
  fault?: string;
  /** The status of its answer, forwarded or injected. */
  status?: number;
}

/** How many matching requests a fault applies to. */
export interface FaultOptions {
  /** @default 1 */
  readonly times?: number;
  /** Only requests whose query has these values (such as `{ fieldManager: 'kyma-serverless' }`). */
  readonly query?: { readonly [key: string]: string };
}

/** Options of {@link FaultProxy.fail}. */
export interface FailOptions extends FaultOptions {
  /** The `Retry-After` header, in seconds. */
  readonly retryAfter?: number;
  /** The Status message; a realistic one for the code by default. */
  readonly message?: string;
}

interface Fault {
  readonly method: string;
  readonly path: RegExp | string;
  readonly query?: { readonly [key: string]: string };
  times: number;
  readonly act: (req: http.IncomingMessage, res: http.ServerResponse, request: ProxiedRequest) => 'handled' | ((body: any) => any);
}

/** Reasons and messages of kube-apiserver's error Statuses. */
const STATUS: { readonly [code: number]: readonly [string, string] } = {
  429: ['TooManyRequests', 'Too many requests, please try again later.'],
  500: ['InternalError', 'Internal error occurred: etcdserver: request timed out'],
  502: ['InternalError', 'Bad Gateway'],
  503: ['ServiceUnavailable', 'The server is currently unable to handle the request'],
  504: ['Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded'],
};

const matches = (pattern: RegExp | string, path: string) => (typeof pattern === 'string' ? path === pattern : pattern.test(path));

/** The proxy. Start it with {@link FaultProxy.start}; always {@link FaultProxy.close} it. */
export class FaultProxy {
  /** Starts a proxy to `target` (the fake's URL) on 127.0.0.1 and a free port. */
  public static async start(target: string): Promise<FaultProxy> {
    const proxy = new FaultProxy(new URL(target));
    await proxy.listen(0);
    return proxy;
  }

  /** Every request that reached the proxy, oldest first. */
  public readonly requests: ProxiedRequest[] = [];

  private server: http.Server;
  private port = 0;
  private running = false;
  private readonly sockets = new Set<Socket>();
  private readonly faults: Fault[] = [];
  private readonly hooks: ((request: ProxiedRequest) => void)[] = [];
  private readonly agent = new http.Agent({ keepAlive: true });

  private constructor(private readonly target: URL) {
    this.server = this.createServer();
  }

  /** The proxy's URL, for the kubeconfig: the same while it is stopped and started again. */
  public get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Whether it accepts connections. */
  public get up(): boolean {
    return this.running;
  }

  /** Answers the next matching request(s) with an error Status, without forwarding them. */
  public fail(method: string, path: RegExp | string, code: number, options: FailOptions = {}): void {
    this.add(method, path, options, (_req, res, request) => {
      const [reason, message] = STATUS[code] ?? ['InternalError', `Internal error occurred: injected ${code}`];
      request.fault = `fail ${code}`;
      request.status = code;
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
      if (options.retryAfter !== undefined) headers['retry-after'] = String(options.retryAfter);
      res.writeHead(code, headers);
      res.end(JSON.stringify({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: options.message ?? message, reason,
        details: options.retryAfter !== undefined ? { retryAfterSeconds: options.retryAfter } : {}, code,
      }));
      return 'handled';
    });
  }

  /** Reads the next matching request(s) and never answers: the client must give up on its own. */
  public hang(method: string, path: RegExp | string, options: FaultOptions = {}): void {
    this.add(method, path, options, (_req, _res, request) => {
      request.fault = 'hang';
      return 'handled';
    });
  }

  /** Destroys the connection of the next matching request(s) without an answer. */
  public reset(method: string, path: RegExp | string, options: FaultOptions = {}): void {
    this.add(method, path, options, (req, _res, request) => {
      request.fault = 'reset';
      req.socket.destroy();
      return 'handled';
    });
  }

  /** Forwards the next matching request(s) and changes the JSON body of the answer with `change`. */
  public rewrite(method: string, path: RegExp | string, change: (body: any) => any, options: FaultOptions = {}): void {
    this.add(method, path, options, (_req, _res, request) => {
      request.fault = 'rewrite';
      return change;
    });
  }

  /** Calls `hook` for every request as it arrives, before faults and forwarding. */
  public onRequest(hook: (request: ProxiedRequest) => void): void {
    this.hooks.push(hook);
  }

  /** The requests of a method (and path pattern) that reached the proxy. */
  public requestsOf(method: string, path?: RegExp | string): ProxiedRequest[] {
    return this.requests.filter(r => r.method === method.toUpperCase() && (path === undefined || matches(path, r.path)));
  }

  /**
   * The API server goes away: stops listening and destroys every connection, open requests and
   * watches included. New connections are refused until {@link start}.
   */
  public async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const closed = new Promise<void>(resolve => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  /** The API server comes back on the same port, with the fake's store as it was. */
  public async start(): Promise<void> {
    if (this.running) return;
    this.server = this.createServer();
    await this.listen(this.port);
  }

  /** Stops the proxy for good. */
  public async close(): Promise<void> {
    this.faults.length = 0;
    await this.stop();
    this.agent.destroy();
  }

  private add(method: string, path: RegExp | string, options: FaultOptions, act: Fault['act']): void {
    this.faults.push({ method: method.toUpperCase(), path, query: options.query, times: options.times ?? 1, act });
  }

  private createServer(): http.Server {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.on('connection', socket => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    return server;
  }

  private async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.running = true;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const request: ProxiedRequest = {
      method: (req.method ?? 'GET').toUpperCase(), path: url.pathname, query: Object.fromEntries(url.searchParams), at: Date.now(),
    };
    this.requests.push(request);
    for (const hook of this.hooks) hook(request);
    if (!this.running || req.socket.destroyed) {
      req.socket.destroy();
      return;
    }
    const fault = this.faults.find(f => (f.method === '*' || f.method === request.method) && matches(f.path, request.path)
      && Object.entries(f.query ?? {}).every(([k, v]) => request.query[k] === v));
    let change: ((body: any) => any) | undefined;
    if (fault) {
      fault.times -= 1;
      if (fault.times <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      const acted = fault.act(req, res, request);
      if (acted === 'handled') {
        req.resume();
        return;
      }
      change = acted;
    }
    const upstream = http.request({
      host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers: req.headers, agent: this.agent,
    }, answer => {
      request.status = answer.statusCode;
      if (!change) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const text = JSON.stringify(change!(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        const { 'content-length': _length, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(text);
      });
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
