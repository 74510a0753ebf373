/**
 * The stack and its Functions under upstream's own Function Controller 1.11.1, on a real API server
 * (`npm run e2e:controller`; not in CI: it needs ../shared/k8s-local's kube-apiserver built from
 * source, root, and a few minutes). What runs, and as what:
 *
 * - kube-apiserver and kube-controller-manager v1.28.7 (`$K8S_BIN/up.sh --clean`), and
 *   `fakelet.mjs` in place of the scheduler and kubelets: it binds the Pods of the namespaces in
 *   use, reports Job Pods succeeded and the others ready, so Jobs complete and Deployments roll out.
 * - `dist/0000-serverless.k8s.yaml` applied with `kyma-serverless apply --wait`.
 * - The stack's programs run on this machine as their Pods specify them (see pod.ts): the registry
 *   credentials Job's program, the controller (upstream's 1.11.1 built from source, as its image runs
 *   it: uid 1000, read-only root, `/appconfig` from the ConfigMap, the Deployment's env) and our
 *   webhook (the program of the `serverless-webhook-server` ConfigMap, self-managed certificates),
 *   each with its own ServiceAccount's token. The webhook configurations are pointed at it by URL.
 * - Git sources served from this machine by `git http-backend` (see git-server.ts), one repository
 *   asking for credentials.
 *
 * Then, phase by phase: the default app's Functions, the coverage app (every option; coverage.ts)
 * and upstream's sample Functions, all through the webhook; day two (a new source, a new env, a new
 * Git reference: each must roll out); every TypeScript example of the docs, one at a time; a
 * Function stored without the webhook under upstream's own CRD (the update loop, named by `status`
 * and `validate`, then ended by our CRD's default); and the deletion of every Function (nothing of
 * theirs may remain). Each Function must reach Running with at most 3 Deployment updates. The run
 * prints a report, and writes it to `--report FILE` as Markdown.
 *
 * Usage: npm run e2e:controller -- [--skip-examples] [--keep] [--report FILE]
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FUNCTION_API_VERSION, FUNCTION_KIND, FUNCTION_POD_LABEL, isDns1123Subdomain } from '../../src/api';
import { parseManifests } from '../../src/policy/_manifest-files';
import { errorLines, updateCounts } from './controller-log';
import { COVERAGE_NAMESPACES, COVERAGE_REFERENCED, synthCoverage } from './coverage';
import { Example, mirrorGitSources, synthExamples } from './examples';
import { GitServer } from './git-server';
import { Kubectl } from './kubectl';
import { PodProcess, podRunnerProblems } from './pod';

const ROOT = path.resolve(__dirname, '..', '..');
const K8S_BIN = process.env.K8S_BIN ?? path.join(process.env.TMPDIR ?? '/tmp', 'k8s-bin');
const K8S_LOCAL = process.env.K8S_LOCAL ?? path.resolve(ROOT, '..', 'shared', 'k8s-local');
const REFERENCE = process.env.UPSTREAM_REFERENCE ?? path.resolve(ROOT, '..', 'shared', 'reference');
const KUBECONFIG = path.join(K8S_BIN, 'kubeconfig');
const API_SERVER = { host: '127.0.0.1', port: 6443, caFile: path.join(K8S_BIN, 'pki', 'ca.crt') };
const WEBHOOK_HOST = 'serverless-webhook.kyma-system.svc';
const WEBHOOK_PORT = 8443;
const GIT_CREDENTIALS = { username: 'runner', password: 'pa55word' };
const MAX_DEPLOYMENT_UPDATES = 3;
const WEBHOOK_CONFIGURATIONS = [
  ['mutatingwebhookconfiguration', 'defaulting.webhook.serverless.kyma-project.io'],
  ['validatingwebhookconfiguration', 'validation.webhook.serverless.kyma-project.io'],
] as const;

const args = process.argv.slice(2);
const option = (name: string) => args.includes(`--${name}`);
const optionValue = (name: string) => (args.indexOf(`--${name}`) >= 0 ? args[args.indexOf(`--${name}`) + 1] : undefined);

const started = Date.now();
function log(line: string): void {
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

async function until<T>(what: string, seconds: number, probe: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds}s waiting for ${what}`);
    await sleep(1000);
  }
}

/** One Function's way through a phase. */
interface FunctionRun {
  readonly phase: string;
  readonly key: string;
  readonly runtime: string;
  readonly source: string;
  seconds?: number;
  deploymentUpdates?: number;
  serviceUpdates?: number;
  hpaUpdates?: number;
  result: string;
}

const runs: FunctionRun[] = [];
const findings: string[] = [];

function problems(): string[] {
  const found = podRunnerProblems();
  for (const file of ['kube-apiserver', 'kube-controller-manager', 'up.sh', 'down.sh']) {
    if (!fs.existsSync(path.join(K8S_BIN, file))) found.push(`${path.join(K8S_BIN, file)} is missing: build it with ${K8S_LOCAL}/build.sh (see its README)`);
  }
  for (const file of ['function-controller-1.11.1.xz', 'fakelet.mjs']) {
    if (!fs.existsSync(path.join(K8S_LOCAL, file))) found.push(`${path.join(K8S_LOCAL, file)} is missing: set K8S_LOCAL to the folder of ../shared/k8s-local`);
  }
  try {
    execFileSync('sh', ['-c', 'ldconfig -p | grep -q libgit2.so.1.5']);
  } catch {
    found.push('libgit2 1.5 is missing (the controller links it): apt-get install -y libgit2-1.5');
  }
  for (const tool of ['kubectl', 'git', 'xz']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      found.push(`${tool} is missing`);
    }
  }
  return found;
}

/** Reads every object of the YAML files in a folder (not Kustomize's), and of its subfolders when `recursive`. */
function objectsOf(dir: string, recursive = false): any[] {
  return fs.readdirSync(dir, { recursive }).map(String).filter(f => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml')).sort()
    .flatMap(f => parseManifests(fs.readFileSync(path.join(dir, f), 'utf8')).flatMap(d => (d.object ? [d.object] : [])));
}

/** Writes objects as one manifest in a new folder, for `kyma-serverless apply`. */
function manifestDir(work: string, name: string, objects: readonly any[]): string {
  const dir = path.join(work, 'apply', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'objects.yaml'), objects.map(o => JSON.stringify(o)).join('\n---\n'));
  return dir;
}

/** Runs `kyma-serverless` of this checkout against the local cluster. */
function cli(commandArgs: readonly string[]): { status: number; output: string } {
  try {
    const output = execFileSync(process.execPath, [path.join(ROOT, 'bin', 'kyma-serverless.js'), '--kubeconfig', KUBECONFIG, ...commandArgs], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
    });
    return { status: 0, output };
  } catch (e) {
    const error = e as { status?: number; stdout?: string; stderr?: string };
    return { status: error.status ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` };
  }
}

const isFunction = (o: any) => o.kind === FUNCTION_KIND && o.apiVersion === FUNCTION_API_VERSION;
const keyOf = (o: any) => `${o.metadata.namespace}/${o.metadata.name}`;

/** A permissive CRD for a kind the cluster does not serve, so that objects of it can be applied (nothing reconciles them). */
function standInCrd(apiVersion: string, kind: string): any {
  const [group, version] = apiVersion.split('/');
  const lower = kind.toLowerCase();
  const plural = lower.endsWith('y') ? `${lower.slice(0, -1)}ies` : lower.endsWith('s') ? `${lower}es` : `${lower}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { 'real-controller-run/stand-in': 'true' } },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: lower, listKind: `${kind}List` },
      versions: [{ name: version, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

class Run {
  public readonly kubectl = new Kubectl(KUBECONFIG);
  public readonly work = fs.mkdtempSync(path.join(os.tmpdir(), 'real-controller-'));
  private readonly processes: PodProcess[] = [];
  private fakelet?: ChildProcess;
  private git?: GitServer;
  private controller?: PodProcess;
  private hostsLine?: string;

  /** Kinds the cluster serves, as `apiVersion kind`. */
  private served(): Set<string> {
    const served = new Set<string>();
    for (const line of this.kubectl.run(['api-resources', '-o', 'wide', '--no-headers']).split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 4) continue;
      const kindIndex = fields.findIndex(f => f === 'true' || f === 'false') + 1;
      served.add(`${fields[kindIndex - 2]} ${fields[kindIndex]}`);
    }
    return served;
  }

  /** Creates CRDs for the kinds of these objects that the cluster does not serve: upstream's where shared/reference has them, else stand-ins. */
  public ensureKinds(objects: readonly any[]): void {
    const served = this.served();
    const missing = new Map<string, any>();
    for (const o of objects) if (!served.has(`${o.apiVersion} ${o.kind}`)) missing.set(`${o.apiVersion} ${o.kind}`, o);
    if (!missing.size) return;
    const crds: any[] = [];
    for (const o of missing.values()) {
      const file = { APIRule: 'apirule-crd.yaml', Subscription: 'subscription-crd.yaml' }[o.kind as string];
      const upstream = file && fs.existsSync(path.join(REFERENCE, 'upstream', file)) ? objectsOf(path.join(REFERENCE, 'upstream')).find(c => c.kind === 'CustomResourceDefinition' && c.spec.names.kind === o.kind) : undefined;
      crds.push(upstream ?? standInCrd(o.apiVersion, o.kind));
    }
    this.kubectl.apply(crds);
    for (const crd of crds) this.kubectl.run(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crd.metadata.name}`]);
    log(`CRDs for kinds nothing here serves: ${crds.map(c => `${c.spec.names.kind}${c.metadata.labels?.['real-controller-run/stand-in'] ? ' (stand-in)' : ' (upstream\'s)'}`).join(', ')}`);
  }

  public async start(namespaces: readonly string[]): Promise<void> {
    log(`work folder ${this.work}`);
    log('starting kube-apiserver and kube-controller-manager (up.sh --clean)');
    execFileSync(path.join(K8S_BIN, 'up.sh'), ['--clean'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const binary = path.join(this.work, 'bin', 'manager');
    fs.mkdirSync(path.dirname(binary), { recursive: true, mode: 0o755 });
    fs.chmodSync(this.work, 0o755);
    execFileSync('sh', ['-c', `xz -dc '${path.join(K8S_LOCAL, 'function-controller-1.11.1.xz')}' > '${binary}'`]);
    fs.chmodSync(binary, 0o755);
    this.fakelet = spawn(process.execPath, [path.join(K8S_LOCAL, 'fakelet.mjs'), '--namespaces', ['kyma-system', ...namespaces].join(','),
      '--seconds', '7200', '--record', path.join(this.work, 'pods.json')], { env: { ...process.env, KUBECONFIG }, stdio: 'ignore' });
    this.git = await GitServer.start(path.join(this.work, 'git', 'repos'), GIT_CREDENTIALS);
    log(`fakelet for kyma-system and ${namespaces.length} Function namespaces; Git server on ${this.git.url}`);
  }

  public get gitServer(): GitServer {
    return this.git!;
  }

  /** Applies the stack, running the credentials Job's program as its Pod would, then starts the webhook and the controller. */
  public async applyStack(): Promise<void> {
    const stack = path.join(this.work, 'stack');
    fs.mkdirSync(stack, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'dist', '0000-serverless.k8s.yaml'), path.join(stack, '0000-serverless.k8s.yaml'));
    log('kyma-serverless apply --wait of dist/0000-serverless.k8s.yaml');
    const apply = spawn(process.execPath, [path.join(ROOT, 'bin', 'kyma-serverless.js'), '--kubeconfig', KUBECONFIG, 'apply', stack, '--wait', '--timeout', '5m'],
      { env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let applyOutput = '';
    apply.stdout!.on('data', chunk => { applyOutput += chunk; });
    apply.stderr!.on('data', chunk => { applyOutput += chunk; });
    const applied = new Promise<number>(resolve => apply.on('exit', code => resolve(code ?? 1)));

    const job = await until('the registry credentials Job', 180, () => this.kubectl.list(['jobs', '-n', 'kyma-system', '-l', 'app.kubernetes.io/component=registry-credentials'])[0]
      ?? this.kubectl.list(['jobs', '-n', 'kyma-system']).find(j => j.metadata.name.startsWith('serverless-registry-credentials')));
    const credentials = PodProcess.start(this.kubectl, {
      name: 'registry-credentials', namespace: 'kyma-system', spec: job.spec.template.spec, executables: {}, apiServer: API_SERVER,
      workDir: path.join(this.work, 'pods', 'registry-credentials'),
    });
    const code = await credentials.exited;
    await credentials.stop();
    log(`credentials Job program (its own ServiceAccount, uid ${job.spec.template.spec.securityContext?.runAsUser}, read-only root): exit ${code}: ${credentials.log().trim()}`);
    if (code !== 0) throw new Error('the registry credentials program failed');

    // apply waits for the caBundle the webhook writes: start it as soon as its Deployment is there.
    const deployment = await until('the webhook Deployment', 180, () => this.kubectl.list(['deployments', '-n', 'kyma-system', '--field-selector', 'metadata.name=serverless-webhook'])[0]);
    await this.startWebhook(deployment);
    const status = await applied;
    log(`apply exited ${status}${status ? `:\n${applyOutput}` : `: ${applyOutput.trim().split('\n').slice(-1)[0]}`}`);
    if (status !== 0) throw new Error('kyma-serverless apply of the stack failed');
    this.pointWebhooksHere();
    await this.startController();
  }

  private async startWebhook(deployment: any): Promise<void> {
    // Two Pods share this machine's network: the webhook's metrics port moves off the controller's 8080.
    const webhook = PodProcess.start(this.kubectl, {
      name: 'webhook', namespace: 'kyma-system', spec: deployment.spec.template.spec, executables: {}, apiServer: API_SERVER,
      args: a => a.map((arg, i) => (a[i - 1] === '--metrics-port' ? '18080' : arg)),
      workDir: path.join(this.work, 'pods', 'webhook'),
    });
    this.processes.push(webhook);
    const hosts = fs.readFileSync('/etc/hosts', 'utf8');
    if (!new RegExp(`\\s${WEBHOOK_HOST.replace(/\./g, '\\.')}(\\s|$)`, 'm').test(hosts)) {
      this.hostsLine = `127.0.0.1 ${WEBHOOK_HOST} # real-controller run`;
      fs.appendFileSync('/etc/hosts', `${this.hostsLine}\n`);
    }
    await until('the webhook\'s caBundle in both configurations', 60, () => {
      const [mutating, validating] = WEBHOOK_CONFIGURATIONS.map(([kind, name]) => this.kubectl.list([kind, '--field-selector', `metadata.name=${name}`])[0]);
      return mutating?.webhooks[0].clientConfig.caBundle && validating?.webhooks[0].clientConfig.caBundle;
    });
    log(`webhook program of ConfigMap serverless-webhook-server (its ServiceAccount, uid ${deployment.spec.template.spec.securityContext?.runAsUser}, read-only root): certificates made and caBundle written`);
  }

  /** Points the webhook configurations at the program on this machine, by URL: no Pod serves the Service. */
  private pointWebhooksHere(): void {
    for (const [kind, name] of WEBHOOK_CONFIGURATIONS) {
      const config = this.kubectl.json(['get', kind, name]);
      const patch = config.webhooks.map((w: any, i: number) => ({
        op: 'replace', path: `/webhooks/${i}/clientConfig`,
        value: { url: `https://${WEBHOOK_HOST}:${WEBHOOK_PORT}${w.clientConfig.service.path}`, caBundle: w.clientConfig.caBundle },
      }));
      this.kubectl.run(['patch', kind, name, '--type=json', '-p', JSON.stringify(patch)]);
    }
    log(`webhook configurations point at https://${WEBHOOK_HOST}:${WEBHOOK_PORT}`);
  }

  private async startController(): Promise<void> {
    const deployment = this.kubectl.json(['-n', 'kyma-system', 'get', 'deployment', 'serverless-ctrl-mngr']);
    this.controller = PodProcess.start(this.kubectl, {
      name: 'controller', namespace: 'kyma-system', spec: deployment.spec.template.spec,
      executables: { '/app/manager': path.join(this.work, 'bin', 'manager') },
      // What upstream's image sets (deploy/manager/Dockerfile); the program panics without it.
      imageEnv: { GODEBUG: 'fips140=on,tlsmlkem=0' },
      apiServer: API_SERVER,
      workDir: path.join(this.work, 'pods', 'controller'),
    });
    this.processes.push(this.controller);
    await until('the controller\'s /healthz', 60, () => {
      if (!this.controller!.running) throw new Error(`the controller exited: ${this.controller!.log().trim().split('\n').slice(-5).join('\n')}`);
      try {
        return execFileSync('curl', ['-fsS', '--max-time', '2', 'http://127.0.0.1:8090/healthz/'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) !== undefined;
      } catch {
        return false;
      }
    });
    log(`controller 1.11.1 (its ServiceAccount, uid ${deployment.spec.template.spec.securityContext?.runAsUser}, read-only root, the Deployment's env and /appconfig)`);
  }

  public controllerLog(): string {
    return this.controller?.log() ?? '';
  }

  /** Creates the Secrets and ConfigMaps Functions read that no manifest holds, as a user would before applying them. */
  public createReferenced(functions: readonly any[], extra: readonly any[] = []): void {
    const objects = new Map<string, any>();
    const add = (kind: 'Secret' | 'ConfigMap', namespace: string, name: string, keys: readonly string[]) => {
      // A placeholder such as upstream's SECRET_NAME: the Function is refused at admission, and no such object can exist.
      if (!isDns1123Subdomain(name)) return;
      const id = `${kind} ${namespace}/${name}`;
      const known = Object.values(COVERAGE_REFERENCED).find(r => r.name === name)?.data ?? {};
      const object = objects.get(id) ?? { apiVersion: 'v1', kind, metadata: { name, namespace }, [kind === 'Secret' ? 'stringData' : 'data']: { ...known } };
      for (const key of keys) object[kind === 'Secret' ? 'stringData' : 'data'][key] ??= `value of ${key}`;
      objects.set(id, object);
    };
    for (const fn of functions) {
      const ns = fn.metadata.namespace;
      for (const e of fn.spec.env ?? []) {
        const s = e.valueFrom?.secretKeyRef;
        const c = e.valueFrom?.configMapKeyRef;
        if (s && !s.optional) add('Secret', ns, s.name, [s.key]);
        if (c && !c.optional) add('ConfigMap', ns, c.name, [c.key]);
      }
      for (const m of fn.spec.secretMounts ?? []) add('Secret', ns, m.secretName, []);
      const auth = fn.spec.source?.gitRepository?.auth;
      if (auth) add('Secret', ns, auth.secretName, ['username', 'password']);
    }
    for (const o of extra) objects.set(`${o.kind} ${o.metadata.namespace}/${o.metadata.name}`, o);
    const existing = (o: any) => this.kubectl.list([o.kind.toLowerCase(), '-n', o.metadata.namespace, '--field-selector', `metadata.name=${o.metadata.name}`]).length > 0;
    const missing = [...objects.values()].filter(o => !existing(o));
    if (missing.length) {
      this.kubectl.apply(missing);
      log(`created what the Functions read: ${missing.map(o => `${o.kind} ${keyOf(o)}`).join(', ')}`);
    }
  }

  /** Applies objects with `kyma-serverless apply`, in its order; fails loudly. */
  public apply(name: string, objects: readonly any[]): void {
    this.ensureKinds(objects);
    const result = cli(['apply', manifestDir(this.work, name, objects)]);
    if (result.status !== 0) throw new Error(`kyma-serverless apply of ${name} failed:\n${result.output}`);
  }

  /** The Functions of these keys as the cluster has them. */
  private functionsNow(): Map<string, any> {
    return new Map(this.kubectl.list(['functions.serverless.kyma-project.io', '-A']).map(f => [keyOf(f), f]));
  }

  /**
   * Waits until every Function reaches Running (with `done` true, when given), recording how long
   * each took and how often the controller updated its objects since `logFrom`.
   */
  public async waitRunning(phase: string, functions: readonly any[], logFrom: number, since: number,
    done: (fn: any) => boolean = () => true, seconds = 300): Promise<FunctionRun[]> {
    const pending = new Map(functions.map(f => [keyOf(f), f]));
    const results = new Map<string, FunctionRun>();
    const deadline = Date.now() + seconds * 1000;
    while (pending.size && Date.now() < deadline) {
      if (!this.controller?.running) throw new Error(`the controller exited: ${this.controllerLog().trim().split('\n').slice(-5).join('\n')}`);
      const now = this.functionsNow();
      for (const [key, fn] of pending) {
        const live = now.get(key);
        const running = live?.status?.conditions?.find((c: any) => c.type === 'Running');
        if (running?.status === 'True' && done(live)) {
          results.set(key, runOf(phase, fn, 'Running', (Date.now() - since) / 1000));
          pending.delete(key);
        }
      }
      await sleep(1000);
    }
    const now = this.functionsNow();
    for (const [key, fn] of pending) {
      const conditions = (now.get(key)?.status?.conditions ?? []).map((c: any) => `${c.type}=${c.status} ${c.reason}: ${c.message}`).join('; ');
      results.set(key, runOf(phase, fn, `not Running after ${seconds}s: ${conditions || 'no status'}`));
    }
    const counts = updateCounts(this.controllerLog().slice(logFrom));
    const list = functions.map(f => {
      const run = results.get(keyOf(f))!;
      const count = counts.get(keyOf(f)) ?? { deployment: 0, service: 0, hpa: 0 };
      Object.assign(run, { deploymentUpdates: count.deployment, serviceUpdates: count.service, hpaUpdates: count.hpa });
      if (run.result === 'Running' && count.deployment > MAX_DEPLOYMENT_UPDATES) run.result = `Running after ${count.deployment} Deployment updates (more than ${MAX_DEPLOYMENT_UPDATES})`;
      return run;
    });
    runs.push(...list);
    const bad = list.filter(r => r.result !== 'Running');
    log(`${phase}: ${list.length - bad.length} of ${list.length} Functions Running${bad.length ? `; not: ${bad.map(r => `${r.key} (${r.result})`).join('; ')}` : ''}`);
    return list;
  }

  /** Deletes objects by kind and name, ignoring those already gone. */
  public deleteObjects(objects: readonly any[]): void {
    for (const o of objects) {
      const [group] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : [''];
      const kind = group ? `${o.kind.toLowerCase()}.${group}` : o.kind.toLowerCase();
      this.kubectl.run(['-n', o.metadata.namespace, 'delete', kind, o.metadata.name, '--ignore-not-found', '--wait=false']);
    }
  }

  /** Deletes Functions and waits until none of the objects the controller made for them remain. */
  public async deleteFunctions(phase: string, functions: readonly any[]): Promise<void> {
    const since = Date.now();
    for (const fn of functions) this.kubectl.run(['-n', fn.metadata.namespace, 'delete', 'function', fn.metadata.name, '--wait=false']);
    const namespaces = [...new Set(functions.map(f => f.metadata.namespace))];
    const names = new Set(functions.map(f => keyOf(f)));
    const leftovers = () => namespaces.flatMap(ns => ['functions.serverless.kyma-project.io', 'configmaps', 'jobs', 'deployments', 'services', 'horizontalpodautoscalers', 'pods']
      // A terminating Pod is the kubelet's to remove, and no kubelet runs here: only Pods not being deleted count.
      .flatMap(kind => this.kubectl.list([kind, '-n', ns]).filter(o => names.has(`${ns}/${o.metadata.labels?.[FUNCTION_POD_LABEL] ?? (kind.startsWith('functions') ? o.metadata.name : '')}`))
        .filter(o => !(kind === 'pods' && o.metadata.deletionTimestamp))
        .map(o => `${o.kind} ${keyOf(o)}`)));
    try {
      await until('the deleted Functions\' objects to go', 120, () => leftovers().length === 0);
      log(`${phase}: ${functions.length} Functions deleted; nothing of theirs left after ${((Date.now() - since) / 1000).toFixed(1)}s`);
    } catch {
      const left = leftovers();
      findings.push(`${phase}: after deleting ${functions.length} Functions, left: ${left.join(', ')}`);
      log(`${phase}: left after deletion: ${left.join(', ')}`);
    }
  }

  public async stop(keep: boolean): Promise<void> {
    if (keep) {
      const pids = [...this.processes.map(p => p.pid), this.fakelet?.pid].filter(p => p !== undefined).join(' ');
      log(`kept running: KUBECONFIG=${KUBECONFIG}, work folder ${this.work}. To stop: pkill -g for each of ${pids} `
        + `(the stack's programs and fakelet), ${K8S_BIN}/down.sh --clean, and remove the line of ${WEBHOOK_HOST} from /etc/hosts`);
      return;
    }
    for (const p of this.processes) await p.stop();
    this.fakelet?.kill();
    await this.git?.stop();
    if (this.hostsLine) fs.writeFileSync('/etc/hosts', fs.readFileSync('/etc/hosts', 'utf8').split('\n').filter(l => l !== this.hostsLine).join('\n'));
    try {
      execFileSync(path.join(K8S_BIN, 'down.sh'), ['--clean'], { stdio: 'ignore' });
    } catch {
      // Stopped already.
    }
  }
}

function runOf(phase: string, fn: any, result: string, seconds?: number): FunctionRun {
  const git = fn.spec.source?.gitRepository;
  return {
    phase, key: keyOf(fn), runtime: fn.spec.runtime, source: git ? `git ${git.reference}${git.auth ? ' (auth)' : ''}` : 'inline',
    ...(seconds !== undefined ? { seconds: Math.round(seconds * 10) / 10 } : {}), result,
  };
}

/** The objects of an app's output that are not the stack's (every object of the stack carries its module label; the stack is applied once, from dist/). */
function appObjects(objects: readonly any[]): any[] {
  return objects.filter(o => o.metadata?.labels?.['kyma-project.io/module'] !== 'serverless');
}

function upstreamSamples(): any[] {
  const dir = path.join(REFERENCE, 'upstream');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter(f => f.startsWith('sample-function-') && f.endsWith('.yaml')).sort()
    .flatMap(f => parseManifests(fs.readFileSync(path.join(dir, f), 'utf8')).flatMap(d => (d.object && isFunction(d.object) ? [d.object] : [])))
    // Two samples share a name: the second gets a suffix, so that each is a Function of its own.
    .map((fn, i, all) => {
      const twin = all.slice(0, i).some(other => other.metadata.name === fn.metadata.name);
      return { ...fn, metadata: { ...fn.metadata, name: twin ? `${fn.metadata.name}-${i}` : fn.metadata.name, namespace: 'upstream-samples' } };
    });
}

function report(): string {
  const lines = [
    '| phase | Function | runtime | source | s to Running | Deployment updates | Service updates | HPA updates | result |',
    '|---|---|---|---|---:|---:|---:|---:|---|',
    ...runs.map(r => `| ${r.phase} | ${r.key} | ${r.runtime} | ${r.source} | ${r.seconds ?? ''} | ${r.deploymentUpdates ?? ''} | ${r.serviceUpdates ?? ''} | ${r.hpaUpdates ?? ''} | ${r.result} |`),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const missing = problems();
  if (missing.length) throw new Error(`cannot run here:\n- ${missing.join('\n- ')}`);
  const run = new Run();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping what the run started`);
      void run.stop(false).finally(() => process.exit(130));
    });
  }
  try {
    // Synth first: the fakelet needs every namespace in use.
    const coverageOut = path.join(run.work, 'coverage');
    const examples: Example[] = option('skip-examples') ? [] : synthExamples(log);
    const defaultApp = objectsOf(path.join(ROOT, 'dist'));
    const samples = upstreamSamples();
    const exampleNamespaces = examples.flatMap(e => appObjects(e.objects).filter(isFunction).map(f => f.metadata.namespace));
    const namespaces = [...new Set(['default-functions', ...COVERAGE_NAMESPACES, 'upstream-samples', 'loop-check', ...exampleNamespaces])];
    await run.start(namespaces);
    const publicRepo = run.gitServer.create('functions.git', {
      'node/handler.js': 'exports.main = () => "Hello from Git";\n',
      'node/package.json': '{ "name": "git-node", "dependencies": {} }\n',
      'python/handler.py': 'def main(event, context):\n    return "Hello from Git"\n',
    });
    publicRepo.tag('v1');
    const privateRepo = run.gitServer.create('private/app.git', { 'handler.js': 'exports.main = () => "private";\n' });
    synthCoverage(coverageOut, path.join(run.work, 'coverage-folders'), { publicUrl: publicRepo.url, privateUrl: privateRepo.url });
    const coverage = appObjects(objectsOf(coverageOut));

    await run.applyStack();

    // Phase 1: the default app, the coverage app and upstream's samples, through the webhook.
    const first = [...appObjects(defaultApp), ...coverage];
    const firstFunctions = first.filter(isFunction);
    const sampleNamespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'upstream-samples', labels: { 'istio-injection': 'enabled' } } };
    const sampleSecrets = mirrorGitSources(samples, run.gitServer, GIT_CREDENTIALS);
    let logFrom = run.controllerLog().length;
    let since = Date.now();
    run.apply('phase-1', first.filter(o => !isFunction(o)));
    run.createReferenced(firstFunctions);
    run.apply('phase-1-functions', firstFunctions);
    run.apply('upstream-samples-namespace', [sampleNamespace]);
    run.createReferenced(samples, sampleSecrets);
    const admitted: any[] = [];
    for (const sample of samples) {
      const result = cli(['apply', manifestDir(run.work, `sample-${sample.metadata.name}`, [sample])]);
      if (result.status === 0) admitted.push(sample);
      else log(`upstream sample ${sample.metadata.name} refused at admission: ${result.output.trim().split('\n').filter(l => /denied|invalid|refused|Error/i.test(l)).slice(0, 2).join(' ')}`);
    }
    await run.waitRunning('1 apply', [...firstFunctions, ...admitted], logFrom, since);

    // Phase 2, day two: a new source (new build), a new env value (rollout), a new Git reference (new build).
    const byName = (name: string) => firstFunctions.find(f => f.metadata.name === name);
    const changedSource = structuredClone(byName('presets'));
    changedSource.spec.source.inline.source = changedSource.spec.source.inline.source.replace('Hello', 'Hello again');
    const changedEnv = structuredClone(byName('env-every-kind'));
    changedEnv.spec.env = changedEnv.spec.env.map((e: any) => (e.name === 'PLAIN' ? { ...e, value: 'changed' } : e));
    publicRepo.commit({ 'python/handler.py': 'def main(event, context):\n    return "Hello from Git, v2"\n' }, 'v2');
    publicRepo.tag('v2');
    const changedGit = structuredClone(byName('git-tag-python'));
    changedGit.spec.source.gitRepository.reference = 'v2';
    // From the presets the webhook defaulted to explicit resources: apply merges them beside the defaulted profiles.
    const changedResources = structuredClone(byName('scaled'));
    changedResources.spec.resourceConfiguration = {
      function: { resources: { requests: { cpu: '60m', memory: '70Mi' }, limits: { cpu: '120m', memory: '140Mi' } } },
      build: { resources: { requests: { cpu: '300m', memory: '300Mi' }, limits: { cpu: '900m', memory: '900Mi' } } },
    };
    const changed = [changedSource, changedEnv, changedGit, changedResources];
    const before = new Map(changed.map(f => [keyOf(f), run.kubectl.list(['deployments', '-n', f.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${f.metadata.name}`])[0]]));
    logFrom = run.controllerLog().length;
    since = Date.now();
    run.apply('phase-2', changed);
    const rolledOut = (fn: any) => {
      const old = before.get(keyOf(fn));
      const now = run.kubectl.list(['deployments', '-n', fn.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${fn.metadata.name}`])[0];
      const image = (d: any) => d?.spec.template.spec.containers[0].image;
      const env = (d: any) => JSON.stringify(d?.spec.template.spec.containers[0].env);
      const resources = (d: any) => JSON.stringify(d?.spec.template.spec.containers[0].resources);
      const changedNow = fn.metadata.name === 'env-every-kind' ? env(now) !== env(old)
        : fn.metadata.name === 'scaled' ? resources(now) !== resources(old) : image(now) !== image(old);
      return changedNow && now?.status?.updatedReplicas === now?.spec.replicas && now?.status?.availableReplicas === now?.spec.replicas;
    };
    await run.waitRunning('2 day two', changed, logFrom, since, rolledOut);

    // Phase 3: every TypeScript example of the docs, one at a time.
    for (const example of examples) {
      const objects = appObjects(example.objects);
      const functions = objects.filter(isFunction);
      if (!functions.length) continue;
      const secrets = mirrorGitSources(functions, run.gitServer, GIT_CREDENTIALS);
      logFrom = run.controllerLog().length;
      since = Date.now();
      run.apply(`example-${example.where}`, objects.filter(o => !isFunction(o)));
      run.createReferenced(functions, secrets);
      run.apply(`example-functions-${example.where}`, functions);
      await run.waitRunning(`3 ${example.where}`, functions, logFrom, since);
      await run.deleteFunctions(`3 ${example.where}`, functions);
      // The rest of the example too (its namespaces stay): the next example may reuse its names.
      run.deleteObjects(objects.filter(o => !isFunction(o) && o.kind !== 'Namespace' && o.metadata?.namespace));
    }

    // Phase 4: a Function stored without the webhook and under upstream's CRD, which has no default for fieldRef.apiVersion.
    await loopCheck(run);

    // Phase 5: delete every Function of phase 1; nothing of theirs may remain.
    await run.deleteFunctions('5 delete', [...firstFunctions, ...admitted]);

    const { errors, forbidden } = errorLines(run.controllerLog());
    const lease = run.kubectl.list(['leases', '-n', 'kyma-system']).map(l => `${l.metadata.name} held by ${l.spec.holderIdentity}`);
    const pods: any[] = JSON.parse(fs.readFileSync(path.join(run.work, 'pods.json'), 'utf8'));
    const images = [...new Set(pods.flatMap(p => [...p.initContainers, ...p.containers].map((c: any) => c.image)))].sort();
    const bad = runs.filter(r => r.result !== 'Running');
    const text = [
      `# The stack under upstream's Function Controller 1.11.1 (${new Date().toISOString().slice(0, 10)})`,
      '',
      report(),
      '',
      `- Functions: ${runs.length} runs, ${runs.length - bad.length} reached Running within ${MAX_DEPLOYMENT_UPDATES} Deployment updates.`,
      `- Controller: ${errors.length} error lines, ${forbidden.length} forbidden (RBAC); Leases: ${lease.join(', ') || 'none'}.`,
      `- Pods the fakelet saw: ${pods.length}; images: ${images.join(', ')}.`,
      ...findings.map(f => `- ${f}`),
      '',
      `Total: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    ].join('\n');
    process.stdout.write(`\n${text}\n`);
    if (optionValue('report')) fs.writeFileSync(optionValue('report')!, `${text}\n`);
    if (errors.length) log(`controller errors:\n  ${errors.slice(0, 20).join('\n  ')}`);
    if (bad.length || forbidden.length || findings.length) process.exitCode = 1;
  } finally {
    await run.stop(option('keep'));
  }
}

/**
 * The control: with upstream's own CRD and no webhook, a Function whose fieldRef has no apiVersion
 * keeps the controller updating its Deployment; `status` and `validate` must name it. Our CRD's
 * default then ends the loop for the Function already stored.
 */
async function loopCheck(run: Run): Promise<void> {
  const upstreamCrd = path.join(REFERENCE, 'upstream', 'serverless-1.11.1-function-crd.yaml');
  if (!fs.existsSync(upstreamCrd)) {
    findings.push(`4 loop check: skipped, ${upstreamCrd} is missing`);
    return;
  }
  const ours = objectsOf(path.join(ROOT, 'crds'))[0];
  const webhooks = WEBHOOK_CONFIGURATIONS.map(([kind, name]) => `${kind}/${name}`).map(ref => ({ ref, object: run.kubectl.json(['get', ref]) }));
  for (const { ref } of webhooks) run.kubectl.run(['delete', ref]);
  run.kubectl.run(['replace', '-f', upstreamCrd]);
  run.apply('loop-check-namespace', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'loop-check', labels: { 'istio-injection': 'enabled' } } }]);
  const fn = {
    apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'looping', namespace: 'loop-check' },
    spec: {
      runtime: 'nodejs22',
      env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      source: { inline: { source: 'exports.main = () => "loop";\n' } },
    },
  };
  const dir = manifestDir(run.work, 'loop-check', [fn]);
  run.kubectl.run(['apply', '-f', path.join(dir, 'objects.yaml')]);
  const logFrom = run.controllerLog().length;
  await until('the controller to update the looping Function\'s Deployment', 180, () => (updateCounts(run.controllerLog().slice(logFrom)).get('loop-check/looping')?.deployment ?? 0) >= 10);
  const updates = updateCounts(run.controllerLog().slice(logFrom)).get('loop-check/looping')!.deployment;
  const status = cli(['status', '-n', 'loop-check']);
  const validate = cli(['validate', dir]);
  const named = status.status === 1 && /DeploymentUpdateLoop/.test(status.output) && validate.status === 1 && /without apiVersion/.test(validate.output);
  log(`4 loop check, upstream's CRD and no webhook: ${updates}+ Deployment updates; status exit ${status.status}: ${status.output.trim().split('\n').slice(-2).join(' | ')}`);
  log(`4 loop check: validate exit ${validate.status}: ${validate.output.trim().split('\n').find(l => /apiVersion/.test(l)) ?? validate.output.trim()}`);
  if (!named) findings.push('4 loop check: status or validate did not name the looping Function');
  // Our CRD again: its default gives the stored Function the apiVersion, and the loop ends.
  run.kubectl.apply([ours], 'kyma-serverless');
  const since = Date.now();
  const [result] = await run.waitRunning('4 loop ended by our CRD', [fn], run.controllerLog().length, since);
  for (const { object } of webhooks) {
    const { metadata, ...rest } = object;
    run.kubectl.run(['create', '-f', '-'], JSON.stringify({ ...rest, metadata: { name: metadata.name, labels: metadata.labels, annotations: metadata.annotations } }));
  }
  if (result.result !== 'Running') findings.push(`4 loop check: the looping Function did not reach Running under our CRD: ${result.result}`);
  await run.deleteFunctions('4 loop check', [fn]);
}

main().catch(e => {
  process.stderr.write(`real-controller run: ${(e as Error).message}\n`);
  process.exitCode = 2;
});
