/**
 * A Function on this machine follows the runtime contract of the release it is run with: how the
 * controller composes the container's variables, writes an inline source and installs the
 * dependencies (1.11.1: once, as the image build; 1.13.0: at every start, as every Pod), and which
 * Node.js the runtime's image has.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import { ServerlessRelease } from '../../src/api';
import { FunctionRuntime } from '../../src/function/runtime';
import { FunctionSource } from '../../src/function/source';
import { KymaFunction } from '../../src/function/kyma-function';
import { LocalFunction } from '../../src/runtime/local-function';
import { functionFolder, objectSource } from '../util/local-functions';

/** Budget of a test that installs packages with npm and starts Node.js processes: seconds on a busy machine. */
const INSTALLS = 120_000;
/** Budget of a test that starts Node.js processes. */
const STARTS = 60_000;

let root: string;
let cacheDirectory: string;
/** A package on disk: npm installs it without a registry. */
let greeter: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'releases-'));
  cacheDirectory = path.join(root, 'cache');
  greeter = path.join(root, 'greeter');
  fs.mkdirSync(greeter);
  fs.writeFileSync(path.join(greeter, 'package.json'), '{ "name": "greeter", "version": "1.0.0", "main": "index.js" }');
  fs.writeFileSync(path.join(greeter, 'index.js'), 'exports.greet = (name) => `Hello, ${name}`;\n');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

// Test input: a handler that shows the variables the controller gives it.
const ENV_HANDLER = `module.exports.main = function () {
  const names = ['FUNC_NAME', 'FUNC_RUNTIME', 'SERVICE_NAMESPACE', 'PUBLISHER_PROXY_ADDRESS', 'FUNC_PORT', 'FUNC_HANDLER', 'MOD_NAME',
    'FUNC_HANDLER_SOURCE', 'FUNC_HANDLER_DEPENDENCIES'];
  return Object.fromEntries(names.map(n => [n, process.env[n] === undefined ? '<unset>' : process.env[n]]));
};`;

function inlineFunction(source: string, extra: { [key: string]: unknown } = {}, dependencies?: string) {
  return {
    metadata: { name: 'orders', namespace: 'team-a' },
    spec: { runtime: 'nodejs22', source: { inline: { source, ...(dependencies === undefined ? {} : { dependencies }) } }, ...extra },
  };
}

describe('the variables of the container', () => {
  const own = { env: [{ name: 'FUNC_NAME', value: 'mine' }, { name: 'PUBLISHER_PROXY_ADDRESS', value: 'http://mine/publish' }] };

  test('1.11.1: the controller\'s win over the Function\'s own, FUNC_PORT is set, no source in variables', async () => {
    const fn = await LocalFunction.startFrom(objectSource(inlineFunction(ENV_HANDLER, own)), { cacheDirectory });
    try {
      const env = (await fn.get('/')).json() as { [name: string]: string };
      expect(fn.release).toBe(ServerlessRelease.V1_11_1);
      expect(env).toMatchObject({ FUNC_NAME: 'orders', FUNC_HANDLER: 'main', MOD_NAME: 'handler', FUNC_HANDLER_SOURCE: '<unset>' });
      expect(env.PUBLISHER_PROXY_ADDRESS).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/publish$/);
      expect(env.FUNC_PORT).toMatch(/^\d+$/);
      expect(fn.logs).toContain('FUNC_NAME: the controller\'s value replaces the Function\'s own, as Serverless 1.11.1 does');
    } finally {
      await fn.stop();
    }
  }, STARTS);

  test('1.13.0: the Function\'s own win over the identity and addresses, the source travels in FUNC_HANDLER_SOURCE, no FUNC_PORT', async () => {
    const fn = await LocalFunction.startFrom(objectSource(inlineFunction(ENV_HANDLER, own)), { cacheDirectory, release: ServerlessRelease.V1_13_0 });
    try {
      const env = (await fn.get('/')).json() as { [name: string]: string };
      expect(env).toEqual({
        FUNC_NAME: 'mine', FUNC_RUNTIME: 'nodejs22', SERVICE_NAMESPACE: 'team-a', PUBLISHER_PROXY_ADDRESS: 'http://mine/publish',
        FUNC_PORT: '<unset>', FUNC_HANDLER: '<unset>', MOD_NAME: '<unset>', FUNC_HANDLER_SOURCE: ENV_HANDLER, FUNC_HANDLER_DEPENDENCIES: '',
      });
      expect(fn.logs).toContain('FUNC_NAME: the Function\'s own value replaces the controller\'s, as Serverless 1.13.0 does (1.11.1 keeps the controller\'s)');
    } finally {
      await fn.stop();
    }
  }, STARTS);

  test('1.13.0: fails when the inline source is above the 128 KiB Linux allows one variable; 1.11.1 runs it', async () => {
    const big = `${ENV_HANDLER}\n// ${'x'.repeat(132 * 1024)}\n`;
    await expect(LocalFunction.startFrom(objectSource(inlineFunction(big)), { cacheDirectory, release: ServerlessRelease.V1_13_0 }))
      .rejects.toThrow(/The Function's container cannot start: FUNC_HANDLER_SOURCE \(\d+ bytes\) is longer than the 131072 bytes Linux allows one variable .*take the source from Git/);
    const fn = await LocalFunction.startFrom(objectSource(inlineFunction(big)), { cacheDirectory });
    try {
      expect((await fn.get('/')).status).toBe(200);
    } finally {
      await fn.stop();
    }
  }, STARTS);
});

test('1.13.0: a Python Function gets MOD_NAME, FUNC_HANDLER and its source in variables, no FUNC_PORT', async () => {
  const source = 'import os\n\ndef main(event, context):\n    names = ["MOD_NAME", "FUNC_HANDLER", "FUNC_PORT", "PYTHONUNBUFFERED", "FUNC_HANDLER_SOURCE"]\n'
    + '    return {n: os.environ.get(n, "<unset>") for n in names}\n';
  const object = { metadata: { name: 'py', namespace: 'team-a' }, spec: { runtime: 'python312', source: { inline: { source } } } };
  const fn = await LocalFunction.startFrom(objectSource(object), { cacheDirectory, release: ServerlessRelease.V1_13_0 });
  try {
    expect((await fn.get('/')).json()).toEqual({ MOD_NAME: 'handler', FUNC_HANDLER: 'main', FUNC_PORT: '<unset>', PYTHONUNBUFFERED: 'TRUE', FUNC_HANDLER_SOURCE: source });
  } finally {
    await fn.stop();
  }
}, STARTS);

test('a variable upstream documents for newer runtimes only is named in the log, with what the image reads instead', async () => {
  const fn = await LocalFunction.startFrom(objectSource(inlineFunction(ENV_HANDLER, { env: [{ name: 'FUNC_BODY_MB_LIMIT', value: '10' }] })), {
    cacheDirectory, release: ServerlessRelease.V1_13_0,
  });
  try {
    expect(fn.logs).toContain('FUNC_BODY_MB_LIMIT: the nodejs22 image does not read it (upstream\'s documentation names it for nodejs26 and python314, '
      + 'which no release\'s Function CRD accepts); it reads REQ_MB_LIMIT (megabytes)');
  } finally {
    await fn.stop();
  }
}, STARTS);

describe('the dependencies', () => {
  const manifest = () => JSON.stringify({ name: 'fn', version: '1.0.0', devDependencies: { greeter: `file:${greeter}` } });
  const handler = 'const { greet } = require("greeter");\nexports.main = () => greet("dev");\n';

  test('1.13.0 installs them at every start, devDependencies included; 1.11.1 leaves devDependencies out', async () => {
    const folder = functionFolder({ 'handler.js': handler, 'package.json': manifest() });
    const fn = await LocalFunction.startFolder(folder, { cacheDirectory, release: ServerlessRelease.V1_13_0 });
    try {
      expect((await fn.get('/')).text()).toBe('Hello, dev');
      const installs = () => fn.logs.split('\n').filter(l => l.startsWith('installing the dependencies of package.json at start')).length;
      expect(installs()).toBe(1);
      expect(fn.logs).toContain('as every Pod of Serverless 1.13.0 does (npm install --prefer-offline --no-audit --progress=false)');
      expect(fn.logs).toMatch(/dependencies installed in \d+\.\d s; a Pod of Serverless 1\.13\.0 installs them at every start, within the 150 s of its startup probe/);
      await fn.reload();
      expect(installs()).toBe(2);
      expect((await fn.get('/')).text()).toBe('Hello, dev');
    } finally {
      await fn.stop();
    }
    // Nothing of a start is left behind.
    expect(fs.readdirSync(path.join(cacheDirectory, 'starts'))).toEqual([]);
    await expect(LocalFunction.startFolder(folder, { cacheDirectory })).rejects.toThrow(/handler\.js requires 'greeter', which is not installed/);
  }, INSTALLS);

  test('1.13.0 refuses dependencies of spaces, which its Pod writes into package.json as they are; 1.11.1 makes them {}', async () => {
    const blank = inlineFunction('exports.main = () => "hi";\n', {}, '   ');
    await expect(LocalFunction.startFrom(objectSource(blank), { cacheDirectory, release: ServerlessRelease.V1_13_0 }))
      .rejects.toThrow(/package\.json is not valid JSON .*npm install fails on it at every start of the Function's Pods/);
    const fn = await LocalFunction.startFrom(objectSource(blank), { cacheDirectory });
    try {
      expect((await fn.get('/')).text()).toBe('hi');
    } finally {
      await fn.stop();
    }
  }, INSTALLS);
});

test('installs with the package registry configuration given, as the Pods do with the Secret serverless-package-registry-config', async () => {
  const registry = path.join(root, 'registry-config');
  fs.mkdirSync(registry, { recursive: true });
  // A registry where nothing listens: npm's error names it, so npm read this .npmrc.
  fs.writeFileSync(path.join(registry, '.npmrc'), 'registry=http://127.0.0.1:9/\nfetch-retries=0\n');
  const folder = functionFolder({
    'handler.js': 'exports.main = () => "hi";\n',
    'package.json': JSON.stringify({ dependencies: { 'kyma-serverless-test-no-such-package': '1.0.0' } }),
  });
  await expect(LocalFunction.startFolder(folder, { cacheDirectory, release: ServerlessRelease.V1_13_0, packageRegistryConfig: registry }))
    .rejects.toThrow(/npm install --prefer-offline --no-audit --progress=false exited \d+: [\s\S]*in the cluster the Pod fails at every start the same way[\s\S]*address: '127\.0\.0\.1',\s+npm error\s+port: 9,/);
  // From a cluster: the Secret of the Function's namespace, when it is there.
  const lines: string[] = [];
  const cluster = {
    where: 'the test cluster',
    readSecret: async (namespace: string, name: string) => (namespace === 'default' && name === 'serverless-package-registry-config'
      ? { '.npmrc': fs.readFileSync(path.join(registry, '.npmrc')) } : undefined),
    readConfigMap: async () => undefined,
  };
  await expect(LocalFunction.startFolder(folder, { cacheDirectory, release: ServerlessRelease.V1_13_0, cluster, log: l => lines.push(l.text) }))
    .rejects.toThrow(/port: 9,/);
  expect(lines).toContain('installing with the package registry configuration of Secret default/serverless-package-registry-config (.npmrc) '
    + 'of the test cluster, as the Function\'s Pods do');
}, INSTALLS);

describe('the runtime', () => {
  const nodejs24 = () => ({ metadata: { name: 'hello', namespace: 'team-a' }, spec: { runtime: 'nodejs24', source: { inline: { source: 'exports.main = () => process.version;\n' } } } });
  const localMajor = Number(process.versions.node.split('.')[0]);

  test('nodejs24 runs on the local Node.js with a notice that names both versions, or is refused with strictRuntimeVersion', async () => {
    const fn = await LocalFunction.startFrom(objectSource(nodejs24()), { cacheDirectory, release: ServerlessRelease.V1_13_0 });
    try {
      expect((await fn.get('/')).text()).toBe(process.version);
      if (localMajor !== 24) {
        expect(fn.logs).toContain(`nodejs24 runs on Node.js 24.18.0 in the image of Serverless 1.13.0; this run uses Node.js ${process.versions.node}`);
        expect(fn.logs).toContain('Give a Node.js 24 with --node <path>');
      }
      expect(fn.logs).not.toContain('no runtime of Serverless');
    } finally {
      await fn.stop();
    }
    if (localMajor !== 24) {
      await expect(LocalFunction.startFrom(objectSource(nodejs24()), { cacheDirectory, release: ServerlessRelease.V1_13_0, strictRuntimeVersion: true }))
        .rejects.toThrow(/nodejs24 runs on Node.js 24\.18\.0 .*or run without --strict-runtime-version/);
    }
  }, STARTS);

  test('nodejs24 under 1.11.1: the log says the cluster refuses it and which release runs it', async () => {
    const fn = await LocalFunction.startFrom(objectSource(nodejs24()), { cacheDirectory });
    try {
      expect(fn.logs).toContain('nodejs24 is no runtime of Serverless 1.11.1, whose Function CRD accepts nodejs20, nodejs22, python312: '
        + 'the cluster refuses this Function; Serverless 1.13.0 runs it (--release 1.13.0)');
    } finally {
      await fn.stop();
    }
  }, STARTS);

  test('nodejs20 under 1.13.0: the log says it is deprecated', async () => {
    const fn = await LocalFunction.startFrom(objectSource({ ...nodejs24(), spec: { ...nodejs24().spec, runtime: 'nodejs20' } }), {
      cacheDirectory, release: ServerlessRelease.V1_13_0,
    });
    try {
      expect(fn.logs).toContain('nodejs20 is deprecated in Serverless 1.13.0 (end of life April 2026): move to nodejs22 or nodejs24');
    } finally {
      await fn.stop();
    }
  }, STARTS);

  test('a release the source names (the app\'s stack\'s) is used unless the options give one', async () => {
    const source = { ...objectSource(inlineFunction(ENV_HANDLER)), releaseOf: () => ServerlessRelease.V1_13_0 };
    const fromSource = await LocalFunction.startFrom(source, { cacheDirectory });
    await fromSource.stop();
    expect(fromSource.release).toBe(ServerlessRelease.V1_13_0);
    const asked = await LocalFunction.startFrom(source, { cacheDirectory, release: ServerlessRelease.V1_11_1 });
    await asked.stop();
    expect(asked.release).toBe(ServerlessRelease.V1_11_1);
    expect(asked.logs).toContain('running with the runtime contract of Serverless 1.11.1 as asked; the app\'s stack deploys 1.13.0');
  }, STARTS);

  test('a KymaFunction runs with the release of the nearest scope that declares one (its namespace\'s, its stack\'s)', async () => {
    // A chart that declares a release, as FunctionNamespace and ServerlessStack do.
    class ReleasedChart extends Chart {
      public readonly release = ServerlessRelease.V1_13_0;
    }
    const app = new App();
    const inNamespace = new KymaFunction(new ReleasedChart(app, 'team-a'), 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => "hi";\n'),
    });
    const alone = new KymaFunction(new Chart(app, 'team-b'), 'hello', {
      runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => "hi";\n'),
    });
    for (const [fn, release] of [[inNamespace, ServerlessRelease.V1_13_0], [alone, ServerlessRelease.V1_11_1]] as const) {
      const local = await LocalFunction.startKymaFunction(fn, { cacheDirectory });
      await local.stop();
      expect(local.release).toBe(release);
    }
  }, STARTS);
});
