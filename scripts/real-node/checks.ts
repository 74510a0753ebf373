/**
 * The judgements of the run on a real node (`npm run e2e:node`), kept free of the cluster so that
 * jest can check them: what a Function must answer, whether a container's resources fit its
 * namespace's LimitRange, what the container runtime was told about its root filesystem, whether an
 * answer is a CloudEvent's echo, and the report's table.
 */
import { parseQuantity } from '../../src/api/quantity';

/** One Function's way on the node. */
export interface NodeFunctionRun {
  readonly phase: string;
  /** namespace/name */
  readonly key: string;
  readonly runtime: string;
  readonly source: string;
  /** Seconds from the start of its apply to its Service's first HTTP answer (any status). */
  firstAnswer?: number;
  /** Seconds from the start of its apply to `Running` True. */
  running?: number;
  /** Container restarts of its Pods (init containers too) when the phase ended. */
  restarts?: number;
  status?: number;
  contentType?: string;
  body?: string;
  /** `ok`, `skipped: <why>`, or what went wrong. */
  result: string;
}

/** What a Function's Service must answer to GET /: a status and the exact body, or only a status. */
export interface Expected {
  readonly status: number;
  readonly body?: string;
}

/** The answer a Function gave. */
export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly contentType?: string;
}

/**
 * Compares an answer with what was expected; returns what differs, or nothing.
 */
export function answerProblem(expected: Expected, answer: Answer | undefined): string | undefined {
  if (!answer) return 'no HTTP answer';
  if (answer.status !== expected.status) return `HTTP ${answer.status} (expected ${expected.status}): ${clip(answer.body)}`;
  if (expected.body !== undefined && answer.body !== expected.body) return `body ${JSON.stringify(clip(answer.body))}, expected ${JSON.stringify(expected.body)}`;
  return undefined;
}

/** A body shortened for a table cell: one line, at most `max` characters. */
export function clip(text: string, max = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The resources of one container, as a Pod spec has them. */
export interface ContainerResources {
  readonly requests?: { readonly [resource: string]: string };
  readonly limits?: { readonly [resource: string]: string };
}

/** One item of a LimitRange's `spec.limits`. */
export interface LimitRangeItem {
  readonly type: string;
  readonly min?: { readonly [resource: string]: string };
  readonly max?: { readonly [resource: string]: string };
  readonly maxLimitRequestRatio?: { readonly [resource: string]: string };
}

/**
 * What of a container's resources lies outside the `Container` items of a LimitRange (the API
 * server's LimitRanger refuses such a Pod; an admitted Pod must have none).
 */
export function limitRangeProblems(container: string, resources: ContainerResources, items: readonly LimitRangeItem[]): string[] {
  const problems: string[] = [];
  const value = (q: string) => parseQuantity(q) ?? Number.NaN;
  for (const item of items.filter(i => i.type === 'Container')) {
    for (const [resource, max] of Object.entries(item.max ?? {})) {
      const limit = resources.limits?.[resource];
      if (limit === undefined) problems.push(`${container}: no ${resource} limit, the LimitRange's max is ${max}`);
      else if (value(limit) > value(max)) problems.push(`${container}: ${resource} limit ${limit} above the LimitRange's max ${max}`);
    }
    for (const [resource, min] of Object.entries(item.min ?? {})) {
      const request = resources.requests?.[resource];
      if (request === undefined) problems.push(`${container}: no ${resource} request, the LimitRange's min is ${min}`);
      else if (value(request) < value(min)) problems.push(`${container}: ${resource} request ${request} below the LimitRange's min ${min}`);
    }
    for (const [resource, ratio] of Object.entries(item.maxLimitRequestRatio ?? {})) {
      const limit = resources.limits?.[resource];
      const request = resources.requests?.[resource];
      if (limit !== undefined && request !== undefined && value(limit) / value(request) > Number(ratio)) {
        problems.push(`${container}: ${resource} limit/request ${limit}/${request} above the LimitRange's ratio ${ratio}`);
      }
    }
  }
  return problems;
}

/**
 * Whether the OCI runtime spec containerd gave runc (`ctr containers info`'s `Spec`) mounts the
 * root filesystem read-only, and every writable mount of it: what the kubelet made of a
 * container's `readOnlyRootFilesystem`.
 */
export function rootFilesystem(spec: any): { readonly readonly: boolean; readonly writable: string[] } {
  const writable = (spec?.mounts ?? [])
    .filter((m: any) => !(m.options ?? []).includes('ro') && !['proc', 'sysfs', 'cgroup', 'mqueue', 'devpts'].includes(m.type))
    .map((m: any) => String(m.destination))
    .filter((d: string) => !d.startsWith('/dev') && !d.startsWith('/sys') && !d.startsWith('/proc'));
  return { readonly: spec?.root?.readonly === true, writable: writable.sort() };
}

/** The CloudEvent the run POSTs (binary mode), and what its echo Function must return of it. */
export const CLOUD_EVENT = {
  headers: {
    'ce-specversion': '1.0',
    'ce-type': 'order.created.v1',
    'ce-source': 'e2e-node',
    'ce-id': 'e2e-node-1',
    'ce-eventtypeversion': 'v1',
    'content-type': 'application/json',
  },
  data: { order: 42 },
};

/** The handler of the Function that returns the CloudEvent attributes the runtime gives it. */
export const CLOUD_EVENT_ECHO = `exports.main = (event) => ({
  type: event['ce-type'], source: event['ce-source'], id: event['ce-id'], specversion: event['ce-specversion'], data: event.data,
});
`;

/** What is wrong with the echo of {@link CLOUD_EVENT}, or nothing. */
export function cloudEventProblem(answer: Answer | undefined): string | undefined {
  if (!answer) return 'no answer to the CloudEvent';
  if (answer.status !== 200) return `HTTP ${answer.status}: ${clip(answer.body)}`;
  let echo: any;
  try {
    echo = JSON.parse(answer.body);
  } catch {
    return `not JSON: ${clip(answer.body)}`;
  }
  const h = CLOUD_EVENT.headers;
  const want = { type: h['ce-type'], source: h['ce-source'], id: h['ce-id'], specversion: h['ce-specversion'], data: CLOUD_EVENT.data };
  return JSON.stringify(echo) === JSON.stringify(want) ? undefined : `echo ${clip(answer.body, 200)}, expected ${JSON.stringify(want)}`;
}

/** The report's table of Functions, as Markdown. */
export function functionTable(runs: readonly NodeFunctionRun[]): string[] {
  const cell = (v: unknown) => (v === undefined ? '' : String(v).replace(/\|/g, '\\|'));
  return [
    '| phase | Function | runtime | source | s to first HTTP answer | s to Running | restarts | HTTP | content type | body | result |',
    '|---|---|---|---|---:|---:|---:|---:|---|---|---|',
    ...runs.map(r => `| ${[r.phase, r.key, r.runtime, r.source, r.firstAnswer, r.running, r.restarts, r.status, r.contentType, r.body === undefined ? undefined : clip(r.body, 60), r.result].map(cell).join(' | ')} |`),
  ];
}

/** The CPU a Function's Pods request, in millicores, as the 1.13.0 controller sets it: explicit requests, else its preset's, else the default preset's; times its replicas. */
export function functionCpuMillis(spec: any, presets: { readonly [name: string]: { readonly requestCpu: string } }, defaultPreset: string): number {
  const config = spec.resourceConfiguration?.function;
  const explicit: string | undefined = config?.resources?.requests?.cpu;
  const preset = presets[config?.profile ?? defaultPreset] ?? presets[defaultPreset];
  const millis = (parseQuantity(explicit ?? preset?.requestCpu ?? '0') ?? 0) * 1000;
  const replicas = spec.replicas ?? spec.scaleConfig?.minReplicas ?? 1;
  return Math.round(millis * Math.max(1, replicas));
}

/**
 * Splits Functions into groups, in their order, whose Pods' CPU requests fit a budget (the node's
 * allocatable CPU less what already runs): a one-node cluster cannot schedule them all at once. A
 * Function larger than the budget gets a group of its own.
 */
export function batches<T>(items: readonly T[], cost: (item: T) => number, budget: number): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    const c = cost(item);
    if (current.length && used + c > budget) {
      groups.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += c;
  }
  if (current.length) groups.push(current);
  return groups;
}
