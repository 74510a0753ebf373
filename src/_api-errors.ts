/**
 * Errors of @kubernetes/client-node calls, shared by the webhook and the command line.
 */

/** The HTTP status of a client-node error (`ApiException.code`), if it has one. */
export function statusOf(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}
