/**
 * `kyma-serverless webhook serve` as a user runs it: the real bin script in its own process,
 * answering over HTTPS with a certificate made in the test.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { WEBHOOK_NAMES } from '../../src/webhook/config';
import { main } from '../../src/cli/index';
import { createCertificateAuthority, createServingCertificate } from '../../src/webhook/certificates';
import { FakeKubeApi, writeKubeconfig } from '../util/fake-kube-api';
import { find, synthStack } from '../util/synth';

const BIN = path.join(__dirname, '..', '..', 'bin', 'kyma-serverless.js');

interface Running {
  readonly child: ChildProcess;
  readonly port: number;
  readonly logs: () => any[];
  readonly exited: Promise<number | null>;
}

function run(args: string[]): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/nonexistent' } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', chunk => { stdout += chunk; });
  child.stderr!.on('data', chunk => { stderr += chunk; });
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function serve(args: string[]): Promise<Running> {
  const process = run(['webhook', 'serve', '--port', '0', '--host', '127.0.0.1', ...args]);
  const logs = () => process.stdout().split('\n').filter(Boolean).map(line => JSON.parse(line));
  for (let waited = 0; waited < 15_000; waited += 50) {
    const listening = logs().find(l => l.msg === 'listening');
    if (listening) return { child: process.child, port: listening.port, logs, exited: process.exited };
    if (process.child.exitCode !== null) break;
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  process.child.kill('SIGKILL');
  throw new Error(`the server did not start:\n${process.stdout()}\n${process.stderr()}`);
}

function post(port: number, ca: string, urlPath: string, body: string, servername = 'localhost'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: urlPath, method: 'POST', ca, servername, headers: { 'Content-Type': 'application/json' } }, res => {
      let data = '';
      res.on('data', chunk => { data += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(data) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function review(uid: string, object: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, kind: { group: 'serverless.kyma-project.io', version: 'v1alpha2', kind: 'Function' }, operation: 'CREATE', namespace: 'default', object },
  });
}

const fn = (env: unknown[] = []) => ({
  apiVersion: 'serverless.kyma-project.io/v1alpha2',
  kind: 'Function',
  metadata: { name: 'hello', namespace: 'default' },
  spec: { runtime: 'nodejs22', source: { inline: { source: 'exports.main = () => "hi"' } }, env },
});

describe('kyma-serverless webhook serve', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-serve-'));
  const ca = createCertificateAuthority('test-ca');
  const serving = createServingCertificate(ca, ['localhost']);
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(certFile, serving.cert);
  fs.writeFileSync(keyFile, serving.key);
  fs.writeFileSync(configFile, 'defaults:\n  functionProfile: S\nshutdownDelaySeconds: 0\n');

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('answers AdmissionReviews over HTTPS, stays up after bad input, and stops on SIGTERM', async () => {
    const server = await serve(['--tls-cert', certFile, '--tls-key', keyFile, '--config', configFile]);
    try {
      const defaulted = await post(server.port, ca.cert, '/defaulting/functions', review('u-1', fn()));
      expect(defaulted.status).toBe(200);
      const patch = JSON.parse(Buffer.from(defaulted.body.response.patch, 'base64').toString());
      expect(patch).toContainEqual({ op: 'add', path: '/spec/resourceConfiguration', value: { function: { profile: 'S' }, build: { profile: 'normal' } } });

      for (const bad of ['{not json', '[]', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })]) {
        const refused = await post(server.port, ca.cert, '/validation/function', bad);
        expect(refused.status).toBe(400);
        expect(refused.body.reason).toBe('BadRequest');
      }

      const denied = await post(server.port, ca.cert, '/validation/function', review('u-2', fn([{ name: '1X', value: 'v' }])));
      expect(denied.body.response).toMatchObject({ uid: 'u-2', allowed: false, status: { code: 422 } });
      expect(denied.body.response.status.message).toContain('spec.env[0].name: Invalid value: "1X"');
      const allowed = await post(server.port, ca.cert, '/validation/function', review('u-3', fn()));
      expect(allowed.body.response).toEqual({ uid: 'u-3', allowed: true });

      // The log lines reach us through a pipe, possibly after the answers.
      const reviews = () => server.logs().filter(l => l.uid).map(l => [l.uid, l.msg]);
      for (let waited = 0; reviews().length < 3 && waited < 5000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20));
      expect(reviews()).toEqual([['u-1', 'defaulted'], ['u-2', 'denied'], ['u-3', 'allowed']]);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    expect(server.logs().map(l => l.msg)).toEqual(expect.arrayContaining(['received signal', 'shutting down', 'stopped']));
  }, 30_000); // starts a server process, a TLS handshake per request: seconds on a busy machine

  // In-process: the same main() the bin script calls, without the cost of another process.
  async function failure(...args: string[]): Promise<{ exitCode: number; stderr: string }> {
    let stderr = '';
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => {
      stderr += String(chunk);
      return true;
    });
    const before = process.exitCode;
    process.exitCode = undefined;
    try {
      await main(['node', 'kyma-serverless', ...args]);
      return { exitCode: Number(process.exitCode ?? 0), stderr };
    } finally {
      write.mockRestore();
      process.exitCode = before;
    }
  }

  test('fails with a clear message when the certificate cannot be read', async () => {
    const result = await failure('webhook', 'serve', '--port', '0', '--tls-cert', path.join(dir, 'missing.pem'), '--tls-key', keyFile);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`kyma-serverless: Cannot read the TLS certificate ${path.join(dir, 'missing.pem')}`);
  });

  test('fails when given no certificate and no self-managed TLS', async () => {
    const result = await failure('webhook', 'serve', '--port', '0', '--config', configFile);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('kyma-serverless: No certificate: give --tls-cert and --tls-key, or a --config file with selfManagedTls');
  });

  test('fails with a clear message when self-managed TLS gets a kubeconfig user it cannot use', async () => {
    const stackConfig = path.join(dir, 'self-managed.yaml');
    fs.writeFileSync(stackConfig, 'selfManagedTls:\n  namespace: kyma-system\n');
    const kubeconfig = path.join(dir, 'exec-kubeconfig');
    fs.writeFileSync(kubeconfig, [
      'clusters: [{name: c, cluster: {server: "https://k8s.example.com"}}]',
      'users: [{name: u, user: {exec: {command: aws}}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'));
    const result = await failure('webhook', 'serve', '--port', '0', '--config', stackConfig, '--kubeconfig', kubeconfig);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`kyma-serverless: The user 'u' in ${kubeconfig} authenticates with exec (a credential plugin), which this client does not support`);
  });

  test('with the stack\'s configuration, keeps its certificate in a Secret and injects the CA into the stack\'s configurations', async () => {
    const objects = synthStack();
    const api = await FakeKubeApi.start();
    let server: Running | undefined;
    try {
      api.put(find(objects, 'MutatingWebhookConfiguration'));
      api.put(find(objects, 'ValidatingWebhookConfiguration'));
      const stackConfig = path.join(dir, 'stack-config.yaml');
      // The file the stack mounts, with a shutdown delay of 0 to keep the test short.
      fs.writeFileSync(stackConfig, find(objects, 'ConfigMap', WEBHOOK_NAMES.config).data['config.yaml'].replace('shutdownDelaySeconds: 5', 'shutdownDelaySeconds: 0'));
      const kubeconfig = writeKubeconfig(api, path.join(dir, 'kubeconfig'));

      server = await serve(['--config', stackConfig, '--kubeconfig', kubeconfig]);

      const secret = api.get('/api/v1/namespaces/kyma-system/secrets/serverless-webhook')!;
      expect(secret.type).toBe('kubernetes.io/tls');
      const caBundle = secret.data['ca.crt'];
      for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
        const name = kind.startsWith('mutating') ? WEBHOOK_NAMES.mutating : WEBHOOK_NAMES.validating;
        const configuration = api.get(`/apis/admissionregistration.k8s.io/v1/${kind}/${name}`)!;
        expect(configuration.webhooks.map((w: any) => w.clientConfig.caBundle)).toEqual([caBundle]);
      }
      // What the API server does: trust caBundle, call the Service's DNS name.
      const ca = Buffer.from(caBundle, 'base64').toString();
      const allowed = await post(server.port, ca, '/validation/function', review('u-4', fn()), 'serverless-webhook.kyma-system.svc');
      expect(allowed.body.response).toEqual({ uid: 'u-4', allowed: true });
      const messages = () => server!.logs().map(l => l.msg);
      for (let waited = 0; !messages().includes('injected the CA bundle') && waited < 5000; waited += 20) await new Promise(resolve => setTimeout(resolve, 20));
      expect(messages()).toEqual(expect.arrayContaining(['created the serving certificate', 'injected the CA bundle']));
    } finally {
      server?.child.kill('SIGTERM');
      if (server) expect(await server.exited).toBe(0);
      await api.close();
    }
  }, 60_000); // synthesizes the stack, makes an RSA key and certificate, serves TLS: seconds on a busy machine
});
