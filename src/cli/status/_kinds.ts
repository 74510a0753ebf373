/**
 * The kinds `status` lists and watches: Functions, and the objects the Function controller
 * creates for them. Each says how to list it and where to watch it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { FUNCTION_GROUP, FUNCTION_VERSION } from '../../api/function-schema';
import { FunctionChildren } from './resources';

/** A kind the status lists and watches. */
export interface Kind {
  /** Where its objects go: `functions`, or their field of {@link FunctionChildren}. */
  readonly key: 'functions' | keyof FunctionChildren;
  /** For messages: `Functions`, `build Jobs`. */
  readonly noun: string;
  /** The API path of its collection, to watch; every namespace's without one. */
  readonly path: (namespace?: string) => string;
  /** Lists its objects in a namespace, or in every namespace. */
  readonly list: (namespace: string | undefined, query: Selectors) => Promise<{ items: unknown[]; metadata?: { resourceVersion?: string } }>;
}

/** The selectors a kind is listed and watched with. */
export interface Selectors {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

const FUNCTION_PLURAL = 'functions';

/** The path of a collection of the API: `/api/v1/namespaces/ns/services`, `/apis/batch/v1/jobs`. */
function collectionPath(group: string, version: string, plural: string, namespace?: string): string {
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return `${base}${namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`}/${plural}`;
}

/** The Functions and the five kinds of objects the controller creates for them. */
export async function kindsOf(kubeConfig: KubeConfig): Promise<Kind[]> {
  const k8s = await import('@kubernetes/client-node');
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const batch = kubeConfig.makeApiClient(k8s.BatchV1Api);
  const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
  const autoscaling = kubeConfig.makeApiClient(k8s.AutoscalingV2Api);
  const fn = { group: FUNCTION_GROUP, version: FUNCTION_VERSION, plural: FUNCTION_PLURAL };
  return [
    {
      key: 'functions',
      noun: 'Functions',
      path: ns => collectionPath(fn.group, fn.version, fn.plural, ns),
      list: (namespace, query) => (namespace === undefined
        ? custom.listClusterCustomObject({ ...fn, ...query })
        : custom.listNamespacedCustomObject({ ...fn, namespace, ...query })),
    },
    {
      key: 'configMaps',
      noun: 'ConfigMaps',
      path: ns => collectionPath('', 'v1', 'configmaps', ns),
      list: (namespace, query) => (namespace === undefined
        ? core.listConfigMapForAllNamespaces(query)
        : core.listNamespacedConfigMap({ namespace, ...query })),
    },
    {
      key: 'jobs',
      noun: 'build Jobs',
      path: ns => collectionPath('batch', 'v1', 'jobs', ns),
      list: (namespace, query) => (namespace === undefined ? batch.listJobForAllNamespaces(query) : batch.listNamespacedJob({ namespace, ...query })),
    },
    {
      key: 'deployments',
      noun: 'Deployments',
      path: ns => collectionPath('apps', 'v1', 'deployments', ns),
      list: (namespace, query) => (namespace === undefined
        ? apps.listDeploymentForAllNamespaces(query)
        : apps.listNamespacedDeployment({ namespace, ...query })),
    },
    {
      key: 'services',
      noun: 'Services',
      path: ns => collectionPath('', 'v1', 'services', ns),
      list: (namespace, query) => (namespace === undefined
        ? core.listServiceForAllNamespaces(query)
        : core.listNamespacedService({ namespace, ...query })),
    },
    {
      key: 'horizontalPodAutoscalers',
      noun: 'HorizontalPodAutoscalers',
      path: ns => collectionPath('autoscaling', 'v2', 'horizontalpodautoscalers', ns),
      list: (namespace, query) => (namespace === undefined
        ? autoscaling.listHorizontalPodAutoscalerForAllNamespaces(query)
        : autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace, ...query })),
    },
  ];
}
