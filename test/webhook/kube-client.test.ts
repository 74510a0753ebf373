/**
 * The webhook's Kubernetes REST client: against the fake API server (plain HTTP), small HTTP
 * and HTTPS servers of the test's own (headers, odd answers, TLS, client certificates), and
 * kubeconfigs and ServiceAccount folders written to temporary folders.
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { statusOf } from '../../src/_api-errors';
import { objectIdentifier, sequence } from '../../src/webhook/_der';
import { KeyUsageBit, OID, basicConstraints, buildCertificate, certificatePem, commonNameOnly, issuerFields, keyUsage } from '../../src/webhook/_x509';
import { CertificatePair, createCertificateAuthority, createServingCertificate } from '../../src/webhook/certificates';
import {
  KubeApiError, KubeClient, KubeConnection, KubeResource, SERVICE_ACCOUNT_DIR, Secret, WebhookConfiguration, defaultConnection,
  inClusterConnection, kubeconfigConnection,
} from '../../src/webhook/kube-client';
import { FakeKubeApi, MUTATING_WEBHOOK_CONFIGURATIONS, SECRETS, objectPath, writeKubeconfig } from '../util/fake-kube-api';

const NS = 'kyma-system';
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const failure = <T>(promise: Promise<T>): Promise<any> => promise.then(() => {
  throw new Error('it resolved');
}, (e: unknown) => e);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-client-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes a file in the test's folder; returns its path. */
function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The CN of the client certificate, over HTTPS. */
  clientCn?: string;
}

interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

type Answer = (request: SeenRequest, res: http.ServerResponse) => void;

const json: Answer = (_request, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Secret', metadata: { name: 'x' } }));
};

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** An HTTP (or, with TLS options, HTTPS) server that records what it gets. */
async function serve(answer: Answer = json, tls?: https.ServerOptions, host = '127.0.0.1'): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const listener: http.RequestListener = (req, res) => {
    let body = '';
    req.on('data', chunk => { body += chunk; });
    req.on('end', () => {
      const socket = req.socket as import('node:tls').TLSSocket;
      const clientCn = tls && socket.getPeerCertificate ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined;
      const request = { method: req.method!, url: req.url!, headers: req.headers, body, clientCn };
      seen.push(request);
      answer(request, res);
    });
  };
  const server = tls ? https.createServer(tls, listener) : http.createServer(listener);
  await new Promise<void>(resolve => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const result: TestServer = {
    url: `${tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    },
  };
  servers.push(result);
  return result;
}

const connection = (server: string, more: Partial<KubeConnection> = {}): KubeConnection => ({ server, source: 'the test server', ...more });

const secret = (name: string, data: { [key: string]: string } = { a: b64('x') }): Secret =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, data });

describe('KubeResource', () => {
  test('builds the paths of namespaced and cluster-scoped objects and collections', () => {
    expect(KubeResource.SECRETS.path('s', NS)).toBe(`/api/v1/namespaces/${NS}/secrets/s`);
    expect(KubeResource.SECRETS.path(undefined, NS)).toBe(`/api/v1/namespaces/${NS}/secrets`);
    expect(KubeResource.MUTATING_WEBHOOK_CONFIGURATIONS.path('m', undefined))
      .toBe('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m');
    expect(KubeResource.VALIDATING_WEBHOOK_CONFIGURATIONS.path(undefined, undefined))
      .toBe('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations');
    expect(KubeResource.SECRETS.path('a/b c', NS)).toBe(`/api/v1/namespaces/${NS}/secrets/a%2Fb%20c`);
  });

  test('agrees with the fake API server on every path', () => {
    expect(KubeResource.SECRETS.path('s', NS)).toBe(objectPath(SECRETS, 's', NS));
    expect(KubeResource.MUTATING_WEBHOOK_CONFIGURATIONS.path('m', undefined)).toBe(objectPath(MUTATING_WEBHOOK_CONFIGURATIONS, 'm'));
  });

  test('throws when a namespaced kind has no namespace, or a cluster-scoped one has one', () => {
    expect(() => KubeResource.SECRETS.path('s', undefined)).toThrow('Secrets live in a namespace: give one');
    expect(() => KubeResource.VALIDATING_WEBHOOK_CONFIGURATIONS.path('v', NS))
      .toThrow(`ValidatingWebhookConfigurations are cluster-scoped: give no namespace (got '${NS}')`);
  });
});

describe('KubeClient against the fake API server', () => {
  let api: FakeKubeApi;
  let client: KubeClient;

  beforeEach(async () => {
    api = await FakeKubeApi.start();
    client = new KubeClient(connection(api.url, { token: api.token }));
  });

  afterEach(() => api.close());

  test('creates, reads and replaces a Secret, with the field manager', async () => {
    const created = await client.create(KubeResource.SECRETS, secret('s'), { fieldManager: 'me' });
    expect(created.metadata).toMatchObject({ name: 's', namespace: NS, resourceVersion: expect.any(String), uid: expect.any(String) });
    expect(created.type).toBe('Opaque');

    const read = await client.read(KubeResource.SECRETS, 's', NS);
    expect(read).toEqual(created);

    const replaced = await client.replace(KubeResource.SECRETS, { ...read, data: { a: b64('y') } }, { fieldManager: 'me' });
    expect(replaced.data).toEqual({ a: b64('y') });
    expect(Number(replaced.metadata!.resourceVersion)).toBeGreaterThan(Number(created.metadata!.resourceVersion));

    expect(api.requests.map(r => [r.method, r.path, r.query])).toEqual([
      ['POST', `/api/v1/namespaces/${NS}/secrets`, { fieldManager: 'me' }],
      ['GET', `/api/v1/namespaces/${NS}/secrets/s`, {}],
      ['PUT', `/api/v1/namespaces/${NS}/secrets/s`, { fieldManager: 'me' }],
    ]);
    expect(api.requests[0].body).toEqual(secret('s'));
  });

  test('reads and replaces a webhook configuration, and creates one', async () => {
    const configuration: WebhookConfiguration = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'm' },
      webhooks: [{ name: 'w.example.com', clientConfig: { url: 'https://w.example.com' }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    };
    await client.create(KubeResource.MUTATING_WEBHOOK_CONFIGURATIONS, configuration);
    const read = await client.read(KubeResource.MUTATING_WEBHOOK_CONFIGURATIONS, 'm');
    read.webhooks![0].clientConfig.caBundle = b64('a CA');
    await client.replace(KubeResource.MUTATING_WEBHOOK_CONFIGURATIONS, read);
    expect(api.get(objectPath(MUTATING_WEBHOOK_CONFIGURATIONS, 'm'))!.webhooks[0].clientConfig.caBundle).toBe(b64('a CA'));
    expect(api.requests.map(r => `${r.method} ${r.path}`)).toEqual([
      'POST /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
      'GET /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m',
      'PUT /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m',
    ]);
  });

  test('fails with the status, the reason and the API server\'s message of a missing object', async () => {
    const error = await failure(client.read(KubeResource.SECRETS, 'missing', NS));
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ code: 404, reason: 'NotFound', method: 'GET', path: `/api/v1/namespaces/${NS}/secrets/missing` });
    expect(error.message).toBe('404 NotFound: secrets "missing" not found');
    expect(JSON.parse(error.body)).toMatchObject({ kind: 'Status', code: 404 });
    expect(statusOf(error)).toBe(404);
  });

  test('fails with 409 on a create of an existing object and on a replace of a stale version', async () => {
    const created = await client.create(KubeResource.SECRETS, secret('s'));
    const exists = await failure(client.create(KubeResource.SECRETS, secret('s')));
    expect([statusOf(exists), exists.message]).toEqual([409, '409 AlreadyExists: secrets "s" already exists']);

    await client.replace(KubeResource.SECRETS, { ...created, data: { a: b64('new') } });
    const stale = await failure(client.replace(KubeResource.SECRETS, created));
    expect(statusOf(stale)).toBe(409);
    expect(stale.message).toMatch(/^409 Conflict: Operation cannot be fulfilled on secrets "s": the object has been modified/);
  });

  test('fails with the RBAC message of a forbidden request', async () => {
    api.failNext('GET', objectPath(SECRETS, 's', NS), 403);
    const error = await failure(client.read(KubeResource.SECRETS, 's', NS));
    expect(statusOf(error)).toBe(403);
    expect(error.message).toBe('403 Forbidden: secrets "s" is forbidden: User "system:serviceaccount:kyma-system:serverless-webhook" '
      + `cannot get resource "secrets" in API group "" in the namespace "${NS}"`);
  });

  test('fails with 422 and the API server\'s field errors', async () => {
    await client.create(KubeResource.SECRETS, secret('s'));
    const error = await failure(client.replace(KubeResource.SECRETS, { ...secret('s'), type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } }));
    expect(error.message).toBe('422 Invalid: Secret "s" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable');
  });

  test('says which credentials the API server did not accept', async () => {
    const wrong = new KubeClient(connection(api.url, { token: 'wrong', source: 'context \'x\' of the kubeconfig k' }));
    const error = await failure(wrong.read(KubeResource.SECRETS, 's', NS));
    expect(statusOf(error)).toBe(401);
    expect(error.message).toBe('401 Unauthorized: Unauthorized (check the credentials of context \'x\' of the kubeconfig k)');
  });

  test('fails without a request when an object to replace has no name', async () => {
    await expect(client.replace(KubeResource.SECRETS, { metadata: { namespace: NS } })).rejects.toThrow('Cannot replace a Secret without metadata.name');
    expect(api.requests).toEqual([]);
  });

  test('fails naming the server when it cannot be reached', async () => {
    const url = api.url;
    await api.close();
    const error = await failure(client.read(KubeResource.SECRETS, 's', NS));
    expect(error.message).toBe(`GET /api/v1/namespaces/${NS}/secrets/s: cannot reach the API server at ${url}: connect ECONNREFUSED ${url.slice(7)}`);
    expect(error.cause.code).toBe('ECONNREFUSED');
    expect(statusOf(error)).toBeUndefined();
    api = await FakeKubeApi.start();
  });
});

describe('KubeClient requests', () => {
  test('sends JSON with a bearer token, and accepts JSON', async () => {
    const server = await serve();
    await new KubeClient(connection(server.url, { token: 't0ken' })).create(KubeResource.SECRETS, secret('s'), { fieldManager: 'fm' });
    const [request] = server.seen;
    expect(request).toMatchObject({ method: 'POST', url: `/api/v1/namespaces/${NS}/secrets?fieldManager=fm` });
    expect(request.headers).toMatchObject({
      'authorization': 'Bearer t0ken', 'accept': 'application/json', 'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(request.body)), 'user-agent': 'kyma-serverless-webhook',
    });
    expect(JSON.parse(request.body)).toEqual(secret('s'));
  });

  test('sends basic authentication, and nothing for an anonymous user', async () => {
    const server = await serve();
    await new KubeClient(connection(server.url, { username: 'admin', password: 'pässword' })).read(KubeResource.SECRETS, 'x', NS);
    await new KubeClient(connection(server.url)).read(KubeResource.SECRETS, 'x', NS);
    expect(server.seen[0].headers.authorization).toBe(`Basic ${Buffer.from('admin:pässword').toString('base64')}`);
    expect(server.seen[1].headers.authorization).toBeUndefined();
    expect(server.seen[1].headers['content-type']).toBeUndefined();
  });

  test('keeps the path of a server URL behind a proxy', async () => {
    const server = await serve();
    await new KubeClient(connection(`${server.url}/k8s/clusters/c-1/`)).read(KubeResource.SECRETS, 'x', NS);
    expect(server.seen[0].url).toBe(`/k8s/clusters/c-1/api/v1/namespaces/${NS}/secrets/x`);
  });

  test('fails with the text of an answer that is not a Status', async () => {
    const server = await serve((_request, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway from the proxy</html>\n');
    });
    const error = await failure(new KubeClient(connection(server.url)).read(KubeResource.SECRETS, 'x', NS));
    expect(error).toMatchObject({ code: 502, reason: 'Bad Gateway', message: '502 Bad Gateway: <html>Bad Gateway from the proxy</html>' });
  });

  test('fails with the reason phrase of an empty error answer', async () => {
    const server = await serve((_request, res) => {
      res.writeHead(503);
      res.end();
    });
    const error = await failure(new KubeClient(connection(server.url)).read(KubeResource.SECRETS, 'x', NS));
    expect(error.message).toBe('503 Service Unavailable: Service Unavailable');
  });

  test('fails when a successful answer is not JSON', async () => {
    const server = await serve((_request, res) => res.end('not json'));
    await expect(new KubeClient(connection(server.url)).read(KubeResource.SECRETS, 'x', NS))
      .rejects.toThrow(`GET /api/v1/namespaces/${NS}/secrets/x: the API server at ${server.url} answered 200 with a body that is not JSON: not json`);
  });

  test('gives up on a request that takes longer than the timeout, and closes its connection', async () => {
    let closed = false;
    const server = await serve((_request, res) => {
      res.on('close', () => { closed = true; });
    });
    const started = Date.now();
    await expect(new KubeClient(connection(server.url), { timeoutSeconds: 0.2 }).read(KubeResource.SECRETS, 'x', NS))
      .rejects.toThrow(`GET /api/v1/namespaces/${NS}/secrets/x: the API server at ${server.url} did not answer within 0.2s`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    for (let waited = 0; !closed && waited < 2000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20));
    expect(closed).toBe(true);
  });

  test('gives up on an answer that stops halfway', async () => {
    const server = await serve((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":');
    });
    await expect(new KubeClient(connection(server.url), { timeoutSeconds: 0.2 }).read(KubeResource.SECRETS, 'x', NS)).rejects.toThrow('did not answer within 0.2s');
  });

  test('throws when the server is not an http(s) URL', () => {
    expect(() => new KubeClient(connection('ftp://example.com'))).toThrow("The API server URL 'ftp://example.com' of the test server must start with https:// (or http://)");
    expect(() => new KubeClient(connection('example.com:6443'))).toThrow(/must start with https:\/\//);
    expect(() => new KubeClient(connection('not a url'))).toThrow("The API server URL 'not a url' of the test server is not a URL");
  });
});

/** A TLS client certificate (extKeyUsage clientAuth) signed by `ca`, valid for a day. */
function clientCertificateOf(ca: CertificatePair, commonName: string): CertificatePair {
  const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const now = Date.now();
  const der = buildCertificate({
    serial: Buffer.concat([Buffer.from([1]), randomBytes(8)]),
    issuer: issuerFields(new X509Certificate(ca.cert)).subject,
    subject: commonNameOnly(commonName),
    notBefore: new Date(now - 60 * 60 * 1000),
    notAfter: new Date(now + 24 * 60 * 60 * 1000),
    publicKey: keys.publicKey,
    extensions: [
      basicConstraints(false),
      keyUsage([KeyUsageBit.DIGITAL_SIGNATURE]),
      { oid: OID.extKeyUsage, critical: false, value: sequence(objectIdentifier('1.3.6.1.5.5.7.3.2')) },
    ],
    signingKey: createPrivateKey(ca.key),
  });
  return { cert: certificatePem(der), key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

describe('KubeClient over HTTPS', () => {
  let ca: CertificatePair;
  let servingCert: CertificatePair;
  let clientCa: CertificatePair;
  let clientCert: CertificatePair;

  beforeAll(() => {
    ca = createCertificateAuthority('api-server-ca');
    servingCert = createServingCertificate(ca, ['kubernetes.default.svc', 'localhost']);
    clientCa = createCertificateAuthority('client-ca');
    clientCert = clientCertificateOf(clientCa, 'system:serviceaccount:kyma-system:serverless-webhook');
  });

  const tlsServer = () => serve(json, { cert: servingCert.cert, key: servingCert.key });

  test('trusts the given CA and checks the server\'s name', async () => {
    const server = await tlsServer();
    const client = new KubeClient(connection(server.url, { certificateAuthority: ca.cert, tlsServerName: 'kubernetes.default.svc' }));
    await expect(client.read(KubeResource.SECRETS, 'x', NS)).resolves.toMatchObject({ kind: 'Secret' });

    const otherName = new KubeClient(connection(server.url, { certificateAuthority: ca.cert, tlsServerName: 'other.example.com' }));
    await expect(otherName.read(KubeResource.SECRETS, 'x', NS)).rejects.toThrow(/cannot reach the API server .*Hostname\/IP does not match/);
  });

  test('refuses a server certificate of another CA', async () => {
    const server = await tlsServer();
    const client = new KubeClient(connection(server.url, { certificateAuthority: clientCa.cert, tlsServerName: 'localhost' }));
    const error = await failure(client.read(KubeResource.SECRETS, 'x', NS));
    expect(error.message).toMatch(/cannot reach the API server at https:\/\/127\.0\.0\.1:\d+: unable to verify the first certificate/);
    expect(error.cause.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  test('accepts any server certificate with insecureSkipTlsVerify', async () => {
    const server = await tlsServer();
    const client = new KubeClient(connection(server.url, { insecureSkipTlsVerify: true, certificateAuthority: clientCa.cert }));
    await expect(client.read(KubeResource.SECRETS, 'x', NS)).resolves.toMatchObject({ kind: 'Secret' });
  });

  test('presents a client certificate', async () => {
    const server = await serve(json, { cert: servingCert.cert, key: servingCert.key, ca: clientCa.cert, requestCert: true, rejectUnauthorized: true });
    const client = new KubeClient(connection(server.url, {
      certificateAuthority: ca.cert, tlsServerName: 'localhost', clientCertificate: clientCert.cert, clientKey: clientCert.key,
    }));
    await client.read(KubeResource.SECRETS, 'x', NS);
    expect(server.seen[0].clientCn).toBe('system:serviceaccount:kyma-system:serverless-webhook');
    await expect(new KubeClient(connection(server.url, { certificateAuthority: ca.cert, tlsServerName: 'localhost' })).read(KubeResource.SECRETS, 'x', NS))
      .rejects.toThrow(/cannot reach the API server/);
  });

  test('connects in the cluster with the ServiceAccount\'s token and CA', async () => {
    // localhost, as the serving certificate names it (it holds DNS names only).
    const server = await serve(json, { cert: servingCert.cert, key: servingCert.key }, 'localhost');
    write('sa/token', 'sa-token\n');
    write('sa/ca.crt', ca.cert);
    write('sa/namespace', NS);
    const inCluster = inClusterConnection({
      serviceAccountDir: path.join(dir, 'sa'), env: { KUBERNETES_SERVICE_HOST: 'localhost', KUBERNETES_SERVICE_PORT: String(server.port) },
    });
    await new KubeClient(inCluster).read(KubeResource.SECRETS, 'x', NS);
    expect(server.seen[0].headers.authorization).toBe('Bearer sa-token');
  });
});

describe('inClusterConnection', () => {
  const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

  function serviceAccount(files: { token?: string; ca?: string; namespace?: string } = { token: 'sa-token', ca: 'CA PEM', namespace: NS }): string {
    if (files.token !== undefined) write('sa/token', files.token);
    if (files.ca !== undefined) write('sa/ca.crt', files.ca);
    if (files.namespace !== undefined) write('sa/namespace', files.namespace);
    fs.mkdirSync(path.join(dir, 'sa'), { recursive: true });
    return path.join(dir, 'sa');
  }

  test('reads the API server from the environment and the rest from the ServiceAccount folder', () => {
    const saDir = serviceAccount();
    expect(inClusterConnection({ serviceAccountDir: saDir, env })).toEqual({
      server: 'https://10.96.0.1:443',
      certificateAuthority: 'CA PEM',
      tokenFile: path.join(saDir, 'token'),
      namespace: NS,
      source: `the Pod's ServiceAccount (${saDir})`,
    });
  });

  test('puts an IPv6 address in brackets', () => {
    const saDir = serviceAccount();
    expect(inClusterConnection({ serviceAccountDir: saDir, env: { ...env, KUBERNETES_SERVICE_HOST: 'fd00:10:96::1' } }).server).toBe('https://[fd00:10:96::1]:443');
    expect(inClusterConnection({ serviceAccountDir: saDir, env: { ...env, KUBERNETES_SERVICE_HOST: '::1' } }).server).toBe('https://[::1]:443');
  });

  test('does without a namespace file', () => {
    expect(inClusterConnection({ serviceAccountDir: serviceAccount({ token: 't', ca: 'c' }), env }).namespace).toBeUndefined();
  });

  test('defaults to the folder where the kubelet mounts the ServiceAccount', () => {
    expect(SERVICE_ACCOUNT_DIR).toBe('/var/run/secrets/kubernetes.io/serviceaccount');
  });

  test('throws outside a Pod, saying to give a kubeconfig', () => {
    expect(() => inClusterConnection({ serviceAccountDir: serviceAccount(), env: {} })).toThrow(
      'No kubeconfig, and not in a Kubernetes Pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set): give a kubeconfig with --kubeconfig or KUBECONFIG',
    );
    expect(() => inClusterConnection({ serviceAccountDir: serviceAccount(), env: { KUBERNETES_SERVICE_HOST: 'h' } })).toThrow(/not in a Kubernetes Pod/);
  });

  test('throws when the token or the CA is not mounted', () => {
    const noToken = serviceAccount({ ca: 'c' });
    expect(() => inClusterConnection({ serviceAccountDir: noToken, env })).toThrow(new RegExp(
      `^Cannot read the ServiceAccount token ${path.join(noToken, 'token')}: ENOENT.*; does the Pod mount its ServiceAccount token \\(automountServiceAccountToken\\)\\?$`,
    ));
    fs.rmSync(path.join(dir, 'sa'), { recursive: true });
    expect(() => inClusterConnection({ serviceAccountDir: serviceAccount({ token: 't' }), env })).toThrow(/^Cannot read the cluster CA .*ca\.crt: ENOENT/);
    fs.rmSync(path.join(dir, 'sa'), { recursive: true });
    expect(() => inClusterConnection({ serviceAccountDir: serviceAccount({ token: ' \n', ca: 'c' }), env })).toThrow(/The ServiceAccount token .* is empty/);
  });
});

describe('the token file', () => {
  let api: FakeKubeApi;

  beforeEach(async () => {
    api = await FakeKubeApi.start({ token: 'new-token' });
  });

  afterEach(() => api.close());

  test('is re-read once it is tokenRefreshSeconds old, as a rotated ServiceAccount token is', async () => {
    const tokenFile = write('token', 'old-token');
    const quick = new KubeClient(connection(api.url, { tokenFile }), { tokenRefreshSeconds: 0.1 });
    const slow = new KubeClient(connection(api.url, { tokenFile }));
    expect(statusOf(await failure(quick.read(KubeResource.SECRETS, 'x', NS)))).toBe(401);
    expect(statusOf(await failure(slow.read(KubeResource.SECRETS, 'x', NS)))).toBe(401);

    write('token', 'new-token\n');
    await new Promise(resolve => setTimeout(resolve, 150));

    // 404: through, with the new token.
    expect(statusOf(await failure(quick.read(KubeResource.SECRETS, 'x', NS)))).toBe(404);
    // Still the old one, until a minute has passed.
    expect(statusOf(await failure(slow.read(KubeResource.SECRETS, 'x', NS)))).toBe(401);
  });

  test('wins over a token', async () => {
    const tokenFile = write('token', 'new-token');
    const client = new KubeClient(connection(api.url, { tokenFile, token: 'old-token' }));
    expect(statusOf(await failure(client.read(KubeResource.SECRETS, 'x', NS)))).toBe(404);
  });

  test('keeps the last token while the file cannot be read', async () => {
    const tokenFile = write('token', 'new-token');
    const client = new KubeClient(connection(api.url, { tokenFile }), { tokenRefreshSeconds: 0 });
    expect(statusOf(await failure(client.read(KubeResource.SECRETS, 'x', NS)))).toBe(404);
    fs.rmSync(tokenFile);
    expect(statusOf(await failure(client.read(KubeResource.SECRETS, 'x', NS)))).toBe(404);
  });

  test('fails naming the file when it was never read', async () => {
    const tokenFile = path.join(dir, 'missing-token');
    const client = new KubeClient(connection(api.url, { tokenFile }));
    await expect(client.read(KubeResource.SECRETS, 'x', NS)).rejects.toThrow(`Cannot read the token file ${tokenFile} of the test server: ENOENT`);
    expect(api.requests).toEqual([]);
  });
});

describe('kubeconfigConnection', () => {
  const kubeconfig = (config: object, name = 'config') => write(name, stringify(config));

  const basic = (user: object = { token: 'abc' }, cluster: object = { server: 'https://k8s.example.com:6443' }) => ({
    'apiVersion': 'v1',
    'kind': 'Config',
    'clusters': [{ name: 'c', cluster }],
    'users': [{ name: 'u', user }],
    'contexts': [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'team-a' } }, { name: 'other', context: { cluster: 'c' } }],
    'current-context': 'ctx',
  });

  test('reads the current context: server, token, namespace', () => {
    const file = kubeconfig(basic());
    expect(kubeconfigConnection(file)).toEqual({
      server: 'https://k8s.example.com:6443', insecureSkipTlsVerify: false, token: 'abc', namespace: 'team-a',
      source: `context 'ctx' of the kubeconfig ${file}`,
      certificateAuthority: undefined, tlsServerName: undefined, clientCertificate: undefined, clientKey: undefined,
      tokenFile: undefined, username: undefined, password: undefined,
    });
  });

  test('reads a named context; one without a user is anonymous', () => {
    const connection = kubeconfigConnection(kubeconfig(basic()), 'other');
    expect(connection).toMatchObject({ server: 'https://k8s.example.com:6443', namespace: undefined });
    expect(connection.token).toBeUndefined();
  });

  test('reads the CA from certificate-authority-data, or from a file relative to the kubeconfig', () => {
    expect(kubeconfigConnection(kubeconfig(basic(undefined, { 'server': 'https://k', 'certificate-authority-data': b64('CA DATA') }))))
      .toMatchObject({ certificateAuthority: 'CA DATA' });
    write('kube/certs/ca.crt', 'CA FILE');
    expect(kubeconfigConnection(kubeconfig(basic(undefined, { 'server': 'https://k', 'certificate-authority': 'certs/ca.crt' }), 'kube/config')))
      .toMatchObject({ certificateAuthority: 'CA FILE' });
    // The data wins over the file.
    const both = { 'server': 'https://k', 'certificate-authority': 'certs/ca.crt', 'certificate-authority-data': b64('CA DATA') };
    expect(kubeconfigConnection(kubeconfig(basic(undefined, both), 'kube/config2'))).toMatchObject({ certificateAuthority: 'CA DATA' });
    // An absolute path stays as it is.
    const absolute = path.join(dir, 'kube', 'certs', 'ca.crt');
    expect(kubeconfigConnection(kubeconfig(basic(undefined, { 'server': 'https://k', 'certificate-authority': absolute }), 'elsewhere/config')))
      .toMatchObject({ certificateAuthority: 'CA FILE' });
  });

  test('reads insecure-skip-tls-verify, which ignores a CA, and tls-server-name', () => {
    const cluster = { 'server': 'https://k', 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64('CA'), 'tls-server-name': 'kubernetes' };
    expect(kubeconfigConnection(kubeconfig(basic(undefined, cluster)))).toMatchObject({
      insecureSkipTlsVerify: true, certificateAuthority: undefined, tlsServerName: 'kubernetes',
    });
  });

  test('reads a client certificate and key from files or data', () => {
    write('pki/client.crt', 'CERT FILE');
    write('pki/client.key', 'KEY FILE');
    expect(kubeconfigConnection(kubeconfig(basic({ 'client-certificate': 'pki/client.crt', 'client-key': 'pki/client.key' }))))
      .toMatchObject({ clientCertificate: 'CERT FILE', clientKey: 'KEY FILE' });
    expect(kubeconfigConnection(kubeconfig(basic({ 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }))))
      .toMatchObject({ clientCertificate: 'CERT', clientKey: 'KEY' });
  });

  test('reads tokenFile relative to the kubeconfig, and basic authentication', () => {
    expect(kubeconfigConnection(kubeconfig(basic({ tokenFile: 'tokens/t' }), 'kube/config')).tokenFile).toBe(path.join(dir, 'kube', 'tokens', 't'));
    expect(kubeconfigConnection(kubeconfig(basic({ username: 'admin', password: 'secret' })))).toMatchObject({ username: 'admin', password: 'secret' });
  });

  test('connects to the fake API server with the kubeconfig the tests write for it', async () => {
    const api = await FakeKubeApi.start();
    try {
      const file = writeKubeconfig(api, path.join(dir, 'fake-config'), { namespace: NS });
      const client = new KubeClient(kubeconfigConnection(file));
      expect(client.connection).toMatchObject({ server: api.url, insecureSkipTlsVerify: true, namespace: NS });
      expect(statusOf(await failure(client.read(KubeResource.SECRETS, 'x', NS)))).toBe(404);
    } finally {
      await api.close();
    }
  });

  test('merges several files: for every name, and the current context, the first file wins', () => {
    const first = kubeconfig({
      'clusters': [{ name: 'c', cluster: { 'server': 'https://first', 'certificate-authority': 'ca.crt' } }],
      'contexts': [{ name: 'a', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'a',
    }, 'one/config');
    write('one/ca.crt', 'CA OF ONE');
    const second = kubeconfig({
      'clusters': [{ name: 'c', cluster: { server: 'https://second' } }, { name: 'd', cluster: { server: 'https://d' } }],
      'users': [{ name: 'u', user: { tokenFile: 'token' } }],
      'contexts': [{ name: 'a', context: { cluster: 'd' } }, { name: 'b', context: { cluster: 'd', user: 'u' } }],
      'current-context': 'b',
    }, 'two/config');
    expect(kubeconfigConnection([first, second])).toMatchObject({
      server: 'https://first', certificateAuthority: 'CA OF ONE', tokenFile: path.join(dir, 'two', 'token'),
      source: `context 'a' of the kubeconfigs ${first}, ${second}`,
    });
    expect(kubeconfigConnection([first, second], 'b')).toMatchObject({ server: 'https://d' });
  });

  test.each([
    ['exec', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } }, 'exec (a credential plugin)'],
    ['auth-provider', { 'auth-provider': { name: 'oidc', config: {} } }, 'auth-provider (oidc)'],
    ['impersonation', { token: 't', as: 'admin' }, 'impersonation (as)'],
  ])('throws for a user with %s, saying which kinds of users work', (_what, user, kind) => {
    const file = kubeconfig(basic(user));
    expect(() => kubeconfigConnection(file)).toThrow(
      `The user 'u' in ${file} authenticates with ${kind}, which this client does not support; it supports token, tokenFile, `
      + 'client-certificate and client-key (or their -data forms), and username and password: use such a user, for example with a ServiceAccount token',
    );
  });

  test('throws for a context, cluster or user that does not exist', () => {
    const file = kubeconfig(basic());
    expect(() => kubeconfigConnection(file, 'nope')).toThrow(`No context 'nope' in the kubeconfig ${file}; it has: ctx, other`);
    const noCluster = kubeconfig({ ...basic(), clusters: [] }, 'no-cluster');
    expect(() => kubeconfigConnection(noCluster)).toThrow(`The context 'ctx' in the kubeconfig ${noCluster} names the cluster 'c', which it does not define`);
    const noUser = kubeconfig({ ...basic(), users: [] }, 'no-user');
    expect(() => kubeconfigConnection(noUser)).toThrow(`The context 'ctx' in the kubeconfig ${noUser} names the user 'u', which it does not define`);
  });

  test('throws without a current context, a server, or with a proxy', () => {
    const noCurrent = kubeconfig({ ...basic(), 'current-context': '' });
    expect(() => kubeconfigConnection(noCurrent)).toThrow(
      `The kubeconfig ${noCurrent} has no current-context: give a context, or set one with \`kubectl config use-context\``,
    );
    const noServer = kubeconfig(basic(undefined, {}), 'no-server');
    expect(() => kubeconfigConnection(noServer)).toThrow(`The cluster 'c' in ${noServer} has no server`);
    const proxy = kubeconfig(basic(undefined, { 'server': 'https://k', 'proxy-url': 'http://proxy:3128' }), 'proxy');
    expect(() => kubeconfigConnection(proxy)).toThrow(/uses proxy-url, which this client does not support/);
  });

  test('throws for a client certificate without a key', () => {
    const file = kubeconfig(basic({ 'client-certificate-data': b64('CERT') }));
    expect(() => kubeconfigConnection(file)).toThrow(`The user 'u' in ${file} has a client certificate without a key`);
  });

  test('throws naming a file it cannot read', () => {
    const missing = path.join(dir, 'missing');
    expect(() => kubeconfigConnection(missing)).toThrow(new RegExp(`^Cannot read the kubeconfig ${missing}: ENOENT`));
    const file = kubeconfig(basic(undefined, { 'server': 'https://k', 'certificate-authority': 'nope.crt' }));
    expect(() => kubeconfigConnection(file)).toThrow(new RegExp(`^Cannot read the certificate-authority file ${path.join(dir, 'nope.crt')} of the cluster 'c' in ${file}: ENOENT`));
  });

  test('throws for a file that is not a kubeconfig', () => {
    expect(() => kubeconfigConnection(write('bad', 'a: [b'))).toThrow(/^The kubeconfig .*bad is not YAML: /);
    expect(() => kubeconfigConnection(write('list', '- a'))).toThrow(/^The kubeconfig .*list is not a YAML map$/);
    expect(() => kubeconfigConnection(write('clusters', 'clusters: {}'))).toThrow(/'clusters' must be a list/);
    expect(() => kubeconfigConnection(write('nameless', 'users: [{user: {}}]'))).toThrow(/users\[0\] has no name/);
    expect(() => kubeconfigConnection([])).toThrow('No kubeconfig file given');
  });
});

describe('defaultConnection', () => {
  const config = (server: string) => stringify({
    'clusters': [{ name: 'c', cluster: { server } }], 'contexts': [{ name: 'x', context: { cluster: 'c' } }], 'current-context': 'x',
  });
  const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  let saDir: string;
  let home: string;

  beforeEach(() => {
    write('sa/token', 't');
    write('sa/ca.crt', 'c');
    saDir = path.join(dir, 'sa');
    home = path.join(dir, 'home');
    fs.mkdirSync(home);
  });

  test('uses an explicit kubeconfig first', () => {
    const file = write('explicit', config('https://explicit'));
    const kubeconfigEnv = write('env', config('https://env'));
    expect(defaultConnection({ kubeconfig: file, env: { ...env, KUBECONFIG: kubeconfigEnv }, homeDir: home, serviceAccountDir: saDir }).server)
      .toBe('https://explicit');
  });

  test('then KUBECONFIG, skipping its files that do not exist', () => {
    const file = write('env', config('https://env'));
    const list = [path.join(dir, 'missing'), file].join(path.delimiter);
    expect(defaultConnection({ env: { ...env, KUBECONFIG: list }, homeDir: home, serviceAccountDir: saDir }).server).toBe('https://env');
    expect(() => defaultConnection({ env: { KUBECONFIG: path.join(dir, 'missing') }, homeDir: home }))
      .toThrow(`None of the files in KUBECONFIG exists: ${path.join(dir, 'missing')}`);
  });

  test('then ~/.kube/config', () => {
    write('home/.kube/config', config('https://home'));
    expect(defaultConnection({ env: { ...env, HOME: '/nowhere' }, homeDir: home, serviceAccountDir: saDir }).server).toBe('https://home');
    expect(defaultConnection({ env: { ...env, HOME: home }, serviceAccountDir: saDir }).server).toBe('https://home');
  });

  test('then the Pod\'s ServiceAccount', () => {
    expect(defaultConnection({ env, homeDir: home, serviceAccountDir: saDir })).toMatchObject({ server: 'https://10.0.0.1:443', tokenFile: path.join(saDir, 'token') });
    expect(() => defaultConnection({ env: {}, homeDir: home, serviceAccountDir: saDir })).toThrow(/^No kubeconfig, and not in a Kubernetes Pod/);
  });

  test('passes the context on', () => {
    const file = write('ctx', stringify({
      clusters: [{ name: 'c', cluster: { server: 'https://c' } }, { name: 'd', cluster: { server: 'https://d' } }],
      contexts: [{ name: 'x', context: { cluster: 'c' } }, { name: 'y', context: { cluster: 'd' } }],
      'current-context': 'x',
    }));
    expect(defaultConnection({ kubeconfig: file, context: 'y' }).server).toBe('https://d');
  });
});
