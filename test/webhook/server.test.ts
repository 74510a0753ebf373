import { X509Certificate } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { Writable } from 'node:stream';
import * as tls from 'node:tls';
import { applyPatch, Operation } from 'fast-json-patch';
import { DEFAULT_RELEASE, ServerlessRelease, describeViolation, functionRulesOf, validateFunction } from '../../src/api';
import { functionCelRules } from '../../src/api/function-schema';
import { AdmissionReviewResponse } from '../../src/webhook/admission';
import { CertificatePair, createCertificateAuthority, createServingCertificate } from '../../src/webhook/certificates';
import { MAX_REQUEST_BYTES, WEBHOOK_PATHS, WebhookConfigFile, resolveWebhookConfig } from '../../src/webhook/config';
import { LogLevel } from '../../src/log-level';
import { createLogger } from '../../src/webhook/log';
import { WebhookMetrics } from '../../src/webhook/metrics';
import { OBSERVABILITY_PATHS, WebhookServer } from '../../src/webhook/server';
import { PLACEHOLDER_SAMPLE, PLACEHOLDER_SECRET, admissionReviewOf, upstreamSamples, withRealSecretName } from '../util/admission';
import { HAS_UPSTREAM_REFERENCE } from '../util/fixtures';
import {
  VALID_FUNCTIONS, VALID_FUNCTIONS_1_13_0, brokenFunction, ruleFailureCases, rulesWithoutFailure, validFunction,
} from '../util/function-rule-cases';

// One CA for the whole file: every client trusts it, and only it.
const CA = createCertificateAuthority('serverless-webhook-test-ca');
const SERVING = createServingCertificate(CA, ['localhost']);

/** Every line the servers log, parsed. */
const logs: any[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line));
    callback();
  },
});
const logger = createLogger(LogLevel.DEBUG, logStream);

const servers: WebhookServer[] = [];

async function startServer(file: WebhookConfigFile, options: { metrics?: WebhookMetrics; certificate?: CertificatePair } = {}): Promise<WebhookServer> {
  const server = new WebhookServer({
    config: resolveWebhookConfig(file),
    certificate: options.certificate ?? SERVING,
    port: 0,
    metricsPort: 0,
    host: '127.0.0.1',
    logger,
    metrics: options.metrics ?? new WebhookMetrics(false),
  });
  servers.push(server);
  await server.start();
  return server;
}

afterAll(async () => {
  await Promise.all(servers.map(s => s.stop(1000)));
});

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** An HTTP answer. */
interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** The server's certificate (HTTPS only). */
  readonly peer?: tls.PeerCertificate;
}

interface RequestOptions {
  readonly method?: string;
  readonly headers?: http.OutgoingHttpHeaders;
  /** Plain HTTP (the metrics port) rather than HTTPS. */
  readonly plain?: boolean;
  /** @default 'localhost' */
  readonly servername?: string;
  /** Trust the test CA. @default true */
  readonly trustCa?: boolean;
  /** @default false: a new connection, closed after the answer */
  readonly agent?: http.Agent;
}

/** Opens a request on a new connection (no keep-alive); the caller writes and ends it. */
function open(port: number, path: string, options: RequestOptions = {}): { req: http.ClientRequest; reply: Promise<Reply> } {
  const base: http.RequestOptions = { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false };
  const req = options.plain
    ? http.request(base)
    : https.request({ ...base, servername: options.servername ?? 'localhost', ca: options.trustCa === false ? undefined : CA.cert });
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', res => {
      const peer = options.plain ? undefined : (res.socket as tls.TLSSocket).getPeerCertificate();
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), peer }));
    });
  });
  return { req, reply };
}

/** Sends a whole request and waits for the answer. */
function send(port: number, path: string, body?: string | Buffer, options: RequestOptions = {}): Promise<Reply> {
  const headers = body === undefined ? options.headers : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...options.headers };
  const { req, reply } = open(port, path, { method: body === undefined ? 'GET' : 'POST', ...options, headers });
  req.end(body);
  return reply;
}

/** POSTs an AdmissionReview and returns the review the server answers with (HTTP 200). */
async function review(port: number, path: string, body: unknown): Promise<AdmissionReviewResponse> {
  const reply = await send(port, path, JSON.stringify(body));
  expect({ status: reply.status, body: reply.status === 200 ? '' : reply.body }).toEqual({ status: 200, body: '' });
  expect(reply.headers['content-type']).toBe('application/json');
  return JSON.parse(reply.body);
}

/** Resolves when a request can take more data, or is closed. */
function drained(req: http.ClientRequest): Promise<void> {
  return new Promise(resolve => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

/** The error code of connecting to a port, or undefined when it connects. */
function connectError(port: number): Promise<string | undefined> {
  return new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code));
  });
}

/** The value of a sample of Prometheus text, matched by name and exactly its labels. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map(l => [l[1], l[2]]));
    if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

function decodePatch(response: AdmissionReviewResponse['response']): Operation[] {
  return response.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : [];
}

function patched(document: unknown, patch: readonly Operation[]): any {
  return applyPatch(structuredClone(document), patch, true, false).newDocument;
}

const REQUESTS = 'kyma_serverless_webhook_requests_total';
const DURATION = 'kyma_serverless_webhook_request_duration_seconds';
const EXPIRY = 'kyma_serverless_webhook_certificate_expiry_timestamp_seconds';

describe('the webhook server over HTTPS', () => {
  let server: WebhookServer;

  beforeAll(async () => {
    // The process metrics too, as in production.
    server = await startServer({ shutdownDelaySeconds: 0, requestTimeoutSeconds: 2 }, { metrics: new WebhookMetrics() });
  });

  describe('upstream samples', () => {
    const samples = upstreamSamples();

    if (!HAS_UPSTREAM_REFERENCE) {
      test.skip('upstream samples are missing: /work/shared/reference/upstream is not there', () => undefined);
    }

    test('are all there when shared/reference is', () => {
      if (HAS_UPSTREAM_REFERENCE) expect(samples.length).toBeGreaterThanOrEqual(8);
      expect(samples.filter(s => s.file === PLACEHOLDER_SAMPLE).length).toBe(HAS_UPSTREAM_REFERENCE ? 1 : 0);
    });

    for (const { file, fn } of samples.filter(s => s.file !== PLACEHOLDER_SAMPLE)) {
      test(`allows ${fn.metadata.name} of ${file}`, async () => {
        const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fn, { uid: `sample-${fn.metadata.name}` }));
        expect(response).toEqual({ uid: `sample-${fn.metadata.name}`, allowed: true });
      });
    }

    for (const { file, fn } of samples.filter(s => s.file === PLACEHOLDER_SAMPLE)) {
      test(`denies ${fn.metadata.name} of ${file} for its placeholder Secret name ${PLACEHOLDER_SECRET.placeholder}, as the controller would`, async () => {
        const violations = validateFunction(fn);
        expect(violations.map(v => [v.rule, v.path])).toEqual([['objectName', 'spec.secretMounts[0].secretName']]);
        const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fn, { uid: 'sample-placeholder' }));
        expect(response.allowed).toBe(false);
        expect(response.status!.code).toBe(422);
        expect(response.status!.message).toBe(`Function "my-test-function" is invalid: ${describeViolation(violations[0])}`);
        expect(response.status!.message).toContain('spec.secretMounts[0].secretName: Invalid value: "SECRET_NAME": a Secret name must be a DNS-1123 subdomain');
        expect(response.status!.details!.causes).toEqual([{ field: 'spec.secretMounts[0].secretName', message: violations[0].message, reason: 'objectName' }]);
      });

      test(`allows ${fn.metadata.name} of ${file} once ${PLACEHOLDER_SECRET.placeholder} is a real Secret name`, async () => {
        const fixed = withRealSecretName(fn);
        expect(fixed.spec.secretMounts[0].secretName).toBe(PLACEHOLDER_SECRET.real);
        const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fixed, { uid: 'sample-fixed' }));
        expect(response).toEqual({ uid: 'sample-fixed', allowed: true });
      });
    }

    for (const { file, fn } of samples) {
      test(`defaults ${fn.metadata.name} of ${file} into a valid Function`, async () => {
        const sample = withRealSecretName(fn);
        const { response } = await review(server.port, WEBHOOK_PATHS.defaulting, admissionReviewOf(sample, { uid: `default-${fn.metadata.name}` }));
        expect(response.uid).toBe(`default-${fn.metadata.name}`);
        expect(response.allowed).toBe(true);
        expect(response.patchType).toBe('JSONPatch');
        const after = patched(sample, decodePatch(response));
        expect(validateFunction(after)).toEqual([]);
        expect(after.spec.replicas).toEqual(expect.any(Number));
      });
    }
  });

  describe('our valid Functions', () => {
    test.each(VALID_FUNCTIONS.map(fn => [fn.metadata.name, fn]))('allows %s', async (name, fn) => {
      const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fn, { uid: `valid-${name}` }));
      expect(response).toEqual({ uid: `valid-${name}`, allowed: true });
    });

    test.each(VALID_FUNCTIONS.map(fn => [fn.metadata.name, fn]))('defaults %s into a valid Function', async (name, fn) => {
      const { response } = await review(server.port, WEBHOOK_PATHS.defaulting, admissionReviewOf(fn, { uid: `defaulted-${name}` }));
      expect(response.uid).toBe(`defaulted-${name}`);
      const after = patched(fn, decodePatch(response));
      expect(validateFunction(after)).toEqual([]);
      // Defaulting a defaulted Function changes nothing.
      const again = await review(server.port, WEBHOOK_PATHS.defaulting, admissionReviewOf(after, { uid: `again-${name}` }));
      expect(again.response).toEqual({ uid: `again-${name}`, allowed: true });
    });

    test('answers with ?timeout=10s in the path, as the API server calls', async () => {
      const { response } = await review(server.port, `${WEBHOOK_PATHS.validation}?timeout=10s`, admissionReviewOf(validFunction(), { uid: 'with-query' }));
      expect(response).toEqual({ uid: 'with-query', allowed: true });
    });

    test('allows an UPDATE that leaves an invalid spec as it is', async () => {
      const stored = brokenFunction('openapi.enum');
      const updated = { ...stored, metadata: { ...stored.metadata, finalizers: ['example.com/cleanup'] } };
      const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(updated, { operation: 'UPDATE', oldObject: stored, uid: 'update' }));
      expect(response).toEqual({ uid: 'update', allowed: true });
    });
  });

  describe('every rule of the Function API', () => {
    test('has a failing case here', () => {
      expect(rulesWithoutFailure()).toEqual([]);
    });

    const celIds = Object.keys(functionCelRules(DEFAULT_RELEASE));

    test.each(ruleFailureCases().filter(c => !celIds.includes(c.id)))('denies a Function when $failsWhen ($id)', async ({ id }) => {
      const fn = brokenFunction(id);
      const violations = validateFunction(fn, { celRules: false });
      const broken = violations.find(v => v.rule === id);
      expect(broken).toBeDefined();
      const reply = await send(server.port, WEBHOOK_PATHS.validation, JSON.stringify(admissionReviewOf(fn, { uid: `rule-${id}` })));
      expect(reply.status).toBe(200);
      const { apiVersion, kind, response } = JSON.parse(reply.body) as AdmissionReviewResponse;
      expect({ apiVersion, kind, uid: response.uid, allowed: response.allowed }).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', uid: `rule-${id}`, allowed: false });
      expect(response.status!.code).toBe(422);
      expect(response.status!.message).toContain(describeViolation(broken!));
      for (const v of violations) expect(response.status!.message).toContain(describeViolation(v));
      expect(response.status!.details!.causes).toContainEqual({ field: broken!.path, message: broken!.message, reason: id });
    });

    // The API server evaluates the CRD's CEL rules before it calls a validating webhook: an object
    // that breaks one never reaches the webhook, which carries no CEL interpreter.
    test.each(ruleFailureCases().filter(c => celIds.includes(c.id)))('leaves it to the API server to deny a Function when $failsWhen ($id)', async ({ id }) => {
      const fn = brokenFunction(id);
      expect(validateFunction(fn).some(v => v.rule === id)).toBe(true);
      const reply = await send(server.port, WEBHOOK_PATHS.validation, JSON.stringify(admissionReviewOf(fn, { uid: `rule-${id}` })));
      expect(reply.status).toBe(200);
      const { response } = JSON.parse(reply.body) as AdmissionReviewResponse;
      expect(response.status?.details?.causes ?? []).not.toContainEqual(expect.objectContaining({ reason: id }));
    });

    test('covers every rule of FUNCTION_RULES that holds in the default release, the one a configuration without release names', () => {
      expect(ruleFailureCases().map(c => c.id)).toEqual(functionRulesOf(DEFAULT_RELEASE).map(r => r.id));
    });
  });

  describe('input that is no AdmissionReview about a Function', () => {
    const deployment = admissionReviewOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: {} }, {
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    });
    test.each<[string, string, string, RegExp]>([
      ['invalid JSON', WEBHOOK_PATHS.validation, '{"apiVersion": "admission.k8s.io/v1", ', /^The request body is not valid JSON: /],
      ['an empty body', WEBHOOK_PATHS.validation, '', /^The request body is not valid JSON: /],
      ['a JSON array', WEBHOOK_PATHS.validation, JSON.stringify([admissionReviewOf(validFunction())]), /^Expected an AdmissionReview of admission\.k8s\.io\/v1, got /],
      ['a review of the wrong kind', WEBHOOK_PATHS.validation, JSON.stringify({ ...admissionReviewOf(validFunction()), kind: 'ConversionReview' }),
        /^Expected an AdmissionReview of admission\.k8s\.io\/v1, got admission\.k8s\.io\/v1 ConversionReview$/],
      ['a review without a request', WEBHOOK_PATHS.defaulting, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /^The AdmissionReview has no request$/],
      ['a review about a Deployment', WEBHOOK_PATHS.validation, JSON.stringify(deployment),
        /^This webhook admits only serverless\.kyma-project\.io Functions, got apps\/v1 Deployment$/],
      ['a review about a Deployment, to defaulting', WEBHOOK_PATHS.defaulting, JSON.stringify(deployment),
        /^This webhook admits only serverless\.kyma-project\.io Functions, got apps\/v1 Deployment$/],
    ])('fails with 400 and a Status naming the problem on %s', async (_what, path, body, message) => {
      const reply = await send(server.port, path, body);
      expect(reply.status).toBe(400);
      expect(reply.headers['content-type']).toBe('application/json');
      const status = JSON.parse(reply.body);
      expect(status).toEqual({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest', message: expect.stringMatching(message) });
    });

    test('stays up after them', async () => {
      expect((await send(server.port, OBSERVABILITY_PATHS.health)).status).toBe(200);
      const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(validFunction(), { uid: 'after-bad-input' }));
      expect(response.allowed).toBe(true);
    });

    test('answers a request that is not HTTP with 400, and stays up', async () => {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: server.port, servername: 'localhost', ca: CA.cert }, () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
        let data = '';
        socket.on('data', (chunk: Buffer) => { data += chunk.toString('utf8'); });
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect((await send(server.port, OBSERVABILITY_PATHS.health)).status).toBe(200);
    });
  });

  describe('limits', () => {
    /** An AdmissionReview of a valid Function, padded with whitespace to `bytes`. */
    function paddedReview(bytes: number, uid: string): Buffer {
      const json = JSON.stringify(admissionReviewOf(validFunction(), { uid }));
      return Buffer.from(json + ' '.repeat(bytes - Buffer.byteLength(json)), 'utf8');
    }

    test('allows a body of exactly 3 MiB', async () => {
      const body = paddedReview(MAX_REQUEST_BYTES, 'exactly-3-mib');
      expect(body.length).toBe(3 * 1024 * 1024);
      const reply = await send(server.port, WEBHOOK_PATHS.validation, body);
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body).response).toEqual({ uid: 'exactly-3-mib', allowed: true });
    });

    test('fails with 413 on a Content-Length above 3 MiB, before reading the body', async () => {
      const { req, reply } = open(server.port, WEBHOOK_PATHS.validation, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': MAX_REQUEST_BYTES + 1 },
      });
      req.flushHeaders();
      const answer = await reply;
      req.destroy();
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({
        kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 413, reason: 'RequestEntityTooLarge',
        message: `The request body exceeds ${MAX_REQUEST_BYTES} bytes (3 MiB), the most an AdmissionReview can hold`,
      });
    });

    test('fails with 413 on a chunked body that grows beyond 3 MiB', async () => {
      const { req, reply } = open(server.port, WEBHOOK_PATHS.validation, { method: 'POST', headers: { 'Content-Type': 'application/json' } });
      let answer: Reply | undefined;
      let error: NodeJS.ErrnoException | undefined;
      reply.then(r => { answer = r; }, (e: NodeJS.ErrnoException) => { error = e; });
      const chunk = Buffer.alloc(256 * 1024, ' ');
      let sent = 0;
      // Paced: one chunk at a time, and none once the server has answered.
      while (!answer && !error && sent <= 2 * MAX_REQUEST_BYTES) {
        const flushed = req.write(chunk);
        sent += chunk.length;
        if (!flushed) await drained(req);
        await sleep(5);
      }
      await reply.catch(() => undefined);
      req.destroy();
      expect(req.getHeader('content-length')).toBeUndefined();
      expect(error).toBeUndefined();
      expect(answer?.status).toBe(413);
      expect(JSON.parse(answer!.body)).toMatchObject({ code: 413, reason: 'RequestEntityTooLarge' });
      expect(sent).toBeGreaterThan(MAX_REQUEST_BYTES);
      expect((await send(server.port, OBSERVABILITY_PATHS.health)).status).toBe(200);
    });

    test('fails with 408 when the body is not complete within the request timeout', async () => {
      const body = Buffer.from(JSON.stringify(admissionReviewOf(validFunction(), { uid: 'too-slow' })));
      const { req, reply } = open(server.port, WEBHOOK_PATHS.validation, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
      });
      const started = Date.now();
      req.write(body.subarray(0, body.length / 2));
      const answer = await reply;
      const elapsed = Date.now() - started;
      req.destroy();
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 408, reason: 'Timeout', message: 'The request was not complete within 2s' });
      expect(elapsed).toBeGreaterThanOrEqual(1900);
      // Answered at the timeout, not held: 5 s of slack for a busy machine.
      expect(elapsed).toBeLessThan(2000 + 5000);
    });
  });

  describe('routes', () => {
    test('fails with 405 on GET of an admission path', async () => {
      for (const path of Object.values(WEBHOOK_PATHS)) {
        const reply = await send(server.port, path);
        expect({ path, status: reply.status, allow: reply.headers.allow }).toEqual({ path, status: 405, allow: 'POST' });
        expect(reply.body).toBe(`GET is not allowed on ${path}; the API server POSTs AdmissionReviews\n`);
      }
    });

    test('fails with 405 on POST of a probe', async () => {
      const reply = await send(server.port, OBSERVABILITY_PATHS.health, '{}');
      expect(reply.status).toBe(405);
      expect(reply.headers.allow).toBe('GET, HEAD');
    });

    test('fails with 404 on an unknown path', async () => {
      const reply = await send(server.port, '/validate/functions', JSON.stringify(admissionReviewOf(validFunction())));
      expect(reply.status).toBe(404);
      expect(reply.body).toBe('No such path: /validate/functions\n');
      expect((await send(server.port, '/')).status).toBe(404);
    });

    test('does not serve the admission paths on the plain-HTTP metrics port', async () => {
      for (const path of Object.values(WEBHOOK_PATHS)) {
        const reply = await send(server.metricsPort!, path, JSON.stringify(admissionReviewOf(validFunction())), { plain: true });
        expect({ path, status: reply.status }).toEqual({ path, status: 404 });
      }
    });

    test.each([
      ['HTTPS', OBSERVABILITY_PATHS.health], ['HTTPS', OBSERVABILITY_PATHS.ready], ['HTTPS', OBSERVABILITY_PATHS.metrics],
      ['plain HTTP', OBSERVABILITY_PATHS.health], ['plain HTTP', OBSERVABILITY_PATHS.ready], ['plain HTTP', OBSERVABILITY_PATHS.metrics],
    ])('serves %s %s', async (scheme, path) => {
      const plain = scheme === 'plain HTTP';
      const reply = await send(plain ? server.metricsPort! : server.port, path, undefined, { plain });
      expect(reply.status).toBe(200);
      if (path === OBSERVABILITY_PATHS.metrics) {
        expect(reply.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
        expect(reply.body).toContain(`# TYPE ${REQUESTS} counter`);
      } else {
        expect(reply.body).toBe('ok\n');
      }
    });

    test('answers HEAD on a probe without a body', async () => {
      const reply = await send(server.port, OBSERVABILITY_PATHS.ready, undefined, { method: 'HEAD' });
      expect(reply.status).toBe(200);
      expect(reply.body).toBe('');
    });
  });

  describe('TLS', () => {
    test('is refused by a client that does not trust the CA', async () => {
      await expect(send(server.port, OBSERVABILITY_PATHS.health, undefined, { trustCa: false })).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    });

    test('serves a certificate for localhost only', async () => {
      await expect(send(server.port, OBSERVABILITY_PATHS.health, undefined, { servername: 'serverless-webhook.kyma-system.svc' }))
        .rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      const reply = await send(server.port, OBSERVABILITY_PATHS.health);
      expect(reply.peer!.fingerprint256).toBe(new X509Certificate(SERVING.cert).fingerprint256);
    });
  });

  describe('metrics', () => {
    const scrape = async () => (await send(server.port, OBSERVABILITY_PATHS.metrics)).body;

    test('count requests by path and result', async () => {
      const before = await scrape();
      const count = (text: string, path: string, result: string) => metric(text, REQUESTS, { path, result }) ?? 0;
      const V = WEBHOOK_PATHS.validation;
      const D = WEBHOOK_PATHS.defaulting;

      for (let i = 0; i < 3; i++) await review(server.port, V, admissionReviewOf(validFunction()));
      for (let i = 0; i < 2; i++) await review(server.port, V, admissionReviewOf(brokenFunction('functionName')));
      await review(server.port, D, admissionReviewOf(validFunction('weather')));
      await send(server.port, V, 'not json');
      await send(server.port, V);
      await send(server.port, '/nowhere');
      await send(server.port, OBSERVABILITY_PATHS.health);

      const after = await scrape();
      const delta = (path: string, result: string) => count(after, path, result) - count(before, path, result);
      expect({
        allowed: delta(V, 'allowed'),
        denied: delta(V, 'denied'),
        defaulted: delta(D, 'allowed'),
        badRequest: delta(V, 'bad_request'),
        notFound: delta(V, 'not_found') + delta('other', 'not_found'),
        health: delta(OBSERVABILITY_PATHS.health, 'ok'),
        metrics: delta(OBSERVABILITY_PATHS.metrics, 'ok'),
      }).toEqual({ allowed: 3, denied: 2, defaulted: 1, badRequest: 1, notFound: 2, health: 1, metrics: 1 });
      expect(after).toContain(`${REQUESTS}{path="/validation/function",result="denied"} ${count(after, V, 'denied')}`);
      // Unknown paths share one label, so that scanners cannot blow up the series.
      expect(delta('other', 'not_found')).toBe(1);
      expect(after).not.toContain('path="/nowhere"');
    });

    test('have a duration histogram by path', async () => {
      await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(validFunction()));
      const text = await scrape();
      expect(text).toContain(`# TYPE ${DURATION} histogram`);
      const path = WEBHOOK_PATHS.validation;
      const total = metric(text, `${DURATION}_count`, { path });
      expect(total).toBeGreaterThan(0);
      expect(metric(text, `${DURATION}_bucket`, { le: '+Inf', path })).toBe(total);
      expect(metric(text, `${DURATION}_bucket`, { le: '0.001', path })).toEqual(expect.any(Number));
      expect(metric(text, `${DURATION}_sum`, { path })).toBeGreaterThan(0);
      const requests = ['allowed', 'denied', 'bad_request', 'too_large', 'timeout', 'not_found']
        .reduce((sum, result) => sum + (metric(text, REQUESTS, { path, result }) ?? 0), 0);
      expect(total).toBe(requests);
    });

    test('export the serving certificate\'s expiry', async () => {
      const notAfter = new X509Certificate(SERVING.cert).validTo;
      expect(metric(await scrape(), EXPIRY)).toBe(new Date(notAfter).getTime() / 1000);
    });

    test('include the process metrics', async () => {
      expect(await scrape()).toContain('# TYPE process_cpu_user_seconds_total counter');
    });
  });

  describe('logs', () => {
    const linesOf = (uid: string) => logs.filter(l => l.uid === uid);

    test('write one JSON line per admission request, with its uid, path, operation and result', async () => {
      await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(validFunction(), { uid: 'log-allowed' }));
      await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(brokenFunction('functionName'), { uid: 'log-denied' }));
      await review(server.port, WEBHOOK_PATHS.defaulting, admissionReviewOf(validFunction('weather'), { uid: 'log-defaulted' }));
      await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(null, { uid: 'log-deleted', operation: 'DELETE', oldObject: validFunction() }));

      const common = { level: 'info', component: 'serverless-webhook', time: expect.any(String), durationMs: expect.any(Number) };
      expect(linesOf('log-allowed')).toEqual([expect.objectContaining({
        ...common, msg: 'allowed', uid: 'log-allowed', path: WEBHOOK_PATHS.validation, operation: 'CREATE', allowed: true, name: 'greeter', namespace: 'default',
      })]);
      expect(linesOf('log-denied')).toEqual([expect.objectContaining({
        ...common, msg: 'denied', uid: 'log-denied', path: WEBHOOK_PATHS.validation, operation: 'CREATE', allowed: false,
        rules: ['functionName'], fields: ['metadata.name'], name: '1greeter',
      })]);
      expect(linesOf('log-defaulted')).toEqual([expect.objectContaining({
        ...common, msg: 'defaulted', uid: 'log-defaulted', path: WEBHOOK_PATHS.defaulting, operation: 'CREATE', allowed: true,
        patched: expect.arrayContaining(['/spec/replicas', '/spec/resourceConfiguration']),
      })]);
      expect(linesOf('log-deleted')).toEqual([expect.objectContaining({ msg: 'allowed', operation: 'DELETE', allowed: true })]);
      expect(new Date(linesOf('log-allowed')[0].time).toISOString()).toBe(linesOf('log-allowed')[0].time);
    });

    test('write a warning for a refused request, with its status and reason', async () => {
      const from = logs.length;
      await send(server.port, WEBHOOK_PATHS.validation, JSON.stringify(admissionReviewOf(validFunction(), { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } })));
      expect(logs.slice(from)).toContainEqual(expect.objectContaining({
        level: 'warn', msg: 'request refused', method: 'POST', path: WEBHOOK_PATHS.validation, status: 400,
        error: 'This webhook admits only serverless.kyma-project.io Functions, got apps/v1 Deployment',
      }));
    });
  });
});

describe('a webhook server configured for release 1.13.0', () => {
  const R = { release: ServerlessRelease.V1_13_0 };
  let server: WebhookServer;

  beforeAll(async () => {
    server = await startServer({ release: ServerlessRelease.V1_13_0, shutdownDelaySeconds: 0, requestTimeoutSeconds: 2 });
  });

  test.each(VALID_FUNCTIONS_1_13_0.filter(fn => fn.spec.runtime !== 'nodejs20').map(fn => [fn.metadata.name, fn]))('allows %s, without warnings', async (name, fn) => {
    const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fn, { uid: `valid-${name}` }));
    expect(response).toEqual({ uid: `valid-${name}`, allowed: true });
  });

  test('allows a nodejs20 Function with a warning that its runtime is past its end of life', async () => {
    const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(validFunction('legacy20'), { uid: 'legacy' }));
    expect(response).toEqual({ uid: 'legacy', allowed: true, warnings: [expect.stringMatching(/^spec\.runtime: Deprecated: "nodejs20" reached its end of life in April 2026; .*move to nodejs24; /)] });
  });

  test.each(VALID_FUNCTIONS_1_13_0.map(fn => [fn.metadata.name, fn]))('defaults %s into a valid 1.13.0 Function, with no build profile', async (name, fn) => {
    const { response } = await review(server.port, WEBHOOK_PATHS.defaulting, admissionReviewOf(fn, { uid: `defaulted-${name}` }));
    const after = patched(fn, decodePatch(response));
    expect(after.spec.resourceConfiguration.build).toBeUndefined();
    expect(validateFunction(after, R)).toEqual([]);
  });

  // annotationsReservedKey and reservedEnvs are CEL rules of the 1.13.0 CRD: the API server denies them first.
  test.each(ruleFailureCases(ServerlessRelease.V1_13_0).filter(c => ['buildResources', 'scaleConfig'].includes(c.id)))(
    'denies a Function when $failsWhen ($id)', async ({ id }) => {
      const fn = brokenFunction(id);
      const broken = validateFunction(fn, R).find(v => v.rule === id)!;
      expect(broken).toBeDefined();
      const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fn, { uid: `rule-${id}` }));
      expect(response.allowed).toBe(false);
      expect(response.status!.message).toContain(describeViolation(broken));
    });

  test('the same Function that 1.11.1 allows with build resources, 1.13.0 denies naming the fix', async () => {
    const fn = validFunction('autoscaled');
    const { response } = await review(server.port, WEBHOOK_PATHS.validation, admissionReviewOf(fn, { uid: 'autoscaled' }));
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toContain('spec.resourceConfiguration.build: Forbidden: 1.13.0 builds nothing; the controller ignores build resources; remove buildResources');
    expect(response.status!.message).toContain('spec.scaleConfig: Forbidden: the 1.13.0 controller creates no HPA');
  });
});

describe('setCertificate', () => {
  test('serves a new certificate to new connections, and exports its expiry', async () => {
    const server = await startServer({ shutdownDelaySeconds: 0, requestTimeoutSeconds: 2 });
    const before = await send(server.port, OBSERVABILITY_PATHS.health);
    expect(before.peer!.fingerprint256).toBe(new X509Certificate(SERVING.cert).fingerprint256);

    // Issued a day earlier, so that it also expires a day earlier.
    const renewed = createServingCertificate(CA, ['localhost'], new Date(Date.now() - 24 * 60 * 60 * 1000));
    const x509 = new X509Certificate(renewed.cert);
    server.setCertificate(renewed);

    const after = await send(server.port, OBSERVABILITY_PATHS.health);
    expect(after.status).toBe(200);
    expect(after.peer!.fingerprint256).toBe(x509.fingerprint256);
    expect(after.peer!.serialNumber).toBe(x509.serialNumber);
    expect(after.peer!.serialNumber).not.toBe(before.peer!.serialNumber);
    const metrics = (await send(server.port, OBSERVABILITY_PATHS.metrics)).body;
    expect(metric(metrics, EXPIRY)).toBe(new Date(x509.validTo).getTime() / 1000);
    expect(metric(metrics, EXPIRY)).toBeLessThan(new Date(new X509Certificate(SERVING.cert).validTo).getTime() / 1000);
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'serving a new certificate', expires: new Date(x509.validTo).toISOString() }));
  });
});

describe('stop', () => {
  test('answers /readyz with 503 during the shutdown delay, finishes a request in flight, then refuses connections', async () => {
    // A delay long enough that the checks "during the delay" fit into it on a busy machine.
    const server = await startServer({ shutdownDelaySeconds: 5, requestTimeoutSeconds: 15 });
    const { port, metricsPort } = server;
    expect((await send(port, OBSERVABILITY_PATHS.ready)).status).toBe(200);

    // A request in flight: headers and half the body now, the rest after the listeners closed.
    const body = Buffer.from(JSON.stringify(admissionReviewOf(validFunction(), { uid: 'in-flight' })));
    const inFlight = open(port, WEBHOOK_PATHS.validation, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } });
    inFlight.req.write(body.subarray(0, 100));
    await sleep(100);

    const started = Date.now();
    let stopped = false;
    const stopping = server.stop().then(() => { stopped = true; });
    expect(server.ready).toBe(false);

    // During the delay: not ready, yet serving.
    const ready = await send(port, OBSERVABILITY_PATHS.ready);
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: 'shutting down\n' });
    expect((await send(metricsPort!, OBSERVABILITY_PATHS.ready, undefined, { plain: true })).status).toBe(503);
    expect((await send(port, OBSERVABILITY_PATHS.health)).status).toBe(200);
    const { response } = await review(port, WEBHOOK_PATHS.validation, admissionReviewOf(validFunction(), { uid: 'during-delay' }));
    expect(response).toEqual({ uid: 'during-delay', allowed: true });
    expect(Date.now() - started).toBeLessThan(5000);

    // After the delay: the listeners are closed, the request in flight keeps stop() waiting.
    await sleep(5300 - (Date.now() - started));
    expect(await connectError(port)).toBe('ECONNREFUSED');
    expect(await connectError(metricsPort!)).toBe('ECONNREFUSED');
    expect(stopped).toBe(false);

    inFlight.req.end(body.subarray(100));
    const answer = await inFlight.reply;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).response).toEqual({ uid: 'in-flight', allowed: true });

    await stopping;
    expect(stopped).toBe(true);
    expect(await connectError(port)).toBe('ECONNREFUSED');
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'shutting down', delaySeconds: 5 }));
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'stopped' }));
  });

  // While draining, answers carry `Connection: close`, so a keep-alive connection ends with its answer.
  test('returns once a request in flight on a keep-alive connection is answered, not after the grace period', async () => {
    const server = await startServer({ shutdownDelaySeconds: 0, requestTimeoutSeconds: 3 });
    const agent = new https.Agent({ keepAlive: true });
    try {
      const body = Buffer.from(JSON.stringify(admissionReviewOf(validFunction(), { uid: 'keep-alive' })));
      const inFlight = open(server.port, WEBHOOK_PATHS.validation, {
        method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
      });
      inFlight.req.write(body.subarray(0, 100));
      await sleep(50);
      const stopping = server.stop(10_000);
      await sleep(100);
      inFlight.req.end(body.subarray(100));
      expect((await inFlight.reply).status).toBe(200);
      const answered = Date.now();
      await stopping;
      // Well before the 10 s grace period ends.
      expect(Date.now() - answered).toBeLessThan(5000);
    } finally {
      agent.destroy();
    }
  });
});
