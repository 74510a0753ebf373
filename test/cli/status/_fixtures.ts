/**
 * The recorded Functions of `test/fixtures/functions-status/` that the `status` tests share: as
 * plain objects for the pure functions, or stored in the fake API server.
 */
import { FunctionChildren, FunctionResource } from '../../../src/cli/status';
import { FakeKubeApi, KubeObject } from '../../util/fake-kube-api';
import { fixture, loadYamlDocuments } from '../../util/fixtures';

export const FIXTURES = [
  '01-waiting-for-controller', '02-source-configmap-created', '03-build-job-running', '04-build-failed', '05-build-job-finished',
  '06-deployment-created', '07-service-created', '08-hpa-created', '09-ready', '10-git-ready',
] as const;
export type FixtureName = typeof FIXTURES[number];

/** A fixture's documents: the Function first, then the controller's objects. */
export function documents(name: FixtureName): KubeObject[] {
  return loadYamlDocuments(fixture('functions-status', `${name}.yaml`));
}

/** A fixture as plain objects, for the pure functions: the Function and its children by kind. */
export function recorded(name: FixtureName): { fn: FunctionResource; children: FunctionChildren } {
  const [fn, ...rest] = documents(name);
  const of = (kind: string) => rest.filter(o => o.kind === kind);
  return {
    fn,
    children: { configMaps: of('ConfigMap'), jobs: of('Job'), deployments: of('Deployment'), services: of('Service'), horizontalPodAutoscalers: of('HorizontalPodAutoscaler') },
  };
}

/** Stores a fixture in the fake: the Function first, then its objects labelled with the uid the fake gave it. */
export function seed(api: FakeKubeApi, name: FixtureName): KubeObject {
  const [fn, ...children] = documents(name);
  const stored = api.put(fn);
  for (const child of children) api.put(JSON.parse(JSON.stringify(child).split(fn.metadata!.uid!).join(stored.metadata!.uid!)));
  return stored;
}

/** The clock of the tests that need a fixed one. */
export const NOW = Date.parse('2026-03-20T09:05:00Z');

/** A condition as the controller writes it. */
export const condition = (type: string, status: string, reason: string, message: string, at = '2026-03-20T09:02:00Z') => ({ type, status, lastTransitionTime: at, reason, message });
