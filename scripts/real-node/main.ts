/**
 * The stack and its Functions on a real node (`npm run e2e:node`; not in CI: it needs root, the
 * Kubernetes binaries of ../shared/k8s-local and ../shared/k8s-node, and a few minutes). Every
 * container runs for real: kubelet v1.28.7, containerd and runc, bridge Pod networking and
 * kube-proxy from ../shared/k8s-node, the images built here from source (build-images.sh beside
 * this file, under the exact names the manifests reference).
 *
 * 1. The images (build-images.sh), then a clean control plane and the node (../shared/k8s-node's
 *    up-cp.sh --clean and KUBE_PROXY=1 up-node.sh; --reuse keeps a running one).
 * 2. What a user's cluster has before our apply: the CRDs of Kyma's APIRule and Subscription
 *    (upstream's), the package registry Secret of each Function namespace (registry and the CAs
 *    npm must trust here), the Secrets and ConfigMaps the Functions read, Git repositories served
 *    from the node's bridge address.
 * 3. The default app of the release (the stack and functions/) with `kyma-serverless apply --wait`:
 *    every Pod of the stack must run as a real container; then the coverage app, upstream's samples
 *    and a CloudEvent echo Function, applied the same way. Each Function must reach Running and
 *    answer GET / through its Service with the body its code returns.
 * 4. A CloudEvent POST, a changed source that rolls out to a new answer, what the kubelet enforces
 *    (PodSecurity, read-only root filesystems, LimitRanges, probes without restarts, metrics), and
 *    the deletion of every Function (no Pod may remain).
 *
 * Usage: npm run e2e:node -- [--release 1.13.0|1.11.1] [--report FILE] [--skip-runtime python312]... [--reuse]
 * Exits 1 when anything failed, 2 when it could not run. Functions of a runtime given to
 * --skip-runtime are applied but not judged; the report names them.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FUNCTION_API_VERSION, FUNCTION_KIND, FUNCTION_POD_LABEL, ServerlessRelease, parseRelease } from '../../src/api';
import { parseQuantity } from '../../src/api/quantity';
import { parseManifests } from '../../src/policy/_manifest-files';
import { synthDefaultApp } from '../real-controller/apps';
import { COVERAGE_NAMESPACES, COVERAGE_REFERENCED, synthCoverage } from '../real-controller/coverage';
import { mirrorGitSources } from '../real-controller/examples';
import { GitServer } from '../real-controller/git-server';
import { Kubectl } from '../real-controller/kubectl';
import { upstreamSamples, upstreamSamples113 } from '../real-controller/samples';
import {
  Answer, CLOUD_EVENT, CLOUD_EVENT_ECHO, Expected, NodeFunctionRun, answerProblem, batches, clip, cloudEventProblem, functionCpuMillis, functionTable, limitRangeProblems, rootFilesystem,
} from './checks';
import { PackageIndex } from './package-index';
import { DOCUMENTED_DIFFERENCES, ParityRow, parity, parityTable } from './parity';

const ROOT = path.resolve(__dirname, '..', '..');
const shared = (name: string) => [path.resolve(ROOT, '..', 'shared', name), path.resolve(ROOT, '..', '..', 'shared', name)].find(d => fs.existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', name);
const K8S_NODE = process.env.K8S_NODE ?? shared('k8s-node');
const REFERENCE = process.env.UPSTREAM_REFERENCE ?? shared('reference');
const RN = process.env.RN ?? '/tmp/realnode';
const KUBECONFIG = path.join(RN, 'k8s', 'kubeconfig');
/** The node's bridge address: where Pods reach this machine (the Git server). */
const NODE_IP = '198.18.0.1';
const STACK_NAMESPACE = 'kyma-system';
const SAMPLES_NAMESPACE = 'upstream-samples';
const EXTRA_NAMESPACE = 'node-checks';
const GIT_CREDENTIALS = { username: COVERAGE_REFERENCED.gitCredentials.data.username, password: COVERAGE_REFERENCED.gitCredentials.data.password };
const REGISTRY_SECRET = 'serverless-package-registry-config';
/** Upstream's samples that read a mounted Secret: the files their code opens (upstream's tutorial names them). */
const SECRET_MOUNT_FILES: { readonly [fn: string]: readonly string[] } = { mysecretmounts: ['config.json'] };
/** Where a handler fetches from the internet, which Pods here cannot reach: what the runtime answers then. */
const UNREACHABLE = { host: 'swapi.dev', answer: { status: 500, body: 'Internal server error' } };
const reachesOut = (fn: any): boolean => Boolean(fn.spec.source?.inline?.source?.includes(`https://${UNREACHABLE.host}/`));

const args = process.argv.slice(2);
const option = (name: string) => args.includes(`--${name}`);
const optionValue = (name: string) => (args.indexOf(`--${name}`) >= 0 ? args[args.indexOf(`--${name}`) + 1] : undefined);
const optionValues = (name: string) => args.flatMap((a, i) => (a === `--${name}` && args[i + 1] ? [args[i + 1]] : []));

const started = Date.now();
function log(line: string): void {
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
}
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const seconds = (from: number) => Math.round((Date.now() - from) / 100) / 10;

const runs: NodeFunctionRun[] = [];
const parityRows: ParityRow[] = [];
const findings: string[] = [];
const notes: string[] = [];
/** Whether a python312 Pod was asked for its `python --version` yet (once a run). */
let pythonVersionSeen = false;
const kubectl = new Kubectl(KUBECONFIG);
let standIns: StandIns | undefined;

const isFunction = (o: any) => o.kind === FUNCTION_KIND && o.apiVersion === FUNCTION_API_VERSION;
const keyOf = (o: any) => `${o.metadata.namespace}/${o.metadata.name}`;
/** The objects of an app's output that are not the stack's (applied once, with the default app). */
const appObjects = (objects: readonly any[]) => objects.filter(o => o.metadata?.labels?.['kyma-project.io/module'] !== 'serverless');

function objectsOf(dir: string): any[] {
  return fs.readdirSync(dir).filter(f => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort()
    .flatMap(f => parseManifests(fs.readFileSync(path.join(dir, f), 'utf8')).flatMap(d => (d.object ? [d.object] : [])));
}

function script(file: string, scriptArgs: readonly string[] = [], env: NodeJS.ProcessEnv = {}): void {
  const result = spawnSync(file, scriptArgs, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`${file} ${scriptArgs.join(' ')} exited ${result.status}`);
}

/** `kyma-serverless apply <folder> --wait`, as a user runs it. */
function applyFolder(folder: string): { status: number; output: string } {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'kyma-serverless.js'), '--kubeconfig', KUBECONFIG, 'apply', folder, '--wait', '--timeout', '5m'], {
    encoding: 'utf8', env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
  });
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

function writeFolder(name: string, work: string, objects: readonly any[]): string {
  const dir = path.join(work, 'apply', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'objects.yaml'), objects.map(o => JSON.stringify(o)).join('\n---\n'));
  return dir;
}

async function httpAnswer(url: string, init: RequestInit = {}, timeoutMs = 3000): Promise<Answer & { headers: Headers } | undefined> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, body: await response.text(), contentType: response.headers.get('content-type') ?? undefined, headers: response.headers };
  } catch {
    return undefined;
  }
}

const serviceUrl = (fn: any) => {
  const svc = kubectl.list(['services', '-n', fn.metadata.namespace, '--field-selector', `metadata.name=${fn.metadata.name}`])[0];
  return svc?.spec?.clusterIP ? `http://${svc.spec.clusterIP}:${svc.spec.ports?.[0]?.port ?? 80}/` : undefined;
};

const podsOf = (fn: any) => kubectl.list(['pods', '-n', fn.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${fn.metadata.name}`]);
const restartsOf = (pods: readonly any[]) => pods.reduce((n, p) => n + [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])]
  .reduce((m: number, c: any) => m + (c.restartCount ?? 0), 0), 0);
const isRunning = (fn: any) => (fn?.status?.conditions ?? []).some((c: any) => c.type === 'Running' && c.status === 'True');

/** The npm registry settings Function Pods need here: the registry npm uses, and the CAs that egress TLS on this machine is signed by. */
function npmrc(): string {
  const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  const files = (process.env.NPM_CA_FILES ?? fs.readdirSync('/usr/local/share/ca-certificates').filter(f => f.endsWith('.crt')).map(f => `/usr/local/share/ca-certificates/${f}`).join(' '))
    .split(/\s+/).filter(Boolean);
  const cas = files.map(f => `ca[]="${fs.readFileSync(f, 'utf8').trim().split('\n').join('\\n')}"`);
  return [`registry=${registry}`, ...cas, ''].join('\n');
}

/** A permissive CRD for a kind nothing here serves (KEDA's ScaledObject): the objects are stored, nothing acts on them. */
function standInCrd(apiVersion: string, kind: string): any {
  const [group, version] = apiVersion.split('/');
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` },
    spec: {
      group, scope: 'Namespaced', names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [{ name: version, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

/** What a user's cluster has before the apply: the kinds of Kyma's other modules, and KEDA's as a stand-in. */
function prerequisites(objects: readonly any[]): void {
  const upstream = ['apirule-crd.yaml', 'subscription-crd.yaml'].map(f => path.join(REFERENCE, 'upstream', f)).filter(f => fs.existsSync(f));
  if (upstream.length) kubectl.run(['apply', '--server-side', ...upstream.flatMap(f => ['-f', f])]);
  const kinds = new Map<string, any>();
  for (const o of objects) if (o.apiVersion.startsWith('keda.sh/')) kinds.set(`${o.apiVersion} ${o.kind}`, standInCrd(o.apiVersion, o.kind));
  if (kinds.size) {
    kubectl.apply([...kinds.values()]);
    notes.push(`KEDA is not installed here: ${[...kinds.values()].map(c => c.spec.names.kind).join(', ')} stored under a stand-in CRD, nothing scales on them`);
  }
  for (const crd of [...kinds.values()].map(c => c.metadata.name)) kubectl.run(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crd}`]);
}

/** Namespaces with the package registry Secret, and the Secrets and ConfigMaps the Functions read, as a user creates them. */
function userObjects(functions: readonly any[], extra: readonly any[], pipConf: string): void {
  const namespaces = [...new Set(functions.map(f => f.metadata.namespace))];
  const registry = npmrc();
  const objects: any[] = namespaces.flatMap(ns => [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: REGISTRY_SECRET, namespace: ns }, stringData: { '.npmrc': registry, 'pip.conf': pipConf } },
  ]);
  const add = (kind: 'Secret' | 'ConfigMap', ns: string, name: string, keys: readonly string[]) => {
    const known = Object.values(COVERAGE_REFERENCED).find(r => r.name === name)?.data ?? {};
    const field = kind === 'Secret' ? 'stringData' : 'data';
    let object = objects.find(o => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === name);
    if (!object) objects.push(object = { apiVersion: 'v1', kind, metadata: { name, namespace: ns }, [field]: { ...known } });
    for (const key of keys) object[field][key] ??= `value of ${key}`;
  };
  for (const fn of functions) {
    const ns = fn.metadata.namespace;
    for (const e of fn.spec.env ?? []) {
      const s = e.valueFrom?.secretKeyRef;
      const c = e.valueFrom?.configMapKeyRef;
      if (s && !s.optional && /^[a-z0-9.-]+$/.test(s.name)) add('Secret', ns, s.name, [s.key]);
      if (c && !c.optional && /^[a-z0-9.-]+$/.test(c.name)) add('ConfigMap', ns, c.name, [c.key]);
    }
    for (const m of fn.spec.secretMounts ?? []) if (/^[a-z0-9.-]+$/.test(m.secretName)) add('Secret', ns, m.secretName, SECRET_MOUNT_FILES[fn.metadata.name] ?? []);
  }
  kubectl.apply([...objects, ...extra], 'e2e-node-user');
}

/** What each Function must answer to GET / (by namespace/name), where the run knows its code's answer. */
function expectations(functions: readonly any[], git: { [key: string]: string }): Map<string, Expected> {
  const expected = new Map<string, Expected>();
  for (const fn of functions) {
    const key = keyOf(fn);
    const inline: string | undefined = fn.spec.source?.inline?.source;
    if (git[key] !== undefined) expected.set(key, { status: 200, body: git[key] });
    // The coverage app's Node.js handler: `Hello from ${process.env.FUNC_NAME}` (FUNC_NAME is the Function's name).
    else if (inline?.includes('Hello from ${process.env.FUNC_NAME}')) expected.set(key, { status: 200, body: `Hello from ${fn.metadata.name}` });
    else if (inline?.includes('return "Hello from Python"')) expected.set(key, { status: 200, body: 'Hello from Python' });
    else if (inline?.includes("_.kebabCase('Hello World from Node.js Function')")) expected.set(key, { status: 200, body: 'hello-world-from-node-js-function' });
    else if (fn.metadata.name === 'hello-node' && fn.metadata.namespace === 'default-functions') expected.set(key, { status: 200, body: '{"message":"Hello, world!"}' });
    else if (fn.metadata.name === 'hello-python' && fn.metadata.namespace === 'default-functions') expected.set(key, { status: 200, body: '{"message": "Hello, world!"}' });
    else if (reachesOut(fn)) expected.set(key, UNREACHABLE.answer);
    else if (SECRET_MOUNT_FILES[fn.metadata.name]) expected.set(key, { status: 200, body: `value of ${SECRET_MOUNT_FILES[fn.metadata.name][0]}` });
    else expected.set(key, { status: 200 });
  }
  return expected;
}

/**
 * Follows Functions from the start of their apply: the first HTTP answer of each one's Service, and
 * `Running` True; then checks the answer and counts restarts.
 */
async function follow(phase: string, functions: readonly any[], since: number, expected: Map<string, Expected>, skip: ReadonlySet<string>, timeout = 300): Promise<NodeFunctionRun[]> {
  const list: NodeFunctionRun[] = functions.map(fn => {
    const git = fn.spec.source?.gitRepository;
    return {
      phase, key: keyOf(fn), runtime: fn.spec.runtime,
      source: git ? `git ${git.reference}${git.auth ? ' (auth)' : ''}` : fn.metadata.annotations?.['e2e-node/source'] ?? 'inline', result: '',
    };
  });
  const judged = functions.filter(fn => !skip.has(fn.spec.runtime));
  const deadline = since + timeout * 1000;
  const pending = new Set(judged.map(keyOf));
  const probing = new Set<string>();
  while (pending.size && Date.now() < deadline) {
    standIns?.refresh();
    const live = new Map(kubectl.list(['functions.serverless.kyma-project.io', '-A']).map(f => [keyOf(f), f]));
    await Promise.all(judged.filter(fn => pending.has(keyOf(fn))).map(async fn => {
      const run = list.find(r => r.key === keyOf(fn))!;
      if (run.running === undefined && isRunning(live.get(keyOf(fn)))) run.running = seconds(since);
      if (run.firstAnswer === undefined && !probing.has(run.key)) {
        const url = serviceUrl(fn);
        if (url && reachesOut(fn)) {
          // A handler that waits on an unreachable host answers only when its connection fails: asked
          // without holding up the others.
          probing.add(run.key);
          void httpAnswer(url, {}, 30_000).then(answer => {
            if (answer && run.firstAnswer === undefined) run.firstAnswer = seconds(since);
            probing.delete(run.key);
          });
        } else {
          const answer = url ? await httpAnswer(url, {}, 1500) : undefined;
          if (answer) run.firstAnswer = seconds(since);
        }
      }
      if (run.running !== undefined && run.firstAnswer !== undefined) pending.delete(keyOf(fn));
      // Running a minute without answering: it will not (the judgement below says why).
      if (run.running !== undefined && run.firstAnswer === undefined && seconds(since) - run.running > 60) pending.delete(keyOf(fn));
    }));
    await sleep(500);
  }
  for (const fn of functions) {
    const run = list.find(r => r.key === keyOf(fn))!;
    if (skip.has(fn.spec.runtime)) {
      run.result = `skipped: no ${fn.spec.runtime} image can be built here (--skip-runtime)`;
      continue;
    }
    const url = serviceUrl(fn);
    const answer = url ? await httpAnswer(url, {}, 10000) : undefined;
    run.restarts = restartsOf(podsOf(fn));
    if (answer) Object.assign(run, { status: answer.status, contentType: answer.contentType, body: answer.body });
    const problem = answerProblem(expected.get(keyOf(fn)) ?? { status: 200 }, answer);
    const conditions = (kubectl.list(['functions.serverless.kyma-project.io', '-n', fn.metadata.namespace, '--field-selector', `metadata.name=${fn.metadata.name}`])[0]?.status?.conditions ?? [])
      .filter((c: any) => c.status !== 'True').map((c: any) => `${c.type}=${c.status} ${c.reason}: ${clip(c.message ?? '', 120)}`);
    run.result = run.running === undefined ? `not Running after ${timeout}s: ${conditions.join('; ') || 'no status'}${problem ? `; ${problem}` : ''}`
      : problem ?? 'ok';
  }
  runs.push(...list);
  const bad = list.filter(r => r.result !== 'ok' && !r.result.startsWith('skipped'));
  log(`${phase}: ${list.filter(r => r.result === 'ok').length} of ${list.length} Functions Running and answering as their code says`
    + `${bad.length ? `; not: ${bad.map(r => `${r.key} (${r.result})`).join('; ')}` : ''}`);
  return list;
}

/** The stand-ins' namespace: what a Kyma cluster has beside Serverless, and this node has not. */
const STAND_IN_NAMESPACE = 'e2e-node-stand-ins';
const PUBLISHER_PROXY = 'eventing-publisher-proxy.kyma-system.svc.cluster.local';
const DNS_PORT = 15353;

/**
 * Stand-ins for two things a Kyma cluster gives Functions that this node lacks, without which the
 * default app's hello-node (it publishes an event per greeting) never answers: cluster DNS for
 * Service names (a second dnsmasq on the node's address, port 15353, that Pods' DNS packets are
 * redirected to; it answers `<service>.<namespace>.svc.cluster.local` from the Services and
 * forwards the rest to the node's own DNS), and Eventing's publisher proxy (a Pod that logs every
 * event it is sent and answers 204, reached by the name the controller gives the runtimes).
 */
class StandIns {
  private dnsmasq?: ChildProcess;
  private readonly hosts: string;
  private readonly rules: string[][] = ['udp', 'tcp'].map(proto => ['-t', 'nat', '-I', 'PREROUTING', '-s', '198.18.0.0/24', '-d', NODE_IP, '-p', proto, '--dport', '53',
    '-m', 'comment', '--comment', 'e2e-node cluster DNS stand-in', '-j', 'DNAT', '--to-destination', `${NODE_IP}:${DNS_PORT}`]);

  constructor(work: string) {
    this.hosts = path.join(work, 'cluster-dns.hosts');
  }

  public async start(): Promise<void> {
    kubectl.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: STAND_IN_NAMESPACE } },
      {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'publisher-proxy', namespace: STAND_IN_NAMESPACE },
        spec: {
          selector: { matchLabels: { app: 'publisher-proxy' } },
          template: {
            metadata: { labels: { app: 'publisher-proxy' } },
            spec: {
              securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
              containers: [{
                name: 'proxy', image: 'docker.io/library/node:22.12.0-alpine3.20', ports: [{ containerPort: 8080 }],
                command: ['node', '-e', "require('http').createServer((q, s) => { let b = ''; q.on('data', c => { b += c; }); q.on('end', () => { "
                  + "console.log(JSON.stringify({ method: q.method, url: q.url, type: q.headers['ce-type'] || (() => { try { return JSON.parse(b).type; } catch { return undefined; } })(), body: b })); "
                  + 's.writeHead(204); s.end(); }); }).listen(8080)'],
                readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              }],
            },
          },
        },
      },
      {
        apiVersion: 'v1', kind: 'Service', metadata: { name: 'publisher-proxy', namespace: STAND_IN_NAMESPACE },
        spec: { selector: { app: 'publisher-proxy' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    ], 'e2e-node-stand-ins');
    this.refresh();
    this.dnsmasq = spawn('/usr/sbin/dnsmasq', ['--keep-in-foreground', '--conf-file=/dev/null', `--listen-address=${NODE_IP}`, '--bind-interfaces', `--port=${DNS_PORT}`,
      // root: dnsmasq would read the names file as nobody, which the run's private work folder keeps out.
      '--user=root', '--no-resolv', '--no-hosts', `--server=${NODE_IP}#53`, '--local=/cluster.local/', `--addn-hosts=${this.hosts}`, '--pid-file=', '--log-facility=-'], { stdio: 'ignore' });
    for (const rule of this.rules) execFileSync('iptables', rule);
    kubectl.run(['-n', STAND_IN_NAMESPACE, 'rollout', 'status', 'deployment/publisher-proxy', '--timeout=120s']);
    notes.push(`stand-ins (not Serverless; what a Kyma cluster has besides): cluster DNS for Service names (dnsmasq on ${NODE_IP}:${DNS_PORT}, Pod DNS redirected to it), and Eventing's publisher proxy `
      + `(${PUBLISHER_PROXY} resolves to Service ${STAND_IN_NAMESPACE}/publisher-proxy, which logs each event and answers 204)`);
  }

  /** Writes the names of every Service (and the publisher proxy's) and tells dnsmasq to read them again. */
  public refresh(): void {
    const services = kubectl.list(['services', '-A']).filter(s => s.spec.clusterIP && s.spec.clusterIP !== 'None');
    const lines = services.map(s => `${s.spec.clusterIP} ${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local`);
    const proxy = services.find(s => s.metadata.namespace === STAND_IN_NAMESPACE && s.metadata.name === 'publisher-proxy');
    if (proxy) lines.push(`${proxy.spec.clusterIP} ${PUBLISHER_PROXY}`);
    fs.writeFileSync(this.hosts, `${lines.join('\n')}\n`);
    if (this.dnsmasq?.pid) process.kill(this.dnsmasq.pid, 'SIGHUP');
  }

  /** The events the publisher proxy stand-in was sent, by type. */
  public events(): string[] {
    return kubectl.run(['-n', STAND_IN_NAMESPACE, 'logs', 'deployment/publisher-proxy']).split('\n').filter(Boolean).map(l => {
      try {
        return String(JSON.parse(l).type);
      } catch {
        return '';
      }
    }).filter(Boolean);
  }

  public stop(): void {
    for (const rule of this.rules) spawnSync('iptables', rule.map(a => (a === '-I' ? '-D' : a)));
    this.dnsmasq?.kill();
  }
}

/** Every Pod of the stack: running (or, for Jobs, completed) as a real container, with its image. */
function stackPods(): void {
  const pods = kubectl.list(['pods', '-n', STACK_NAMESPACE]);
  for (const pod of pods) {
    const statuses = pod.status?.containerStatuses ?? [];
    const ran = statuses.every((c: any) => c.containerID?.startsWith('containerd://') && (c.state?.running || c.state?.terminated?.exitCode === 0));
    const line = `${pod.metadata.name}: ${pod.status?.phase}, ${statuses.map((c: any) => `${c.name} ${c.image} (${c.containerID?.slice(0, 25)}…, restarts ${c.restartCount})`).join(', ')}`;
    log(`stack Pod ${line}`);
    if (!ran) findings.push(`stack Pod ${line}: not a running (or completed) container`);
    else notes.push(`stack Pod ${line}`);
  }
  const owners = new Set(pods.map(p => p.metadata.ownerReferences?.[0]?.kind));
  if (!owners.has('ReplicaSet') || !owners.has('Job')) findings.push(`stack Pods: expected Pods of Deployments and of a Job, found owners ${[...owners].join(', ')}`);
}

const podSecurityChecked = new Set<string>();

/** The stack's programs' and one Function Pod's metrics endpoints. */
async function metricsChecks(): Promise<void> {
  // Metrics: the stack's programs and one Function Pod.
  for (const [what, selector, port] of [['controller', 'app.kubernetes.io/component=controller', 8080], ['webhook', 'app=serverless-webhook', 8080]] as const) {
    const pod = kubectl.list(['pods', '-n', STACK_NAMESPACE, '-l', selector]).find(p => p.status?.phase === 'Running')
      ?? kubectl.list(['pods', '-n', STACK_NAMESPACE]).find(p => p.status?.phase === 'Running' && p.metadata.name.includes(what === 'controller' ? 'ctrl-mngr' : 'webhook'));
    const answer = pod ? await httpAnswer(`http://${pod.status.podIP}:${port}/metrics`) : undefined;
    const series = answer?.body.split('\n').filter(l => l && !l.startsWith('#')).length ?? 0;
    if (answer?.status === 200 && series) notes.push(`metrics: the ${what} (${pod.metadata.name}) answers /metrics on :${port} with ${series} series`);
    else findings.push(`metrics: the ${what} ${pod ? `(${pod.metadata.name})` : '(no Pod)'} did not answer /metrics on :${port}: ${answer ? `HTTP ${answer.status}` : 'no answer'}`);
  }
  const fnPod = kubectl.list(['pods', '-A', '-l', FUNCTION_POD_LABEL]).find(p => p.status?.phase === 'Running');
  const fnMetrics = fnPod ? await httpAnswer(`http://${fnPod.status.podIP}:8080/metrics`) : undefined;
  if (fnMetrics?.status === 200 && /^# (HELP|TYPE)/m.test(fnMetrics.body)) notes.push(`metrics: Function Pod ${fnPod.metadata.namespace}/${fnPod.metadata.name} answers /metrics on :8080 (${fnMetrics.body.split('\n').filter(l => l && !l.startsWith('#')).length} series)`);
  else if (fnPod) findings.push(`metrics: Function Pod ${fnPod.metadata.name} did not answer /metrics on :8080: ${fnMetrics ? `HTTP ${fnMetrics.status}` : 'no answer'}`);
}

/** PodSecurity, read-only roots, LimitRanges, probes and restarts: what the kubelet and the API server enforced. */
async function kubeletChecks(namespaces: readonly string[]): Promise<void> {
  for (const ns of [STACK_NAMESPACE, ...namespaces]) {
    const labels = kubectl.json(['get', 'namespace', ns]).metadata.labels ?? {};
    const level = labels['pod-security.kubernetes.io/enforce'];
    const pods = kubectl.list(['pods', '-n', ns]);
    if (podSecurityChecked.has(ns)) {
      // checked once per namespace
    } else if (!level) {
      podSecurityChecked.add(ns);
      notes.push(`PodSecurity: namespace ${ns} claims no enforce level`);
    } else {
      // The claim holds only when the API server refuses what the level forbids.
      const probe = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'e2e-node-privileged-probe', namespace: ns }, spec: { containers: [{ name: 'c', image: 'localhost/busybox:1.35', securityContext: { privileged: true } }] } };
      let refused = '';
      try {
        kubectl.run(['create', '--dry-run=server', '-f', '-'], JSON.stringify(probe));
      } catch (e) {
        refused = (e as Error).message;
      }
      podSecurityChecked.add(ns);
      if (/violates PodSecurity/.test(refused)) notes.push(`PodSecurity ${level} enforced in ${ns}: ${pods.length} Pods admitted and running, a privileged Pod refused ("${clip(refused.replace(/^.*?Error from server \(Forbidden\): /s, ''), 90)}")`);
      else findings.push(`PodSecurity: namespace ${ns} claims enforce=${level}, but a privileged Pod was not refused: ${clip(refused || 'created', 200)}`);
    }
    const limitRanges = kubectl.list(['limitranges', '-n', ns]);
    const items = limitRanges.flatMap(l => l.spec.limits ?? []);
    let containers = 0;
    for (const pod of pods.filter(p => p.status?.phase === 'Running')) {
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
        containers++;
        for (const p of limitRangeProblems(`${ns}/${pod.metadata.name}/${c.name}`, c.resources ?? {}, items)) findings.push(`LimitRange: ${p}`);
        const status = [...(pod.status.containerStatuses ?? []), ...(pod.status.initContainerStatuses ?? [])].find((s: any) => s.name === c.name);
        const id = status?.containerID?.replace('containerd://', '');
        if (!id) continue;
        let spec: any;
        try {
          spec = JSON.parse(execFileSync('ctr', ['-n', 'k8s.io', 'containers', 'info', id], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })).Spec;
        } catch {
          continue;
        }
        const root = rootFilesystem(spec);
        const claimed = c.securityContext?.readOnlyRootFilesystem === true;
        if (claimed && !root.readonly) findings.push(`read-only root: ${ns}/${pod.metadata.name}/${c.name} claims readOnlyRootFilesystem, runc got a writable root`);
        if (claimed && root.readonly && status.state?.running && c.name !== 'manager') {
          // Where the image has a shell: a write to / must fail, a write to a declared volume must not.
          const write = spawnSync('kubectl', [`--kubeconfig=${KUBECONFIG}`, '-n', ns, 'exec', pod.metadata.name, '-c', c.name, '--', 'sh', '-c', 'echo x > /e2e-node-probe'], { encoding: 'utf8' });
          if (write.status === 0) findings.push(`read-only root: writing /e2e-node-probe in ${ns}/${pod.metadata.name}/${c.name} succeeded`);
          else if (/Read-only file system/.test(write.stderr)) notes.push(`read-only root: ${ns}/${pod.metadata.name}/${c.name}: writing / fails with "Read-only file system"; writable: ${root.writable.join(', ') || 'nothing'}`);
        } else if (claimed && root.readonly) {
          notes.push(`read-only root: ${ns}/${pod.metadata.name}/${c.name} runs with runc's root.readonly true (not running now, or no shell in its image, to try a write); writable: ${root.writable.join(', ') || 'nothing'}`);
        }
      }
      const python = pod.spec.containers.find((c: any) => /function-runtime-python312/.test(c.image));
      if (python && !pythonVersionSeen) {
        // The interpreter the Pod really runs, whatever the image was built from.
        const version = spawnSync('kubectl', [`--kubeconfig=${KUBECONFIG}`, '-n', ns, 'exec', pod.metadata.name, '-c', python.name, '--', 'python', '--version'], { encoding: 'utf8' });
        if (version.status === 0) {
          pythonVersionSeen = true;
          notes.push(`interpreter: \`python --version\` in ${ns}/${pod.metadata.name}/${python.name} (${python.image}) prints "${(version.stdout + version.stderr).trim()}"`);
        }
      }
      const ready = (pod.status.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
      const restarts = restartsOf([pod]);
      if (!ready || restarts) findings.push(`probes: ${ns}/${pod.metadata.name} Ready=${ready}, ${restarts} restarts`);
    }
    if (limitRanges.length) notes.push(`LimitRange ${limitRanges.map(l => l.metadata.name).join(', ')} in ${ns}: ${containers} containers of Running Pods checked against it`);
  }
  notes.push('not shown on this node: NetworkPolicies (stored; the bridge CNI plugin does not enforce them), Istio (no sidecars, no mTLS, no VirtualService/APIRule traffic), real cluster DNS (the run\'s stand-in answers Service names; the trace collector\'s name has no Service), Eventing (a stand-in publisher proxy only logs events), KEDA');
}

/** The node's allocatable CPU less what its Pods (not finished) request, in millicores. */
function freeCpuMillis(): number {
  const node = kubectl.json(['get', 'node', 'realnode']);
  const allocatable = (parseQuantity(node.status.allocatable.cpu) ?? 0) * 1000;
  const requested = kubectl.list(['pods', '-A']).filter(p => !['Succeeded', 'Failed'].includes(p.status?.phase))
    .flatMap(p => p.spec.containers).reduce((n, c) => n + (parseQuantity(c.resources?.requests?.cpu ?? '0') ?? 0) * 1000, 0);
  return Math.floor(allocatable - requested);
}

/** Deletes Functions and waits until no Pod of theirs remains. */
async function deleteFunctions(phase: string, functions: readonly any[]): Promise<void> {
  const since = Date.now();
  for (const fn of functions) kubectl.run(['-n', fn.metadata.namespace, 'delete', 'function', fn.metadata.name, '--ignore-not-found', '--wait=false']);
  let left: string[] = [];
  while (Date.now() - since < 180_000) {
    left = functions.flatMap(fn => podsOf(fn).map(p => `${keyOf(p)}`));
    if (!left.length) break;
    await sleep(1000);
  }
  if (left.length) findings.push(`deletion ${phase}: ${left.length} Pods left 180 s after deleting ${functions.length} Functions: ${left.slice(0, 5).join(', ')}`);
  else notes.push(`deletion ${phase}: ${functions.length} Functions deleted, no Pod of theirs left after ${seconds(since)}s`);
  log(`${phase} deletion: ${left.length ? `${left.length} Pods left` : `no Pod left after ${seconds(since)}s`}`);
}

/**
 * Release 1.11.1 as far as it is real here: the stack runs (controller, webhook, registry, the
 * credentials Job), the controller creates each Function's ConfigMap and build Job; the build needs
 * upstream's kaniko executor and function-build-init, which cannot be built on this machine (Go
 * programs with module dependencies; the Go module proxy is unreachable), so their Pods wait for
 * those images and the Functions are recorded as not run, with the image each waits for.
 */
async function buildModeRun(functions: readonly any[], since: number): Promise<void> {
  const registry = kubectl.list(['pods', '-n', STACK_NAMESPACE]).find(p => p.metadata.name.startsWith('serverless-docker-registry'));
  const catalog = registry ? await httpAnswer(`http://${registry.status.podIP}:5000/v2/`) : undefined;
  if (catalog?.status === 401) notes.push(`registry (stand-in image: Debian's distribution 2.8.2 under the name registry:3.0.0) answers /v2/ with 401: it asks for the htpasswd credentials the init container wrote`);
  else findings.push(`registry: /v2/ answered ${catalog ? `HTTP ${catalog.status}` : 'nothing'}`);
  const deadline = Date.now() + 120_000;
  let waiting: any[] = [];
  while (Date.now() < deadline) {
    waiting = functions.flatMap(fn => kubectl.list(['pods', '-n', fn.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${fn.metadata.name}`]))
      .filter(p => [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].some((c: any) => /ErrImagePull|ImagePullBackOff/.test(c.state?.waiting?.reason ?? '')));
    if (waiting.length >= functions.length) break;
    await sleep(2000);
  }
  for (const fn of functions) {
    const pod = waiting.find(p => p.metadata.namespace === fn.metadata.namespace && p.metadata.labels?.[FUNCTION_POD_LABEL] === fn.metadata.name);
    const images = pod ? [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c: any) => c.image) : [];
    const jobs = kubectl.list(['jobs', '-n', fn.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${fn.metadata.name}`]);
    runs.push({
      phase: '1 default app (1.11.1)', key: keyOf(fn), runtime: fn.spec.runtime, source: 'inline',
      result: pod ? `skipped: its build Job ${jobs[0]?.metadata.name ?? ''} waits for ${images.join(', ')}, which cannot be built here (kaniko and function-build-init are Go programs with module dependencies; no Go module proxy)`
        : `no build Pod waiting for an image after ${seconds(since)}s: ${kubectl.list(['pods', '-n', fn.metadata.namespace]).map(p => `${p.metadata.name} ${p.status?.phase}`).join(', ') || 'no Pod'}`,
    });
  }
  await kubeletChecks([]);
  await metricsChecks();
  await deleteFunctions('1.11.1', functions);
}

async function main(): Promise<void> {
  const release = parseRelease(optionValue('release') ?? ServerlessRelease.V1_13_0, '--release');
  const skip = new Set(optionValues('skip-runtime'));
  if (process.getuid?.() !== 0) throw new Error('needs root (containerd, kubelet, iptables)');
  const is111 = release === ServerlessRelease.V1_11_1;
  const serverless = process.env.SERVERLESS_GIT_DIR ?? '/work/.mirror/kyma-project+serverless/repo';
  if (!fs.existsSync(serverless)) throw new Error(`no git directory of kyma-project/serverless at ${serverless}: set SERVERLESS_GIT_DIR`);

  log('images: scripts/real-node/build-images.sh (reuses what exists)');
  const images = ['base', 'nodejs20', 'nodejs22', 'nodejs24', ...(skip.has('python312') || is111 ? [] : ['python312']), 'webhook', 'init', 'nodejs22@1.11.1',
    ...(is111 ? ['controller111', 'registryinit', 'registry'] : [])];
  script(path.join(__dirname, 'build-images.sh'), images, { SERVERLESS_GIT_DIR: serverless, K8S_NODE, RN });
  if (!is111) {
    notes.push('stand-in image function-buildless-init:1.13.0 (scripts/real-node/build-images.sh): upstream\'s gitcloner is a Go program that cannot be built here; '
      + 'this machine\'s git does the same clone and checkout, with the same command, env and user');
  }
  if (images.includes('python312')) {
    // build-images.sh says which interpreter the archive holds: 3.12 built from source, or the 3.13 stand-in
    const interpreter = fs.readFileSync(path.join(RN, 'images', 'out', 'function-runtime-python312-1.13.0.interpreter'), 'utf8').trim();
    const packages = 'requirements.txt\'s packages come from Debian at the versions it has, cloudevents 1.12.1 and wsgi-request-logger 0.4.6 from their sources';
    notes.push(interpreter === '3.12'
      ? 'function-runtime-python312:1.13.0 (scripts/real-node/build-images.sh): upstream\'s 1.13.0 server.py and lib/ on CPython 3.12.10 built here from its release source '
        + '(upstream\'s base image has 3.12.13; PyPI and python.org are unreachable); ' + packages + ', protobuf and wrapt in their pure-Python implementations (Debian compiled them for 3.13)'
      : 'stand-in interpreter in function-runtime-python312:1.13.0 (scripts/real-node/build-images.sh): upstream\'s 1.13.0 server.py and lib/ run on Debian 13\'s CPython 3.13, '
        + 'not 3.12 (no CPython 3.12 git directory was given: PYTHON312_GIT_DIR); ' + packages);
  }
  if (!option('reuse')) {
    log('a clean control plane and the node (../shared/k8s-node)');
    spawnSync(path.join(K8S_NODE, 'down-node.sh'), [], { stdio: 'inherit' });
    script(path.join(K8S_NODE, 'up-cp.sh'), ['--clean']);
    script(path.join(K8S_NODE, 'up-node.sh'), [], { KUBE_PROXY: '1' });
  }
  const node = kubectl.json(['get', 'node', 'realnode']);
  if (!(node.status.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')) throw new Error('node realnode is not Ready');

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-node-'));
  const git = await GitServer.start(path.join(work, 'git'), GIT_CREDENTIALS, NODE_IP);
  const pypi = skip.has('python312') || is111 ? undefined : await PackageIndex.start(path.join(RN, 'images', 'pypi'), NODE_IP);
  /** The Functions whose handler fetches from the unreachable host. */
  const outward = new Set<string>();
  try {
    const publicRepo = git.create('functions.git', {
      'node/handler.js': 'exports.main = () => "Hello from Git";\n',
      'node/package.json': '{ "name": "git-node", "dependencies": {} }\n',
      'python/handler.py': 'def main(event, context):\n    return "Hello from Git"\n',
      // The 1.13.0 Pod runs `pip install -r requirements.txt` on the Git folder as it is: without the
      // file, pip fails and the container restarts (seen on this node); a Python repository needs one.
      'python/requirements.txt': '',
    });
    publicRepo.tag('v1');
    const commit = publicRepo.commit({ 'node/handler.js': 'exports.main = () => "Hello from a commit";\n' }, 'a commit to pin');
    const privateRepo = git.create('private/app.git', { 'handler.js': 'exports.main = () => "private";\n' });

    // 1.11.1, the default release: dist/ itself, as users apply it; 1.13.0: the same app synthesized with that release.
    const defaultDir = is111 ? path.join(ROOT, 'dist') : path.join(work, 'default-app');
    if (!is111) synthDefaultApp(defaultDir, release);
    const defaultApp = objectsOf(defaultDir);
    synthCoverage(path.join(work, 'coverage'), path.join(work, 'coverage-folders'), { publicUrl: publicRepo.url, privateUrl: privateRepo.url, commit }, { release });
    const coverage = appObjects(objectsOf(path.join(work, 'coverage')));
    const samples = [...upstreamSamples113(REFERENCE), ...upstreamSamples(REFERENCE)];
    const sampleSecrets = mirrorGitSources(samples, git, GIT_CREDENTIALS);
    const echo = {
      apiVersion: FUNCTION_API_VERSION, kind: FUNCTION_KIND, metadata: { name: 'cloudevent-echo', namespace: EXTRA_NAMESPACE },
      // XS: the run's own Functions leave the node's CPU to the coverage app's.
      spec: { runtime: 'nodejs22', source: { inline: { source: CLOUD_EVENT_ECHO } }, resourceConfiguration: { function: { profile: 'XS' } } },
    };
    const gitAnswers: { [key: string]: string } = {
      [`${COVERAGE_NAMESPACES[0]}/git-branch`]: 'Hello from a commit',
      [`${COVERAGE_NAMESPACES[0]}/git-commit`]: 'Hello from a commit',
      [`${COVERAGE_NAMESPACES[0]}/git-private`]: 'private',
      [`${COVERAGE_NAMESPACES[0]}/git-tag-python`]: 'Hello from Git',
      ...Object.fromEntries(samples.filter(s => s.spec.source?.gitRepository).map(s => [keyOf(s), 'Hello from Git'])),
    };
    // What a handler that throws, and one that requires a package it does not declare, get: for the developer loop's parity.
    const failing = [
      ['throws', 'exports.main = () => { throw new Error("boom"); };\n'],
      ['missing-dependency', 'const _ = require("lodash");\nexports.main = () => _.VERSION;\n'],
      ['throws-python', 'def main(event, context):\n    raise Exception("boom")\n', 'python312'],
    ].filter(([, , runtime]) => !skip.has(runtime ?? 'nodejs22'))
      .map(([name, source, runtime]) => ({ apiVersion: FUNCTION_API_VERSION, kind: FUNCTION_KIND, metadata: { name, namespace: EXTRA_NAMESPACE }, spec: { runtime: runtime ?? 'nodejs22', source: { inline: { source } }, resourceConfiguration: { function: { profile: 'XS' } } } }));
    const allFunctions = [...defaultApp.filter(isFunction), ...coverage.filter(isFunction), ...samples, echo, ...failing];
    const expected = expectations(allFunctions, gitAnswers);
    // The runtime's answers to an error in the handler, and to a handler whose module does not load (server.mjs); the parity phase compares their bodies.
    const answers: { [name: string]: Expected } = {
      'throws': { status: 500 },
      'missing-dependency': { status: 500, body: 'User function not loaded' },
      // server.py's handler of bottle's 500 page.
      'throws-python': { status: 500, body: 'Internal server error' },
    };
    for (const fn of failing) expected.set(keyOf(fn), answers[fn.metadata.name]);

    prerequisites(is111 ? defaultApp : [...defaultApp, ...coverage]);
    if (is111) {
      // The registry Deployment's PersistentVolumeClaim (20Gi, ReadWriteOnce): a cluster's storage class
      // provides the volume; this node has no provisioner, so a hostPath volume stands in.
      const dir = path.join(RN, 'pv', 'registry');
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true, mode: 0o777 });
      fs.chmodSync(dir, 0o777);
      kubectl.apply([{
        apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'e2e-node-registry' },
        spec: { capacity: { storage: '20Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: dir, type: 'Directory' } },
      }], 'e2e-node-user');
      notes.push(`storage: a hostPath PersistentVolume (${dir}) for the registry's claim, as a cluster's storage class would provide one`);
    }
    standIns = new StandIns(work);
    await standIns.start();
    userObjects(allFunctions, [...sampleSecrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: COVERAGE_REFERENCED.gitCredentials.name, namespace: COVERAGE_NAMESPACES[0] }, stringData: GIT_CREDENTIALS }],
      pypi?.pipConf() ?? '');
    if (pypi) {
      notes.push(`PyPI is unreachable here: the python312 Pods' pip reads a package index served from the node (${pypi.url}; scripts/real-node/package-index.py, wheels built by build-images.sh), `
        + `named by the pip.conf key of Secret ${REGISTRY_SECRET}, upstream's hook for a private index`);
    }
    for (const fn of allFunctions.filter(reachesOut)) outward.add(keyOf(fn));

    // 1. The stack and the default app, as users apply them.
    log(`kyma-serverless apply --wait of the default app (release ${release}: the stack and functions/)`);
    let since = Date.now();
    const stackApply = applyFolder(defaultDir);
    log(`apply exited ${stackApply.status} after ${seconds(since)}s: ${stackApply.output.trim().split('\n').filter(l => /^Applied|ready .*Deployment|ready .*Job/.test(l.trim())).map(l => l.trim()).join(' | ')}`);
    if (stackApply.status !== 0) throw new Error(`kyma-serverless apply of the default app failed:\n${stackApply.output}`);
    notes.push(`apply of the default app (stack + functions/): ${seconds(since)}s, ${stackApply.output.trim().split('\n').find(l => /^Applied/.test(l)) ?? ''}`);
    stackPods();
    if (is111) await buildModeRun(defaultApp.filter(isFunction), since);
    else {
      await follow('1 default app', defaultApp.filter(isFunction), since, expected, skip);
      await kubeletChecks([...new Set(defaultApp.filter(isFunction).map(f => f.metadata.namespace))]);
      const published = standIns.events();
      notes.push(`events the publisher proxy stand-in was sent: ${published.length ? [...new Set(published)].map(t => `${t} ×${published.filter(p => p === t).length}`).join(', ') : 'none'}`);

      // 2. The coverage app, upstream's samples and the CloudEvent echo: first what is not a Function,
      // then the Functions in groups the node can schedule (2 CPUs: the default preset L requests 400m a Pod).
      const second = [...coverage, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SAMPLES_NAMESPACE } }, ...samples, echo, ...failing];
      const setup = applyFolder(writeFolder('coverage-setup', work, second.filter(o => !isFunction(o))));
      if (setup.status !== 0) throw new Error(`kyma-serverless apply of the coverage app's namespaces failed:\n${setup.output}`);
      const config = parseYaml(kubectl.json(['-n', STACK_NAMESPACE, 'get', 'configmap', 'serverless-config']).data['function-config.yaml']);
      const presetConfig = config.resourcesConfiguration.function.resources;
      const cost = (fn: any) => functionCpuMillis(fn.spec, presetConfig.presets, presetConfig.defaultPreset);
      const budget = freeCpuMillis();
      const candidates = second.filter(isFunction);
      for (const fn of candidates.filter(f => skip.has(f.spec.runtime))) {
        runs.push({ phase: '2', key: keyOf(fn), runtime: fn.spec.runtime, source: fn.spec.source?.gitRepository ? 'git' : 'inline', result: `skipped: no ${fn.spec.runtime} image can be built here, not applied (--skip-runtime)` });
      }
      const last = candidates.filter(f => f.metadata.namespace === EXTRA_NAMESPACE || keyOf(f) === `${COVERAGE_NAMESPACES[0]}/presets`);
      const groups = batches(candidates.filter(f => !skip.has(f.spec.runtime) && !last.includes(f)), cost, budget);
      groups.push(last);
      log(`2: ${candidates.length} Functions, ${budget}m CPU free on the node: ${groups.length} groups, each applied, checked and deleted before the next (the last kept for 3 and 4)`);
      notes.push(`the node has ${budget}m CPU free for Functions after the stack and the default app: the ${candidates.length} Functions of the coverage app, the samples and the echo ran in ${groups.length} groups (each applied with kyma-serverless apply --wait, checked, deleted)`);
      for (const [i, group] of groups.entries()) {
        const phase = `2.${i + 1}`;
        since = Date.now();
        const result = applyFolder(writeFolder(`group-${i + 1}`, work, group));
        const refusedKeys = new Set([...result.output.matchAll(/^\s*failed\s+Function (\S+):/gm)].map(m => m[1]));
        for (const key of refusedKeys) {
          const lines = result.output.split('\n');
          const at = lines.findIndex(l => l.includes(`Function ${key}:`));
          // The webhook's message goes on over the indented lines below.
          const why = at < 0 ? '' : [lines[at], ...lines.slice(at + 1, at + 4).filter(l => /^\s+[-|]/.test(l))].join(' ');
          notes.push(`refused at admission: ${key}: ${clip(why.replace(/^.*?(denied the request|is invalid): /, ''), 200)}`);
        }
        const admitted = group.filter(f => !refusedKeys.has(keyOf(f)));
        if (refusedKeys.size) {
          // kyma-serverless apply stops at a refused object: apply the rest.
          since = Date.now();
          const again = applyFolder(writeFolder(`group-${i + 1}-admitted`, work, admitted));
          if (again.status !== 0) throw new Error(`kyma-serverless apply of group ${i + 1} failed:\n${again.output}`);
        } else if (result.status !== 0) {
          throw new Error(`kyma-serverless apply of group ${i + 1} failed:\n${result.output}`);
        }
        log(`${phase}: applied ${admitted.map(keyOf).join(', ')}${refusedKeys.size ? `; refused: ${[...refusedKeys].join(', ')}` : ''}`);
        await follow(phase, admitted, since, expected, skip);
        await kubeletChecks([...new Set(admitted.map(f => f.metadata.namespace))]);
        if (!option('skip-parity')) {
          // Inline sources and folders read at synth: a Git source runs locally from a clone (`run` says so).
          const local = admitted.filter(f => [...COVERAGE_NAMESPACES, EXTRA_NAMESPACE].includes(f.metadata.namespace) && f.spec.source?.inline);
          parityRows.push(...await parity(local, serviceUrl, KUBECONFIG, release, log));
        }
        if (group !== last && admitted.length) await deleteFunctions(phase, admitted);
      }

      // 3. A CloudEvent POST, delivered by the runtime to the handler.
      const echoUrl = serviceUrl(echo);
      const ce = echoUrl ? await httpAnswer(echoUrl, { method: 'POST', headers: CLOUD_EVENT.headers, body: JSON.stringify(CLOUD_EVENT.data) }) : undefined;
      const ceProblem = cloudEventProblem(ce);
      if (ceProblem) findings.push(`CloudEvent: ${ceProblem}`);
      else notes.push(`CloudEvent (binary mode, ce-type ${CLOUD_EVENT.headers['ce-type']}) POSTed to Service ${echo.metadata.name}: the handler got it as ${clip(ce!.body, 160)}`);
      log(`3 CloudEvent: ${ceProblem ?? `ok, ${clip(ce!.body, 120)}`}`);

      // 4. A changed source rolls out to a new answer.
      const presets = structuredClone(last.find(f => f.metadata.name === 'presets'));
      presets.spec.source.inline.source = presets.spec.source.inline.source.replace('Hello from', 'Hello again from');
      since = Date.now();
      const changed = applyFolder(writeFolder('changed-source', work, [presets]));
      if (changed.status !== 0) findings.push(`changed source: apply failed: ${clip(changed.output, 300)}`);
      let rolled: number | undefined;
      while (Date.now() - since < 180_000) {
        const url = serviceUrl(presets);
        const answers = url ? await Promise.all([0, 1, 2, 3, 4, 5].map(() => httpAnswer(url, {}, 2000))) : [];
        const pods = podsOf(presets).filter(p => !p.metadata.deletionTimestamp);
        if (answers.every(a => a?.body === 'Hello again from presets') && pods.length === presets.spec.replicas) {
          rolled = seconds(since);
          break;
        }
        await sleep(500);
      }
      if (rolled === undefined) findings.push('changed source: coverage-ts/presets did not answer "Hello again from presets" from every Pod within 180 s');
      else notes.push(`changed source: coverage-ts/presets answered "Hello again from presets" on 6 of 6 requests through its Service, ${presets.spec.replicas} Pods, ${rolled}s after the apply began`);
      log(`4 changed source: ${rolled === undefined ? 'no new answer' : `new answer after ${rolled}s`}`);

      // 5. The stack's metrics, and deletion of the rest: no Pod may remain.
      await metricsChecks();
      await deleteFunctions('6', [...defaultApp.filter(isFunction), ...last]);
    }
  } finally {
    await git.stop();
    if (pypi) notes.push(`the package index served ${pypi.downloaded().length} wheel downloads: ${[...new Set(pypi.downloaded())].sort().join(', ') || 'none'}`);
    await pypi?.stop();
    standIns?.stop();
  }

  for (const row of parityRows.filter(r => r.differences.length && !DOCUMENTED_DIFFERENCES[r.key.split('/').pop()!])) {
    findings.push(`developer loop: ${row.key} ${row.request} answers differently locally: ${row.differences.join('; ')}`);
  }
  for (const run of runs.filter(r => outward.has(r.key) && r.status !== undefined)) {
    notes.push(`${run.key}: its handler GETs https://${UNREACHABLE.host}/, which Pods here cannot reach (no internet egress): the answer expected is the runtime's ${UNREACHABLE.answer.status} "${UNREACHABLE.answer.body}", once the connection fails`);
  }
  const bad = runs.filter(r => r.result !== 'ok' && !r.result.startsWith('skipped'));
  const text = [
    `# The stack and its Functions on a real node, release ${release} (${new Date().toISOString().slice(0, 10)})`,
    '',
    ...functionTable(runs),
    '',
    `- Functions: ${runs.length} runs, ${runs.filter(r => r.result === 'ok').length} Running and answering as their code says, ${runs.filter(r => r.result.startsWith('skipped')).length} skipped, ${bad.length} failed.`,
    ...(skip.size ? [`- NOT PROVEN here: the Functions of ${[...skip].join(', ')} (--skip-runtime: no image of that runtime can be built on this machine; see scripts/real-node/build-images.sh).`] : []),
    ...(parityRows.length ? ['', '## The developer loop: `kyma-serverless run --from-cluster` and `invoke` beside the Pod', '', ...parityTable(parityRows), ''] : []),
    ...findings.map(f => `- FINDING: ${f}`),
    ...[...new Set(notes)].map(n => `- ${n}`),
    '',
    `Total: ${seconds(started)} s.`,
  ].join('\n');
  process.stdout.write(`\n${text}\n`);
  if (optionValue('report')) fs.writeFileSync(optionValue('report')!, `${text}\n`);
  if (bad.length || findings.length) process.exitCode = 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: removing the stand-ins' DNS redirect and dnsmasq`);
    standIns?.stop();
    process.exit(130);
  });
}

main().catch(e => {
  process.stderr.write(`e2e:node: ${(e as Error).message}\n`);
  process.exitCode = 2;
});

