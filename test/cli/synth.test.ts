/**
 * `kyma-serverless synth` compares its new output with the output folder as it is, which clusters
 * hold, and fails on a change every cluster refuses to make in place. The app here is a small
 * Node.js program that writes given manifests, so that only the command's own work is measured
 * (test/e2e/day2.e2e.ts runs a user's cdk8s app).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { synth } from '../../src/cli/synth';

/** The app: writes the manifests of `APP_MANIFESTS` (JSON: file to objects) into CDK8S_OUTDIR, as cdk8s synth would. */
const APP = `const fs = require('fs'), path = require('path'), yaml = require('yaml');
const out = process.env.CDK8S_OUTDIR;
for (const [file, objects] of Object.entries(JSON.parse(process.env.APP_MANIFESTS))) {
  fs.mkdirSync(path.dirname(path.join(out, file)), { recursive: true });
  fs.writeFileSync(path.join(out, file), objects.map(o => yaml.stringify(o)).join('---\\n'));
}`;

const claim = (storage: string, annotations?: object) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: { name: 'serverless-docker-registry', namespace: 'kyma-system', ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
});
const OPT_IN = { 'argocd.argoproj.io/sync-options': 'Replace=true,Force=true', 'kustomize.toolkit.fluxcd.io/force': 'enabled' };

let project: string;
beforeEach(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-'));
  fs.writeFileSync(path.join(project, 'app.js'), APP);
  fs.symlinkSync(path.join(__dirname, '..', '..', 'node_modules'), path.join(project, 'node_modules'), 'dir');
});
afterEach(() => {
  delete process.env.APP_MANIFESTS;
  fs.rmSync(project, { recursive: true, force: true });
});

/** Runs synth with the app writing these manifests. */
function synthOf(files: { [file: string]: object[] }) {
  process.env.APP_MANIFESTS = JSON.stringify(files);
  return synth({ cwd: project, app: `${JSON.stringify(process.execPath)} app.js` });
}
const read = (file: string) => fs.readFileSync(path.join(project, 'dist', file), 'utf8');

describe('kyma-serverless synth against the previous output', () => {
  test('fails when the registry\'s volume shrinks, naming the object, both sizes, the prop that opts in and the way through, and keeps dist/', () => {
    synthOf({ 'a.k8s.yaml': [claim('20Gi')] });
    let error: Error | undefined;
    try {
      synthOf({ 'a.k8s.yaml': [claim('5Gi')] });
    } catch (e) {
      error = e as Error;
    }
    expect(error).toMatchObject({ name: 'CliError' });
    expect(error!.message.split('\n')).toEqual([
      'a.k8s.yaml: PersistentVolumeClaim kyma-system/serverless-docker-registry: spec.resources.requests.storage 20Gi -> 5Gi: '
        + 'every cluster refuses this change (spec.resources.requests.storage: Forbidden: field can not be less than previous value), '
        + 'so a sync would fail at this object.',
      '  - opt in to replacing it: Registry.internal({ replaceStorage: true }) (ServerlessStack prop registry) writes '
        + 'argocd.argoproj.io/sync-options: Replace=true,Force=true and kustomize.toolkit.fluxcd.io/force: enabled, '
        + 'so that Argo CD, Flux and kyma-serverless apply delete it and create it again',
      '  - or delete it yourself before the sync: kubectl delete persistentvolumeclaim/serverless-docker-registry -n kyma-system, '
        + 'then sync (or kyma-serverless apply)',
      '  - or keep the field as it is in the cluster',
      expect.stringMatching(/^ {2}Replacing it costs: its volume and every byte on it are deleted, .*; the registry's images are deleted with it: /),
      '',
      'synth refused a change no cluster makes in place: dist/ was left unchanged',
    ]);
    expect(read('a.k8s.yaml')).toBe(stringify(claim('20Gi')));
    expect(fs.readdirSync(project).filter(f => f.includes('.synth-'))).toEqual([]);
  });

  test('passes when the object opted in to replacement, and says what the next sync does', () => {
    synthOf({ 'a.k8s.yaml': [claim('20Gi')] });
    const result = synthOf({ 'a.k8s.yaml': [claim('5Gi', OPT_IN)] });
    expect(result.replaced)
      .toEqual([expect.objectContaining({ object: 'PersistentVolumeClaim kyma-system/serverless-docker-registry', rule: 'pvc-storage-decrease' })]);
    expect(read('a.k8s.yaml')).toBe(stringify(claim('5Gi', OPT_IN)));
  });

  test('lets the volume grow, and compares each environment\'s folder only with its own', () => {
    synthOf({ 'a.k8s.yaml': [claim('20Gi')], 'dev/a.k8s.yaml': [claim('5Gi')] });
    expect(synthOf({ 'a.k8s.yaml': [claim('30Gi')], 'dev/a.k8s.yaml': [claim('5Gi')] }).replaced).toEqual([]);
    // A first synth has nothing to compare with.
    fs.rmSync(path.join(project, 'dist'), { recursive: true });
    expect(synthOf({ 'a.k8s.yaml': [claim('1Gi')] }).files).toEqual(['a.k8s.yaml']);
  });
});

describe('kyma-serverless synth into a new folder', () => {
  test('makes the output folder\'s parents, and leaves nothing of its own beside the output', () => {
    process.env.APP_MANIFESTS = JSON.stringify({ 'a.k8s.yaml': [claim('1Gi')] });
    const result = synth({ cwd: project, app: `${JSON.stringify(process.execPath)} app.js`, output: 'build/new/dist' });
    expect(result.files).toEqual(['a.k8s.yaml']);
    expect(fs.readFileSync(path.join(project, 'build', 'new', 'dist', 'a.k8s.yaml'), 'utf8')).toBe(stringify(claim('1Gi')));
    expect(fs.readdirSync(path.join(project, 'build', 'new'))).toEqual(['dist']);
  });
});

describe('kyma-serverless synth and the end of a runtime\'s support', () => {
  const fn = (runtime: string) => ({
    apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'hello', namespace: 'team-a' },
    spec: { runtime, source: { inline: { source: runtime.startsWith('python') ? 'def main(event, context):\n    return "hi"\n' : 'exports.main = () => "hi"' } } },
  });

  test('writes the output with a notice on standard error for a Function on nodejs20; --fail-on-runtime-end fails and keeps the output', () => {
    let stderr = '';
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += chunk.toString();
      return true;
    });
    try {
      expect(synthOf({ 'a.k8s.yaml': [fn('python312')] }).files).toEqual(['a.k8s.yaml']);
      expect(stderr).toBe('');
      expect(synthOf({ 'a.k8s.yaml': [fn('nodejs20')] }).files).toEqual(['a.k8s.yaml']);
    } finally {
      write.mockRestore();
    }
    expect(stderr).toBe('warning: a.k8s.yaml: Function team-a/hello (spec.runtime): nodejs20 reached the end of its support in April 2026 '
      + '(upstream\'s runtime deprecation schedule, https://github.com/kyma-project/serverless/blob/1.13.0/docs/user/00-90-runtime-deprecation-schedule.md); '
      + 'release 1.11.1 still runs it; move to release 1.13.0 and nodejs24 [runtimeEnd]\n');
    const before = read('a.k8s.yaml');
    process.env.APP_MANIFESTS = JSON.stringify({ 'a.k8s.yaml': [fn('nodejs20'), claim('1Gi')] });
    expect(() => synth({ cwd: project, app: `${JSON.stringify(process.execPath)} app.js`, failOnRuntimeEnd: true }))
      .toThrow(/error +a\.k8s\.yaml +Function team-a\/hello +spec\.runtime +nodejs20 reached the end of its support in April 2026[\s\S]*dist\/ was left unchanged/);
    expect(read('a.k8s.yaml')).toBe(before);
  });
});

describe('kyma-serverless synth when the app throws', () => {
  /** Runs the command in the project, with an app that runs this JavaScript. */
  function synthCommand(code: string, ...args: string[]) {
    fs.writeFileSync(path.join(project, 'failing.js'), code);
    const bin = path.join(__dirname, '..', '..', 'bin', 'kyma-serverless.js');
    const result = spawnSync(process.execPath, [bin, 'synth', '--app', `${JSON.stringify(process.execPath)} failing.js`, ...args],
      { cwd: project, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    return { status: result.status, stderr: result.stderr };
  }
  const VALIDATION = `const { App, Chart } = require('cdk8s');
const app = new App();
new Chart(app, 'team-a').node.addValidation({ validate: () => ["'scale' (spec.scaleConfig): minReplicas should be less than or equal maxReplicas"] });
app.synth();`;

  test('prints the message of an error the app does not catch, without the source line and the stack', () => {
    const { status, stderr } = synthCommand(VALIDATION);
    expect(status).toBe(1);
    expect(stderr).toBe([
      'Validation failed with the following errors:',
      "  [team-a] 'scale' (spec.scaleConfig): minReplicas should be less than or equal maxReplicas",
      'kyma-serverless: synth failed: dist/ was left unchanged',
      '',
    ].join('\n'));
    expect(fs.readdirSync(project).filter(f => f.includes('.synth-'))).toEqual([]);
  });

  test('names an error that is no plain Error, and says that --verbose shows where it was thrown', () => {
    const { stderr } = synthCommand('const settings = undefined;\nsettings.replicas;');
    expect(stderr).toBe('TypeError: Cannot read properties of undefined (reading \'replicas\')\n'
      + '(kyma-serverless synth --verbose shows where it was thrown)\nkyma-serverless: synth failed: dist/ was left unchanged\n');
  });

  test('with --verbose, prints the error as Node.js does, with the stack', () => {
    const { status, stderr } = synthCommand(VALIDATION, '--verbose');
    expect(status).toBe(1);
    expect(stderr).toMatch(/^Error: Validation failed with the following errors:\n {2}\[team-a\] 'scale'/m);
    expect(stderr).toMatch(/^ {4}at .*failing\.js:4/m);
  });
});
