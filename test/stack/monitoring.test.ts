import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration, Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { Registry, ServerlessRelease, ServerlessStack, ServerlessStackProps } from '../../src';
import { syncOptionsOf, syncWaveOf } from '../../src/gitops/sync-waves';
import { validateManifests } from '../../src/policy/manifests';
import { AlertSeverity, ServerlessAlert } from '../../src/stack/_monitoring-rules';
import { KNOWN_METRICS, MetricSource, seriesNames } from '../../src/stack/_monitoring-metrics';
import { WebhookMetrics } from '../../src/webhook/metrics';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { parsePromql } from '../util/promql';
import { find, synthStack } from '../util/synth';

const MONITORING_DOC = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'monitoring.md'), 'utf8');
const MONITORING_GROUP = 'monitoring.coreos.com';
const isMonitoring = (o: any) => o.apiVersion.startsWith(`${MONITORING_GROUP}/`);

type Labels = { [key: string]: string };

/** Whether a label selector (`matchLabels`, `matchExpressions`; `{}` selects everything) selects labels. */
function selects(selector: any, labels: Labels): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v)
    && (selector?.matchExpressions ?? []).every((e: any) => (e.operator === 'In' ? e.values.includes(labels[e.key]) : false));
}

/** The stack's Pods, as their Deployments' templates describe them. */
function podsOf(objects: readonly any[]) {
  return objects.filter(o => o.kind === 'Deployment').map(d => ({
    workload: d.metadata.name as string,
    namespace: d.metadata.namespace as string,
    labels: d.spec.template.metadata.labels as Labels,
    ports: d.spec.template.spec.containers.flatMap((c: any) => c.ports ?? []) as { name?: string; containerPort: number }[],
  }));
}

/** What a scrape reaches: the Pod (by workload) and the container port number. */
interface ScrapeTarget {
  readonly workload: string;
  readonly namespace: string;
  readonly labels: Labels;
  readonly port: number;
}

/**
 * Every target of every ServiceMonitor and PodMonitor, found as the Prometheus Operator finds them:
 * a ServiceMonitor's selector selects Services of its namespaces, each endpoint names a Service
 * port, whose targetPort is a port of the Pods the Service selects; a PodMonitor selects Pods and
 * names a container port. Fails when a monitor or an endpoint finds nothing.
 */
function scrapeTargets(objects: readonly any[]): { monitor: string; via: string; target: ScrapeTarget }[] {
  const pods = podsOf(objects);
  const found: { monitor: string; via: string; target: ScrapeTarget }[] = [];
  for (const monitor of objects.filter(isMonitoring)) {
    const namespaces: string[] = monitor.spec.namespaceSelector?.matchNames ?? [monitor.metadata.namespace];
    const name = `${monitor.kind} ${monitor.metadata.name}`;
    if (monitor.kind === 'ServiceMonitor') {
      const services = objects.filter(o => o.kind === 'Service' && namespaces.includes(o.metadata.namespace) && selects(monitor.spec.selector, o.metadata.labels ?? {}));
      if (services.length !== 1) throw new Error(`${name} selects ${services.length} Services`);
      const [service] = services;
      for (const endpoint of monitor.spec.endpoints) {
        const port = service.spec.ports.find((p: any) => p.name === endpoint.port);
        if (!port) throw new Error(`${name}: Service ${service.metadata.name} has no port named ${endpoint.port}`);
        const backends = pods.filter(p => p.namespace === service.metadata.namespace && selects({ matchLabels: service.spec.selector }, p.labels));
        if (!backends.length) throw new Error(`${name}: Service ${service.metadata.name} selects no Pod`);
        for (const pod of backends) {
          const containerPort = pod.ports.find(p => (typeof port.targetPort === 'number' ? p.containerPort === port.targetPort : p.name === port.targetPort));
          if (!containerPort) throw new Error(`${name}: the Pods of ${pod.workload} have no port ${port.targetPort}`);
          found.push({ monitor: name, via: `Service ${service.metadata.name} port ${port.name}`, target: { ...pod, port: containerPort.containerPort } });
        }
      }
    } else if (monitor.kind === 'PodMonitor') {
      const selected = pods.filter(p => namespaces.includes(p.namespace) && selects(monitor.spec.selector, p.labels));
      if (!selected.length) throw new Error(`${name} selects no Pod`);
      for (const endpoint of monitor.spec.podMetricsEndpoints) {
        for (const pod of selected) {
          const containerPort = pod.ports.find(p => p.name === endpoint.port);
          if (!containerPort) throw new Error(`${name}: the Pods of ${pod.workload} have no port named ${endpoint.port}`);
          found.push({ monitor: name, via: `Pod port ${endpoint.port}`, target: { ...pod, port: containerPort.containerPort } });
        }
      }
    }
  }
  return found;
}

/** A Pod that connects: its namespace, the namespace's labels and its own. */
interface Client {
  readonly namespace: string;
  readonly namespaceLabels?: Labels;
  readonly labels: Labels;
}

/**
 * Whether the NetworkPolicies let a client reach a port of a Pod, by the rules of NetworkPolicy:
 * a Pod no Ingress policy selects accepts everything; otherwise some rule of some policy that
 * selects it must admit the client (peers: a namespace selector and a Pod selector together, a
 * Pod selector alone meaning the policy's namespace) and the port.
 */
function admits(objects: readonly any[], target: ScrapeTarget, client: Client): boolean {
  const policies = objects.filter(o => o.kind === 'NetworkPolicy' && o.metadata.namespace === target.namespace
    && o.spec.policyTypes.includes('Ingress') && selects(o.spec.podSelector, target.labels));
  if (!policies.length) return true;
  const namespaceLabels = { ...client.namespaceLabels, 'kubernetes.io/metadata.name': client.namespace };
  const peerAdmits = (policy: any, peer: any) => {
    if (peer.ipBlock) return false;
    const namespaceOk = peer.namespaceSelector ? selects(peer.namespaceSelector, namespaceLabels) : client.namespace === policy.metadata.namespace;
    return namespaceOk && (!peer.podSelector || selects(peer.podSelector, client.labels));
  };
  return policies.some(policy => (policy.spec.ingress ?? []).some((rule: any) =>
    (!rule.from?.length || rule.from.some((peer: any) => peerAdmits(policy, peer)))
    && (!rule.ports?.length || rule.ports.some((p: any) => (p.protocol ?? 'TCP') === 'TCP' && p.port === target.port))));
}

/** Every expression of the PrometheusRule and of the dashboard, each with where it is. */
function expressions(objects: readonly any[]): { where: string; expr: string }[] {
  const rules = objects.filter(o => o.kind === 'PrometheusRule').flatMap(o => o.spec.groups.flatMap((g: any) => g.rules
    .map((r: any) => ({ where: `${g.name}/${r.alert}${r.labels?.condition ? ` (${r.labels.condition})` : ''}`, expr: r.expr }))));
  const panels = dashboardsOf(objects).flatMap(d => d.panels.flatMap((p: any) => (p.targets ?? [])
    .map((t: any) => ({ where: `dashboard "${p.title}" ${t.refId}`, expr: t.expr }))));
  return [...rules, ...panels];
}

/** The dashboards of the output, parsed. */
function dashboardsOf(objects: readonly any[]): any[] {
  return objects.filter(o => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard).flatMap(o => Object.values(o.data).map(text => JSON.parse(String(text))));
}

/** Every alerting rule of the output. */
function alertsOf(objects: readonly any[]): any[] {
  return find(objects, 'PrometheusRule').spec.groups.flatMap((g: any) => g.rules);
}

/** GitHub's (and npm's) anchor of a Markdown heading. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');
}

const KNOWN_SERIES = new Map(KNOWN_METRICS.flatMap(m => seriesNames(m).map(name => [name, m.source] as const)));
const MONITORED: ServerlessStackProps = { monitoring: { selectorLabels: { release: 'prometheus' } } };

describe('ServerlessStack with monitoring', () => {
  const objects = synthStack(MONITORED);
  const monitoring = objects.filter(isMonitoring);

  test('renders ServiceMonitors for the controller and the webhook, a PodMonitor for the registry, a PrometheusRule and a dashboard', () => {
    expect(monitoring.map(o => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ServiceMonitor/serverless-controller-manager',
      'ServiceMonitor/serverless-webhook',
      'PodMonitor/serverless-docker-registry',
      expect.stringMatching(/^PrometheusRule\/serverless-monitoring-rules-[0-9a-f]{8}$/),
    ]);
    expect(dashboardsOf(objects)).toHaveLength(1);
    for (const o of monitoring) {
      expect(o.metadata.namespace).toBe('kyma-system');
      expect(o.metadata.labels).toMatchObject({ release: 'prometheus' });
    }
  });

  test('every object is valid, the Prometheus Operator\'s against their CRDs (the models validate knows them)', () => {
    expectValidKubernetesObjects(objects);
  });

  test('the manifests pass validateManifests, schemas and security policies, with no unknown kind', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitoring-'));
    try {
      fs.writeFileSync(path.join(dir, 'stack.yaml'), objects.map(o => stringify(o)).join('---\n'));
      const report = validateManifests(dir);
      expect(report.objects).toBe(objects.length);
      expect(report.findings.map(f => `${f.severity} ${f.object} ${f.rule}: ${f.message}`)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every monitor selects a Service or Pod the stack has, by labels and port name', () => {
    expect(scrapeTargets(objects).map(t => `${t.monitor} -> ${t.via} -> ${t.target.workload}:${t.target.port}`)).toEqual([
      'ServiceMonitor serverless-controller-manager -> Service serverless-controller-manager port http-metrics -> serverless-ctrl-mngr:8080',
      'ServiceMonitor serverless-webhook -> Service serverless-webhook port http-metrics -> serverless-webhook:8080',
      'PodMonitor serverless-docker-registry -> Pod port http-metrics -> serverless-docker-registry:5001',
    ]);
  });

  test('the registry serves metrics on a debug listener of its own, 5001, which its NodePort Service does not expose', () => {
    const config = find(objects, 'ConfigMap', 'serverless-docker-registry-config').data['config.yml'];
    expect(config).toMatch(/debug:\n\s+addr: :5001\n\s+prometheus:\n\s+enabled: true\n\s+path: \/metrics/);
    expect(find(objects, 'Deployment', 'serverless-docker-registry').spec.template.spec.containers[0].ports).toEqual([
      { name: 'http-registry', containerPort: 5000, protocol: 'TCP' },
      { name: 'http-metrics', containerPort: 5001, protocol: 'TCP' },
    ]);
    expect(find(objects, 'Service', 'serverless-docker-registry').spec.ports.map((p: any) => p.port)).toEqual([5000]);
  });

  test('the NetworkPolicies admit Pods labelled for scraping from any namespace, on every target, and nobody else', () => {
    const targets = scrapeTargets(objects).map(t => t.target);
    const prometheus = { namespace: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus', 'networking.kyma-project.io/metrics-scraping': 'allowed' } };
    expect(targets.map(t => admits(objects, t, prometheus))).toEqual([true, true, true]);
    expect(targets.map(t => admits(objects, t, { ...prometheus, labels: { 'app.kubernetes.io/name': 'prometheus' } }))).toEqual([false, false, false]);
    // The registry's pushes still come from anywhere, its metrics only from scrapers.
    const registry = targets.find(t => t.workload === 'serverless-docker-registry')!;
    expect(admits(objects, { ...registry, port: 5000 }, { namespace: 'team-a', labels: {} })).toBe(true);
    expect(admits(objects, registry, { namespace: 'team-a', labels: {} })).toBe(false);
  });

  test('with prometheusNamespace, every Pod of that namespace may scrape, and no other namespace\'s', () => {
    const scoped = synthStack({ monitoring: { prometheusNamespace: 'monitoring' } });
    const targets = scrapeTargets(scoped).map(t => t.target);
    expect(targets.map(t => admits(scoped, t, { namespace: 'monitoring', labels: {} }))).toEqual([true, true, true]);
    expect(targets.map(t => admits(scoped, t, { namespace: 'team-a', labels: { 'networking.kyma-project.io/metrics-scraping': 'allowed' } })))
      .toEqual([false, false, false]);
    expect(find(scoped, 'NetworkPolicy', 'kyma-project.io--serverless-allow-prometheus').spec.ingress[0].from)
      .toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
  });

  test('without monitoring, the policies keep Prometheus out of the namespace: the new policy is what lets it in', () => {
    const plain = synthStack();
    const targets = scrapeTargets(objects).map(t => t.target);
    const prometheus = { namespace: 'monitoring', labels: { 'networking.kyma-project.io/metrics-scraping': 'allowed' } };
    expect(targets.map(t => admits(plain, t, prometheus))).toEqual([false, false, false]);
  });

  test('every monitoring object syncs with the stack, and is not dry-run before the Prometheus Operator\'s CRDs exist', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', MONITORED);
    const apiObjects = stack.node.findAll().filter((c: any) => typeof c.apiVersion === 'string' && c.apiVersion.startsWith(MONITORING_GROUP)) as any[];
    expect(apiObjects).toHaveLength(4);
    for (const o of apiObjects) {
      expect(syncWaveOf(o)).toBe('-1');
      expect(syncOptionsOf(o)).toEqual(['SkipDryRunOnMissingResource=true']);
    }
  });
});

describe('alerts', () => {
  const objects = synthStack(MONITORED);
  const alerts = alertsOf(objects);

  test('the stack alerts on its controller, builds, Functions, webhook and registry', () => {
    expect(alerts.map(a => [a.alert, a.labels.severity, a.labels.condition, a.for])).toEqual([
      ['KymaServerlessControllerDown', 'critical', undefined, '5m'],
      ['KymaServerlessControllerNotReconciling', 'critical', undefined, '15m'],
      ['KymaServerlessControllerReconcileErrors', 'warning', undefined, '15m'],
      ['KymaServerlessBuildJobsFailing', 'warning', undefined, '5m'],
      ['KymaServerlessFunctionNotReady', 'warning', 'BuildReady', '30m'],
      ['KymaServerlessFunctionNotReady', 'warning', 'Running', '30m'],
      ['KymaServerlessWebhookDown', 'critical', undefined, '5m'],
      ['KymaServerlessWebhookErrors', 'warning', undefined, '10m'],
      ['KymaServerlessWebhookLatencyHigh', 'warning', undefined, '10m'],
      ['KymaServerlessWebhookCertificateExpiring', 'warning', undefined, '15m'],
      ['KymaServerlessRegistryDown', 'critical', undefined, '5m'],
      ['KymaServerlessRegistryVolumeFilling', 'warning', undefined, '15m'],
    ]);
    expect(new Set(alerts.map(a => a.alert))).toEqual(new Set(Object.values(ServerlessAlert)));
    expect(new Set(alerts.map(a => a.labels.severity))).toEqual(new Set(Object.values(AlertSeverity)));
  });

  test('select the stack\'s own targets by namespace and job, the registry\'s volume by its claim', () => {
    const expr = (name: string) => alerts.find(a => a.alert === name).expr;
    expect(expr('KymaServerlessControllerDown')).toBe('absent(up{namespace="kyma-system",job="serverless-controller-manager"} == 1)');
    expect(expr('KymaServerlessWebhookDown')).toBe('absent(up{namespace="kyma-system",job="serverless-webhook"} == 1)');
    // A PodMonitor's targets get the job <namespace>/<name>.
    expect(expr('KymaServerlessRegistryDown')).toBe('absent(up{namespace="kyma-system",job="kyma-system/serverless-docker-registry"} == 1)');
    expect(expr('KymaServerlessRegistryVolumeFilling')).toContain('kubelet_volume_stats_used_bytes{namespace="kyma-system",persistentvolumeclaim="serverless-docker-registry"}');
    expect(expr('KymaServerlessControllerNotReconciling')).toContain('controller="function-controller"');
    expect(expr('KymaServerlessWebhookErrors')).toContain('path=~"/defaulting/functions|/validation/function",result!~"allowed|denied"');
  });

  test('every expression parses with Prometheus\' own PromQL grammar', () => {
    const all = [...expressions(objects), ...expressions(synthStack({ namespace: 'serverless', monitoring: { alerts: { webhookLatency: Duration.millis(250) } } }))];
    expect(all.length).toBeGreaterThan(alerts.length);
    expect(all.map(e => ({ where: e.where, errors: parsePromql(e.expr).errors }))).toEqual(all.map(e => ({ where: e.where, errors: [] })));
  });

  test('the parser catches what Prometheus would refuse', () => {
    expect(parsePromql('sum(rate(up[5m])) >').errors).not.toEqual([]);
    expect(parsePromql('rate(up{job="a"[5m])').errors).not.toEqual([]);
    expect(parsePromql('no_such_function(up)').errors).not.toEqual([]);
    expect(parsePromql('sum by (le) (rate(a_bucket{job="x"}[5m])) and on () b > 1').metrics).toEqual(['a_bucket', 'b']);
  });

  test('every metric an expression reads is one a program really exports, and every listed one is read (by one release or the other)', () => {
    const all = [...expressions(objects), ...expressions(synthStack({ ...MONITORED, release: ServerlessRelease.V1_13_0 }))];
    const unknown = all.flatMap(e => parsePromql(e.expr).metrics.filter(m => !KNOWN_SERIES.has(m)).map(m => `${e.where}: ${m}`));
    expect(unknown).toEqual([]);
    const read = new Set(all.flatMap(e => parsePromql(e.expr).metrics));
    expect(KNOWN_METRICS.filter(m => !seriesNames(m).some(s => read.has(s))).map(m => m.name)).toEqual([]);
  });

  test('the webhook\'s metrics in the list are the ones src/webhook/metrics.ts registers, with their types', async () => {
    const exported = await new WebhookMetrics(false).registry.metrics();
    const types = Object.fromEntries([...exported.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(m => [m[1], m[2]]));
    for (const known of KNOWN_METRICS.filter(m => m.source === MetricSource.WEBHOOK)) expect([known.name, types[known.name]]).toEqual([known.name, known.type]);
  });

  test('each alert names its runbook, a section of docs/monitoring.md named after it, and links none by default', () => {
    const file = 'docs/monitoring.md';
    const anchors = [...MONITORING_DOC.matchAll(/^#{3,4} (.+)$/gm)].map(m => anchorOf(m[1]));
    for (const alert of alerts) {
      expect(alert.annotations.runbook_url).toBeUndefined();
      expect(alert.annotations.description).toMatch(new RegExp(`\\S \\bRunbook: ${alert.alert} in docs/monitoring\\.md of cdk8s-kyma-serverless$`));
      expect(`${file}: ${anchors.includes(alert.alert.toLowerCase())}`).toBe(`${file}: true`);
      expect(alert.annotations.summary).toBeTruthy();
    }
  });

  test('thresholds, extra labels and the runbook URL come from the props', () => {
    const tuned = alertsOf(synthStack({
      monitoring: {
        alerts: {
          labels: { team: 'platform' },
          runbookBaseUrl: 'https://wiki.example.com/serverless',
          functionNotReadyFor: Duration.hours(1),
          buildFailurePercent: 30,
          webhookLatency: Duration.millis(500),
          certificateExpiry: Duration.days(7),
          registryVolumeUsagePercent: 90,
        },
      },
    }));
    const rule = (name: string) => tuned.find(a => a.alert === name);
    expect(tuned.every(a => a.labels.team === 'platform' && a.annotations.runbook_url === `https://wiki.example.com/serverless#${a.alert.toLowerCase()}`)).toBe(true);
    // The link says where the runbook is: the description does not say it again.
    expect(tuned.filter(a => a.annotations.description.includes('Runbook:'))).toEqual([]);
    expect(tuned.filter(a => a.alert === 'KymaServerlessFunctionNotReady').map(a => a.for)).toEqual(['1h', '1h']);
    expect(rule('KymaServerlessBuildJobsFailing').expr).toMatch(/ > 30 and on \(\) /);
    expect(rule('KymaServerlessWebhookLatencyHigh').expr).toMatch(/\) > 0\.5$/);
    expect(rule('KymaServerlessWebhookCertificateExpiring').expr).toMatch(/ - time\(\) < 604800$/);
    expect(rule('KymaServerlessRegistryVolumeFilling').expr).toMatch(/ > 90$/);
  });

  test('a stack without the webhook or with an external registry has neither their monitors, nor their alerts, nor their panels', () => {
    const lean = synthStack({ webhook: { enabled: false }, registry: Registry.external({ secretName: 'registry' }), monitoring: {} });
    expect(lean.filter(isMonitoring).map(o => o.kind)).toEqual(['ServiceMonitor', 'PrometheusRule']);
    expect(alertsOf(lean).map(a => a.alert)).not.toContainEqual(expect.stringMatching(/Webhook|Registry/));
    expect(dashboardsOf(lean)[0].panels.map((p: any) => p.title)).not.toContainEqual(expect.stringMatching(/Admission|Certificate|Registry/));
    expect(find(lean, 'NetworkPolicy', 'kyma-project.io--serverless-allow-prometheus').spec.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 8080 }]);
  });

  test('alerts.enabled false drops the PrometheusRule, dashboards.enabled false the dashboard', () => {
    const none = synthStack({ monitoring: { alerts: { enabled: false }, dashboards: { enabled: false } } });
    expect(none.filter(isMonitoring).map(o => o.kind)).toEqual(['ServiceMonitor', 'ServiceMonitor', 'PodMonitor']);
    expect(dashboardsOf(none)).toEqual([]);
  });
});

describe('the dashboard', () => {
  const objects = synthStack(MONITORED);
  const configMap = objects.find(o => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard);
  const dashboard = dashboardsOf(objects)[0];

  test('is a ConfigMap Grafana\'s sidecar finds by its grafana_dashboard label, in the stack\'s namespace', () => {
    expect(configMap.metadata.labels.grafana_dashboard).toBe('1');
    expect(configMap.metadata.namespace).toBe('kyma-system');
    expect(Object.keys(configMap.data)).toEqual(['kyma-serverless-kyma-system.json']);
  });

  test('shows builds (count, failures, time), Functions by state, the controller, webhook requests and latency, and the registry', () => {
    expect(dashboard.panels.map((p: any) => `${p.type}: ${p.title}`)).toEqual([
      'row: Functions', 'timeseries: Functions by state', 'timeseries: Time from creation to running',
      'row: Builds', 'timeseries: Build Jobs in the last hour', 'timeseries: Build time',
      'row: Controller', 'timeseries: Reconciliations', 'timeseries: Reconcile time (99th percentile)', 'timeseries: Work queue depth',
      'row: Admission webhook', 'timeseries: Admission reviews', 'timeseries: Admission latency', 'stat: Certificate expires in',
      'row: Registry', 'timeseries: Registry volume used',
    ]);
    expect(dashboard.panels.find((p: any) => p.title === 'Functions by state').targets.map((t: any) => t.legendFormat))
      .toEqual(['running', 'not available', 'building', 'build failed']);
  });

  test('every panel reads only known metrics, through the data source variable', () => {
    for (const panel of dashboard.panels.filter((p: any) => p.type !== 'row')) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const target of panel.targets) {
        const parsed = parsePromql(target.expr);
        expect({ panel: panel.title, ...parsed, unknown: parsed.metrics.filter(m => !KNOWN_SERIES.has(m)) })
          .toEqual({ panel: panel.title, errors: [], metrics: parsed.metrics, unknown: [] });
        // No Grafana variable but the rate interval ($1 is label_replace's capture group, which Grafana leaves alone).
        expect(target.expr).not.toMatch(/\$(?!__rate_interval|\d)/);
      }
    }
    expect(dashboard.templating.list).toEqual([expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' })]);
  });

  test('is deterministic: the same text on every synth, keys sorted, panel ids in order, a uid from the namespace', () => {
    const text = Object.values(configMap.data)[0] as string;
    expect(Object.values(dashboardsOf(synthStack(MONITORED))).map(d => JSON.stringify(d))).toEqual([JSON.stringify(JSON.parse(text))]);
    const sorted = (value: unknown): boolean => (Array.isArray(value) ? value.every(sorted)
      : value && typeof value === 'object' ? Object.keys(value).join() === Object.keys(value).sort().join() && Object.values(value).every(sorted) : true);
    expect(sorted(dashboard)).toBe(true);
    expect(dashboard.panels.map((p: any) => p.id)).toEqual(dashboard.panels.map((_: any, i: number) => i + 1));
    expect(dashboard.uid).toBe('kyma-serverless-kyma-system');
    expect(dashboardsOf(synthStack({ namespace: 'a'.repeat(40), monitoring: {} }))[0].uid).toMatch(/^kyma-serverless-[0-9a-f]{16}$/);
    // Panels of a row never overlap and fill Grafana's 24 columns.
    for (const y of new Set(dashboard.panels.filter((p: any) => p.type !== 'row').map((p: any) => p.gridPos.y))) {
      const row = dashboard.panels.filter((p: any) => p.type !== 'row' && p.gridPos.y === y);
      expect(row.reduce((sum: number, p: any) => sum + p.gridPos.w, 0)).toBe(24);
    }
  });

  test('takes its labels and namespace from the props', () => {
    const other = synthStack({ monitoring: { dashboards: { labels: { grafana_dashboard: 'serverless' }, namespace: 'monitoring' } } });
    const map = other.find(o => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard);
    expect([map.metadata.namespace, map.metadata.labels.grafana_dashboard]).toEqual(['monitoring', 'serverless']);
  });
});

describe('monitoring off', () => {
  test('is the default, and renders none of it: the output is the stack without monitoring, byte for byte', () => {
    const plain = synthStack();
    expect(plain.filter(o => isMonitoring(o) || o.metadata.name === 'kyma-project.io--serverless-allow-prometheus')).toEqual([]);
    expect(plain.filter(o => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard)).toEqual([]);
    expect(find(plain, 'Deployment', 'serverless-docker-registry').spec.template.spec.containers[0].ports).toEqual([
      { name: 'http-registry', containerPort: 5000, protocol: 'TCP' },
    ]);
    expect(JSON.stringify(synthStack({ monitoring: { enabled: false, prometheusNamespace: 'monitoring' } }))).toBe(JSON.stringify(plain));
  });

  test('does not load the Prometheus Operator models; monitoring loads them when it renders', () => {
    const loaded: string[] = [];
    jest.isolateModules(() => {
      for (const kind of ['ServiceMonitor', 'PodMonitor', 'PrometheusRule']) {
        const id = `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}`;
        jest.doMock(id, () => {
          loaded.push(kind);
          return jest.requireActual(id);
        });
      }
      /* eslint-disable @typescript-eslint/no-require-imports */
      const { Testing: IsolatedTesting } = require('cdk8s') as typeof import('cdk8s');
      const isolated = require('../../src') as typeof import('../../src');
      /* eslint-enable @typescript-eslint/no-require-imports */
      IsolatedTesting.synth(new isolated.ServerlessStack(IsolatedTesting.app(), 'serverless'));
      expect(loaded).toEqual([]);
      IsolatedTesting.synth(new isolated.ServerlessStack(IsolatedTesting.app(), 'serverless', { monitoring: {} }));
      expect(loaded.sort()).toEqual(['PodMonitor', 'PrometheusRule', 'ServiceMonitor']);
    });
  });
});

describe('monitoring props', () => {
  test('scrapeInterval sets every endpoint\'s interval', () => {
    const objects = synthStack({ monitoring: { scrapeInterval: Duration.seconds(30) } });
    const endpoints = objects.filter(isMonitoring).flatMap(o => o.spec.endpoints ?? o.spec.podMetricsEndpoints ?? []);
    expect(endpoints.map((e: any) => e.interval)).toEqual(['30s', '30s', '30s']);
  });

  test('work without NetworkPolicies', () => {
    const objects = synthStack({ networkPolicies: false, monitoring: {} });
    expect(objects.filter(o => o.kind === 'NetworkPolicy')).toEqual([]);
    expect(objects.filter(isMonitoring)).toHaveLength(4);
  });

  test.each([
    [{ selectorLabels: { 'bad key!': 'x' } }, /'monitoring\.selectorLabels' key 'bad key!'/],
    [{ selectorLabels: { release: 'not a value' } }, /'monitoring\.selectorLabels\.release' \(not a value\) must be a label value/],
    [{ dashboards: { labels: { grafana_dashboard: '-' } } }, /'monitoring\.dashboards\.labels\.grafana_dashboard' \(-\) must be a label value/],
    [{ prometheusNamespace: 'Monitoring' }, /'monitoring\.prometheusNamespace' \(Monitoring\) must be a DNS-1123 label/],
    [{ dashboards: { namespace: 'grafana_ns' } }, /'monitoring\.dashboards\.namespace' \(grafana_ns\) must be a DNS-1123 label/],
    [{ alerts: { labels: { 'team-name': 'x' } } }, /'monitoring\.alerts\.labels' key 'team-name' must be a Prometheus label name/],
    [{ alerts: { labels: { severity: 'page' } } }, /'monitoring\.alerts\.labels' cannot set 'severity'/],
    [{ alerts: { runbookBaseUrl: 'wiki/serverless' } }, /'monitoring\.alerts\.runbookBaseUrl' \(wiki\/serverless\) must be an http or https URL/],
    [{ alerts: { runbookBaseUrl: 'https://wiki.example.com/x#runbooks' } }, /must be an http or https URL without '#'/],
    [{ scrapeInterval: Duration.millis(500) }, /'monitoring\.scrapeInterval \(seconds\)' \(0\.5\) must be a whole number of at least 1/],
    [{ alerts: { functionNotReadyFor: Duration.seconds(30) } }, /'monitoring\.alerts\.functionNotReadyFor \(seconds\)' \(30\) must be a whole number of at least 60/],
    [{ alerts: { certificateExpiry: Duration.minutes(5) } }, /'monitoring\.alerts\.certificateExpiry \(seconds\)' \(300\) must be a whole number of at least 3600/],
    [{ alerts: { buildFailurePercent: 100 } }, /'monitoring\.alerts\.buildFailurePercent' \(100\) must be a whole number from 0 to 99/],
    [{ alerts: { registryVolumeUsagePercent: 0 } }, /'monitoring\.alerts\.registryVolumeUsagePercent' \(0\) must be a whole number from 1 to 99/],
    [{ alerts: { webhookLatency: Duration.seconds(10) } }, /'monitoring\.alerts\.webhookLatency' \(10000 ms\) must be shorter than 'webhook\.timeout' \(10 s\)/],
  ])('throws when %j', (monitoring, message) => {
    expect(() => synthStack({ monitoring })).toThrow(message);
  });

  test('the webhook latency threshold is judged against the webhook\'s own timeout, and not at all without the webhook', () => {
    expect(() => synthStack({ webhook: { timeout: Duration.seconds(2) }, monitoring: { alerts: { webhookLatency: Duration.seconds(2) } } }))
      .toThrow(/\(2000 ms\) must be shorter than 'webhook\.timeout' \(2 s\)/);
    expect(() => synthStack({ webhook: { enabled: false }, monitoring: { alerts: { webhookLatency: Duration.seconds(20) } } })).not.toThrow();
  });
});

describe('monitoring of a 1.13.0 stack: nothing builds', () => {
  const objects = synthStack({ ...MONITORED, release: ServerlessRelease.V1_13_0 });
  const alerts = alertsOf(objects);
  const dashboard = dashboardsOf(objects)[0];

  test('every object is valid against the Kubernetes schema', () => {
    expectValidKubernetesObjects(objects);
  });

  test('scrapes the controller and the webhook; there is no registry to scrape', () => {
    expect(objects.filter(isMonitoring).map(o => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ServiceMonitor/serverless-controller-manager', 'ServiceMonitor/serverless-webhook', expect.stringMatching(/^PrometheusRule\//),
    ]);
    const prometheus = find(objects, 'NetworkPolicy', 'kyma-project.io--serverless-allow-prometheus');
    expect(prometheus.spec.ingress[0].ports).toEqual([{ protocol: 'TCP', port: 8080 }]);
  });

  test('alerts on the controller, Functions\' Deployments and the webhook, on nothing of builds or a registry', () => {
    expect(alerts.map(a => [a.alert, a.labels.condition])).toEqual([
      ['KymaServerlessControllerDown', undefined],
      ['KymaServerlessControllerNotReconciling', undefined],
      ['KymaServerlessControllerReconcileErrors', undefined],
      ['KymaServerlessFunctionNotReady', 'Running'],
      ['KymaServerlessWebhookDown', undefined],
      ['KymaServerlessWebhookErrors', undefined],
      ['KymaServerlessWebhookLatencyHigh', undefined],
      ['KymaServerlessWebhookCertificateExpiring', undefined],
    ]);
  });

  test('no rule or panel reads build Jobs or the registry', () => {
    const all = expressions(objects);
    expect(all.length).toBeGreaterThan(alerts.length);
    expect(all.filter(e => /kube_job_|kubelet_volume_stats|docker-registry|registry/.test(e.expr)).map(e => e.where)).toEqual([]);
    expect(alerts.filter(a => /build|registry/i.test(`${a.annotations.summary} ${a.annotations.description}`)).map(a => a.alert)).toEqual([]);
    expect(all.map(e => ({ where: e.where, errors: parsePromql(e.expr).errors }))).toEqual(all.map(e => ({ where: e.where, errors: [] })));
    expect(all.flatMap(e => parsePromql(e.expr).metrics.filter(m => !KNOWN_SERIES.has(m)))).toEqual([]);
  });

  test('selects the 1.13.0 controller\'s Function reconciler, named "function"', () => {
    expect(alerts.find(a => a.alert === 'KymaServerlessControllerNotReconciling').expr).toContain('controller="function"}');
  });

  test('the dashboard shows Functions, the controller and the webhook, and the controller\'s own condition times', () => {
    expect(dashboard.panels.map((p: any) => `${p.type}: ${p.title}`)).toEqual([
      'row: Functions', 'timeseries: Functions by state', 'timeseries: Time to reach a condition (99th percentile)',
      'row: Controller', 'timeseries: Reconciliations', 'timeseries: Reconcile time (99th percentile)', 'timeseries: Work queue depth',
      'row: Admission webhook', 'timeseries: Admission reviews', 'timeseries: Admission latency', 'stat: Certificate expires in',
    ]);
    expect(dashboard.panels.find((p: any) => p.title === 'Functions by state').targets.map((t: any) => t.legendFormat)).toEqual(['running', 'not available']);
  });

  test('throws when a threshold of a build or registry alert is given: there is no such alert', () => {
    expect(() => synthStack({ release: ServerlessRelease.V1_13_0, monitoring: { alerts: { buildFailurePercent: 20 } } }))
      .toThrow(/'monitoring.alerts.buildFailurePercent' \(20\) is a setting of the build pipeline, which release 1.13.0 does not have: there is no build alert/);
    expect(() => synthStack({ release: ServerlessRelease.V1_13_0, monitoring: { alerts: { registryVolumeUsagePercent: 90 } } }))
      .toThrow(/'monitoring.alerts.registryVolumeUsagePercent' \(90\) .*there is no registry/);
  });
});
