/**
 * Prometheus metrics of the webhook server.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What became of a request, the `result` label of the request counter. */
export enum RequestResult {
  /** A review that allowed the Function (with or without a patch). */
  ALLOWED = 'allowed',
  /** A review that denied the Function. */
  DENIED = 'denied',
  /** Not an AdmissionReview about a Function, or not JSON (HTTP 400). */
  BAD_REQUEST = 'bad_request',
  /** A body over the size limit (HTTP 413). */
  TOO_LARGE = 'too_large',
  /** The request was not complete in time (HTTP 408). */
  TIMEOUT = 'timeout',
  /** A health, readiness or metrics request answered (HTTP 200). */
  OK = 'ok',
  /** Not ready, or shutting down (HTTP 503). */
  UNAVAILABLE = 'unavailable',
  /** No such path or method (HTTP 404, 405). */
  NOT_FOUND = 'not_found',
  /** A bug of ours (HTTP 500). */
  ERROR = 'error',
}

/** The webhook's metrics, in their own registry. */
export class WebhookMetrics {
  /** Holds every metric; `/metrics` renders it. */
  public readonly registry = new Registry();
  /** Requests by path and result. */
  public readonly requests: Counter<'path' | 'result'>;
  /** Time from a request's first byte to its response, by path. */
  public readonly duration: Histogram<'path'>;
  /** When the serving certificate expires, as a Unix time. */
  public readonly certificateExpiry: Gauge;

  /**
   * @param processMetrics also export the Node.js process's metrics (memory, event loop, CPU)
   */
  constructor(processMetrics = true) {
    this.requests = new Counter({
      name: 'kyma_serverless_webhook_requests_total',
      help: 'HTTP requests to the webhook, by path and result.',
      labelNames: ['path', 'result'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'kyma_serverless_webhook_request_duration_seconds',
      help: 'Time from the first byte of a request to its response, by path.',
      labelNames: ['path'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.certificateExpiry = new Gauge({
      name: 'kyma_serverless_webhook_certificate_expiry_timestamp_seconds',
      help: 'When the serving certificate expires, as a Unix time.',
      registers: [this.registry],
    });
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }
}
