// Keeps fakelet's node alive on a loaded machine, beside fakelet.mjs (which is shared and not ours
// to change). fakelet renews its node's Ready condition every tenth round, and a round lists every
// Pod, Secret and ConfigMap: on a busy 2-core machine that can take longer than the 40 s
// kube-controller-manager allows, the node turns NotReady, and the node lifecycle controller marks
// every Pod on it not Ready. fakelet never makes a Running Pod Ready again, so Deployments lose
// their availability for good. This program renews the node's heartbeat every 5 s, and, as a
// kubelet does once its node is back, reports Ready again for Running Pods of the given namespaces
// whose containers run and whose Ready condition the controller turned False. And it removes Pods
// being deleted, as a kubelet does once their containers stopped: fakelet never does, so a Pod a
// rollout or a scale-down replaced stayed Terminating for good, and whatever waits for it to be
// gone (the build-mode clean-up Job waits for the last old controller Pod) waited for ever. The
// containers fakelet reports stop at once; the stack's programs this run starts on the machine are
// stopped by the run before their Deployment replaces their Pod.
//
// usage: node node-keeper.mjs --namespaces a,b --seconds 7200   (needs KUBECONFIG)
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const opt = {};
for (let a = process.argv.slice(2); a.length; ) { const k = a.shift().replace(/^--/, ''); opt[k] = a.shift(); }
const namespaces = new Set((opt.namespaces ?? '').split(',').filter(Boolean));
const until = Date.now() + Number(opt.seconds ?? 3600) * 1000;
const NODE = 'fakelet-node';
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const kc = (args) => run('kubectl', args, { maxBuffer: 256 * 1024 * 1024 }).catch(() => ({ stdout: '' }));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function heartbeat() {
  while (Date.now() < until) {
    await kc(['patch', 'node', NODE, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'fakelet (node-keeper)', lastHeartbeatTime: now(), lastTransitionTime: now() }],
    } })]);
    await sleep(5000);
  }
}

async function readyAgain() {
  while (Date.now() < until) {
    await sleep(10000);
    let pods = [];
    try { pods = JSON.parse((await kc(['get', 'pods', '-A', '-o', 'json'])).stdout || '{}').items ?? []; } catch { /* next round */ }
    for (const p of pods) {
      if (!namespaces.has(p.metadata.namespace) || p.metadata.deletionTimestamp || p.status?.phase !== 'Running') continue;
      const ready = (p.status.conditions ?? []).find((c) => c.type === 'Ready');
      const running = (p.status.containerStatuses ?? []).every((c) => c.state?.running);
      if (ready?.status !== 'False' || !running) continue;
      const t = now();
      await kc(['patch', 'pod', p.metadata.name, '-n', p.metadata.namespace, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: {
        conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastTransitionTime: t })),
        containerStatuses: p.status.containerStatuses.map((c) => ({ ...c, ready: true })),
      } })]);
    }
  }
}

async function removeTerminated() {
  while (Date.now() < until) {
    await sleep(3000);
    let pods = [];
    try { pods = JSON.parse((await kc(['get', 'pods', '-A', '-o', 'json'])).stdout || '{}').items ?? []; } catch { /* next round */ }
    for (const p of pods) {
      if (!namespaces.has(p.metadata.namespace) || !p.metadata.deletionTimestamp) continue;
      // A kubelet's last call for a Pod whose containers ended: delete with no grace left.
      await kc(['delete', 'pod', p.metadata.name, '-n', p.metadata.namespace, '--grace-period=0', '--force', '--wait=false']);
    }
  }
}

await Promise.all([heartbeat(), readyAgain(), removeTerminated()]);
