/**
 * The Node.js runtime on this machine answers as the nodejs20/nodejs22 images of Serverless
 * 1.11.1 do (their server.mjs, lib/ce.js and lib/helper.js): the handler loaded with import(),
 * event and context, the body parsers, CloudEvents in both modes, return values, errors, the
 * timeout, the controller's variables, Secret mounts and publishing.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { CloudEventMode } from '../../src/runtime/cloudevents';
import { LocalFunction } from '../../src/runtime/local-function';
import { HAS_UPSTREAM_REFERENCE } from '../util/fixtures';
import { functionFolder, logWaiter, objectSource, upstreamSample } from '../util/local-functions';

// Every test here starts Node.js or Python processes (and some install packages): seconds each on a busy machine, not jest's 5.
jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '..', '..');
/** A mount path no machine has: reads under it must come from the local folder. */
const MOUNT_PATH = '/kyma-serverless-test-secret';

// Test input: one handler that shows what the runtime gives it, and answers in every way the runtime knows, by ?mode=.
const CONTRACT_HANDLER = `
const fs = require('fs');
module.exports.main = async function (event, context, callback) {
  const req = event.extensions.request;
  const mode = req.query.mode;
  if (mode === 'string') return 'plain text';
  if (mode === 'number') return 42;
  if (mode === 'reject') throw new Error('boom');
  if (mode === 'sleep') return new Promise(resolve => setTimeout(() => resolve('late'), 3000));
  if (mode === 'status') { event.setResponseStatus(201); event.setResponseHeader('X-Order', '7'); return { created: true }; }
  if (mode === 'callback') { callback('via callback', 203, { 'x-from': 'callback' }); return; }
  if (mode === 'send') { event.extensions.response.status(202).send('sent by hand'); return 'ignored'; }
  if (mode === 'emit') { await event.emitCloudEvent('order.created.v1', 'orders', { id: 7 }, { eventtypeversion: 'v1' }); return 'emitted'; }
  if (mode === 'secret') return fs.readFileSync('${MOUNT_PATH}/token', 'utf8');
  const data = Buffer.isBuffer(event.data) ? 'bytes:' + event.data.toString() : event.data;
  const ce = Object.fromEntries(Object.entries(event).filter(([k]) => k.startsWith('ce-')));
  const env = Object.fromEntries(['FUNC_NAME', 'SERVICE_NAMESPACE', 'FUNC_RUNTIME', 'FUNC_HANDLER', 'MOD_NAME', 'FUNC_PORT', 'HANDLER_PATH',
    'PUBLISHER_PROXY_ADDRESS', 'GREETING', 'API_TOKEN', 'JEST_WORKER_ID'].map(n => [n, process.env[n]]));
  return { data: data === undefined ? '<none>' : data, query: req.query, path: req.path, method: req.method, ce, context, env, cwd: fs.readdirSync(process.cwd()) };
};
`;

const CONTRACT_YAML = `runtime: nodejs22
namespace: team-a
env:
  GREETING: hello
  FUNC_TIMEOUT: "1"
  API_TOKEN: { secretKeyRef: { name: api, key: token } }
secretMounts: [{ secretName: creds, mountPath: ${MOUNT_PATH} }]
`;

describe('a Node.js Function', () => {
  let fn: LocalFunction;
  let secrets: string;

  beforeAll(async () => {
    const folder = functionFolder({ 'handler.js': CONTRACT_HANDLER, 'function.yaml': CONTRACT_YAML, 'package.json': '{ "name": "contract" }' }, 'contract');
    secrets = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-'));
    fs.writeFileSync(path.join(secrets, 'token'), 's3cret');
    fn = await LocalFunction.startFolder(folder, { env: { API_TOKEN: 'from-env-option' }, secretMounts: { creds: secrets } });
  });
  afterAll(async () => {
    await fn?.stop();
    fs.rmSync(secrets, { recursive: true, force: true });
  });

  test('gets the event and context of the images, the controller\'s variables and its own, and nothing else of this machine', async () => {
    const res = await fn.get('/orders/7?mode=echo&tag=a&tag=b');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'x-powered-by': 'Express', 'access-control-allow-origin': '*', 'content-type': 'application/json; charset=utf-8' });
    expect(res.headers.etag).toMatch(/^W\/"[0-9a-f]+-/);
    const port = new URL(fn.url).port;
    expect(res.json()).toEqual({
      data: '<none>',
      query: { mode: 'echo', tag: ['a', 'b'] },
      path: '/orders/7',
      method: 'GET',
      ce: {},
      context: { 'function-name': 'contract', 'runtime': 'nodejs22', 'namespace': 'team-a', 'timeout': 1, 'body-size-limit': 1 },
      env: {
        FUNC_NAME: fn.name, SERVICE_NAMESPACE: 'team-a', FUNC_RUNTIME: 'nodejs22', FUNC_HANDLER: 'main', MOD_NAME: 'handler', FUNC_PORT: port,
        HANDLER_PATH: expect.stringMatching(/handler\.js$/), PUBLISHER_PROXY_ADDRESS: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/publish$/),
        GREETING: 'hello', API_TOKEN: 'from-env-option',
      },
      // An empty working directory, as the images' holds none of the Function's files.
      cwd: [],
    });
  });

  test('parses bodies as the images do: JSON, text, forms (nested), anything else as bytes', async () => {
    expect((await fn.post('/', { a: [1, 2] })).json().data).toEqual({ a: [1, 2] });
    expect((await fn.request({ body: 'hello' })).json().data).toBe('hello');
    expect((await fn.request({ body: 'a=1&b[c]=2&d[]=3&d[]=4', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).json().data)
      .toEqual({ a: '1', b: { c: '2' }, d: ['3', '4'] });
    expect((await fn.request({ body: 'raw', headers: { 'content-type': 'application/octet-stream' } })).json().data).toBe('bytes:raw');
    const bad = await fn.request({ body: '{bad', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.text()).toContain('SyntaxError');
  });

  test('gets CloudEvents in binary and structured mode as ce-* attributes and data', async () => {
    const event = { type: 'order.created.v1', source: 'shop', id: 'e1', time: '2024-05-01T10:00:00Z', data: { order: 7 }, extensions: { eventtypeversion: 'v1' } };
    for (const mode of [CloudEventMode.BINARY, CloudEventMode.STRUCTURED]) {
      const body = (await fn.sendEvent(event, mode)).json();
      expect(body.data).toEqual({ order: 7 });
      expect(body.ce).toEqual({
        'ce-type': 'order.created.v1', 'ce-source': 'shop', 'ce-id': 'e1', 'ce-time': '2024-05-01T10:00:00.000Z', 'ce-specversion': '1.0',
        'ce-eventtypeversion': 'v1', 'ce-datacontenttype': 'application/json',
      });
    }
    // ce-type and ce-source without ce-id: the SDK finds no event, and Express answers 500.
    const broken = await fn.request({ json: {}, headers: { 'ce-type': 't', 'ce-source': 's' } });
    expect(broken.status).toBe(500);
    expect(broken.text()).toContain('no cloud event detected');
  });

  test('answers what main returns or sends: text without a content type, a status it set, the callback, the response itself', async () => {
    const text = await fn.get('/?mode=string');
    expect([text.status, text.text(), text.headers['content-type']]).toEqual([200, 'plain text', undefined]);
    const status = await fn.get('/?mode=status');
    expect([status.status, status.json(), status.headers['x-order']]).toEqual([201, { created: true }, '7']);
    const callback = await fn.get('/?mode=callback');
    expect([callback.status, callback.text(), callback.headers['x-from']]).toEqual([203, 'via callback', 'callback']);
    const sent = await fn.get('/?mode=send');
    expect([sent.status, sent.text()]).toEqual([202, 'sent by hand']);
  });

  test('answers an error and a timeout as the images do: 408 after FUNC_TIMEOUT, saying why in the log', async () => {
    const [rejected, number, slow] = await Promise.all([fn.get('/?mode=reject'), fn.get('/?mode=number'), fn.get('/?mode=sleep')]);
    for (const res of [rejected, number, slow]) expect([res.status, res.text()]).toEqual([408, 'Request Timeout']);
    expect(fn.logs).toMatch(/main's promise rejected, or what it resolved to could not be sent \(Error: boom\); the nodejs22 runtime of Serverless 1\.11\.1 sends no 500/);
    expect(fn.logs).toContain('Catch errors in main and answer them yourself');
  });

  test('reads a mounted Secret from its local folder', async () => {
    expect((await fn.get('/?mode=secret')).text()).toBe('s3cret');
  });

  test('publishes CloudEvents to the local publisher proxy, which keeps them', async () => {
    expect((await fn.get('/?mode=emit')).text()).toBe('emitted');
    expect(fn.published[fn.published.length - 1]).toMatchObject({
      type: 'order.created.v1', source: 'orders', datacontenttype: 'application/json', data: { id: 7 }, extensions: { eventtypeversion: 'v1' },
    });
    expect(fn.logs).toContain('published order.created.v1 from orders {"id":7}');
  });

  test('answers /healthz and CORS preflights itself', async () => {
    expect((await fn.get('/healthz')).text()).toBe('OK');
    const preflight = await fn.request({ method: 'OPTIONS', headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-a' } });
    expect([preflight.status, preflight.headers['access-control-allow-methods'], preflight.headers['access-control-allow-headers']]).toEqual([200, 'POST', 'x-a']);
  });
});

describe('the default app\'s hello-node', () => {
  test('greets by the name in the query, else GREETING_TARGET, and publishes greeting.sent.v1', async () => {
    const fn = await LocalFunction.startFolder(path.join(ROOT, 'functions', 'hello-node'));
    try {
      expect((await fn.get('/?name=Ada')).json()).toEqual({ message: 'Hello, Ada!' });
      expect((await fn.get('/')).json()).toEqual({ message: 'Hello, world!' });
      expect(fn.published.map(e => [e.type, e.source, e.data])).toEqual([['greeting.sent.v1', 'hello-node', { name: 'Ada' }], ['greeting.sent.v1', 'hello-node', { name: 'world' }]]);
    } finally {
      await fn.stop();
    }
  });
});

describe('upstream\'s Node.js samples', () => {
  if (!HAS_UPSTREAM_REFERENCE) test.skip('shared/reference/upstream is not there', () => undefined);
  const cases: Array<[string, string, { [name: string]: string }, string]> = [
    ['sample-function-env-valuefrom.yaml', 'sample-cm-env-values', { MY_VAR: 'from the ConfigMap' }, 'from the ConfigMap'],
    ['sample-function-env-valuefrom.yaml', 'sample-fn-with-envs', {}, 'Hello World!'],
    ['sample-function-profiles-and-scaling.yaml', 'hello-profiles', {}, 'Hello World'],
    ['sample-function-profiles-and-scaling.yaml', 'scaled-function', {}, 'Hello World!'],
  ];
  for (const [file, name, env, answer] of HAS_UPSTREAM_REFERENCE ? cases : []) {
    // Each in its own process, on its own port: they start side by side.
    test.concurrent(`${name} of ${file} answers ${JSON.stringify(answer)}`, async () => {
      const fn = await LocalFunction.startFrom(objectSource(upstreamSample(file, name)!), { env });
      try {
        const res = await fn.get('/');
        expect([res.status, res.text()]).toEqual([200, answer]);
      } finally {
        await fn.stop();
      }
    });
  }
});

describe('a Node.js Function with dependencies', () => {
  test('installs them into the cache once, and finds them from CommonJS and from an ES module handler', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deps-'));
    const cacheDirectory = path.join(root, 'cache');
    // A package on disk: npm installs it without a registry.
    const dependency = path.join(root, 'greeter');
    fs.mkdirSync(dependency);
    fs.writeFileSync(path.join(dependency, 'package.json'), '{ "name": "greeter", "version": "1.0.0", "main": "index.js" }');
    fs.writeFileSync(path.join(dependency, 'index.js'), 'exports.greet = (name) => `Hello, ${name}`;\n');
    const manifest = (type: string) => JSON.stringify({ name: 'fn', version: '1.0.0', type, dependencies: { greeter: `file:${dependency}` } });
    const commonjs = functionFolder({ 'handler.js': 'const { greet } = require("greeter");\nexports.main = () => greet("CommonJS");\n', 'package.json': manifest('commonjs') });
    const esm = functionFolder({ 'handler.js': 'import { greet } from "greeter";\nexport function main() { return greet("ES module"); }\n', 'package.json': manifest('module') });
    try {
      for (const [folder, answer] of [[commonjs, 'Hello, CommonJS'], [esm, 'Hello, ES module']]) {
        const fn = await LocalFunction.startFolder(folder, { cacheDirectory });
        try {
          expect((await fn.get('/')).text()).toBe(answer);
          // The two package.json files differ, so each is installed once; a second start would find it.
          expect(fn.logs).toContain('installing the dependencies of package.json (npm install --omit=dev)');
        } finally {
          await fn.stop();
        }
      }
      const again = await LocalFunction.startFolder(esm, { cacheDirectory });
      await again.stop();
      expect(again.logs).not.toContain('installing the dependencies');
      expect(fs.readdirSync(path.join(cacheDirectory, 'dependencies')).filter(d => !d.startsWith('.'))).toHaveLength(2);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 60_000); // runs npm install twice and starts two Node.js processes: seconds on a busy machine
});

describe('a Node.js Function that cannot start', () => {
  test('fails when main is hidden from import(), naming the fix', async () => {
    const folder = functionFolder({ 'handler.js': 'module.exports = { async main() { return "hi"; } };\n' });
    await expect(LocalFunction.startFolder(folder)).rejects.toThrow(
      'handler.js sets main on module.exports, but the runtime loads the handler with import(), which sees only the exports Node.js finds in the code without running it');
  });

  test('fails when the handler exports no main, and when it requires a package it does not declare', async () => {
    await expect(LocalFunction.startFolder(functionFolder({ 'handler.js': 'exports.handle = () => 1;\n' }))).rejects.toThrow(
      'handler.js exports no function main (it exports handle): the runtime calls main(event, context); export it with `module.exports.main = async function (event, context) { ... }`');
    await expect(LocalFunction.startFolder(functionFolder({ 'handler.js': 'const pad = require("left-pad-not-declared");\nexports.main = () => pad;\n' }))).rejects.toThrow(
      'handler.js requires \'left-pad-not-declared\', which is not installed: declare it in the dependencies of package.json (the cluster installs only those)');
  });

  test('fails for a folder without a handler, and for a key without a value', async () => {
    await expect(LocalFunction.startFolder(functionFolder({ 'README.md': 'no code' }))).rejects.toThrow(
      /holds no handler \(handler\.js or handler\.py\): write handler\.js exporting main\(event, context\) for Node\.js, or handler\.py/);
    const folder = functionFolder({ 'handler.js': 'exports.main = () => 1;\n', 'function.yaml': 'env:\n  TOKEN: { secretKeyRef: { name: api, key: token } }\n' });
    await expect(LocalFunction.startFolder(folder)).rejects.toThrow('env TOKEN: needs key token of Secret api, and no --env-file gives it');
  });

  test('fails when the port is in use, naming it and the fix', async () => {
    const server = http.createServer();
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      await expect(LocalFunction.startFolder(functionFolder({ 'handler.js': 'exports.main = () => 1;\n' }), { port })).rejects.toThrow(
        `Port ${port} on 127.0.0.1 is in use: stop what listens there, or give another port (--port)`);
    } finally {
      server.close();
    }
  });
});

describe('a watched Node.js Function', () => {
  test('reloads when the handler changes, reports a broken edit, and recovers from it', async () => {
    const folder = functionFolder({ 'handler.js': 'exports.main = () => "one";\n' });
    const fn = await LocalFunction.startFolder(folder, { watch: true });
    try {
      expect((await fn.get('/')).text()).toBe('one');
      let reloaded = fn.nextReload();
      fs.writeFileSync(path.join(folder, 'handler.js'), 'exports.main = () => "two";\n');
      await reloaded;
      expect((await fn.get('/')).text()).toBe('two');

      reloaded = fn.nextReload();
      fs.writeFileSync(path.join(folder, 'handler.js'), 'exports.handle = () => "three";\n');
      await expect(reloaded).rejects.toThrow(/exports no function main/);
      const failing = await fn.get('/');
      expect([failing.status, failing.text()]).toEqual([500, expect.stringContaining('the Function is not running: handler.js exports no function main')]);

      reloaded = fn.nextReload();
      fs.writeFileSync(path.join(folder, 'handler.js'), 'exports.main = () => "four";\n');
      await reloaded;
      expect((await fn.get('/')).text()).toBe('four');
    } finally {
      await fn.stop();
    }
  });

  test('starts watching when the first start fails, and answers once an edit fixes it', async () => {
    const folder = functionFolder({ 'handler.js': 'module.exports = { async main() { return "hidden"; } };\n' });
    const fn = await LocalFunction.startFolder(folder, { watch: true });
    try {
      expect(fn.failure).toMatch(/^handler\.js sets main on module\.exports, but the runtime loads the handler with import\(\)/);
      expect((await fn.get('/')).status).toBe(500);
      const reloaded = fn.nextReload();
      fs.writeFileSync(path.join(folder, 'handler.js'), 'module.exports.main = function () { return "found"; };\n');
      await reloaded;
      expect([fn.failure, (await fn.get('/')).text()]).toEqual([undefined, 'found']);
    } finally {
      await fn.stop();
    }
  });

  test('starts the process again when it exits after answering, as Kubernetes restarts the container', async () => {
    const waiter = logWaiter();
    const fn = await LocalFunction.startFolder(functionFolder({ 'handler.js': 'exports.main = (e) => { if (e.extensions.request.query.exit) setTimeout(() => process.exit(3), 10); return "up"; };\n' }),
      { log: waiter.log });
    try {
      const restarted = waiter.next(/starting it again/);
      expect((await fn.get('/?exit=1')).text()).toBe('up');
      expect((await restarted).text).toBe('The Function\'s process exited (code 3): starting it again, as Kubernetes restarts the container');
      expect((await fn.get('/')).text()).toBe('up');
    } finally {
      await fn.stop();
    }
  });
});
