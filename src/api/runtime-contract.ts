/**
 * The contract between the Function Controller (1.11.1) and a Function's container: the port,
 * the defaults of the runtime images, and the variables the controller sets. Kept apart from
 * `runtimes.ts`, which the webhook server bundles.
 */
import { RuntimeFamily, runtimeFamily } from './runtimes';

/**
 * The port the runtime images listen on, which the controller also hands the container as
 * `FUNC_PORT` (the 1.11.1 images ignore the variable and always listen on 8080).
 */
export const FUNCTION_PORT = 8080;

/** Seconds a request may take when the Function sets no `FUNC_TIMEOUT`: the runtimes' default. */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 180;

/** Megabytes a request body may have on Node.js when the Function sets no `REQ_MB_LIMIT`. */
export const DEFAULT_BODY_SIZE_LIMIT_MB = 1;

/** Where Function Pods send traces by default (`TRACE_COLLECTOR_ENDPOINT`), as upstream's 1.11.1 values say. */
export const DEFAULT_TRACE_COLLECTOR_ENDPOINT = 'http://telemetry-otlp-traces.kyma-system.svc.cluster.local:4318/v1/traces';

/** One environment variable of a Function's container. */
export interface ContainerEnvVar {
  readonly name: string;
  readonly value: string;
}

/** What {@link functionContainerEnv} needs to know about a Function and the stack. */
export interface FunctionContainerEnvOptions {
  /** The Function's runtime, such as `nodejs22`. */
  readonly runtime: string;
  /** The Function's name. */
  readonly name: string;
  /** The Function's namespace. */
  readonly namespace: string;
  /** The stack's `PUBLISHER_PROXY_ADDRESS`. */
  readonly publisherProxyAddress: string;
  /**
   * The stack's `TRACE_COLLECTOR_ENDPOINT`.
   *
   * @default DEFAULT_TRACE_COLLECTOR_ENDPOINT
   */
  readonly traceCollectorEndpoint?: string;
}

/**
 * The variables the 1.11.1 controller puts into a Function's container after the Function's own
 * `spec.env`, in its order: first the runtime's (`FUNC_RUNTIME`, and where the handler is), then
 * the Function's identity and the stack's addresses. A name given twice keeps the later value,
 * as in Kubernetes, so a Function cannot override these.
 *
 * Paths are the images' own: the Node.js images load `./function/handler.js` (`HANDLER_PATH`,
 * relative to `/usr/src/app`); the Python image imports the module `handler` (`MOD_NAME`) from
 * `/kubeless` (`FUNCTION_PATH`) and calls `main` (`FUNC_HANDLER`).
 *
 * @returns the variables, in the controller's order
 */
export function functionContainerEnv(options: FunctionContainerEnvOptions): ContainerEnvVar[] {
  const runtimeEnv: ContainerEnvVar[] = [{ name: 'FUNC_RUNTIME', value: options.runtime }];
  switch (runtimeFamily(options.runtime)) {
    case RuntimeFamily.NODEJS:
      runtimeEnv.push({ name: 'HANDLER_PATH', value: './function/handler.js' });
      break;
    case RuntimeFamily.PYTHON:
      runtimeEnv.push(
        { name: 'PYTHONPATH', value: '$(KUBELESS_INSTALL_VOLUME)/lib.python3.12/site-packages:$(KUBELESS_INSTALL_VOLUME)' },
        { name: 'FUNCTION_PATH', value: '/kubeless' },
        { name: 'PYTHONUNBUFFERED', value: 'TRUE' },
      );
      break;
    default:
      break;
  }
  return [
    ...runtimeEnv,
    { name: 'FUNC_NAME', value: options.name },
    { name: 'SERVICE_NAMESPACE', value: options.namespace },
    { name: 'TRACE_COLLECTOR_ENDPOINT', value: options.traceCollectorEndpoint ?? DEFAULT_TRACE_COLLECTOR_ENDPOINT },
    { name: 'PUBLISHER_PROXY_ADDRESS', value: options.publisherProxyAddress },
    { name: 'FUNC_HANDLER', value: 'main' },
    { name: 'MOD_NAME', value: 'handler' },
    { name: 'FUNC_PORT', value: String(FUNCTION_PORT) },
  ];
}
