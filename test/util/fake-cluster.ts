/**
 * A whole cluster on the fake API server, for `preflight` and other commands that read many
 * kinds: the kinds they read, `GET /version`, and seeding from recorded response bodies in
 * `test/fixtures/cluster/<scenario>/`.
 *
 * A fixture file is one JSON body as the API server returns it: a single object (`GET .../name`),
 * a List (`GET` of a collection, items without apiVersion and kind), or the body of `/version`.
 * Later folders are laid over earlier ones: an object with the same name replaces the earlier one.
 *
 * @example
 * const cluster = await FakeCluster.start(fixture('cluster', 'healthy'));
 * cluster.api.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-c' } });
 * cluster.version = { ...cluster.version, minor: '26', gitVersion: 'v1.26.9' };
 * await cluster.close();
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseQuantity } from '../../src/api/quantity';
import {
  CONFIG_MAPS, DEFAULT_RESOURCES, DEPLOYMENTS, FUNCTIONS, FakeKubeApi, HORIZONTAL_POD_AUTOSCALERS, JOBS, KubeObject, ResourceType, SERVICES,
} from './fake-kube-api';

/** The body of `GET /version`. */
export interface VersionBody {
  /** Such as `1`. */
  readonly major: string;
  /** Such as `29`, or `27+` on some managed clusters. */
  readonly minor: string;
  /** Such as `v1.29.4`. */
  readonly gitVersion: string;
  /** The other fields (`gitCommit`, `buildDate`, `platform`, ...). */
  readonly [key: string]: string;
}

const core = (plural: string, kind: string, namespaced: boolean): ResourceType => ({ group: '', version: 'v1', plural, kind, namespaced });
const of = (group: string, version: string, plural: string, kind: string, namespaced: boolean, more: Partial<ResourceType> = {}): ResourceType =>
  ({ group, version, plural, kind, namespaced, ...more });

/**
 * Namespaces, `Active` from their creation as the API server makes them. Served last: their item
 * route would otherwise take `/api/v1/namespaces/<ns>/<plural>`.
 */
export const NAMESPACES: ResourceType = {
  ...core('namespaces', 'Namespace', false),
  prepare: namespace => {
    namespace.status = { phase: 'Active', ...namespace.status };
  },
};
/** LimitRanges. */
export const LIMIT_RANGES = core('limitranges', 'LimitRange', true);
/** ResourceQuotas. */
export const RESOURCE_QUOTAS = core('resourcequotas', 'ResourceQuota', true);
/** StorageClasses. */
export const STORAGE_CLASSES: ResourceType = {
  group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', kind: 'StorageClass', namespaced: false,
};
/** PriorityClasses. */
export const PRIORITY_CLASSES: ResourceType = {
  group: 'scheduling.k8s.io', version: 'v1', plural: 'priorityclasses', kind: 'PriorityClass', namespaced: false,
};
/**
 * CustomResourceDefinitions: writes through the API serve their kinds once Established (see
 * fake-kube-api's `crdEstablishDelayMs`).
 */
export const CUSTOM_RESOURCE_DEFINITIONS: ResourceType = {
  group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false,
};
/** ServiceAccounts. */
export const SERVICE_ACCOUNTS = core('serviceaccounts', 'ServiceAccount', true);
/**
 * PersistentVolumeClaims: a smaller storage request or another StorageClass is refused, with the
 * answers recorded from kube-apiserver.
 */
export const PERSISTENT_VOLUME_CLAIMS = of('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, {
  statusSubresource: true,
  immutable: (claim, old) => {
    const storage = (o: KubeObject) => parseQuantity(String(o.spec?.resources?.requests?.storage ?? '0')) ?? 0;
    if (storage(claim) < storage(old)) return 'pvc-shrink';
    return (old.spec?.storageClassName ?? null) !== (claim.spec?.storageClassName ?? null) ? 'pvc-storage-class' : undefined;
  },
});
/** apps/v1 StatefulSets. */
export const STATEFUL_SETS = of('apps', 'v1', 'statefulsets', 'StatefulSet', true, { statusSubresource: true, generation: true });
/** apps/v1 DaemonSets. */
export const DAEMON_SETS = of('apps', 'v1', 'daemonsets', 'DaemonSet', true, { statusSubresource: true, generation: true });
/** RBAC: Roles, RoleBindings, ClusterRoles, ClusterRoleBindings. */
export const RBAC_RESOURCES: readonly ResourceType[] = [
  of('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  of('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  of('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  of('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
];
/** policy/v1 PodDisruptionBudgets. */
export const POD_DISRUPTION_BUDGETS = of('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, { statusSubresource: true, generation: true });
/** networking.k8s.io/v1 NetworkPolicies. */
export const NETWORK_POLICIES = of('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, { generation: true });

/**
 * Every built-in kind the commands read or the stack's manifests hold, in an order the fake can
 * route; Functions are not among them (their CRD serves them once applied).
 */
export const BUILT_IN_RESOURCES: readonly ResourceType[] = [
  ...DEFAULT_RESOURCES,
  // ConfigMaps, Jobs, Deployments, Services and HPAs, as fake-kube-api describes them.
  CONFIG_MAPS, JOBS, DEPLOYMENTS, SERVICES, HORIZONTAL_POD_AUTOSCALERS,
  LIMIT_RANGES, RESOURCE_QUOTAS, SERVICE_ACCOUNTS, PERSISTENT_VOLUME_CLAIMS, STATEFUL_SETS, DAEMON_SETS, ...RBAC_RESOURCES,
  POD_DISRUPTION_BUDGETS, NETWORK_POLICIES, STORAGE_CLASSES, PRIORITY_CLASSES, CUSTOM_RESOURCE_DEFINITIONS,
  NAMESPACES,
];

/** Every kind a cluster-reading command needs, Functions included, in an order the fake can route. */
export const CLUSTER_RESOURCES: readonly ResourceType[] = [FUNCTIONS, ...BUILT_IN_RESOURCES];

/** A minimal `/version` body of a supported cluster, for a fake seeded without one. */
export const DEFAULT_VERSION: VersionBody = {
  major: '1', minor: '29', gitVersion: 'v1.29.4', gitCommit: '55019c83b0fd51ef4ced8c29eec2c4847f896e74', gitTreeState: 'clean',
  buildDate: '2024-04-16T15:03:25Z', goVersion: 'go1.21.9', compiler: 'gc', platform: 'linux/amd64',
};

/** The objects of one recorded body: a List's items get the List's apiVersion and their kind. */
export function objectsOf(body: KubeObject): KubeObject[] {
  if (typeof body.kind === 'string' && body.kind.endsWith('List') && Array.isArray(body.items)) {
    const kind = body.kind.slice(0, -'List'.length);
    return body.items.map((item: KubeObject) => ({ apiVersion: body.apiVersion, kind, ...item }));
  }
  return [body];
}

/** The fake API server with the kinds a cluster has and a `/version` endpoint. */
export class FakeCluster {
  /**
   * Starts a fake and seeds it from fixture folders, in order.
   *
   * @param folders folders of recorded bodies (`*.json`, read in name order)
   */
  public static async start(...folders: string[]): Promise<FakeCluster> {
    const cluster = new FakeCluster(await FakeKubeApi.start({ resources: CLUSTER_RESOURCES }));
    for (const folder of folders) cluster.load(folder);
    return cluster;
  }

  /** The body `GET /version` answers; change it to play another server version. */
  public version: VersionBody = DEFAULT_VERSION;

  private constructor(public readonly api: FakeKubeApi) {
    api.intercept('GET', /^\/version\/?$/, () => ({ status: 200, body: this.version }), { times: Infinity });
  }

  /** Stores every object of a fixture folder (or sets the version from its `version.json`). */
  public load(folder: string): void {
    for (const file of fs.readdirSync(folder).filter(f => f.endsWith('.json')).sort()) {
      const body = JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8'));
      if (body.kind === undefined && typeof body.gitVersion === 'string') this.version = body;
      else for (const object of objectsOf(body)) this.api.put(object);
    }
  }

  /** Stops the fake. */
  public async close(): Promise<void> {
    await this.api.close();
  }
}
