/**
 * `run --from-cluster`: the Secrets and ConfigMaps of the current kube context, read with the
 * kubeconfig's credentials, for the keys a Function's env and Secret mounts name; and the
 * Serverless release the cluster runs, read from its Function CRD.
 */
import { FUNCTION_CRD_NAME, ServerlessRelease, isServerlessRelease } from '../../api';
import { ClusterValues } from '../../runtime/function-env';
import { Cluster, describeApiError, statusOf } from '../_kube';
import { RestClient } from '../_rest';

/**
 * Reads Secrets and ConfigMaps of a cluster.
 *
 * @param cluster the loaded kubeconfig
 * @param context the context's name, for messages
 */
export async function clusterValues(cluster: Cluster, context: string): Promise<ClusterValues> {
  const client = await RestClient.create(cluster.kubeConfig);
  const read = async (plural: string, kind: string, namespace: string, name: string): Promise<{ [key: string]: string } | undefined> => {
    try {
      const objectPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}`;
      const { body } = await client.request({ method: 'GET', path: objectPath });
      return (body?.data ?? {}) as { [key: string]: string };
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw describeApiError(e, `reading ${kind} ${namespace}/${name} (for --from-cluster)`, cluster);
    }
  };
  return {
    where: `the cluster of context ${context}`,
    async readSecret(namespace, name) {
      const data = await read('secrets', 'Secret', namespace, name);
      return data && Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64')]));
    },
    readConfigMap: (namespace, name) => read('configmaps', 'ConfigMap', namespace, name),
  };
}

/**
 * The Serverless release a cluster runs, as its Function CRD tells: the release annotation this
 * package writes on it (`cdk8s-kyma-serverless/release`), else the CRD's runtimes (only the
 * buildless CRD, 1.13.0's, lists `nodejs24`).
 *
 * @param cluster the loaded kubeconfig
 * @param annotation the annotation that names the release
 * @returns the release, or undefined when the CRD cannot be read (absent, or not allowed)
 */
export async function clusterRelease(cluster: Cluster, annotation: string): Promise<ServerlessRelease | undefined> {
  const client = await RestClient.create(cluster.kubeConfig);
  let crd: any;
  try {
    crd = (await client.request({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${FUNCTION_CRD_NAME}` })).body;
  } catch {
    return undefined;
  }
  const annotated = crd?.metadata?.annotations?.[annotation];
  if (isServerlessRelease(annotated)) return annotated;
  const versions: any[] = Array.isArray(crd?.spec?.versions) ? crd.spec.versions : [];
  const runtimes = versions.flatMap(v => v?.schema?.openAPIV3Schema?.properties?.spec?.properties?.runtime?.enum ?? []);
  if (!runtimes.length) return undefined;
  return runtimes.includes('nodejs24') ? ServerlessRelease.V1_13_0 : ServerlessRelease.V1_11_1;
}
