/**
 * What the API server's audit log says about the stack's programs: every call they made (verb,
 * resource, answer), the ones RBAC refused, and, per Function, how often the controller updated its
 * Deployment, Service and HorizontalPodAutoscaler. The log is the API server's own record, so the
 * counts hold for any controller release, whatever it logs itself.
 */
import * as fs from 'node:fs';

/** One audit event at the Metadata level, with the fields the run reads. */
export interface AuditEvent {
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string };
  readonly objectRef?: {
    readonly resource?: string; readonly subresource?: string; readonly namespace?: string; readonly name?: string; readonly apiGroup?: string;
  };
  readonly responseStatus?: { readonly code?: number; readonly message?: string };
  readonly annotations?: { readonly [key: string]: string };
  readonly requestReceivedTimestamp: string;
}

/** The audit log, read from some byte offset on. */
export class AuditLog {
  constructor(public readonly file: string) {}

  /** The log's size now: an offset to read from later. */
  public get offset(): number {
    return fs.existsSync(this.file) ? fs.statSync(this.file).size : 0;
  }

  /** The events written since `from` (a value of {@link offset}). */
  public events(from = 0): AuditEvent[] {
    if (!fs.existsSync(this.file)) return [];
    const text = fs.readFileSync(this.file).subarray(from).toString('utf8');
    return text.split('\n').flatMap(line => {
      if (!line.startsWith('{')) return [];
      try {
        return [JSON.parse(line) as AuditEvent];
      } catch {
        return [];
      }
    });
  }
}

/** A call as a ClusterRole rule names it: `update apps/deployments`, `update functions/status`. */
export function callOf(event: AuditEvent): string {
  const ref = event.objectRef;
  if (!ref?.resource) return `${event.verb} ${event.requestURI.split('?')[0]}`;
  const group = ref.apiGroup ? `${ref.apiGroup}/` : '';
  return `${event.verb} ${group}${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''}${ref.namespace ? '' : ' (cluster-wide)'}`;
}

/** Whether RBAC refused the call. */
export function isDenied(event: AuditEvent): boolean {
  return event.annotations?.['authorization.k8s.io/decision'] === 'forbid' || event.responseStatus?.code === 403;
}

/** The calls of one user, counted, most frequent first. */
export function callCounts(events: readonly AuditEvent[], username: string): Array<{ call: string; count: number; denied: number }> {
  const counts = new Map<string, { call: string; count: number; denied: number }>();
  for (const e of events) {
    if (e.user.username !== username) continue;
    const call = callOf(e);
    const entry = counts.get(call) ?? { call, count: 0, denied: 0 };
    entry.count++;
    if (isDenied(e)) entry.denied++;
    counts.set(call, entry);
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || a.call.localeCompare(b.call));
}

/** The refused calls of these users, as `user: call name: message`. */
export function denials(events: readonly AuditEvent[], usernames: readonly string[]): string[] {
  return events.filter(e => usernames.includes(e.user.username) && isDenied(e))
    .map(e => `${e.user.username.split(':').pop()}: ${callOf(e)} ${e.objectRef?.namespace ?? ''}/${e.objectRef?.name ?? ''}: ${e.responseStatus?.message ?? ''}`);
}

/** The controller's updates of one Function's objects. */
export interface UpdateCounts {
  deployment: number;
  service: number;
  hpa: number;
}

/**
 * Counts the controller's successful updates by Function (`namespace/name`): of a Deployment or
 * HorizontalPodAutoscaler named `<function>-<5 characters>` (both controllers use generateName),
 * and of the Service named as the Function.
 *
 * @param functionOf the Function key an object name belongs to, or undefined
 */
export function updateCounts(events: readonly AuditEvent[], username: string, functionOf: (namespace: string, resource: string, name: string) => string | undefined): Map<string, UpdateCounts> {
  const counts = new Map<string, UpdateCounts>();
  for (const e of events) {
    const ref = e.objectRef;
    if (e.user.username !== username || (e.verb !== 'update' && e.verb !== 'patch') || ref?.subresource || !ref?.namespace || !ref.name) continue;
    if ((e.responseStatus?.code ?? 0) >= 300) continue;
    const kind = ref.resource === 'deployments' ? 'deployment' : ref.resource === 'services' ? 'service' : ref.resource === 'horizontalpodautoscalers' ? 'hpa' : undefined;
    if (!kind) continue;
    const key = functionOf(ref.namespace, ref.resource!, ref.name);
    if (!key) continue;
    const entry = counts.get(key) ?? { deployment: 0, service: 0, hpa: 0 };
    entry[kind]++;
    counts.set(key, entry);
  }
  return counts;
}

/**
 * What RBAC rules grant that a user never called: each `verb group/resource` of the rules (no
 * wildcards expected) without an audit event of that user, for least privilege.
 */
export function unusedGrants(events: readonly AuditEvent[], username: string, rules: readonly any[]): string[] {
  const called = new Set(events.filter(e => e.user.username === username && e.objectRef?.resource)
    .map(e => `${e.verb} ${e.objectRef!.apiGroup ?? ''}/${e.objectRef!.resource}${e.objectRef!.subresource ? `/${e.objectRef!.subresource}` : ''}`));
  // A watch or list is also how a cache gets, and a get by name of a list.
  const unused: string[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? ['']) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) {
          if (!called.has(`${verb} ${group}/${resource}`)) unused.push(`${verb} ${group ? `${group}/` : ''}${resource}${rule.resourceNames ? ` (${rule.resourceNames.join(', ')})` : ''}`);
        }
      }
    }
  }
  return unused;
}
