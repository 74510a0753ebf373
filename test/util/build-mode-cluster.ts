/**
 * A 1.11.1 build-mode cluster in the fake API server: what the 1.11.1 Function Controller and the
 * stack's credentials Job write beside the manifests of a 1.11.1 stack, with the names, labels,
 * owner references and finalizers of 1.11.1's sources (`components/serverless/internal/controllers`:
 * `kubernetes/*_service.go` copy the base objects' labels and annotations, `serverless/*.go` label a
 * Function's children), and objects that only look alike, which nothing may delete.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as selfsigned from 'selfsigned';
import { FakeKubeApi, KubeObject, ResourceType } from './fake-kube-api';

/** Pods and ReplicaSets, which the clean-up reads to tell the controller's old Pods from its new ones. */
export const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };
export const REPLICA_SETS: ResourceType = { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', namespaced: true };

const CHILD = 'serverless.kyma-project.io';

/** Objects the 1.11.1 controller made, by kind, with the paths of those the clean-up must delete. */
export interface BuildModeObjects {
  /** API paths of everything build mode left that the clean-up deletes. */
  readonly leftovers: readonly string[];
  /** API paths of look-alikes that must stay. */
  readonly lookAlikes: readonly string[];
}

const owner = (fn: KubeObject) => [{
  apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', name: fn.metadata!.name, uid: fn.metadata!.uid, controller: true, blockOwnerDeletion: true,
}];

/**
 * Plays the 1.11.1 controller and the credentials Job on a cluster that holds a 1.11.1 stack (in
 * `kyma-system`) and its Functions: each Function gets a source ConfigMap, a finished build Job,
 * a Deployment, a Service, an HPA when it scales, and a status with `BuildReady`; every namespace
 * but `kyma-system` gets copies of the runtime ConfigMaps, the registry Secret and the Function
 * ServiceAccount; the base ConfigMaps and Secret get the controller's finalizers. Adds look-alikes
 * that are not build mode's: a user's runtime ConfigMap copy (`managed-by: user`), an HPA synth
 * wrote (no owner), a Job and a Secret of the user's.
 */
export function playBuildMode(api: FakeKubeApi, namespaces: readonly string[]): BuildModeObjects {
  const leftovers: string[] = [];
  const lookAlikes: string[] = [];
  const put = (object: KubeObject, list?: string[]) => {
    const stored = api.put(object);
    list?.push(api.pathOf(stored));
    return stored;
  };
  const base = (path: string) => api.get(path)!;

  // The credentials Job's Secret, which the controller finalizes.
  put({
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/dockerconfigjson',
    metadata: {
      name: 'serverless-registry-config-default', namespace: 'kyma-system',
      labels: { 'serverless.kyma-project.io/config': 'credentials', 'app.kubernetes.io/managed-by': 'serverless-registry-credentials-job' },
      finalizers: ['serverless.kyma-project.io/finalizer-registry-config'],
    },
    data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64'), isInternal: Buffer.from('true').toString('base64') },
  }, leftovers);
  const secret = base('/api/v1/namespaces/kyma-system/secrets/serverless-registry-config-default');
  const dockerfiles = ['dockerfile-nodejs20', 'dockerfile-nodejs22', 'dockerfile-python312']
    .map(name => base(`/api/v1/namespaces/kyma-system/configmaps/${name}`));
  for (const dockerfile of dockerfiles) put({ ...dockerfile, metadata: { ...dockerfile.metadata, finalizers: [`${CHILD}/deletion-hook`] } });
  const serviceAccount = base('/api/v1/namespaces/kyma-system/serviceaccounts/serverless-function');

  for (const namespace of namespaces) {
    const copy = (o: KubeObject) => ({ metadata: { name: o.metadata!.name, namespace, labels: o.metadata!.labels, annotations: o.metadata!.annotations } });
    for (const dockerfile of dockerfiles) put({ apiVersion: 'v1', kind: 'ConfigMap', ...copy(dockerfile), data: dockerfile.data }, leftovers);
    put({ apiVersion: 'v1', kind: 'Secret', ...copy(secret), type: secret.type, data: secret.data }, leftovers);
    put({
      apiVersion: 'v1', kind: 'ServiceAccount', ...copy(serviceAccount),
      automountServiceAccountToken: false, imagePullSecrets: serviceAccount.imagePullSecrets,
    }, leftovers);
  }

  const functions = api.get('/apis/serverless.kyma-project.io/v1alpha2/functions')!.items as KubeObject[];
  let n = 0;
  for (const fn of functions) {
    const { name, namespace } = fn.metadata as { name: string; namespace: string };
    const suffix = (n++).toString(36).padStart(5, 'x');
    const labels = {
      ...fn.metadata!.labels,
      [`${CHILD}/function-name`]: name, [`${CHILD}/managed-by`]: 'function-controller', [`${CHILD}/uuid`]: fn.metadata!.uid!,
    };
    const meta = (objectName: string, more: object = {}) => ({ name: objectName, namespace, labels, ownerReferences: owner(fn), ...more });
    if (fn.spec.source.inline) {
      put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(`${name}-${suffix}`), data: { source: fn.spec.source.inline.source } }, leftovers);
    }
    put({
      apiVersion: 'batch/v1', kind: 'Job', metadata: meta(`${name}-build-${suffix}`),
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'executor', image: 'kaniko' }] } } },
      status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
    }, leftovers);
    put({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(`${name}-${suffix}`),
      spec: {
        replicas: 1,
        selector: { matchLabels: { [`${CHILD}/function-name`]: name, [`${CHILD}/resource`]: 'deployment' } },
        template: {
          metadata: { labels: { [`${CHILD}/function-name`]: name, [`${CHILD}/resource`]: 'deployment' } },
          spec: { serviceAccountName: 'serverless-function', containers: [{ name: 'function', image: `localhost:32137/${namespace}-${name}:abc` }] },
        },
      },
    });
    put({ apiVersion: 'v1', kind: 'Service', metadata: meta(name), spec: { ports: [{ name: 'http', port: 80 }] } });
    const scale = fn.spec.scaleConfig;
    if (scale && scale.minReplicas !== scale.maxReplicas) {
      put({
        apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta(`${name}-${suffix}`),
        spec: {
          scaleTargetRef: { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', name },
          minReplicas: scale.minReplicas, maxReplicas: scale.maxReplicas,
        },
      }, leftovers);
    }
    const condition = (type: string, reason: string) => ({ type, status: 'True', reason, message: reason, lastTransitionTime: '2026-11-01T10:00:00Z' });
    put({
      ...fn,
      status: {
        runtime: fn.spec.runtime,
        conditions: [
          condition('Running', 'DeploymentReady'), condition('BuildReady', 'JobFinished'), condition('ConfigurationReady', 'ConfigMapCreated'),
        ],
      },
    });
  }

  // Look-alikes: nothing of build mode, though they carry some of its labels or names.
  const userNamespace = namespaces[0];
  put({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: {
      name: 'dockerfile-nodejs22', namespace: 'team-own',
      labels: { 'serverless.kyma-project.io/config': 'runtime', [`${CHILD}/managed-by`]: 'user' },
    },
    data: { Dockerfile: 'FROM node' },
  }, lookAlikes);
  put({
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler',
    metadata: {
      name: 'hello-node', namespace: userNamespace,
      labels: { 'app.kubernetes.io/managed-by': 'cdk8s-kyma-serverless', [`${CHILD}/managed-by`]: 'function-controller' },
    },
    spec: { scaleTargetRef: { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', name: 'hello-node' }, maxReplicas: 3 },
  }, lookAlikes);
  put({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'nightly', namespace: userNamespace }, spec: { template: { spec: {} } } }, lookAlikes);
  put({
    apiVersion: 'v1', kind: 'Secret',
    metadata: { name: 'serverless-registry-config-default', namespace: 'team-own', labels: { [`${CHILD}/managed-by`]: 'user', 'serverless.kyma-project.io/config': 'credentials' } },
    data: {},
  }, lookAlikes);
  return { leftovers, lookAlikes };
}

/**
 * The 1.13.0 controller Deployment, rolled out (or not), with its Pods: what the clean-up waits for.
 *
 * @param oldPod leave a Pod of the 1.11.1 controller, terminating
 */
export function playController(api: FakeKubeApi, image: string, options: { rolledOut: boolean; oldPod?: boolean }): void {
  const selector = { 'app': 'serverless', 'app.kubernetes.io/name': 'serverless', 'app.kubernetes.io/instance': 'serverless' };
  const live = api.get('/apis/apps/v1/namespaces/kyma-system/deployments/serverless-ctrl-mngr');
  const template = live?.spec?.template ?? { metadata: { labels: selector }, spec: { containers: [{ name: 'manager', image }] } };
  template.spec.containers[0].image = image;
  const generation = Number(live?.metadata?.generation ?? 1) + 1;
  put(api, {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { ...(live?.metadata ?? { name: 'serverless-ctrl-mngr', namespace: 'kyma-system' }), generation },
    spec: { ...(live?.spec ?? { selector: { matchLabels: selector } }), replicas: 1, template },
    status: options.rolledOut
      ? { observedGeneration: generation, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }
      : { observedGeneration: generation, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
  });
  put(api, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'serverless-ctrl-mngr-new', namespace: 'kyma-system', labels: selector }, spec: { containers: [{ name: 'manager', image }] } });
  if (options.oldPod) {
    put(api, {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'serverless-ctrl-mngr-old', namespace: 'kyma-system', labels: selector, deletionTimestamp: '2026-11-26T10:00:00Z' },
      spec: { containers: [{ name: 'manager', image: 'europe-docker.pkg.dev/kyma-project/prod/function-controller:1.11.1' }] },
    });
  } else {
    api.remove('/api/v1/namespaces/kyma-system/pods/serverless-ctrl-mngr-old');
  }
}

function put(api: FakeKubeApi, object: KubeObject): void {
  api.put(object);
}

/** The clean-up program's answer: its exit code and its JSON log lines. */
export interface CleanupRun {
  readonly code: number | null;
  readonly lines: any[];
}

/**
 * Runs the clean-up program (the ConfigMap's `cleanup.js` and `rules.json`) against the fake API
 * server, behind an HTTPS proxy as a Job in the cluster reaches the API server, with the fake's token.
 */
export async function runCleanupProgram(api: FakeKubeApi, data: { readonly [file: string]: string }): Promise<CleanupRun> {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048, days: 1, algorithm: 'sha256', extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cleanup-run-'));
  fs.writeFileSync(path.join(dir, 'ca.crt'), pems.cert);
  fs.writeFileSync(path.join(dir, 'token'), `${api.token}\n`);
  for (const [file, text] of Object.entries(data)) fs.writeFileSync(path.join(dir, file), text);
  const proxy = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const upstream = http.request(`${api.url}${req.url}`, { method: req.method, headers: req.headers }, answer => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(dir, 'cleanup.js')], {
        env: {
          PATH: process.env.PATH, KUBERNETES_SERVICE_HOST: 'localhost', KUBERNETES_SERVICE_PORT: String((proxy.address() as AddressInfo).port),
          SERVICE_ACCOUNT_DIR: dir, RULES_FILE: path.join(dir, 'rules.json'), POLL_SECONDS: '0.2',
        },
      });
      let stdout = '';
      child.stdout.on('data', d => { stdout += d; });
      child.stderr.on('data', d => { stdout += d; });
      child.on('error', reject);
      child.on('close', code => resolve({
        code,
        lines: stdout.trim().split('\n').map(line => {
          try {
            return JSON.parse(line);
          } catch {
            return line;
          }
        }),
      }));
    });
  } finally {
    proxy.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
