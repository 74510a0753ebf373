/**
 * `kyma-serverless status`: where each Function is in the Function controller's pipeline (source
 * ConfigMap, build Job, Deployment, Service, HorizontalPodAutoscaler, ready), from its conditions
 * and from the objects the controller labels with the Function's name; once, or followed live
 * through the watch API.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Duration } from 'cdk8s';
import { Command, InvalidArgumentError, Option } from 'commander';
import { FUNCTION_GROUP, FUNCTION_VERSION } from '../../api/function-schema';
import { FUNCTION_CONTROLLER, FunctionChildLabel } from '../../api/function-status';
import { CliError, Cluster, ClusterOptions, connect, describeApiError, statusOf } from '../_kube';
import { OutputFormat } from '../_output';
import { ProgressState } from './model';
import { changeLine, explanation, humanDuration, isoSeconds, renderFrame, renderTable } from './render';
import { FunctionStatusReport, statusReport } from './report';
import { FunctionChildren, FunctionResource } from './resources';

export type { FunctionProgress, PipelineStep } from './model';
export { PipelineStage, ProgressState, StepState, autoscales, functionProgress } from './model';
export type { FrameOptions, RenderOptions } from './render';
export { changeLine, explanation, humanDuration, renderFrame, renderSteps, renderTable } from './render';
export type { FunctionStatusReport } from './report';
export { statusReport } from './report';
export type { ChildResource, FunctionChildren, FunctionResource, ResourceCondition, ResourceMetadata } from './resources';

/**
 * Parses a duration as kubectl takes it: a number and a unit (`ms`, `s`, `m`, `h`), repeated,
 * such as `90s`, `10m` or `1h30m`.
 *
 * @throws InvalidArgumentError when the text is no such duration
 */
export function parseDuration(text: string): Duration {
  const units: { readonly [unit: string]: number } = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map(p => p[0]).join('') !== text.trim()) {
    throw new InvalidArgumentError(`'${text}' is not a duration: give a number and a unit, such as 90s, 10m or 1h30m`);
  }
  return Duration.millis(Math.round(parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * units[unit], 0)));
}

/** Options of {@link runStatus}: the global cluster options and the command's own. */
export interface StatusOptions extends ClusterOptions {
  /**
   * One Function's name.
   *
   * @default - every Function of the namespace
   */
  readonly name?: string;
  /**
   * Every namespace's Functions (`-A`).
   *
   * @default false
   */
  readonly allNamespaces?: boolean;
  /**
   * Follow the Functions until every one is ready, or one fails.
   *
   * @default false
   */
  readonly watch?: boolean;
  /**
   * With `watch`: how long to wait for every Function to be ready.
   *
   * @default - no limit
   */
  readonly timeout?: Duration;
  /**
   * The output format.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
}

/** A stream the status writes to: stdout, or a test's stand-in. */
export interface OutputStream {
  write(text: string): unknown;
  /** Whether it is a terminal: the watch then redraws a table in place. */
  readonly isTTY?: boolean;
  /** The terminal's width. */
  readonly columns?: number;
  /** The terminal's height. */
  readonly rows?: number;
}

/** Where {@link runStatus} writes, its clock, and the signal that interrupts a watch. */
export interface StatusIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** The time in milliseconds since the epoch. */
  readonly now: () => number;
  /**
   * Aborted on Ctrl-C: a watch ends with exit code 130.
   *
   * @default - never interrupted
   */
  readonly interrupt?: AbortSignal;
}

/** The process's own streams and clock. */
export function processIo(interrupt?: AbortSignal): StatusIo {
  return { stdout: process.stdout, stderr: process.stderr, now: Date.now, interrupt };
}

/** A kind the status lists and watches. */
interface Kind {
  readonly key: 'functions' | keyof FunctionChildren;
  /** For messages: `Functions`, `build Jobs`. */
  readonly noun: string;
  readonly path: (namespace?: string) => string;
  readonly list: (namespace: string | undefined, query: Selectors) => Promise<{ items: unknown[]; metadata?: { resourceVersion?: string } }>;
}

interface Selectors {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

const FUNCTION_PLURAL = 'functions';

function collectionPath(group: string, version: string, plural: string, namespace?: string): string {
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return `${base}${namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`}/${plural}`;
}

/** The Functions and the five kinds of objects the controller creates for them. */
async function kindsOf(kubeConfig: KubeConfig): Promise<Kind[]> {
  const k8s = await import('@kubernetes/client-node');
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const batch = kubeConfig.makeApiClient(k8s.BatchV1Api);
  const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
  const autoscaling = kubeConfig.makeApiClient(k8s.AutoscalingV2Api);
  const fn = { group: FUNCTION_GROUP, version: FUNCTION_VERSION, plural: FUNCTION_PLURAL };
  return [
    {
      key: 'functions',
      noun: 'Functions',
      path: ns => collectionPath(fn.group, fn.version, fn.plural, ns),
      list: (namespace, query) => (namespace === undefined
        ? custom.listClusterCustomObject({ ...fn, ...query })
        : custom.listNamespacedCustomObject({ ...fn, namespace, ...query })),
    },
    {
      key: 'configMaps',
      noun: 'ConfigMaps',
      path: ns => collectionPath('', 'v1', 'configmaps', ns),
      list: (namespace, query) => (namespace === undefined
        ? core.listConfigMapForAllNamespaces(query)
        : core.listNamespacedConfigMap({ namespace, ...query })),
    },
    {
      key: 'jobs',
      noun: 'build Jobs',
      path: ns => collectionPath('batch', 'v1', 'jobs', ns),
      list: (namespace, query) => (namespace === undefined ? batch.listJobForAllNamespaces(query) : batch.listNamespacedJob({ namespace, ...query })),
    },
    {
      key: 'deployments',
      noun: 'Deployments',
      path: ns => collectionPath('apps', 'v1', 'deployments', ns),
      list: (namespace, query) => (namespace === undefined
        ? apps.listDeploymentForAllNamespaces(query)
        : apps.listNamespacedDeployment({ namespace, ...query })),
    },
    {
      key: 'services',
      noun: 'Services',
      path: ns => collectionPath('', 'v1', 'services', ns),
      list: (namespace, query) => (namespace === undefined
        ? core.listServiceForAllNamespaces(query)
        : core.listNamespacedService({ namespace, ...query })),
    },
    {
      key: 'horizontalPodAutoscalers',
      noun: 'HorizontalPodAutoscalers',
      path: ns => collectionPath('autoscaling', 'v2', 'horizontalpodautoscalers', ns),
      list: (namespace, query) => (namespace === undefined
        ? autoscaling.listHorizontalPodAutoscalerForAllNamespaces(query)
        : autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace, ...query })),
    },
  ];
}

/** What a kind's list left: its objects by `namespace/name`, and the resourceVersion to watch from. */
interface Listed {
  readonly objects: Map<string, any>;
  resourceVersion?: string;
}

const objectKey = (object: any) => `${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''}`;

/**
 * The Functions and their objects, listed once and (for `--watch`) kept up to date from watches.
 * Kinds other than Functions that the user may not list (403) or the cluster does not serve (404)
 * are left out, with a warning: their progress then comes from the conditions.
 */
class FunctionStore {
  /** Listed kinds, by key; a child kind is missing when it could not be listed. */
  public readonly listed = new Map<Kind['key'], Listed>();
  private readonly warned = new Set<Kind['key']>();

  constructor(
    private readonly cluster: Cluster,
    private readonly kinds: readonly Kind[],
    private readonly namespace: string | undefined,
    private readonly name: string | undefined,
    private readonly stderr: OutputStream,
  ) {}

  /** The selectors of a kind: the Function's name, or the controller's labels. */
  public selectors(kind: Kind): Selectors {
    if (kind.key === 'functions') return this.name === undefined ? {} : { fieldSelector: `metadata.name=${this.name}` };
    const byName = this.name === undefined ? FunctionChildLabel.FUNCTION_NAME : `${FunctionChildLabel.FUNCTION_NAME}=${this.name}`;
    return { labelSelector: `${FunctionChildLabel.MANAGED_BY}=${FUNCTION_CONTROLLER},${byName}` };
  }

  /** Lists every kind: Functions first, then the others at once. */
  public async listAll(): Promise<void> {
    await this.list(this.kinds[0]);
    await Promise.all(this.kinds.slice(1).map(kind => this.list(kind)));
  }

  /**
   * Lists one kind, replacing what was known of it.
   *
   * @throws CliError for API errors, but 403 and 404 of the controller's kinds, which only warn
   */
  public async list(kind: Kind): Promise<void> {
    try {
      const list = await kind.list(this.namespace, this.selectors(kind));
      // client-node turns timestamps of typed lists into Dates: back to the API's JSON.
      const items = JSON.parse(JSON.stringify(list.items ?? [])) as any[];
      this.listed.set(kind.key, { objects: new Map(items.map(i => [objectKey(i), i])), resourceVersion: list.metadata?.resourceVersion });
    } catch (e) {
      const code = statusOf(e);
      if (kind.key !== 'functions' && (code === 403 || code === 404)) {
        this.listed.delete(kind.key);
        if (!this.warned.has(kind.key)) {
          this.warned.add(kind.key);
          const where = this.namespace === undefined ? 'in any namespace' : `in namespace ${this.namespace}`;
          this.stderr.write(`kyma-serverless: cannot list ${kind.noun} ${where} (${code === 403 ? 'forbidden' : 'not served'}): `
            + 'their progress comes from the Functions\' conditions alone\n');
        }
        return;
      }
      throw describeApiError(e, `listing ${kind.noun}`, this.cluster);
    }
  }

  /** Applies one watch event; returns whether it changed anything. */
  public apply(kind: Kind, type: string, object: any): boolean {
    const listed = this.listed.get(kind.key);
    if (!listed) return false;
    const version = object?.metadata?.resourceVersion;
    if (version) listed.resourceVersion = version;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        listed.objects.set(objectKey(object), object);
        return true;
      case 'DELETED':
        return listed.objects.delete(objectKey(object));
      default:
        return false;
    }
  }

  /** The Functions, sorted by namespace and name. */
  public functions(): FunctionResource[] {
    return [...(this.listed.get('functions')?.objects.values() ?? [])]
      .sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
  }

  /** The objects of the controller's kinds; a kind not listed is left out. */
  public children(): FunctionChildren {
    const of = (key: keyof FunctionChildren) => {
      const listed = this.listed.get(key);
      return listed ? [...listed.objects.values()] : undefined;
    };
    return {
      configMaps: of('configMaps'),
      jobs: of('jobs'),
      deployments: of('deployments'),
      services: of('services'),
      horizontalPodAutoscalers: of('horizontalPodAutoscalers'),
    };
  }

  /** Every Function's report. */
  public reports(): FunctionStatusReport[] {
    const children = this.children();
    return this.functions().map(fn => statusReport(fn, children));
  }
}

/**
 * Keeps a {@link FunctionStore} up to date with one watch per kind, from the resourceVersion of
 * its list. A watch that ends (the API server closes watches after a while) or reports an
 * ERROR (410 Expired) is replaced after the kind is listed again.
 */
class StoreWatch {
  private readonly aborts = new Map<Kind['key'], AbortController>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly store: FunctionStore,
    private readonly kinds: readonly Kind[],
    private readonly namespace: string | undefined,
    private readonly onChange: () => void,
    private readonly onError: (e: Error) => void,
  ) {}

  public async start(): Promise<void> {
    await Promise.all(this.kinds.filter(k => this.store.listed.has(k.key)).map(kind => this.watch(kind, 0)));
  }

  public stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const abort of this.aborts.values()) abort.abort();
    this.aborts.clear();
  }

  private async watch(kind: Kind, restarts: number): Promise<void> {
    if (this.stopped || !this.store.listed.has(kind.key)) return;
    const { Watch } = await import('@kubernetes/client-node');
    const query = { ...this.store.selectors(kind), resourceVersion: this.store.listed.get(kind.key)?.resourceVersion, allowWatchBookmarks: true };
    let own: AbortController | undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      own?.abort();
      if (!this.stopped) this.restart(kind, restarts + 1);
    };
    own = await new Watch(this.kubeConfig).watch(kind.path(this.namespace), query, (type: string, object: any) => {
      if (ended || this.stopped) return;
      restarts = 0;
      // An ERROR event (410 Expired: the resourceVersion is too old) ends the watch; listing again recovers.
      if (type === 'ERROR') end();
      else if (this.store.apply(kind, type, object)) this.onChange();
    }, () => end());
    if (this.stopped || ended) own.abort();
    else this.aborts.set(kind.key, own);
  }

  /** Lists the kind again and watches from there, after a pause that grows while watches keep ending at once. */
  private restart(kind: Kind, restarts: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      this.store.list(kind).then(() => {
        if (this.stopped) return;
        this.onChange();
        return this.watch(kind, restarts);
      }).catch(e => this.onError(e as Error));
    }, Math.min(5_000, 100 * 2 ** Math.min(restarts - 1, 6)));
    this.timers.add(timer);
  }
}

/**
 * Prints the Functions' status, once or (with `watch`) until they are all ready.
 *
 * Without `watch`, it prints a table (or a JSON array) and fails when a Function has failed.
 * With `watch`, it follows the Functions and their objects through the watch API: on a terminal
 * it redraws the table in place; elsewhere it prints a line (or with JSON output, a JSON object)
 * per change. It returns once every Function is ready.
 *
 * @throws CliError when a Function failed, the named Function does not exist, the watch timed out
 * (exit code 1) or was interrupted (130), or the API server could not be asked
 */
export async function runStatus(options: StatusOptions, io: StatusIo = processIo()): Promise<void> {
  if (options.name !== undefined && options.allNamespaces) {
    throw new CliError('A Function name cannot be given with --all-namespaces: give its namespace with -n instead');
  }
  if (options.timeout !== undefined && !options.watch) throw new CliError('--timeout applies only with --watch');
  const cluster = await connect(options);
  const namespace = options.allNamespaces ? undefined : cluster.namespace;
  const kinds = await kindsOf(cluster.kubeConfig);
  const store = new FunctionStore(cluster, kinds, namespace, options.name, io.stderr);
  await store.listAll();
  const json = options.output === OutputFormat.JSON;
  const out = (text: string) => io.stdout.write(`${text}\n`);

  const reports = store.reports();
  if (!reports.length) {
    if (options.name !== undefined) throw new CliError(`Function ${options.name} not found in namespace ${namespace}`);
    if (json) out('[]');
    io.stderr.write(`No Functions found ${namespace === undefined ? 'in any namespace' : `in namespace ${namespace}`}.\n`);
    return;
  }
  if (!options.watch) {
    out(json ? JSON.stringify(reports, null, 2) : renderTable(reports, { now: io.now(), allNamespaces: options.allNamespaces }));
    const failed = reports.filter(r => r.state === ProgressState.FAILED);
    if (failed.length) {
      throw new CliError(`${failed.length} of ${reports.length} Function${reports.length === 1 ? '' : 's'} failed: ${failed.map(label).join(', ')}`);
    }
    return;
  }
  await follow(cluster, kinds, store, namespace, options, io);
}

const label = (r: FunctionStatusReport) => `${r.namespace}/${r.name}`;

/** The watch: renders every change and settles once the Functions are ready, one failed, time is up, or Ctrl-C. */
async function follow(
  cluster: Cluster, kinds: readonly Kind[], store: FunctionStore, namespace: string | undefined, options: StatusOptions, io: StatusIo,
): Promise<void> {
  const json = options.output === OutputFormat.JSON;
  const live = io.stdout.isTTY === true && !json;
  const startedAt = io.now();
  const printed = new Map<string, string>();
  let drawnLines = 0;

  const draw = (reports: FunctionStatusReport[]) => {
    const { columns, rows } = io.stdout;
    const frame = renderFrame(reports, { now: io.now(), allNamespaces: options.allNamespaces, columns, rows, startedAt });
    const lines = frame.split('\n');
    // Back to the first line of the last frame, then each line cleared and written, then the rest cleared.
    io.stdout.write(`${drawnLines ? `\x1b[${drawnLines}A` : ''}${lines.map(l => `\r\x1b[2K${l}\n`).join('')}\x1b[J`);
    drawnLines = lines.length;
  };

  const print = (reports: FunctionStatusReport[]) => {
    const now = io.now();
    const seen = new Set<string>();
    for (const report of reports) {
      seen.add(label(report));
      const text = json ? JSON.stringify({ time: isoSeconds(now), ...report }) : changeLine(report, now);
      // A change is a change of what the line says, not of the time on it.
      const key = json ? JSON.stringify(report) : changeLine(report, 0);
      if (printed.get(label(report)) === key) continue;
      printed.set(label(report), key);
      io.stdout.write(`${text}\n`);
    }
    for (const gone of [...printed.keys()].filter(k => !seen.has(k))) {
      printed.delete(gone);
      const [ns, name] = gone.split('/');
      const text = json ? JSON.stringify({ time: isoSeconds(now), namespace: ns, name, deleted: true }) : `${isoSeconds(now)} ${gone} deleted`;
      io.stdout.write(`${text}\n`);
    }
  };

  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let ticker: NodeJS.Timeout | undefined;
    let timer: NodeJS.Timeout | undefined;
    let watch: StoreWatch | undefined;
    const onInterrupt = () => settle(new CliError(`Interrupted; ${notReady(store.reports())}`, 130));
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      watch?.stop();
      clearInterval(ticker);
      clearTimeout(timer);
      io.interrupt?.removeEventListener('abort', onInterrupt);
      if (error) reject(error);
      else resolve();
    };
    const update = () => {
      if (settled) return;
      const reports = store.reports();
      if (live) draw(reports);
      else print(reports);
      if (options.name !== undefined && !reports.length) {
        settle(new CliError(`Function ${options.name} was deleted from namespace ${namespace}`));
        return;
      }
      const failed = reports.filter(r => r.state === ProgressState.FAILED);
      if (failed.length) settle(new CliError(`Function ${failed.map(r => `${label(r)} failed: ${explanation(r)}`).join('; Function ')}`));
      else if (reports.every(r => r.state === ProgressState.READY)) settle();
    };

    if (io.interrupt?.aborted) return onInterrupt();
    io.interrupt?.addEventListener('abort', onInterrupt);
    if (options.timeout) {
      const timeout = options.timeout;
      const ms = timeout.toMilliseconds();
      const after = ms < 1000 ? `${ms}ms` : humanDuration(ms);
      timer = setTimeout(() => settle(new CliError(`Timed out after ${after}; ${notReady(store.reports())}`)), ms);
    }
    if (live) ticker = setInterval(() => !settled && draw(store.reports()), 1_000);
    update();
    if (settled) return;
    watch = new StoreWatch(cluster.kubeConfig, store, kinds, namespace, update, e => settle(e));
    watch.start().catch(e => settle(describeApiError(e, 'watching Functions', cluster)));
  });
}

/** `not ready: ns/a (build, JobRunning), ns/b (ready, DeploymentWaiting)`. */
function notReady(reports: readonly FunctionStatusReport[]): string {
  const waiting = reports.filter(r => r.state !== ProgressState.READY);
  if (!waiting.length) return 'every Function is ready';
  return `not ready: ${waiting.map(r => `${label(r)} (${[r.stage, r.reason ?? r.message].filter(Boolean).join(', ')})`).join(', ')}`;
}

/** Adds `status` to a program whose global options are those of `kyma-serverless`. */
export function addStatusCommand(program: Command): void {
  program.command('status')
    .description('Show where each Function is in the build pipeline: source ConfigMap, build Job, Deployment, Service, HPA, ready')
    .argument('[name]', 'one Function (default: every Function in the namespace)')
    .option('-A, --all-namespaces', 'Functions of every namespace')
    .option('-w, --watch', 'follow the Functions until every one is ready (exit 0) or one fails (exit 1)')
    .addOption(new Option('--timeout <duration>', 'with --watch: give up after this long (exit 1), e.g. 90s, 10m, 1h30m').argParser(parseDuration))
    .addHelpText('after', `
Stages: source (inline sources in a ConfigMap, or Git sources fetched), build (the build Job),
deployment, service, hpa (only with scaleConfig minReplicas != maxReplicas), ready. They come from
the Function's conditions and from the objects the controller labels
serverless.kyma-project.io/function-name=<name>.

Exit code: 0 when no Function failed (without --watch; building is not failing) or every Function is
ready (with --watch); 1 when a Function failed, the watch timed out, or the cluster cannot be asked;
130 when the watch is interrupted.

Examples:
  # Every Function of the current namespace
  kyma-serverless status

  # One Function, followed until it is ready; give up after 10 minutes
  kyma-serverless status hello -n shop --watch --timeout 10m

  # Every namespace, as JSON for scripts
  kyma-serverless status -A -o json

  # In CI, after applying the manifests: one line per change, fails when a build fails
  kubectl apply -f dist/ && kyma-serverless status -n shop --watch --timeout 15m
`)
    .action(async (name: string | undefined, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<Omit<StatusOptions, 'name'>>();
      const interrupt = new AbortController();
      const onSigint = () => interrupt.abort();
      if (options.watch) process.once('SIGINT', onSigint);
      try {
        await runStatus({ ...options, name }, processIo(interrupt.signal));
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}
