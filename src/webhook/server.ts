/**
 * The webhook's HTTPS server: two admission endpoints, health, readiness and metrics.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { AddressInfo } from 'node:net';
import * as tls from 'node:tls';
import { FunctionRuleOptions, validateFunction } from '../api/function-rules';
import { DEFAULT_RELEASE } from '../api/release';
import {
  AdmissionRequest, AdmissionRequestError, AdmissionResponse, admissionReview, decodeAdmissionReview, reviewDefaulting, reviewValidation,
} from './admission';
import { CertificatePair, expiryOf } from './certificates';
import { MAX_REQUEST_BYTES, WEBHOOK_PATHS, WebhookConfig } from './config';
import { LOG_LIMITS, Logger, createLogger } from './log';
import { RequestResult, WebhookMetrics } from './metrics';

/** The handshake timer of each raw connection, cleared once it is secure. */
const HANDSHAKE_TIMERS = new WeakMap<net.Socket, NodeJS.Timeout>();

/** Destroys a socket one second from now, unless it closed by then: an answer's last bytes get their chance. */
function destroySoon(socket: net.Socket): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), 1000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Paths of the probes and metrics. */
export const OBSERVABILITY_PATHS = { health: '/healthz', ready: '/readyz', metrics: '/metrics' } as const;

const ADMISSION_PATHS: ReadonlySet<string> = new Set(Object.values(WEBHOOK_PATHS));
const GET_PATHS: ReadonlySet<string> = new Set(Object.values(OBSERVABILITY_PATHS));

/** Props of {@link WebhookServer}. */
export interface WebhookServerProps {
  /** The configuration (defaults, timeouts). */
  readonly config: WebhookConfig;
  /** The serving certificate to start with; {@link WebhookServer.setCertificate} swaps it. */
  readonly certificate: CertificatePair;
  /**
   * The HTTPS port; 0 picks a free one.
   *
   * @default 8443
   */
  readonly port?: number;
  /**
   * A plain-HTTP port that serves only the probes and metrics; 0 picks a free one.
   *
   * @default - none: everything is served over HTTPS only
   */
  readonly metricsPort?: number;
  /**
   * The address to listen on.
   *
   * @default - every address
   */
  readonly host?: string;
  /**
   * Where to log.
   *
   * @default - JSON lines on standard output
   */
  readonly logger?: Logger;
  /**
   * Where to count.
   *
   * @default - a new registry with the Node.js process metrics
   */
  readonly metrics?: WebhookMetrics;
  /**
   * The stack's minimum requests, for validation. Its `release` counts only when the
   * configuration names none.
   *
   * @default - the Function API's minimums
   */
  readonly ruleOptions?: FunctionRuleOptions;
  /**
   * What the server lets connections and reviews take.
   *
   * @default - see {@link WebhookServerLimits}
   */
  readonly limits?: WebhookServerLimits;
}

/** What the server lets connections and reviews take; each has a default that suits the stack's Deployment. */
export interface WebhookServerLimits {
  /**
   * Open connections on each port; more are closed at once, with a log line.
   *
   * @default 256
   */
  readonly maxConnections?: number;
  /**
   * How long a TLS handshake may take from the TCP connection on, in milliseconds.
   *
   * @default 5000
   */
  readonly handshakeTimeoutMs?: number;
  /**
   * How long a review may take from its request's arrival, in milliseconds; when it is over,
   * the answer is a denial that says so.
   *
   * @default - the configuration's request timeout less 1 s (8 s under the stack's 10 s `webhook.timeout`)
   */
  readonly reviewDeadlineMs?: number;
  /**
   * Reviews of more than {@link largeReviewBytes} read or judged at once; more are refused
   * with 429 and `Retry-After`, so that a few 3 MiB reviews cannot fill the memory.
   *
   * @default 1
   */
  readonly maxLargeReviews?: number;
  /**
   * The request size from which a review counts as large.
   *
   * @default 262144 (256 KiB)
   */
  readonly largeReviewBytes?: number;
}

/** The limits a server goes by, defaults filled in. */
type Limits = Required<WebhookServerLimits>;

interface Reply {
  readonly status: number;
  readonly result: RequestResult;
  readonly body: string;
  /** What to log about a refusal. */
  readonly message?: string;
  readonly contentType?: string;
  readonly headers?: http.OutgoingHttpHeaders;
}

function text(status: number, result: RequestResult, body: string, headers?: http.OutgoingHttpHeaders): Reply {
  return { status, result, body: `${body}\n`, message: body, contentType: 'text/plain; charset=utf-8', headers };
}

/** An error reply shaped like the API server's own (`metav1.Status`). */
function failure(status: number, result: RequestResult, reason: string, message: string, headers?: http.OutgoingHttpHeaders): Reply {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status, reason, message });
  return { status, result, body, message, contentType: 'application/json', headers };
}

/**
 * The admission webhook server. It never throws from a request: whatever arrives gets an HTTP
 * answer (400 for input that is not an AdmissionReview about a Function, 413 over 3 MiB, 408
 * when the body is not complete within the request timeout) and a log line with the request's uid.
 *
 * @example
 * const server = new WebhookServer({ config: resolveWebhookConfig(), certificate: { cert, key } });
 * await server.start();
 * process.on('SIGTERM', () => server.stop());
 */
export class WebhookServer {
  /** Where the server logs. */
  public readonly logger: Logger;
  /** The server's metrics. */
  public readonly metrics: WebhookMetrics;
  private readonly https: https.Server;
  private readonly plain?: http.Server;
  /** What validation and defaulting go by: the stack's minimum requests, and its release from the configuration. */
  private readonly ruleOptions: FunctionRuleOptions;
  /** What this server lets connections and reviews take. */
  public readonly limits: Limits;
  private largeReviews = 0;
  private lastDropLog = 0;
  private draining = false;
  private started = false;
  private stopping?: Promise<void>;

  constructor(private readonly props: WebhookServerProps) {
    this.logger = props.logger ?? createLogger();
    this.metrics = props.metrics ?? new WebhookMetrics();
    this.ruleOptions = {
      // The API server evaluates the CRD's CEL rules before it calls a validating webhook: the
      // server checks the rest, and its program carries no CEL interpreter.
      celRules: false,
      ...props.ruleOptions,
      release: props.config.release ?? props.ruleOptions?.release ?? DEFAULT_RELEASE,
    };
    const timeoutMs = props.config.requestTimeoutSeconds * 1000;
    this.limits = {
      maxConnections: 256,
      handshakeTimeoutMs: 5000,
      reviewDeadlineMs: Math.max(1000, timeoutMs - 1000),
      maxLargeReviews: 1,
      largeReviewBytes: 256 * 1024,
      ...props.limits,
    };
    // Node checks the header and request timeouts only this often (30 s by default).
    const connectionsCheckingInterval = Math.min(1000, timeoutMs);
    this.https = https.createServer(
      {
        cert: props.certificate.cert, key: props.certificate.key, minVersion: 'TLSv1.2', connectionsCheckingInterval,
        handshakeTimeout: this.limits.handshakeTimeoutMs,
      },
      (req, res) => this.handle(req, res, true),
    );
    // Node's handshakeTimeout counts only once the client has said something: a TCP connection
    // that never sends its ClientHello is cut here.
    this.https.on('connection', (socket: net.Socket) => {
      const timer = setTimeout(() => {
        this.logger.debug({ remote: socket.remoteAddress }, `no TLS handshake within ${this.limits.handshakeTimeoutMs}ms; closing the connection`);
        socket.destroy();
      }, this.limits.handshakeTimeoutMs);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
      HANDSHAKE_TIMERS.set(socket, timer);
    });
    this.https.on('secureConnection', (socket: tls.TLSSocket) => {
      const raw = (socket as unknown as { _parent?: net.Socket })._parent;
      const timer = raw ? HANDSHAKE_TIMERS.get(raw) : undefined;
      if (timer) clearTimeout(timer);
    });
    this.plain = props.metricsPort === undefined
      ? undefined
      : http.createServer({ connectionsCheckingInterval }, (req, res) => this.handle(req, res, false));
    for (const server of [this.https, this.plain]) {
      if (!server) continue;
      // Node's own limits back ours up: a request whose headers or body trickle in is cut off.
      server.headersTimeout = timeoutMs;
      server.requestTimeout = timeoutMs + 1000;
      // A connection that says nothing for twice the request timeout (between keep-alive requests too) is cut.
      server.setTimeout(2 * timeoutMs, socket => socket.destroy());
      server.maxConnections = this.limits.maxConnections;
      server.on('drop', (data?: { remoteAddress?: string }) => this.dropped(data?.remoteAddress));
      server.on('clientError', (err: Error & { code?: string }, socket: net.Socket) => {
        const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
        this.logger.debug({ err: err.message }, timedOut ? 'request timed out' : 'malformed HTTP request');
        if (timedOut) this.metrics.requests.inc({ path: 'other', result: RequestResult.TIMEOUT });
        const status = timedOut ? '408 Request Timeout' : '400 Bad Request';
        if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        // A client that does not read its answer does not keep the socket.
        destroySoon(socket);
      });
    }
    this.https.on('tlsClientError', (err: Error) => this.logger.debug({ err: err.message }, 'TLS handshake failed'));
    this.recordExpiry(props.certificate);
  }

  /** Logs connections refused over {@link WebhookServerLimits.maxConnections}, at most once a second. */
  private dropped(remote?: string): void {
    this.metrics.requests.inc({ path: 'other', result: RequestResult.UNAVAILABLE });
    const now = Date.now();
    if (now - this.lastDropLog < 1000) return;
    this.lastDropLog = now;
    this.logger.warn({ remote, maxConnections: this.limits.maxConnections },
      `connection refused: ${this.limits.maxConnections} connections are open, the most this server takes; close idle clients or raise limits.maxConnections`);
  }

  /** How many connections the HTTPS port holds now, handshakes in progress included. */
  public openConnections(): Promise<number> {
    return new Promise((resolve, reject) => this.https.getConnections((e, count) => (e ? reject(e) : resolve(count))));
  }

  /** The HTTPS port, once started. */
  public get port(): number {
    return (this.https.address() as AddressInfo).port;
  }

  /** The plain-HTTP metrics port, once started; `undefined` without one. */
  public get metricsPort(): number | undefined {
    return this.plain ? (this.plain.address() as AddressInfo).port : undefined;
  }

  /** Whether `/readyz` answers 200: listening, and not shutting down. */
  public get ready(): boolean {
    return this.started && !this.draining;
  }

  /** Starts listening on both ports. */
  public async start(): Promise<void> {
    // Compiles the schema validator now, so that the first review is as fast as the others.
    validateFunction({}, this.ruleOptions);
    const listen = (server: http.Server | https.Server, port: number) => new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.props.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await listen(this.https, this.props.port ?? 8443);
    if (this.plain) await listen(this.plain, this.props.metricsPort ?? 0);
    this.started = true;
    this.logger.info({ port: this.port, metricsPort: this.metricsPort }, 'listening');
  }

  /** Serves a new certificate from the next TLS handshake on; open connections keep theirs. */
  public setCertificate(pair: CertificatePair): void {
    this.https.setSecureContext({ cert: pair.cert, key: pair.key });
    this.recordExpiry(pair);
    this.logger.info({ expires: expiryOf(pair.cert).toISOString() }, 'serving a new certificate');
  }

  /**
   * Shuts down gracefully: `/readyz` fails at once, requests keep being served for the
   * configured shutdown delay (while the Service stops routing here), then the listeners close
   * and requests in flight finish; connections still open after `graceMs` are cut.
   *
   * @param graceMs the longest to wait for requests in flight
   */
  public stop(graceMs = 10_000): Promise<void> {
    this.stopping ??= (async () => {
      this.draining = true;
      this.logger.info({ delaySeconds: this.props.config.shutdownDelaySeconds }, 'shutting down');
      await new Promise(resolve => setTimeout(resolve, this.props.config.shutdownDelaySeconds * 1000));
      const servers = [this.https, this.plain].filter((s): s is http.Server | https.Server => s !== undefined && s.listening);
      const closed = Promise.all(servers.map(server => new Promise<void>(resolve => server.close(() => resolve()))));
      for (const server of servers) server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const cut = new Promise<void>(resolve => {
        timer = setTimeout(() => {
          for (const server of servers) server.closeAllConnections();
          resolve();
        }, graceMs);
      });
      await Promise.race([closed, cut]);
      clearTimeout(timer);
      this.logger.info('stopped');
    })();
    return this.stopping;
  }

  private recordExpiry(pair: CertificatePair): void {
    this.metrics.certificateExpiry.set(expiryOf(pair.cert).getTime() / 1000);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, secure: boolean): void {
    const started = process.hrtime.bigint();
    let path = '/';
    try {
      path = new URL(req.url ?? '/', 'https://webhook').pathname;
    } catch {
      // Not a URL path: answered as not found below.
    }
    const known = ADMISSION_PATHS.has(path) || GET_PATHS.has(path);
    const label = known ? path : 'other';
    const send = (reply: Reply, uid?: string) => {
      if (res.headersSent) return;
      // While draining, no connection is kept alive: stop() waits for open connections to end.
      const headers = this.draining ? { ...reply.headers, Connection: 'close' } : reply.headers;
      res.writeHead(reply.status, { 'Content-Type': reply.contentType ?? 'application/json', ...headers });
      const close = headers?.Connection === 'close';
      res.end(reply.body, () => {
        if (close) req.socket.destroy();
      });
      // A client that does not read its answer does not keep the socket.
      if (close) destroySoon(req.socket);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.requests.inc({ path: label, result: reply.result });
      this.metrics.duration.observe({ path: label }, seconds);
      if (reply.status >= 400 && reply.result !== RequestResult.UNAVAILABLE) {
        this.logger.warn({ uid, method: req.method, path: label, status: reply.status, error: reply.message, durationMs: seconds * 1000 }, 'request refused');
      }
    };

    try {
      if (GET_PATHS.has(path)) {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          send(text(405, RequestResult.NOT_FOUND, `${req.method} is not allowed on ${path}; use GET`, { Allow: 'GET, HEAD' }));
        } else {
          this.observe(path, send);
        }
        return;
      }
      if (!secure || !ADMISSION_PATHS.has(path)) {
        send(text(404, RequestResult.NOT_FOUND, `No such path: ${path}`));
        return;
      }
      if (req.method !== 'POST') {
        send(text(405, RequestResult.NOT_FOUND, `${req.method} is not allowed on ${path}; the API server POSTs AdmissionReviews`, { Allow: 'POST' }));
        return;
      }
      this.admit(path, req, send);
    } catch (e) {
      this.logger.error({ err: (e as Error).stack, path: label }, 'request failed');
      send(failure(500, RequestResult.ERROR, 'InternalError', `The webhook failed: ${(e as Error).message}`));
    }
  }

  private observe(path: string, send: (reply: Reply) => void): void {
    if (path === OBSERVABILITY_PATHS.health) {
      send(text(200, RequestResult.OK, 'ok'));
    } else if (path === OBSERVABILITY_PATHS.ready) {
      if (this.ready) send(text(200, RequestResult.OK, 'ok'));
      else send(text(503, RequestResult.UNAVAILABLE, this.draining ? 'shutting down' : 'starting'));
    } else {
      this.metrics.registry.metrics().then(
        body => send({ status: 200, result: RequestResult.OK, body, contentType: this.metrics.registry.contentType }),
        (e: Error) => send(failure(500, RequestResult.ERROR, 'InternalError', `Cannot render metrics: ${e.message}`)),
      );
    }
  }

  private admit(path: string, req: http.IncomingMessage, send: (reply: Reply, uid?: string) => void): void {
    const arrived = Date.now();
    const tooLarge = () => failure(413, RequestResult.TOO_LARGE, 'RequestEntityTooLarge',
      `The request body exceeds ${MAX_REQUEST_BYTES} bytes (3 MiB), the most an AdmissionReview can hold`, { Connection: 'close' });
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_REQUEST_BYTES) {
      send(tooLarge());
      req.resume();
      return;
    }
    // A large review holds its body and its parsed object: only a few at once, so that their
    // memory stays within the Pod's limit whatever arrives.
    let large = !Number.isFinite(declared) || declared > this.limits.largeReviewBytes;
    const release = () => {
      if (large) this.largeReviews--;
      large = false;
    };
    if (large) {
      if (this.largeReviews >= this.limits.maxLargeReviews) {
        send(failure(429, RequestResult.TOO_LARGE, 'TooManyRequests',
          `${this.limits.maxLargeReviews} reviews of more than ${this.limits.largeReviewBytes} bytes are in progress, the most this webhook takes at once; retry in a second`,
          { 'Retry-After': '1', Connection: 'close' }));
        req.resume();
        return;
      }
      this.largeReviews++;
    }
    const timeoutSeconds = this.props.config.requestTimeoutSeconds;
    const timer = setTimeout(() => {
      release();
      send(failure(408, RequestResult.TIMEOUT, 'Timeout', `The request was not complete within ${timeoutSeconds}s`, { Connection: 'close' }));
      req.destroy();
    }, timeoutSeconds * 1000);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        done = true;
        clearTimeout(timer);
        release();
        send(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (e: Error) => {
      clearTimeout(timer);
      release();
      this.logger.debug({ err: e.message, path }, 'the client went away');
    });
    req.on('close', () => {
      if (!done) release();
    });
    req.on('end', () => {
      clearTimeout(timer);
      if (done) return;
      done = true;
      let request: AdmissionRequest | undefined;
      const fail = (e: unknown) => {
        if (e instanceof AdmissionRequestError) {
          send(failure(e.statusCode, RequestResult.BAD_REQUEST, 'BadRequest', e.message), request?.uid);
        } else {
          this.logger.error({ err: (e as Error).stack, path, uid: request?.uid }, 'review failed');
          send(failure(500, RequestResult.ERROR, 'InternalError', `The webhook failed: ${(e as Error).message}`), request?.uid);
        }
      };
      try {
        request = decodeAdmissionReview(Buffer.concat(chunks));
        chunks.length = 0;
      } catch (e) {
        release();
        fail(e);
        return;
      }
      // Parsing and judging are two slices of work: probes and other requests are answered between them.
      setImmediate(() => {
        try {
          const decided = request!;
          const response = this.overDeadline(arrived, decided) ?? this.review(path, decided, arrived);
          send({ status: 200, result: response.allowed ? RequestResult.ALLOWED : RequestResult.DENIED, body: JSON.stringify(admissionReview(response)) }, decided.uid);
        } catch (e) {
          fail(e);
        } finally {
          release();
        }
      });
    });
  }

  /** The denial of a review that ran past its deadline, if it did. */
  private overDeadline(arrived: number, request: AdmissionRequest): AdmissionResponse | undefined {
    const elapsed = Date.now() - arrived;
    if (elapsed <= this.limits.reviewDeadlineMs) return undefined;
    this.logger.warn({ uid: request.uid, namespace: request.namespace, name: request.name, elapsedMs: elapsed, deadlineMs: this.limits.reviewDeadlineMs }, 'review over its deadline: denied');
    return {
      uid: request.uid,
      allowed: false,
      status: {
        code: 504,
        reason: 'Timeout',
        message: `The Function could not be reviewed within ${this.limits.reviewDeadlineMs}ms (it took ${elapsed}ms), the deadline below the webhook's timeout: the webhook is busy or the Function too large; retry, or make it smaller`,
      },
    };
  }

  private review(path: string, request: AdmissionRequest, arrived: number): AdmissionResponse {
    const started = process.hrtime.bigint();
    const subject = { uid: request.uid, path, operation: request.operation, namespace: request.namespace, name: request.name, dryRun: request.dryRun };
    let response: AdmissionResponse;
    let fields: { [key: string]: unknown };
    if (path === WEBHOOK_PATHS.defaulting) {
      const result = reviewDefaulting(request, this.props.config.defaults, this.ruleOptions.release);
      response = result.response;
      fields = { patched: result.patch.slice(0, LOG_LIMITS.maxItems).map(op => op.path), patchOperations: result.patch.length, refused: result.refused };
    } else {
      const result = reviewValidation(request, this.ruleOptions);
      response = result.response;
      fields = response.allowed ? {} : {
        rules: result.violations.map(v => v.rule), fields: result.violations.map(v => v.path), omitted: result.omitted || undefined, refused: result.refused,
      };
    }
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    // The work itself cannot be cut short: what ran past the deadline is denied rather than late.
    const late = this.overDeadline(arrived, request);
    if (late) return late;
    const verb = path === WEBHOOK_PATHS.defaulting ? (response.allowed ? 'defaulted' : 'denied') : (response.allowed ? 'allowed' : 'denied');
    this.logger.info({ ...subject, allowed: response.allowed, ...fields, durationMs }, verb);
    return response;
  }
}
