/**
 * Changes the API server refuses to make in place: found between two manifests (synth's check),
 * recognized in the API server's answers (recorded from kube-apiserver 1.28 in
 * test/fixtures/api-server/immutable/), and the opt-in that lets a sync replace the object.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiObject, Size, Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { GitOpsApp, Registry, ServerlessStack, allowReplacement } from '../../src';
import { addSyncAnnotations } from '../../src/gitops/sync-waves';
import { IMMUTABLE_FIELD_RULES, allowsReplacement, refusedChangeOfAnswer, refusedChanges, refusedOutputChanges } from '../../src/policy/replacement';
import { REGISTRY_STORAGE_REPLACEMENT } from '../../src/stack/registry';
import { STACK_REPLACEMENT_OPT_INS } from '../../src/stack/serverless-stack';
import { fixture } from '../util/fixtures';

const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}) });
const pvc = (storage: string, storageClassName?: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('serverless-docker-registry', 'kyma-system'),
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(storageClassName ? { storageClassName } : {}) },
});
const deployment = (selector: object) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('web', 'shop'),
  spec: {
    selector: { matchLabels: selector },
    template: { metadata: { labels: selector }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
  },
});
const recorded = (name: string) => JSON.parse(fs.readFileSync(fixture('api-server', 'immutable', `${name}.json`), 'utf8'));

describe('refusedChanges between two manifests', () => {
  test('finds a smaller PersistentVolumeClaim, with both sizes, and names the registry\'s opt-in and what it costs', () => {
    const [change] = refusedChanges(pvc('20Gi'), pvc('5Gi'), STACK_REPLACEMENT_OPT_INS);
    expect(change).toMatchObject({
      rule: 'pvc-storage-decrease',
      change: { field: 'spec.resources.requests.storage', before: '20Gi', after: '5Gi' },
      refusal: 'spec.resources.requests.storage: Forbidden: field can not be less than previous value',
      replacementAllowed: false,
      optIn: 'Registry.internal({ replaceStorage: true }) (ServerlessStack prop registry)',
    });
    expect(change.cost).toMatch(/^its volume and every byte on it are deleted.*; the registry's images are deleted with it: /);
    expect(change.cost).toContain('kubectl delete jobs -A -l serverless.kyma-project.io/managed-by=function-controller');
    expect(change.wayThrough).toEqual([
      expect.stringMatching(new RegExp('^opt in to replacing it: Registry\\.internal\\(\\{ replaceStorage: true \\}\\) .* writes '
        + 'argocd\\.argoproj\\.io/sync-options: Replace=true,Force=true and kustomize\\.toolkit\\.fluxcd\\.io/force: enabled')),
      'or delete it yourself before the sync: kubectl delete persistentvolumeclaim/serverless-docker-registry -n kyma-system, '
        + 'then sync (or kyma-serverless apply)',
      'or keep the field as it is in the cluster',
    ]);
  });

  test('lets a PersistentVolumeClaim grow, and compares quantities, not their spelling', () => {
    expect(refusedChanges(pvc('20Gi'), pvc('30Gi'))).toEqual([]);
    expect(refusedChanges(pvc('20Gi'), pvc('20480Mi'))).toEqual([]);
    expect(refusedChanges(pvc('1G'), pvc('900M'))).toHaveLength(1);
  });

  test('finds another StorageClass, but not one named where the cluster\'s default was (only a dry run knows that one)', () => {
    expect(refusedChanges(pvc('20Gi', 'standard'), pvc('20Gi', 'fast'))).toMatchObject([
      { rule: 'pvc-spec', change: { field: 'spec.storageClassName', before: 'standard', after: 'fast' } },
    ]);
    expect(refusedChanges(pvc('20Gi'), pvc('20Gi', 'standard'))).toEqual([]);
  });

  test('names allowReplacement for objects of no construct of this package', () => {
    const [change] = refusedChanges(deployment({ app: 'web' }), deployment({ app: 'web', tier: 'front' }), STACK_REPLACEMENT_OPT_INS);
    expect(change).toMatchObject({ rule: 'workload-selector', change: { field: 'spec.selector' } });
    expect(change.optIn).toBe('allowReplacement() on the construct\'s ApiObject (import { allowReplacement } from \'cdk8s-kyma-serverless\')');
    expect(change.cost).toBe('its Pods are deleted with it: the workload is down until the new Pods are ready');
  });

  test.each([
    ['a Job\'s template',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: meta('j', 'a'), spec: { template: { spec: { containers: [{ image: 'a' }] } } } },
      { spec: { template: { spec: { containers: [{ image: 'b' }] } } } }, 'job-template'],
    ['a Service\'s cluster IP', { apiVersion: 'v1', kind: 'Service', metadata: meta('s', 'a'), spec: { clusterIP: '10.96.0.10' } },
      { spec: { clusterIP: 'None' } }, 'service-cluster-ip'],
    ['an immutable ConfigMap\'s data', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('c', 'a'), immutable: true, data: { a: '1' } },
      { data: { a: '2' } }, 'immutable-data'],
    ['a Secret\'s type', { apiVersion: 'v1', kind: 'Secret', metadata: meta('s', 'a'), type: 'Opaque' },
      { type: 'kubernetes.io/tls' }, 'secret-type'],
    ['a CRD\'s scope',
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: meta('w.example.com'), spec: { scope: 'Namespaced' } },
      { spec: { scope: 'Cluster' } }, 'crd-scope'],
    ['a PriorityClass\'s value', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: meta('p'), value: 2000000 },
      { value: 1 }, 'priority-class-value'],
    ['a RoleBinding\'s role',
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta('r', 'a'), roleRef: { kind: 'ClusterRole', name: 'view' } },
      { roleRef: { kind: 'ClusterRole', name: 'edit' } }, 'role-ref'],
    ['a StatefulSet\'s volume claim templates',
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('db', 'a'), spec: { replicas: 1, volumeClaimTemplates: [{ a: 1 }] } },
      { spec: { replicas: 2, volumeClaimTemplates: [{ a: 2 }] } }, 'statefulset-spec'],
    ['a StorageClass\'s parameters',
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: meta('fast'), provisioner: 'x', parameters: { type: 'ssd' } },
      { parameters: { type: 'hdd' } }, 'storage-class'],
  ])('finds a change of %s', (_what, before, change, rule) => {
    expect(refusedChanges(before, { ...before, ...change }).map(c => c.rule)).toEqual([rule]);
  });

  test('finds nothing where the API server takes the change', () => {
    const web = deployment({ app: 'web' });
    expect(refusedChanges(web, { ...web, spec: { ...web.spec, replicas: 3 } })).toEqual([]);
    expect(refusedChanges({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('c', 'a'), data: { a: '1' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('c', 'a'), data: { a: '2' } })).toEqual([]);
    const db = (replicas: number) => ({
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('db', 'a'),
      spec: { replicas, template: { metadata: { labels: { r: String(replicas) } } } },
    });
    expect(refusedChanges(db(1), db(2))).toEqual([]);
  });
});

describe('refusedChangeOfAnswer: the API server\'s own answers', () => {
  test.each([
    ['pvc-shrink', pvc('5Gi'), 'pvc-storage-decrease', 'spec.resources.requests.storage: Forbidden: field can not be less than previous value'],
    ['pvc-storage-class', pvc('20Gi', 'fast'), 'pvc-spec',
      'spec: Forbidden: spec is immutable after creation except resources.requests for bound claims'],
    ['deployment-selector', deployment({ app: 'web' }), 'workload-selector', 'spec.selector: Invalid value: ...: field is immutable'],
    ['job-template', { apiVersion: 'batch/v1', kind: 'Job' }, 'job-template', 'spec.template: Invalid value: ...: field is immutable'],
    ['service-cluster-ip', { apiVersion: 'v1', kind: 'Service' }, 'service-cluster-ip',
      'spec.clusterIPs[0]: Invalid value: []string{"None"}: may not change once set'],
    ['configmap-immutable', { apiVersion: 'v1', kind: 'ConfigMap' }, 'immutable-data', 'data: Forbidden: field is immutable when `immutable` is set'],
    ['secret-immutable', { apiVersion: 'v1', kind: 'Secret' }, 'immutable-data', 'data: Forbidden: field is immutable when `immutable` is set'],
    ['secret-type', { apiVersion: 'v1', kind: 'Secret' }, 'secret-type', 'type: Invalid value: "example.com/other": field is immutable'],
    ['crd-scope', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, 'crd-scope',
      'spec.scope: Invalid value: "Cluster": field is immutable'],
    ['priorityclass-value', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass' }, 'priority-class-value',
      'value: Forbidden: may not be changed in an update.'],
    ['rolebinding-roleref', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' }, 'role-ref',
      'roleRef: Invalid value: ...: cannot change roleRef'],
    ['statefulset-forbidden', { apiVersion: 'apps/v1', kind: 'StatefulSet' }, 'statefulset-spec',
      expect.stringMatching(/^spec: Forbidden: updates to statefulset spec for fields other than/)],
  ])('recognizes %s', (name, object, rule, refusal) => {
    const change = refusedChangeOfAnswer({ metadata: meta('x', 'a'), ...object }, 422, recorded(name));
    expect(change).toMatchObject({ rule, refusal });
    expect(IMMUTABLE_FIELD_RULES.map(r => r.id)).toContain(rule);
  });

  test('recognizes the API server\'s words for a field no rule knows', () => {
    const cause = { reason: 'FieldValueInvalid', field: 'spec.foo', message: 'Invalid value: "b": field is immutable' };
    const body = { code: 422, details: { causes: [cause] } };
    expect(refusedChangeOfAnswer({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta('w', 'a') }, 422, body))
      .toMatchObject({ rule: 'immutable-field', refusal: 'spec.foo: Invalid value: "b": field is immutable' });
  });

  test('is undefined for other answers: an invalid value, a conflict', () => {
    const cause = { reason: 'FieldValueInvalid', field: 'data[a b]', message: 'Invalid value: "a b": a valid config key must be alphanumeric' };
    const invalid = { details: { causes: [cause] } };
    expect(refusedChangeOfAnswer({ apiVersion: 'v1', kind: 'ConfigMap' }, 422, invalid)).toBeUndefined();
    expect(refusedChangeOfAnswer(pvc('5Gi'), 409, recorded('pvc-shrink'))).toBeUndefined();
  });

  test('says the object opted in when it carries the Argo CD and the Flux annotations', () => {
    const annotated = {
      ...pvc('5Gi'),
      metadata: {
        ...pvc('5Gi').metadata,
        annotations: { 'argocd.argoproj.io/sync-options': 'Replace=true,Force=true', 'kustomize.toolkit.fluxcd.io/force': 'enabled' },
      },
    };
    expect(refusedChangeOfAnswer(annotated, 422, recorded('pvc-shrink'))?.replacementAllowed).toBe(true);
    expect(allowsReplacement({ metadata: { annotations: { 'argocd.argoproj.io/sync-options': 'Replace=true' } } })).toBe(false);
  });
});

describe('opting in to replacement', () => {
  test('allowReplacement writes Argo CD\'s Replace=true,Force=true beside the sync options synth gives the kind, and Flux\'s force', () => {
    const chart = Testing.chart();
    const crd = new ApiObject(chart, 'Crd', {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'w.example.com' },
    });
    allowReplacement(crd);
    allowReplacement(crd);
    addSyncAnnotations(chart);
    expect(Testing.synth(chart)[0].metadata.annotations).toEqual({
      'argocd.argoproj.io/sync-options': 'ServerSideApply=true,Replace=true,Force=true',
      'argocd.argoproj.io/sync-wave': '-2',
      'kustomize.toolkit.fluxcd.io/force': 'enabled',
    });
    expect(allowsReplacement(Testing.synth(chart)[0])).toBe(true);
  });

  test('Registry.internal({ replaceStorage: true }) annotates the registry\'s claim, and only it', () => {
    const app = new GitOpsApp({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'replace-')) });
    const stack = new ServerlessStack(app, 'serverless', { registry: Registry.internal({ storageSize: Size.gibibytes(5), replaceStorage: true }) });
    const objects = Testing.synth(stack);
    const claim = objects.find(o => o.kind === 'PersistentVolumeClaim');
    expect(claim.metadata.annotations).toEqual({
      'argocd.argoproj.io/sync-options': 'Replace=true,Force=true', 'kustomize.toolkit.fluxcd.io/force': 'enabled',
    });
    expect(REGISTRY_STORAGE_REPLACEMENT.matches(claim)).toBe(true);
    expect(objects.filter(allowsReplacement)).toEqual([claim]);
    fs.rmSync(app.outdir, { recursive: true, force: true });
  });
});

describe('refusedOutputChanges: two outputs of synth', () => {
  const write = (dir: string, files: { [file: string]: object[] }) => {
    for (const [file, objects] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), objects.map(o => stringify(o)).join('---\n'));
    }
    return dir;
  };

  test('compares each environment\'s folder with its own, objects by identity wherever their file', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'outputs-'));
    const same = { 'dev/0000-a.yaml': [pvc('5Gi')], 'same.yaml': [deployment({ app: 'web' })] };
    const before = write(path.join(root, 'before'), { '0000-a.yaml': [pvc('20Gi')], ...same });
    const after = write(path.join(root, 'after'), { '0001-b.yaml': [pvc('5Gi')], ...same });
    expect(refusedOutputChanges(before, after, STACK_REPLACEMENT_OPT_INS)).toEqual([expect.objectContaining({
      file: '0001-b.yaml', object: 'PersistentVolumeClaim kyma-system/serverless-docker-registry', rule: 'pvc-storage-decrease',
    })]);
    // dev/ shrinks from the top folder's 20Gi to its own 5Gi: another cluster, no refusal.
    fs.rmSync(root, { recursive: true, force: true });
  });
});
