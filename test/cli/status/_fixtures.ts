/**
 * The recorded Functions of `test/fixtures/functions-status/` that the `status` tests share (one of
 * them scaled to zero by KEDA, with its ScaledObject), and the objects synth emits to reach them
 * (`reach-*.yaml`): as plain objects for the pure functions, or stored in the fake API server.
 */
import { FUNCTION_LABEL, OBJECT_KINDS_ANNOTATION, objectKindsValue } from '../../../src/api/labels';
import { FunctionChildren, FunctionResource } from '../../../src/cli/status';
import { FakeKubeApi, KubeObject } from '../../util/fake-kube-api';
import { fixture, loadYamlDocuments } from '../../util/fixtures';

export const FIXTURES = [
  '01-waiting-for-controller', '02-source-configmap-created', '03-build-job-running', '04-build-failed', '05-build-job-finished',
  '06-deployment-created', '07-service-created', '08-hpa-created', '09-ready', '10-git-ready', '11-keda-idle', '12-deployment-update-loop',
] as const;
/** Functions as the 1.13.0 (buildless) controller writes them, with its objects: no ConfigMap, Job or HPA. */
export const BUILDLESS_FIXTURES = ['113-01-installing', '113-02-ready', '113-03-git-ready', '113-04-invalid'] as const;
export type FixtureName = typeof FIXTURES[number] | typeof BUILDLESS_FIXTURES[number];

/** A fixture's documents: the Function first, then the controller's objects. */
export function documents(name: FixtureName): KubeObject[] {
  return loadYamlDocuments(fixture('functions-status', `${name}.yaml`));
}

/** The objects of a Function and its children, sorted by kind into {@link FunctionChildren}. */
function childrenOf(objects: readonly KubeObject[]): FunctionChildren {
  const of = (kind: string) => objects.filter(o => o.kind === kind);
  return {
    configMaps: of('ConfigMap'), jobs: of('Job'), deployments: of('Deployment'), services: of('Service'), horizontalPodAutoscalers: of('HorizontalPodAutoscaler'),
    apiRules: of('APIRule'), httpRoutes: of('HTTPRoute'), virtualServices: of('VirtualService'), subscriptions: of('Subscription'),
    scaledObjects: of('ScaledObject'),
  };
}

/** A fixture as plain objects, for the pure functions: the Function and its children by kind. */
export function recorded(name: FixtureName): { fn: FunctionResource; children: FunctionChildren } {
  const [fn, ...rest] = documents(name);
  return { fn, children: childrenOf(rest) };
}

/** Stores a Function's documents in the fake: the Function first, then its objects labelled with the uid the fake gave it. */
function store(api: FakeKubeApi, [fn, ...children]: readonly KubeObject[]): KubeObject {
  const stored = api.put(fn);
  for (const child of children) api.put(JSON.parse(JSON.stringify(child).split(fn.metadata!.uid!).join(stored.metadata!.uid!)));
  return stored;
}

/** Stores a fixture in the fake: the Function first, then its objects labelled with the uid the fake gave it. */
export function seed(api: FakeKubeApi, name: FixtureName): KubeObject {
  return store(api, documents(name));
}

export const REACH_FIXTURES = [
  'reach-apirule-ready', 'reach-apirule-error', 'reach-apirule-pending', 'reach-subscription-not-ready',
  'reach-httproute-accepted', 'reach-httproute-not-accepted', 'reach-virtualservice',
] as const;
export type ReachFixtureName = typeof REACH_FIXTURES[number];

/** The objects of a `reach-*.yaml` fixture: APIRules, HTTPRoutes, VirtualServices, Subscriptions of one Function. */
export function reachDocuments(name: ReachFixtureName): KubeObject[] {
  return loadYamlDocuments(fixture('functions-status', `${name}.yaml`));
}

/** The ready Function of `09-ready.yaml` and its objects, as a Function of another name in the same namespace. */
export function readyFunction(name: string): KubeObject[] {
  const documents_ = documents('09-ready');
  return name === 'hello' ? documents_ : JSON.parse(JSON.stringify(documents_).replace(/hello/g, name));
}

/** The Function a reach fixture's objects belong to, by their label. */
const functionOf = (objects: readonly KubeObject[]) => objects[0].metadata!.labels![FUNCTION_LABEL];

/** A reach fixture as plain objects: its ready Function (see {@link readyFunction}) and every child by kind. */
export function recordedReach(name: ReachFixtureName): { fn: FunctionResource; children: FunctionChildren } {
  const reach = reachDocuments(name);
  const [fn, ...rest] = readyFunction(functionOf(reach));
  return { fn, children: childrenOf([...rest, ...reach]) };
}

/** Stores a reach fixture in the fake: its ready Function (see {@link readyFunction}) and the fixture's objects. */
export function seedReach(api: FakeKubeApi, name: ReachFixtureName): KubeObject {
  const reach = reachDocuments(name);
  const stored = store(api, readyFunction(functionOf(reach)));
  for (const object of reach) api.put(object);
  return stored;
}

/**
 * Stores the ready Function `name` (see {@link readyFunction}) with the annotation synth writes on a
 * Function naming the kinds of the objects beside it (`APIRule.gateway.kyma-project.io`, ...), and
 * those of its objects that the cluster has.
 */
export function seedNeeding(api: FakeKubeApi, name: string, kinds: readonly string[], objects: readonly KubeObject[] = []): KubeObject {
  const [fn, ...children] = readyFunction(name);
  fn.metadata!.annotations = { ...fn.metadata!.annotations, [OBJECT_KINDS_ANNOTATION]: objectKindsValue(kinds)! };
  const stored = store(api, [fn, ...children]);
  for (const object of objects) api.put(object);
  return stored;
}

/** The clock of the tests that need a fixed one. */
export const NOW = Date.parse('2026-03-20T09:05:00Z');

/** A condition as the controller writes it. */
export const condition = (type: string, status: string, reason: string, message: string, at = '2026-03-20T09:02:00Z') => ({ type, status, lastTransitionTime: at, reason, message });
