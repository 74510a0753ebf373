/**
 * Errors of Kubernetes API calls, shared by the webhook and the command line.
 */

/**
 * The HTTP status of a failed Kubernetes API call, if it has one: `code` of a client-node
 * `ApiException` (the command line) and of the webhook's own `KubeApiError`
 * (`src/webhook/kube-client.ts`), which keeps the same field for this reason. Network errors
 * have none (their `code` is a string such as `ECONNREFUSED`).
 */
export function statusOf(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}
