/**
 * What a run of `npm run e2e:controller` is made of, for both of its proofs (main.ts: one release;
 * move.ts: the move of a live system): the control plane and the stack's programs (`Run`), the
 * command-line options, the log, the Functions' outcomes, the findings and the report.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  DEFAULT_RELEASE, FUNCTION_API_VERSION, FUNCTION_KIND, FUNCTION_POD_LABEL, ServerlessRelease, isDns1123Subdomain,
} from '../../src/api';
import { parseManifests } from '../../src/policy/_manifest-files';
import { synthDefaultApp } from './apps';
import { AuditEvent, AuditLog, callCounts, denials, unusedGrants, updateCounts } from './audit';
import { ControlPlane } from './control-plane';
import { errorLines } from './controller-log';
import { COVERAGE_REFERENCED } from './coverage';
import { GitServer } from './git-server';
import { Kubectl } from './kubectl';
import { PodProcess } from './pod';
import { ControllerRelease, controllerRelease, unpackProgram } from './releases';

export const ROOT = path.resolve(__dirname, '..', '..');
export const K8S_BIN = process.env.K8S_BIN ?? path.join(process.env.TMPDIR ?? '/tmp', 'k8s-bin');
/** `../shared/<name>` beside the checkout, or beside its parent folder (a git worktree in a folder of worktrees). */
const shared = (name: string) => [path.resolve(ROOT, '..', 'shared', name), path.resolve(ROOT, '..', '..', 'shared', name)].find(d => fs.existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', name);
export const K8S_LOCAL = process.env.K8S_LOCAL ?? shared('k8s-local');
export const REFERENCE = process.env.UPSTREAM_REFERENCE ?? shared('reference');
export const WEBHOOK_HOST = 'serverless-webhook.kyma-system.svc';
export const WEBHOOK_PORT = 8443;
export const GIT_CREDENTIALS = { username: 'runner', password: 'pa55word' };
const MAX_DEPLOYMENT_UPDATES = 3;
/** The namespace of the stack, and the group of its ServiceAccounts, whose calls the audit log records. */
const STACK_NAMESPACE = 'kyma-system';
export const WEBHOOK_CONFIGURATIONS = [
  ['mutatingwebhookconfiguration', 'defaulting.webhook.serverless.kyma-project.io'],
  ['validatingwebhookconfiguration', 'validation.webhook.serverless.kyma-project.io'],
] as const;

const args = process.argv.slice(2);
export const option = (name: string) => args.includes(`--${name}`);
export const optionValue = (name: string) => (args.indexOf(`--${name}`) >= 0 ? args[args.indexOf(`--${name}`) + 1] : undefined);

const started = Date.now();
export function log(line: string): void {
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
}

export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

export async function until<T>(what: string, seconds: number, probe: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds}s waiting for ${what}`);
    await sleep(1000);
  }
}

/** One Function's way through a phase. */
export interface FunctionRun {
  readonly phase: string;
  readonly key: string;
  readonly runtime: string;
  readonly source: string;
  seconds?: number;
  deploymentUpdates?: number;
  serviceUpdates?: number;
  hpaUpdates?: number;
  /** The kinds the controller owns for it, as `Deployment 1, Service 1`. */
  children?: string;
  result: string;
}

export const runs: FunctionRun[] = [];
export const findings: string[] = [];
/** Facts worth reporting that are not failures. */
export const notes: string[] = [];

/** Reads every object of the YAML files in a folder (not Kustomize's), and of its subfolders when `recursive`. */
export function objectsOf(dir: string, recursive = false): any[] {
  return fs.readdirSync(dir, { recursive }).map(String).filter(f => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml')).sort()
    .flatMap(f => parseManifests(fs.readFileSync(path.join(dir, f), 'utf8')).flatMap(d => (d.object ? [d.object] : [])));
}

/** Writes objects as one manifest in a new folder, for `kyma-serverless apply`. */
export function manifestDir(work: string, name: string, objects: readonly any[]): string {
  const dir = path.join(work, 'apply', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'objects.yaml'), objects.map(o => JSON.stringify(o)).join('\n---\n'));
  return dir;
}

/** Runs `kyma-serverless` of this checkout against a cluster. */
export function cli(kubeconfig: string, commandArgs: readonly string[]): { status: number; output: string } {
  try {
    const output = execFileSync(process.execPath, [path.join(ROOT, 'bin', 'kyma-serverless.js'), '--kubeconfig', kubeconfig, ...commandArgs], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
    });
    return { status: 0, output };
  } catch (e) {
    const error = e as { status?: number; stdout?: string; stderr?: string };
    return { status: error.status ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` };
  }
}

export const isFunction = (o: any) => o.kind === FUNCTION_KIND && o.apiVersion === FUNCTION_API_VERSION;
export const keyOf = (o: any) => `${o.metadata.namespace}/${o.metadata.name}`;

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

/** What a Function's Pods run, as the run starts a stack's programs: by Deployment or Job name. */
type StackProgram = 'webhook' | 'controller';

export class Run {
  public readonly work = fs.mkdtempSync(path.join(os.tmpdir(), 'real-controller-'));
  private readonly k8sDir = path.join(this.work, 'k8s');
  public readonly kubeconfig = path.join(this.k8sDir, 'kubeconfig');
  public readonly kubectl = new Kubectl(this.kubeconfig);
  public readonly audit = new AuditLog(path.join(this.k8sDir, 'logs', 'audit.log'));
  private readonly apiServer = { host: '127.0.0.1', port: 6443, caFile: path.join(this.k8sDir, 'pki', 'ca.crt') };
  private readonly processes: PodProcess[] = [];
  private readonly stackPrograms = new Map<StackProgram, { process: PodProcess; template: string; replacing?: boolean }>();
  private readonly jobsRun = new Set<string>();
  /** When the last apply began. */
  private applyStartedAt = 0;
  /**
   * The windows in which a controller of a release being replaced still ran after an apply had begun:
   * the apply writes the new release's RBAC before the controller Deployment, and the old Pod runs
   * until the rollout replaces it, as on a cluster; what that controller is denied then is the
   * switch, not a missing grant.
   */
  private readonly outgoing: Array<{ readonly release: ServerlessRelease; readonly from: number; readonly to: number }> = [];
  private readonly programs = new Map<ServerlessRelease, string>();
  private controlPlane?: ControlPlane;
  private fakelet?: ChildProcess;
  private nodeKeeper?: ChildProcess;
  private git?: GitServer;
  private hostsLine?: string;
  /** The Functions the run applied, by key: to tell whose a Deployment or Service is in the audit log. */
  private readonly functionKeys = new Set<string>();
  /** What the run created as a user would (`Kind namespace/name`): the Secrets and ConfigMaps Functions read. */
  public readonly userMade = new Set<string>();
  /** The controller's log of each release it ran, in order. */
  private readonly controllerLogs: string[] = [];

  /** @param release the release whose controller runs the stack's controller Deployment (the move swaps it) */
  constructor(public release: ControllerRelease) {}

  /** Runs `kyma-serverless` of this checkout against this run's cluster. */
  public cli(commandArgs: readonly string[]): { status: number; output: string } {
    return cli(this.kubeconfig, commandArgs);
  }

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
    // The Function CRD comes with the stack.
    for (const key of [...missing.keys()]) if (key === `${FUNCTION_API_VERSION} ${FUNCTION_KIND}`) missing.delete(key);
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

  /**
   * Starts the control plane, the fakelet for the stack's and these namespaces, and the Git server.
   *
   * @param releases the releases whose controller programs the run needs
   */
  public async start(namespaces: readonly string[], releases: readonly ControllerRelease[]): Promise<void> {
    log(`work folder ${this.work}`);
    log('starting kube-apiserver (with an audit log) and kube-controller-manager (up.sh --clean)');
    this.controlPlane = ControlPlane.start(K8S_BIN, this.k8sDir, `system:serviceaccounts:${STACK_NAMESPACE}`);
    fs.chmodSync(this.work, 0o755);
    for (const release of releases) this.programs.set(release.release, unpackProgram(K8S_LOCAL, release, path.join(this.work, 'bin')));
    this.fakelet = spawn(process.execPath, [path.join(K8S_LOCAL, 'fakelet.mjs'), '--namespaces', [STACK_NAMESPACE, ...namespaces].join(','),
      '--seconds', '7200', '--record', path.join(this.work, 'pods.json')], { env: { ...process.env, KUBECONFIG: this.kubeconfig }, stdio: 'ignore' });
    // On a loaded machine fakelet's node heartbeat can lapse, and the Pods on it lose Ready for good: node-keeper.mjs renews it.
    this.nodeKeeper = spawn(process.execPath, [path.join(__dirname, 'node-keeper.mjs'), '--namespaces', [STACK_NAMESPACE, ...namespaces].join(','), '--seconds', '7200'],
      { env: { ...process.env, KUBECONFIG: this.kubeconfig }, stdio: 'ignore' });
    this.git = await GitServer.start(path.join(this.work, 'git', 'repos'), GIT_CREDENTIALS);
    log(`fakelet for ${STACK_NAMESPACE} and ${namespaces.length} Function namespaces; Git server on ${this.git.url}`);
  }

  public get gitServer(): GitServer {
    return this.git!;
  }

  /**
   * Applies a folder with `kyma-serverless apply --wait` (and these options), doing meanwhile what
   * the cluster's kubelets would do for the stack: the programs of its Jobs run once each as their
   * Pods specify (the registry credentials, the build-mode clean-up), and the webhook and the
   * controller start, or start again when their Deployment's Pod template changed (the old one
   * stops first, as a rollout replaces a Pod).
   *
   * @returns apply's exit code and output
   */
  public async applyFolder(folder: string, options: readonly string[] = []): Promise<{ status: number; output: string }> {
    log(`kyma-serverless apply --wait ${options.join(' ')} of ${path.relative(this.work, folder) || folder}`);
    this.applyStartedAt = Date.now();
    const apply = spawn(process.execPath, [path.join(ROOT, 'bin', 'kyma-serverless.js'), '--kubeconfig', this.kubeconfig, 'apply', folder, '--wait', ...(options.includes('--timeout') ? [] : ['--timeout', '5m']), ...options],
      { env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    apply.stdout!.on('data', chunk => { output += chunk; });
    apply.stderr!.on('data', chunk => { output += chunk; });
    let exited: number | undefined;
    apply.on('exit', code => { exited = code ?? 1; });
    const jobs: Promise<void>[] = [];
    while (exited === undefined) {
      jobs.push(...this.followStack());
      await sleep(500);
    }
    jobs.push(...this.followStack());
    await Promise.all(jobs);
    return { status: exited, output };
  }

  /** One look at the stack's Jobs and Deployments (see {@link applyFolder}); returns the Jobs' programs started now. */
  public followStack(): Promise<void>[] {
    const started: Promise<void>[] = [];
    for (const job of this.kubectl.list(['jobs', '-n', STACK_NAMESPACE])) {
      const id = `${job.metadata.name} ${job.metadata.uid}`;
      if (this.jobsRun.has(id)) continue;
      this.jobsRun.add(id);
      started.push(this.runJob(job));
    }
    const deployments = this.kubectl.list(['deployments', '-n', STACK_NAMESPACE]);
    const webhook = deployments.find(d => d.metadata.name === 'serverless-webhook');
    const controller = deployments.find(d => d.metadata.name === 'serverless-ctrl-mngr');
    if (webhook) started.push(this.followDeployment('webhook', webhook));
    if (controller) started.push(this.followDeployment('controller', controller));
    return started;
  }

  private async runJob(job: any): Promise<void> {
    const spec = job.spec.template.spec;
    const name = job.metadata.name.replace(/^serverless-/, '');
    const program = PodProcess.start(this.kubectl, {
      name, namespace: STACK_NAMESPACE, spec, executables: {}, apiServer: this.apiServer,
      workDir: path.join(this.work, 'pods', `${name}-${job.metadata.uid.slice(0, 8)}`),
    });
    const code = await program.exited;
    await program.stop();
    log(`Job ${job.metadata.name}'s program (its own ServiceAccount ${spec.serviceAccountName}, uid ${spec.securityContext?.runAsUser ?? spec.containers[0].securityContext?.runAsUser}): exit ${code}: ${program.log().trim().split('\n').slice(-3).join(' | ')}`);
    if (code !== 0) findings.push(`Job ${job.metadata.name}'s program failed (exit ${code}): ${program.log().trim().split('\n').slice(-5).join(' | ')}`);
  }

  private async followDeployment(which: StackProgram, deployment: any): Promise<void> {
    const template = JSON.stringify(deployment.spec.template);
    const running = this.stackPrograms.get(which);
    if (running && (running.template === template || running.replacing)) return;
    if (running) {
      log(`the ${which} Deployment's Pod template changed: its program on this machine stops, the new one starts`);
      running.replacing = true;
      // Both use the same mount points: the old one removes those it made when it stops, so it stops first.
      const outgoing = which === 'controller' ? this.release.release : undefined;
      await running.process.stop();
      // A second of slack: the audit log's timestamps are the API server's, at whole microseconds.
      if (outgoing) this.outgoing.push({ release: outgoing, from: this.applyStartedAt, to: Date.now() + 1000 });
      if (which === 'controller') this.controllerLogs.push(running.process.log());
      this.processes.splice(this.processes.indexOf(running.process), 1);
    }
    const process = which === 'webhook' ? this.startWebhook(deployment) : this.startController(deployment);
    this.stackPrograms.set(which, { process, template });
  }

  private startWebhook(deployment: any): PodProcess {
    // Two Pods share this machine's network: the webhook's metrics port moves off the controller's 8080.
    const webhook = PodProcess.start(this.kubectl, {
      name: 'webhook', namespace: STACK_NAMESPACE, spec: deployment.spec.template.spec, executables: {}, apiServer: this.apiServer,
      args: a => a.map((arg, i) => (a[i - 1] === '--metrics-port' ? '18080' : arg)),
      workDir: path.join(this.work, 'pods', `webhook-${deployment.metadata.generation}`),
    });
    this.processes.push(webhook);
    const hosts = fs.readFileSync('/etc/hosts', 'utf8');
    if (!new RegExp(`\\s${WEBHOOK_HOST.replace(/\./g, '\\.')}(\\s|$)`, 'm').test(hosts)) {
      this.hostsLine = `127.0.0.1 ${WEBHOOK_HOST} # real-controller run`;
      fs.appendFileSync('/etc/hosts', `${this.hostsLine}\n`);
    }
    log(`webhook program of ConfigMap serverless-webhook-server started (its ServiceAccount, uid ${deployment.spec.template.spec.securityContext?.runAsUser}, read-only root)`);
    return webhook;
  }

  /** Waits until the webhook wrote its caBundle into both configurations. */
  public async webhookReady(): Promise<void> {
    await until('the webhook\'s caBundle in both configurations', 60, () => {
      const [mutating, validating] = WEBHOOK_CONFIGURATIONS.map(([kind, name]) => this.kubectl.list([kind, '--field-selector', `metadata.name=${name}`])[0]);
      return mutating?.webhooks[0].clientConfig.caBundle && validating?.webhooks[0].clientConfig.caBundle;
    });
  }

  /** The CA the webhook program made (its Secret's `ca.crt`, base64), once it made it. */
  public async webhookCa(): Promise<string> {
    return until('the webhook\'s CA in Secret serverless-webhook', 60, () => this.kubectl.list(['secrets', '-n', STACK_NAMESPACE, '--field-selector', 'metadata.name=serverless-webhook'])[0]?.data?.['ca.crt']);
  }

  /** Points the webhook configurations at the program on this machine, by URL: no Pod serves the Service. */
  public pointWebhooksHere(): void {
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

  /** The program of the controller Deployment's release, by the image it names. */
  private releaseOf(deployment: any): ControllerRelease {
    const image: string = deployment.spec.template.spec.containers[0].image;
    const release = image.includes('buildless') ? ServerlessRelease.V1_13_0 : ServerlessRelease.V1_11_1;
    return controllerRelease(release);
  }

  private startController(deployment: any): PodProcess {
    this.release = this.releaseOf(deployment);
    const program = this.programs.get(this.release.release);
    if (!program) throw new Error(`the controller Deployment runs release ${this.release.release}, whose program this run did not unpack`);
    const controller = PodProcess.start(this.kubectl, {
      name: 'controller', namespace: STACK_NAMESPACE, spec: deployment.spec.template.spec,
      executables: { '/app/manager': program },
      imageEnv: this.release.imageEnv,
      apiServer: this.apiServer,
      workDir: path.join(this.work, 'pods', `controller-${this.release.release}-${deployment.metadata.generation}`),
    });
    this.processes.push(controller);
    log(`controller ${this.release.release} started (its ServiceAccount ${deployment.spec.template.spec.serviceAccountName}, uid ${deployment.spec.template.spec.securityContext?.runAsUser}, the Deployment's env and volumes)`);
    return controller;
  }

  private get controller(): PodProcess | undefined {
    return this.stackPrograms.get('controller')?.process;
  }

  /** Waits for the controller's health endpoint. */
  public async controllerReady(): Promise<void> {
    await until('the controller\'s /healthz', 60, () => {
      if (!this.controller) return false;
      if (!this.controller.running) throw new Error(`the controller exited: ${this.controller.log().trim().split('\n').slice(-5).join('\n')}`);
      try {
        return execFileSync('curl', ['-fsS', '--max-time', '2', 'http://127.0.0.1:8090/healthz'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) !== undefined;
      } catch {
        return false;
      }
    });
  }

  /** The stack's dist/ file (1.11.1), or the app synthesized for the release, applied; the webhook then pointed here and the controller up. */
  public async applyStack(): Promise<void> {
    const stack = path.join(this.work, 'stack');
    fs.mkdirSync(stack, { recursive: true });
    if (this.release.release === DEFAULT_RELEASE) {
      fs.copyFileSync(path.join(ROOT, 'dist', '0000-serverless.k8s.yaml'), path.join(stack, '0000-serverless.k8s.yaml'));
    } else {
      const app = path.join(this.work, `default-app-${this.release.release}`);
      synthDefaultApp(app, this.release.release);
      fs.copyFileSync(path.join(app, '0000-serverless.k8s.yaml'), path.join(stack, '0000-serverless.k8s.yaml'));
    }
    const requested = this.release.release;
    const result = await this.applyFolder(stack);
    if (this.release.release !== requested) {
      throw new Error(`the stack synthesized with release ${requested} runs the controller of ${this.release.release} (image ${
        this.kubectl.json(['-n', STACK_NAMESPACE, 'get', 'deployment', 'serverless-ctrl-mngr']).spec.template.spec.containers[0].image}): this checkout's ServerlessStack does not deploy ${requested} yet`);
    }
    log(`apply exited ${result.status}${result.status ? `:\n${result.output}` : `: ${result.output.trim().split('\n').slice(-1)[0]}`}`);
    if (result.status !== 0) throw new Error('kyma-serverless apply of the stack failed');
    await this.webhookReady();
    this.pointWebhooksHere();
    await this.controllerReady();
  }

  /** The controller's log: of every release it ran in this run. */
  public controllerLog(): string {
    return [...this.controllerLogs, this.controller?.log() ?? ''].join('');
  }

  /** The Deployment or Service of a Function, by the audit log's resource and name. */
  private functionOf = (namespace: string, resource: string, name: string): string | undefined => {
    const candidates = resource === 'services' ? [name] : [name.replace(/-[a-z0-9]{5}$/, '')];
    return candidates.map(c => `${namespace}/${c}`).find(k => this.functionKeys.has(k));
  };

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
    for (const o of objects.values()) this.userMade.add(`${o.kind} ${o.metadata.namespace}/${o.metadata.name}`);
    if (missing.length) {
      this.kubectl.apply(missing);
      log(`created what the Functions read: ${missing.map(o => `${o.kind} ${keyOf(o)}`).join(', ')}`);
    }
  }

  /** Applies objects with `kyma-serverless apply`, in its order; fails loudly. */
  public apply(name: string, objects: readonly any[]): void {
    this.ensureKinds(objects);
    for (const fn of objects.filter(isFunction)) this.functionKeys.add(keyOf(fn));
    const result = this.cli(['apply', manifestDir(this.work, name, objects)]);
    if (result.status !== 0) throw new Error(`kyma-serverless apply of ${name} failed:\n${result.output}`);
  }

  /** Notes Functions applied another way (a whole folder, kubectl), for the audit log's counts. */
  public track(functions: readonly any[]): void {
    for (const fn of functions) this.functionKeys.add(keyOf(fn));
  }

  /** The Functions of these keys as the cluster has them. */
  private functionsNow(): Map<string, any> {
    return new Map(this.kubectl.list(['functions.serverless.kyma-project.io', '-A']).map(f => [keyOf(f), f]));
  }

  /** The kinds of the objects that a Function's controller owns, counted (Pods and ReplicaSets are the Deployment's). */
  private children(fn: any): { [kind: string]: number } {
    const kinds = ['configmaps', 'jobs', 'deployments', 'services', 'horizontalpodautoscalers', 'secrets', 'serviceaccounts'];
    const counts: { [kind: string]: number } = {};
    for (const o of this.kubectl.list([kinds.join(','), '-n', fn.metadata.namespace])) {
      if (!(o.metadata.ownerReferences ?? []).some((r: any) => r.kind === FUNCTION_KIND && r.uid === fn.metadata.uid)) continue;
      counts[o.kind] = (counts[o.kind] ?? 0) + 1;
    }
    return counts;
  }

  /**
   * Waits until every Function is running (by the release's meaning, and `done` when given),
   * recording how long each took and how often the controller updated its objects since `auditFrom`
   * (an offset of the audit log).
   */
  public async waitRunning(phase: string, functions: readonly any[], auditFrom: number, since: number,
    done: (fn: any) => boolean = () => true, seconds = 300): Promise<FunctionRun[]> {
    this.track(functions);
    const pending = new Map(functions.map(f => [keyOf(f), f]));
    const results = new Map<string, FunctionRun>();
    const live = new Map<string, any>();
    const deadline = Date.now() + seconds * 1000;
    while (pending.size && Date.now() < deadline) {
      if (!this.controller?.running) throw new Error(`the controller exited: ${this.controllerLog().trim().split('\n').slice(-5).join('\n')}`);
      const now = this.functionsNow();
      for (const [key, fn] of pending) {
        const current = now.get(key);
        if (current && this.release.isRunning(current) && done(current)) {
          results.set(key, runOf(phase, fn, 'Running', (Date.now() - since) / 1000));
          live.set(key, current);
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
    // The audit log is written in batches, a second apart.
    await sleep(2000);
    const counts = updateCounts(this.audit.events(auditFrom), this.controllerUser(), this.functionOf);
    const list = functions.map(f => {
      const run = results.get(keyOf(f))!;
      const count = counts.get(keyOf(f)) ?? { deployment: 0, service: 0, hpa: 0 };
      Object.assign(run, { deploymentUpdates: count.deployment, serviceUpdates: count.service, hpaUpdates: count.hpa });
      const current = live.get(keyOf(f));
      if (current) {
        const children = this.children(current);
        run.children = Object.entries(children).map(([kind, n]) => `${kind} ${n}`).join(', ');
        const expected = this.release.expectedChildren;
        if (expected && run.result === 'Running' && JSON.stringify(Object.entries(children).sort()) !== JSON.stringify(Object.entries(expected).sort())) {
          run.result = `Running, but the controller owns ${run.children || 'nothing'} (expected ${Object.entries(expected).map(([k, n]) => `${k} ${n}`).join(', ')})`;
        }
      }
      if (run.result === 'Running' && count.deployment > MAX_DEPLOYMENT_UPDATES) run.result = `Running after ${count.deployment} Deployment updates (more than ${MAX_DEPLOYMENT_UPDATES})`;
      return run;
    });
    runs.push(...list);
    const bad = list.filter(r => r.result !== 'Running');
    log(`${phase}: ${list.length - bad.length} of ${list.length} Functions Running${bad.length ? `; not: ${bad.map(r => `${r.key} (${r.result})`).join('; ')}` : ''}`);
    return list;
  }

  /** The controller's user, as the audit log names it. */
  public controllerUser(): string {
    const deployment = this.kubectl.list(['deployments', '-n', STACK_NAMESPACE, '--field-selector', 'metadata.name=serverless-ctrl-mngr'])[0];
    return `system:serviceaccount:${STACK_NAMESPACE}:${deployment?.spec.template.spec.serviceAccountName ?? 'serverless-controller-manager'}`;
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
        // Not the controller's: an HPA the Function's constructs wrote for its scale (1.13.0) goes with its app, not with the Function.
        .filter(o => !(kind === 'horizontalpodautoscalers' && !(o.metadata.ownerReferences ?? []).some((r: any) => r.kind === FUNCTION_KIND)))
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

  /** What the audit log says about the stack's ServiceAccounts: the controller's calls, and every RBAC denial. */
  public auditSummary(): { readonly calls: string[]; readonly denied: string[]; readonly switching: string[]; readonly users: string[]; readonly unused: string[] } {
    const events = this.audit.events();
    const users = [...new Set(events.map(e => e.user.username).filter(u => u.startsWith(`system:serviceaccount:${STACK_NAMESPACE}:`)))].sort();
    const user = this.controllerUser();
    const calls = callCounts(events, user).map(c => `${c.call} ×${c.count}${c.denied ? ` (${c.denied} denied)` : ''}`);
    const outgoing = (e: AuditEvent) => e.user.username === user
      && this.outgoing.some(w => w.from <= Date.parse(e.requestReceivedTimestamp) && Date.parse(e.requestReceivedTimestamp) <= w.to);
    const switching = denials(events.filter(outgoing), [user]).map(d => `${d} (the outgoing ${this.outgoing.map(w => w.release).join(', ')} controller)`);
    return { calls, denied: denials(events.filter(e => !outgoing(e)), users), switching, users, unused: unusedGrants(events, user, this.rulesOf(user)) };
  }

  /** The rules of the ClusterRoles and Roles bound to a ServiceAccount user. */
  private rulesOf(user: string): any[] {
    const [, , namespace, name] = user.split(':');
    const bound = (b: any) => (b.subjects ?? []).some((s: any) => s.kind === 'ServiceAccount' && s.name === name && s.namespace === namespace);
    const rules: any[] = [];
    for (const binding of this.kubectl.list(['clusterrolebindings']).filter(bound)) {
      rules.push(...(this.kubectl.list(['clusterroles', '--field-selector', `metadata.name=${binding.roleRef.name}`])[0]?.rules ?? []));
    }
    for (const binding of this.kubectl.list(['rolebindings', '-A']).filter(bound)) {
      const kind = binding.roleRef.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
      rules.push(...(this.kubectl.list([kind, ...(kind === 'roles' ? ['-n', binding.metadata.namespace] : []), '--field-selector', `metadata.name=${binding.roleRef.name}`])[0]?.rules ?? []));
    }
    return rules;
  }

  public async stop(keep: boolean): Promise<void> {
    if (keep) {
      const pids = [...this.processes.map(p => p.pid), this.fakelet?.pid, this.nodeKeeper?.pid].filter(p => p !== undefined).join(' ');
      log(`kept running: KUBECONFIG=${this.kubeconfig}, work folder ${this.work}. To stop: pkill -g for each of ${pids} `
        + `(the stack's programs, fakelet and node-keeper), ${this.controlPlane?.stopCommand ?? 'down.sh --clean'}, and remove the line of ${WEBHOOK_HOST} from /etc/hosts`);
      return;
    }
    for (const p of this.processes) await p.stop();
    this.fakelet?.kill();
    this.nodeKeeper?.kill();
    await this.git?.stop();
    if (this.hostsLine) fs.writeFileSync('/etc/hosts', fs.readFileSync('/etc/hosts', 'utf8').split('\n').filter(l => l !== this.hostsLine).join('\n'));
    this.controlPlane?.stop();
  }
}

export function runOf(phase: string, fn: any, result: string, seconds?: number): FunctionRun {
  const git = fn.spec.source?.gitRepository;
  return {
    phase, key: keyOf(fn), runtime: fn.spec.runtime, source: git ? `git ${git.reference}${git.auth ? ' (auth)' : ''}` : 'inline',
    ...(seconds !== undefined ? { seconds: Math.round(seconds * 10) / 10 } : {}), result,
  };
}

/** The objects of an app's output that are not the stack's (every object of the stack carries its module label; the stack is applied once, from dist/). */
export function appObjects(objects: readonly any[]): any[] {
  return objects.filter(o => o.metadata?.labels?.['kyma-project.io/module'] !== 'serverless');
}

/** The report: every Function's way, then the totals, the audit log's view of RBAC, findings and notes. */
export function report(title: string, run: Run): string {
  const { errors } = errorLines(run.controllerLog());
  const audit = run.auditSummary();
  const lease = run.kubectl.list(['leases', '-n', STACK_NAMESPACE]).map(l => `${l.metadata.name} held by ${l.spec.holderIdentity}`);
  const podsFile = path.join(run.work, 'pods.json');
  const pods: any[] = fs.existsSync(podsFile) ? JSON.parse(fs.readFileSync(podsFile, 'utf8')) : [];
  const images = [...new Set(pods.flatMap(p => [...p.initContainers, ...p.containers].map((c: any) => c.image)))].sort();
  const bad = runs.filter(r => r.result !== 'Running');
  const seconds = runs.filter(r => r.seconds !== undefined).map(r => r.seconds!);
  return [
    `# ${title} (${new Date().toISOString().slice(0, 10)})`,
    '',
    '| phase | Function | runtime | source | s to Running | Deployment updates | Service updates | HPA updates | owned by the Function | result |',
    '|---|---|---|---|---:|---:|---:|---:|---|---|',
    ...runs.map(r => `| ${r.phase} | ${r.key} | ${r.runtime} | ${r.source} | ${r.seconds ?? ''} | ${r.deploymentUpdates ?? ''} | ${r.serviceUpdates ?? ''} | ${r.hpaUpdates ?? ''} | ${r.children ?? ''} | ${r.result} |`),
    '',
    `- Functions: ${runs.length} runs, ${runs.length - bad.length} reached Running within ${MAX_DEPLOYMENT_UPDATES} Deployment updates`
      + `${seconds.length ? ` in ${Math.min(...seconds)} to ${Math.max(...seconds)} s` : ''}; most Deployment updates of one Function: ${Math.max(0, ...runs.map(r => r.deploymentUpdates ?? 0))}.`,
    `- RBAC (audit log of ${audit.users.map(u => u.split(':').pop()).join(', ')}): ${audit.denied.length} denied calls${audit.denied.length ? `: ${audit.denied.slice(0, 10).join('; ')}` : ''}.`,
    ...(audit.switching.length ? [`- RBAC while the release switched: ${audit.switching.length} calls of the outgoing controller denied after the apply wrote the new release's RBAC and before its Pod was replaced (a cluster shows the same until the rollout ends): ${audit.switching.slice(0, 3).join('; ')}.`] : []),
    `- The controller's calls: ${audit.calls.join(', ')}.`,
    `- Granted to the controller and never called: ${audit.unused.join(', ') || 'nothing'}.`,
    `- Controller log: ${errors.length} error lines; Leases: ${lease.join(', ') || 'none'}.`,
    `- Pods the fakelet saw: ${pods.length}; images: ${images.join(', ')}.`,
    ...findings.map(f => `- FINDING: ${f}`),
    ...notes.map(n => `- ${n}`),
    '',
    `Total: ${((Date.now() - started) / 1000).toFixed(0)} s.`,
  ].join('\n');
}

/** Prints and writes the report; sets the exit code from what failed. */
export function finish(title: string, run: Run): void {
  const text = report(title, run);
  process.stdout.write(`\n${text}\n`);
  if (optionValue('report')) fs.writeFileSync(optionValue('report')!, `${text}\n`);
  const { errors } = errorLines(run.controllerLog());
  if (errors.length) log(`controller errors:\n  ${errors.slice(0, 20).join('\n  ')}`);
  if (runs.some(r => r.result !== 'Running') || run.auditSummary().denied.length || findings.length) process.exitCode = 1;
}
