/**
 * `run --from-cluster`: the Secrets and ConfigMaps of the current kube context, read with the
 * kubeconfig's credentials, for the keys a Function's env and Secret mounts name.
 */
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
