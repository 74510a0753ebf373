/**
 * How the commands reach a cluster: kubeconfig, context and namespace chosen like kubectl's.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { statusOf } from '../_api-errors';
import { RequestTimeoutError, triesOf } from './_rest';
import { CliError } from './errors';

export { statusOf };

/** The global options every cluster command takes. */
export interface ClusterOptions {
  /** A kubeconfig file; else `KUBECONFIG`, `~/.kube/config`, or the Pod's ServiceAccount. */
  readonly kubeconfig?: string;
  /** The kubeconfig context; else its current context. */
  readonly context?: string;
  /** The namespace; else the context's, else `default`. */
  readonly namespace?: string;
}

/** A loaded kubeconfig and the namespace to work in. */
export interface Cluster {
  readonly kubeConfig: KubeConfig;
  /** The namespace given with `-n`, else the context's, else `default`. */
  readonly namespace: string;
  /** The API server's URL, for messages. */
  readonly server: string;
}

/** What a command that reaches a cluster says when there is no kubeconfig to read. */
export const NO_KUBECONFIG = 'No kubeconfig found: KUBECONFIG is not set, there is no ~/.kube/config, and this is no Pod with a ServiceAccount. '
  + 'Point at one with --kubeconfig <file> or KUBECONFIG=<file>, or write ~/.kube/config (the tool that made the cluster does, '
  + 'such as kind, k3d or your cloud\'s CLI); --context picks a context in it';

/**
 * Whether client-node loaded its last resort, `http://localhost:8080` without credentials, which
 * it loads when it finds no kubeconfig at all (and which fails every call with "HTTP protocol is
 * not allowed when skipTLSVerify is not set").
 */
function isFallback(kubeConfig: KubeConfig): boolean {
  const clusters = kubeConfig.getClusters();
  return kubeConfig.getCurrentContext() === 'loaded-context' && clusters.length === 1 && clusters[0].name === 'cluster'
    && clusters[0].server === 'http://localhost:8080' && kubeConfig.getUsers().length === 1 && kubeConfig.getUsers()[0].name === 'user';
}

/**
 * Loads the kubeconfig the way kubectl does.
 *
 * @throws CliError when there is no kubeconfig, the file cannot be read or the context does not exist
 */
export async function connect(options: ClusterOptions): Promise<Cluster> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  const fromEnv = !options.kubeconfig && process.env.KUBECONFIG ? ` ${process.env.KUBECONFIG} (KUBECONFIG)` : '';
  try {
    if (options.kubeconfig) kubeConfig.loadFromFile(options.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (e) {
    throw new CliError(`Cannot load the kubeconfig${options.kubeconfig ? ` ${options.kubeconfig}` : fromEnv}: ${(e as Error).message}`);
  }
  if (!options.kubeconfig && !process.env.KUBECONFIG && isFallback(kubeConfig)) throw new CliError(NO_KUBECONFIG);
  if (options.context) {
    if (!kubeConfig.getContextObject(options.context)) {
      const known = kubeConfig.getContexts().map(c => c.name);
      throw new CliError(`No context '${options.context}' in the kubeconfig; it has: ${known.join(', ') || 'none'}`);
    }
    kubeConfig.setCurrentContext(options.context);
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new CliError('The kubeconfig has no current cluster: give --context, or set one with `kubectl config use-context`');
  const namespace = options.namespace ?? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
  return { kubeConfig, namespace, server: cluster.server };
}

/**
 * Turns an error of a Kubernetes API call into a message for the user: unreachable servers,
 * missing permissions and API errors each say what went wrong and where.
 *
 * @param e the error client-node threw
 * @param what what the call was doing, such as `listing Functions`
 * @param cluster the cluster, for its URL
 */
export function describeApiError(e: unknown, what: string, cluster: Cluster): CliError {
  const status = statusOf(e);
  const body = (e as { body?: unknown }).body;
  let message = (e as Error).message ?? String(e);
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) message = parsed.message;
    } catch {
      // Not a Status: keep the error's own message.
    }
  }
  const tries = triesOf(e);
  if (e instanceof RequestTimeoutError) return new CliError(`The API server at ${cluster.server} gave ${message} while ${what}${tries}`);
  if (status === undefined) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as { code?: string }).code;
    return new CliError(`Cannot reach the API server at ${cluster.server} while ${what}: ${cause ? `${cause} ` : ''}${message}${tries}`);
  }
  if (status === 401) return new CliError(`The API server at ${cluster.server} did not accept the credentials while ${what}: ${message}`);
  if (status === 403) return new CliError(`Not allowed while ${what}: ${message}`);
  return new CliError(`The API server answered ${status} while ${what}: ${message}${tries}`);
}
