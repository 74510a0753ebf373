import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { Size, Testing } from 'cdk8s';
import * as selfsigned from 'selfsigned';
import { Registry, RegistryCredentials, ServerlessStack } from '../../src';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { envOf, find, synthStack } from '../util/synth';

describe('the internal registry', () => {
  const objects = synthStack();
  const deployment = find(objects, 'Deployment', 'serverless-docker-registry');
  const pod = deployment.spec.template.spec;

  test('stores images on a 20Gi ReadWriteOnce claim of the default StorageClass', () => {
    expect(find(objects, 'PersistentVolumeClaim').spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } });
    expect(pod.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'serverless-docker-registry' } });
  });

  test('is recreated, not rolled, since its volume is ReadWriteOnce', () => {
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
  });

  test('listens on 5000 and is reachable on NodePort 32137 through a Service that selects it', () => {
    const service = find(objects, 'Service', 'serverless-docker-registry');
    expect(service.spec.type).toBe('NodePort');
    expect(service.spec.ports).toEqual([{ name: 'http-registry', port: 5000, targetPort: 5000, protocol: 'TCP', nodePort: 32137 }]);
    for (const [k, v] of Object.entries(service.spec.selector)) expect(deployment.spec.template.metadata.labels[k]).toBe(v);
  });

  test('reads its config from /etc/distribution, as registry 3 does', () => {
    const container = pod.containers[0];
    expect(container.command).toEqual(['/bin/registry', 'serve', '/etc/distribution/config.yml']);
    expect(container.volumeMounts).toContainEqual({ name: 'config', mountPath: '/etc/distribution' });
    expect(find(objects, 'ConfigMap', 'serverless-docker-registry-config').data['config.yml']).toContain('addr: :5000');
  });

  test('authenticates with htpasswd made from the credentials Secret, and keeps its HTTP secret there', () => {
    const env = envOf(pod.containers[0]);
    expect(env.REGISTRY_AUTH).toBe('htpasswd');
    expect(env.REGISTRY_HTTP_SECRET).toEqual({ secretKeyRef: { name: 'serverless-registry-config-default', key: 'httpSecret', optional: true } });
    const htpasswd = pod.initContainers.find((c: any) => c.name === 'generate-htpasswd');
    expect(htpasswd.command.join(' ')).toContain('htpasswd -Bbn');
    expect(pod.volumes.find((v: any) => v.name === 'registry-credentials').secret.secretName).toBe('serverless-registry-config-default');
  });

  test('only the storage-ownership init container runs as root, with CHOWN alone', () => {
    const rootContainers = [...pod.initContainers, ...pod.containers].filter((c: any) => c.securityContext.runAsNonRoot === false);
    expect(rootContainers.map((c: any) => c.name)).toEqual(['fix-storage-ownership']);
    expect(rootContainers[0].securityContext.capabilities).toEqual({ drop: ['ALL'], add: ['CHOWN'] });
    expect(pod.securityContext).toMatchObject({ fsGroup: 1000, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  });

  test('options set size, StorageClass, NodePort, and can drop the root init container', () => {
    const custom = synthStack({
      registry: Registry.internal({ storageSize: Size.gibibytes(50), storageClassName: 'fast-ssd', nodePort: 31000, fixStorageOwnership: false }),
    });
    expect(find(custom, 'PersistentVolumeClaim').spec).toMatchObject({ storageClassName: 'fast-ssd', resources: { requests: { storage: '50Gi' } } });
    expect(find(custom, 'Service', 'serverless-docker-registry').spec.ports[0].nodePort).toBe(31000);
    expect(envOf(find(custom, 'Job').spec.template.spec.containers[0]).PULL_REGISTRY_ADDRESS).toBe('localhost:31000');
    const initContainers = find(custom, 'Deployment', 'serverless-docker-registry').spec.template.spec.initContainers;
    expect(initContainers.map((c: any) => c.name)).toEqual(['generate-htpasswd']);
    expectValidKubernetesObjects(custom);
  });

  test.each([29999, 32768, 3.5])('throws when nodePort is %p', nodePort => {
    expect(() => Registry.internal({ nodePort })).toThrow(`'nodePort' (${nodePort}) must be a whole number from 30000 to 32767`);
  });
});

describe('registry credentials', () => {
  const objects = synthStack();
  const job = find(objects, 'Job');

  test('a Job creates them inside the cluster, with a ServiceAccount that may only touch that Secret', () => {
    const role = find(objects, 'Role', 'serverless-registry-credentials');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['serverless-registry-config-default'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    expect(find(objects, 'RoleBinding', 'serverless-registry-credentials').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'serverless-registry-credentials', namespace: 'kyma-system' },
    ]);
    expect(job.spec.template.spec.serviceAccountName).toBe('serverless-registry-credentials');
    expect(envOf(job.spec.template.spec.containers[0])).toMatchObject({
      SECRET_NAME: 'serverless-registry-config-default',
      PUSH_REGISTRY_ADDRESS: 'serverless-docker-registry.kyma-system.svc.cluster.local:5000',
      PULL_REGISTRY_ADDRESS: 'localhost:32137',
    });
  });

  test('the Job runs restricted, without a sidecar, and may reach the API server', () => {
    const template = job.spec.template;
    expect(template.spec.containers[0].securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(template.metadata.annotations['sidecar.istio.io/inject']).toBe('false');
    expect(template.metadata.labels['networking.serverless.kyma-project.io/to-apiserver']).toBe('allowed');
  });

  test('the Job\'s name follows its content, so a changed Job is a new Job', () => {
    const other = find(synthStack({ images: { credentialsJob: 'docker.io/library/node:22.13.0-alpine3.21' } }), 'Job');
    expect(other.metadata.name).not.toBe(job.metadata.name);
    expect(find(synthStack(), 'Job').metadata.name).toBe(job.metadata.name);
  });

  test('an existing Secret replaces the Job and is used everywhere', () => {
    const custom = synthStack({ registry: Registry.internal({ credentials: RegistryCredentials.fromExistingSecret('sealed-registry') }) });
    expect(custom.filter(o => o.kind === 'Job' || o.metadata.name === 'serverless-registry-credentials')).toEqual([]);
    const env = envOf(find(custom, 'Deployment', 'serverless-ctrl-mngr').spec.template.spec.containers[0]);
    expect(env.APP_KUBERNETES_BASE_DEFAULT_SECRET_NAME).toBe('sealed-registry');
    expect(env.APP_FUNCTION_IMAGE_REGISTRY_DEFAULT_DOCKER_CONFIG_SECRET_NAME).toBe('sealed-registry');
    expect(find(custom, 'ServiceAccount', 'serverless-function').imagePullSecrets).toEqual([{ name: 'sealed-registry' }]);
  });

  test('an external registry points the controller at its Secret', () => {
    const stack = new ServerlessStack(Testing.app(), 'serverless', { registry: Registry.external({ secretName: 'ext-registry' }) });
    const env = envOf(find(Testing.synth(stack), 'Deployment', 'serverless-ctrl-mngr').spec.template.spec.containers[0]);
    expect(env.APP_FUNCTION_IMAGE_REGISTRY_DEFAULT_DOCKER_CONFIG_SECRET_NAME).toBe('ext-registry');
    expect(stack.registry?.secretName).toBe('ext-registry');
  });

  test('throws when the Secret name is not a DNS-1123 subdomain', () => {
    expect(() => Registry.external({ secretName: 'My_Secret' })).toThrow('\'secretName\' (My_Secret) must be a DNS-1123 subdomain');
  });
});

describe('the credentials program, against a local HTTPS API server', () => {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048, days: 1, algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  });
  const script = find(synthStack(), 'ConfigMap', 'serverless-registry-credentials-script').data['ensure-registry-credentials.js'];
  let dir: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'regcred-'));
    fs.writeFileSync(path.join(dir, 'token'), 'test-token\n');
    fs.writeFileSync(path.join(dir, 'ca.crt'), pems.cert);
    fs.writeFileSync(path.join(dir, 'ensure.js'), script);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  interface Call { method: string; url: string; auth?: string; body?: any }

  /** Runs the program against a server that answers GET with `getStatus` and POST with `postStatus`. */
  async function run(getStatus: number, postStatus = 201): Promise<{ code: number | null; calls: Call[]; stdout: string }> {
    const calls: Call[] = [];
    const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', c => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        calls.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body: text ? JSON.parse(text) : undefined });
        res.writeHead(req.method === 'GET' ? getStatus : postStatus, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: req.method === 'GET' ? getStatus : postStatus }));
      });
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as any).port;
    try {
      return await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [path.join(dir, 'ensure.js')], {
          env: {
            PATH: process.env.PATH, KUBERNETES_SERVICE_HOST: 'localhost', KUBERNETES_SERVICE_PORT: String(port), SERVICE_ACCOUNT_DIR: dir,
            SECRET_NAME: 'serverless-registry-config-default', SECRET_NAMESPACE: 'kyma-system',
            PUSH_REGISTRY_ADDRESS: 'serverless-docker-registry.kyma-system.svc.cluster.local:5000', PULL_REGISTRY_ADDRESS: 'localhost:32137',
          },
        });
        let stdout = '';
        child.stdout.on('data', d => { stdout += d; });
        child.on('error', reject);
        child.on('close', code => resolve({ code, calls, stdout }));
      });
    } finally {
      server.close();
    }
  }

  const decode = (data: Record<string, string>) => Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

  test('creates the Secret the controller and registry read when it is missing', async () => {
    const { code, calls } = await run(404);
    expect(code).toBe(0);
    expect(calls.map(c => `${c.method} ${c.url}`)).toEqual([
      'GET /api/v1/namespaces/kyma-system/secrets/serverless-registry-config-default',
      'POST /api/v1/namespaces/kyma-system/secrets',
    ]);
    expect(calls[0].auth).toBe('Bearer test-token');
    const secret = calls[1].body;
    expect(secret.type).toBe('kubernetes.io/dockerconfigjson');
    expect(secret.metadata).toMatchObject({
      name: 'serverless-registry-config-default', namespace: 'kyma-system', labels: { 'serverless.kyma-project.io/config': 'credentials' },
    });
    const data = decode(secret.data);
    expect(data.username).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(data.password).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(data.isInternal).toBe('true');
    expect(data.pushRegAddr).toBe('serverless-docker-registry.kyma-system.svc.cluster.local:5000');
    expect(data.pullRegAddr).toBe('localhost:32137');
    const auth = Buffer.from(`${data.username}:${data.password}`).toString('base64');
    expect(JSON.parse(data['.dockerconfigjson'])).toEqual({
      auths: { 'serverless-docker-registry.kyma-system.svc.cluster.local:5000': { auth }, 'localhost:32137': { auth } },
    });
  });

  test('makes different credentials each time it creates them', async () => {
    const [a, b] = [await run(404), await run(404)];
    expect(decode(a.calls[1].body.data).password).not.toBe(decode(b.calls[1].body.data).password);
  });

  test('keeps an existing Secret untouched', async () => {
    const { code, calls, stdout } = await run(200);
    expect(code).toBe(0);
    expect(calls.map(c => c.method)).toEqual(['GET']);
    expect(stdout).toContain('exists; keeping it');
  });

  test('accepts losing a creation race', async () => {
    expect((await run(404, 409)).code).toBe(0);
  });

  test('fails with the API server\'s answer when it may not read', async () => {
    const { code, stdout } = await run(403);
    expect(code).toBe(1);
    expect(JSON.parse(stdout.trim())).toMatchObject({ msg: 'cannot read the registry credentials Secret', status: 403 });
  });

  test('fails when it may not create', async () => {
    expect((await run(404, 403)).code).toBe(1);
  });
});
