/**
 * How an endpoint finds the exposure defaults of the stack its Functions run under, without
 * holding the stack: a FunctionNamespace marks itself with its stack's `exposure` (the default
 * `via` and the domain short host names are completed with), and `expose()` reads the mark of the
 * chart it is in. Functions outside a FunctionNamespace get no defaults.
 */
import { Chart } from 'cdk8s';
import { IConstruct } from 'constructs';
import { Exposure } from './exposure';

const DEFAULTS_SYMBOL = Symbol.for('cdk8s-kyma-serverless.exposure-defaults');

/** The exposure defaults of a stack, as endpoints use them. */
export interface ExposureDefaults {
  /**
   * How Functions are exposed when `expose()` names no `via`.
   *
   * @default - none: `expose()` must name one
   */
  readonly via?: Exposure;
  /**
   * The domain short host names are completed with.
   *
   * @default - none: `expose()` must give full host names
   */
  readonly domain?: string;
}

/**
 * Marks a chart as giving the exposure defaults of the endpoints inside it.
 *
 * @param chart a FunctionNamespace
 * @param defaults read once construction is done, so a stack's exposure set later still counts
 * @internal
 */
export function _markExposureDefaults(chart: IConstruct, defaults: () => ExposureDefaults | undefined): void {
  Object.defineProperty(chart, DEFAULTS_SYMBOL, { value: defaults });
}

/**
 * The exposure defaults of the chart a construct is in (a FunctionNamespace's: its stack's
 * `exposure`); none for other charts.
 *
 * @param scope a construct inside the chart
 * @internal
 */
export function exposureDefaultsOf(scope: IConstruct): ExposureDefaults {
  const chart = Chart.of(scope) as unknown as { [DEFAULTS_SYMBOL]?: () => ExposureDefaults | undefined };
  return chart[DEFAULTS_SYMBOL]?.() ?? {};
}
