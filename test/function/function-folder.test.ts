import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { Exposure, FunctionFolder, FunctionNamespace, FunctionRuntime, FunctionSource, KymaFunction, ServerlessRelease, ServerlessStack } from '../../src';
import { validateFunction } from '../../src/api';
import { SOURCE_SHA256_ANNOTATION } from '../../src/function/kyma-function';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';

const ROOT = path.resolve(__dirname, '..', '..');

/** A root folder holding function folders, each a map of file name to content. */
function functionsRoot(folders: Record<string, Record<string, string>>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'functions-'));
  for (const [name, files] of Object.entries(folders)) {
    fs.mkdirSync(path.join(root, name));
    for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name, file), content);
  }
  return root;
}

function synthFolder(files: Record<string, string>): any {
  const [folder] = FunctionFolder.discover(functionsRoot({ fn: files }));
  const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
  folder.addTo(chart);
  const fn = Testing.synth(chart).find(o => o.kind === 'Function');
  expectValidKubernetesObjects([fn]);
  return fn;
}

function loadError(files: Record<string, string>): string {
  try {
    FunctionFolder.discover(functionsRoot({ fn: files }));
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('loaded');
}

describe('FunctionFolder', () => {
  test('discovers every folder, sorted, skipping hidden ones and files', () => {
    const root = functionsRoot({ zeta: { 'handler.js': 'x' }, alpha: { 'handler.py': 'x' }, '.git': {} });
    fs.writeFileSync(path.join(root, 'README.md'), '# functions');
    expect(FunctionFolder.discover(root).map(f => f.name)).toEqual(['alpha', 'zeta']);
  });

  test('throws when the root does not exist, is a file or holds no function folders, naming its path', () => {
    const missing = path.join(os.tmpdir(), 'no-such-functions-root');
    expect(() => FunctionFolder.discover(missing)).toThrow(`FunctionFolder.discover("${missing}"): ${missing} does not exist: `
      + `create it with one folder per Function (such as ${path.join(missing, 'hello', 'handler.js')}), or give the folder that holds them`);
    const root = functionsRoot({ '.git': {} });
    fs.writeFileSync(path.join(root, 'README.md'), '# functions');
    expect(() => FunctionFolder.discover(root)).toThrow(`${root} holds no function folders: add one folder per Function`);
    expect(() => FunctionFolder.discover(path.join(root, 'README.md'))).toThrow(`${path.join(root, 'README.md')} is a file, not a folder`);
  });

  test.each(['function.yml', 'function.json', 'Function.yaml', 'functions.yaml', 'funtion.yaml', 'FUNCTION.YML'])(
    'fails when the folder holds %s, naming it and function.yaml', name => {
      const file = path.join('fn', name);
      const rename = name.toLowerCase() === 'function.yaml' ? 'rename it to function.yaml (the name is case-sensitive)' : 'rename it to function.yaml';
      expect(loadError({ 'handler.js': 'x', [name]: 'replicas: 2' }))
        .toContain(`${file}: not read: the settings of a function folder are read from function.yaml only (YAML): ${rename}`);
      expect(loadError({ 'handler.js': 'x', [name]: 'replicas: 2', 'function.yaml': 'runtime: nodejs22' }))
        .toContain(`${file}: not read: the settings of a function folder are read from function.yaml only (YAML): `
          + (name.toLowerCase() === 'function.yaml' ? rename : 'move its settings into function.yaml and delete it'));
    },
  );

  test('takes files whose names are not function.yaml misspelt', () => {
    const root = functionsRoot({ fn: { 'handler.js': 'x', 'function.yaml.orig': 'x', 'config.json': '{}', 'fixtures.yaml': 'a: 1', 'function.md': '#' } });
    expect(FunctionFolder.discover(root).map(f => f.name)).toEqual(['fn']);
  });

  test('without function.yaml, the runtime follows the handler', () => {
    const root = functionsRoot({ node: { 'handler.js': 'x' }, py: { 'handler.py': 'x' } });
    expect(FunctionFolder.discover(root).map(f => f.runtime)).toEqual([FunctionRuntime.NODEJS_22, FunctionRuntime.PYTHON_312]);
  });

  test('renders every key of function.yaml', () => {
    const fn = synthFolder({
      'handler.js': 'exports.main = () => 1',
      'package.json': '{"dependencies": {}}',
      'function.yaml': [
        'runtime: nodejs20',
        'env:',
        '  PLAIN: text',
        '  PORT_NUMBER: 8080',
        '  DEBUG: true',
        '  TOKEN: { secretKeyRef: { name: api, key: token } }',
        '  LEVEL: { configMapKeyRef: { name: settings, key: level, optional: true } }',
        '  POD: { fieldRef: { fieldPath: metadata.name } }',
        '  MEMORY: { resourceFieldRef: { resource: limits.memory, divisor: 1Mi } }',
        'secretMounts: [{ secretName: tls, mountPath: /etc/tls }]',
        'scale: { minReplicas: 1, maxReplicas: 4 }',
        'resources: { requests: { cpu: 50m, memory: 64Mi }, limits: { cpu: 0.5, memory: 256Mi } }',
        'buildResources: { profile: fast }',
        'labels: { team: a }',
        'annotations: { owner: team-a }',
        'runtimeImageOverride: registry.example.com/node:20',
      ].join('\n'),
    });
    expect(fn.metadata.name).toBe('fn');
    expect(fn.metadata.annotations[SOURCE_SHA256_ANNOTATION]).toMatch(/^[0-9a-f]{64}$/);
    expect(fn.spec).toEqual({
      runtime: 'nodejs20',
      runtimeImageOverride: 'registry.example.com/node:20',
      source: { inline: { source: 'exports.main = () => 1', dependencies: '{"dependencies": {}}' } },
      env: [
        { name: 'PLAIN', value: 'text' },
        { name: 'PORT_NUMBER', value: '8080' },
        { name: 'DEBUG', value: 'true' },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
        { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'level', optional: true } } },
        { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
        { name: 'MEMORY', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      ],
      secretMounts: [{ secretName: 'tls', mountPath: '/etc/tls' }],
      scaleConfig: { minReplicas: 1, maxReplicas: 4 },
      resourceConfiguration: {
        function: { resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } } },
        build: { profile: 'fast' },
      },
      labels: { team: 'a' },
      annotations: { owner: 'team-a' },
    });
    expect(validateFunction(fn)).toEqual([]);
  });

  test('keeps the namespace function.yaml names, and adds the Function to a chart of that namespace or of none', () => {
    const [folder] = FunctionFolder.discover(functionsRoot({ fn: { 'handler.js': 'x', 'function.yaml': 'namespace: team-b' } }));
    expect(folder.namespace).toBe('team-b');
    const app = Testing.app();
    expect(folder.addTo(new FunctionNamespace(app, 'team-b')).namespace).toBe('team-b');
    expect(folder.addTo(new Chart(app, 'plain')).namespace).toBe('team-b');
  });

  test('throws when function.yaml names another namespace than the chart it is added to, naming the file, the key and both', () => {
    const [folder] = FunctionFolder.discover(functionsRoot({ fn: { 'handler.js': 'x', 'function.yaml': 'namespace: team-b' } }));
    const team = new FunctionNamespace(Testing.app(), 'team-a');
    expect(() => folder.addTo(team)).toThrow(`${path.join('fn', 'function.yaml')}: 'namespace' (team-b) is not the namespace of the chart the folder is added to `
      + '(team-a, namespace team-a): add the folder to the FunctionNamespace team-b (new FunctionNamespace(app, \'team-b\')), '
      + 'or change \'namespace\' to team-a, or remove it');
    expect(team.node.tryFindChild('fn')).toBeUndefined();
  });

  test('fails with every problem of function.yaml, naming the file and the key', () => {
    const message = loadError({
      'handler.js': 'x',
      'function.yaml': 'runtime: nodejs99\nscale: { minReplicas: two, maxReplicas: 2 }\ntimeout: 30\nresources: { profile: XXL }\nenv: { A: { secretKeyRef: { name: s } } }\n',
    });
    expect(message).toMatch(/^Invalid function folders:/);
    const file = path.join('fn', 'function.yaml');
    for (const expected of [
      `${file}: 'runtime' ("nodejs99"): must be one of nodejs20, nodejs22, nodejs24, python312`,
      `${file}: 'scale.minReplicas' ("two"): must be integer`,
      `${file}: 'timeout': unknown key; the keys here are runtime, namespace, env, secretMounts, replicas, scale, keda, resources, buildResources, `
        + 'labels, annotations, runtimeImageOverride, containerSecurityContext, podSecurityContext, acceptWarnings, expose, subscribe',
      `${file}: 'resources.profile' ("XXL"): must be one of XS, S, M, L, XL`,
      `${file}: 'env.A.secretKeyRef.key': required`,
    ]) {
      expect(message).toContain(expected);
    }
  });

  test('fails on an unknown key, offering the closest key of the mapping it is in', () => {
    const message = loadError({
      'handler.js': 'x',
      'function.yaml': 'replica: 2\nRuntime: nodejs22\nenv: { A: { secretKeyref: { name: s, key: k } } }\nexpose: { hots: a.example.com, auth: none }\n',
    });
    const file = path.join('fn', 'function.yaml');
    for (const expected of [
      `${file}: 'replica': unknown key; did you mean 'replicas'?`,
      `${file}: 'Runtime': unknown key; did you mean 'runtime'?`,
      `${file}: 'env.A.secretKeyref': unknown key; did you mean 'secretKeyRef'?`,
      `${file}: 'expose.hots': unknown key; did you mean 'host'?`,
    ]) {
      expect(message).toContain(expected);
    }
  });

  test('fails when resources give both a profile and amounts, or neither', () => {
    expect(loadError({ 'handler.js': 'x', 'function.yaml': 'resources: { profile: S, limits: { cpu: 1 } }' }))
      .toMatch(/function\.yaml: 'resources': give either 'profile' or 'requests'\/'limits', not both/);
    expect(loadError({ 'handler.js': 'x', 'function.yaml': 'buildResources: {}' }))
      .toMatch(/function\.yaml: 'buildResources': give 'profile', or 'requests' and 'limits'/);
  });

  test('fails when a quantity is not one', () => {
    expect(loadError({ 'handler.js': 'x', 'function.yaml': 'resources: { limits: { memory: lots } }' }))
      .toMatch(/'resources\.limits\.memory' \("lots"\): must be a quantity such as 100m, 0\.5, 128Mi or 1Gi/);
    expect(loadError({ 'handler.js': 'x', 'function.yaml': 'resources: { limits: { memory: 1000 } }' }))
      .toMatch(/'resources\.limits\.memory' \(1000\): must be a whole number of KiB/);
  });

  test('fails when function.yaml is not YAML, naming the file', () => {
    expect(loadError({ 'handler.js': 'x', 'function.yaml': 'env: [unclosed' })).toMatch(/function\.yaml: /);
  });

  test('fails when function.yaml is not YAML, naming the line and showing it, with no dangling colon', () => {
    const message = loadError({ 'handler.js': 'x', 'function.yaml': 'runtime: nodejs22\nenv:\n  GREETING: Hello: world\n' });
    const file = path.join('fn', 'function.yaml');
    expect(message).toContain(`${file}: line 3, column 13: \`GREETING: Hello: world\`: Nested mappings are not allowed in compact mappings; `
      + 'fix the YAML there (quote a value that holds \': \' or starts with [, {, * or &)');
    expect(message.split('\n').slice(1)).not.toContainEqual(expect.stringMatching(/:$/));
  });

  test.each([
    ['Upper', 'upper'],
    ['Orders_API', 'orders-api'],
    ['2fast', 'fast'],
  ])('fails when the folder\'s name (%s) is no Function name, telling to rename the folder', (name, suggestion) => {
    let message = '';
    try {
      FunctionFolder.discover(functionsRoot({ [name]: { 'handler.js': 'exports.main = () => 1' } }));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`${name}: the folder's name ("${name}") is the Function's name, and a Function name must be a DNS-1035 label`);
    expect(message).toContain(`: rename the folder, such as to ${suggestion}`);
    expect(message).not.toMatch(/metadata\.name|rename the Function/);
  });

  test('a source over the size limit names the handler, not function.yaml, and fixes a folder can make', () => {
    const big = `exports.main = () => "${'x'.repeat(1024 * 1024)}";\n`;
    const root = functionsRoot({ fn: { 'handler.js': big, 'package.json': '{}', 'function.yaml': 'runtime: nodejs22\n' } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(root)[0].addTo(chart);
    let message = '';
    try {
      Testing.synth(chart);
    } catch (e) {
      message = (e as Error).message;
    }
    const problem = message.split('\n').find(l => l.includes('Too long'));
    expect(problem).toMatch(new RegExp(`^  \\[test/fn\\] ${path.join(root, 'fn', 'handler.js').replace(/[/\\.]/g, '\\$&')}: 'source' \\(spec\\.source\\.inline\\): Too long: `));
    expect(problem).toContain('make handler.js smaller');
    expect(problem).toContain('declare the Function in TypeScript with FunctionSource.fromGitRepository, which a function folder cannot use');
    expect(problem).not.toContain('function.yaml');
  });

  test('a second Function of the same name in a namespace names both folders', () => {
    const a = functionsRoot({ orders: { 'handler.js': 'exports.main = () => 1' } });
    const b = functionsRoot({ orders: { 'handler.py': 'def main(event, context):\n    return 1\n' } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(a)[0].addTo(chart);
    expect(() => FunctionFolder.discover(b)[0].addTo(chart)).toThrow(`${path.join(b, 'orders')}: test already holds a Function named orders, `
      + `which comes from the folder ${path.join(a, 'orders')}: a folder's name is its Function's name, unique in its namespace: `
      + 'rename one of them, or add them to different namespaces');
  });

  test('a folder named like a Function declared in code names the construct', () => {
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    new KymaFunction(chart, 'orders', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1') });
    const root = functionsRoot({ orders: { 'handler.js': 'exports.main = () => 1' } });
    expect(() => FunctionFolder.discover(root)[0].addTo(chart)).toThrow('which is declared in code (the construct test/orders)');
  });

  test('fails when the folder has no handler and no runtime', () => {
    expect(loadError({ 'notes.txt': 'x' })).toMatch(/fn: no handler\.js or handler\.py, and no 'runtime' in function\.yaml/);
  });

  test('problems found at synth name the construct path, the key and the file', () => {
    const root = functionsRoot({ fn: { 'handler.js': 'x', 'function.yaml': 'env: { 1A: x }\nscale: { minReplicas: 3, maxReplicas: 1 }' } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(root)[0].addTo(chart);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\] .*fn\/function\.yaml: 'env\.1A' \(spec\.env\[0\]\.name\)/);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\] .*fn\/function\.yaml: 'scale' \(spec\.scaleConfig\)/);
  });

  test('the example folders load and synthesize valid Functions, one exposed and one subscribed to the other\'s events', () => {
    const folders = FunctionFolder.discover(path.join(ROOT, 'functions'));
    expect(folders.map(f => [f.name, f.runtime.name])).toEqual([['hello-node', 'nodejs22'], ['hello-python', 'python312']]);
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', { exposure: { via: Exposure.apiRule(), domain: 'local.kyma.dev' } });
    const team = new FunctionNamespace(app, 'team-a', { stack });
    for (const folder of folders) folder.addTo(team);
    const objects = Testing.synth(team).filter(o => o.kind !== 'Namespace' && o.kind !== 'LimitRange');
    expect(objects.map(o => `${o.kind}/${o.metadata.name}`)).toEqual(['Function/hello-node', 'APIRule/hello-node', 'Function/hello-python', 'Subscription/hello-python']);
    expect(objects[1].spec.hosts).toEqual(['hello-node.local.kyma.dev']);
    expect(objects[3].spec).toMatchObject({ source: 'hello-node', types: ['greeting.sent.v1'] });
    // hello-node publishes what hello-python receives.
    expect(fs.readFileSync(path.join(ROOT, 'functions', 'hello-node', 'handler.js'), 'utf8')).toContain("emitCloudEvent('greeting.sent.v1', 'hello-node'");
    expectValidKubernetesObjects(objects);
  });
});

describe('FunctionFolder expose and subscribe', () => {
  const handler = { 'handler.js': 'exports.main = () => "hi"' };

  test('expose and subscribe take the options of expose() and subscribe()', () => {
    const root = functionsRoot({ fn: { ...handler, 'function.yaml': `
expose:
  host: fn.example.com
  via: { istio: { gateway: istio-system/public } }
  paths: [{ path: "/orders/{*}", methods: [GET] }]
  auth: { jwt: { issuer: https://login.example.com, jwksUri: https://login.example.com/keys, requiredScopes: [read] } }
  cors: { allowOrigins: [https://shop.example.com], maxAge: 600 }
  timeout: 30
subscribe:
  - { source: shop, types: [order.created.v1, order.paid.v1], maxInFlightMessages: 2 }
  - { source: /default/shop, types: [sap.kyma.custom.shop.order.created.v1], typeMatching: exact }
` } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(root)[0].addTo(chart);
    const objects = Testing.synth(chart);
    const service = objects.find(o => o.kind === 'VirtualService');
    expect(service.spec).toMatchObject({ hosts: ['fn.example.com'], gateways: ['istio-system/public'] });
    expect(service.spec.http[0]).toMatchObject({ match: [{ method: { regex: '^(GET|OPTIONS)$' } }], timeout: '30s', corsPolicy: { maxAge: '600s' } });
    expect(objects.filter(o => o.kind === 'AuthorizationPolicy').map(o => o.metadata.name)).toEqual(['fn-jwt', 'fn-eventing']);
    expect(objects.filter(o => o.kind === 'Subscription').map(o => [o.metadata.name, o.spec.typeMatching, o.spec.config.maxInFlightMessages]))
      .toEqual([['fn', 'standard', '2'], ['fn-2', 'exact', '10']]);
    expectValidKubernetesObjects(objects);
  });

  test.each([
    ['auth is neither none nor jwt', 'expose: { host: a.example.com, auth: open }', /'expose\.auth' \("open"\): give none, or jwt/],
    ['auth is missing', 'expose: { host: a.example.com }', /'expose\.auth': required: give `auth: none` to expose the Function without authentication, or for anything public `auth: \{ jwt: \{ issuer: https:/],
    ['via names two ways', 'expose: { host: a.example.com, auth: none, via: { apiRule: {}, istio: { gateway: a/b } } }', /'expose\.via': give exactly one of istio, apiRule, gatewayApi/],
    ['a method is unknown', 'expose: { host: a.example.com, auth: none, paths: [{ path: /a, methods: [FETCH] }] }', /'expose\.paths\[0\]\.methods\[0\]' \("FETCH"\): must be one of GET/],
    ['a subscription lacks its types', 'subscribe: [{ source: shop }]', /'subscribe\[0\]\.types': required/],
  ])('fails to load when %s, naming the file and the key', (_what, yaml, message) => {
    expect(loadError({ ...handler, 'function.yaml': yaml })).toMatch(message);
  });

  test('problems of expose found at synth are told in the keys and YAML of function.yaml', () => {
    const root = functionsRoot({ fn: { ...handler, 'function.yaml': 'expose:\n  host: a.example.com\n  auth: { jwt: { issuer: login.example.com, jwksUri: keys.example.com/jwks } }\n' } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(root)[0].addTo(chart);
    let message = '';
    try {
      Testing.synth(chart);
    } catch (e) {
      message = (e as Error).message;
    }
    const file = path.join('fn', 'function.yaml');
    expect(message).toContain(`${file}: 'expose.via' is not set, and the stack sets no default: give one of \`via: { istio: { gateway: istio-system/kyma-gateway } }\`, `);
    expect(message).not.toContain('Exposure.');
    expect(message).toContain(`${file}: 'expose.auth.jwt.issuer' ("login.example.com"): a host name without a scheme: `);
    expect(message).toContain('such as https://login.example.com');
    expect(message).toContain(`${file}: 'expose.auth.jwt.jwksUri' ("keys.example.com/jwks"): value is empty or not a valid uri`);
  });

  test('problems found at synth name the file and the key under expose or subscribe', () => {
    const root = functionsRoot({ fn: { ...handler, 'function.yaml': 'expose: { host: a.example.com, auth: none, via: { apiRule: {} }, paths: [{ path: orders }] }\nsubscribe: [{ source: shop, types: [created] }]' } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(root)[0].addTo(chart);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\/Endpoint\] .*fn\/function\.yaml: 'expose\.paths\[0\]\.path' \(orders\)/);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\/Subscription\] .*fn\/function\.yaml: 'subscribe\[0\]\.types\[0\]' \("created"\)/);
  });
});

describe('FunctionFolder keda', () => {
  const handler = { 'handler.js': 'exports.main = () => "hi"' };

  test('keda takes the keda prop, periods in seconds and each trigger under the name of its factory', () => {
    const root = functionsRoot({ fn: { ...handler, 'function.yaml': `
keda:
  minReplicas: 0
  maxReplicas: 4
  cooldownPeriod: 600
  pollingInterval: 15
  triggers:
    - prometheus: { serverAddress: "http://prometheus.monitoring:9090", query: "sum(rate(istio_requests_total{destination_workload=\\"fn\\"}[1m]))", threshold: 10 }
    - cron: { timezone: Europe/Berlin, start: 0 8 * * 1-5, end: 0 18 * * 1-5, desiredReplicas: 1 }
    - cpu: { utilization: 70 }
    - type: rabbitmq
      metadata: { queueName: orders, mode: QueueLength, value: "20", hostFromEnv: RABBITMQ_URL }
` } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    const fn = FunctionFolder.discover(root)[0].addTo(chart);
    const objects = Testing.synth(chart);
    expectValidKubernetesObjects(objects);
    expect(fn.scaledObject).toBeDefined();
    expect(objects.find(o => o.kind === 'Function').spec.replicas).toBeUndefined();
    const { spec } = objects.find(o => o.kind === 'ScaledObject');
    expect(spec).toMatchObject({ minReplicaCount: 0, maxReplicaCount: 4, cooldownPeriod: 600, pollingInterval: 15 });
    expect(spec.triggers).toEqual([
      { type: 'prometheus', metadata: { serverAddress: 'http://prometheus.monitoring:9090', query: 'sum(rate(istio_requests_total{destination_workload="fn"}[1m]))', threshold: '10' } },
      { type: 'cron', metadata: { timezone: 'Europe/Berlin', start: '0 8 * * 1-5', end: '0 18 * * 1-5', desiredReplicas: '1' } },
      { type: 'cpu', metricType: 'Utilization', metadata: { value: '70' } },
      { type: 'rabbitmq', metadata: { queueName: 'orders', mode: 'QueueLength', value: '20', hostFromEnv: 'RABBITMQ_URL' } },
    ]);
  });

  test.each([
    ['maxReplicas is missing', 'keda: { triggers: [{ cpu: { utilization: 50 } }] }', /'keda\.maxReplicas': required/],
    ['there is no trigger', 'keda: { maxReplicas: 2, triggers: [] }', /'keda\.triggers' \(\[\]\): must NOT have fewer than 1 items/],
    ['minReplicas is negative', 'keda: { minReplicas: -1, maxReplicas: 2, triggers: [{ cpu: { utilization: 50 } }] }', /'keda\.minReplicas' \(-1\): must be >= 0/],
    ['a trigger is of two kinds', 'keda: { maxReplicas: 2, triggers: [{ cpu: { utilization: 50 }, type: kafka, metadata: {} }] }',
      /'keda\.triggers\[0\]': give exactly one of prometheus, cron, cpu, or type and metadata/],
    ['a trigger is of no kind', 'keda: { maxReplicas: 2, triggers: [{}] }', /'keda\.triggers\[0\]': give exactly one of prometheus, cron, cpu, or type and metadata/],
    ['a trigger is of an unknown kind', 'keda: { maxReplicas: 2, triggers: [{ kafka: {} }] }', /'keda\.triggers\[0\]\.kafka': unknown key/],
    ['a cron trigger lacks its Pods', 'keda: { maxReplicas: 2, triggers: [{ cron: { timezone: UTC, start: 0 8 * * *, end: 0 9 * * * } }] }',
      /'keda\.triggers\[0\]\.cron\.desiredReplicas': required/],
    ['a prometheus trigger lacks its query and threshold', 'keda: { maxReplicas: 2, triggers: [{ prometheus: { serverAddress: "http://p:9090" } }] }',
      /'keda\.triggers\[0\]\.prometheus\.query': required.*\n.*'keda\.triggers\[0\]\.prometheus\.threshold': required/],
    ['a cpu trigger is above 100 percent', 'keda: { maxReplicas: 2, triggers: [{ cpu: { utilization: 150 } }] }', /'keda\.triggers\[0\]\.cpu\.utilization' \(150\): must be <= 100/],
    ['a scaler type has no metadata', 'keda: { maxReplicas: 2, triggers: [{ type: kafka }] }', /'keda\.triggers\[0\]' \(\{"type":"kafka"\}\): must have property metadata when property type is present/],
  ])('fails to load when %s, naming the file and the key', (_what, yaml, message) => {
    const error = loadError({ ...handler, 'function.yaml': yaml });
    expect(error).toMatch(/fn\/function\.yaml: /);
    expect(error).toMatch(message);
  });

  test('problems found at synth name the file and the key under keda', () => {
    const root = functionsRoot({ fn: { ...handler, 'function.yaml': `
replicas: 2
keda: { minReplicas: 3, maxReplicas: 2, triggers: [{ cron: { timezone: Mars/Olympus, start: 0 8 * * *, end: 0 9 * * *, desiredReplicas: 1 } }] }
` } });
    const chart = new Chart(Testing.app(), 'test', { namespace: 'team-a' });
    FunctionFolder.discover(root)[0].addTo(chart);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\] .*fn\/function\.yaml: 'replicas' \(2\) and 'keda' cannot be used together/);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\/ScaledObject\] .*fn\/function\.yaml: 'keda\.maxReplicas' \(2\) is below minReplicas \(3\)/);
    expect(() => Testing.synth(chart)).toThrow(/\[test\/fn\/ScaledObject\] .*fn\/function\.yaml: 'keda\.triggers\[0\]\.timezone' \("Mars\/Olympus"\) is not an IANA time zone/);
  });

  describe('under both releases', () => {
    const NODE = { 'handler.js': 'exports.main = () => "hi";\n' };
    const addToNamespace = (files: Record<string, string>, release: ServerlessRelease) => {
      const [folder] = FunctionFolder.discover(functionsRoot({ fn: files }));
      const ns = new FunctionNamespace(Testing.app(), 'team-a', { release });
      folder.addTo(ns);
      return ns;
    };

    test('runtime nodejs24 loads as NODEJS_24, and fails at synth under 1.11.1 naming the file and the release that has it', () => {
      const files = { ...NODE, 'function.yaml': 'runtime: nodejs24\n' };
      const [folder] = FunctionFolder.discover(functionsRoot({ fn: files }));
      expect(folder.runtime).toBe(FunctionRuntime.NODEJS_24);
      const ns = addToNamespace(files, ServerlessRelease.V1_11_1);
      expect(() => Testing.synth(ns)).toThrow(/\[team-a\/fn\] .*fn\/function\.yaml: 'runtime' \(spec\.runtime\): "nodejs24" is a runtime of release 1\.13\.0, not of release 1\.11\.1/);
    });
    test('runtime nodejs24 and the security contexts synthesize under 1.13.0', () => {
      const ns = addToNamespace({
        ...NODE,
        'function.yaml': 'runtime: nodejs24\ncontainerSecurityContext:\n  readOnlyRootFilesystem: true\npodSecurityContext:\n  runAsUser: 2000\n'
          + '  seccompProfile: { type: RuntimeDefault }\n',
      }, ServerlessRelease.V1_13_0);
      const objects = Testing.synth(ns);
      expectValidKubernetesObjects(objects, { release: ServerlessRelease.V1_13_0 });
      const fn = objects.find(o => o.kind === 'Function');
      expect(fn.spec).toMatchObject({
        runtime: 'nodejs24',
        containerSecurityContext: { readOnlyRootFilesystem: true },
        podSecurityContext: { runAsUser: 2000, seccompProfile: { type: 'RuntimeDefault' } },
      });
    });

    test('the security contexts reach the Function: under 1.11.1 synth refuses them, naming the file and the key', () => {
      const ns = addToNamespace({ ...NODE, 'function.yaml': 'containerSecurityContext:\n  runAsUser: 2000\n' }, ServerlessRelease.V1_11_1);
      expect(() => Testing.synth(ns)).toThrow(/fn\/function\.yaml: 'containerSecurityContext' \(\{"runAsUser":2000\}\): release 1\.11\.1 has no spec\.containerSecurityContext/);
    });

    test('fails to load a misspelt field of a security context, naming the file and the key', () => {
      const message = loadError({ ...NODE, 'function.yaml': 'containerSecurityContext:\n  readOnlyRootFilesytem: true\n  capabilities: { drop: [ALL], ad: [X] }\n' });
      expect(message).toContain(`${path.join('fn', 'function.yaml')}: 'containerSecurityContext.readOnlyRootFilesytem': unknown key; did you mean 'readOnlyRootFilesystem'?`);
      expect(message).toContain('\'containerSecurityContext.capabilities.ad\': unknown key; did you mean \'add\'?');
      expect(loadError({ ...NODE, 'function.yaml': 'podSecurityContext:\n  sysctls: [{ name: a }]\n' })).toContain('\'podSecurityContext.sysctls[0].value\': required');
    });

    test('scale gives scaleConfig under 1.11.1, and an HPA on the Function under 1.13.0', () => {
      const files = { ...NODE, 'function.yaml': 'scale: { minReplicas: 1, maxReplicas: 3 }\n' };
      const old = Testing.synth(addToNamespace(files, ServerlessRelease.V1_11_1));
      expect(old.find(o => o.kind === 'Function').spec.scaleConfig).toEqual({ minReplicas: 1, maxReplicas: 3 });
      expect(old.filter(o => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
      const current = Testing.synth(addToNamespace(files, ServerlessRelease.V1_13_0));
      expectValidKubernetesObjects(current);
      expect(current.find(o => o.kind === 'Function').spec.scaleConfig).toBeUndefined();
      expect(current.find(o => o.kind === 'HorizontalPodAutoscaler').spec).toMatchObject({
        scaleTargetRef: { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', name: 'fn' }, minReplicas: 1, maxReplicas: 3,
      });
    });

    test('buildResources fail at synth under 1.13.0, naming the file', () => {
      const ns = addToNamespace({ ...NODE, 'function.yaml': 'buildResources: { profile: fast }\n' }, ServerlessRelease.V1_13_0);
      expect(() => Testing.synth(ns)).toThrow(/fn\/function\.yaml: 'buildResources' \(\{"profile":"fast"\}\): release 1\.13\.0 builds no image; remove buildResources/);
    });
  });
});
