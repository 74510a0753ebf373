/**
 * The contract between the Function Controller and a Function's container, per release: the port,
 * the defaults of the runtime images, the variables the controller sets and where they stand
 * beside the Function's own, the files the container sees, and when dependencies are installed.
 * Kept apart from `runtimes.ts`, which the webhook server bundles.
 *
 * The runtime servers themselves (`server.mjs`, `lib/ce.js`, `server.py`) are the same in 1.11.1
 * and 1.13.0; what differs is how the controller starts them: 1.11.1 builds an image with the
 * handler and its dependencies in it, 1.13.0 hands the handler over in variables and installs the
 * dependencies in the container at every start.
 */
import { DEFAULT_RELEASE, ServerlessRelease } from './release';
import { RuntimeFamily, runtimeFamily } from './runtimes';

/**
 * The port the runtime images listen on. The 1.11.1 controller also hands it to the container as
 * `FUNC_PORT`, which the images ignore; 1.13.0 sets no `FUNC_PORT`.
 */
export const FUNCTION_PORT = 8080;

/** Seconds a request may take when the Function sets no `FUNC_TIMEOUT`: the runtimes' default. */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 180;

/** Megabytes a request body may have on Node.js when the Function sets no `REQ_MB_LIMIT`. */
export const DEFAULT_BODY_SIZE_LIMIT_MB = 1;

/** Where Function Pods send traces by default (`TRACE_COLLECTOR_ENDPOINT`), as upstream's 1.11.1 and 1.13.0 values say. */
export const DEFAULT_TRACE_COLLECTOR_ENDPOINT = 'http://telemetry-otlp-traces.kyma-system.svc.cluster.local:4318/v1/traces';

/**
 * Seconds a Function container has to answer `/healthz` before Kubernetes restarts it: the
 * controller's startup probe (30 failures, 5 s apart) in both releases. Under 1.13.0 the
 * dependency installation runs inside this time.
 */
export const STARTUP_PROBE_SECONDS = 150;

/**
 * Bytes one environment variable may have, `NAME=value` and its terminating zero included: Linux
 * refuses to start a program with a longer one (`MAX_ARG_STRLEN`, "argument list too long").
 * 1.13.0 hands inline sources over in `FUNC_HANDLER_SOURCE` and `FUNC_HANDLER_DEPENDENCIES`.
 */
export const MAX_ENV_VAR_BYTES = 131072;

/**
 * The Secret in a Function's namespace whose `.npmrc` and `pip.conf` a 1.13.0 Pod installs its
 * dependencies with (upstream's `packageRegistryConfigSecretName`, mounted when it exists).
 */
export const PACKAGE_REGISTRY_CONFIG_SECRET = 'serverless-package-registry-config';

/** One environment variable of a Function's container. */
export interface ContainerEnvVar {
  readonly name: string;
  readonly value: string;
}

/** When a release installs a Function's dependencies. */
export enum DependencyInstallTime {
  /** Once, when the Function's image is built (a build Job); every Pod of the image has the same packages. */
  BUILD = 'build',
  /** At every start of every Pod, before the server starts, resolving the versions anew each time. */
  POD_START = 'pod-start',
}

/** How a release runs a Function's container, beyond the runtime server itself. */
export interface RuntimeContract {
  /** The release. */
  readonly release: ServerlessRelease;
  /** When dependencies are installed. */
  readonly installTime: DependencyInstallTime;
  /** The arguments of `npm` that install a Node.js Function's `package.json`, as the release runs it. */
  readonly npmInstall: readonly string[];
  /** Whether `npm` installs `devDependencies` too (no `--omit=dev`, and the images set no `NODE_ENV`). */
  readonly npmInstallsDevDependencies: boolean;
  /** The arguments of `pip` that install a Python Function's `requirements.txt`, as the release runs it. */
  readonly pipInstall: readonly string[];
  /** Whether the controller hands an inline source over in `FUNC_HANDLER_SOURCE` and `FUNC_HANDLER_DEPENDENCIES`. */
  readonly sourceInEnv: boolean;
  /**
   * The Node.js version of each Node.js runtime's image. A runtime the release's CRD does not
   * accept has none.
   */
  readonly nodeVersions: { readonly [runtime: string]: string };
  /** The Python version of each Python runtime's image. */
  readonly pythonVersions: { readonly [runtime: string]: string };
}

const CONTRACTS: { readonly [R in ServerlessRelease]: RuntimeContract } = {
  [ServerlessRelease.V1_11_1]: {
    release: ServerlessRelease.V1_11_1,
    installTime: DependencyInstallTime.BUILD,
    // The runtime Dockerfiles of the 1.11.1 chart (dockerfile-<runtime> ConfigMaps).
    npmInstall: ['install', '--omit=dev'],
    npmInstallsDevDependencies: false,
    pipInstall: ['install', '--no-cache-dir', '-r', 'requirements.txt'],
    sourceInEnv: false,
    nodeVersions: { nodejs20: '20.15.1', nodejs22: '22.22.0' },
    pythonVersions: { python312: '3.12.13' },
  },
  [ServerlessRelease.V1_13_0]: {
    release: ServerlessRelease.V1_13_0,
    installTime: DependencyInstallTime.POD_START,
    // The container's `sh -c` of the buildless controller (resources/deployment.go).
    npmInstall: ['install', '--prefer-offline', '--no-audit', '--progress=false'],
    npmInstallsDevDependencies: true,
    pipInstall: ['install', '--target=/kubeless/.local', '--no-cache-dir', '-r', 'requirements.txt'],
    sourceInEnv: true,
    nodeVersions: { nodejs20: '20.15.1', nodejs22: '22.23.1', nodejs24: '24.18.0' },
    pythonVersions: { python312: '3.12.13' },
  },
};

/**
 * How a release runs a Function's container.
 *
 * @param release the release
 * @returns its contract
 */
export function runtimeContract(release: ServerlessRelease = DEFAULT_RELEASE): RuntimeContract {
  return CONTRACTS[release];
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
  /**
   * The release of the controller.
   *
   * @default DEFAULT_RELEASE
   */
  readonly release?: ServerlessRelease;
  /**
   * The Function's inline source, which 1.13.0 hands over in `FUNC_HANDLER_SOURCE` and
   * `FUNC_HANDLER_DEPENDENCIES`.
   *
   * @default - a Git source: no such variables
   */
  readonly inline?: { readonly source: string; readonly dependencies?: string };
}

/** The controller's variables of a Function's container, and where they stand beside the Function's own `spec.env`. */
export interface ControllerEnv {
  /** Variables placed before `spec.env`: the Function's own variables of the same name win over them. */
  readonly beforeFunctionEnv: readonly ContainerEnvVar[];
  /** Variables placed after `spec.env`: they win over the Function's own variables of the same name. */
  readonly afterFunctionEnv: readonly ContainerEnvVar[];
}

/**
 * The variables the controller puts into a Function's container, in its order, split by where
 * they stand beside the Function's own `spec.env` (a name given twice keeps the later value, as
 * in Kubernetes).
 *
 * - 1.11.1 puts them all after `spec.env`: first the runtime's (`FUNC_RUNTIME`, where the handler
 *   is), then the Function's identity and the stack's addresses. A Function overrides none.
 * - 1.13.0 puts the identity and addresses (`FUNC_NAME`, `FUNC_RUNTIME`, `SERVICE_NAMESPACE`,
 *   `TRACE_COLLECTOR_ENDPOINT`, `PUBLISHER_PROXY_ADDRESS`, and Python's `PYTHONUNBUFFERED`,
 *   `MOD_NAME`, `FUNC_HANDLER`) before `spec.env`, so a Function's own `FUNC_NAME` or
 *   `PUBLISHER_PROXY_ADDRESS` wins; after it come the inline source (`FUNC_HANDLER_SOURCE`,
 *   `FUNC_HANDLER_DEPENDENCIES`) and where the handler is (`HANDLER_PATH` or `FUNCTION_PATH`).
 *   No `FUNC_PORT`, and no `PYTHONPATH` variable (the container's shell prepends `/kubeless/.local`).
 *
 * Paths are the images' own: the Node.js images load `./function/handler.js` (`HANDLER_PATH`,
 * relative to `/usr/src/app`); the Python image imports the module `handler` (`MOD_NAME`) from
 * `/kubeless` (`FUNCTION_PATH`) and calls `main` (`FUNC_HANDLER`).
 *
 * @returns the variables, in the controller's order
 */
export function controllerEnv(options: FunctionContainerEnvOptions): ControllerEnv {
  const family = runtimeFamily(options.runtime);
  const trace = options.traceCollectorEndpoint ?? DEFAULT_TRACE_COLLECTOR_ENDPOINT;
  if ((options.release ?? DEFAULT_RELEASE) === ServerlessRelease.V1_13_0) {
    const general: ContainerEnvVar[] = [
      { name: 'FUNC_NAME', value: options.name },
      { name: 'FUNC_RUNTIME', value: options.runtime },
      { name: 'SERVICE_NAMESPACE', value: options.namespace },
      { name: 'TRACE_COLLECTOR_ENDPOINT', value: trace },
      { name: 'PUBLISHER_PROXY_ADDRESS', value: options.publisherProxyAddress },
    ];
    if (family === RuntimeFamily.PYTHON) {
      general.push({ name: 'PYTHONUNBUFFERED', value: 'TRUE' }, { name: 'MOD_NAME', value: 'handler' }, { name: 'FUNC_HANDLER', value: 'main' });
    }
    const source: ContainerEnvVar[] = options.inline ? [
      { name: 'FUNC_HANDLER_SOURCE', value: options.inline.source },
      { name: 'FUNC_HANDLER_DEPENDENCIES', value: options.inline.dependencies ?? '' },
    ] : [];
    if (family === RuntimeFamily.NODEJS) source.push({ name: 'HANDLER_PATH', value: './function/handler.js' });
    if (family === RuntimeFamily.PYTHON) source.push({ name: 'FUNCTION_PATH', value: '/kubeless' });
    return { beforeFunctionEnv: general, afterFunctionEnv: source };
  }
  const runtimeEnv: ContainerEnvVar[] = [{ name: 'FUNC_RUNTIME', value: options.runtime }];
  switch (family) {
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
  return {
    beforeFunctionEnv: [],
    afterFunctionEnv: [
      ...runtimeEnv,
      { name: 'FUNC_NAME', value: options.name },
      { name: 'SERVICE_NAMESPACE', value: options.namespace },
      { name: 'TRACE_COLLECTOR_ENDPOINT', value: trace },
      { name: 'PUBLISHER_PROXY_ADDRESS', value: options.publisherProxyAddress },
      { name: 'FUNC_HANDLER', value: 'main' },
      { name: 'MOD_NAME', value: 'handler' },
      { name: 'FUNC_PORT', value: String(FUNCTION_PORT) },
    ],
  };
}

/**
 * The variables the controller puts into a Function's container, in its order (see
 * {@link controllerEnv} for where each release places them beside the Function's own).
 *
 * @returns the variables, in the controller's order
 */
export function functionContainerEnv(options: FunctionContainerEnvOptions): ContainerEnvVar[] {
  const { beforeFunctionEnv, afterFunctionEnv } = controllerEnv(options);
  return [...beforeFunctionEnv, ...afterFunctionEnv];
}

/**
 * A Function container's whole environment list: the controller's variables and the Function's
 * own, in the order of the release's controller. Where a name is given twice, the later wins.
 *
 * @param functionEnv the Function's own variables (`spec.env`, resolved), in their order
 * @param options the Function and the stack
 * @returns the list, in the controller's order
 */
export function containerEnv(functionEnv: readonly ContainerEnvVar[], options: FunctionContainerEnvOptions): ContainerEnvVar[] {
  const { beforeFunctionEnv, afterFunctionEnv } = controllerEnv(options);
  return [...beforeFunctionEnv, ...functionEnv, ...afterFunctionEnv];
}

/** The files a Function container finds for an inline source. */
export interface InlineSourceFiles {
  /** The handler's text (`handler.js`, `handler.py`). */
  readonly handler: string;
  /** The dependencies file's text (`package.json`, `requirements.txt`). */
  readonly dependencies: string;
}

/**
 * The files the container of an inline Function finds, as each release writes them.
 *
 * - 1.11.1 stores source and dependencies in a ConfigMap and copies them into the image as they
 *   are; Node.js dependencies of nothing but spaces become `{}`.
 * - 1.13.0's container writes them with `echo "${FUNC_HANDLER_SOURCE}" > handler.js`, which adds a
 *   line break; empty dependencies leave `{}` (Node.js) or an empty line (Python), and anything
 *   else, blank lines included, is written as it is.
 *
 * @param release the release
 * @param runtime the runtime, such as `nodejs24`
 * @param source `spec.source.inline.source`
 * @param dependencies `spec.source.inline.dependencies`
 */
export function inlineSourceFiles(release: ServerlessRelease, runtime: string, source: string, dependencies = ''): InlineSourceFiles {
  const node = runtimeFamily(runtime) === RuntimeFamily.NODEJS;
  if (release === ServerlessRelease.V1_13_0) {
    return {
      handler: `${source}\n`,
      dependencies: dependencies !== '' ? `${dependencies}\n` : node ? '{}\n' : '\n',
    };
  }
  return { handler: source, dependencies: node && dependencies.replace(/^ +| +$/g, '') === '' ? '{}' : dependencies };
}

/**
 * Variables a container cannot start with: longer than {@link MAX_ENV_VAR_BYTES}, such as a
 * 1.13.0 `FUNC_HANDLER_SOURCE` of a handler above 128 KiB.
 *
 * @returns the names of the variables too long, with their size in bytes
 */
export function oversizedEnv(env: readonly ContainerEnvVar[]): { readonly name: string; readonly bytes: number }[] {
  return env
    .map(({ name, value }) => ({ name, bytes: Buffer.byteLength(`${name}=${value}`) + 1 }))
    .filter(v => v.bytes > MAX_ENV_VAR_BYTES);
}

/**
 * Variables upstream's 1.13.0 documentation describes that the runtime images of 1.11.1 and
 * 1.13.0 (`nodejs20`, `nodejs22`, `nodejs24`, `python312`) do not read: they are for the newer
 * `nodejs26` and `python314` images, which no release's CRD accepts yet. Each with what the
 * images read instead, by runtime family.
 */
const NEWER_RUNTIME_VARIABLES: { readonly [name: string]: { readonly [F in RuntimeFamily]: string } } = {
  FUNC_BODY_MB_LIMIT: { [RuntimeFamily.NODEJS]: 'REQ_MB_LIMIT (megabytes)', [RuntimeFamily.PYTHON]: 'FUNC_MEMFILE_MAX (bytes)' },
  SERVER_INTERNAL_LOGGER: { [RuntimeFamily.NODEJS]: 'KYMA_INTERNAL_LOGGER_ENABLED', [RuntimeFamily.PYTHON]: 'KYMA_INTERNAL_LOGGER_ENABLED' },
  SERVER_NUMTHREADS: { [RuntimeFamily.NODEJS]: 'nothing (one Node.js process)', [RuntimeFamily.PYTHON]: 'CHERRYPY_NUMTHREADS' },
  HANDLER_FUNC_NAME: { [RuntimeFamily.NODEJS]: 'nothing: they call main', [RuntimeFamily.PYTHON]: 'nothing: they call main' },
  HANDLER_MOD_NAME: { [RuntimeFamily.NODEJS]: 'nothing: they load handler.js', [RuntimeFamily.PYTHON]: 'nothing: they import handler' },
};

/**
 * Why a variable of a Function has no effect on its runtime's image, when upstream's
 * documentation names it for newer runtimes only (`FUNC_BODY_MB_LIMIT` on `nodejs24`, say).
 *
 * @param runtime the runtime, such as `nodejs24`
 * @param name the variable's name
 * @returns the explanation and what the image reads instead, or undefined when the image reads it (or it is unknown)
 */
export function unreadVariableNote(runtime: string, name: string): string | undefined {
  const family = runtimeFamily(runtime);
  const instead = family && NEWER_RUNTIME_VARIABLES[name]?.[family];
  if (!instead) return undefined;
  return `${name}: the ${runtime} image does not read it (upstream's documentation names it for nodejs26 and python314, `
    + `which no release's Function CRD accepts); it reads ${instead}`;
}
