/**
 * Small helpers to write PromQL and Prometheus durations from code.
 */
import { Duration } from 'cdk8s';

/**
 * A duration as Prometheus writes it, in its largest whole unit: `30s`, `15m`, `1h`, `14d`.
 * Durations are whole seconds here; the props that take them are checked for that first.
 */
export function promDuration(duration: Duration): string {
  const seconds = duration.toSeconds({ integral: false });
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/** A PromQL string literal. */
function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Equality matchers, in the order given: `namespace="kyma-system",job="serverless-webhook"`. */
export function matchers(labels: { readonly [name: string]: string }): string {
  return Object.entries(labels).map(([name, value]) => `${name}=${quote(value)}`).join(',');
}

/** A matcher of a label that is one of the values (`=~`), or none of them (`!~`). */
export function matchesOneOf(name: string, values: readonly string[], negate = false): string {
  const regex = values.map(v => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return `${name}${negate ? '!~' : '=~'}${quote(regex)}`;
}
