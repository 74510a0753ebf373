/**
 * Names that the monitoring objects (./monitoring.ts, ./_monitoring-rules.ts) and the workloads
 * they watch share, in a module of their own: a stack without `monitoring` loads none of the
 * monitoring modules (its rules, dashboard and the webhook's metric names).
 */

/** The name of the port the stack's workloads serve Prometheus metrics on. */
export const METRICS_PORT_NAME = 'http-metrics';

/** The 1.11.1 controller's reconciler of Functions: the `controller` label of its series (`Named("function-controller")` at 1.11.1). */
export const FUNCTION_RECONCILER = 'function-controller';
