/**
 * The ApplySet of a folder (KEP-3659): kubectl's id, the parent a folder gets, and which members
 * the folder no longer holds are pruned, and in which order.
 */
import { ApiResource } from '../../src/cli/_rest';
import { ApplySet, KeptReason, applySetId, applySetParentOf, groupKindOf } from '../../src/cli/_applyset';
import { ObjectTarget } from '../../src/cli/_objects';
import { ApplyPhase, ApplyPlan, PlannedObject, phaseOf } from '../../src/cli/_plan';

const resource = (group: string, kind: string, plural: string, namespaced = true): ApiResource =>
  ({ group, version: 'v1', kind, plural, namespaced });
const FUNCTIONS = resource('serverless.kyma-project.io', 'Function', 'functions');
const API_RULES = resource('gateway.kyma-project.io', 'APIRule', 'apirules');
const SCALED_OBJECTS = resource('keda.sh', 'ScaledObject', 'scaledobjects');
const CONFIG_MAPS = resource('', 'ConfigMap', 'configmaps');
const NAMESPACES = resource('', 'Namespace', 'namespaces', false);
const CRDS = resource('apiextensions.k8s.io', 'CustomResourceDefinition', 'customresourcedefinitions', false);

/** A member as the API server lists it, applied by `manager` (kyma-serverless by default). */
const member = (r: ApiResource, name: string, namespace: string | undefined, metadata: object = {}, manager = 'kyma-serverless') => ({
  resource: r,
  object: {
    apiVersion: r.group ? `${r.group}/${r.version}` : 'v1', kind: r.kind,
    metadata: {
      name, ...(namespace ? { namespace } : {}),
      managedFields: [{ manager, operation: manager === 'kyma-serverless' ? 'Apply' : 'Update' }], ...metadata,
    },
  },
});

const planned = (apiVersion: string, kind: string, name: string, namespace?: string): PlannedObject => ({
  file: 'a.yaml', document: 1, object: { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } },
  group: apiVersion.includes('/') ? apiVersion.split('/')[0] : '', wave: 0, phase: phaseOf(apiVersion, kind),
});
const plan = (...objects: PlannedObject[]): ApplyPlan =>
  ({ dir: 'dist', files: ['a.yaml'], steps: [{ wave: 0, phase: ApplyPhase.BUILT_IN, objects }] });

describe('applySetId', () => {
  // Recorded from kubectl 1.28.15:
  // KUBECTL_APPLYSET=true kubectl apply --server-side --prune --applyset=secrets/kyma-serverless-applyset -n kyma-system
  test('is kubectl\'s', () => {
    expect(applySetId({ name: 'kyma-serverless-applyset', namespace: 'kyma-system', kind: 'Secret', group: '' }))
      .toBe('applyset-KUG744MSZbjSSMkISiwB06Q0Ecj1RC1GMxp70WdxGlQ-v1');
  });
});

describe('applySetParentOf', () => {
  const folder = plan(planned('v1', 'ConfigMap', 'c', 'team-a'), planned('v1', 'Namespace', 'team-a'), planned('v1', 'Namespace', 'team-b'));

  test('is a Secret in the namespace of the folder\'s first Namespace, else in the context\'s', () => {
    expect(applySetParentOf(folder, undefined, 'default'))
      .toMatchObject({ name: 'kyma-serverless-applyset', namespace: 'team-a', resource: { plural: 'secrets' } });
    expect(applySetParentOf(plan(planned('v1', 'ConfigMap', 'c', 'x')), undefined, 'default').namespace).toBe('default');
  });

  test('takes --applyset as kubectl does: a name, or secrets/ or configmaps/ and a name', () => {
    expect(applySetParentOf(folder, 'prod', 'default')).toMatchObject({ name: 'prod', resource: { kind: 'Secret' } });
    expect(applySetParentOf(folder, 'configmaps/prod', 'default')).toMatchObject({
      name: 'prod', resource: { kind: 'ConfigMap' }, id: applySetId({ name: 'prod', namespace: 'team-a', kind: 'ConfigMap', group: '' }),
    });
    expect(() => applySetParentOf(folder, 'deployments.apps/prod', 'default'))
      .toThrow('--applyset deployments.apps/prod: give [secrets/|configmaps/]name: an ApplySet parent is a Secret (the default) or a ConfigMap');
    expect(() => applySetParentOf(folder, 'secrets/', 'default')).toThrow(/^--applyset secrets\/: give/);
  });
});

describe('ApplySet', () => {
  const targets: ObjectTarget[] = [
    { planned: planned('serverless.kyma-project.io/v1alpha2', 'Function', 'hello', 'team-a'), resource: FUNCTIONS, namespace: 'team-a' },
    { planned: planned('v1', 'Namespace', 'team-a'), resource: NAMESPACES },
    { planned: planned('v1', 'ConfigMap', 'settings'), resource: CONFIG_MAPS, namespace: 'team-b' },
  ];

  test('lists the kinds and namespaces of a folder as kubectl writes them: sorted Kind.group, namespaces of namespaced objects', () => {
    expect(ApplySet.scopeOf(targets))
      .toEqual({ groupKinds: ['ConfigMap', 'Function.serverless.kyma-project.io', 'Namespace'], namespaces: ['team-a', 'team-b'] });
    expect(groupKindOf('apps/v1', 'Deployment')).toBe('Deployment.apps');
  });

  test('prunes members the folder no longer holds in reverse apply order: APIRules and ScaledObjects before their Functions', () => {
    const orphans = ApplySet.orphansOf([
      member(FUNCTIONS, 'old', 'team-a', { annotations: { 'argocd.argoproj.io/sync-wave': '0' } }),
      member(CONFIG_MAPS, 'old-settings', 'team-a'),
      member(FUNCTIONS, 'hello', 'team-a'),
      // Without a wave annotation (a plain cdk8s app), the wave synth gives the kind.
      member(SCALED_OBJECTS, 'old', 'team-a'),
      member(API_RULES, 'old', 'team-a', { annotations: { 'argocd.argoproj.io/sync-wave': '1' } }),
    ], targets, 'kyma-serverless');
    expect(orphans.map(o => [`${o.resource.kind} ${o.object.metadata.name}`, o.wave, o.kept])).toEqual([
      ['APIRule old', 1, undefined], ['ScaledObject old', 1, undefined], ['Function old', 0, undefined], ['ConfigMap old-settings', -1, undefined],
    ]);
  });

  test('leaves what another object owns, what this field manager never applied, and Namespaces and CRDs, saying why', () => {
    const orphans = ApplySet.orphansOf([
      member(CONFIG_MAPS, 'hello-x7b2c', 'team-a', { ownerReferences: [{ kind: 'Function', name: 'hello' }] }),
      member(CONFIG_MAPS, 'dockerfile-nodejs22', 'team-a', {}, 'manager'),
      member(NAMESPACES, 'team-old', undefined),
      member(CRDS, 'widgets.example.com', undefined),
    ], targets, 'kyma-serverless');
    expect(Object.fromEntries(orphans.map(o => [o.object.metadata.name, [o.kept, o.keptBecause]]))).toEqual({
      'hello-x7b2c': [KeptReason.OWNED, 'owned by Function hello: deleted with it'],
      'dockerfile-nodejs22': [KeptReason.NOT_APPLIED,
        'never applied by field manager kyma-serverless: manager wrote it with the set\'s label copied from another object'],
      'team-old': [KeptReason.DELETES_MORE, 'deleting a Namespace deletes everything in it, also what is not in the set: when it is empty of yours, '
        + 'kubectl delete namespaces/team-old'],
      'widgets.example.com': [KeptReason.DELETES_MORE,
        'deleting a CustomResourceDefinition deletes every custom resource of its kind in the cluster: '
        + 'if none is needed, kubectl delete customresourcedefinitions.apiextensions.k8s.io/widgets.example.com'],
    });
  });

  test('adds the set\'s label to what apply sends, beside the manifest\'s own labels', () => {
    const set = new ApplySet(undefined as never, applySetParentOf(plan(planned('v1', 'Namespace', 'team-a')), undefined, 'default'));
    const body = set.labelled({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { team: 'a' } } });
    expect(body.metadata.labels).toEqual({ 'team': 'a', 'applyset.kubernetes.io/part-of': set.parent.id });
  });
});
