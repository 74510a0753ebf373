import {
  CLOUD_EVENT, LimitRangeItem, answerProblem, batches, clip, cloudEventProblem, functionCpuMillis, functionTable, limitRangeProblems, rootFilesystem,
} from '../../scripts/real-node/checks';

describe('the judgements of npm run e2e:node', () => {
  test('an answer must have the expected status, and the exact body where one is expected', () => {
    expect(answerProblem({ status: 200, body: 'Hello from presets' }, { status: 200, body: 'Hello from presets' })).toBeUndefined();
    expect(answerProblem({ status: 200 }, { status: 200, body: 'anything' })).toBeUndefined();
    expect(answerProblem({ status: 200, body: 'Hello' }, { status: 200, body: 'Hello again' })).toBe('body "Hello again", expected "Hello"');
    expect(answerProblem({ status: 200 }, { status: 500, body: 'User function not loaded' })).toBe('HTTP 500 (expected 200): User function not loaded');
    expect(answerProblem({ status: 200 }, undefined)).toBe('no HTTP answer');
  });

  test('clip keeps a table cell on one short line', () => {
    expect(clip('a\n  b\tc')).toBe('a b c');
    expect(clip('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  test('resources outside a LimitRange\'s Container item are named, those inside are not', () => {
    const items: LimitRangeItem[] = [
      { type: 'Container', min: { cpu: '10m', memory: '16Mi' }, max: { cpu: '1', memory: '1Gi' }, maxLimitRequestRatio: { cpu: '10' } },
      { type: 'PersistentVolumeClaim', max: { storage: '1Gi' } },
    ];
    expect(limitRangeProblems('ns/p/c', { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } }, items)).toEqual([]);
    expect(limitRangeProblems('ns/p/c', { requests: { cpu: '5m', memory: '64Mi' }, limits: { cpu: '1500m', memory: '2Gi' } }, items)).toEqual([
      'ns/p/c: cpu limit 1500m above the LimitRange\'s max 1',
      'ns/p/c: memory limit 2Gi above the LimitRange\'s max 1Gi',
      'ns/p/c: cpu request 5m below the LimitRange\'s min 10m',
      'ns/p/c: cpu limit/request 1500m/5m above the LimitRange\'s ratio 10',
    ]);
    expect(limitRangeProblems('ns/p/c', { requests: { cpu: '50m' } }, items)).toEqual([
      'ns/p/c: no cpu limit, the LimitRange\'s max is 1',
      'ns/p/c: no memory limit, the LimitRange\'s max is 1Gi',
      'ns/p/c: no memory request, the LimitRange\'s min is 16Mi',
    ]);
  });

  test('the OCI spec tells a read-only root and the writable mounts beside it', () => {
    const spec = {
      root: { path: 'rootfs', readonly: true },
      mounts: [
        { destination: '/proc', type: 'proc', options: ['nosuid'] },
        { destination: '/dev/shm', type: 'bind', options: ['rbind', 'rw'] },
        { destination: '/tmp', type: 'bind', options: ['rbind', 'rw'] },
        { destination: '/etc/hosts', type: 'bind', options: ['rbind', 'rw'] },
        { destination: '/appconfig', type: 'bind', options: ['rbind', 'ro'] },
        { destination: '/var/run/secrets/kubernetes.io/serviceaccount', type: 'bind', options: ['rbind', 'ro'] },
      ],
    };
    expect(rootFilesystem(spec)).toEqual({ readonly: true, writable: ['/etc/hosts', '/tmp'] });
    expect(rootFilesystem({ root: { path: 'rootfs' } })).toEqual({ readonly: false, writable: [] });
  });

  test('the CloudEvent echo must carry the event\'s attributes and data as the runtime gave them', () => {
    const h = CLOUD_EVENT.headers;
    const echo = JSON.stringify({ type: h['ce-type'], source: h['ce-source'], id: h['ce-id'], specversion: h['ce-specversion'], data: CLOUD_EVENT.data });
    expect(cloudEventProblem({ status: 200, body: echo })).toBeUndefined();
    expect(cloudEventProblem({ status: 200, body: echo.replace('e2e-node-1', 'other') })).toMatch(/^echo .*"id":"other".*, expected .*"id":"e2e-node-1"/);
    expect(cloudEventProblem({ status: 200, body: '{}' })).toMatch(/^echo \{\}, expected/);
    expect(cloudEventProblem({ status: 500, body: 'boom' })).toBe('HTTP 500: boom');
    expect(cloudEventProblem({ status: 200, body: 'not json' })).toBe('not JSON: not json');
    expect(cloudEventProblem(undefined)).toBe('no answer to the CloudEvent');
  });

  test('the report\'s table has a row per run, with pipes in cells escaped', () => {
    const table = functionTable([
      { phase: '1', key: 'ns/a', runtime: 'nodejs22', source: 'inline', firstAnswer: 3.4, running: 6.1, restarts: 0, status: 200, contentType: 'text/html', body: 'a|b', result: 'ok' },
      { phase: '1', key: 'ns/p', runtime: 'python312', source: 'inline', result: 'skipped: no python312 image' },
    ]);
    expect(table).toHaveLength(4);
    expect(table[2]).toBe('| 1 | ns/a | nodejs22 | inline | 3.4 | 6.1 | 0 | 200 | text/html | a\\|b | ok |');
    expect(table[3]).toBe('| 1 | ns/p | python312 | inline |  |  |  |  |  |  | skipped: no python312 image |');
  });
});

describe('fitting Functions onto one node', () => {
  const presets = { XS: { requestCpu: '50m' }, M: { requestCpu: '200m' }, L: { requestCpu: '400m' } };

  test('a Function requests its explicit CPU, else its preset\'s, else the default preset\'s, per replica', () => {
    expect(functionCpuMillis({}, presets, 'L')).toBe(400);
    expect(functionCpuMillis({ resourceConfiguration: { function: { profile: 'M' } }, replicas: 3 }, presets, 'L')).toBe(600);
    expect(functionCpuMillis({ resourceConfiguration: { function: { resources: { requests: { cpu: '50m' } } } }, replicas: 2 }, presets, 'L')).toBe(100);
    expect(functionCpuMillis({ scaleConfig: { minReplicas: 2, maxReplicas: 2 } }, presets, 'XS')).toBe(100);
    expect(functionCpuMillis({ resourceConfiguration: { function: { profile: 'unknown' } } }, presets, 'M')).toBe(200);
  });

  test('groups keep their order and stay within the budget; a Function larger than the budget stands alone', () => {
    expect(batches([400, 400, 600, 100, 1200, 50], n => n, 1000)).toEqual([[400, 400], [600, 100], [1200], [50]]);
    expect(batches([], n => n, 1000)).toEqual([]);
  });
});
