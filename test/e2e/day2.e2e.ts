/**
 * Day two, where users stand: the packed package in a new cdk8s app outside the repository (see
 * scratch-app.ts).
 * - `kyma-serverless synth` fails when the app shrinks the registry's volume, naming the prop and
 *   the way through, and keeps dist/; with the prop set it passes and the claim carries the Argo
 *   CD and Flux annotations;
 * - the installed `kyma-serverless apply`, `diff` and `apply --prune` against the fake API server
 *   (over HTTP, as against a cluster): a Function's new source is a new build, its new env var a
 *   rollout, a removed Function orphaned, and prune deletes exactly it;
 * - every TypeScript example of docs/changing-a-running-system.md type-checks with the app's
 *   tsconfig and synthesizes with `cdk8s synth`.
 *
 * Slow (packing, installing, ts-node starts): `npm run test:e2e`.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BUILT_IN_RESOURCES } from '../util/fake-cluster';
import { FakeKubeApi, writeKubeconfig } from '../util/fake-kube-api';
import { Run, ScratchApp, check, packPackage, run, withoutNpmWarnings } from './scratch-app';

const ROOT = path.resolve(__dirname, '..', '..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'changing-a-running-system.md'), 'utf8');

/** Every ```ts block of the doc, with the line of its fence. */
const EXAMPLES = [...DOC.matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
  .map((m, i) => ({ index: i + 1, line: DOC.slice(0, m.index).split('\n').length, code: m[1] }));

let tarball: string;
let app: ScratchApp;

beforeAll(() => {
  tarball = packPackage();
  app = ScratchApp.create(tarball);
}, 15 * 60 * 1000);

afterAll(() => {
  if (process.env.KEEP_E2E_APP) process.stdout.write(`kept the scratch app in ${app?.dir}\n`);
  else app?.remove();
  if (tarball) fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
});

/**
 * Runs an installed command without blocking this process, which serves the fake API server the
 * command talks to.
 */
function binAsync(name: string, args: readonly string[]): Promise<Run> {
  const command = path.join(app.dir, 'node_modules', '.bin', name);
  return new Promise(resolve => {
    const options = { cwd: app.dir, env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' }, maxBuffer: 64 * 1024 * 1024 };
    execFile(command, args, options, (error, stdout, stderr) => {
      resolve({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, command: [name, ...args].join(' ') });
    });
  });
}

/** A user's app: the stack with the given registry, a team namespace, and Functions. */
function main(registry: string, functions: string): string {
  return `import { Size } from 'cdk8s';
import { FunctionNamespace, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, Registry, ServerlessStack } from 'cdk8s-kyma-serverless';

const app = new GitOpsApp();
const stack = new ServerlessStack(app, 'serverless', { registry: ${registry} });
const team = new FunctionNamespace(app, 'team-a', { stack });
${functions}
app.synth();
void Size;
void Registry;
`;
}
const fn = (name: string, source: string, env = '{}') => `new KymaFunction(team, '${name}', {
  runtime: FunctionRuntime.NODEJS_22,
  source: FunctionSource.fromInline('exports.main = () => "${source}"'),
  env: ${env},
});`;

const objectsOf = (file: string) => parseAllDocuments(app.read(file)).map(d => d.toJS());

describe('kyma-serverless synth in a user\'s app whose registry shrinks', () => {
  test('fails naming the prop and the way through, keeps dist/, and passes with the opt-in, which writes the Argo CD and Flux annotations', () => {
    app.write('main.ts', main('Registry.internal()', fn('hello', 'hi')));
    const first = run('npm', ['run', '--silent', 'synth'], app.dir);
    expect(`${first.status}\n${withoutNpmWarnings(first.stderr)}`).toBe('0\n');
    const before = app.read('dist/0000-serverless.k8s.yaml');

    app.write('main.ts', main('Registry.internal({ storageSize: Size.gibibytes(5) })', fn('hello', 'hi')));
    const shrunk = run('npm', ['run', '--silent', 'synth'], app.dir);
    expect(shrunk.status).not.toBe(0);
    expect(shrunk.stderr).toContain('0000-serverless.k8s.yaml: PersistentVolumeClaim kyma-system/serverless-docker-registry: '
      + 'spec.resources.requests.storage 20Gi -> 5Gi: every cluster refuses this change');
    expect(shrunk.stderr).toContain('  - opt in to replacing it: Registry.internal({ replaceStorage: true }) (ServerlessStack prop registry) writes '
      + 'argocd.argoproj.io/sync-options: Replace=true,Force=true and kustomize.toolkit.fluxcd.io/force: enabled');
    expect(shrunk.stderr)
      .toContain('  - or delete it yourself before the sync: kubectl delete persistentvolumeclaim/serverless-docker-registry -n kyma-system');
    expect(shrunk.stderr).toContain('synth refused a change no cluster makes in place: dist/ was left unchanged');
    expect(app.read('dist/0000-serverless.k8s.yaml')).toBe(before);

    app.write('main.ts', main('Registry.internal({ storageSize: Size.gibibytes(5), replaceStorage: true })', fn('hello', 'hi')));
    const optedIn = run('npm', ['run', '--silent', 'synth'], app.dir);
    expect(`${optedIn.status}\n${withoutNpmWarnings(optedIn.stderr)}`)
      .toMatch(new RegExp('^0\nnote: 0000-serverless\\.k8s\\.yaml: PersistentVolumeClaim '
        + 'kyma-system/serverless-docker-registry: spec\\.resources\\.requests\\.storage changes in a way no cluster makes in place; '
        + 'it opted in to replacement'));
    const claim = objectsOf('dist/0000-serverless.k8s.yaml').find(o => o.kind === 'PersistentVolumeClaim');
    expect(claim.spec.resources.requests.storage).toBe('5Gi');
    expect(claim.metadata.annotations).toEqual({
      'argocd.argoproj.io/sync-options': 'Replace=true,Force=true',
      'argocd.argoproj.io/sync-wave': '-1',
      'kustomize.toolkit.fluxcd.io/force': 'enabled',
    });
  });
});

describe('the installed kyma-serverless diff and apply --prune, against an API server', () => {
  let api: FakeKubeApi;
  let kubeconfig: string;
  beforeAll(async () => {
    api = await FakeKubeApi.start({ resources: BUILT_IN_RESOURCES, namespaceLifecycle: true });
    kubeconfig = writeKubeconfig(api, path.join(app.dir, 'kubeconfig.yaml'));
  });
  afterAll(() => api.close());

  test('says a new source is a new build, a new env var a rollout, a removed Function orphaned; prune deletes exactly it', async () => {
    app.write('main.ts', main('Registry.internal()', [fn('hello', 'hi'), fn('greet', 'hey'), fn('bye', 'bye')].join('\n')));
    check(run('npm', ['run', '--silent', 'synth'], app.dir));
    const applied = await binAsync('kyma-serverless', ['--kubeconfig', kubeconfig, 'apply', 'dist', '--no-wait']);
    expect(`${applied.status}\n${applied.stderr}`).toBe('0\n');

    const functions = [fn('hello', 'hi there'), fn('greet', 'hey', '{ LOUD: EnvValue.fromValue(\'true\') }')].join('\n');
    app.write('main.ts', main('Registry.internal()', functions)
      .replace('import { Size } from \'cdk8s\';', 'import { Size } from \'cdk8s\';\nimport { EnvValue } from \'cdk8s-plus-27\';'));
    check(run('npm', ['run', '--silent', 'synth'], app.dir));
    const diff = await binAsync('kyma-serverless', ['--kubeconfig', kubeconfig, 'diff', 'dist', '--markdown', 'diff.md']);
    expect(diff.status).toBe(1);
    expect(diff.stdout).toMatch(/^new build {3}Function team-a\/hello: new build \(source changed\)/m);
    expect(diff.stdout).toMatch(/^rollout {5}Function team-a\/greet: rollout \(env changed\)/m);
    expect(diff.stdout).toMatch(/^orphaned {4}Function team-a\/bye: no longer in dist: apply --prune deletes it/m);
    expect(diff.stdout).toMatch(/^dist: 2 change, \d+ unchanged, 1 orphaned$/m);
    expect(app.read('diff.md')).toContain('| **orphaned** | `Function team-a/bye` |');
    expect(api.get('/apis/serverless.kyma-project.io/v1alpha2/namespaces/team-a/functions/hello')!.spec.source.inline.source).toContain('"hi"');

    const pruned = await binAsync('kyma-serverless', ['--kubeconfig', kubeconfig, '-o', 'json', 'apply', 'dist', '--no-wait', '--prune']);
    expect(`${pruned.status}`).toBe('0');
    expect(JSON.parse(pruned.stdout).pruned)
      .toEqual([{ apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', namespace: 'team-a', name: 'bye', outcome: 'pruned' }]);
    expect(api.get('/apis/serverless.kyma-project.io/v1alpha2/namespaces/team-a/functions/bye')).toBeUndefined();
    const after = await binAsync('kyma-serverless', ['--kubeconfig', kubeconfig, 'diff', 'dist']);
    expect(`${after.status} ${after.stdout.trimEnd().split('\n').pop()}`).toMatch(/^0 dist: \d+ unchanged$/);
  });
});

describe('the TypeScript examples of docs/changing-a-running-system.md, in a user\'s cdk8s app', () => {
  beforeAll(() => {
    for (const example of EXAMPLES) app.write(`day2-examples/example-${example.index}.ts`, example.code);
  });

  test('there are examples, and they type-check with the tsconfig.json of cdk8s init', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(2);
    const result = app.bin('tsc', ['--noEmit', '-p', 'tsconfig.json']);
    const located = result.stdout.replace(/day2-examples\/example-(\d+)\.ts\((\d+),/g,
      (_m, n, l) => `doc example ${n} (doc line ${EXAMPLES[Number(n) - 1].line + Number(l)},`);
    expect(located).toBe('');
  });

  const cases = EXAMPLES.map(e => [e.index, e.line, e] as const);
  test.each(cases)('example %d (doc line %d) synthesizes objects that opt in to replacement', (_index, _line, example) => {
    const output = `out/day2-${example.index}`;
    const synth = app.bin('cdk8s', ['synth', '--app', `npx ts-node day2-examples/example-${example.index}.ts`, '--output', output]);
    expect(`${synth.status}\n${withoutNpmWarnings(synth.stderr)}`).toBe('0\n');
    const objects = fs.readdirSync(path.join(app.dir, output)).filter(f => f.endsWith('.yaml')).flatMap(f => objectsOf(path.join(output, f)));
    const optedIn = objects.filter(o => o?.metadata?.annotations?.['kustomize.toolkit.fluxcd.io/force'] === 'enabled');
    expect(optedIn.map(o => [o.kind, o.metadata.annotations['argocd.argoproj.io/sync-options']]))
      .toEqual([[expect.stringMatching(/^(PersistentVolumeClaim|Deployment)$/), 'Replace=true,Force=true']]);
  });
});
