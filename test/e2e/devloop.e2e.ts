/**
 * The developer loop where users stand: the packed package installed in a new cdk8s app outside
 * the repository (see scratch-app.ts), with jest and ts-jest as `kyma-serverless init` sets an app
 * up (its jest.config.js), this repository's Function folders, and every file docs/develop-locally.md
 * shows. There:
 * - every command of the document runs as shown (`kyma-serverless run` in the background, on a
 *   free port instead of the one shown, and stopped with SIGINT, as Ctrl-C stops it), and prints
 *   the lines the document shows;
 * - `run --watch` picks up an edit of the handler;
 * - the document's jest and node:test tests of the test kit pass;
 * - upstream's Node.js sample with dependencies installs them (npm, into the cache) and answers.
 *
 * Slow (the install, and a ts-node start for the app), so it runs with `npm run test:e2e`.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HAS_UPSTREAM_REFERENCE } from '../util/fixtures';
import { objectSource, upstreamSample } from '../util/local-functions';
import { appFiles } from '../../src/cli/init/_templates';
import { APP_DEV_DEPENDENCIES } from '../../src/cli/init/_versions';
import { ScratchApp, check, packPackage, run } from './scratch-app';

const ROOT = path.resolve(__dirname, '..', '..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'develop-locally.md'), 'utf8');

/** A fenced block of the document. */
interface Block {
  readonly language: string;
  readonly text: string;
  /** The line of its opening fence. */
  readonly line: number;
}

const BLOCKS: Block[] = [...DOC.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)]
  .map(m => ({ language: m[1], text: m[2], line: DOC.slice(0, m.index).split('\n').length }));

/** The files the document shows: blocks whose first line names them (`// main.ts`, `# .env`). */
const FILES = BLOCKS.map(b => ({ block: b, file: /^(?:\/\/|#) ((?:[\w.-]+\/)*[\w.-]+\.\w+|\.env)\n/.exec(b.text)?.[1] })).filter(f => f.file);

/** A command of the document's console blocks, and the lines it shows (`...` and `# ` lines left out). */
interface Step {
  readonly command: string;
  readonly expected: string[];
  readonly line: number;
}

const STEPS: Step[] = BLOCKS.filter(b => b.language === 'console').flatMap(block => {
  const steps: Step[] = [];
  block.text.split('\n').forEach((text, i) => {
    if (text.startsWith('$ ')) steps.push({ command: text.slice(2), expected: [], line: block.line + i + 1 });
    else if (text.trim() && text.trim() !== '...' && !text.startsWith('# ')) steps[steps.length - 1].expected.push(text.trim());
  });
  return steps;
});

/** A `kyma-serverless run` in the background. */
interface Background {
  readonly step: Step;
  readonly process: ChildProcess;
  output: string;
  /** The URL the document shows for it, and the one it really answers at. */
  readonly shown: string;
  url?: string;
}

let tarball: string;
let app: ScratchApp;
let cache: string;
const runs: Background[] = [];
/** The document's URLs, replaced by those of the runs. */
const urls = new Map<string, string>();

const env = () => ({ ...process.env, KYMA_SERVERLESS_CACHE: cache, CDK8S_CHECK_UPGRADE: 'false', npm_config_update_notifier: 'false' });
const localize = (text: string) => [...urls].reduce((t, [shown, real]) => t.split(shown).join(real), text);

/** Resolves when the output of a run matches, or rejects when it exits first. */
function waitFor(background: Background, pattern: RegExp, count = 1): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if ((background.output.match(new RegExp(pattern, 'g')) ?? []).length >= count) {
        background.process.stdout!.off('data', check);
        background.process.stderr!.off('data', check);
        resolve();
      }
    };
    background.process.stdout!.on('data', check);
    background.process.stderr!.on('data', check);
    background.process.once('exit', code => reject(new Error(`exited ${code} before printing ${pattern}:\n${background.output}`)));
    check();
  });
}

/** Starts a `run` of the document with --port 0, and waits until it answers or exits. */
async function start(step: Step): Promise<Background> {
  const port = /--port (\d+)/.exec(step.command)?.[1] ?? '8080';
  const args = localize(step.command).replace(/^npx kyma-serverless /, '').replace(/ --port \d+/, '').split(/\s+/).concat(['--port', '0']);
  const child = spawn(path.join(app.dir, 'node_modules', '.bin', 'kyma-serverless'), args, { cwd: app.dir, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  const background: Background = { step, process: child, output: '', shown: `http://127.0.0.1:${port}` };
  child.stdout.on('data', (c: Buffer) => background.output += c.toString());
  child.stderr.on('data', (c: Buffer) => background.output += c.toString());
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)));
  const answers = waitFor(background, /answers at http:\/\/127\.0\.0\.1:\d+/).then(() => true, () => false);
  if (await answers) {
    background.url = /answers at (http:\/\/127\.0\.0\.1:\d+)/.exec(background.output)![1];
    urls.set(background.shown, background.url);
    runs.push(background);
  } else {
    await exited;
  }
  return background;
}

/** Runs a command of the document through the shell, to its end. */
function shell(command: string): Promise<{ status: number | null; output: string }> {
  return new Promise(resolve => {
    const child = spawn('sh', ['-c', localize(command)], { cwd: app.dir, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => output += c.toString());
    child.stderr.on('data', (c: Buffer) => output += c.toString());
    child.on('exit', status => resolve({ status, output }));
  });
}

/** The lines the document shows that the output lacks. */
function missing(expected: readonly string[], output: string): string[] {
  // Every line, in any order: standard output and standard error come through two pipes, whose
  // interleaving depends on the machine's load.
  const lines = new Set(output.split('\n').map(l => l.trim()));
  return expected.map(localize).filter(line => !lines.has(line));
}

beforeAll(() => {
  tarball = packPackage();
  app = ScratchApp.create(tarball);
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-cache-'));
  // jest as kyma-serverless init sets it up: the versions and the jest.config.js it writes.
  check(run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev',
    ...['jest', 'ts-jest', '@types/jest'].map(name => `${name}@${APP_DEV_DEPENDENCIES[name]}`)], app.dir));
  app.write('jest.config.js', appFiles({ name: 'scratch-app', packageSpec: tarball })['jest.config.js']);
  for (const name of ['hello-node', 'hello-python']) fs.cpSync(path.join(ROOT, 'functions', name), path.join(app.dir, 'functions', name), { recursive: true });
  for (const { block, file } of FILES) app.write(file!, block.text);
}, 15 * 60 * 1000);

afterAll(async () => {
  for (const background of runs) if (background.process.exitCode === null) background.process.kill('SIGKILL');
  if (process.env.KEEP_E2E_APP) process.stdout.write(`kept the scratch app in ${app?.dir}\n`);
  else app?.remove();
  if (tarball) fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
  if (cache) fs.rmSync(cache, { recursive: true, force: true });
});

test('the packed package holds the local runtime\'s programs and the test kit\'s entry, and the command has run and invoke', () => {
  const files = check(run('tar', ['-tzf', tarball], ROOT)).stdout.split('\n').map(f => f.replace(/^package\//, ''));
  expect(files).toEqual(expect.arrayContaining([
    'testing/package.json', 'lib/src/testing/index.js', 'lib/src/testing/index.d.ts', 'lib/src/runtime/node/server.js', 'lib/src/runtime/python/server.py',
  ]));
  // The checkout's fast-start bundle is not the package's business.
  expect(files.filter(f => f.startsWith('lib/runtime/'))).toEqual([]);
  const help = check(app.bin('kyma-serverless', ['--help'])).stdout;
  for (const command of ['run', 'invoke']) expect(help).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
});

test('the document shows files, commands and tests', () => {
  expect(FILES.map(f => f.file)).toEqual(expect.arrayContaining(['functions/orders/handler.py', 'functions/orders/function.yaml', '.env', 'main.ts',
    'test/functions.test.ts', 'test/hello.node-test.ts']));
  expect(STEPS.length).toBeGreaterThanOrEqual(12);
});

test('every command of docs/develop-locally.md runs as shown, run --watch picks up an edit, and the runs stop on Ctrl-C', async () => {
  for (const step of STEPS) {
    const where = `docs/develop-locally.md line ${step.line}: ${step.command}`;
    if (/^npx kyma-serverless run /.test(step.command)) {
      const background = await start(step);
      if (!background.url) {
        // A run that cannot start says why, and exits 1.
        expect(`${where}\n${background.process.exitCode}\n${missing(step.expected, background.output).join('\n')}`).toBe(`${where}\n1\n`);
      } else if (step.command.includes('--watch')) {
        const handler = path.join(app.dir, 'functions', 'hello-node', 'handler.js');
        const original = fs.readFileSync(handler, 'utf8');
        // The runtime's line of each (re)load: "hello-node (nodejs22, namespace default) answers at ...".
        const loaded = /\) answers at/;
        fs.writeFileSync(handler, original.replace('Hello, ', 'Hi, '));
        await waitFor(background, loaded, 2);
        expect(await (await fetch(`${background.url}/?name=Ada`)).json()).toEqual({ message: 'Hi, Ada!' });
        fs.writeFileSync(handler, original);
        await waitFor(background, loaded, 3);
      }
      continue;
    }
    const { status, output } = await shell(step.command);
    expect(`${where}\nexit ${status}\n${missing(step.expected, output).join('\n')}`).toBe(`${where}\nexit 0\n`);
  }
  for (const background of runs) {
    const where = `docs/develop-locally.md line ${background.step.line}: ${background.step.command}`;
    expect(`${where}\n${missing(background.step.expected, background.output).join('\n')}`).toBe(`${where}\n`);
    const exited = new Promise<number | null>(resolve => background.process.once('exit', code => resolve(code)));
    background.process.kill('SIGINT');
    expect(`${where}: exit ${await exited}`).toBe(`${where}: exit 0`);
  }
  // A stopped run is forgotten: invoke starts the folder for its one call.
  const invoke = await shell('npx kyma-serverless invoke functions/hello-node -o json');
  expect(JSON.parse(invoke.output.slice(invoke.output.indexOf('{')))).toMatchObject({ started: true, status: 200, json: { message: 'Hello, world!' } });
}, 10 * 60 * 1000);

(HAS_UPSTREAM_REFERENCE ? test : test.skip)('upstream\'s my-test-function installs its npm dependencies into the cache once, and answers', async () => {
  // The package as the scratch app has it, loaded from there.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const kit = require(path.join(app.dir, 'node_modules', 'cdk8s-kyma-serverless', 'testing')) as typeof import('../../src/testing');
  const sample = upstreamSample('sample-function-inline-nodejs20-full.yaml', 'my-test-function')!;
  const secret = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-'));
  const options = { cacheDirectory: cache, secretMounts: { SECRET_NAME: secret } };
  const source = objectSource(sample);
  for (const round of ['installs', 'reuses']) {
    const fn = await kit.LocalFunction.startFrom(source, options);
    try {
      expect([round, (await fn.get('/')).text()]).toEqual([round, 'Hello John']);
      expect([round, fn.logs.includes('installing the dependencies of package.json')]).toEqual([round, round === 'installs']);
    } finally {
      await fn.stop();
    }
  }
  fs.rmSync(secret, { recursive: true, force: true });
}, 5 * 60 * 1000);
