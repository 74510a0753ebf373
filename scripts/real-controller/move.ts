/**
 * `npm run e2e:controller -- --move`: the move of a live system from 1.11.1 to 1.13.0, as a user
 * makes it through Git. One app (the default app's Functions and the coverage app's that both
 * releases accept, with its stack) is synthesized with release 1.11.1 and applied as a whole; its
 * Functions run under the 1.11.1 controller. Then the same app is synthesized with release 1.13.0
 * into the same folder, `kyma-serverless diff` shows what will happen, and `kyma-serverless apply
 * --prune` applies it: the controller Deployment's new Pod template runs upstream's 1.13.0 program,
 * the stack's Jobs run as their Pods would. Every Function must be Running again under 1.13.0, on a
 * Deployment the 1.13.0 controller wrote; nothing of build mode may be left (build Jobs, source
 * ConfigMaps, the controller's HPAs, the runtime ConfigMaps and the registry Secret and
 * ServiceAccount in each namespace, the registry, the `BuildReady` condition); nothing else may go.
 *
 * What is build mode's is told here from the cluster itself, not from the package's own rules: the
 * objects a Function owned besides its Deployment and Service, everything labelled
 * `serverless.kyma-project.io/config`, and the 1.11.1 stack's objects the 1.13.0 stack no longer has.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FUNCTION_KIND, FunctionConditionType, ServerlessRelease } from '../../src/api';
import { ENVIRONMENTS } from '../../src/environments';
import { pointWebhooksAt } from './apps';
import { COVERAGE_NAMESPACES, synthCoverage } from './coverage';
import {
  FunctionRun, Run, WEBHOOK_HOST, WEBHOOK_PORT, findings, finish, isFunction, keyOf, log, notes, objectsOf, sleep,
} from './run';
import { ControllerRelease } from './releases';

const ROOT = path.resolve(__dirname, '..', '..');
const STACK_NAMESPACE = 'kyma-system';
/** Kinds not compared before and after: churn of the cluster's own controllers, and what no kubelet finishes here. */
const CHURN = new Set(['Event', 'Endpoints', 'EndpointSlice', 'Lease', 'ReplicaSet', 'ControllerRevision', 'Pod', 'Node']);

/** An object of the snapshot, by `Kind namespace/name`. */
type Snapshot = Map<string, any>;

const idOf = (o: any) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Every object of the cluster that can be listed and deleted, but the churn. */
function snapshot(run: Run): Snapshot {
  const resources = run.kubectl.run(['api-resources', '--verbs=list,delete', '-o', 'name']).split('\n').map(r => r.trim()).filter(Boolean)
    .filter(r => !/^(events|endpoints|endpointslices|leases|replicasets|controllerrevisions|pods|nodes)(\.|$)/.test(r));
  const items: any[] = run.kubectl.json(['get', resources.join(','), '-A']).items ?? [];
  return new Map(items.filter(o => !CHURN.has(o.kind)).map(o => [idOf(o), o]));
}

/** Why an object is build mode's, or undefined. */
function buildModeReason(o: any, stackOnlyIn111: Set<string>): string | undefined {
  const owners: any[] = o.metadata.ownerReferences ?? [];
  if (owners.some(r => r.kind === FUNCTION_KIND) && !['Deployment', 'Service'].includes(o.kind)) return `owned by Function ${owners.find(r => r.kind === FUNCTION_KIND).name}`;
  const config = o.metadata.labels?.['serverless.kyma-project.io/config'];
  if (config) return `labelled serverless.kyma-project.io/config=${config}`;
  if (stackOnlyIn111.has(idOf(o))) return 'in the 1.11.1 stack, not in the 1.13.0 one';
  return undefined;
}

/** The Deployment of a Function as the 1.13.0 controller writes it: the runtime installs sources at start from an emptyDir `sources`, rolled out. */
function onBuildlessDeployment(run: Run, fn: any): boolean {
  const deployment = run.kubectl.list(['deployments', '-n', fn.metadata.namespace, '-l', `serverless.kyma-project.io/function-name=${fn.metadata.name}`])[0];
  const spec = deployment?.spec.template.spec;
  const buildless = (spec?.volumes ?? []).some((v: any) => v.name === 'sources' && v.emptyDir);
  const status = deployment?.status ?? {};
  return buildless && deployment.metadata.generation === status.observedGeneration
    && status.updatedReplicas === deployment.spec.replicas && status.availableReplicas === deployment.spec.replicas;
}

/** The move: see the file's comment. */
export async function runMove(run: Run, releases: readonly ControllerRelease[]): Promise<void> {
  const namespaces = ['default-functions', ...COVERAGE_NAMESPACES];
  await run.start(namespaces, releases);
  const publicRepo = run.gitServer.create('functions.git', {
    'node/handler.js': 'exports.main = () => "Hello from Git";\n',
    'node/package.json': '{ "name": "git-node", "dependencies": {} }\n',
    'python/handler.py': 'def main(event, context):\n    return "Hello from Git"\n',
  });
  publicRepo.tag('v1');
  const privateRepo = run.gitServer.create('private/app.git', { 'handler.js': 'exports.main = () => "private";\n' });
  const git = { publicUrl: publicRepo.url, privateUrl: privateRepo.url };
  const folder = path.join(run.work, 'app');
  const scratch = path.join(run.work, 'app-folders');
  const webhookBase = `https://${WEBHOOK_HOST}:${WEBHOOK_PORT}`;
  const synth = (release: ServerlessRelease, caBundle?: string) => {
    fs.rmSync(folder, { recursive: true, force: true });
    synthCoverage(folder, scratch, git, { release, portable: true, defaultFunctions: path.join(ROOT, 'functions'), stack: ENVIRONMENTS.find(e => e.name === '')!.stack });
    const changed = pointWebhooksAt(folder, webhookBase, caBundle);
    const objects = objectsOf(folder);
    log(`synthesized the app with release ${release}: ${objects.length} objects, ${objects.filter(isFunction).length} Functions; ${changed} webhooks pointed at this machine`);
    return objects;
  };

  // 1. The system under 1.11.1.
  const objects111 = synth(ServerlessRelease.V1_11_1);
  const functions = objects111.filter(isFunction);
  for (const ns of namespaces) run.kubectl.run(['create', 'namespace', ns]);
  run.ensureKinds(objects111);
  run.createReferenced(functions);
  run.track(functions);
  let since = Date.now();
  let auditFrom = run.audit.offset;
  let result = await run.applyFolder(folder);
  if (result.status !== 0 && /webhook/i.test(result.output)) {
    // The webhook program makes its CA when it starts: until the folder's configurations carry it, Functions are refused. Then apply again, as a sync retries.
    log(`apply: Functions refused before the folder's webhook configurations carry the webhook's CA: ${result.output.trim().split('\n').slice(-1)[0].slice(0, 200)}`);
    pointWebhooksAt(folder, webhookBase, await run.webhookCa());
    result = await run.applyFolder(folder);
  }
  log(`apply (1.11.1) exited ${result.status}: ${result.output.trim().split('\n').slice(-1)[0]}`);
  if (result.status !== 0) throw new Error(`kyma-serverless apply of the 1.11.1 app failed:\n${result.output}`);
  await run.controllerReady();
  await run.waitRunning('move 1: 1.11.1', functions, auditFrom, since);
  const before = snapshot(run);

  // 2. The same app with release 1.13.0: diff, then apply --prune.
  const objects113 = synth(ServerlessRelease.V1_13_0, await run.webhookCa());
  const in113 = new Set(objects113.map(idOf));
  const stackOnlyIn111 = new Set(objects111.filter(o => !in113.has(idOf(o)) && !['Namespace', 'CustomResourceDefinition'].includes(o.kind)).map(idOf));
  const diff = run.cli(['diff', folder]);
  fs.writeFileSync(path.join(run.work, 'diff.txt'), diff.output);
  log(`kyma-serverless diff exited ${diff.status}; ${diff.output.split('\n').length} lines, in ${path.join(run.work, 'diff.txt')}`);
  process.stdout.write(`${diff.output.split('\n').slice(0, 80).map(l => `    | ${l}`).join('\n')}\n`);
  const leftBehind = [...before.values()].filter(o => buildModeReason(o, stackOnlyIn111));
  const unnamed = leftBehind.filter(o => !diff.output.includes(o.metadata.name));
  if (diff.status > 1) findings.push(`move: kyma-serverless diff failed (exit ${diff.status}): ${diff.output.trim().split('\n').slice(-3).join(' | ')}`);
  if (unnamed.length) findings.push(`move: kyma-serverless diff does not name ${unnamed.length} of the ${leftBehind.length} objects of build mode: ${unnamed.map(idOf).slice(0, 30).join(', ')}`);
  else notes.push(`move: kyma-serverless diff named all ${leftBehind.length} objects of build mode in the cluster`);

  since = Date.now();
  auditFrom = run.audit.offset;
  result = await run.applyFolder(folder, ['--prune', '--timeout', '2m']);
  log(`apply --prune (1.13.0) exited ${result.status}: ${result.output.trim().split('\n').slice(-1)[0]}`);
  fs.writeFileSync(path.join(run.work, 'apply-1.13.0.txt'), result.output);
  if (result.status !== 0) findings.push(`move: kyma-serverless apply --prune of the 1.13.0 app failed: ${result.output.trim().split('\n').slice(-5).join(' | ')}`);
  if (run.release.release !== ServerlessRelease.V1_13_0) throw new Error(`after the apply, the controller Deployment still runs ${run.release.release}`);
  await run.controllerReady();
  const moved: FunctionRun[] = await run.waitRunning('move 2: 1.13.0', functions, auditFrom, since, fn => onBuildlessDeployment(run, fn));

  // 3. What is left, and what went. Whatever deletes the leftovers may still be at work: give it a minute.
  let after = snapshot(run);
  const leftovers = () => [...after.values()].flatMap(o => {
    const reason = before.has(idOf(o)) ? buildModeReason(o, stackOnlyIn111) : undefined;
    return reason ? [`${idOf(o)} (${reason})`] : [];
  });
  for (let i = 0; i < 60 && leftovers().length; i++) {
    await sleep(1000);
    after = snapshot(run);
  }
  const buildReady = run.kubectl.list(['functions.serverless.kyma-project.io', '-A'])
    .filter(f => (f.status?.conditions ?? []).some((c: any) => c.type === FunctionConditionType.BUILD_READY)).map(keyOf);
  const gone = [...before.values()].filter(o => !after.has(idOf(o)));
  const unexpected = gone.filter(o => !buildModeReason(o, stackOnlyIn111));
  const deleted = gone.filter(o => buildModeReason(o, stackOnlyIn111));
  // Objects of Function namespaces that stayed and are neither the app's, the Functions' Deployments and Services, the user's nor the namespace's own.
  const userMade = run.userMade;
  const stayed = [...after.values()].filter(o => before.has(idOf(o)) && namespaces.includes(o.metadata.namespace)
    && !in113.has(idOf(o)) && !userMade.has(idOf(o)) && o.kind !== FUNCTION_KIND
    && !((o.metadata.ownerReferences ?? []).some((r: any) => r.kind === FUNCTION_KIND) && ['Deployment', 'Service'].includes(o.kind))
    && !(o.kind === 'ServiceAccount' && o.metadata.name === 'default') && !(o.kind === 'ConfigMap' && o.metadata.name === 'kube-root-ca.crt'));
  const keptInStack = [...after.values()].filter(o => before.has(idOf(o)) && o.metadata.namespace === STACK_NAMESPACE && !in113.has(idOf(o)) && !buildModeReason(o, stackOnlyIn111));

  const left = leftovers();
  log(`move: ${deleted.length} objects of build mode deleted; left: ${left.length}; deleted besides: ${unexpected.length}; Functions with BuildReady: ${buildReady.length}`);
  notes.push(`move: deleted, of build mode (${deleted.length}): ${summarize(deleted)}`);
  if (left.length) findings.push(`move: build mode left ${left.length} objects: ${left.join(', ')}`);
  if (buildReady.length) findings.push(`move: the BuildReady condition stayed in the status of ${buildReady.join(', ')}`);
  if (unexpected.length) findings.push(`move: deleted that was not build mode's: ${unexpected.map(idOf).join(', ')}`);
  if (stayed.length) findings.push(`move: in Function namespaces, kept though neither the app's nor the Functions' Deployments and Services: ${stayed.map(idOf).join(', ')}`);
  if (keptInStack.length) notes.push(`move: kept in ${STACK_NAMESPACE}, not in the 1.13.0 manifests (made at run time): ${keptInStack.map(idOf).join(', ')}`);
  const seconds = moved.filter(r => r.seconds !== undefined).map(r => r.seconds!);
  if (seconds.length) notes.push(`move: every Function Running again under 1.13.0 ${Math.min(...seconds)} to ${Math.max(...seconds)} s after apply --prune started (per Function: table, phase "move 2")`);
  finish('The move of a live system from 1.11.1 to 1.13.0 under upstream\'s controllers', run);
}

function summarize(objects: readonly any[]): string {
  const byKind = new Map<string, number>();
  for (const o of objects) byKind.set(o.kind, (byKind.get(o.kind) ?? 0) + 1);
  return [...byKind.entries()].map(([kind, n]) => `${kind} ${n}`).join(', ');
}
