/**
 * PromQL as Prometheus' own grammar reads it: `@prometheus-io/lezer-promql`, the parser of
 * Prometheus' web UI. It checks syntax (and function names), not types.
 */
import { parser } from '@prometheus-io/lezer-promql';

/** What the parser made of an expression: its syntax errors and the metric names it selects. */
export interface ParsedPromql {
  /** Each syntax error as `at <offset>: <text around it>`; empty when the expression parses. */
  readonly errors: string[];
  /** The metric names of its vector selectors, sorted, without duplicates. */
  readonly metrics: string[];
}

/**
 * Parses an expression. Grafana's `$__rate_interval` is read as a duration, as Grafana substitutes one.
 */
export function parsePromql(expression: string): ParsedPromql {
  const text = expression.replace(/\$__rate_interval/g, '5m');
  const errors: string[] = [];
  const metrics = new Set<string>();
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: ${JSON.stringify(text.slice(Math.max(0, node.from - 20), node.to + 20))}`);
      if (node.name === 'VectorSelector') {
        const name = node.node.getChild('Identifier');
        if (name) metrics.add(text.slice(name.from, name.to));
      }
    },
  });
  return { errors, metrics: [...metrics].sort() };
}
