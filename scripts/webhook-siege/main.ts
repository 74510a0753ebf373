/**
 * `npm run e2e:webhook-siege`: the webhook under a hostile tenant, through a real API server.
 *
 * Needs the shared local control plane (`/tmp/k8s-bin/up.sh`, see docs/development.md) and must
 * run under its lock: `flock /tmp/k8s-local.lock npm run e2e:webhook-siege`. It brings the
 * control plane up clean, and down again at the end.
 *
 * What it does: applies the Function CRD and the two webhook configurations of `dist/` (pointed at
 * this machine), runs the program of the `serverless-webhook-server` ConfigMap (the bundle the
 * stack ships) with `node --max-old-space-size` matching the Deployment's memory limit, and
 * creates two tenants, each a ServiceAccount allowed Functions in its own namespace only. For
 * SIEGE_SECONDS, `attacker` sends the worst Functions that fit in the API server's 3 MiB (many
 * small invalid env entries, many invalid label keys) from several clients at once, while
 * `victim` keeps creating small valid Functions. It prints the victim's latency (p50, p99, max),
 * its failures, the webhook's peak RSS against the limit, failed liveness probes, and exits.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import * as YAML from 'yaml';
import { createCertificateAuthority, createServingCertificate } from '../../src/webhook/certificates';
import { Kubectl } from '../real-controller/kubectl';

const K8S_BIN = process.env.K8S_BIN ?? '/tmp/k8s-bin';
const KUBECONFIG = path.join(K8S_BIN, 'kubeconfig');
const API = 'https://127.0.0.1:6443';
const SIEGE_SECONDS = Number(process.env.SIEGE_SECONDS ?? 60);
const ATTACKERS = Number(process.env.SIEGE_ATTACKERS ?? 4);
const DIRECT_ATTACKERS = Number(process.env.SIEGE_DIRECT_ATTACKERS ?? 3);
const BASELINE_SECONDS = Number(process.env.SIEGE_BASELINE_SECONDS ?? 15);
const WEBHOOK_PORT = 18443;
const METRICS_PORT = 18080;
const root = path.resolve(__dirname, '..', '..');

function log(message: string): void {
  process.stdout.write(`[siege] ${message}\n`);
}

/** The stack's objects in dist/, by kind. */
function distObjects(): any[] {
  return YAML.parseAllDocuments(fs.readFileSync(path.join(root, 'dist', '0000-serverless.k8s.yaml'), 'utf8')).map(d => d.toJSON()).filter(Boolean);
}

/** Mebibytes of a Kubernetes memory quantity such as `256Mi`. */
function mebibytes(quantity: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`Unexpected memory quantity ${quantity}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

/** A Function as a tenant writes it. */
function fn(name: string, namespace: string, spec: object = {}): any {
  return {
    apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function',
    metadata: { name, namespace },
    spec: { runtime: 'nodejs22', source: { inline: { source: 'function main() { return "ok"; }\nmodule.exports = { main };\n' } }, ...spec },
  };
}

/** The largest Function of `fill(n)` whose JSON fits in `bytes`. */
function largest(fill: (n: number) => object, bytes: number): string {
  const of = (n: number) => JSON.stringify(fn('worst', 'attacker', fill(n)));
  let low = 1;
  let high = 2;
  while (of(high).length <= bytes) [low, high] = [high, high * 2];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (of(mid).length <= bytes) low = mid;
    else high = mid;
  }
  return of(low);
}

/** One POST to the API server with a bearer token; resolves with the status and milliseconds. */
function post(token: string, url: string, body: string, ca: Buffer): Promise<{ status: number; ms: number; text: string }> {
  const started = Date.now();
  return new Promise(resolve => {
    const req = https.request(`${API}${url}`, {
      method: 'POST', ca, agent: false, timeout: 60_000,
      headers: { 'Authorization': `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, res => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, text: Buffer.concat(chunks).toString('utf8').slice(0, 400) }));
    });
    req.on('error', e => resolve({ status: -1, ms: Date.now() - started, text: e.message }));
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.end(body);
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The resident memory of a process, in MiB. */
function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-siege-'));
  execFileSync(path.join(K8S_BIN, 'up.sh'), ['--clean'], { stdio: 'inherit' });
  const kubectl = new Kubectl(KUBECONFIG);
  let webhook: ReturnType<typeof spawn> | undefined;
  try {
    const objects = distObjects();
    const crd = objects.find(o => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'functions.serverless.kyma-project.io');
    const program = objects.find(o => o.kind === 'ConfigMap' && o.metadata.name === 'serverless-webhook-server');
    const config = objects.find(o => o.kind === 'ConfigMap' && o.metadata.name === 'serverless-webhook-config');
    const deployment = objects.find(o => o.kind === 'Deployment' && o.metadata.name === 'serverless-webhook');
    const limit = mebibytes(deployment.spec.template.spec.containers[0].resources.limits.memory);
    // The server's own heap stays below the Pod's limit with room for the rest of the process.
    const heapMiB = Math.floor(limit * 0.75);

    // The program exactly as the ConfigMap ships it, with a certificate for this machine.
    fs.writeFileSync(path.join(work, 'server.js'), brotliDecompressSync(Buffer.from(program.binaryData['server.js.br'], 'base64')));
    const configText = config.data['config.yaml'];
    fs.writeFileSync(path.join(work, 'config.yaml'), configText);
    const ca = createCertificateAuthority('webhook-siege-ca');
    const serving = createServingCertificate(ca, ['localhost']);
    fs.writeFileSync(path.join(work, 'tls.crt'), serving.cert);
    fs.writeFileSync(path.join(work, 'tls.key'), serving.key);
    const webhookLog = fs.openSync(path.join(work, 'webhook.log'), 'w');
    webhook = spawn('node', [
      `--max-old-space-size=${heapMiB}`, path.join(work, 'server.js'), '--port', String(WEBHOOK_PORT), '--metrics-port', String(METRICS_PORT),
      '--host', '127.0.0.1', '--config', path.join(work, 'config.yaml'), '--tls-cert', path.join(work, 'tls.crt'), '--tls-key', path.join(work, 'tls.key'),
    ], { stdio: ['ignore', webhookLog, webhookLog] });
    let exits = 0;
    webhook.on('exit', code => {
      exits++;
      log(`the webhook exited with ${code}`);
    });

    kubectl.apply([crd]);
    kubectl.run(['wait', '--for=condition=Established', 'crd/functions.serverless.kyma-project.io', '--timeout=60s']);
    const caBundle = Buffer.from(ca.cert).toString('base64');
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const configuration = objects.find(o => o.kind === kind);
      configuration.webhooks = configuration.webhooks.map((w: any) => ({ ...w, clientConfig: { url: `https://localhost:${WEBHOOK_PORT}${w.clientConfig.service.path}`, caBundle } }));
      kubectl.apply([configuration]);
    }

    // Two tenants, each allowed Functions in its own namespace only.
    const tokens: { [tenant: string]: string } = {};
    for (const tenant of ['attacker', 'victim']) {
      kubectl.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: tenant } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: tenant, namespace: tenant } },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'functions', namespace: tenant }, rules: [{ apiGroups: ['serverless.kyma-project.io'], resources: ['functions'], verbs: ['create', 'get', 'list', 'update', 'delete'] }] },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'functions', namespace: tenant }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'functions' }, subjects: [{ kind: 'ServiceAccount', name: tenant, namespace: tenant }] },
      ]);
      tokens[tenant] = kubectl.run(['create', 'token', tenant, '-n', tenant, '--duration=1h']).trim();
    }
    const apiCa = Buffer.from(YAML.parse(fs.readFileSync(KUBECONFIG, 'utf8')).clusters[0].cluster['certificate-authority-data'], 'base64');
    // kubectl auth can-i prints its answer, and exits 1 when it is no.
    const denied = spawnSync('kubectl', [`--kubeconfig=${KUBECONFIG}`, 'auth', 'can-i', 'create', 'functions.serverless.kyma-project.io', '-n', 'victim',
      '--as=system:serviceaccount:attacker:attacker'], { encoding: 'utf8' }).stdout.trim();
    if (denied !== 'no') throw new Error('The attacker may create Functions in the victim\'s namespace: the RBAC of this run is wrong');
    log(`may the attacker create Functions in the victim's namespace? ${denied}`);

    // Wait for the webhook to answer through the API server.
    for (let i = 0; ; i++) {
      const r = await post(tokens.victim, '/apis/serverless.kyma-project.io/v1alpha2/namespaces/victim/functions?dryRun=All', JSON.stringify(fn('warmup', 'victim')), apiCa);
      if (r.status === 201) break;
      if (i > 60) throw new Error(`The webhook does not answer through the API server: ${r.status} ${r.text}`);
      await new Promise(resolve => setTimeout(resolve, 500));
    }

    // The worst Functions: the API server's body limit is 3 MiB; the object stays a little below it.
    // Smaller ones too: the API server takes tens of seconds over a 3 MiB one itself, and may give
    // up before it calls the validating webhook.
    const envNames = (n: number) => ({ env: Array.from({ length: n }, () => ({ name: '1' })) });
    const labelKeys = (n: number) => ({ labels: Object.fromEntries(Array.from({ length: n }, (_, i) => [`-${i}`, ''])) });
    const worst: [string, string][] = [];
    for (const [size, bytes] of [['3MiB', 3 * 1024 * 1024 - 4096], ['1MiB', 1024 * 1024], ['256KiB', 256 * 1024]] as const) {
      worst.push([`envNames-${size}`, largest(envNames, bytes)], [`labelKeys-${size}`, largest(labelKeys, bytes)]);
    }
    for (const [kind, body] of worst) log(`worst Function ${kind}: ${body.length} bytes`);

    // The victim alone first: what its writes cost without an attacker.
    const baseline: number[] = [];
    for (const started = Date.now(); Date.now() - started < BASELINE_SECONDS * 1000;) {
      const r = await post(tokens.victim, '/apis/serverless.kyma-project.io/v1alpha2/namespaces/victim/functions', JSON.stringify(fn(`base-${baseline.length}`, 'victim')), apiCa);
      if (r.status !== 201) throw new Error(`The victim's write failed before the siege: ${r.status} ${r.text}`);
      baseline.push(r.ms);
      await new Promise(resolve => setTimeout(resolve, 100));
    }
    log(`victim alone: ${baseline.length} Functions created; latency p50 ${percentile(baseline, 50)} ms, p99 ${percentile(baseline, 99)} ms, max ${Math.max(...baseline)} ms`);

    const until = Date.now() + SIEGE_SECONDS * 1000;
    const attacks: { status: number; ms: number; kind: string }[] = [];
    const victim: { status: number; ms: number }[] = [];
    const victimFailures: string[] = [];
    let peakRss = 0;
    let probeFailures = 0;
    let probes = 0;
    const sampler = setInterval(() => {
      if (webhook?.pid && webhook.exitCode === null) peakRss = Math.max(peakRss, rssMiB(webhook.pid));
    }, 100);
    const probeMs: number[] = [];
    const prober = (async () => {
      // The liveness probe's own terms (every second here, 10 s in the Deployment; 2 s timeout),
      // from a process of its own, so that this script's busy event loop does not delay it.
      while (Date.now() < until) {
        probes++;
        const started = Date.now();
        const ok = await new Promise<boolean>(resolve => {
          const curl = spawn('curl', ['-sf', '-o', '/dev/null', '-m', '2', `http://127.0.0.1:${METRICS_PORT}/healthz`], { stdio: 'ignore' });
          curl.on('exit', code => resolve(code === 0));
          curl.on('error', () => resolve(false));
        });
        probeMs.push(Date.now() - started);
        if (!ok) probeFailures++;
        await new Promise(resolve => setTimeout(resolve, 1000));
      }
    })();
    const attacker = async (id: number) => {
      for (let i = 0; Date.now() < until; i++) {
        const [kind, body] = worst[(id + i) % worst.length];
        const r = await post(tokens.attacker, '/apis/serverless.kyma-project.io/v1alpha2/namespaces/attacker/functions', body, apiCa);
        attacks.push({ status: r.status, ms: r.ms, kind });
        if (!attacks.slice(0, -1).some(a => a.kind === kind)) log(`attack answer (${kind}): ${r.status} in ${r.ms} ms: ${r.text.slice(0, 300)}`);
      }
    };
    const tenant = async () => {
      for (let i = 0; Date.now() < until; i++) {
        const r = await post(tokens.victim, '/apis/serverless.kyma-project.io/v1alpha2/namespaces/victim/functions', JSON.stringify(fn(`fn-${i}`, 'victim')), apiCa);
        victim.push({ status: r.status, ms: r.ms });
        if (r.status !== 201) victimFailures.push(`${r.status} ${r.text.slice(0, 200)}`);
        await new Promise(resolve => setTimeout(resolve, 100));
      }
    };
    // Straight at the webhook as well, as a caller inside the cluster's network could: the worst
    // reviews of 3 MiB, schema-invalid ones included (the API server never lets those through).
    const direct: { status: number; ms: number; bytes: number }[] = [];
    const reviewOf = (object: string, uid: string) => `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}",`
      + '"kind":{"group":"serverless.kyma-project.io","version":"v1alpha2","kind":"Function"},"operation":"CREATE","namespace":"attacker","name":"worst",'
      + `"object":${object}}}`;
    const envTypes = (n: number) => ({ env: Array.from({ length: n }, () => ({ name: 1 })) });
    const directBodies = [
      reviewOf(largest(envNames, 3 * 1024 * 1024 - 512), 'direct-env-names'),
      reviewOf(largest(labelKeys, 3 * 1024 * 1024 - 512), 'direct-label-keys'),
      reviewOf(largest(envTypes, 3 * 1024 * 1024 - 512), 'direct-env-types'),
    ];
    const directAttacker = async (id: number) => {
      for (let i = 0; Date.now() < until; i++) {
        const body = directBodies[(id + i) % directBodies.length];
        const started = Date.now();
        const r = await new Promise<{ status: number; bytes: number }>(resolve => {
          const req = https.request({
            host: '127.0.0.1', port: WEBHOOK_PORT, servername: 'localhost', ca: ca.cert, agent: false, method: 'POST',
            path: i % 2 ? '/defaulting/functions' : '/validation/function',
            headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
          }, res => {
            let bytes = 0;
            res.on('data', (c: Buffer) => { bytes += c.length; });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
          });
          req.on('error', () => resolve({ status: -1, bytes: 0 }));
          req.end(body);
        });
        direct.push({ ...r, ms: Date.now() - started });
      }
    };
    await Promise.all([
      ...Array.from({ length: ATTACKERS }, (_, i) => attacker(i)),
      ...Array.from({ length: DIRECT_ATTACKERS }, (_, i) => directAttacker(i)),
      tenant(), prober,
    ]);
    clearInterval(sampler);

    const latencies = victim.map(v => v.ms);
    const byStatus = (list: { status: number }[]) => list.reduce<{ [s: string]: number }>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});
    log(`siege: ${SIEGE_SECONDS} s, ${ATTACKERS} attacking clients, ${attacks.length} worst Functions sent (statuses ${JSON.stringify(byStatus(attacks))}), attack answer p50 ${percentile(attacks.map(a => a.ms), 50)} ms, max ${Math.max(...attacks.map(a => a.ms))} ms`);
    log(`direct: ${direct.length} worst reviews of 3 MiB straight at the webhook from ${DIRECT_ATTACKERS} clients, statuses ${JSON.stringify(byStatus(direct))}, answer p50 ${percentile(direct.map(d => d.ms), 50)} ms, max ${Math.max(...direct.map(d => d.ms))} ms, largest answer ${Math.max(...direct.map(d => d.bytes))} bytes`);
    log(`victim: ${victim.length} Functions created, statuses ${JSON.stringify(byStatus(victim))}; latency p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${Math.max(...latencies)} ms`);
    for (const failure of victimFailures.slice(0, 5)) log(`victim failure: ${failure}`);
    log(`webhook: peak RSS ${peakRss.toFixed(0)} MiB of the Deployment's ${limit} MiB limit (heap cap ${heapMiB} MiB); liveness probes failed ${probeFailures} of ${probes} (p50 ${percentile(probeMs, 50)} ms, max ${Math.max(...probeMs)} ms with curl's start); exits (restarts) ${exits}`);
    const lines = fs.readFileSync(path.join(work, 'webhook.log'), 'utf8').split('\n').filter(Boolean);
    log(`webhook log: ${lines.length} lines, the longest ${Math.max(...lines.map(l => l.length))} chars`);
    const reviews = lines.map(l => JSON.parse(l)).filter(r => r.namespace === 'attacker' && r.durationMs !== undefined && !String(r.uid).startsWith('direct-'));
    const directReviews = lines.map(l => JSON.parse(l)).filter(r => String(r.uid).startsWith('direct-') && r.durationMs !== undefined);
    log(`webhook: ${directReviews.length} direct reviews judged, the longest ${Math.max(0, ...directReviews.map(r => r.durationMs)).toFixed(0)} ms of work; ${lines.filter(l => l.includes('over its deadline')).length} over the deadline`);
    const victimWork = lines.map(l => JSON.parse(l)).filter(r => r.namespace === 'victim' && r.durationMs !== undefined).map(r => r.durationMs as number);
    log(`webhook: the victim's ${victimWork.length} reviews took p50 ${percentile(victimWork, 50).toFixed(1)} ms, p99 ${percentile(victimWork, 99).toFixed(1)} ms of work`);
    for (const [msg, path] of [['defaulted', '/defaulting/functions'], ['denied', '/validation/function']]) {
      const done = reviews.filter(r => r.path === path);
      log(`webhook: ${done.length} attacker reviews on ${path} (${done.filter(r => r.msg === msg).length} ${msg}), the longest ${Math.max(0, ...done.map(r => r.durationMs)).toFixed(0)} ms of work`);
    }
    for (const [kind] of worst) {
      const mine = attacks.filter(a => a.kind === kind);
      log(`attack ${kind}: ${mine.length} sent, statuses ${JSON.stringify(byStatus(mine))}, answer p50 ${percentile(mine.map(a => a.ms), 50)} ms`);
    }
    if (exits > 0 || probeFailures > 0 || victimFailures.length > 0 || peakRss > limit) process.exitCode = 1;
  } finally {
    webhook?.kill('SIGTERM');
    execFileSync(path.join(K8S_BIN, 'down.sh'), ['--clean'], { stdio: 'inherit' });
    log(`work folder: ${work}`);
  }
}

main().catch(e => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exitCode = 1;
});
