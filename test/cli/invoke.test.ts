import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerRun } from '../../src/cli/_runs';
import { main } from '../../src/cli';
import { formatResponse, invokeRequest, invokeTarget } from '../../src/cli/invoke';
import { CloudEventMode } from '../../src/runtime/cloudevents';
import { FunctionResponse } from '../../src/runtime/invoke';
import { LocalFunction } from '../../src/runtime/local-function';
import { functionFolder } from '../util/local-functions';

// Every test here starts Node.js or Python processes (and some install packages): seconds each on a busy machine, not jest's 5.
jest.setTimeout(60_000);

// Test input: a Function that answers with what it got.
const ECHO = 'module.exports.main = function (event) {\n'
  + '  return { method: event.extensions.request.method, url: event.extensions.request.url, data: event.data, type: event["ce-type"] || null };\n};\n';

let folder: string;
let fn: LocalFunction;
let cache: string;
const saved = process.env.KYMA_SERVERLESS_CACHE;
beforeAll(async () => {
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'invoke-cache-'));
  process.env.KYMA_SERVERLESS_CACHE = cache;
  folder = functionFolder({ 'handler.js': ECHO }, 'echo');
  fn = await LocalFunction.startFolder(folder);
});
afterAll(async () => {
  await fn.stop();
  if (saved === undefined) delete process.env.KYMA_SERVERLESS_CACHE;
  else process.env.KYMA_SERVERLESS_CACHE = saved;
  fs.rmSync(cache, { recursive: true, force: true });
});

describe('invokeRequest', () => {
  test('sends JSON data as JSON, other data as text, and a CloudEvent with --type', () => {
    expect(invokeRequest({ data: '{"a":1}' })).toMatchObject({ json: { a: 1 } });
    expect(invokeRequest({ data: 'hello' })).toMatchObject({ body: 'hello' });
    expect(invokeRequest({ data: '{"a":1}', header: ['Content-Type: text/plain'] })).toMatchObject({ body: '{"a":1}', headers: { 'content-type': 'text/plain' } });
    expect(invokeRequest({ type: 'order.created.v1', data: '{"a":1}', mode: CloudEventMode.STRUCTURED }))
      .toMatchObject({ event: { type: 'order.created.v1', source: 'kyma-serverless-invoke', data: { a: 1 } }, mode: CloudEventMode.STRUCTURED });
  });

  test('fails on a header without a colon, a data file that does not exist, and event attributes without --type', () => {
    expect(() => invokeRequest({ header: ['X-Only'] })).toThrow('--header X-Only: give it as "Name: value"');
    expect(() => invokeRequest({ data: '@/no/such/file' })).toThrow('--data @/no/such/file: cannot read /no/such/file (ENOENT): give an existing file');
    expect(() => invokeRequest({ source: 'shop' })).toThrow('--source and --id describe a CloudEvent: give its --type too');
    expect(() => invokeRequest({ timeout: 'soon' })).toThrow('\'soon\' is not a duration');
  });
});

test('formatResponse prints the status line, the headers, a blank line and the body; bytes as a count', () => {
  expect(formatResponse(new FunctionResponse(200, 'OK', { 'content-type': 'text/plain' }, Buffer.from('hi\n')))).toBe('HTTP 200 OK\ncontent-type: text/plain\n\nhi');
  expect(formatResponse(new FunctionResponse(200, 'OK', { 'content-type': 'image/png' }, Buffer.from([0x89, 0x50, 0x00, 0x01])))).toBe('HTTP 200 OK\ncontent-type: image/png\n\n<4 bytes of image/png>');
});

describe('invokeTarget', () => {
  test('sends to a URL', async () => {
    const { response } = await invokeTarget(fn.url, { path: '/x?y=1', data: '{"a":1}' });
    expect(response.json()).toEqual({ method: 'POST', url: '/x?y=1', data: { a: 1 }, type: null });
  });

  test('sends a CloudEvent to the run of a folder', async () => {
    const unregister = registerRun(folder, fn.url);
    try {
      const { response, url, started } = await invokeTarget(folder, { type: 'order.created.v1', source: 'shop', data: '{"a":1}' });
      expect([url, started]).toEqual([fn.url, false]);
      expect(response.json()).toMatchObject({ data: { a: 1 }, type: 'order.created.v1' });
    } finally {
      unregister();
    }
  });

  test('starts a folder that is not running for the one call', async () => {
    const { response, started } = await invokeTarget(folder, {});
    expect([started, response.json().method]).toEqual([true, 'GET']);
  });

  test('starts a folder for the one call with the runtime contract of --release', async () => {
    const released = functionFolder({ 'handler.js': 'exports.main = () => process.env.FUNC_HANDLER_SOURCE === undefined ? "1.11.1" : "1.13.0";\n' });
    expect((await invokeTarget(released, {})).response.text()).toBe('1.11.1');
    expect((await invokeTarget(released, { release: '1.13.0' })).response.text()).toBe('1.13.0');
    await expect(invokeTarget(released, { release: '2.0' })).rejects.toThrow("--release (2.0) is no release this package deploys: use '1.11.1' or '1.13.0'");
  });

  test('fails for a folder started for the call that needs an option of run, naming run', async () => {
    const mounting = functionFolder({ 'handler.js': ECHO, 'function.yaml': 'secretMounts: [{ secretName: keys, mountPath: /keys }]\n' });
    await expect(invokeTarget(mounting, {})).rejects.toThrow(`has no local folder: give one with --mount keys=<folder holding a file per key>, `
      + `or read it from the cluster with --from-cluster\n  invoke starts a folder that no run serves with --env-file only: for the options of run `
      + `(--env, --mount, --from-cluster, --python), serve it with kyma-serverless run ${mounting} <options>, then invoke it again`);
  });

  test('fails for what is neither a folder nor a URL, and for a URL where nothing answers', async () => {
    await expect(invokeTarget('hello', {})).rejects.toThrow('\'hello\' is neither a Function folder nor a URL: give a folder such as functions/hello-node, or a URL such as http://127.0.0.1:8080');
    const stopped = await LocalFunction.startFolder(functionFolder({ 'handler.js': ECHO }));
    const url = stopped.url;
    await stopped.stop();
    await expect(invokeTarget(url, {})).rejects.toThrow(`Nothing answers at ${url} (connection refused): start the Function (kyma-serverless run <folder>), or check the URL`);
  });

  test('fails when the answer takes longer than --timeout, naming the option', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      await expect(invokeTarget(url, { timeout: '200ms' })).rejects.toThrow(
        `${url} did not answer within 0.2 s: the Function may hang, or give it more time (invoke --timeout, or the timeout of the request)`);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

test('the command prints the answer as JSON with -o json, and exits 1 when the Function answers 400 or more', async () => {
  const out: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation(chunk => out.push(String(chunk)) > 0);
  try {
    await main(['node', 'kyma-serverless', 'invoke', fn.url, '--path', '/?a=1', '-o', 'json']);
    expect(JSON.parse(out.join(''))).toMatchObject({ url: fn.url, started: false, status: 200, json: { method: 'GET', url: '/?a=1' } });
    expect(process.exitCode ?? 0).toBe(0);
    out.length = 0;
    await main(['node', 'kyma-serverless', 'invoke', fn.url, '-d', '{bad', '-H', 'content-type: application/json']);
    expect(out.join('')).toMatch(/^HTTP 400 Bad Request\n/);
    expect(process.exitCode).toBe(1);
  } finally {
    write.mockRestore();
    process.exitCode = 0;
  }
});

test('a folder started for the call that fails shows the Function\'s log on standard error, not only Express\'s error page', async () => {
  // Test input: a handler whose main throws as a missing module does.
  const throwing = functionFolder({ 'handler.js': 'module.exports.main = function () { require("no-such-module-xyz"); };\n' });
  const err: string[] = [];
  const out: string[] = [];
  const writeErr = jest.spyOn(process.stderr, 'write').mockImplementation(chunk => err.push(String(chunk)) > 0);
  const writeOut = jest.spyOn(process.stdout, 'write').mockImplementation(chunk => out.push(String(chunk)) > 0);
  try {
    await main(['node', 'kyma-serverless', 'invoke', throwing]);
    expect(out.join('')).toMatch(/^HTTP 500 /);
    const log = err.join('');
    expect(log).toContain('kyma-serverless: the Function\'s log for this call:\n');
    expect(log).toMatch(/Cannot find module 'no-such-module-xyz'/);
    expect(log).toMatch(/kyma-serverless: main threw/);
    expect(process.exitCode).toBe(1);
    // Served by a run: its log is in that run's output, which invoke names.
    const served = await LocalFunction.startFolder(throwing, { port: 0, log: () => undefined });
    const unregister = registerRun(throwing, served.url);
    err.length = 0;
    try {
      await main(['node', 'kyma-serverless', 'invoke', throwing]);
    } finally {
      unregister();
      await served.stop();
    }
    expect(err.join('')).toBe(`kyma-serverless: the cause is in the log of the kyma-serverless run serving ${throwing} (process ${process.pid}): `
      + 'what main threw, and the runtime\'s note on the answer\n');
  } finally {
    writeErr.mockRestore();
    writeOut.mockRestore();
    process.exitCode = 0;
  }
});
