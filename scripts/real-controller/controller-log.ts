/**
 * What the 1.11.1 controller's JSON log says about each Function: how often it updated the
 * Function's Deployment, Service and HorizontalPodAutoscaler, and the errors it logged.
 */

/** The controller's updates of one Function's objects. */
export interface UpdateCounts {
  deployment: number;
  service: number;
  hpa: number;
}

/** One line of the controller's log (zap JSON), with the fields the run reads. */
interface LogLine {
  readonly level?: string;
  readonly message?: string;
  readonly context?: { readonly name?: string; readonly namespace?: string; readonly error?: unknown };
}

function parse(text: string): LogLine[] {
  return text.split('\n').flatMap(line => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/**
 * Counts the controller's updates by Function (`namespace/name`): the lines `updating Deployment`,
 * `Updating Service` and `Updating HorizontalPodAutoscaler` it logs before each update call.
 *
 * @param text the log, or the part of it since some point
 */
export function updateCounts(text: string): Map<string, UpdateCounts> {
  const counts = new Map<string, UpdateCounts>();
  for (const line of parse(text)) {
    const kind = /^updating Deployment /.test(line.message ?? '') ? 'deployment'
      : /^Updating Service /.test(line.message ?? '') ? 'service'
        : /^Updating HorizontalPodAutoscaler /.test(line.message ?? '') ? 'hpa' : undefined;
    if (!kind || !line.context?.name) continue;
    const key = `${line.context.namespace}/${line.context.name}`;
    const entry = counts.get(key) ?? { deployment: 0, service: 0, hpa: 0 };
    entry[kind]++;
    counts.set(key, entry);
  }
  return counts;
}

/** The controller's error lines, and those that say the API server refused it (RBAC). */
export function errorLines(text: string): { readonly errors: string[]; readonly forbidden: string[] } {
  const errors = parse(text).filter(l => l.level === 'error' || (l.context?.error !== undefined && l.context.error !== null))
    .map(l => `${l.message}${l.context?.error ? `: ${String(l.context.error)}` : ''}`);
  return { errors, forbidden: errors.filter(e => /forbidden/i.test(e)) };
}
