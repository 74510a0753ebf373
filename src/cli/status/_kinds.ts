/**
 * The kinds `status` lists and watches: Functions, the objects the Function controller creates for
 * them, and the objects synth emits beside them to reach them. Each says how to list it, how to
 * select a Function's objects, and where to watch it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { FUNCTION_CONTROLLER, FunctionChildLabel } from '../../api/function-status';
import { FUNCTION_GROUP, FUNCTION_VERSION } from '../../api/function-schema';
import { FUNCTION_LABEL } from '../../api/labels';
import { API_RULE, CustomKind, HTTP_ROUTE, SCALED_OBJECT, SUBSCRIPTION, VIRTUAL_SERVICE } from '../_reach-kinds';
import { FunctionChildren } from './resources';

/** A kind the status lists and watches. */
export interface Kind {
  /** Where its objects go: `functions`, or their field of {@link FunctionChildren}. */
  readonly key: 'functions' | keyof FunctionChildren;
  /** For messages: `Functions`, `build Jobs`. */
  readonly noun: string;
  /**
   * The kind, when it reaches or scales Functions: its CRD comes from another project and may not
   * be installed. A 404 leaves it out, and only the Functions whose annotation
   * `cdk8s-kyma-serverless/object-kinds` names it say so; a 403 leaves it out with a warning.
   */
  readonly reach?: CustomKind;
  /**
   * What the status lacks when the kind cannot be listed, for the warning.
   *
   * @default - for a kind that reaches Functions, its endpoints or Subscriptions; else the progress between condition updates
   */
  readonly missing?: string;
  /** The selectors of its objects: every Function's, or one Function's by name. */
  readonly selectors: (name: string | undefined) => Selectors;
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

/** The controller's objects: `serverless.kyma-project.io/managed-by=function-controller`, and the Function's name. */
function controllerSelectors(name: string | undefined): Selectors {
  const byName = name === undefined ? FunctionChildLabel.FUNCTION_NAME : `${FunctionChildLabel.FUNCTION_NAME}=${name}`;
  return { labelSelector: `${FunctionChildLabel.MANAGED_BY}=${FUNCTION_CONTROLLER},${byName}` };
}

/**
 * HorizontalPodAutoscalers of Functions: labelled with the Function's name, the 1.11.1 controller's
 * and (under 1.13.0, whose controller makes none) the one synth writes for `scale`, which the
 * controller does not manage.
 */
function autoscalerSelectors(name: string | undefined): Selectors {
  return { labelSelector: name === undefined ? FunctionChildLabel.FUNCTION_NAME : `${FunctionChildLabel.FUNCTION_NAME}=${name}` };
}

/** The objects synth emits to reach a Function: `cdk8s-kyma-serverless/function`, with the Function's name. */
function reachSelectors(name: string | undefined): Selectors {
  return { labelSelector: name === undefined ? FUNCTION_LABEL : `${FUNCTION_LABEL}=${name}` };
}

/**
 * The Functions, the five kinds of objects the controller creates for them, the four kinds that
 * reach them (APIRules, HTTPRoutes, VirtualServices, Subscriptions), and KEDA's ScaledObjects.
 */
export async function kindsOf(kubeConfig: KubeConfig): Promise<Kind[]> {
  const k8s = await import('@kubernetes/client-node');
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const batch = kubeConfig.makeApiClient(k8s.BatchV1Api);
  const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
  const autoscaling = kubeConfig.makeApiClient(k8s.AutoscalingV2Api);
  const fn = { group: FUNCTION_GROUP, version: FUNCTION_VERSION, plural: FUNCTION_PLURAL };
  const reach = (key: Kind['key'], noun: string, kind: CustomKind, missing?: string): Kind => ({
    key,
    noun,
    reach: kind,
    ...(missing ? { missing } : {}),
    selectors: reachSelectors,
    path: ns => collectionPath(kind.group, kind.version, kind.plural, ns),
    list: (namespace, query) => {
      const { group, version, plural } = kind;
      return namespace === undefined
        ? custom.listClusterCustomObject({ group, version, plural, ...query })
        : custom.listNamespacedCustomObject({ group, version, plural, namespace, ...query });
    },
  });
  return [
    {
      key: 'functions',
      noun: 'Functions',
      selectors: name => (name === undefined ? {} : { fieldSelector: `metadata.name=${name}` }),
      path: ns => collectionPath(fn.group, fn.version, fn.plural, ns),
      list: (namespace, query) => (namespace === undefined
        ? custom.listClusterCustomObject({ ...fn, ...query })
        : custom.listNamespacedCustomObject({ ...fn, namespace, ...query })),
    },
    {
      key: 'configMaps',
      noun: 'ConfigMaps',
      selectors: controllerSelectors,
      path: ns => collectionPath('', 'v1', 'configmaps', ns),
      list: (namespace, query) => (namespace === undefined
        ? core.listConfigMapForAllNamespaces(query)
        : core.listNamespacedConfigMap({ namespace, ...query })),
    },
    {
      key: 'jobs',
      noun: 'build Jobs',
      selectors: controllerSelectors,
      path: ns => collectionPath('batch', 'v1', 'jobs', ns),
      list: (namespace, query) => (namespace === undefined ? batch.listJobForAllNamespaces(query) : batch.listNamespacedJob({ namespace, ...query })),
    },
    {
      key: 'deployments',
      noun: 'Deployments',
      selectors: controllerSelectors,
      path: ns => collectionPath('apps', 'v1', 'deployments', ns),
      list: (namespace, query) => (namespace === undefined
        ? apps.listDeploymentForAllNamespaces(query)
        : apps.listNamespacedDeployment({ namespace, ...query })),
    },
    {
      key: 'services',
      noun: 'Services',
      selectors: controllerSelectors,
      path: ns => collectionPath('', 'v1', 'services', ns),
      list: (namespace, query) => (namespace === undefined
        ? core.listServiceForAllNamespaces(query)
        : core.listNamespacedService({ namespace, ...query })),
    },
    {
      key: 'horizontalPodAutoscalers',
      noun: 'HorizontalPodAutoscalers',
      selectors: autoscalerSelectors,
      path: ns => collectionPath('autoscaling', 'v2', 'horizontalpodautoscalers', ns),
      list: (namespace, query) => (namespace === undefined
        ? autoscaling.listHorizontalPodAutoscalerForAllNamespaces(query)
        : autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace, ...query })),
    },
    reach('apiRules', 'APIRules', API_RULE),
    reach('httpRoutes', 'HTTPRoutes', HTTP_ROUTE),
    reach('virtualServices', 'VirtualServices', VIRTUAL_SERVICE),
    reach('subscriptions', 'Subscriptions', SUBSCRIPTION),
    reach('scaledObjects', 'ScaledObjects', SCALED_OBJECT, 'Functions KEDA scaled to zero show as ready, not idle'),
  ];
}
