import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findRun } from '../../src/cli/_runs';
import { appCommand, folderNamespace, folderRelease, releaseOfObjects, startRun } from '../../src/cli/run';
import { LogLine } from '../../src/runtime/local-function';
import { CONFIG_MAPS, FakeKubeApi, SECRETS, writeKubeconfig } from '../util/fake-kube-api';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../util/fake-cluster';
import { functionFolder } from '../util/local-functions';

// Every test here starts Node.js or Python processes (and some install packages): seconds each on a busy machine, not jest's 5.
jest.setTimeout(60_000);

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

/** An app folder with cdk8s.yaml (output `out`) and a function folder `functions/<name>`; with `namespaces`, a synthesized Function of that name in each. */
function appWithFolder(name: string, namespaces?: string[]): string {
  const app = fs.mkdtempSync(path.join(os.tmpdir(), 'run-app-'));
  fs.writeFileSync(path.join(app, 'cdk8s.yaml'), 'language: typescript\napp: npx ts-node main.ts\noutput: out\n');
  fs.mkdirSync(path.join(app, 'functions', name), { recursive: true });
  fs.writeFileSync(path.join(app, 'functions', name, 'handler.js'), 'module.exports.main = function (event, context) { return process.env.SERVICE_NAMESPACE; };\n');
  if (namespaces) {
    fs.mkdirSync(path.join(app, 'out', 'prod'), { recursive: true });
    fs.writeFileSync(path.join(app, 'out', 'prod', '0001-functions.k8s.yaml'), namespaces.map(ns => 'apiVersion: serverless.kyma-project.io/v1alpha2\n'
      + `kind: Function\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  runtime: nodejs22\n  source: { inline: { source: x } }\n`).join('---\n'));
  }
  return path.join(app, 'functions', name);
}

describe('run <folder> finds the namespace the app puts the folder in', () => {
  test('from the app\'s synthesized output, and says so in the log', async () => {
    const folder = appWithFolder('echo', ['functions']);
    expect(folderNamespace(folder)).toEqual({ namespace: 'functions', note: expect.stringMatching(/^namespace functions: the app's .*out\/ has Function functions\/echo \(-n overrides\)$/) });
    const lines: string[] = [];
    const run = await startRun(folder, { port: 0, log: line => lines.push(line.text) });
    try {
      expect(run.fn.namespace).toBe('functions');
      expect((await run.fn.get('/')).text()).toBe('functions');
      expect(lines).toContainEqual(expect.stringMatching(/^namespace functions: the app's /));
    } finally {
      await run.stop();
    }
    const given = await startRun(folder, { ...quiet, namespace: 'team-x' });
    try {
      expect(given.fn.namespace).toBe('team-x');
    } finally {
      await given.stop();
    }
  });

  test('and the release, from the stack\'s Function CRD in the output: a new init app\'s folder runs with 1.13.0', async () => {
    const folder = appWithFolder('echo', ['functions']);
    expect(folderRelease(folder)).toBeUndefined();
    const crd = 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: functions.serverless.kyma-project.io\n'
      + '  annotations:\n    cdk8s-kyma-serverless/release: 1.13.0\n';
    fs.writeFileSync(path.join(folder, '..', '..', 'out', 'prod', '0000-serverless.k8s.yaml'), crd);
    expect(folderRelease(folder)).toBe('1.13.0');
    expect(folderRelease(functionFolder({ 'handler.js': 'x' }))).toBeUndefined();
    const lines: string[] = [];
    const run = await startRun(folder, { port: 0, log: line => lines.push(line.text) });
    try {
      expect(run.fn.release).toBe('1.13.0');
      expect(lines).toContain('the app\'s synthesized output deploys Serverless 1.13.0 (its stack\'s Function CRD): following its runtime contract');
    } finally {
      await run.stop();
    }
  });

  test('says why it is default when the app has no output yet, or none holds the folder, or two namespaces have it', () => {
    expect(folderNamespace(appWithFolder('echo'))).toEqual({ namespace: undefined, note: expect.stringMatching(
      /^namespace default: neither -n nor function\.yaml names one, and the app has no synthesized output \(.*out\/\) to read the namespace it puts echo in: run npm run synth, or give -n <namespace>, or run the app's Function: run --app main\.ts --function <namespace>\/echo$/) });
    expect(folderNamespace(appWithFolder('echo', ['a', 'b'])).note).toMatch(/has a Function echo in a and b: give -n <namespace>/);
    expect(folderNamespace(functionFolder({ 'handler.js': 'x' })).note).toMatch(/^namespace default: neither -n nor function\.yaml names one, and no cdk8s app \(cdk8s\.yaml\) holds the folder: give -n <namespace> to run it in another$/);
  });
});

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

  test('with --from-cluster, follows the release the cluster\'s Function CRD names, or the buildless CRD implies', async () => {
    const api = await FakeKubeApi.start({ resources: [SECRETS, CONFIG_MAPS, CUSTOM_RESOURCE_DEFINITIONS] });
    const kubeconfig = writeKubeconfig(api, path.join(cache, 'kubeconfig-release'), { namespace: 'team-c' });
    const folder = functionFolder({ 'handler.js': 'exports.main = () => "hi";\n' });
    const crd = (annotations: { [key: string]: string }, runtimes: string[]) => ({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'functions.serverless.kyma-project.io', annotations },
      spec: { versions: [{ name: 'v1alpha2', schema: { openAPIV3Schema: { properties: { spec: { properties: { runtime: { enum: runtimes } } } } } } }] },
    });
    const releaseOfRun = async () => {
      const lines: string[] = [];
      const run = await startRun(folder, { ...quiet, fromCluster: true, kubeconfig, log: line => lines.push(line.text) });
      await run.stop();
      return [run.fn.release, lines.find(l => l.startsWith('the cluster of context'))];
    };
    try {
      // No CRD (or none it may read): the default.
      expect(await releaseOfRun()).toEqual(['1.11.1', undefined]);
      // Upstream's buildless CRD, which lists nodejs24.
      api.put(crd({}, ['nodejs20', 'nodejs22', 'nodejs24', 'python312']));
      expect(await releaseOfRun()).toEqual(['1.13.0', expect.stringMatching(/runs Serverless 1\.13\.0 \(its Function CRD\): following its runtime contract$/)]);
      // The annotation of this package's CRD wins.
      api.put(crd({ 'cdk8s-kyma-serverless/release': '1.11.1' }, ['nodejs20', 'nodejs22', 'nodejs24', 'python312']));
      expect((await releaseOfRun())[0]).toBe('1.11.1');
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

  test('runs a Function of an app with the runtime contract of the release of the app\'s stack, unless --release says otherwise', async () => {
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'run-app-release-'));
    const fn = {
      apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'echo', namespace: 'team-a' },
      spec: { runtime: 'nodejs22', source: { inline: { source: 'exports.main = () => process.env.FUNC_PORT === undefined ? "no FUNC_PORT" : "FUNC_PORT";\n' } } },
    };
    // An object of the stack, labelled with its version as ServerlessStack labels every one.
    const stackObject = {
      apiVersion: 'v1', kind: 'ServiceAccount', metadata: {
        name: 'serverless-controller', namespace: 'kyma-system',
        labels: { 'app.kubernetes.io/part-of': 'serverless', 'app.kubernetes.io/managed-by': 'cdk8s-kyma-serverless', 'app.kubernetes.io/version': '1.13.0' },
      },
    };
    fs.writeFileSync(path.join(app, 'app.js'), `const fs = require('fs');\nfs.mkdirSync(process.env.CDK8S_OUTDIR, { recursive: true });\n`
      + `fs.writeFileSync(process.env.CDK8S_OUTDIR + '/app.k8s.yaml', ${JSON.stringify(`${JSON.stringify(stackObject)}\n---\n${JSON.stringify(fn)}\n`)});\n`);
    const cwd = process.cwd();
    process.chdir(app);
    try {
      const run = await startRun(undefined, { ...quiet, app: 'app.js', function: 'team-a/echo' });
      try {
        expect(run.fn.release).toBe('1.13.0');
        expect((await run.fn.get('/')).text()).toBe('no FUNC_PORT');
      } finally {
        await run.stop();
      }
      const asked = await startRun(undefined, { ...quiet, app: 'app.js', function: 'team-a/echo', release: 'v1.11.1' });
      try {
        expect((await asked.fn.get('/')).text()).toBe('FUNC_PORT');
        expect(asked.fn.logs).toContain('running with the runtime contract of Serverless 1.11.1 as asked; the app\'s stack deploys 1.13.0');
      } finally {
        await asked.stop();
      }
    } finally {
      process.chdir(cwd);
      fs.rmSync(app, { recursive: true, force: true });
    }
  }, 120_000); // synthesizes the app and starts Node.js twice

  test('releaseOfObjects reads the release from the Function CRD, else from the version label of the stack\'s objects', () => {
    const labels = (version: string) => ({
      metadata: { labels: { 'app.kubernetes.io/part-of': 'serverless', 'app.kubernetes.io/managed-by': 'cdk8s-kyma-serverless', 'app.kubernetes.io/version': version } },
    });
    const crd = (release: string) => ({
      kind: 'CustomResourceDefinition', metadata: { name: 'functions.serverless.kyma-project.io', annotations: { 'cdk8s-kyma-serverless/release': release } },
    });
    expect(releaseOfObjects([crd('1.13.0'), labels('1.11.1')])).toBe('1.13.0');
    expect(releaseOfObjects([labels('1.13.0'), labels('1.13.0')])).toBe('1.13.0');
    // An image version of its own (ServerlessStack's 'version') names no release; two stacks that disagree name none.
    expect(releaseOfObjects([labels('1.13.0-custom')])).toBeUndefined();
    expect(releaseOfObjects([labels('1.11.1'), labels('1.13.0')])).toBeUndefined();
    expect(releaseOfObjects([])).toBeUndefined();
  });

  test('serves a folder with --release 1.13.0 (the source in FUNC_HANDLER_SOURCE), and refuses a release it does not deploy', async () => {
    const folder = functionFolder({ 'handler.js': 'exports.main = () => process.env.FUNC_HANDLER_SOURCE === undefined ? "1.11.1" : "1.13.0";\n' });
    const run = await startRun(folder, { ...quiet, release: '1.13.0' });
    try {
      expect(run.fn.release).toBe('1.13.0');
      expect((await run.fn.get('/')).text()).toBe('1.13.0');
    } finally {
      await run.stop();
    }
    await expect(startRun(folder, { ...quiet, release: '1.12.0' })).rejects.toThrow("--release (1.12.0) is no release this package deploys: use '1.11.1' or '1.13.0'");
  }, 60_000);

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
