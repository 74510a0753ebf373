import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findRun } from '../../src/cli/_runs';
import { appCommand, startRun } from '../../src/cli/run';
import { LogLine } from '../../src/runtime/local-function';
import { CONFIG_MAPS, FakeKubeApi, SECRETS, writeKubeconfig } from '../util/fake-kube-api';
import { functionFolder } from '../util/local-functions';

let cache: string;
const saved = process.env.KYMA_SERVERLESS_CACHE;
beforeAll(() => {
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'run-cache-'));
  process.env.KYMA_SERVERLESS_CACHE = cache;
});
afterAll(() => {
  if (saved === undefined) delete process.env.KYMA_SERVERLESS_CACHE;
  else process.env.KYMA_SERVERLESS_CACHE = saved;
  fs.rmSync(cache, { recursive: true, force: true });
});

const quiet = { port: 0, log: (_line: LogLine) => undefined };

describe('run', () => {
  test('serves a folder with --env, --env-file and --mount, and records the run for invoke until it stops', async () => {
    const folder = functionFolder({
      'handler.py': 'import os\n\ndef main(event, context):\n    with open("/run-test-secret/key") as f:\n        return os.environ["TOKEN"] + " " + os.environ["LEVEL"] + " " + f.read()\n',
      'function.yaml': 'env:\n  TOKEN: { secretKeyRef: { name: api, key: token } }\n  LEVEL: info\nsecretMounts: [{ secretName: keys, mountPath: /run-test-secret }]\n',
    });
    const envFile = path.join(path.dirname(folder), '.env');
    fs.writeFileSync(envFile, 'TOKEN=from-file\nLEVEL=from-file\n');
    const keys = fs.mkdtempSync(path.join(os.tmpdir(), 'keys-'));
    fs.writeFileSync(path.join(keys, 'key'), 'k');
    const run = await startRun(folder, { ...quiet, envFile: [envFile], env: ['LEVEL=debug'], mount: [`keys=${keys}`] });
    try {
      expect((await run.fn.get('/')).text()).toBe('from-file debug k');
      expect(findRun(folder)).toEqual({ folder: fs.realpathSync(folder), url: run.fn.url, pid: process.pid });
    } finally {
      await run.stop();
    }
    expect(findRun(folder)).toBeUndefined();
  });

  test('with --from-cluster, reads Secret and ConfigMap keys and mounted Secrets of the Function\'s namespace in the current context', async () => {
    const api = await FakeKubeApi.start({ resources: [SECRETS, CONFIG_MAPS] });
    const kubeconfig = writeKubeconfig(api, path.join(cache, 'kubeconfig'), { namespace: 'team-c' });
    api.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api', namespace: 'team-c' }, data: { token: Buffer.from('t0k3n').toString('base64') } });
    api.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-c' }, data: { level: 'warn' } });
    api.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keys', namespace: 'team-c' }, data: { key: Buffer.from('k3y').toString('base64') } });
    const folder = functionFolder({
      'handler.py': 'import os\n\ndef main(event, context):\n    with open("/from-cluster-test/key") as f:\n'
        + '        return " ".join([os.environ["TOKEN"], os.environ["LEVEL"], f.read(), context["namespace"]])\n',
      'function.yaml': 'env:\n  TOKEN: { secretKeyRef: { name: api, key: token } }\n  LEVEL: { configMapKeyRef: { name: settings, key: level } }\n'
        + 'secretMounts: [{ secretName: keys, mountPath: /from-cluster-test }]\n',
    });
    try {
      const run = await startRun(folder, { ...quiet, fromCluster: true, kubeconfig });
      try {
        expect((await run.fn.get('/')).text()).toBe('t0k3n warn k3y team-c');
      } finally {
        await run.stop();
      }
      api.failNext('GET', /\/secrets\/api$/, 403);
      await expect(startRun(folder, { ...quiet, fromCluster: true, kubeconfig })).rejects.toThrow(/Not allowed while reading Secret team-c\/api \(for --from-cluster\)/);
    } finally {
      await api.close();
    }
  });

  test('runs a Function of a cdk8s app, synthesized as synth does', async () => {
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'run-app-'));
    const fn = {
      apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'echo', namespace: 'team-a' },
      spec: { runtime: 'nodejs22', source: { inline: { source: 'exports.main = (event) => "echo " + process.env.SERVICE_NAMESPACE;\n' } } },
    };
    // The smallest app: what cdk8s synth asks of one, writing a manifest into CDK8S_OUTDIR.
    fs.writeFileSync(path.join(app, 'app.js'), `const fs = require('fs');\nfs.mkdirSync(process.env.CDK8S_OUTDIR, { recursive: true });\n`
      + `fs.writeFileSync(process.env.CDK8S_OUTDIR + '/functions.k8s.yaml', ${JSON.stringify(JSON.stringify(fn))});\n`);
    const cwd = process.cwd();
    process.chdir(app);
    try {
      await expect(startRun(undefined, { ...quiet, app: 'app.js', function: 'team-b/echo' })).rejects.toThrow('The app has no Function team-b/echo: give one of team-a/echo with --function');
      const run = await startRun(undefined, { ...quiet, app: 'app.js', function: 'echo' });
      try {
        expect((await run.fn.get('/')).text()).toBe('echo team-a');
      } finally {
        await run.stop();
      }
    } finally {
      process.chdir(cwd);
      fs.rmSync(app, { recursive: true, force: true });
    }
  });

  test('fails on what it cannot run, naming the fix', async () => {
    await expect(startRun(undefined, quiet)).rejects.toThrow('Give the folder of a Function (kyma-serverless run functions/hello), or --app <main.ts> --function <namespace/name>');
    await expect(startRun('functions/x', { ...quiet, app: 'main.ts' })).rejects.toThrow('Give a Function folder, or --app with --function, not both');
    await expect(startRun(undefined, { ...quiet, app: 'main.ts' })).rejects.toThrow('--app needs --function <namespace/name>');
    await expect(startRun('functions/hello-node', { ...quiet, env: ['NOVALUE'] })).rejects.toThrow('--env NOVALUE: give it as NAME=value');
    await expect(startRun('no/such/folder', quiet)).rejects.toThrow('no/such/folder does not exist: give the folder of a Function');
  });

  test('appCommand runs a .ts file with ts-node, a .js file with node, and anything else as a command', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'app-command-'));
    fs.writeFileSync(path.join(dir, 'main.ts'), '');
    fs.writeFileSync(path.join(dir, 'main.js'), '');
    expect([appCommand('main.ts', dir), appCommand('main.js', dir), appCommand('npx ts-node src/main.ts', dir)])
      .toEqual(['npx ts-node "main.ts"', 'node "main.js"', 'npx ts-node src/main.ts']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
