/**
 * A platform engineer's first hour, from the packed package: `kyma-serverless init` through
 * `npx --package <tarball>` into a new folder outside the repository, then the commands of the
 * README it writes: `npm install` (npm packages only, from npm's cache when it has them:
 * `--prefer-offline`; nothing runs `cdk8s import`), `npm run synth`, and `npm test`, the jest test
 * of the testing kit that `init` writes, with the jest and ts-jest it installs. Then a failed synth
 * there shows messages, not stack frames, and the mistakes of a first hour are told in the terms
 * of the files a user has.
 *
 * Slow (packing and installing), so it runs apart from `npm test`: `npm run test:e2e`.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { Run, check, packPackage, run, withoutNpmWarnings } from './scratch-app';

const ROOT = path.resolve(__dirname, '..', '..');
const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

let tarball: string;
let work: string;
let app: string;

/** Runs a command of the app's node_modules/.bin in the app. */
const bin = (name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Run => run(path.join(app, 'node_modules', '.bin', name), args, app, env);
const read = (file: string) => fs.readFileSync(path.join(app, file), 'utf8');

beforeAll(() => {
  tarball = packPackage();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-init-'));
  app = path.join(work, 'my-app');
}, 15 * 60 * 1000);

afterAll(() => {
  // KEEP_E2E_APP=1 keeps the app for a look after a failure.
  if (process.env.KEEP_E2E_APP) process.stdout.write(`kept the app in ${app}\n`);
  else if (work) fs.rmSync(work, { recursive: true, force: true });
  if (tarball) fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
});

describe('kyma-serverless init, from the packed package', () => {
  test('writes an app that takes the package from the tarball it ran from, and says what to run next', () => {
    const init = check(run('npx', ['--yes', '--prefer-offline', '--package', tarball, 'kyma-serverless', 'init', 'my-app'], work));
    expect(init.stdout).toContain(`Wrote a cdk8s app to my-app/ (cdk8s-kyma-serverless file:${path.relative(app, tarball)}, Kyma Serverless 1.13.0):\n`);
    expect(init.stdout).toContain('\nNext:\n  cd my-app\n  npm install\n  npm run synth\n  npm test\n  npx kyma-serverless apply dist/ --wait\n');
    expect(JSON.parse(read('package.json')).dependencies['cdk8s-kyma-serverless']).toBe(`file:${path.relative(app, tarball)}`);
    expect(parse(read('cdk8s.yaml'))).toEqual({ language: 'typescript', app: 'npx ts-node main.ts', output: 'dist' });
  });

  test('npm install and npm run synth succeed, offline but for npm packages, and write the stack and both Functions, with no runtime notice', () => {
    check(run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app));
    const synth = run('npm', ['run', '--silent', 'synth'], app);
    expect(`${synth.status}\n${withoutNpmWarnings(synth.stderr)}`).toBe('0\n');
    expect(synth.stdout).toBe('dist/: 0000-serverless.k8s.yaml, 0001-functions.k8s.yaml, flux/functions/kustomization.yaml, flux/reach/kustomization.yaml, flux/stack/kustomization.yaml, kustomization.yaml\n');
    // Nothing imported: no cdk8s import, no generated imports/ folder.
    expect(fs.existsSync(path.join(app, 'imports'))).toBe(false);
    const stack = read('dist/0000-serverless.k8s.yaml');
    expect(stack).toMatch(/^kind: CustomResourceDefinition$/m);
    expect(stack).toMatch(/^kind: Deployment$/m);
    const functions = read('dist/0001-functions.k8s.yaml').split(/^---$/m).map(d => parse(d)).filter(o => o?.kind === 'Function');
    expect(functions.map(f => `${f.metadata.namespace}/${f.metadata.name} ${f.spec.runtime}`)).toEqual(['functions/hello-node nodejs24', 'functions/hello-python python312']);
    const validate = bin('kyma-serverless', ['validate', 'dist']);
    expect(`${validate.status}\n${validate.stdout}`).toMatch(/^0\ndist: \d+ objects in 2 files, 0 errors, 0 warnings/);
  });

  test('npm test runs the test init wrote: jest and ts-jest as installed, the testing kit starting hello-node on this machine', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-cache-'));
    try {
      const test = run('npm', ['test', '--silent'], app, { KYMA_SERVERLESS_CACHE: cache, CI: 'true' });
      // jest reports on standard error.
      expect(`${test.status}\n${test.stderr}`).toMatch(/^0\n[\s\S]*PASS test\/hello-node\.test\.ts[\s\S]*Tests: {7}2 passed, 2 total/);
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });

  test('keeps dist/, the handlers and jest.config.js in Git, and leaves node_modules, compiled files and .env out', () => {
    check(run('git', ['init', '-q'], app));
    // check-ignore exits 1 when no path is ignored.
    expect(run('git', ['check-ignore', 'dist/0000-serverless.k8s.yaml', 'functions/hello-node/handler.js', 'main.ts', 'jest.config.js',
      'test/hello-node.test.ts'], app).status).toBe(1);
    expect(check(run('git', ['check-ignore', 'node_modules/cdk8s/package.json', 'main.js', '.env'], app)).stdout)
      .toBe('node_modules/cdk8s/package.json\nmain.js\n.env\n');
  });

  test('a function folder with an upper-case name fails the synth, saying to rename the folder', () => {
    fs.cpSync(path.join(app, 'functions/hello-node'), path.join(app, 'functions/Hello-Node'), { recursive: true });
    try {
      const failed = run('npm', ['run', '--silent', 'synth'], app);
      expect(failed.status).not.toBe(0);
      expect(withoutNpmWarnings(failed.stderr)).toMatch(/^Invalid function folders:\n {2}functions\/Hello-Node: the folder's name \("Hello-Node"\) is the Function's name, .*: rename the folder, such as to hello-node\n/);
    } finally {
      fs.rmSync(path.join(app, 'functions/Hello-Node'), { recursive: true, force: true });
    }
  });

  test('validate of the function folders says to synthesize them first', () => {
    const validate = bin('kyma-serverless', ['validate', 'functions']);
    expect(validate.status).toBe(1);
    expect(validate.stderr).toMatch(/^kyma-serverless: functions holds function folders \(hello-node, hello-python\), not manifests: .*then kyma-serverless validate dist\n$/);
  });

  test('run of a folder finds the namespace main.ts puts it in, from dist/', async () => {
    const child = spawn(path.join(app, 'node_modules', '.bin', 'kyma-serverless'), ['run', 'functions/hello-node', '--port', '0'],
      { cwd: app, env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => output += c.toString());
    child.stderr.on('data', (c: Buffer) => output += c.toString());
    const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        // The runtime's log line goes to stderr and the command's closing line to stdout: two pipes, no order between
        // them, so wait for both.
        const check = () => (/\) answers at http/.test(output) && /Ctrl-C stops it/.test(output) ? resolve() : undefined);
        child.stdout.on('data', check);
        child.stderr.on('data', check);
        void exited.then(code => reject(new Error(`run exited ${code}:\n${output}`)));
      });
      expect(output).toContain('kyma-serverless: namespace functions: the app\'s dist/ has Function functions/hello-node (-n overrides)\n');
      expect(output).toMatch(/hello-node \(nodejs24, namespace functions, Serverless 1\.13\.0\) answers at/);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });

  test('a failed synth shows the messages, without stack frames, and keeps dist/; --verbose shows the stack', () => {
    const before = read('dist/0001-functions.k8s.yaml');
    const settings = read('functions/hello-node/function.yaml');
    fs.writeFileSync(path.join(app, 'functions/hello-node/function.yaml'), `${settings}scale: { minReplicas: 3, maxReplicas: 1 }\n`);
    try {
      const failed = run('npm', ['run', '--silent', 'synth'], app);
      expect(failed.status).not.toBe(0);
      expect(withoutNpmWarnings(failed.stderr).split('\n')).toEqual([
        'Validation failed with the following errors:',
        // Under 1.13.0 synth writes the HorizontalPodAutoscaler itself, and checks its bounds.
        expect.stringMatching(/^ {2}\[functions\/hello-node\] functions\/hello-node\/function\.yaml: 'scale\.maxReplicas' \(1\) must be a whole number of at least 'scale\.minReplicas' \(3\): swap the bounds or raise maxReplicas$/),
        'kyma-serverless: synth failed: dist/ was left unchanged',
      ]);
      expect(read('dist/0001-functions.k8s.yaml')).toBe(before);
      const verbose = bin('kyma-serverless', ['synth', '--verbose']);
      expect(verbose.status).not.toBe(0);
      expect(verbose.stderr).toMatch(/^ {4}at .*main\.ts:\d+/m);
    } finally {
      fs.writeFileSync(path.join(app, 'functions/hello-node/function.yaml'), settings);
    }
  });

  test('a misspelt function.yaml fails the synth, naming the file and the name to give it', () => {
    fs.renameSync(path.join(app, 'functions/hello-python/function.yaml'), path.join(app, 'functions/hello-python/function.yml'));
    try {
      const failed = run('npm', ['run', '--silent', 'synth'], app);
      expect(failed.status).not.toBe(0);
      expect(withoutNpmWarnings(failed.stderr)).toBe([
        'Invalid function folders:',
        '  functions/hello-python/function.yml: not read: the settings of a function folder are read from function.yaml only (YAML): rename it to function.yaml',
        'kyma-serverless: synth failed: dist/ was left unchanged',
      ].join('\n'));
    } finally {
      fs.renameSync(path.join(app, 'functions/hello-python/function.yml'), path.join(app, 'functions/hello-python/function.yaml'));
    }
  });

  test('mistakes in handlers and dependency files fail the synth with the file, the line and the fix, and keep dist/', () => {
    const before = fs.readdirSync(path.join(app, 'dist'), { recursive: true }).map(String).sort();
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
      fs.writeFileSync(path.join(app, file), text);
    };
    write('functions/colon/handler.py', 'def main(event, context)\n    return "hi"\n');
    write('functions/misnamed/handler.py', 'import yaml\n\ndef main(event, context):\n    return yaml.safe_dump({})\n');
    write('functions/misnamed/requirement.txt', 'PyYAML\n');
    write('functions/undeclared/handler.js', 'const _ = require("lodash");\nexports.main = () => _.kebabCase("a b");\n');
    try {
      const failed = run('npm', ['run', '--silent', 'synth'], app);
      expect(failed.status).not.toBe(0);
      const stderr = withoutNpmWarnings(failed.stderr);
      expect(stderr).toContain("functions/colon/handler.py:1: SyntaxError: expected ':': end line 1 with ':'");
      expect(stderr).toContain('functions/misnamed/requirement.txt: not read: the runtime reads requirements.txt; did you mean requirements.txt? rename it to requirements.txt');
      expect(stderr).toContain("functions/undeclared/handler.js:1: 'lodash' is imported but not declared in package.json");
      expect(stderr).toContain('kyma-serverless: synth failed: dist/ was left unchanged');
      expect(fs.readdirSync(path.join(app, 'dist'), { recursive: true }).map(String).sort()).toEqual(before);
      // lodash is in the app's node_modules (cdk8s-plus-27 needs it), and not in the Pod: a local call fails as the Pod does.
      expect(fs.existsSync(path.join(app, 'node_modules', 'lodash'))).toBe(true);
      const invoked = bin('kyma-serverless', ['invoke', 'functions/undeclared']);
      expect(invoked.status).not.toBe(0);
      expect(invoked.stderr).toContain("handler.js requires 'lodash', which is not installed");
    } finally {
      for (const folder of ['colon', 'misnamed', 'undeclared']) fs.rmSync(path.join(app, 'functions', folder), { recursive: true, force: true });
    }
  });

  test('the last command of the README says what is missing without a cluster, and the command has --version', () => {
    // A home without a kubeconfig, whatever this machine has: nothing is applied anywhere.
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-home-'));
    try {
      const apply = bin('kyma-serverless', ['apply', 'dist/', '--wait'], { HOME: home, KUBECONFIG: '' });
      expect(apply.status).toBe(1);
      expect(apply.stderr).toMatch(/^kyma-serverless: No kubeconfig found: .*--kubeconfig <file> or KUBECONFIG=<file>, or write ~\/\.kube\/config/);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
    expect(check(bin('kyma-serverless', ['--version'])).stdout).toBe(`${VERSION}\n`);
  });
});
