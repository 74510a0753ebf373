import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatViolations } from '../src/api';
import { parseAllDocuments } from 'yaml';
import { loadYamlDocuments } from './util/fixtures';
import { expectValidKubernetesObjects } from './util/kubernetes-schema';
import { readTree } from './util/project-copy';
import { upstreamFunctionValidator } from './util/upstream-crds';

const root = path.resolve(__dirname, '..');

/** `kind namespace/name` of an object. */
function identity(o: any): string {
  return `${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

const ENVIRONMENT_FOLDERS = ['', 'dev', 'prod'];

// What the default app writes. test/synth-script.test.ts proves that dist/ is exactly what
// `npm run synth` writes (in another folder, in another process), so these tests read it as committed.
describe('the default app', () => {
  const dist = path.join(root, 'dist');
  const first = readTree(dist);
  const manifests = Object.keys(first).filter(f => f.endsWith('.k8s.yaml'));
  const objects = manifests.flatMap(f => loadYamlDocuments(path.join(dist, f)));
  const rootObjects = manifests.filter(f => !f.includes(path.sep)).flatMap(f => loadYamlDocuments(path.join(dist, f)));

  test('writes each environment\'s files, one per chart, the stack first, with a kustomization', () => {
    const files = [
      '0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml',
      'flux/functions/kustomization.yaml', 'flux/reach/kustomization.yaml', 'flux/stack/kustomization.yaml', 'kustomization.yaml',
    ];
    expect(Object.keys(first)).toEqual(ENVIRONMENT_FOLDERS.flatMap(env => files.map(f => path.join(env, f))).sort());
    const [namespace, crd] = loadYamlDocuments(path.join(dist, '0000-serverless.k8s.yaml'));
    expect([namespace.kind, crd.kind]).toEqual(['Namespace', 'CustomResourceDefinition']);
  });

  test('every object in the output is valid', () => {
    expectValidKubernetesObjects(objects);
  });

  test.each(ENVIRONMENT_FOLDERS)('`kubectl kustomize` renders every object of %p exactly once', env => {
    const folder = path.join(dist, env);
    const result = spawnSync('kubectl', ['kustomize', folder], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const rendered = parseAllDocuments(result.stdout).map(d => d.toJS()).map(identity).sort();
    const synthesized = fs.readdirSync(folder).filter(f => f.endsWith('.k8s.yaml')).flatMap(f => loadYamlDocuments(path.join(folder, f))).map(identity).sort();
    expect(new Set(rendered).size).toBe(rendered.length);
    expect(rendered).toEqual(synthesized);
  });

  test.each(ENVIRONMENT_FOLDERS)('the Flux stages of %p render every object once: the stack, the Functions, then what reaches them', env => {
    const folder = path.join(dist, env);
    const render = (stage: string) => {
      // Flux builds with kustomize's LoadRestrictionsNone, which lets a stage take the files of its output folder.
      const result = spawnSync('kubectl', ['kustomize', '--load-restrictor', 'LoadRestrictionsNone', path.join(folder, 'flux', stage)], { encoding: 'utf8' });
      expect(result.stderr).toBe('');
      return parseAllDocuments(result.stdout).map(d => d.toJS()).filter(Boolean);
    };
    const [stack, functions, reach] = ['stack', 'functions', 'reach'].map(render);
    const synthesized = fs.readdirSync(folder).filter(f => f.endsWith('.k8s.yaml')).flatMap(f => loadYamlDocuments(path.join(folder, f))).map(identity).sort();
    expect([...stack, ...functions, ...reach].map(identity).sort()).toEqual(synthesized);
    expect(stack.map(identity).sort()).toEqual(loadYamlDocuments(path.join(folder, '0000-serverless.k8s.yaml')).map(identity).sort());
    expect([...new Set(functions.map(o => o.kind))].sort()).toEqual(['Function', 'LimitRange', 'Namespace', ...(env === 'prod' ? ['ResourceQuota'] : [])]);
    expect([...new Set(reach.map(o => o.kind))].sort()).toEqual(env === 'prod' ? ['Subscription', 'VirtualService'] : ['APIRule', 'Subscription']);
  });

  test('no Secret is in the output, and nothing in it names a path of this machine', () => {
    expect(objects.filter(o => o.kind === 'Secret')).toEqual([]);
    for (const [file, text] of Object.entries(first)) {
      expect(`${file}: ${text.includes(root)}`).toBe(`${file}: false`);
    }
  });

  test('each environment gets its own settings, with no branch in the constructs', () => {
    const objectsOf = (env: string) => Object.keys(first).filter(f => path.dirname(f) === (env || '.') && f.endsWith('.k8s.yaml'))
      .flatMap(f => loadYamlDocuments(path.join(dist, f)));
    const limitRangeDefault = (env: string) => objectsOf(env).find(o => o.kind === 'LimitRange').spec.limits[0].defaultRequest;
    expect(limitRangeDefault('')).toEqual({ cpu: '400m', memory: '512Mi' });
    expect(limitRangeDefault('dev')).toEqual({ cpu: '50m', memory: '64Mi' });
    expect(limitRangeDefault('prod')).toEqual({ cpu: '200m', memory: '256Mi' });
    const controllerReplicas = (env: string) => objectsOf(env).find(o => o.kind === 'Deployment' && o.metadata.name === 'serverless-ctrl-mngr').spec.replicas;
    expect(ENVIRONMENT_FOLDERS.map(controllerReplicas)).toEqual([1, 1, 2]);
    const has = (env: string, kind: string) => objectsOf(env).some(o => o.kind === kind);
    expect(ENVIRONMENT_FOLDERS.map(env => has(env, 'ResourceQuota'))).toEqual([false, false, true]);
    expect(ENVIRONMENT_FOLDERS.map(env => has(env, 'PersistentVolumeClaim'))).toEqual([true, true, false]);
  });

  test('emits the example function folders, each accepted by the upstream 1.11.1 CRD', () => {
    const functions = rootObjects.filter(o => o.kind === 'Function');
    expect(functions.map(f => `${f.metadata.namespace}/${f.metadata.name} ${f.spec.runtime}`))
      .toEqual(['default-functions/hello-node nodejs22', 'default-functions/hello-python python312']);
    const upstream = upstreamFunctionValidator();
    for (const fn of functions) expect(formatViolations(upstream.validate(fn))).toBe('');
  });
});
