/**
 * The output synced by the GitOps engines' own code, on a real API server, with upstream's Function
 * Controller of each release, fakelet, and our webhook program in the loop (`npm run e2e:gitops`;
 * not in CI: it needs ../shared/k8s-local's kube-apiserver built from source, root, the drivers
 * `/tmp/fluxsync` and `/tmp/argosync` of ../shared/gitops-engines, and some minutes).
 *
 * For each release (1.11.1, 1.13.0) and each engine, on a fresh control plane:
 * - "Git" is a folder: `dist/` of the default app plus a coverage namespace (a Function exposed
 *   through an APIRule with a Subscription, and one with env and replicas), synthesized by this
 *   checkout. A commit is a new synth into the same folder.
 * - Flux: `fluxsync` (kustomize-controller v1.9's build, staged server-side apply, kstatus and CEL
 *   health) syncs `flux/stack`, `flux/functions` and `flux/reach` in that order, each with the
 *   `healthCheckExprs` of `fluxHealthChecks(release)`, as `FluxKustomizationStages` orders them.
 *   The reach stage is first synced on a cluster without the APIRule and Subscription CRDs.
 * - Argo CD: `argosync` (Argo CD v3.5.1's gitops-engine: waves, health, prune) syncs `dist/` with
 *   the Function health Lua of `argoCdHealthLua(release)`.
 * - Checks: the first sync converges and every Function is Current / Healthy by the engine; a second
 *   sync changes nothing; a Function that fails (a Git source nobody serves) is Failed / Degraded,
 *   with its message under Argo CD, while the others stay healthy; under 1.11.1, the move to 1.13.0
 *   (a commit of the new output, synced) ends healthy with nothing of build mode left.
 *
 * What stands in for a cluster (test aids, not the engines): fakelet for the kubelets; the stack's
 * programs run on this machine as their Pods specify (scripts/real-controller); the webhook Service's
 * Endpoints point at this machine (fakelet's Pods have loopback IPs, which Endpoints refuse); a
 * PersistentVolume for the registry's claim (no provisioner here); upstream's APIRule and
 * Subscription CRDs, with a stand-in for the API Gateway controller and the eventing manager that
 * writes their status once the Function's Service exists (neither module runs here); for Flux,
 * the garbage collection of objects a commit removed (fluxsync has no inventory); for Argo CD, the
 * prune of objects a commit removed (argosync syncs with prune off) and no HorizontalPodAutoscalers (no metrics API runs here, so Argo CD counts them Degraded).
 *
 * Usage: npm run e2e:gitops -- [--release 1.11.1|1.13.0] [--engine flux|argo] [--report FILE] [--keep]
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  EndpointAuth, FunctionFolder, FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack,
  argoCdHealthLua, fluxHealthChecks, ARGO_CD_FUNCTION_HEALTH_KEY,
} from '../../src';
import { RELEASES, ServerlessRelease, parseRelease } from '../../src/api';
import { objectKindsOf } from '../../src/api/labels';
import { ENVIRONMENTS } from '../../src/environments';
import { Run, findings, isFunction, keyOf, log, notes, objectsOf, sleep } from '../real-controller/run';
import { controllerRelease } from '../real-controller/releases';

const ROOT = path.resolve(__dirname, '..', '..');
const FLUXSYNC = process.env.FLUXSYNC ?? '/tmp/fluxsync';
const ARGOSYNC = process.env.ARGOSYNC ?? '/tmp/argosync';
const ENGINES_DIR = process.env.GITOPS_ENGINES ?? [path.resolve(ROOT, '..', 'shared', 'gitops-engines'), path.resolve(ROOT, '..', '..', 'shared', 'gitops-engines')]
  .find(d => fs.existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', 'gitops-engines');
const REFERENCE = process.env.UPSTREAM_REFERENCE ?? [path.resolve(ROOT, '..', 'shared', 'reference'), path.resolve(ROOT, '..', '..', 'shared', 'reference')]
  .find(d => fs.existsSync(d)) ?? path.resolve(ROOT, '..', 'shared', 'reference');
const COVERAGE = 'gitops-coverage';
const NAMESPACES = ['default-functions', COVERAGE];
const STAGES = ['stack', 'functions', 'reach'] as const;
/** This machine's address outside loopback, which Endpoints accept: the webhook program listens on every interface. */
const HOST_IP = process.env.HOST_IP ?? '192.0.2.2';

type Engine = 'flux' | 'argo';

const args = process.argv.slice(2);
const optionValue = (name: string) => (args.indexOf(`--${name}`) >= 0 ? args[args.indexOf(`--${name}`) + 1] : undefined);

/** One line of the report: an engine, a release, what was done, and what came of it. */
interface Result {
  readonly engine: Engine;
  readonly release: string;
  readonly step: string;
  readonly ok: boolean;
  readonly detail: string;
}
const results: Result[] = [];
/** What each engine printed, per step, for docs/gitops.md. */
const printed: Array<{ engine: Engine; release: string; step: string; text: string }> = [];

function record(engine: Engine, release: string, step: string, ok: boolean, detail: string): void {
  results.push({ engine, release, step, ok, detail });
  log(`${ok ? 'OK  ' : 'FAIL'} ${engine} ${release} ${step}: ${detail}`);
  if (!ok) findings.push(`${engine} ${release} ${step}: ${detail}`);
}

// ---------------------------------------------------------------------------------------------
// The app

const NODE_HANDLER = 'exports.main = (event) => `orders: ${JSON.stringify(event.data ?? {})}`;\n';
const PYTHON_HANDLER = 'def main(event, context):\n    return "report"\n';

/**
 * Synthesizes "the repository": the default app's environment (the stack of the release, the
 * Functions of functions/) and the coverage namespace, with the failing Function when asked.
 */
function synthRepo(outdir: string, release: ServerlessRelease, failing: boolean): void {
  fs.rmSync(outdir, { recursive: true, force: true });
  const environment = ENVIRONMENTS.find(e => e.name === '')!;
  const app = new GitOpsApp({ outdir });
  const stack = new ServerlessStack(app, 'serverless', { ...environment.stack, release });
  const defaults = new FunctionNamespace(app, 'default-functions', { stack });
  for (const folder of FunctionFolder.discover(path.join(ROOT, 'functions'))) folder.addTo(defaults);
  const coverage = new FunctionNamespace(app, COVERAGE, { stack });
  const orders = new KymaFunction(coverage, 'orders', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromInline(NODE_HANDLER, '{ "name": "orders", "dependencies": {} }'),
    scale: { minReplicas: 1, maxReplicas: 3 },
  });
  orders.expose({ host: 'orders', auth: EndpointAuth.none() });
  orders.subscribe({ source: 'shop', types: ['order.created.v1'] });
  const report = new KymaFunction(coverage, 'report', {
    runtime: FunctionRuntime.PYTHON_312,
    source: FunctionSource.fromInline(PYTHON_HANDLER),
    replicas: 2,
  });
  report.expose({ host: 'report', auth: EndpointAuth.none() });
  if (failing) {
    // Its controller cannot fetch the source: nothing serves this repository.
    new KymaFunction(coverage, 'broken', {
      runtime: FunctionRuntime.NODEJS_22,
      source: FunctionSource.fromGitRepository({ url: 'http://127.0.0.1:9/nothing-here.git', reference: 'main' }),
    });
  }
  app.synth();
}

// ---------------------------------------------------------------------------------------------
// The cluster's stand-ins

/** Upstream's APIRule and Subscription CRDs (Kyma's API Gateway and Eventing modules). */
function moduleCrds(): any[] {
  return objectsOf(path.join(REFERENCE, 'upstream')).filter(o => o.kind === 'CustomResourceDefinition'
    && ['APIRule', 'Subscription'].includes(o.spec.names.kind));
}

/** A PersistentVolume the registry's claim binds to, as a provisioner would make one. */
const REGISTRY_VOLUME = {
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'gitops-run-registry' },
  spec: { capacity: { storage: '20Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/gitops-run-registry' }, persistentVolumeReclaimPolicy: 'Retain' },
};

/**
 * What the cluster has before any sync: storage for the registry's claim, and the CRDs of Istio
 * (stand-ins: nothing here reconciles them), which Function namespaces need in any case (sidecar
 * injection, the policies synth writes beside Functions). Not the Kyma modules' CRDs.
 */
function prerequisites(run: Run, dist: string): void {
  run.kubectl.apply([REGISTRY_VOLUME], 'gitops-run');
  run.ensureKinds(objectsOf(dist, true).filter(o => o.apiVersion.startsWith('security.istio.io/') || o.apiVersion.startsWith('networking.istio.io/')));
}

class Cluster {
  private webhookEndpointsSet = false;
  private lastModules = 0;

  constructor(public readonly run: Run) {}

  /** One round of what the cluster would do meanwhile; returns the promises of Jobs' programs started. */
  public tick(): Promise<void>[] {
    const started = this.run.followStack();
    this.webhookEndpoints();
    if (Date.now() - this.lastModules > 2000) {
      this.lastModules = Date.now();
      this.modules();
    }
    return started;
  }

  /** The webhook Service's Endpoints: this machine's address and the program's port. */
  private webhookEndpoints(): void {
    if (this.webhookEndpointsSet) return;
    const service = this.run.kubectl.list(['services', '-n', 'kyma-system', '--field-selector', 'metadata.name=serverless-webhook'])[0];
    if (!service) return;
    const ports = service.spec.ports.map((p: any) => ({ name: p.name, port: p.name === 'https-webhook' ? 8443 : 18080, protocol: 'TCP' }));
    this.run.kubectl.apply([{ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'serverless-webhook', namespace: 'kyma-system' }, subsets: [{ addresses: [{ ip: HOST_IP }], ports }] }], 'gitops-run');
    this.webhookEndpointsSet = true;
    log(`Endpoints kyma-system/serverless-webhook -> ${HOST_IP}:8443 (the webhook program on this machine)`);
  }

  /** What the API Gateway controller and the eventing manager would write, once the Function's Service exists. */
  private modules(): void {
    let rules: any[] = [];
    let subscriptions: any[] = [];
    try {
      rules = this.run.kubectl.list(['apirules.gateway.kyma-project.io', '-A']);
      subscriptions = this.run.kubectl.list(['subscriptions.eventing.kyma-project.io', '-A']);
    } catch {
      return;
    }
    const serviceExists = (namespace: string, name: string) => this.run.kubectl.list(['services', '-n', namespace, '--field-selector', `metadata.name=${name}`]).length > 0;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    for (const rule of rules) {
      if (rule.status?.state === 'Ready') continue;
      const ready = serviceExists(rule.metadata.namespace, rule.spec.service.name);
      const status = ready ? { state: 'Ready', description: 'Reconciled successfully', lastProcessedTime: now }
        : { state: 'Processing', description: `Service ${rule.spec.service.name} not found yet (stand-in)`, lastProcessedTime: now };
      if (rule.status?.state === status.state) continue;
      this.patchStatus('apirules.gateway.kyma-project.io', rule, status);
    }
    for (const subscription of subscriptions) {
      if (subscription.status?.ready === true) continue;
      const host = new URL(subscription.spec.sink).hostname.split('.');
      const ready = serviceExists(host[1], host[0]);
      const status = {
        ready,
        types: subscription.spec.types.map((t: string) => ({ originalType: t, cleanType: t })),
        conditions: [
          { type: 'Subscription active', status: ready ? 'True' : 'False', lastTransitionTime: now,
            reason: ready ? 'NATS Subscription active' : 'NATS Subscription not active',
            ...(ready ? {} : { message: `Sink validation failed: service ${host[0]}.${host[1]} not found in the cluster` }) },
          { type: 'Subscription spec valid', status: 'True', lastTransitionTime: now, reason: 'Subscription spec has no validation errors' },
        ],
      };
      if (subscription.status && !ready) continue;
      this.patchStatus('subscriptions.eventing.kyma-project.io', subscription, status);
    }
  }

  private patchStatus(resource: string, object: any, status: object): void {
    try {
      this.run.kubectl.run(['patch', resource, object.metadata.name, '-n', object.metadata.namespace, '--subresource=status', '--type=merge',
        '--field-manager=module-stand-in', '-p', JSON.stringify({ status })]);
    } catch (e) {
      log(`stand-in status of ${object.kind} ${keyOf(object)}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
}

/** Runs an engine's driver while the cluster does its part; returns its exit code, output and wall time. */
async function drive(cluster: Cluster, program: string, programArgs: readonly string[]): Promise<{ status: number; output: string; seconds: number }> {
  const started = Date.now();
  const child: ChildProcess = spawn(program, [...programArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', chunk => { output += chunk; });
  child.stderr!.on('data', chunk => { output += chunk; });
  let exited: number | undefined;
  child.on('exit', code => { exited = code ?? 1; });
  const jobs: Promise<void>[] = [];
  while (exited === undefined) {
    jobs.push(...cluster.tick());
    await sleep(1000);
  }
  await Promise.all(jobs);
  return { status: exited, output, seconds: (Date.now() - started) / 1000 };
}

// ---------------------------------------------------------------------------------------------
// Flux

/** The Functions the repository holds. */
function functionsOf(dist: string): any[] {
  return objectsOf(dist).filter(isFunction);
}

/** `Kind/ns/name` of an object, as fluxsync prints it. */
const fluxId = (o: any) => `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/** The change counts of a fluxsync apply (`apply: map[configured:1 created:3 unchanged:40]`). */
function fluxCounts(output: string): { [action: string]: number } {
  const line = output.split('\n').reverse().find(l => l.startsWith('apply: map['));
  const counts: { [action: string]: number } = {};
  for (const m of (line ?? '').matchAll(/(\w+):(\d+)/g)) counts[m[1]] = Number(m[2]);
  return counts;
}

/** The objects a fluxsync apply changed (created or configured), as it prints them. */
function fluxChanged(output: string): string[] {
  return output.split('\n').filter(l => /^ {2}\S+ (created|configured)$/.test(l)).map(l => l.trim());
}

async function fluxSync(cluster: Cluster, dist: string, exprs: string, stage: string, extra: readonly string[] = []) {
  return drive(cluster, FLUXSYNC, ['--kubeconfig', cluster.run.kubeconfig, '--path', path.join(dist, 'flux', stage), '--name', `kyma-serverless-${stage}`,
    '--health-exprs', exprs, '--timeout', '6m', ...extra]);
}

/** kstatus of every object of a stage by Flux's own poller (fluxsync --status). */
async function fluxStatus(cluster: Cluster, dist: string, exprs: string, stage: string): Promise<string> {
  return (await fluxSync(cluster, dist, exprs, stage, ['--status'])).output;
}

/** Flux's garbage collection of what a commit removed (fluxsync keeps no inventory): objects of the old build that the new one lacks, deleted. */
function fluxPrune(cluster: Cluster, before: readonly any[], after: readonly any[]): string[] {
  const keep = new Set(after.map(fluxId));
  const gone = before.filter(o => !keep.has(fluxId(o))).reverse();
  for (const o of gone) {
    const ref = `${o.kind.toLowerCase()}${o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : ''}/${o.metadata.name}`;
    try {
      cluster.run.kubectl.run(['delete', ref, ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []), '--wait=false', '--ignore-not-found']);
    } catch (e) {
      log(`prune ${fluxId(o)}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return gone.map(fluxId);
}

/** The objects of every stage, as Flux's build renders them (kubectl kustomize with Flux's load restrictions). */
function stageObjects(dist: string): any[] {
  return STAGES.flatMap(stage => parseAllDocuments(execFileSync('kubectl', ['kustomize', '--load-restrictor', 'LoadRestrictionsNone', path.join(dist, 'flux', stage)],
    { encoding: 'utf8' })).map(d => d.toJS()).filter(Boolean));
}

/** kstatus per object from `fluxsync --status` lines such as `Function/ns/name: Current: ...`. */
function statusLines(output: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of output.split('\n')) {
    const m = /^\s*(\S+\/\S+):?\s+(Current|InProgress|Failed|Unknown|NotFound|Terminating)\b(.*)$/.exec(line);
    if (m) map.set(m[1].replace(/:$/, ''), `${m[2]}${m[3]}`.trim());
  }
  return map;
}

/**
 * `kyma-serverless status -A` while the Functions are synced and the reach stage failed for want of
 * the modules' CRDs: every Function whose annotation names an APIRule or a Subscription fails at
 * reach, its line naming the CRD and the module, and each kind is said once after the table with
 * the module's fix; no other Function is named.
 */
function statusWithoutModules(run: Run, dist: string, release: ServerlessRelease): void {
  const status = run.cli(['status', '-A']);
  printed.push({ engine: 'flux', release, step: 'kyma-serverless status -A, the reach stage failed without the APIRule and Subscription CRDs', text: status.output });
  const lines = status.output.split('\n');
  const needs = (fn: any, kind: string) => objectKindsOf(fn.metadata.annotations).some(k => k.startsWith(`${kind}.`));
  const wrong: string[] = [];
  for (const [kind, crd, module] of [['APIRule', 'apirules.gateway.kyma-project.io', 'Kyma\'s api-gateway module'],
    ['Subscription', 'subscriptions.eventing.kyma-project.io', 'Kyma\'s eventing module']]) {
    const needing = functionsOf(dist).filter(fn => needs(fn, kind)).map(keyOf).sort();
    const summary = lines.find(l => l.startsWith(`The cluster does not serve ${crd}, so the ${kind}s of `)) ?? '';
    const named = /\(([^)]*)\)/.exec(summary)?.[1].split(', ').sort() ?? [];
    if (JSON.stringify(named) !== JSON.stringify(needing) || !summary.includes(module)) wrong.push(`${kind}: needed by ${needing.join(', ')}, named ${summary || 'nowhere'}`);
  }
  const failedAtReach = functionsOf(dist).filter(fn => needs(fn, 'APIRule') || needs(fn, 'Subscription'))
    .filter(fn => !lines.some(l => new RegExp(`^${fn.metadata.namespace}\\s+${fn.metadata.name}\\s.*\\breach\\s+failed\\b.*cannot exist: the cluster does not serve`).test(l)));
  for (const fn of failedAtReach) wrong.push(`${keyOf(fn)}: no line says its objects cannot exist`);
  record('flux', release, 'status names the missing modules', status.status === 1 && !wrong.length,
    wrong.length ? wrong.join('; ') : `exit ${status.status}: ${lines.filter(l => l.startsWith('The cluster does not serve')).join(' | ')}`);
}

async function fluxScenario(run: Run, release: ServerlessRelease, moveTo?: ServerlessRelease): Promise<void> {
  const cluster = new Cluster(run);
  const dist = path.join(run.work, 'repo', 'dist');
  const exprs = path.join(run.work, 'health-exprs.json');
  const writeExprs = (r: ServerlessRelease) => fs.writeFileSync(exprs, JSON.stringify(fluxHealthChecks(r), null, 2));
  writeExprs(release);
  synthRepo(dist, release, false);
  prerequisites(run, dist);

  // 1. First sync: the three stages in order, the reach stage first without the modules' CRDs.
  let objects = 0;
  let seconds = 0;
  for (const stage of STAGES) {
    if (stage === 'reach') {
      const without = await fluxSync(cluster, dist, exprs, stage);
      printed.push({ engine: 'flux', release, step: 'reach stage without the APIRule and Subscription CRDs', text: without.output });
      // Flux's dry run names the first object of a kind the cluster does not serve: an APIRule or a Subscription.
      const named = /no matches for kind "(APIRule|Subscription)"/.test(without.output) && without.status !== 0;
      record('flux', release, 'missing CRDs stop only the reach stage', named && results.every(r => r.engine !== 'flux' || r.release !== release || r.ok),
        `exit ${without.status}: ${without.output.split('\n').find(l => /FAILED|no matches|not found/i.test(l))?.trim() ?? without.output.trim().split('\n').slice(-1)[0]}`);
      statusWithoutModules(run, dist, release);
      run.kubectl.apply(moduleCrds(), 'gitops-run');
      for (const crd of moduleCrds()) run.kubectl.run(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crd.metadata.name}`]);
      log('installed upstream\'s APIRule and Subscription CRDs (the API Gateway and Eventing modules)');
    }
    const result = await fluxSync(cluster, dist, exprs, stage);
    printed.push({ engine: 'flux', release, step: `first sync, stage ${stage}`, text: result.output });
    const built = Number(/build: (\d+) objects/.exec(result.output)?.[1] ?? 0);
    objects += built;
    seconds += result.seconds;
    const passed = result.status === 0 && /health check passed/.test(result.output);
    record('flux', release, `first sync, stage ${stage}`, passed, `${built} objects, ${JSON.stringify(fluxCounts(result.output))}, `
      + `${passed ? `healthy after ${result.seconds.toFixed(0)} s` : `exit ${result.status}: ${result.output.trim().split('\n').filter(l => /FAILED|status:/.test(l)).slice(0, 3).join(' | ')}`}`);
    if (stage === 'stack') {
      await run.webhookReady();
      await run.controllerReady();
    }
    if (stage === 'reach') {
      // With the modules installed and the reach stage synced, status has nothing to say of them.
      const status = run.cli(['status', '-A']);
      printed.push({ engine: 'flux', release, step: 'kyma-serverless status -A, the reach stage synced', text: status.output });
      record('flux', release, 'status names no module once they are installed', status.status === 0 && !/does not serve/.test(status.output),
        `exit ${status.status}: ${status.output.split('\n').filter(l => /^\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\d+\/\d+/.test(l)).map(l => l.split(/\s+/).slice(0, 6).join(' ')).join(' | ')}`);
    }
  }
  record('flux', release, 'first sync', results.filter(r => r.engine === 'flux' && r.release === release && r.step.startsWith('first sync')).every(r => r.ok),
    `${objects} objects synced, every stage healthy after ${seconds.toFixed(0)} s in all`);
  const health = new Map<string, string>();
  for (const stage of STAGES) for (const [k, v] of statusLines(await fluxStatus(cluster, dist, exprs, stage))) health.set(k, v);
  const functions = functionsOf(dist);
  const notCurrent = functions.filter(f => !(health.get(fluxId(f)) ?? '').startsWith('Current'));
  record('flux', release, 'every Function Current', notCurrent.length === 0, functions.map(f => `${fluxId(f)}: ${health.get(fluxId(f)) ?? 'not reported'}`).join('; '));

  // 2. A second sync changes nothing.
  let changed: string[] = [];
  const before = versionsOf(run, dist);
  for (const stage of STAGES) {
    const again = await fluxSync(cluster, dist, exprs, stage, ['--diff']);
    printed.push({ engine: 'flux', release, step: `second sync, stage ${stage}`, text: again.output });
    changed = [...changed, ...fluxChanged(again.output)];
  }
  const moved = changedBetween(before, versionsOf(run, dist));
  record('flux', release, 'second sync', changed.length === 0 && moved.length === 0,
    `${changed.length} objects changed by the apply${changed.length ? `: ${changed.join(', ')}` : ''}; ${moved.length} objects changed in the cluster (status aside)${moved.length ? `: ${moved.join(', ')}` : ''}`);

  // 3. A Function that fails: committed, synced; the others stay Current.
  synthRepo(dist, release, true);
  const failing = await fluxSync(cluster, dist, exprs, 'functions');
  printed.push({ engine: 'flux', release, step: 'a failing Function committed, stage functions', text: failing.output });
  const after = statusLines((await fluxStatus(cluster, dist, exprs, 'functions')));
  const brokenFailed = /HEALTH CHECK FAILED/.test(failing.output) && /Function\/gitops-coverage\/broken/.test(failing.output) && (after.get(`Function/${COVERAGE}/broken`) ?? '').startsWith('Failed');
  const othersCurrent = functionsOf(dist).filter(f => f.metadata.name !== 'broken').every(f => (after.get(fluxId(f)) ?? '').startsWith('Current'));
  const conditions = run.kubectl.json(['get', 'function', 'broken', '-n', COVERAGE]).status?.conditions ?? [];
  const falseCondition = conditions.find((c: any) => c.status === 'False');
  record('flux', release, 'a failing Function', brokenFailed && othersCurrent,
    `broken: ${after.get(`Function/${COVERAGE}/broken`) ?? 'not reported'} (its ${falseCondition?.type ?? 'conditions'}: ${falseCondition?.message ?? JSON.stringify(conditions)}); others ${othersCurrent ? 'all Current' : 'NOT all Current'}`);
  const beforeFix = stageObjects(dist);
  synthRepo(dist, release, false);
  fluxPrune(cluster, beforeFix, stageObjects(dist));
  const fixed = await fluxSync(cluster, dist, exprs, 'functions');
  record('flux', release, 'the failing Function removed again', fixed.status === 0, fixed.output.trim().split('\n').slice(-1)[0]);

  // 4. The move to 1.13.0: the new output committed and synced, stage by stage.
  if (moveTo) {
    const old = stageObjects(dist);
    synthRepo(dist, moveTo, false);
    writeExprs(moveTo);
    const moved = stageObjects(dist);
    let movedSeconds = 0;
    let movedOk = true;
    for (const stage of STAGES) {
      const result = await fluxSync(cluster, dist, exprs, stage);
      printed.push({ engine: 'flux', release: `${release} -> ${moveTo}`, step: `move, stage ${stage}`, text: result.output });
      movedSeconds += result.seconds;
      movedOk &&= result.status === 0;
      record('flux', `${release}->${moveTo}`, `move, stage ${stage}`, result.status === 0, `${JSON.stringify(fluxCounts(result.output))}, exit ${result.status}${result.status ? `: ${result.output.trim().split('\n').filter(l => /FAILED|status:/.test(l)).slice(0, 3).join(' | ')}` : `, healthy after ${result.seconds.toFixed(0)} s`}`);
      if (stage === 'stack') {
        const pruned = fluxPrune(cluster, old, moved);
        log(`Flux's garbage collection of the commit: ${pruned.length} objects deleted: ${pruned.join(', ')}`);
        await run.controllerReady();
      }
    }
    await buildModeLeft('flux', `${release}->${moveTo}`, run, dist, movedOk, movedSeconds);
  }
}

// ---------------------------------------------------------------------------------------------
// Argo CD

/**
 * Argo CD's prune of what a commit removed (argosync syncs with prune off): the objects of the old
 * output that the new one lacks, deleted, as the Application's automated prune does (last: before
 * the sync here, since nothing of the new output needs them).
 */
function argoPrune(cluster: Cluster, before: readonly any[], after: readonly any[]): string[] {
  return fluxPrune(cluster, before, after);
}

/** The results of an argosync sync: its phase and seconds, per sync. */
function argoSyncs(output: string): Array<{ phase: string; seconds: number; message: string }> {
  return [...output.matchAll(/^== sync \d+: phase (\w+) after (\d+)s: (.*)$/gm)].map(m => ({ phase: m[1], seconds: Number(m[2]), message: m[3] }));
}

/** The last compare's resources: key, sync status and health, from `compare after last sync`. */
function argoCompare(output: string, label = 'compare after last sync'): Map<string, { sync: string; health: string }> {
  const section = output.slice(output.lastIndexOf(`== ${label}`));
  const map = new Map<string, { sync: string; health: string }>();
  for (const line of section.split('\n').slice(1)) {
    const m = /^ {2}(\S+)\s+(Synced|OutOfSync|OutOfSync\(missing\))\s+(.*)$/.exec(line);
    if (m) map.set(m[1], { sync: m[2], health: m[3].trim() });
  }
  return map;
}

const argoKey = (o: any) => `${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * Every object of the repository as the cluster has it, without what controllers write all the
 * while (its status, and the resourceVersion and managedFields such writes move): what a sync changed.
 * The engines' own diff is the other check.
 */
function versionsOf(run: Run, dist: string): Map<string, string> {
  const map = new Map<string, string>();
  const objects = objectsOf(dist);
  const kinds = [...new Set(objects.map(o => `${o.kind.toLowerCase()}${o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : ''}`))];
  for (const live of run.kubectl.list([kinds.join(','), '-A'])) {
    const key = `${live.kind} ${live.metadata.namespace ? `${live.metadata.namespace}/` : ''}${live.metadata.name}`;
    const { status: _status, metadata: { resourceVersion: _rv, managedFields: _mf, ...metadata }, ...rest } = live;
    map.set(key, JSON.stringify({ ...rest, metadata }));
  }
  return map;
}

function changedBetween(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k);
}

async function argoSync(cluster: Cluster, dist: string, lua: string, syncs: number) {
  // No metrics API runs here: Argo CD's own health of a HorizontalPodAutoscaler is then Degraded
  // (FailedGetResourceMetric), as on any cluster without metrics-server, and would stop the sync at
  // their wave. They are left out of Argo CD's syncs (argosync's test aid); Flux's kstatus takes them.
  return drive(cluster, ARGOSYNC, ['--kubeconfig', cluster.run.kubeconfig, '--path', dist, '--function-health-lua', lua, '--syncs', String(syncs), '--timeout', '8m',
    '--skip-kinds', 'HorizontalPodAutoscaler']);
}

async function argoScenario(run: Run, release: ServerlessRelease, moveTo?: ServerlessRelease): Promise<void> {
  const cluster = new Cluster(run);
  const dist = path.join(run.work, 'repo', 'dist');
  const lua = path.join(run.work, 'function-health.lua');
  const writeLua = (r: ServerlessRelease) => fs.writeFileSync(lua, argoCdHealthLua(r)[ARGO_CD_FUNCTION_HEALTH_KEY]);
  writeLua(release);
  synthRepo(dist, release, false);
  prerequisites(run, dist);
  run.kubectl.apply(moduleCrds(), 'gitops-run');

  // 1. The first sync converges; Argo CD does not wait for the health of its last wave, so the
  // compare of the syncs after it (each a sync that changes nothing) tells when all is Healthy.
  const t0 = Date.now();
  const first = await argoSync(cluster, dist, lua, 1);
  printed.push({ engine: 'argo', release, step: 'first sync', text: first.output });
  const syncs = argoSyncs(first.output);
  const objects = Number(/manifests: (\d+) objects/.exec(first.output)?.[1] ?? 0);
  record('argo', release, 'first sync', syncs[0]?.phase === 'Succeeded', `${objects} objects synced, phase ${syncs[0]?.phase} after ${syncs[0]?.seconds} s: ${syncs[0]?.message}`);
  const functions = functionsOf(dist);
  let second: Awaited<ReturnType<typeof argoSync>> | undefined;
  let changed: string[] = [];
  let healthy: Map<string, { sync: string; health: string }> | undefined;
  let healthySeconds = 0;
  for (let i = 0; i < 6 && !healthy; i++) {
    const before = versionsOf(run, dist);
    const startedAt = Date.now();
    const again = await argoSync(cluster, dist, lua, 1);
    if (!second) {
      second = again;
      changed = changedBetween(before, versionsOf(run, dist));
      printed.push({ engine: 'argo', release, step: 'second sync', text: again.output });
    }
    const compare = argoCompare(again.output, 'compare before sync 1');
    if (functions.every(f => (compare.get(argoKey(f))?.health ?? '').startsWith('Healthy'))) {
      healthy = compare;
      healthySeconds = (startedAt - t0) / 1000;
    } else if (i === 5) {
      healthy = undefined;
      record('argo', release, 'every Function Healthy', false, functions.map(f => `${f.metadata.namespace}/${f.metadata.name}: ${compare.get(argoKey(f))?.health ?? 'not reported'}`).join('; '));
    }
  }
  if (healthy) {
    record('argo', release, 'every Function Healthy', true, `by the compare ${healthySeconds.toFixed(0)} s after the first sync began: `
      + functions.map(f => `${f.metadata.namespace}/${f.metadata.name}: ${healthy!.get(argoKey(f))?.health}`).join('; '));
  }
  // 2. The second sync changes nothing: its compare finds nothing OutOfSync, and no object changes (status aside).
  const modified = /== compare before sync 1: modified=(\w+)/.exec(second!.output)?.[1];
  const said = second!.output.split('\n').filter(l => /^ {2}\d+\s+Sync\s.*\s(configured|created)$/.test(l)).map(l => l.trim().split(/\s+/)[2]);
  record('argo', release, 'second sync', modified === 'false' && changed.length === 0 && argoSyncs(second!.output)[0]?.phase === 'Succeeded',
    `compare before it: modified=${modified}; ${changed.length} objects changed${changed.length ? ` (${changed.join(', ')})` : ''}; phase ${argoSyncs(second!.output)[0]?.phase}`
    + `${said.length ? `; kubectl said "configured" for ${said.join(', ')} without changing them` : ''}`);

  // 3. A Function that fails: committed, synced; the routes of the others are applied all the same.
  synthRepo(dist, release, true);
  const failing = await argoSync(cluster, dist, lua, 1);
  printed.push({ engine: 'argo', release, step: 'a failing Function committed', text: failing.output });
  const failingCompare = argoCompare(failing.output);
  const broken = failingCompare.get(`serverless.kyma-project.io/Function/${COVERAGE}/broken`)?.health ?? 'not reported';
  const others = functionsOf(dist).filter(f => f.metadata.name !== 'broken');
  const othersHealthy = others.every(f => (failingCompare.get(argoKey(f))?.health ?? '').startsWith('Healthy'));
  const routes = objectsOf(dist).filter(o => ['APIRule', 'Subscription'].includes(o.kind));
  const routesSynced = routes.every(o => failingCompare.get(argoKey(o))?.sync === 'Synced');
  record('argo', release, 'a failing Function', broken.startsWith('Degraded') && othersHealthy && routesSynced,
    `broken: ${broken}; others ${othersHealthy ? 'all Healthy' : 'NOT all Healthy'}; APIRules and Subscriptions ${routesSynced ? 'all Synced' : 'NOT all Synced'}; sync ${argoSyncs(failing.output)[0]?.phase}`);
  const withBroken = objectsOf(dist);
  synthRepo(dist, release, false);
  argoPrune(cluster, withBroken, objectsOf(dist));
  const fixed = await argoSync(cluster, dist, lua, 1);
  printed.push({ engine: 'argo', release, step: 'the failing Function removed again', text: fixed.output });
  record('argo', release, 'the failing Function removed again (pruned)', argoSyncs(fixed.output)[0]?.phase === 'Succeeded'
    && !argoCompare(fixed.output).has(`serverless.kyma-project.io/Function/${COVERAGE}/broken`), `sync ${argoSyncs(fixed.output)[0]?.phase}: ${argoSyncs(fixed.output)[0]?.message}`);

  // 4. The move: the new output committed and synced.
  if (moveTo) {
    const old = objectsOf(dist);
    synthRepo(dist, moveTo, false);
    writeLua(moveTo);
    const pruned = argoPrune(cluster, old, objectsOf(dist));
    log(`Argo CD's prune of the commit: ${pruned.length} objects deleted: ${pruned.join(', ')}`);
    const t0 = Date.now();
    const moved = await argoSync(cluster, dist, lua, 1);
    printed.push({ engine: 'argo', release: `${release} -> ${moveTo}`, step: 'move: the sync of the commit', text: moved.output });
    const movedSyncs = argoSyncs(moved.output);
    const ok = movedSyncs[0]?.phase === 'Succeeded';
    record('argo', `${release}->${moveTo}`, 'move', ok, `phase ${movedSyncs[0]?.phase} after ${movedSyncs[0]?.seconds} s: ${movedSyncs[0]?.message}`);
    let movedCompare = argoCompare(moved.output);
    let healthySeconds = (Date.now() - t0) / 1000;
    const allHealthy = () => functionsOf(dist).every(f => (movedCompare.get(argoKey(f))?.health ?? '').startsWith('Healthy'));
    for (let i = 0; i < 6 && !allHealthy(); i++) {
      const startedAt = Date.now();
      const again = await argoSync(cluster, dist, lua, 1);
      movedCompare = argoCompare(again.output, 'compare before sync 1');
      healthySeconds = (startedAt - t0) / 1000;
      if (i === 0) printed.push({ engine: 'argo', release: `${release} -> ${moveTo}`, step: 'move: the next sync', text: again.output });
    }
    record('argo', `${release}->${moveTo}`, 'every Function Healthy after the move', allHealthy(),
      `by the compare ${healthySeconds.toFixed(0)} s after the sync of the commit began: `
      + functionsOf(dist).map(f => `${f.metadata.namespace}/${f.metadata.name}: ${movedCompare.get(argoKey(f))?.health ?? 'not reported'}`).join('; '));
    await buildModeLeft('argo', `${release}->${moveTo}`, run, dist, ok, healthySeconds);
  }
}

/** After a move: nothing of build mode left (registry, build Jobs, source ConfigMaps, runtime Dockerfiles, BuildReady, HPAs of the controller). */
async function buildModeLeft(engine: Engine, label: string, run: Run, dist: string, ok: boolean, seconds: number): Promise<void> {
  // The build-mode clean-up Job of the 1.13.0 stack runs once the stack is synced; give it a moment.
  let left: string[] = [];
  for (let i = 0; i < 30; i++) {
    left = [
      ...run.kubectl.list(['deployments', '-n', 'kyma-system']).filter(d => /docker-registry/.test(d.metadata.name)).map(d => `Deployment ${d.metadata.name}`),
      ...run.kubectl.list(['configmaps', '-A', '-l', 'serverless.kyma-project.io/managed-by=function-controller']).map(c => `ConfigMap ${keyOf(c)}`),
      ...run.kubectl.list(['jobs', '-A', '-l', 'serverless.kyma-project.io/managed-by=function-controller']).map(j => `Job ${keyOf(j)}`),
      ...run.kubectl.list(['configmaps', '-n', 'kyma-system']).filter(c => c.metadata.name.startsWith('dockerfile-')).map(c => `ConfigMap ${c.metadata.name}`),
      ...run.kubectl.list(['functions.serverless.kyma-project.io', '-A']).filter(f => (f.status?.conditions ?? []).some((c: any) => c.type === 'BuildReady')).map(f => `BuildReady of Function ${keyOf(f)}`),
    ];
    if (!left.length) break;
    await sleep(2000);
  }
  const running = run.kubectl.list(['functions.serverless.kyma-project.io', '-A']);
  const notRunning = running.filter(f => !(f.status?.conditions ?? []).some((c: any) => c.type === 'Running' && c.status === 'True')).map(keyOf);
  record(engine, label, 'nothing of build mode left', ok && left.length === 0 && notRunning.length === 0,
    `${left.length ? `left: ${left.join(', ')}` : 'none left'}; ${running.length - notRunning.length}/${running.length} Functions Running; synced in ${seconds.toFixed(0)} s`);
  void dist;
}

// ---------------------------------------------------------------------------------------------

function versions(): string {
  const manifest = (file: string, module: string) => fs.readFileSync(path.join(ENGINES_DIR, file), 'utf8').split('\n')
    .find(l => l.startsWith(`${module} `))?.trim().split(/\s+/)[1] ?? 'unknown';
  return [
    `fluxsync: fluxcd/pkg/ssa ${manifest('flux.manifest', 'github.com/fluxcd/pkg/ssa')} (kustomize-controller v1.9.0's), `
      + `fluxcd/pkg/runtime ${manifest('flux.manifest', 'github.com/fluxcd/pkg/runtime')} (CEL health), fluxcd/cli-utils ${manifest('flux.manifest', 'github.com/fluxcd/cli-utils')} (kstatus)`,
    `argosync: github.com/argoproj/argo-cd/gitops-engine of Argo CD v3.5.1 (${manifest('argo.manifest', 'github.com/argoproj/argo-cd/gitops-engine')})`,
  ].join('\n');
}

function finalHealth(run: Run): string[] {
  const lines: string[] = [];
  for (const fn of run.kubectl.list(['functions.serverless.kyma-project.io', '-A'])) {
    const conditions = (fn.status?.conditions ?? []).map((c: any) => `${c.type}=${c.status}`).join(',');
    lines.push(`Function ${keyOf(fn)}: ${conditions} observedGeneration=${fn.status?.observedGeneration ?? '-'} generation=${fn.metadata.generation}`);
  }
  for (const rule of run.kubectl.list(['apirules.gateway.kyma-project.io', '-A'])) lines.push(`APIRule ${keyOf(rule)}: ${rule.status?.state ?? 'no status'}`);
  for (const s of run.kubectl.list(['subscriptions.eventing.kyma-project.io', '-A'])) lines.push(`Subscription ${keyOf(s)}: ready=${s.status?.ready ?? 'no status'}`);
  return lines;
}

async function main(): Promise<void> {
  for (const [file, what] of [[FLUXSYNC, 'fluxsync'], [ARGOSYNC, 'argosync']]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: unpack ${what} (see ${ENGINES_DIR}/README.md)`);
  }
  const releases = optionValue('release') ? [parseRelease(optionValue('release')!, '--release')] : [...RELEASES];
  const engines: Engine[] = optionValue('engine') ? [optionValue('engine') as Engine] : ['flux', 'argo'];
  const health: string[] = [];
  for (const release of releases) {
    for (const engine of engines) {
      const moveTo = release === ServerlessRelease.V1_11_1 && !args.includes('--no-move') ? ServerlessRelease.V1_13_0 : undefined;
      const run = new Run(controllerRelease(release));
      const stop = () => run.stop(args.includes('--keep'));
      process.once('SIGINT', () => void stop().finally(() => process.exit(130)));
      try {
        await run.start(NAMESPACES, [controllerRelease(release), ...(moveTo ? [controllerRelease(moveTo)] : [])]);
        if (engine === 'flux') await fluxScenario(run, release, moveTo);
        else await argoScenario(run, release, moveTo);
        health.push(`### ${engine}, ${release}${moveTo ? ` then ${moveTo}` : ''}`, '', ...finalHealth(run).map(l => `- ${l}`), '');
      } catch (e) {
        record(engine, release, 'run', false, (e as Error).message.split('\n').slice(0, 5).join(' | '));
      } finally {
        await stop();
      }
    }
  }
  const report = [
    '# GitOps engines on the real API server', '', '```', versions(), '```', '',
    '| engine | release | step | result | detail |', '|---|---|---|---|---|',
    ...results.map(r => `| ${r.engine} | ${r.release} | ${r.step} | ${r.ok ? 'ok' : 'FAILED'} | ${r.detail.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`),
    '', '## Final state of every object judged', '', ...health,
    '## Notes', '', ...notes.map(n => `- ${n}`), '',
    '## What each engine printed', '',
    ...printed.flatMap(p => [`### ${p.engine}, ${p.release}: ${p.step}`, '', '```', p.text.trim(), '```', '']),
  ].join('\n');
  const file = optionValue('report');
  if (file) fs.writeFileSync(file, report);
  process.stdout.write(`\n${results.map(r => `${r.ok ? 'ok    ' : 'FAILED'} ${r.engine} ${r.release} ${r.step}: ${r.detail}`).join('\n')}\n`);
  if (results.some(r => !r.ok)) process.exitCode = 1;
}

main().catch(e => {
  process.stderr.write(`gitops engines run: ${(e as Error).stack}\n`);
  process.exitCode = 2;
});

