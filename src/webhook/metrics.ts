/**
 * Prometheus metrics of the webhook server, in the text exposition format 0.0.4.
 *
 * Written here rather than with a metrics library: the server is bundled into one file that ships
 * in a ConfigMap, and three metrics plus the process's own need no more than this. The process
 * metrics carry the names client libraries use (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`, ...), so existing dashboards work.
 */
import { monitorEventLoopDelay, IntervalHistogram } from 'node:perf_hooks';

/** What became of a request, the `result` label of the request counter. */
export enum RequestResult {
  /** A review that allowed the Function (with or without a patch). */
  ALLOWED = 'allowed',
  /** A review that denied the Function. */
  DENIED = 'denied',
  /** Not an AdmissionReview about a Function, or not JSON (HTTP 400). */
  BAD_REQUEST = 'bad_request',
  /** A body over the size limit (HTTP 413). */
  TOO_LARGE = 'too_large',
  /** The request was not complete in time (HTTP 408). */
  TIMEOUT = 'timeout',
  /** A health, readiness or metrics request answered (HTTP 200). */
  OK = 'ok',
  /** Not ready, or shutting down (HTTP 503). */
  UNAVAILABLE = 'unavailable',
  /** No such path or method (HTTP 404, 405). */
  NOT_FOUND = 'not_found',
  /** A bug of ours (HTTP 500). */
  ERROR = 'error',
}

/** Label values by label name. */
export type Labels<L extends string> = { readonly [name in L]: string };

/** One metric: its name, help text and type, and how to render its samples. */
interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  samples(): string[];
}

/** A label value as the exposition format writes it: backslash, double quote and line feed escaped. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The `{a="1",b="2"}` of a sample, labels in the order given; empty without labels. */
function labelText(pairs: readonly (readonly [string, string])[]): string {
  return pairs.length ? `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
}

/** A number as the exposition format writes it. */
function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** Holds metrics and renders them. */
export class MetricsRegistry {
  /** The Content-Type of {@link metrics}. */
  public readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly all: Metric[] = [];

  /** Adds a metric; its name must be new. */
  public register(metric: Metric): void {
    if (this.all.some(m => m.name === metric.name)) throw new Error(`A metric named ${metric.name} is registered already`);
    this.all.push(metric);
  }

  /** Every metric in the exposition format, in the order registered. */
  public async metrics(): Promise<string> {
    return this.all.map(m => [`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${m.name} ${m.type}`, ...m.samples()].join('\n')).join('\n') + '\n';
  }
}

/** Series of a metric, by their label values in label order. */
class Series<L extends string, V> {
  private readonly byKey = new Map<string, { readonly pairs: [string, string][]; value: V }>();

  constructor(private readonly labelNames: readonly L[], private readonly initial: () => V) {}

  public get(labels: Labels<L> | undefined): { value: V } {
    const pairs = this.labelNames.map(name => [name, labels?.[name] ?? ''] as [string, string]);
    const key = JSON.stringify(pairs);
    let series = this.byKey.get(key);
    if (!series) {
      series = { pairs, value: this.initial() };
      this.byKey.set(key, series);
    }
    return series;
  }

  /** Every series, sorted by label values, so the output does not depend on the order of requests. */
  public entries(): { readonly pairs: [string, string][]; readonly value: V }[] {
    return [...this.byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  }
}

/** Options of a metric. */
export interface MetricOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

/** A value that only goes up. */
export class Counter<L extends string = never> {
  private readonly series: Series<L, number>;

  constructor(registry: MetricsRegistry, options: MetricOptions<L>) {
    this.series = new Series(options.labelNames ?? [], () => 0);
    registry.register({
      name: options.name, help: options.help, type: 'counter',
      samples: () => this.series.entries().map(s => `${options.name}${labelText(s.pairs)} ${numberText(s.value)}`),
    });
  }

  /** Adds `by` (default 1). */
  public inc(labels?: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new Error(`A counter only goes up: cannot add ${by}`);
    this.series.get(labels).value += by;
  }
}

/** A value that is set. */
export class Gauge<L extends string = never> {
  private readonly series: Series<L, number>;

  constructor(registry: MetricsRegistry, options: MetricOptions<L> & { readonly collect?: (gauge: Gauge<L>) => void }) {
    this.series = new Series(options.labelNames ?? [], () => 0);
    registry.register({
      name: options.name, help: options.help, type: 'gauge',
      samples: () => {
        options.collect?.(this);
        return this.series.entries().map(s => `${options.name}${labelText(s.pairs)} ${numberText(s.value)}`);
      },
    });
  }

  /** Sets the value. */
  public set(value: number, labels?: Labels<L>): void {
    this.series.get(labels).value = value;
  }
}

/** Counts observations into cumulative buckets, with their sum and count. */
export class Histogram<L extends string = never> {
  private readonly series: Series<L, { counts: number[]; sum: number; count: number }>;
  private readonly buckets: readonly number[];

  constructor(registry: MetricsRegistry, options: MetricOptions<L> & { readonly buckets: readonly number[] }) {
    const buckets = [...options.buckets].sort((a, b) => a - b);
    this.series = new Series(options.labelNames ?? [], () => ({ counts: buckets.map(() => 0), sum: 0, count: 0 }));
    this.buckets = buckets;
    registry.register({
      name: options.name, help: options.help, type: 'histogram',
      samples: () => this.series.entries().flatMap(({ pairs, value }) => [
        ...buckets.map((le, i) => `${options.name}_bucket${labelText([...pairs, ['le', numberText(le)]])} ${value.counts[i]}`),
        `${options.name}_bucket${labelText([...pairs, ['le', '+Inf']])} ${value.count}`,
        `${options.name}_sum${labelText(pairs)} ${numberText(value.sum)}`,
        `${options.name}_count${labelText(pairs)} ${value.count}`,
      ]),
    });
  }

  /** Records one observation. */
  public observe(labels: Labels<L> | undefined, value: number): void {
    const series = this.series.get(labels).value;
    // Cumulative: an observation counts in every bucket whose upper bound it does not exceed.
    this.buckets.forEach((le, i) => { if (value <= le) series.counts[i]++; });
    series.sum += value;
    series.count++;
  }
}

/**
 * The process's own metrics, under the names Prometheus client libraries use: CPU seconds, start
 * time, resident memory, open file descriptors (Linux), V8 heap, event-loop lag, Node.js version.
 */
function registerProcessMetrics(registry: MetricsRegistry): void {
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  const counterLike = (name: string, help: string, pick: (usage: NodeJS.CpuUsage) => number) => registry.register({
    name, help, type: 'counter', samples: () => [`${name} ${numberText(pick(process.cpuUsage()) / 1e6)}`],
  });
  counterLike('process_cpu_user_seconds_total', 'User CPU time spent in seconds.', u => u.user);
  counterLike('process_cpu_system_seconds_total', 'System CPU time spent in seconds.', u => u.system);
  counterLike('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', u => u.user + u.system);
  new Gauge(registry, { name: 'process_start_time_seconds', help: 'Start time of the process since unix epoch in seconds.', collect: g => g.set(startSeconds) });
  new Gauge(registry, { name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', collect: g => g.set(process.memoryUsage.rss()) });
  new Gauge(registry, {
    name: 'nodejs_heap_size_total_bytes', help: 'Process heap size from Node.js in bytes.', collect: g => g.set(process.memoryUsage().heapTotal),
  });
  new Gauge(registry, {
    name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.', collect: g => g.set(process.memoryUsage().heapUsed),
  });
  new Gauge(registry, {
    name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.', collect: g => g.set(process.memoryUsage().external),
  });
  let lag: IntervalHistogram | undefined;
  try {
    lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
  } catch {
    lag = undefined;
  }
  if (lag) {
    const delay = lag;
    new Gauge(registry, {
      name: 'nodejs_eventloop_lag_p99_seconds', help: 'The 99th percentile of the recorded event loop delays.', collect: g => g.set(delay.percentile(99) / 1e9),
    });
  }
  new Gauge<'version'>(registry, {
    name: 'nodejs_version_info', help: 'Node.js version info.', labelNames: ['version'], collect: g => g.set(1, { version: process.version }),
  });
}

/** The webhook's metrics, in their own registry. */
export class WebhookMetrics {
  /** Holds every metric; `/metrics` renders it. */
  public readonly registry = new MetricsRegistry();
  /** Requests by path and result. */
  public readonly requests: Counter<'path' | 'result'>;
  /** Time from a request's first byte to its response, by path. */
  public readonly duration: Histogram<'path'>;
  /** When the serving certificate expires, as a Unix time. */
  public readonly certificateExpiry: Gauge;

  /**
   * @param processMetrics also export the Node.js process's metrics (memory, event loop, CPU)
   */
  constructor(processMetrics = true) {
    this.requests = new Counter(this.registry, {
      name: 'kyma_serverless_webhook_requests_total',
      help: 'HTTP requests to the webhook, by path and result.',
      labelNames: ['path', 'result'],
    });
    this.duration = new Histogram(this.registry, {
      name: 'kyma_serverless_webhook_request_duration_seconds',
      help: 'Time from the first byte of a request to its response, by path.',
      labelNames: ['path'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.certificateExpiry = new Gauge(this.registry, {
      name: 'kyma_serverless_webhook_certificate_expiry_timestamp_seconds',
      help: 'When the serving certificate expires, as a Unix time.',
    });
    if (processMetrics) registerProcessMetrics(this.registry);
  }
}
