/**
 * The package where users stand: `npm pack` of this repository, installed into a new cdk8s
 * TypeScript app in a temporary folder outside the repository (see scratch-app.ts). There:
 * - the package loads with `require`, its types compile, and its `kyma-serverless` command runs;
 * - every TypeScript example of README.md and docs/*.md is type-checked with the app's tsconfig
 *   (as `cdk8s init` writes it) and synthesized with `cdk8s synth`, and the installed
 *   `kyma-serverless validate` accepts what it wrote (the examples of two documents are files of
 *   an app that their own suites run, see OWN_SUITES);
 * - `kyma-serverless synth` keeps the previous output when a Function is bad, naming the prop;
 * - the default stack synthesized there is byte for byte this repository's dist/ (webhook bundle included).
 *
 * Slow (a few minutes: packing, installing, a ts-node start per example), so it runs apart from
 * `npm test`: `npm run test:e2e`, which CI runs (.ci/run).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ScratchApp, check, packPackage, run, withoutNpmWarnings } from './scratch-app';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Documents whose TypeScript blocks are files of an app (a main.ts and its tests, or apps a
 * scenario changes), which the suite named runs as such; this suite leaves them to it.
 */
const OWN_SUITES: { readonly [doc: string]: string } = {
  'docs/develop-locally.md': 'devloop.e2e.ts',
  'docs/changing-a-running-system.md': 'day2.e2e.ts',
};

/**
 * The documents with examples: the README and every file of docs/ (not docs/api/, which TypeDoc
 * generates from the TSDoc), in order.
 */
const DOCUMENTS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter(f => f.endsWith('.md')).sort().map(f => `docs/${f}`)];

/** A TypeScript example of the docs. */
interface Example {
  /** Its document, such as `docs/functions.md`. */
  readonly file: string;
  /** The line of its opening fence. */
  readonly line: number;
  /** The scratch app's file it is written to, such as `examples/functions-03.ts`. */
  readonly appFile: string;
  /** Its code, unindented. */
  readonly code: string;
}

/** Every ```ts block of a document. */
function examplesOf(file: string): Example[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const slug = path.basename(file, '.md').toLowerCase();
  const fence = /^( *)```ts\n([\s\S]*?)^\1```$/gm;
  return [...text.matchAll(fence)].map((match, i) => {
    const indent = match[1].length;
    const code = match[2].split('\n').map(l => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n');
    return { file, line: text.slice(0, match.index).split('\n').length, appFile: `examples/${slug}-${String(i + 1).padStart(2, '0')}.ts`, code };
  });
}

const EXAMPLES = DOCUMENTS.filter(d => !OWN_SUITES[d]).flatMap(examplesOf);

let tarball: string;
let app: ScratchApp;

beforeAll(() => {
  tarball = packPackage();
  app = ScratchApp.create(tarball);
  // What the examples read at synth: a function folder.
  app.write('functions/orders/handler.py', 'def main(event, context):\n    return "orders"\n');
  app.write('functions/orders/requirements.txt', 'requests==2.32.3\n');
  for (const example of EXAMPLES) app.write(example.appFile, example.code);
}, 15 * 60 * 1000);

afterAll(() => {
  // KEEP_E2E_APP=1 keeps the app for a look after a failure.
  if (process.env.KEEP_E2E_APP) process.stdout.write(`kept the scratch app in ${app?.dir}\n`);
  else app?.remove();
  if (tarball) fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
});

describe('the packed package', () => {
  test('holds the compiled library, its types, the webhook bundle and the command, and no sources or tests', () => {
    const files = check(run('tar', ['-tzf', tarball], ROOT)).stdout.split('\n').filter(Boolean).map(f => f.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining([
      'package.json', 'README.md', 'bin/kyma-serverless.js', 'lib/src/index.js', 'lib/src/index.d.ts',
      'lib/imports/serverless.kyma-project.io.js', 'lib/webhook/server.js.br', 'crds/serverless.kyma-project.io_functions.yaml',
      'api/package.json', 'testing/package.json', 'lib/src/api/index.d.ts',
    ]));
    expect(files.filter(f => /^(src|test|scripts|bench|dist|functions)\//.test(f) || /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
  });

  test('loads each entry with require, each exporting its part of the public API, and closes other paths', () => {
    const entries: { readonly [entry: string]: string[] } = {
      'cdk8s-kyma-serverless': ['ServerlessStack', 'FunctionNamespace', 'KymaFunction', 'FunctionRuntime', 'FunctionSource', 'GitOpsApp'],
      'cdk8s-kyma-serverless/api': ['validateFunction', 'functionSchema', 'SchemaValidator', 'releaseFacts'],
      'cdk8s-kyma-serverless/testing': ['LocalFunction'],
    };
    for (const [entry, names] of Object.entries(entries)) {
      const result = check(run(process.execPath, ['-e', `const m = require('${entry}'); console.log(JSON.stringify(${JSON.stringify(names)}.map(n => [n, typeof m[n]])))`], app.dir));
      expect(`${entry}: ${result.stdout.trim()}`).toBe(`${entry}: ${JSON.stringify(names.map(n => [n, 'function']))}`);
    }
    // The Function API is not in the main entry: its internals can change without breaking apps.
    const main = check(run(process.execPath, ['-e', "console.log(typeof require('cdk8s-kyma-serverless').validateFunction)"], app.dir));
    expect(main.stdout.trim()).toBe('undefined');
    const deep = run(process.execPath, ['-e', "require('cdk8s-kyma-serverless/lib/src/api')"], app.dir);
    expect(`${deep.status} ${deep.stderr}`).toMatch(/^1 [\s\S]*ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  test('synthesizes an app of plain Functions without loading the modules of endpoints, Subscriptions and KEDA, nor the whole Function API', () => {
    const script = [
      "const { FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } = require('cdk8s-kyma-serverless');",
      "const app = new GitOpsApp({ outdir: 'plain-functions' });",
      "const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });",
      "new KymaFunction(team, 'node', { runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1;\\n'),",
      '  resources: FunctionResources.preset(FunctionProfile.S) });',
      "new KymaFunction(team, 'python', { runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline('def main(event, context):\\n    return 1\\n') });",
      'app.synth();',
      "const lib = require('node:path').join(require.resolve('cdk8s-kyma-serverless'), '..');",
      "console.log(JSON.stringify(Object.keys(require.cache).filter(f => f.startsWith(lib)).map(f => f.slice(lib.length + 1))));",
    ].join('\n');
    const loaded = JSON.parse(check(run(process.execPath, ['-e', script], app.dir)).stdout) as string[];
    fs.rmSync(path.join(app.dir, 'plain-functions'), { recursive: true, force: true });
    expect(loaded).toEqual(expect.arrayContaining(['function/kyma-function.js', 'api/function-rules.js', 'api/handler-code.js']));
    expect(loaded.filter(f => /^api\/(index|apirule-rules|subscription-rules|function-changes)\.js$/.test(f)
      || /^function\/(endpoint|subscription|keda)\.js$/.test(f))).toEqual([]);
  });

  test('runs its kyma-serverless command from the installed package', () => {
    const result = check(app.bin('kyma-serverless', ['--help']));
    expect(result.stdout).toMatch(/Usage: kyma-serverless/);
    for (const command of ['synth', 'validate', 'preflight', 'status', 'webhook']) expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });
});

describe('the examples of the README and docs/, in a user\'s cdk8s app', () => {
  test('there are examples, and each is a whole program that synthesizes', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(10);
    for (const example of EXAMPLES) {
      const where = `${example.file}:${example.line}`;
      expect(`${where}: ${/\bapp\.synth\(\)|\.synth\(\)/.test(example.code)}`).toBe(`${where}: true`);
    }
  });

  test('the documents left to other suites are tested there', () => {
    for (const [doc, suite] of Object.entries(OWN_SUITES)) {
      expect(`${suite}: ${fs.readFileSync(path.join(__dirname, suite), 'utf8').includes(`'${path.basename(doc)}'`)}`).toBe(`${suite}: true`);
    }
  });

  test('type-check with the tsconfig.json of cdk8s init', () => {
    const result = app.bin('tsc', ['--noEmit', '-p', 'tsconfig.json']);
    // Name the document and line of each error.
    const byFile = new Map(EXAMPLES.map(e => [e.appFile, e]));
    const located = result.stdout.replace(/(examples\/[\w-]+\.ts)\((\d+),(\d+)\)/g, (found, file, l, c) => {
      const example = byFile.get(file);
      return example ? `${example.file}:${example.line + Number(l)}:${c} (${file})` : found;
    });
    expect(located).toBe('');
    expect(result.status).toBe(0);
  });

  test.each(EXAMPLES.map(e => [e.file, e.line, e] as const))('%s line %d synthesizes with cdk8s synth and passes kyma-serverless validate', (_file, _line, example) => {
    const output = `out/${path.basename(example.appFile, '.ts')}`;
    fs.rmSync(path.join(app.dir, 'bootstrap'), { recursive: true, force: true });
    const synth = app.bin('cdk8s', ['synth', '--app', `npx ts-node ${example.appFile}`, '--output', output]);
    expect(`${synth.status}\n${withoutNpmWarnings(synth.stderr)}`).toBe('0\n');
    const folders = [output, ...(fs.existsSync(path.join(app.dir, 'bootstrap')) ? ['bootstrap'] : [])];
    for (const folder of folders) {
      const validate = app.bin('kyma-serverless', ['validate', folder]);
      expect(`${validate.status}\n${validate.stdout}${validate.stderr}`).toMatch(/^0\n.*: \d+ objects? in \d+ files?, 0 errors/);
    }
  });
});

describe('kyma-serverless synth in a user\'s app', () => {
  const good = `import { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack } from 'cdk8s-kyma-serverless';

const app = new GitOpsApp();
const stack = new ServerlessStack(app, 'serverless');
const team = new FunctionNamespace(app, 'team-a', { stack });
new KymaFunction(team, 'hello', {
  runtime: FunctionRuntime.NODEJS_22,
  source: FunctionSource.fromInline('exports.main = () => "hi"'),
  scale: { minReplicas: MIN, maxReplicas: 3 },
});
app.synth();
`;

  test('writes dist/ when the app is good, and keeps it when a Function is bad, naming the prop', () => {
    app.write('main.ts', good.replace('MIN', '1'));
    const first = run('npm', ['run', '--silent', 'synth'], app.dir);
    expect(`${first.status}\n${withoutNpmWarnings(first.stderr)}`).toBe('0\n');
    expect(first.stdout).toMatch(/^dist\/: 0000-serverless\.k8s\.yaml, 0001-team-a\.k8s\.yaml, flux\/functions\/kustomization\.yaml, flux\/reach\/kustomization\.yaml, flux\/stack\/kustomization\.yaml, kustomization\.yaml$/m);
    const before = fs.readFileSync(path.join(app.dir, 'dist', '0001-team-a.k8s.yaml'), 'utf8');

    app.write('main.ts', good.replace('MIN', '5'));
    const second = run('npm', ['run', '--silent', 'synth'], app.dir);
    expect(second.status).not.toBe(0);
    expect(second.stderr).toMatch(/\[team-a\/hello\] 'scale' \(spec\.scaleConfig\): .*minReplicas should be less than or equal maxReplicas/);
    expect(second.stderr).toContain('synth failed: dist/ was left unchanged');
    expect(fs.readFileSync(path.join(app.dir, 'dist', '0001-team-a.k8s.yaml'), 'utf8')).toBe(before);
    expect(fs.readdirSync(app.dir).filter(f => f.includes('.synth-'))).toEqual([]);
  });

  test('synthesizes this repository\'s dist/ byte for byte from the public API, the webhook program included', () => {
    // This repository's default environment (src/main.ts), written against the installed package.
    fs.cpSync(path.join(ROOT, 'functions'), path.join(app.dir, 'repository-functions'), { recursive: true });
    app.write('main.ts', `import { Exposure, FunctionFolder, FunctionNamespace, GitOpsApp, ServerlessStack } from 'cdk8s-kyma-serverless';

const app = new GitOpsApp();
const stack = new ServerlessStack(app, 'serverless', { exposure: { via: Exposure.apiRule({ gateway: 'kyma-system/kyma-gateway' }), domain: 'local.kyma.dev' } });
const namespace = new FunctionNamespace(app, 'default-functions', { stack });
for (const folder of FunctionFolder.discover('repository-functions')) folder.addTo(namespace);
app.synth();
`);
    check(app.bin('kyma-serverless', ['synth', '--outdir', 'default']));
    for (const file of ['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml', 'kustomization.yaml']) {
      expect(`${file}: ${app.read(`default/${file}`) === fs.readFileSync(path.join(ROOT, 'dist', file), 'utf8')}`).toBe(`${file}: true`);
    }
  });
});
