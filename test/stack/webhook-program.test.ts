/**
 * The webhook server exactly as dist/ ships it: the program ConfigMap, the configuration ConfigMap
 * and the container's command and arguments are taken from the synthesized YAML (not from src/),
 * their files laid out as kubelet mounts them in an empty folder with no node_modules, and the
 * command run with plain `node`. Against a fake API server it creates its certificate and writes
 * the CA into both webhook configurations (taken from the same YAML), then admits and denies
 * Functions over HTTPS, and exits 0 on SIGTERM.
 */
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadAll } from 'js-yaml';
import { FakeKubeApi, writeKubeconfig } from '../util/fake-kube-api';

const DIST = path.resolve(__dirname, '..', '..', 'dist', '0000-serverless.k8s.yaml');

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [key: string]: any };

const objects = loadAll(fs.readFileSync(DIST, 'utf8')) as Obj[];
const find = (kind: string, name: string): Obj => {
  const found = objects.find(o => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`dist/ has no ${kind} ${name}`);
  return found;
};

/** A free TCP port on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}

function post(port: number, ca: string, urlPath: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, path: urlPath, method: 'POST', ca,
      // The name the API server checks: <service>.<namespace>.svc.
      servername: 'serverless-webhook.kyma-system.svc',
      headers: { 'content-type': 'application/json' },
    }, res => {
      let text = '';
      res.setEncoding('utf8').on('data', c => { text += c; }).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const review = (object: unknown, uid: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid,
    kind: { group: 'serverless.kyma-project.io', version: 'v1alpha2', kind: 'Function' },
    resource: { group: 'serverless.kyma-project.io', version: 'v1alpha2', resource: 'functions' },
    operation: 'CREATE',
    namespace: 'team-a',
    name: (object as Obj).metadata.name,
    object,
  },
});

const fn = (name: string, spec: object) => ({
  apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name, namespace: 'team-a' }, spec,
});

describe('the webhook program in dist/, run with plain node', () => {
  const deployment = find('Deployment', 'serverless-webhook');
  const container = deployment.spec.template.spec.containers[0];
  const volumes: Obj[] = deployment.spec.template.spec.volumes;
  let api: FakeKubeApi;
  let dir: string;
  let child: ChildProcessWithoutNullStreams;
  let port: number;
  let metricsPort: number;
  const logs: any[] = [];
  let stderr = '';

  beforeAll(async () => {
    api = await FakeKubeApi.start();
    api.put(find('MutatingWebhookConfiguration', 'defaulting.webhook.serverless.kyma-project.io'));
    api.put(find('ValidatingWebhookConfiguration', 'validation.webhook.serverless.kyma-project.io'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-program-'));
    // The volumes as kubelet mounts them: each ConfigMap key a file (binaryData decoded).
    const root = path.join(dir, 'root');
    const mounted = (p: string) => path.join(root, p);
    for (const mount of container.volumeMounts) {
      const volume = volumes.find(v => v.name === mount.name)!;
      const configMap = find('ConfigMap', volume.configMap.name);
      fs.mkdirSync(mounted(mount.mountPath), { recursive: true });
      for (const [key, text] of Object.entries<string>(configMap.data ?? {})) fs.writeFileSync(path.join(mounted(mount.mountPath), key), text);
      for (const [key, b64] of Object.entries<string>(configMap.binaryData ?? {})) fs.writeFileSync(path.join(mounted(mount.mountPath), key), Buffer.from(b64, 'base64'));
    }
    [port, metricsPort] = [await freePort(), await freePort()];
    const ports: { [port: string]: number } = { '8443': port, '8080': metricsPort };
    const argv = [...container.command, ...container.args]
      .map((arg: string) => (arg.startsWith('/') ? mounted(arg) : ports[arg] !== undefined ? String(ports[arg]) : arg));
    expect(argv[0]).toBe('node');
    const cwd = path.join(dir, 'empty');
    fs.mkdirSync(cwd);
    child = spawn(process.execPath, [...argv.slice(1), '--host', '127.0.0.1', '--kubeconfig', writeKubeconfig(api, path.join(dir, 'kubeconfig'))], {
      cwd,
      // Nothing from this repository: no NODE_PATH, no node_modules above the folder.
      env: { PATH: process.env.PATH, HOME: dir },
    });
    child.stderr.setEncoding('utf8').on('data', c => { stderr += c; });
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
          const record = JSON.parse(buffered.slice(0, i));
          buffered = buffered.slice(i + 1);
          logs.push(record);
          if (record.msg === 'listening') resolve();
        }
      });
      child.on('exit', code => reject(new Error(`the server exited ${code}: ${stderr}`)));
    });
  }, 30_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('runs from a folder with nothing but the mounted files', () => {
    expect(fs.readdirSync(path.join(dir, 'root', 'opt', 'kyma-serverless-webhook')).sort()).toEqual(['main.js', 'server.js.br']);
    expect(logs[0]).toMatchObject({ level: 'info', component: 'serverless-webhook' });
  });

  test('keeps its certificate in the Secret and writes the CA into both configurations', () => {
    const secret = api.get('/api/v1/namespaces/kyma-system/secrets/serverless-webhook')!;
    expect(secret.type).toBe('kubernetes.io/tls');
    const caBundle = secret.data['ca.crt'];
    for (const p of [
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/defaulting.webhook.serverless.kyma-project.io',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validation.webhook.serverless.kyma-project.io',
    ]) {
      expect(api.get(p)!.webhooks.map((w: any) => w.clientConfig.caBundle)).toEqual([caBundle]);
    }
  });

  test('admits a valid Function and denies an invalid one over HTTPS, trusted through that CA', async () => {
    const ca = Buffer.from(api.get('/api/v1/namespaces/kyma-system/secrets/serverless-webhook')!.data['ca.crt'], 'base64').toString('utf8');
    const good = fn('hello', { runtime: 'nodejs22', source: { inline: { source: 'exports.main = () => "hi"' } } });
    const allowed = await post(port, ca, '/validation/function', review(good, 'u-1'));
    expect(allowed).toMatchObject({ status: 200, body: { response: { uid: 'u-1', allowed: true } } });

    const bad = fn('hello', { runtime: 'nodejs22', source: { inline: { source: 'x' } }, env: [{ name: '1X', value: 'y' }] });
    const denied = await post(port, ca, '/validation/function', review(bad, 'u-2'));
    expect(denied.body.response).toMatchObject({ uid: 'u-2', allowed: false, status: { code: 422 } });
    expect(denied.body.response.status.message).toContain('spec.env[0].name: Invalid value: "1X"');

    const defaulted = await post(port, ca, '/defaulting/functions', review(good, 'u-3'));
    expect(defaulted.body.response).toMatchObject({ uid: 'u-3', allowed: true, patchType: 'JSONPatch' });
    const patch = JSON.parse(Buffer.from(defaulted.body.response.patch, 'base64').toString('utf8'));
    expect(patch).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/spec/replicas', value: 1 })]));
  });

  test('serves readiness and metrics on the plain port, and exits 0 on SIGTERM', async () => {
    const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^kyma_serverless_webhook_requests_total\{path="\/validation\/function",result="denied"\} 1$/m);
    const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logs.map(l => l.msg)).toContain('stopped');
    expect(stderr).toBe('');
  }, 20_000);
});
