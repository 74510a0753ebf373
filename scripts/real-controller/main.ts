/**
 * The stack and its Functions under upstream's own Function Controller, 1.11.1 or 1.13.0, on a real
 * API server (`npm run e2e:controller`; not in CI: it needs ../shared/k8s-local's kube-apiserver
 * built from source, root, and a few minutes). What runs, and as what:
 *
 * - kube-apiserver and kube-controller-manager v1.28.7 (`up.sh --clean`, from a folder of the run
 *   that adds an audit log of every call of the stack's ServiceAccounts: control-plane.ts), and
 *   `fakelet.mjs` in place of the scheduler and kubelets: it binds the Pods of the namespaces in
 *   use, reports Job Pods succeeded and the others ready, so Jobs complete and Deployments roll out.
 * - The stack of the release applied with `kyma-serverless apply --wait`: `dist/0000-serverless.k8s.yaml`
 *   for 1.11.1, the same app synthesized with `release: 1.13.0` for 1.13.0.
 * - The stack's programs run on this machine as their Pods specify them (see pod.ts): the registry
 *   credentials Job's program (1.11.1), the controller (upstream's program of the release built from
 *   source, as its image runs it: uid 1000, the ConfigMaps mounted where the Deployment mounts them,
 *   the Deployment's env; releases.ts) and our webhook (the program of the `serverless-webhook-server`
 *   ConfigMap, self-managed certificates), each with its own ServiceAccount's token. The webhook
 *   configurations are pointed at it by URL.
 * - Git sources served from this machine by `git http-backend` (see git-server.ts), one repository
 *   asking for credentials.
 *
 * Then, phase by phase: the default app's Functions, the coverage app (every option; coverage.ts)
 * and upstream's sample Functions, all through the webhook; day two (a new source, a new env, a new
 * Git reference: each must roll out); every TypeScript example of the docs, one at a time; a
 * Function stored without the webhook under upstream's own CRD (the update loop, named by `status`
 * and `validate`, then ended by our CRD's default); and the deletion of every Function (nothing of
 * theirs may remain). Each Function must reach Running with at most 3 Deployment updates (counted in
 * the audit log), the stack's programs must meet no RBAC denial, and under 1.13.0 the controller
 * must own a Deployment and a Service per Function and nothing else.
 *
 * `--move` proves the move of a live system instead (move.ts): one app (the default app's and the
 * coverage app's Functions that both releases accept) applied with its 1.11.1 stack and running under
 * the 1.11.1 controller; then synthesized again with `release: 1.13.0`, `kyma-serverless diff`, and
 * `kyma-serverless apply --prune`, the controller Deployment's new program taking over: every
 * Function must be Running again, nothing of build mode may be left, nothing else deleted.
 *
 * The run prints a report, and writes it to `--report FILE` as Markdown.
 *
 * Usage: npm run e2e:controller -- [--release 1.11.1|1.13.0] [--move] [--skip-examples] [--keep] [--report FILE]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_RELEASE, FUNCTION_POD_LABEL, ServerlessRelease, parseRelease,
} from '../../src/api';
import { synthDefaultApp } from './apps';
import { updateCounts } from './audit';
import { COVERAGE_NAMESPACES, synthCoverage } from './coverage';
import { Example, mirrorGitSources, synthExamples } from './examples';
import { runMove } from './move';
import { podRunnerProblems } from './pod';
import { ControllerRelease, controllerRelease } from './releases';
import { upstreamSamples, upstreamSamples113 } from './samples';
import {
  GIT_CREDENTIALS, K8S_BIN, K8S_LOCAL, REFERENCE, ROOT, Run, WEBHOOK_CONFIGURATIONS, appObjects, findings, finish, isFunction, keyOf, log, manifestDir, notes, objectsOf, option, optionValue, sleep, until,
} from './run';

function problems(releases: readonly ControllerRelease[]): string[] {
  const found = podRunnerProblems();
  for (const file of ['kube-apiserver', 'kube-controller-manager', 'up.sh', 'down.sh']) {
    if (!fs.existsSync(path.join(K8S_BIN, file))) found.push(`${path.join(K8S_BIN, file)} is missing: build it with ${K8S_LOCAL}/build.sh (see its README)`);
  }
  for (const file of [...releases.map(r => r.program), 'fakelet.mjs']) {
    if (!fs.existsSync(path.join(K8S_LOCAL, file))) found.push(`${path.join(K8S_LOCAL, file)} is missing: set K8S_LOCAL to the folder of ../shared/k8s-local`);
  }
  for (const release of releases) found.push(...release.problems());
  for (const tool of ['kubectl', 'git', 'xz']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      found.push(`${tool} is missing`);
    }
  }
  return found;
}


/** The proof of one release: the stack, every option, samples, day two, the docs' examples, the loop check, deletion. */
async function releaseRun(run: Run): Promise<void> {
  const release = run.release.release;
  const is113 = release === ServerlessRelease.V1_13_0;
  // Synth first: the fakelet needs every namespace in use.
  const coverageOut = path.join(run.work, 'coverage');
  const examples: Example[] = option('skip-examples') ? [] : synthExamples(log, release);
  for (const example of examples.filter(e => e.refused)) notes.push(`example ${example.where} refused at synth under ${release}: ${example.refused}`);
  let defaultApp: any[];
  if (is113) {
    synthDefaultApp(path.join(run.work, 'default-app'), release);
    defaultApp = objectsOf(path.join(run.work, 'default-app'));
  } else {
    defaultApp = objectsOf(path.join(ROOT, 'dist'));
  }
  const samples = is113 ? [...upstreamSamples113(REFERENCE), ...upstreamSamples(REFERENCE)] : upstreamSamples(REFERENCE);
  const exampleNamespaces = examples.flatMap(e => appObjects(e.objects).filter(isFunction).map(f => f.metadata.namespace));
  const namespaces = [...new Set(['default-functions', ...COVERAGE_NAMESPACES, 'upstream-samples', 'loop-check', ...exampleNamespaces])];
  await run.start(namespaces, [run.release]);
  const publicRepo = run.gitServer.create('functions.git', {
    'node/handler.js': 'exports.main = () => "Hello from Git";\n',
    'node/package.json': '{ "name": "git-node", "dependencies": {} }\n',
    'python/handler.py': 'def main(event, context):\n    return "Hello from Git"\n',
  });
  publicRepo.tag('v1');
  const commit = publicRepo.commit({ 'node/handler.js': 'exports.main = () => "Hello from a commit";\n' }, 'a commit to pin');
  const privateRepo = run.gitServer.create('private/app.git', { 'handler.js': 'exports.main = () => "private";\n' });
  synthCoverage(coverageOut, path.join(run.work, 'coverage-folders'), { publicUrl: publicRepo.url, privateUrl: privateRepo.url, commit }, { release });
  const coverage = appObjects(objectsOf(coverageOut));

  await run.applyStack();

  // Phase 1: the default app, the coverage app and upstream's samples, through the webhook.
  const first = [...appObjects(defaultApp), ...coverage];
  const firstFunctions = first.filter(isFunction);
  const sampleNamespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'upstream-samples', labels: { 'istio-injection': 'enabled' } } };
  const sampleSecrets = mirrorGitSources(samples, run.gitServer, GIT_CREDENTIALS);
  let auditFrom = run.audit.offset;
  let since = Date.now();
  run.apply('phase-1', first.filter(o => !isFunction(o)));
  run.createReferenced(firstFunctions);
  if (is113) {
    // The private package registry of a namespace (1.13.0): a Secret the user creates, mounted by every Function Pod of the namespace.
    run.kubectl.apply([{
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'serverless-package-registry-config', namespace: COVERAGE_NAMESPACES[0] },
      stringData: { '.npmrc': 'registry=https://npm.example.com/\n', 'pip.conf': '[global]\nindex-url = https://pypi.example.com/simple\n' },
    }]);
  }
  run.apply('phase-1-functions', firstFunctions);
  run.apply('upstream-samples-namespace', [sampleNamespace]);
  run.createReferenced(samples, sampleSecrets);
  const admitted: any[] = [];
  for (const sample of samples) {
    const result = run.cli(['apply', manifestDir(run.work, `sample-${sample.metadata.name}`, [sample])]);
    if (result.status === 0) admitted.push(sample);
    else {
      const reason = result.output.trim().split('\n').filter(l => /denied|invalid|refused|Error|Unsupported/i.test(l)).slice(0, 2).join(' ');
      log(`upstream sample ${sample.metadata.name} refused at admission: ${reason}`);
      notes.push(`upstream sample ${sample.metadata.name} (${sample.spec.runtime}) refused at admission: ${reason.slice(0, 300)}`);
    }
  }
  await run.waitRunning('1 apply', [...firstFunctions, ...admitted], auditFrom, since);
  if (is113) checkPackageRegistry(run, firstFunctions.filter(f => f.metadata.namespace === COVERAGE_NAMESPACES[0]));

  // Phase 2, day two: a new source, a new env value (rollout), a new Git reference, explicit resources instead of presets.
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
    ...(is113 ? {} : { build: { resources: { requests: { cpu: '300m', memory: '300Mi' }, limits: { cpu: '900m', memory: '900Mi' } } } }),
  };
  const changed = [changedSource, changedEnv, changedGit, changedResources];
  const deploymentOf = (fn: any) => run.kubectl.list(['deployments', '-n', fn.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${fn.metadata.name}`])[0];
  const before = new Map(changed.map(f => [keyOf(f), deploymentOf(f)]));
  auditFrom = run.audit.offset;
  since = Date.now();
  run.apply('phase-2', changed);
  const container = (d: any) => d?.spec.template.spec.containers[0];
  const initContainer = (d: any) => d?.spec.template.spec.initContainers?.[0];
  const rolledOut = (fn: any) => {
    const old = before.get(keyOf(fn));
    const now = deploymentOf(fn);
    const differs = (f: (d: any) => unknown) => JSON.stringify(f(now)) !== JSON.stringify(f(old));
    // 1.11.1 builds a new image for new sources; 1.13.0 passes inline sources in env and Git commits to its init container.
    const changedNow = fn.metadata.name === 'env-every-kind' ? differs(d => container(d)?.env)
      : fn.metadata.name === 'scaled' ? differs(d => container(d)?.resources)
        : !is113 ? differs(d => container(d)?.image)
          : fn.metadata.name === 'presets' ? differs(d => container(d)?.env) : differs(d => initContainer(d)?.env);
    return changedNow && now?.status?.updatedReplicas === now?.spec.replicas && now?.status?.availableReplicas === now?.spec.replicas;
  };
  await run.waitRunning('2 day two', changed, auditFrom, since, rolledOut);

  // Phase 3: every TypeScript example of the docs, one at a time.
  for (const example of examples) {
    const objects = appObjects(example.objects);
    const functions = objects.filter(isFunction);
    if (!functions.length) continue;
    const secrets = mirrorGitSources(functions, run.gitServer, GIT_CREDENTIALS);
    auditFrom = run.audit.offset;
    since = Date.now();
    run.apply(`example-${example.where}`, objects.filter(o => !isFunction(o)));
    run.createReferenced(functions, secrets);
    run.apply(`example-functions-${example.where}`, functions);
    await run.waitRunning(`3 ${example.where}`, functions, auditFrom, since);
    await run.deleteFunctions(`3 ${example.where}`, functions);
    // The rest of the example too (its namespaces stay): the next example may reuse its names.
    run.deleteObjects(objects.filter(o => !isFunction(o) && o.kind !== 'Namespace' && o.metadata?.namespace));
  }

  // Phase 4: a Function stored without the webhook and under upstream's CRD, which has no default for fieldRef.apiVersion.
  await loopCheck(run);

  // Phase 5: delete every Function of phase 1; nothing of theirs may remain.
  await run.deleteFunctions('5 delete', [...firstFunctions, ...admitted]);
  finish(`The stack under upstream's Function Controller ${release}`, run);
}

/** 1.13.0: every Function Pod of a namespace with the package registry Secret mounts it (optional), and the rest do not need it. */
function checkPackageRegistry(run: Run, functions: readonly any[]): void {
  const missing: string[] = [];
  for (const fn of functions) {
    const deployment = run.kubectl.list(['deployments', '-n', fn.metadata.namespace, '-l', `${FUNCTION_POD_LABEL}=${fn.metadata.name}`])[0];
    const volume = (deployment?.spec.template.spec.volumes ?? []).find((v: any) => v.secret?.secretName === 'serverless-package-registry-config');
    if (!volume) missing.push(keyOf(fn));
  }
  if (missing.length) findings.push(`package registry: the Deployments of ${missing.join(', ')} do not mount Secret serverless-package-registry-config`);
  else notes.push(`package registry: the Deployments of all ${functions.length} Functions of ${COVERAGE_NAMESPACES[0]} mount Secret serverless-package-registry-config`);
}

async function main(): Promise<void> {
  const release = parseRelease(optionValue('release') ?? (option('move') ? ServerlessRelease.V1_13_0 : DEFAULT_RELEASE), '--release');
  const move = option('move');
  if (move && release !== ServerlessRelease.V1_13_0) throw new Error(`--move moves a 1.11.1 system to 1.13.0: leave out --release, or give --release 1.13.0 (not ${release})`);
  const releases = move ? [controllerRelease(ServerlessRelease.V1_11_1), controllerRelease(ServerlessRelease.V1_13_0)] : [controllerRelease(release)];
  const missing = problems(releases);
  if (missing.length) throw new Error(`cannot run here:\n- ${missing.join('\n- ')}`);
  const run = new Run(releases[0]);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping what the run started`);
      void run.stop(false).finally(() => process.exit(130));
    });
  }
  try {
    if (move) await runMove(run, releases);
    else await releaseRun(run);
  } finally {
    await run.stop(option('keep'));
  }
}

/**
 * The control: with upstream's own CRD and no webhook, a Function whose fieldRef has no apiVersion
 * keeps the 1.11.1 controller updating its Deployment (1.13.0 stops at DeploymentUpdated and never
 * goes on); `validate` must name it, and `status` too under 1.11.1. Our CRD's default then ends it
 * for the Function already stored.
 */
async function loopCheck(run: Run): Promise<void> {
  const is113 = run.release.release === ServerlessRelease.V1_13_0;
  const upstreamCrd = is113 ? path.join(REFERENCE, 'upstream-1.13.0', 'function-crd.yaml') : path.join(REFERENCE, 'upstream', 'serverless-1.11.1-function-crd.yaml');
  if (!fs.existsSync(upstreamCrd)) {
    findings.push(`4 loop check: skipped, ${upstreamCrd} is missing`);
    return;
  }
  const ours = run.kubectl.json(['get', 'crd', 'functions.serverless.kyma-project.io']);
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
  run.track([fn]);
  const dir = manifestDir(run.work, 'loop-check', [fn]);
  const auditFrom = run.audit.offset;
  run.kubectl.run(['apply', '-f', path.join(dir, 'objects.yaml')]);
  const updates = () => updateCounts(run.audit.events(auditFrom), run.controllerUser(), (ns, resource, name) => (ns === 'loop-check' && resource === 'deployments' && name.startsWith('looping-') ? 'loop-check/looping' : undefined)).get('loop-check/looping')?.deployment ?? 0;
  if (is113) {
    // 1.13.0 updates once and then waits for a Deployment that never matches: 60 s without Running.
    await sleep(60_000);
    const live = run.kubectl.json(['-n', 'loop-check', 'get', 'function', 'looping']);
    const running = (live.status?.conditions ?? []).find((c: any) => c.type === 'Running');
    log(`4 loop check, upstream's CRD and no webhook: after 60 s Running=${running?.status} ${running?.reason}, ${updates()} Deployment updates`);
    notes.push(`4 loop check (1.13.0): upstream's CRD, no webhook, fieldRef without apiVersion: after 60 s Running=${running?.status} ${running?.reason}: ${running?.message}; ${updates()} Deployment updates`);
  } else {
    await until('the controller to update the looping Function\'s Deployment', 180, () => updates() >= 10);
  }
  const status = run.cli(['status', '-n', 'loop-check']);
  const validate = run.cli(['validate', dir]);
  const validateNamed = validate.status === 1 && /without apiVersion/.test(validate.output);
  const statusNamed = status.status === 1 && /DeploymentUpdateLoop|apiVersion/.test(status.output);
  log(`4 loop check: ${updates()} Deployment updates; status exit ${status.status}: ${status.output.trim().split('\n').slice(-2).join(' | ')}`);
  log(`4 loop check: validate exit ${validate.status}: ${validate.output.trim().split('\n').find(l => /apiVersion/.test(l)) ?? validate.output.trim()}`);
  if (!validateNamed) findings.push('4 loop check: validate did not name the Function whose fieldRef has no apiVersion');
  if (!statusNamed) (is113 ? notes : findings).push(`4 loop check: status did not name the stuck Function (exit ${status.status}: ${status.output.trim().split('\n').slice(-2).join(' | ')})`);
  // Our CRD again: its default gives the stored Function the apiVersion, and the loop ends.
  const { metadata, status: _status, ...crd } = ours;
  run.kubectl.apply([{ ...crd, metadata: { name: metadata.name, labels: metadata.labels, annotations: metadata.annotations } }], 'kyma-serverless');
  const since = Date.now();
  const [result] = await run.waitRunning('4 loop ended by our CRD', [fn], run.audit.offset, since);
  for (const { object } of webhooks) {
    const { metadata: m, ...rest } = object;
    run.kubectl.run(['create', '-f', '-'], JSON.stringify({ ...rest, metadata: { name: m.name, labels: m.labels, annotations: m.annotations } }));
  }
  if (result.result !== 'Running') findings.push(`4 loop check: the stuck Function did not reach Running under our CRD: ${result.result}`);
  await run.deleteFunctions('4 loop check', [fn]);
}

main().catch(e => {
  process.stderr.write(`real-controller run: ${(e as Error).message}\n`);
  process.exitCode = 2;
});
