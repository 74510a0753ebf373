/**
 * The thresholds of the stack's alerts: a type of the public API (`ServerlessMonitoring.thresholds`).
 */
import { Duration } from 'cdk8s';

/** The thresholds of the alerts, every default resolved. */
export interface AlertThresholds {
  readonly functionNotReadyFor: Duration;
  readonly buildFailurePercent: number;
  readonly webhookLatency: Duration;
  readonly certificateExpiry: Duration;
  readonly registryVolumeUsagePercent: number;
}
