/**
 * The developer loop against the real runtime: a Function that runs in a Pod on the node is started
 * as `kyma-serverless run --from-cluster --release <release>` starts it (the same `LocalFunction`,
 * in this process, with the node's cluster for its Secrets, ConfigMaps and package registry Secret),
 * and both are sent the same requests as `kyma-serverless invoke` sends them (`invokeFunction`).
 * Their answers must match: status, body, content type and the headers the runtime sets.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServerlessRelease } from '../../src/api';
import { connect } from '../../src/cli/_kube';
import { clusterValues } from '../../src/cli/run/_cluster';
import { FunctionRequest, LocalFunction, invokeFunction } from '../../src/runtime';

/** One answer, as compared. */
export interface ComparedAnswer {
  readonly status: number;
  readonly headers: { readonly [name: string]: string };
  readonly body: string;
}

/** The headers the runtime (not the handler) sets, which a local run must set too. */
export const RUNTIME_HEADERS = ['x-powered-by', 'access-control-allow-origin', 'content-type'];

/**
 * What differs between the Pod's answer and the local run's; nothing when they match. An error
 * page's body is compared up to what varies between two processes (stack frames with paths).
 */
export function answerDifferences(pod: ComparedAnswer, local: ComparedAnswer): string[] {
  const differences: string[] = [];
  if (pod.status !== local.status) differences.push(`status ${pod.status} in the Pod, ${local.status} locally`);
  // Express's error page: the message, then `<br> &nbsp; &nbsp;at <frame> (<path>)` lines.
  const body = (b: string) => b.replace(/<br>[^]*?(?=<\/pre>)/g, '').replace(/\s+at .*\(.*\)/g, '').trim();
  if (body(pod.body) !== body(local.body)) differences.push(`body ${JSON.stringify(pod.body.slice(0, 120))} in the Pod, ${JSON.stringify(local.body.slice(0, 120))} locally`);
  for (const name of RUNTIME_HEADERS) {
    const a = pod.headers[name];
    const b = local.headers[name];
    if (a !== b) differences.push(`header ${name}: ${a === undefined ? 'absent' : JSON.stringify(a)} in the Pod, ${b === undefined ? 'absent' : JSON.stringify(b)} locally`);
  }
  return differences;
}

/**
 * Differences kept on purpose, by the name of the run's Function: listed in docs/develop-locally.md
 * ("What differs from the cluster"), shown in the table, not counted as failures.
 */
export const DOCUMENTED_DIFFERENCES: { readonly [name: string]: string } = {
  'missing-dependency': 'run refuses to start a handler that requires a package its dependencies do not declare, and names the fix; the Pod starts and answers 500 "User function not loaded"',
};

/** One row of the parity table. */
export interface ParityRow {
  readonly key: string;
  readonly request: string;
  readonly pod?: ComparedAnswer;
  readonly local?: ComparedAnswer;
  readonly differences: readonly string[];
}

/** The requests each Function is sent: a GET, and a CloudEvent to the echo. */
export function parityRequests(name: string): Array<{ readonly label: string; readonly request: FunctionRequest }> {
  const requests: Array<{ label: string; request: FunctionRequest }> = [{ label: 'GET /', request: {} }];
  if (name === 'cloudevent-echo') {
    requests.push({
      label: 'CloudEvent (binary)',
      request: { method: 'POST', headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-type': 'order.created.v1', 'ce-source': 'e2e-node', 'ce-id': 'parity-1' }, body: '{"order":42}' },
    });
  }
  return requests;
}

/** The parity table as Markdown. */
export function parityTable(rows: readonly ParityRow[]): string[] {
  const cell = (a?: ComparedAnswer) => (a ? `${a.status} ${a.headers['content-type'] ?? ''} ${JSON.stringify(a.body.slice(0, 40))}`.replace(/\|/g, '\\|') : 'no answer');
  return [
    '| Function | request | Pod: status, content type, body | `run` + `invoke`: status, content type, body | same |',
    '|---|---|---|---|---|',
    ...rows.map(r => {
      const documented = DOCUMENTED_DIFFERENCES[r.key.split('/').pop()!];
      const verdict = !r.differences.length ? 'yes' : `${documented ? `no, on purpose (docs/develop-locally.md): ${documented}` : 'no'}: ${r.differences.join('; ')}`;
      return `| ${r.key} | ${r.request} | ${cell(r.pod)} | ${cell(r.local)} | ${verdict.replace(/\|/g, '\\|')} |`;
    }),
  ];
}

const compared = (status: number, headers: { readonly [name: string]: string }, body: string): ComparedAnswer => ({ status, headers, body });

/**
 * Runs each Function locally beside its Pod and compares their answers.
 *
 * @param functions the Function objects as applied (inline sources: a Git source cannot run locally, `run` says so)
 * @param podUrl the URL of a Function's Service on the node
 * @param kubeconfig the node's kubeconfig, for `--from-cluster`
 */
export async function parity(functions: readonly any[], podUrl: (fn: any) => string | undefined, kubeconfig: string, release: ServerlessRelease,
  log: (line: string) => void): Promise<ParityRow[]> {
  const cluster = await connect({ kubeconfig });
  const values = await clusterValues(cluster, 'realnode');
  const rows: ParityRow[] = [];
  for (const fn of functions) {
    const key = `${fn.metadata.namespace}/${fn.metadata.name}`;
    const url = podUrl(fn);
    // The package registry Secret of the namespace, as --from-cluster reads it.
    const registry = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-node-registry-'));
    const secret = await values.readSecret(fn.metadata.namespace, 'serverless-package-registry-config');
    for (const [file, data] of Object.entries(secret ?? {})) fs.writeFileSync(path.join(registry, file), data);
    let local: LocalFunction | undefined;
    let failure: string | undefined;
    try {
      local = await LocalFunction.startFrom({ description: `Function ${key}`, watched: [], read: async () => fn }, {
        port: 0, release, cluster: values, namespace: fn.metadata.namespace, packageRegistryConfig: secret ? registry : undefined,
      });
    } catch (e) {
      failure = (e as Error).message;
    }
    for (const { label, request } of parityRequests(fn.metadata.name)) {
      const pod = url ? await invokeFunction(url, request).then(r => compared(r.status, r.headers, r.text()), () => undefined) : undefined;
      const here = local ? await invokeFunction(local.url, request).then(r => compared(r.status, r.headers, r.text()), () => undefined) : undefined;
      const differences = pod && here ? answerDifferences(pod, here) : [`${pod ? '' : 'no answer from the Pod. '}${here ? '' : `no local answer${failure ? `: ${failure.split('\n')[0]}` : ''}`}`.trim()];
      rows.push({ key, request: label, pod, local: here, differences });
    }
    await local?.stop();
    fs.rmSync(registry, { recursive: true, force: true });
    const last = rows[rows.length - 1];
    log(`parity ${key}: ${last.differences.length ? `differs: ${last.differences.join('; ')}` : 'same answer locally and in the Pod'}`);
  }
  return rows;
}
