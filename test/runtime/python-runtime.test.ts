/**
 * The Python runtime on this machine answers as the python312 image of Serverless 1.11.1 does
 * (its server.py on bottle, lib/ce.py on the cloudevents SDK): main(event, context) in a thread
 * with FUNC_TIMEOUT, event['data'] and the ce-* attributes, bottle's request, and what bottle
 * makes of return values and exceptions.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CloudEventMode } from '../../src/runtime/cloudevents';
import { LocalFunction } from '../../src/runtime/local-function';
import { HAS_UPSTREAM_REFERENCE } from '../util/fixtures';
import { functionFolder, objectSource, upstreamSample } from '../util/local-functions';

// Every test here starts Node.js or Python processes (and some install packages): seconds each on a busy machine, not jest's 5.
jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '..', '..');
const MOUNT_PATH = '/kyma-serverless-test-python-secret';

// Test input: one handler that shows what the runtime gives it, and answers in every way bottle knows, by ?mode=.
const CONTRACT_HANDLER = `import os
import time


class HTTPResponse:
    """Shaped as bottle's: the runtime knows it by its class name and attributes."""

    def __init__(self, body, status):
        self.body = body
        self.status_code = status
        self.headerlist = [('Content-Type', 'text/plain'), ('X-Kind', 'bottle')]


def main(event, context):
    request = event["extensions"]["request"]
    mode = request.query.get("mode")
    if mode == "fail":
        raise ValueError("boom")
    if mode == "sleep":
        time.sleep(3)
    if mode == "none":
        return None
    if mode == "number":
        return 42
    if mode == "lines":
        return ["a", "b"]
    if mode == "response":
        return HTTPResponse("made by hand", 201)
    if mode == "secret":
        with open("${MOUNT_PATH}/token") as f:
            return f.read()
    if mode == "emit":
        event.emitCloudEvent("order.created.v1", "orders", {"id": 7}, {"eventtypeversion": "v1"})
        return "emitted"
    if mode == "text":
        return "plain text"
    env = {n: os.environ.get(n) for n in ("FUNC_NAME", "SERVICE_NAMESPACE", "FUNC_RUNTIME", "FUNC_HANDLER", "MOD_NAME", "FUNCTION_PATH",
                                          "PUBLISHER_PROXY_ADDRESS", "GREETING", "JEST_WORKER_ID")}
    ce = {k: v for k, v in event.ceHeaders.items() if k.startswith("ce-")}
    return {"data": event.ceHeaders.get("data", "<none>"), "query": request.query.getall("tag"), "path": request.path,
            "method": request.method, "header": request.get_header("X-Test"), "ce": ce, "context": context, "env": env}
`;

describe('a Python Function', () => {
  let fn: LocalFunction;
  let secrets: string;

  beforeAll(async () => {
    const folder = functionFolder({
      'handler.py': CONTRACT_HANDLER,
      'function.yaml': `runtime: python312\nnamespace: team-b\nenv:\n  GREETING: hi\n  FUNC_TIMEOUT: "1"\nsecretMounts: [{ secretName: creds, mountPath: ${MOUNT_PATH} }]\n`,
    }, 'contract');
    secrets = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-'));
    fs.writeFileSync(path.join(secrets, 'token'), 's3cret');
    fn = await LocalFunction.startFolder(folder, { secretMounts: { creds: secrets } });
  });
  afterAll(async () => {
    await fn?.stop();
    fs.rmSync(secrets, { recursive: true, force: true });
  });

  test('gets the event, bottle\'s request, the context and the controller\'s variables, and nothing else of this machine', async () => {
    const res = await fn.get('/orders/7?tag=a&tag=b', { 'X-Test': 'yes' });
    expect([res.status, res.headers['content-type']]).toEqual([200, 'application/json']);
    // bottle writes dicts with json.dumps: spaces after separators.
    expect(res.text()).toMatch(/^\{"data": "<none>", "query": \["a", "b"\]/);
    expect(res.json()).toEqual({
      data: '<none>', query: ['a', 'b'], path: '/orders/7', method: 'GET', header: 'yes', ce: {},
      context: { 'function-name': 'contract', 'namespace': 'team-b', 'timeout': 1, 'runtime': 'python312', 'memory-limit': null, 'body-size-limit': 104857600 },
      env: {
        FUNC_NAME: 'contract', SERVICE_NAMESPACE: 'team-b', FUNC_RUNTIME: 'python312', FUNC_HANDLER: 'main', MOD_NAME: 'handler',
        // A copy of the handler in a folder of its own, as /kubeless holds it in the Pod (not the Function folder, beside other packages).
        FUNCTION_PATH: expect.stringMatching(/kyma-serverless-contract-run-[^/]+$/), PUBLISHER_PROXY_ADDRESS: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/publish$/), GREETING: 'hi',
        JEST_WORKER_ID: null,
      },
    });
  });

  test('gets JSON as data only with the exact content type application/json, as lib/ce.py reads it', async () => {
    expect((await fn.post('/', { a: 1 })).json().data).toEqual({ a: 1 });
    expect((await fn.post('/', { a: 1 }, { 'content-type': 'application/json; charset=utf-8' })).json().data).toBe('<none>');
  });

  test('gets CloudEvents in binary and structured mode as ce-* attributes and data', async () => {
    const event = { type: 'order.created.v1', source: 'shop', id: 'e1', time: '2024-05-01T10:00:00Z', data: { order: 7 }, extensions: { eventtypeversion: 'v1' } };
    for (const mode of [CloudEventMode.BINARY, CloudEventMode.STRUCTURED]) {
      const body = (await fn.sendEvent(event, mode)).json();
      expect(body.data).toEqual({ order: 7 });
      expect(body.ce).toEqual({
        'ce-type': 'order.created.v1', 'ce-source': 'shop', 'ce-id': 'e1', 'ce-time': '2024-05-01T10:00:00Z', 'ce-eventtypeversion': 'v1', 'ce-specversion': '1.0',
      });
    }
  });

  test('answers what main returns as bottle does: text as text/html, nothing as an empty body, lists joined, HTTPResponse as it says', async () => {
    const text = await fn.get('/?mode=text');
    expect([text.status, text.text(), text.headers['content-type']]).toEqual([200, 'plain text', 'text/html; charset=UTF-8']);
    const none = await fn.get('/?mode=none');
    expect([none.status, none.text()]).toEqual([200, '']);
    expect((await fn.get('/?mode=lines')).text()).toBe('ab');
    const response = await fn.get('/?mode=response');
    expect([response.status, response.text(), response.headers['x-kind'], response.headers['content-type']]).toEqual([201, 'made by hand', 'bottle', 'text/plain']);
  });

  test('answers an exception, a value bottle cannot send and a timeout as the image does', async () => {
    const [failed, number, slow] = await Promise.all([fn.get('/?mode=fail'), fn.get('/?mode=number'), fn.get('/?mode=sleep')]);
    expect([failed.status, failed.text()]).toEqual([500, 'Internal server error']);
    expect([number.status, number.text()]).toEqual([500, 'Internal server error']);
    expect(slow.status).toBe(408);
    expect(slow.text()).toContain('<pre>Timeout while processing the function</pre>');
    expect(fn.logs).toContain('ValueError: boom');
  });

  test('takes GET, POST, PATCH and DELETE only, as the image\'s route does', async () => {
    const put = await fn.request({ method: 'PUT', body: 'x' });
    expect([put.status, put.headers.allow]).toEqual([405, 'DELETE,GET,PATCH,POST']);
    expect((await fn.request({ method: 'DELETE' })).status).toBe(200);
  });

  test('reads a mounted Secret from its local folder, and publishes to the local publisher proxy', async () => {
    expect((await fn.get('/?mode=secret')).text()).toBe('s3cret');
    expect((await fn.get('/?mode=emit')).text()).toBe('emitted');
    expect(fn.published[fn.published.length - 1]).toMatchObject({ type: 'order.created.v1', source: 'orders', data: { id: 7 }, extensions: { eventtypeversion: 'v1' } });
  });
});

describe('the default app\'s hello-python', () => {
  test('greets by query, and prints the greetings of hello-node it receives as CloudEvents in either mode', async () => {
    const fn = await LocalFunction.startFolder(path.join(ROOT, 'functions', 'hello-python'));
    try {
      expect((await fn.get('/?name=Ada')).json()).toEqual({ message: 'Hello, Ada!' });
      for (const mode of [CloudEventMode.BINARY, CloudEventMode.STRUCTURED]) {
        const res = await fn.sendEvent({ type: 'greeting.sent.v1', source: 'hello-node', data: { name: `Ada ${mode}` } }, mode);
        expect([res.status, res.text()]).toEqual([200, '']);
      }
      expect(fn.logs).toContain('hello-node greeted Ada binary\n');
      expect(fn.logs).toContain('hello-node greeted Ada structured\n');
    } finally {
      await fn.stop();
    }
  });
});

describe('upstream\'s Python samples', () => {
  if (!HAS_UPSTREAM_REFERENCE) test.skip('shared/reference/upstream is not there', () => undefined);

  (HAS_UPSTREAM_REFERENCE ? test : test.skip)('mysecretmounts reads config.json of its Secret mount', async () => {
    const secret = fs.mkdtempSync(path.join(os.tmpdir(), 'mysecret-'));
    fs.writeFileSync(path.join(secret, 'config.json'), '{"level": "debug"}');
    const fn = await LocalFunction.startFrom(objectSource(upstreamSample('sample-function-secret-mounts-python312.yaml', 'mysecretmounts')!), {
      secretMounts: { mysecret: secret },
    });
    try {
      expect((await fn.get('/')).text()).toBe('{"level": "debug"}');
    } finally {
      await fn.stop();
      fs.rmSync(secret, { recursive: true, force: true });
    }
  });

  test('a failing pip install shows its output once: in the error, not also in the log', async () => {
    const index = fs.mkdtempSync(path.join(os.tmpdir(), 'empty-index-'));
    const saved = { ...process.env };
    Object.assign(process.env, { PIP_CONFIG_FILE: os.devNull, PIP_INDEX_URL: `file://${index}`, PIP_FIND_LINKS: '', PIP_EXTRA_INDEX_URL: '' });
    const logs: string[] = [];
    let error = '';
    try {
      await LocalFunction.startFolder(functionFolder({ 'handler.py': 'def main(event, context):\n    return "hi"\n', 'requirements.txt': 'no-such-package-xyz==1.0\n' }), {
        port: 0, cacheDirectory: fs.mkdtempSync(path.join(os.tmpdir(), 'cache-')), log: line => logs.push(line.text),
      });
    } catch (e) {
      error = (e as Error).message;
    } finally {
      process.env = saved;
      fs.rmSync(index, { recursive: true, force: true });
    }
    const pipLines = error.split('\n').slice(1).map(l => l.trim()).filter(Boolean);
    expect(pipLines).toContainEqual(expect.stringMatching(/^ERROR: .*no-such-package-xyz/));
    for (const line of pipLines) expect(logs.filter(l => l.includes(line))).toEqual([]);
  });

  (HAS_UPSTREAM_REFERENCE ? test : test.skip)('test-function-python312 fails to start when pip cannot install its requirements, naming pip\'s words and what to check', async () => {
    const index = fs.mkdtempSync(path.join(os.tmpdir(), 'empty-index-'));
    const saved = { ...process.env };
    // An index that holds nothing, and no other: pip fails the same way on every machine, without a network.
    Object.assign(process.env, { PIP_CONFIG_FILE: os.devNull, PIP_INDEX_URL: `file://${index}`, PIP_FIND_LINKS: '', PIP_EXTRA_INDEX_URL: '' });
    try {
      await expect(LocalFunction.startFrom(objectSource(upstreamSample('sample-function-inline-python312.yaml', 'test-function-python312')!), {
        cacheDirectory: fs.mkdtempSync(path.join(os.tmpdir(), 'cache-')),
      })).rejects.toThrow(/python3 -m pip install --target site-packages -r requirements\.txt exited 1: check the names and versions in requirements\.txt, and that pip reaches its index \(pip\.conf, PIP_INDEX_URL\)\n[\s\S]*requests==2\.31\.0/);
    } finally {
      process.env = saved;
      fs.rmSync(index, { recursive: true, force: true });
    }
  });
});

describe('a Python Function that cannot start', () => {
  test('fails when the module has no main, and when it imports a package it does not declare', async () => {
    await expect(LocalFunction.startFolder(functionFolder({ 'handler.py': 'def handle(event, context):\n    return 1\n' }))).rejects.toThrow(
      'handler.py has no function main (it defines handle): the runtime calls main(event, context); define it with `def main(event, context):`');
    await expect(LocalFunction.startFolder(functionFolder({ 'handler.py': 'import not_declared_anywhere\n\ndef main(event, context):\n    return 1\n' }))).rejects.toThrow(
      'handler.py imports \'not_declared_anywhere\', which is not installed: add it to requirements.txt (the cluster installs only those)');
  });

  test('fails on a Python older than 3.11, naming it and the fix', async () => {
    const old = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'python-')), 'python3.9');
    fs.writeFileSync(old, '#!/bin/sh\necho 3.9\n', { mode: 0o755 });
    await expect(LocalFunction.startFolder(functionFolder({ 'handler.py': 'def main(event, context):\n    return 1\n' }), { python: old })).rejects.toThrow(
      `${old} is Python 3.9, and the python312 runtime needs 3.11 or newer here: install a newer Python, or name one with --python`);
  });
});
