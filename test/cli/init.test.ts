/**
 * `kyma-serverless init`: the files of a new app. test/e2e/init.e2e.ts installs and synthesizes
 * one from the packed package, offline.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { FunctionFolder, FunctionNamespace, GitOpsApp, ServerlessRelease, ServerlessStack } from '../../src';
import { validateManifests } from '../../src/policy/manifests';
import { program } from '../../src/cli/index';
import { appPackageName, init } from '../../src/cli/init';
import { APP_DEPENDENCIES, APP_DEV_DEPENDENCIES } from '../../src/cli/init/_versions';

const ROOT = path.resolve(__dirname, '..', '..');
const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'init-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const read = (file: string) => fs.readFileSync(path.join(dir, 'my-app', file), 'utf8');

/** Runs the real command in-process; returns what it printed. */
async function command(...args: string[]): Promise<string> {
  let stdout = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  });
  try {
    await program().exitOverride().parseAsync(['node', 'kyma-serverless', ...args]);
  } finally {
    write.mockRestore();
  }
  return stdout;
}

describe('kyma-serverless init', () => {
  test('writes a cdk8s app: package.json with the pinned versions and the synth script, cdk8s.yaml without imports, a function folder per runtime family', () => {
    const result = init(path.join(dir, 'my-app'));
    expect(result.files).toEqual([
      'package.json', 'cdk8s.yaml', 'tsconfig.json', 'main.ts', '.gitignore', 'jest.config.js', 'README.md', 'test/hello-node.test.ts',
      'functions/hello-node/handler.js', 'functions/hello-node/package.json', 'functions/hello-node/function.yaml',
      'functions/hello-python/handler.py', 'functions/hello-python/requirements.txt', 'functions/hello-python/function.yaml',
    ]);
    const manifest = JSON.parse(read('package.json'));
    expect(manifest).toEqual({
      name: 'my-app', version: '0.1.0', private: true,
      scripts: { synth: 'kyma-serverless synth', test: 'jest' },
      dependencies: { 'cdk8s-kyma-serverless': `^${VERSION}`, ...APP_DEPENDENCIES },
      devDependencies: APP_DEV_DEPENDENCIES,
    });
    expect(parse(read('cdk8s.yaml'))).toEqual({ language: 'typescript', app: 'npx ts-node main.ts', output: 'dist' });
    expect(read('main.ts')).toContain("for (const folder of FunctionFolder.discover('functions')) folder.addTo(functions);");
    expect(read('.gitignore').split('\n').filter(l => /dist/.test(l) && !l.startsWith('#'))).toEqual(['/.dist.synth-*']);
    expect(/```sh\n([\s\S]*?)```/.exec(read('README.md'))?.[1]).toBe('npm install\nnpm run synth\nnpm test\nnpx kyma-serverless apply dist/ --wait\n');
    expect(read('functions/hello-node/handler.js')).toMatch(/^exports\.main = /m);
  });

  test('sets up jest as the testing kit\'s docs use it: jest and ts-jest, a jest config, an npm test script, a test of hello-node', () => {
    init(path.join(dir, 'my-app'));
    const manifest = JSON.parse(read('package.json'));
    expect(manifest.scripts.test).toBe('jest');
    expect(Object.keys(manifest.devDependencies)).toEqual(expect.arrayContaining(['jest', 'ts-jest', '@types/jest']));
    // The config is a CommonJS module jest loads as it is.
    const config = { exports: {} as any };
    new Function('module', read('jest.config.js'))(config);
    expect(config.exports).toEqual({
      testEnvironment: 'node', roots: ['<rootDir>/test'], testMatch: ['**/*.test.ts'], transform: { '^.+\\.ts$': 'ts-jest' }, testTimeout: 60000,
    });
    expect(read('test/hello-node.test.ts')).toContain("import { LocalFunction } from 'cdk8s-kyma-serverless/testing';");
    expect(read('test/hello-node.test.ts')).toContain("LocalFunction.startFolder('functions/hello-node')");
  });

  test('its .gitignore keeps dist/, the handlers and jest.config.js, and leaves out node_modules, compiled files and .env', () => {
    init(path.join(dir, 'my-app'));
    const app = path.join(dir, 'my-app');
    const git = (...args: string[]) => spawnSync('git', args, { cwd: app, encoding: 'utf8' });
    expect(git('init', '-q').status).toBe(0);
    const kept = ['dist/0000-serverless.k8s.yaml', 'functions/hello-node/handler.js', 'jest.config.js', 'main.ts', 'test/hello-node.test.ts', '.env.example'];
    // check-ignore exits 1 when no path is ignored.
    expect(git('check-ignore', ...kept)).toMatchObject({ status: 1, stdout: '' });
    const ignored = ['node_modules/cdk8s/package.json', 'main.js', 'main.d.ts', '.env', 'functions/hello-node/.env'];
    expect(git('check-ignore', ...ignored).stdout).toBe(`${ignored.join('\n')}\n`);
  });

  test('pins cdk8s, cdk8s-plus-27, constructs and the tools at the versions of the lock file, within the peer dependencies', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const locked = (name: string) => lock.packages[`node_modules/${name}`].version;
    expect(Object.keys(APP_DEPENDENCIES).sort()).toEqual(Object.keys(pkg.peerDependencies).sort());
    for (const [name, version] of Object.entries(APP_DEPENDENCIES)) expect(`${name}@${version}`).toBe(`${name}@${locked(name)}`);
    for (const [name, version] of Object.entries(APP_DEV_DEPENDENCIES)) expect(`${name}@${version}`).toBe(`${name}@${name === 'typescript' ? '~' : ''}${locked(name)}`);
    expect(pkg.devDependencies.typescript).toBe('~5.9');
  });

  test('--release 1.11.1: its function folders load, and the app main.ts describes synthesizes valid manifests with both Functions', () => {
    init(path.join(dir, 'my-app'), { release: '1.11.1' });
    const app = new GitOpsApp({ outdir: path.join(dir, 'dist') });
    const stack = new ServerlessStack(app, 'serverless');
    const functions = new FunctionNamespace(app, 'functions', { stack });
    for (const folder of FunctionFolder.discover(path.join(dir, 'my-app', 'functions'))) folder.addTo(functions);
    app.synth();
    expect(fs.readdirSync(path.join(dir, 'dist')).sort()).toEqual(['0000-serverless.k8s.yaml', '0001-functions.k8s.yaml', 'flux', 'kustomization.yaml']);
    const objects = fs.readFileSync(path.join(dir, 'dist', '0001-functions.k8s.yaml'), 'utf8').split(/^---$/m).map(d => parse(d));
    expect(objects.filter(o => o.kind === 'Function').map(o => `${o.metadata.namespace}/${o.metadata.name} ${o.spec.runtime}`))
      .toEqual(['functions/hello-node nodejs22', 'functions/hello-python python312']);
    expect(validateManifests(path.join(dir, 'dist')).findings).toEqual([]);
  });

  test('by default writes a main.ts whose stack deploys 1.13.0, and a nodejs24 example; --release 1.11.1 names no release, the construct\'s default', () => {
    const result = init(path.join(dir, 'my-app'));
    expect(result.release).toBe(ServerlessRelease.V1_13_0);
    expect(read('main.ts')).toContain("import { FunctionFolder, FunctionNamespace, GitOpsApp, ServerlessRelease, ServerlessStack } from 'cdk8s-kyma-serverless';");
    expect(read('main.ts')).toContain("const stack = new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });");
    expect(parse(read('functions/hello-node/function.yaml')).runtime).toBe('nodejs24');
    expect(parse(read('functions/hello-python/function.yaml')).runtime).toBe('python312');
    expect(read('README.md')).toContain('until they run (Serverless 1.13.0 builds nothing: dependencies install at each Pod start)');
    // How to choose 1.11.1, and why one would.
    expect(read('README.md')).toContain('## The release\n\nThe stack deploys Kyma Serverless 1.13.0, upstream\'s current release.');
    expect(read('README.md')).toContain('To deploy 1.11.1 instead, the last build-based release, remove `release: ServerlessRelease.V1_13_0` from `main.ts`');
    expect(read('README.md')).toContain('One would for\nPods that start without installing anything and need no way out to a package registry');
    fs.rmSync(path.join(dir, 'my-app'), { recursive: true });
    expect(init(path.join(dir, 'my-app'), { release: '1.11.1' }).release).toBe(ServerlessRelease.V1_11_1);
    expect(read('main.ts')).not.toContain('ServerlessRelease');
    expect(read('main.ts')).toContain("const stack = new ServerlessStack(app, 'serverless');\n");
    expect(parse(read('functions/hello-node/function.yaml')).runtime).toBe('nodejs22');
    expect(read('README.md')).toContain('Upstream\'s current release is 1.13.0 (buildless, with nodejs24)');
  });

  test('fails when --release names no release of this package, before writing anything', () => {
    expect(() => init(path.join(dir, 'my-app'), { release: '1.12.0' })).toThrow(/^--release \(1\.12\.0\) is no release this package deploys: use '1\.11\.1' or '1\.13\.0'/);
    expect(fs.existsSync(path.join(dir, 'my-app'))).toBe(false);
  });
  test('the function folders load, and the app main.ts describes synthesizes valid manifests without a runtime notice', () => {
    init(path.join(dir, 'my-app'));
    const app = new GitOpsApp({ outdir: path.join(dir, 'dist') });
    const stack = new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
    const functions = new FunctionNamespace(app, 'functions', { stack });
    for (const folder of FunctionFolder.discover(path.join(dir, 'my-app', 'functions'))) folder.addTo(functions);
    app.synth();
    const objects = fs.readFileSync(path.join(dir, 'dist', '0001-functions.k8s.yaml'), 'utf8').split(/^---$/m).map(d => parse(d));
    expect(objects.filter(o => o.kind === 'Function').map(o => `${o.metadata.name} ${o.spec.runtime}`)).toEqual(['hello-node nodejs24', 'hello-python python312']);
    const report = validateManifests(path.join(dir, 'dist'));
    expect(report.findings).toEqual([]);
    expect(report.releases.map(r => r.release)).toEqual([ServerlessRelease.V1_13_0]);
  });

  test('refuses a folder that is not empty, naming the files it would replace, unless --force', () => {
    const app = path.join(dir, 'my-app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'main.ts'), 'mine');
    fs.writeFileSync(path.join(app, 'notes.txt'), 'mine');
    expect(() => init(app)).toThrow(`${app} is not empty, and init would replace main.ts: give a new folder, or --force to replace them`);
    fs.rmSync(path.join(app, 'main.ts'));
    expect(() => init(app)).toThrow(`${app} is not empty (it holds notes.txt): give a new folder, or --force to write the app beside what is there`);
    fs.writeFileSync(path.join(app, 'main.ts'), 'mine');
    expect(init(app, { force: true }).replaced).toEqual(['main.ts']);
    expect(read('main.ts')).toContain('new GitOpsApp()');
    expect(read('notes.txt')).toBe('mine');
  });

  test('takes a folder that holds only .git', () => {
    fs.mkdirSync(path.join(dir, 'my-app', '.git'), { recursive: true });
    expect(init(path.join(dir, 'my-app')).replaced).toEqual([]);
  });

  test('--package names a tarball by its path from the app, and refuses one that does not exist', () => {
    const tarball = path.join(dir, 'cdk8s-kyma-serverless-9.9.9.tgz');
    fs.writeFileSync(tarball, '');
    init(path.join(dir, 'my-app'), { package: tarball });
    expect(JSON.parse(read('package.json')).dependencies['cdk8s-kyma-serverless']).toBe('file:../cdk8s-kyma-serverless-9.9.9.tgz');
    expect(() => init(path.join(dir, 'other'), { package: path.join(dir, 'missing.tgz') }))
      .toThrow(`--package ${path.join(dir, 'missing.tgz')}: no such file ${path.join(dir, 'missing.tgz')}: give the tarball npm pack wrote`);
    init(path.join(dir, 'ranged'), { package: '~9.9.0' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'ranged', 'package.json'), 'utf8')).dependencies['cdk8s-kyma-serverless']).toBe('~9.9.0');
  });

  test('names the app after its folder, as npm allows', () => {
    expect(appPackageName('/work/My App!')).toBe('my-app');
    expect(appPackageName('/work/_private')).toBe('private');
    expect(appPackageName('/')).toBe('cdk8s-app');
  });

  test('prints the files and the next commands, or with -o json and -o yaml the same data', async () => {
    const table = await command('init', path.join(dir, 'my-app'));
    expect(table).toContain(`Wrote a cdk8s app to ${path.join(dir, 'my-app')}/ (cdk8s-kyma-serverless ^${VERSION}, Kyma Serverless 1.13.0):\n  package.json\n`);
    expect(table).toContain(`\nNext:\n  cd ${path.join(dir, 'my-app')}\n  npm install\n  npm run synth\n  npm test\n  npx kyma-serverless apply dist/ --wait\n`);
    const json = JSON.parse(await command('init', path.join(dir, 'json'), '-o', 'json'));
    const yaml = parse(await command('init', path.join(dir, 'yaml'), '-o', 'yaml'));
    expect(json.files).toHaveLength(14);
    expect({ ...yaml, dir: undefined }).toEqual({ ...json, dir: undefined });
    expect(yaml.dir).toBe(path.join(dir, 'yaml'));
  });
});
