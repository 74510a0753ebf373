/**
 * The webhook's metrics in the Prometheus text format, compared sample by sample with what
 * prom-client (the reference Node.js client, a dev dependency only) writes for the same
 * observations, so a slip in the format fails here and not in a scrape.
 */
import * as promClient from 'prom-client';
import { Counter, Gauge, Histogram, MetricsRegistry, RequestResult, WebhookMetrics } from '../../src/webhook/metrics';

/** A metric family as exposition text states it: HELP, TYPE and samples with their labels in name order. */
interface Family {
  help?: string;
  type?: string;
  samples: string[];
}

/**
 * Reads exposition text into families by name. Labels are put in name order (their order carries
 * no meaning), and every line must be a comment or a well-formed sample.
 */
function parseExposition(text: string): { [name: string]: Family } {
  const families: { [name: string]: Family } = {};
  const family = (name: string) => (families[name] ??= { samples: [] });
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      family(comment[2])[comment[1] === 'HELP' ? 'help' : 'type'] = comment[3];
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a comment or a sample: ${line}`);
    const labels = [...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(m => `${m[1]}="${m[2]}"`).sort();
    const base = sample[1].replace(/_(bucket|sum|count)$/, '');
    const owner = families[sample[1]] ? sample[1] : base;
    family(owner).samples.push(`${sample[1]}{${labels.join(',')}} ${Number(sample[3]) === Number(sample[3]) ? Number(sample[3]) : sample[3]}`);
  }
  for (const f of Object.values(families)) f.samples.sort();
  return families;
}

describe('MetricsRegistry', () => {
  test('writes counters, gauges and histograms as prom-client does for the same observations', async () => {
    const registry = new MetricsRegistry();
    const counter = new Counter<'path' | 'result'>(registry, { name: 'requests_total', help: 'Requests.', labelNames: ['path', 'result'] });
    const gauge = new Gauge(registry, { name: 'expiry_seconds', help: 'Expiry.' });
    const histogram = new Histogram<'path'>(registry, { name: 'duration_seconds', help: 'Duration.', labelNames: ['path'], buckets: [0.5, 0.1, 1] });
    const reference = new promClient.Registry();
    const refCounter = new promClient.Counter({ name: 'requests_total', help: 'Requests.', labelNames: ['path', 'result'], registers: [reference] });
    const refGauge = new promClient.Gauge({ name: 'expiry_seconds', help: 'Expiry.', registers: [reference] });
    const refHistogram = new promClient.Histogram({ name: 'duration_seconds', help: 'Duration.', labelNames: ['path'], buckets: [0.1, 0.5, 1], registers: [reference] });

    for (const [labels, by] of [[{ path: '/b', result: 'ok' }, 1], [{ path: '/a', result: 'ok' }, 2], [{ path: '/b', result: 'ok' }, 1]] as const) {
      counter.inc(labels, by);
      refCounter.inc(labels, by);
    }
    gauge.set(1767225600);
    refGauge.set(1767225600);
    for (const [path, v] of [['/a', 0.05], ['/a', 0.1], ['/b', 0.7], ['/a', 3]] as const) {
      histogram.observe({ path }, v);
      refHistogram.observe({ path }, v);
    }

    const text = await registry.metrics();
    expect(text.endsWith('\n')).toBe(true);
    const ours = parseExposition(text);
    expect(ours).toEqual(parseExposition(await reference.metrics()));
    expect(ours.duration_seconds.samples).toContain('duration_seconds_bucket{le="0.5",path="/a"} 2');
    // Series in label order, buckets ascending: the same text whatever order requests came in.
    expect(text.indexOf('path="/a"')).toBeLessThan(text.indexOf('path="/b"'));
    expect(text.indexOf('le="0.1"')).toBeLessThan(text.indexOf('le="0.5"'));
  });

  test('escapes label values and help texts as prom-client does', async () => {
    const registry = new MetricsRegistry();
    const reference = new promClient.Registry();
    const help = 'A back\\slash\nand a new line.';
    const value = 'a "quoted" \\ path\nwith a line feed';
    new Counter<'path'>(registry, { name: 'odd_total', help, labelNames: ['path'] }).inc({ path: value });
    new promClient.Counter({ name: 'odd_total', help, labelNames: ['path'], registers: [reference] }).inc({ path: value });
    const text = await registry.metrics();
    expect(text).toContain('odd_total{path="a \\"quoted\\" \\\\ path\\nwith a line feed"} 1');
    expect(parseExposition(text)).toEqual(parseExposition(await reference.metrics()));
  });

  test('refuses a counter going down and a name registered twice', () => {
    const registry = new MetricsRegistry();
    const counter = new Counter(registry, { name: 'c_total', help: 'C.' });
    expect(() => counter.inc(undefined, -1)).toThrow('A counter only goes up: cannot add -1');
    expect(() => new Gauge(registry, { name: 'c_total', help: 'Again.' })).toThrow('A metric named c_total is registered already');
  });
});

describe('WebhookMetrics', () => {
  test('export the webhook\'s metrics and the process metrics under the names client libraries use', async () => {
    const metrics = new WebhookMetrics();
    metrics.requests.inc({ path: '/validation/function', result: RequestResult.DENIED });
    metrics.duration.observe({ path: '/validation/function' }, 0.002);
    metrics.certificateExpiry.set(1800000000);
    const families = parseExposition(await metrics.registry.metrics());
    expect(Object.keys(families)).toEqual(expect.arrayContaining([
      'kyma_serverless_webhook_requests_total', 'kyma_serverless_webhook_request_duration_seconds',
      'kyma_serverless_webhook_certificate_expiry_timestamp_seconds',
      'process_cpu_user_seconds_total', 'process_cpu_system_seconds_total', 'process_cpu_seconds_total', 'process_start_time_seconds',
      'process_resident_memory_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds', 'nodejs_version_info',
    ]));
    // The same names and types as prom-client's default metrics.
    const reference = new promClient.Registry();
    promClient.collectDefaultMetrics({ register: reference });
    const defaults = parseExposition(await reference.metrics());
    for (const [name, family] of Object.entries(families).filter(([n]) => /^(process|nodejs)_/.test(n))) {
      expect(`${name}: ${family.type}`).toBe(`${name}: ${defaults[name]?.type}`);
    }
    const value = (name: string) => Number(families[name].samples[0].split(' ')[1]);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    expect(value('process_start_time_seconds')).toBeLessThanOrEqual(Date.now() / 1000);
    expect(families.nodejs_version_info.samples).toEqual([`nodejs_version_info{version="${process.version}"} 1`]);
  });

  test('leave out the process metrics when asked', async () => {
    expect(await new WebhookMetrics(false).registry.metrics()).not.toContain('process_');
  });
});
