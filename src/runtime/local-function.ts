/**
 * LocalFunction: a Function running on this machine with the contract of the runtime images of a
 * Serverless release (1.11.1 or 1.13.0), without a container or a cluster. It serves the handler
 * on localhost (Node.js on the local `node`, Python on the local `python3`), with the Function's
 * environment and Secret mounts, its dependencies installed when the release installs them (into
 * a cache, as an image build; or at every start, as a 1.13.0 Pod), and a publisher proxy that
 * keeps the events it emits.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { App, Chart } from 'cdk8s';
import { IConstruct } from 'constructs';
import { DEFAULT_RELEASE, RELEASES, RUNTIME_FILES, RuntimeFamily, ServerlessRelease, isServerlessRelease, releaseFacts } from '../api';
import {
  ContainerEnvVar, DependencyInstallTime, FUNCTION_PORT, MAX_ENV_VAR_BYTES, PACKAGE_REGISTRY_CONFIG_SECRET, STARTUP_PROBE_SECONDS, containerEnv,
  controllerEnv, inlineSourceFiles, oversizedEnv, runtimeContract, unreadVariableNote,
} from '../api/runtime-contract';
import { FunctionFolder } from '../function/function-folder';
import { KymaFunction } from '../function/kyma-function';
import { FunctionRuntime } from '../function/runtime';
import { ServerlessStack } from '../stack/serverless-stack';
import { CONTROL_FD, ControlMessage, PRIVATE_ENV } from './_control';
import { nodeServerProgram } from './_node-server';
import { CloudEvent, CloudEventInit, CloudEventMode, decodeCloudEvent, encodeCloudEvent } from './cloudevents';
import { InstalledDependencies, defaultCacheDirectory, installDependencies, pythonVersion } from './dependencies';
import { ClusterValues, FunctionEnvSpec, readEnvFiles, resolveFunctionEnv, resolveSecretMounts, ResolvedMounts } from './function-env';
import { FunctionRequest, FunctionResponse, invokeFunction } from './invoke';

/** Where a line of a LocalFunction's log comes from. */
export enum LogSource {
  /** The Function's standard output. */
  STDOUT = 'stdout',
  /** The Function's standard error. */
  STDERR = 'stderr',
  /** The local runtime: requests, published events, reloads, and notes on what the cluster would do. */
  RUNTIME = 'runtime',
}

/** A line of a LocalFunction's log. */
export interface LogLine {
  readonly source: LogSource;
  readonly text: string;
}

/** Options of a LocalFunction. */
export interface LocalFunctionOptions {
  /**
   * The port to serve the Function on.
   *
   * @default 0 - a free port (see `url`)
   */
  readonly port?: number;
  /**
   * The address to serve the Function on.
   *
   * @default '127.0.0.1'
   */
  readonly host?: string;
  /**
   * Values of the Function's variables by name: keys of Secrets and ConfigMaps it reads, and
   * values that replace what it declares. They win over `envFiles`.
   *
   * @default - none
   */
  readonly env?: { readonly [name: string]: string };
  /**
   * Env files (`NAME=value` lines) with values of the Function's variables, as `env` takes them.
   *
   * @default - none
   */
  readonly envFiles?: readonly string[];
  /**
   * Local folders of the Secrets the Function mounts, by Secret name: one file per key.
   *
   * @default - none
   */
  readonly secretMounts?: { readonly [secretName: string]: string };
  /**
   * Where Secrets and ConfigMaps that `env`, `envFiles` and `secretMounts` do not cover are read.
   *
   * @default - nowhere: they must be given
   */
  readonly cluster?: ClusterValues;
  /**
   * The namespace of a Function that names none (`SERVICE_NAMESPACE`).
   *
   * @default 'default'
   */
  readonly namespace?: string;
  /**
   * A URL the events the Function publishes are forwarded to (another local Function, say).
   *
   * @default - they are kept in `published` and logged only
   */
  readonly publisherProxy?: string;
  /**
   * Reload when the code, the dependencies, function.yaml or an env file change (folders only).
   *
   * @default false
   */
  readonly watch?: boolean;
  /**
   * Where dependencies are installed.
   *
   * @default - `KYMA_SERVERLESS_CACHE`, else `~/.cache/cdk8s-kyma-serverless`
   */
  readonly cacheDirectory?: string;
  /**
   * The Python interpreter, 3.11 or newer.
   *
   * @default 'python3'
   */
  readonly python?: string;
  /**
   * Receives every line of the log as it comes.
   *
   * @default - the log is kept in `logs` only
   */
  readonly log?: (line: LogLine) => void;
  /**
   * The Serverless release whose runtime contract the Function runs with: how the controller
   * composes the container's variables, writes an inline source, and when dependencies are
   * installed (1.11.1: once, into a cache, as the image build; 1.13.0: at every start, as every
   * Pod does). The runtime servers are the same in both.
   *
   * @default - the release of the app's stack when the source knows it (`FunctionObjectSource.releaseOf`), else ServerlessRelease.V1_11_1
   */
  readonly release?: ServerlessRelease;
  /**
   * A local folder holding what the Secret `serverless-package-registry-config` of the Function's
   * namespace holds: `.npmrc` for npm, `pip.conf` for pip. A 1.13.0 Pod installs its dependencies
   * with them at every start; here npm and pip use them instead of this machine's settings, in
   * either release.
   *
   * @default - the Secret from `cluster` when it has one, else this machine's own npm and pip settings
   */
  readonly packageRegistryConfig?: string;
  /**
   * The Node.js executable for Node.js Functions. The runtime images run `nodejs24` on Node.js 24:
   * give a Node.js 24 here to run what the cluster runs.
   *
   * @default - the Node.js that runs this program (`process.execPath`)
   */
  readonly node?: string;
  /**
   * Refuse to start a Node.js Function when the local Node.js has another major version than the
   * runtime's image (`nodejs24` on a Node.js 20, say), instead of running it with a notice.
   *
   * @default false
   */
  readonly strictRuntimeVersion?: boolean;
}

/** A Function's definition on this machine, read again on every reload. */
interface Definition {
  readonly name: string;
  readonly namespace: string;
  readonly runtime: FunctionRuntime;
  /** The folder that holds the handler. */
  readonly directory: string;
  /** Whether it is the user's Function folder (run where it is), or one written as the release's controller writes an inline source. */
  readonly isFolder: boolean;
  /** The dependencies file's text. */
  readonly dependencies?: string;
  /** The inline source as the Function object holds it, which 1.13.0 hands over in variables. */
  readonly inline?: { readonly source: string; readonly dependencies?: string };
  /** The release the Function's source says it runs under (the app's stack's), when it knows. */
  readonly release?: ServerlessRelease;
  readonly spec: FunctionEnvSpec;
  /** Problems synth would report, for the log. */
  readonly warnings: readonly string[];
  /** Removes what was written to run it. */
  readonly dispose: () => void;
}

/** A Function as JSON: `metadata` and `spec`, as synth writes it. */
export interface FunctionObject {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: { readonly [key: string]: any };
}

/** Where a Function given as JSON comes from: read again on every reload. */
export interface FunctionObjectSource {
  /** What the Function is, for messages, such as `Function team-a/orders of the app`. */
  readonly description: string;
  /** Files and folders whose change reloads the Function when watching. */
  readonly watched: readonly string[];
  /** Reads the Function. */
  read(): Promise<FunctionObject>;
  /**
   * The release of the stack the Function was read with (such as the release of the app's
   * `ServerlessStack`), asked after every `read()`.
   *
   * @default - unknown: the options' release, or ServerlessRelease.V1_11_1
   */
  releaseOf?(): ServerlessRelease | undefined;
}

/** A Function that cannot run here: what is wrong, and the fix. */
export class LocalFunctionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalFunctionError';
  }
}

/** Variables of this machine that a Function's process keeps; the rest of the environment is the Function's. */
const INHERITED_ENV = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TEMP', 'TMP', 'SYSTEMROOT', 'COMSPEC',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
  'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE',
];

/** The handler as the Pod has it, in a folder of its own. */
interface StagedHandler {
  /** The folder the runtime loads the handler from. */
  readonly directory: string;
  /** The handler. */
  readonly handler: string;
  readonly dispose: () => void;
}

/**
 * Copies the handler (and a Node.js Function's package.json, which says whether it is an ES
 * module) into a fresh folder under the system's temporary folder, as the Pod holds it: alone,
 * beside the installed dependencies only (`function/node_modules`, a link to them). Node.js looks
 * for packages in the node_modules folders above the handler: from the Function's own folder that
 * would find the app's node_modules, which the Pod has not.
 */
function stageHandler(definition: Definition, installed: string | undefined): StagedHandler {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `kyma-serverless-${definition.name}-run-`));
  const node = definition.runtime.family === RuntimeFamily.NODEJS;
  // The images' layout: /usr/src/app/function/handler.js, /kubeless/handler.py.
  const directory = node ? path.join(root, 'function') : root;
  fs.mkdirSync(directory, { recursive: true });
  const { handler, dependencies } = definition.runtime.files;
  fs.copyFileSync(path.join(definition.directory, handler), path.join(directory, handler));
  if (node) {
    if (definition.dependencies !== undefined) fs.writeFileSync(path.join(directory, dependencies), definition.dependencies);
    if (installed) fs.symlinkSync(installed, path.join(directory, 'node_modules'), 'junction');
  }
  return { directory, handler: path.join(directory, handler), dispose: () => fs.rmSync(root, { recursive: true, force: true }) };
}

function folderDefinition(directory: string, namespace: string | undefined): Definition {
  const dir = path.resolve(directory);
  if (!fs.existsSync(dir)) {
    throw new LocalFunctionError(`${directory} does not exist: give the folder of a Function (its handler, dependencies file and function.yaml)`);
  }
  if (!fs.statSync(dir).isDirectory()) {
    throw new LocalFunctionError(`${directory} is not a folder: give the folder of a Function, not one of its files`);
  }
  const handlers = Object.values(RUNTIME_FILES).map(f => f.handler);
  if (!handlers.some(h => fs.existsSync(path.join(dir, h)))) {
    throw new LocalFunctionError(`${directory} holds no handler (${handlers.join(' or ')}): `
      + 'write handler.js exporting main(event, context) for Node.js, or handler.py defining main(event, context) for Python');
  }
  const folder = FunctionFolder.load(dir);
  const handler = path.join(dir, folder.runtime.files.handler);
  if (!fs.existsSync(handler)) {
    throw new LocalFunctionError(`${directory} has no ${folder.runtime.files.handler}, which runtime ${folder.runtime.name} (function.yaml) needs: `
      + `write ${folder.runtime.files.handler}, or set the runtime that fits the handler`);
  }
  const chart = new Chart(new App(), 'local', { namespace: folder.namespace ?? namespace ?? 'default' });
  const fn = folder.addTo(chart);
  const object = fn.apiObject.toJson() as FunctionObject;
  const dependencies = path.join(dir, folder.runtime.files.dependencies);
  return {
    name: fn.name,
    namespace: fn.namespace ?? 'default',
    runtime: folder.runtime,
    directory: dir,
    isFolder: true,
    dependencies: fs.existsSync(dependencies) ? fs.readFileSync(dependencies, 'utf8') : undefined,
    inline: object.spec.source?.inline,
    spec: { ...object.spec, name: fn.name, namespace: fn.namespace ?? 'default' },
    // The construct stands in no stack and is checked against the default release's CRD; the
    // release's own runtimes are checked in launch().
    warnings: fn.node.validate().filter(p => !/\(spec\.runtime\)/.test(p)).map(problem => `synth rejects this Function: ${problem}`),
    dispose: () => undefined,
  };
}

function objectDefinition(object: FunctionObject, namespace: string | undefined, label: string, release: ServerlessRelease | undefined,
  defaultRelease: ServerlessRelease): Definition {
  const { metadata, spec } = object;
  const runtime = FunctionRuntime.of(String(spec.runtime));
  if (!spec.source?.inline) {
    const repo = spec.source?.gitRepository;
    const from = repo ? `the Git repository ${repo.url} (${repo.baseDir ?? '/'} at ${repo.reference})` : 'nowhere';
    throw new LocalFunctionError(`${label} takes its code from ${from}: `
      + 'clone it and run the folder that holds the handler (kyma-serverless run <folder>, or LocalFunction.startFolder)');
  }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `kyma-serverless-${metadata.name}-`));
  const inline = spec.source.inline as { source: string; dependencies?: string };
  // The files as the release's controller writes them (1.11.1: blank Node.js dependencies become {}; 1.13.0: echo).
  const files = inlineSourceFiles(release ?? defaultRelease, runtime.name, inline.source, inline.dependencies);
  fs.writeFileSync(path.join(directory, runtime.files.handler), files.handler);
  fs.writeFileSync(path.join(directory, runtime.files.dependencies), files.dependencies);
  const ns = metadata.namespace ?? namespace ?? 'default';
  return {
    name: metadata.name,
    namespace: ns,
    runtime,
    directory,
    isFolder: false,
    dependencies: files.dependencies,
    inline,
    release,
    spec: { ...spec, name: metadata.name, namespace: ns },
    warnings: [],
    dispose: () => fs.rmSync(directory, { recursive: true, force: true }),
  };
}

/**
 * The release of the nearest enclosing construct that declares one (a FunctionNamespace or
 * ServerlessStack with a `release`), else of the app's stacks when they agree.
 */
function declaredRelease(fn: KymaFunction): ServerlessRelease | undefined {
  const releaseOf = (c: IConstruct) => {
    const release = (c as { release?: unknown }).release;
    return isServerlessRelease(release) ? release : undefined;
  };
  for (const scope of [...fn.node.scopes].reverse()) {
    const release = releaseOf(scope);
    if (release) return release;
  }
  const stacks = new Set(fn.node.root.node.findAll().filter(c => c instanceof ServerlessStack).map(releaseOf));
  return stacks.size === 1 ? [...stacks][0] : undefined;
}

type Target = { readonly port: number } | { readonly failure: string };

const nodeVersions = new Map<string, Promise<string>>();

/** The version of a Node.js executable, such as `20.19.0`. */
function nodeVersion(node: string): Promise<string> {
  if (node === process.execPath) return Promise.resolve(process.versions.node);
  if (!nodeVersions.has(node)) {
    nodeVersions.set(node, new Promise((resolve, reject) => {
      const child = spawn(node, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => out += c.toString());
      child.on('error', e => reject(new LocalFunctionError(`Cannot run ${node} (${e.message}): give the path of a Node.js executable with --node`)));
      child.on('close', () => {
        const version = out.trim().replace(/^v/, '');
        if (/^\d+\.\d+/.test(version)) resolve(version);
        else reject(new LocalFunctionError(`${node} --version printed '${out.trim()}': give the path of a Node.js executable with --node`));
      });
    }));
    nodeVersions.get(node)!.catch(() => nodeVersions.delete(node));
  }
  return nodeVersions.get(node)!;
}

function major(version: string): number {
  return Number(version.split('.')[0]);
}

/**
 * A Function running on this machine, with the contract of the runtime images of a Serverless
 * release (`release`: 1.11.1 or 1.13.0): the handler's `main(event, context)` called for every
 * request, `event` and `context` as the images build them, return values, errors and timeouts
 * answered as the images answer them, the environment the release's controller gives the
 * container, and the dependencies installed when the release installs them. Start one from a
 * Function folder or a `KymaFunction`, send it requests and events, and stop it:
 *
 * @example
 * const fn = await LocalFunction.startFolder('functions/hello-node');
 * const res = await fn.get('/?name=Ada');
 * expect(res.json()).toEqual({ message: 'Hello, Ada!' });
 * await fn.stop();
 */
export class LocalFunction {
  /**
   * Starts a Function folder (handler, dependencies file, optional function.yaml), as
   * `FunctionFolder` reads it for synth. The handler runs where it is.
   *
   * @param directory the folder
   * @param options where the environment's values come from, the port, watching
   * @returns the running Function, once its handler has loaded
   * @throws LocalFunctionError (and the like) naming what is wrong and the fix: no handler, no `main`, a key without a value, a port in use
   */
  public static startFolder(directory: string, options: LocalFunctionOptions = {}): Promise<LocalFunction> {
    const watched = [path.resolve(directory), ...(options.envFiles ?? []).map(f => path.resolve(f))];
    return LocalFunction.start(async () => folderDefinition(directory, options.namespace), watched, options);
  }

  /**
   * Starts a KymaFunction with an inline source (or one read from a folder at synth), written
   * into a temporary folder, with the runtime contract of the release of its stack (the nearest
   * enclosing construct with a `release`, such as its FunctionNamespace or ServerlessStack) unless
   * `options.release` gives one.
   *
   * @param fn the Function
   * @param options where the environment's values come from, the port
   * @returns the running Function, once its handler has loaded
   */
  public static startKymaFunction(fn: KymaFunction, options: LocalFunctionOptions = {}): Promise<LocalFunction> {
    const object = fn.apiObject.toJson() as FunctionObject;
    const release = declaredRelease(fn);
    const source = { description: `KymaFunction ${fn.node.path}`, watched: [], read: async () => object, releaseOf: () => release };
    return LocalFunction.startFrom(source, options);
  }

  /**
   * Starts a Function given as JSON (`metadata` and `spec`), such as one of synthesized
   * manifests, read again on every reload.
   *
   * @param source where the Function comes from
   * @param options where the environment's values come from, the port, watching
   * @returns the running Function, once its handler has loaded
   */
  public static startFrom(source: FunctionObjectSource, options: LocalFunctionOptions = {}): Promise<LocalFunction> {
    return LocalFunction.start(async () => {
      const object = await source.read();
      const release = source.releaseOf?.();
      return objectDefinition(object, options.namespace, source.description, release, options.release ?? release ?? DEFAULT_RELEASE);
    }, source.watched, options);
  }

  private static async start(define: () => Promise<Definition>, watched: readonly string[], options: LocalFunctionOptions): Promise<LocalFunction> {
    const fn = new LocalFunction(define, watched, options);
    try {
      await fn.begin();
    } catch (e) {
      await fn.stop();
      throw e;
    }
    return fn;
  }

  /** The events the Function published, in order. */
  public readonly published: CloudEvent[] = [];

  private readonly lines: LogLine[] = [];
  private readonly server = http.createServer((req, res) => void this.proxy(req, res));
  private readonly publisher = http.createServer((req, res) => void this.publish(req, res));
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly watchers: fs.FSWatcher[] = [];
  private readonly reloadWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private definition?: Definition;
  private mounts?: ResolvedMounts;
  private installed?: InstalledDependencies;
  private staged?: StagedHandler;
  /** When the current start began, and how long its installation took: for the startup probe's budget. */
  private startClock?: { readonly started: number; readonly installSeconds: number };
  private child?: ChildProcess;
  private childEnv?: NodeJS.ProcessEnv;
  private current: Promise<Target> = Promise.resolve({ failure: 'The Function is starting' });
  private lastFailure?: string;
  private debounce?: NodeJS.Timeout;
  private stopping = false;
  /** Whether failures are logged: after the first start, or from the start when watching (a first start that fails throws otherwise). */
  private reporting = false;
  private publicPort = 0;
  private publisherPort = 0;

  private constructor(
    private readonly define: () => Promise<Definition>,
    /** What a change of reloads the Function, when watching. */
    private readonly watched: readonly string[],
    private readonly options: LocalFunctionOptions,
  ) {}

  /** The Function's URL, such as `http://127.0.0.1:8080`. */
  public get url(): string {
    return `http://${this.options.host ?? '127.0.0.1'}:${this.publicPort}`;
  }

  /** The Function's name. */
  public get name(): string {
    return this.definition?.name ?? '';
  }

  /** The Function's namespace (`SERVICE_NAMESPACE`). */
  public get namespace(): string {
    return this.definition?.namespace ?? '';
  }

  /** The Function's runtime. */
  public get runtime(): FunctionRuntime | undefined {
    return this.definition?.runtime;
  }

  /**
   * The Serverless release whose runtime contract the Function runs with: the `release` option,
   * else the release its source names (the app's stack's), else ServerlessRelease.V1_11_1.
   */
  public get release(): ServerlessRelease {
    return this.options.release ?? this.definition?.release ?? DEFAULT_RELEASE;
  }

  /** Why the Function does not answer, when its last start or reload failed (it answers 500 saying so until the next reload). */
  public get failure(): string | undefined {
    return this.lastFailure;
  }

  /** The log so far: the Function's output and the runtime's lines, one per line. */
  public get logs(): string {
    return this.lines.map(l => `${l.text}\n`).join('');
  }

  /**
   * Sends a request.
   *
   * @param request method, path, headers and body, or a CloudEvent
   * @returns the answer, whatever its status
   */
  public request(request: FunctionRequest = {}): Promise<FunctionResponse> {
    return invokeFunction(this.url, { path: '/', ...request });
  }

  /** Sends a GET request. */
  public get(requestPath = '/', headers: { readonly [name: string]: string } = {}): Promise<FunctionResponse> {
    return this.request({ method: 'GET', path: requestPath, headers });
  }

  /** Sends a POST request with a JSON body. */
  public post(requestPath: string, json: unknown, headers: { readonly [name: string]: string } = {}): Promise<FunctionResponse> {
    return this.request({ method: 'POST', path: requestPath, json, headers });
  }

  /**
   * Sends a CloudEvent, as Kyma Eventing delivers the events of a subscription.
   *
   * @param event type, source, data and the other attributes
   * @param mode binary (what Kyma Eventing sends) or structured
   */
  public sendEvent(event: CloudEventInit, mode: CloudEventMode = CloudEventMode.BINARY): Promise<FunctionResponse> {
    return this.request({ path: '/', event, mode });
  }

  /**
   * Restarts the Function's process: reads its folder and environment again, and loads the handler
   * with fresh module state.
   *
   * @throws when it does not load again, naming why
   */
  public async reload(): Promise<void> {
    await this.relaunch();
    const target = await this.current;
    if ('failure' in target) throw new LocalFunctionError(target.failure);
  }

  /**
   * Waits for the next reload that watching starts.
   *
   * @returns once the Function answers again
   * @throws when the reload failed, naming why
   */
  public nextReload(): Promise<void> {
    return new Promise((resolve, reject) => this.reloadWaiters.push({ resolve, reject }));
  }

  /** Stops the Function and removes what was written to run it. */
  public async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.debounce);
    for (const watcher of this.watchers.splice(0)) watcher.close();
    await this.stopChild();
    for (const server of [this.server, this.publisher]) {
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    }
    this.agent.destroy();
    this.mounts?.dispose();
    this.installed?.dispose();
    this.staged?.dispose();
    this.definition?.dispose();
  }

  private log(source: LogSource, text: string): void {
    const line = { source, text };
    this.lines.push(line);
    this.options.log?.(line);
  }

  private async begin(): Promise<void> {
    await this.listen(this.server, this.options.port ?? 0, this.options.host ?? '127.0.0.1').then(port => this.publicPort = port);
    await this.listen(this.publisher, 0, '127.0.0.1').then(port => this.publisherPort = port);
    this.reporting = this.options.watch ?? false;
    // Watching from before the first start: an edit made while it starts, or one that fixes it, is not missed.
    if (this.options.watch) this.watch();
    this.current = this.track(this.launch());
    const target = await this.current;
    if ('failure' in target && !this.options.watch) throw new LocalFunctionError(target.failure);
    this.reporting = true;
  }

  private listen(server: http.Server, port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => reject(e.code === 'EADDRINUSE'
        ? new LocalFunctionError(`Port ${port} on ${host} is in use: stop what listens there, or give another port (--port)`)
        : new LocalFunctionError(`Cannot listen on ${host}:${port}: ${e.message}`)));
      server.listen(port, host, () => resolve((server.address() as { port: number }).port));
    });
  }

  /** Reads the definition, installs the dependencies, finds the environment, starts the process. */
  private async launch(): Promise<Target> {
    try {
      this.definition?.dispose();
      this.mounts?.dispose();
      this.installed?.dispose();
      this.installed = undefined;
      const definition = this.definition = await this.define();
      const started = Date.now();
      const release = this.release;
      for (const warning of definition.warnings) this.log(LogSource.RUNTIME, warning);
      if (this.options.release && definition.release && definition.release !== this.options.release) {
        this.log(LogSource.RUNTIME, `running with the runtime contract of Serverless ${this.options.release} as asked; `
          + `the app's stack deploys ${definition.release}`);
      }
      this.checkRuntime(definition.runtime, release);
      const handler = path.join(definition.directory, definition.runtime.files.handler);
      const python = this.options.python ?? 'python3';
      if (definition.runtime.family === RuntimeFamily.PYTHON) await pythonVersion(python);
      else await this.checkNodeVersion(definition.runtime, release);
      const atStart = runtimeContract(release).installTime === DependencyInstallTime.POD_START;
      // A folder's dependencies file as the release's Pod writes it (1.13.0 writes even a blank file as it is).
      const dependencies = atStart && definition.isFolder
        ? inlineSourceFiles(release, definition.runtime.name, '', definition.dependencies ?? '').dependencies
        : definition.dependencies;
      const registryConfig = await this.registryConfig(definition.namespace);
      const installed = this.installed = await installDependencies({
        registryConfig: registryConfig?.folder,
        runtime: definition.runtime,
        dependencies,
        handler: fs.readFileSync(handler, 'utf8'),
        cacheDirectory: this.options.cacheDirectory ?? defaultCacheDirectory(),
        python,
        release,
        log: line => this.log(LogSource.RUNTIME, line),
      }).finally(() => registryConfig?.dispose());
      if (atStart && installed.path) {
        this.log(LogSource.RUNTIME, `dependencies installed in ${installed.seconds.toFixed(1)} s; `
          + `a Pod of Serverless ${release} installs them at every start, within the ${STARTUP_PROBE_SECONDS} s of its startup probe, `
          + `resolving the versions of ${definition.runtime.files.dependencies} anew each time`);
      }
      this.startClock = { started, installSeconds: installed.seconds };
      const values = { ...readEnvFiles(this.options.envFiles ?? []), ...this.options.env };
      const resolved = await resolveFunctionEnv(definition.spec, { values, cluster: this.options.cluster });
      for (const note of resolved.notes) this.log(LogSource.RUNTIME, note);
      for (const name of new Set(resolved.env.map(v => v.name))) {
        const note = unreadVariableNote(definition.runtime.name, name);
        if (note) this.log(LogSource.RUNTIME, note);
      }
      this.mounts = await resolveSecretMounts(definition.namespace, definition.spec.secretMounts ?? [], {
        folders: this.options.secretMounts ?? {},
        cluster: this.options.cluster,
      });
      this.staged?.dispose();
      const staged = this.staged = stageHandler(definition, installed.path);
      this.childEnv = this.environment(definition, resolved.env, staged.handler, installed.path, release, staged.directory);
      return await this.spawn(definition);
    } catch (e) {
      return { failure: (e as Error).message };
    }
  }

  /** The process's environment: as the controller composes the container's, with local paths and ports. */
  private environment(definition: Definition, functionEnv: ContainerEnvVar[], handler: string, dependencies: string | undefined,
    release: ServerlessRelease, directory: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const name of INHERITED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
    env.HOSTNAME = `${definition.name}-local`;
    const identity = {
      runtime: definition.runtime.name,
      name: definition.name,
      namespace: definition.namespace,
      publisherProxyAddress: `http://127.0.0.1:${this.publisherPort}/publish`,
      release,
      inline: definition.inline,
    };
    const list = containerEnv(functionEnv, identity);
    // Linux starts no program with a variable above 128 KiB: neither the container nor this process.
    const oversized = oversizedEnv(list);
    if (oversized.length) {
      const names = oversized.map(v => `${v.name} (${v.bytes} bytes)`).join(', ');
      const source = oversized.some(v => v.name.startsWith('FUNC_HANDLER_'))
        ? `: Serverless ${release} hands an inline source over in variables; `
          + 'make the handler or its dependencies smaller, or take the source from Git'
        : ': make the value smaller, or mount it from a Secret (secretMounts)';
      throw new LocalFunctionError(`The Function's container cannot start: ${names} is longer than the ${MAX_ENV_VAR_BYTES} bytes Linux allows `
        + `one variable ("argument list too long")${source}`);
    }
    // Later names win, as in Kubernetes: the release's controller decides which of its variables a Function overrides.
    for (const { name, value } of list) env[name] = value;
    const { beforeFunctionEnv, afterFunctionEnv } = controllerEnv(identity);
    const [overridable, fixed] = [new Set(beforeFunctionEnv.map(v => v.name)), new Set(afterFunctionEnv.map(v => v.name))];
    for (const name of new Set(functionEnv.map(v => v.name))) {
      if (fixed.has(name)) this.log(LogSource.RUNTIME, `${name}: the controller's value replaces the Function's own, as Serverless ${release} does`);
      else if (overridable.has(name)) {
        this.log(LogSource.RUNTIME, `${name}: the Function's own value replaces the controller's, as Serverless ${release} does `
          + '(1.11.1 keeps the controller\'s)');
      }
    }
    // The local server's own port; 1.13.0 sets no FUNC_PORT, and the images always listen on 8080.
    if (env.FUNC_PORT !== undefined) env.FUNC_PORT = String(this.publicPort || FUNCTION_PORT);
    env[PRIVATE_ENV.RELEASE] = release;
    if (definition.runtime.family === RuntimeFamily.NODEJS) {
      // The staged copy finds its packages in its own node_modules (no NODE_PATH: ES modules ignore it, and the Pod sets none).
      env.HANDLER_PATH = handler;
    } else {
      // Only the installed requirements; server.py drops the machine's site-packages from sys.path.
      env.PYTHONPATH = [dependencies, directory].filter(Boolean).join(path.delimiter);
      env.FUNCTION_PATH = directory;
      // The Function's folder stays free of __pycache__.
      env.PYTHONDONTWRITEBYTECODE = '1';
    }
    env[PRIVATE_ENV.MOUNTS] = JSON.stringify(this.mounts?.folders ?? {});
    env[PRIVATE_ENV.HOST] = '127.0.0.1';
    env[PRIVATE_ENV.PORT] = '0';
    return env;
  }

  /**
   * The package registry configuration to install with: the option's folder, else the Secret
   * `serverless-package-registry-config` of the Function's namespace from the cluster (written into a
   * private temporary folder, removed after the installation), else none.
   */
  private async registryConfig(namespace: string): Promise<{ readonly folder: string; readonly dispose: () => void } | undefined> {
    if (this.options.packageRegistryConfig) return { folder: path.resolve(this.options.packageRegistryConfig), dispose: () => undefined };
    const cluster = this.options.cluster;
    if (!cluster) return undefined;
    const data = await cluster.readSecret(namespace, PACKAGE_REGISTRY_CONFIG_SECRET);
    const files = Object.entries(data ?? {}).filter(([key]) => key === '.npmrc' || key === 'pip.conf');
    if (!files.length) return undefined;
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-registry-'));
    for (const [key, value] of files) fs.writeFileSync(path.join(folder, key), value, { mode: 0o600 });
    this.log(LogSource.RUNTIME, `installing with the package registry configuration of Secret ${namespace}/${PACKAGE_REGISTRY_CONFIG_SECRET} `
      + `(${files.map(([key]) => key).join(', ')}) of ${cluster.where}, as the Function's Pods do`);
    return { folder, dispose: () => fs.rmSync(folder, { recursive: true, force: true }) };
  }

  /** Says when the release's CRD does not accept the runtime: the cluster refuses the Function, here it runs. */
  private checkRuntime(runtime: FunctionRuntime, release: ServerlessRelease): void {
    const facts = releaseFacts(release);
    if (!(facts.runtimes as readonly string[]).includes(runtime.name)) {
      const other = releaseFacts(release === ServerlessRelease.V1_11_1 ? ServerlessRelease.V1_13_0 : ServerlessRelease.V1_11_1);
      const hint = (other.runtimes as readonly string[]).includes(runtime.name)
        ? `; Serverless ${other.release} runs it (--release ${other.release})` : '';
      this.log(LogSource.RUNTIME, `${runtime.name} is no runtime of Serverless ${release}, whose Function CRD accepts ${facts.runtimes.join(', ')}: `
        + `the cluster refuses this Function${hint}`);
    } else if (facts.deprecatedRuntimes[runtime.name]) {
      this.log(LogSource.RUNTIME, `${runtime.name} is deprecated in Serverless ${release} (end of life ${facts.deprecatedRuntimes[runtime.name]}): `
        + `move to ${facts.runtimes.filter(r => r.startsWith(runtime.family) && r !== runtime.name).join(' or ')}`);
    }
  }

  /**
   * Compares the local Node.js with the one of the runtime's image: a notice when their major
   * versions differ, or a refusal with `strictRuntimeVersion`.
   */
  private async checkNodeVersion(runtime: FunctionRuntime, release: ServerlessRelease): Promise<void> {
    const node = this.options.node ?? process.execPath;
    const local = await nodeVersion(node);
    // A runtime the release does not have (checkRuntime says so): the image of the release that has it.
    const imageRelease = [release, ...RELEASES].find(r => runtimeContract(r).nodeVersions[runtime.name]);
    if (!imageRelease) return;
    const image = runtimeContract(imageRelease).nodeVersions[runtime.name];
    if (major(image) === major(local)) return;
    const newer = major(image) > major(local);
    const message = `${runtime.name} runs on Node.js ${image} in the image of Serverless ${imageRelease}; this run uses Node.js ${local} (${node}): `
      + (newer
        ? `what Node.js ${major(local) + 1} to ${major(image)} added (APIs, syntax) fails here and works there`
        : `what Node.js ${major(image) + 1} to ${major(local)} added works here and fails there`)
      + `. Give a Node.js ${major(image)} with --node <path> (the 'node' option) to run what the cluster runs`;
    if (this.options.strictRuntimeVersion) throw new LocalFunctionError(`${message}; or run without --strict-runtime-version to run it anyway`);
    this.log(LogSource.RUNTIME, message);
  }

  /** Starts the runtime process and waits until the handler loaded or failed. */
  private spawn(definition: Definition): Promise<Target> {
    if (this.stopping) return Promise.resolve({ failure: 'The Function was stopped' });
    const env = { ...this.childEnv };
    let command: string;
    let args: string[];
    if (definition.runtime.family === RuntimeFamily.PYTHON) {
      command = this.options.python ?? 'python3';
      args = [path.join(__dirname, 'python', 'server.py')];
    } else {
      command = this.options.node ?? process.execPath;
      const { program, typescript } = nodeServerProgram();
      // TypeScript in a checkout: ts-node compiles the program's own modules (the handler is plain JavaScript).
      args = typescript ? ['--require', require.resolve('ts-node/register/transpile-only'), program] : [program];
      if (typescript) Object.assign(env, { TS_NODE_PROJECT: path.join(__dirname, '..', '..', 'tsconfig.json'), TS_NODE_SWC: 'true' });
    }
    // An empty working directory, as the images' (/usr/src/app, /) holds none of the Function's files.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-cwd-'));
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    this.child = child;
    const errors: string[] = [];
    const output = () => (errors.length ? `:\n    ${errors.join('\n    ')}` : '');
    readline.createInterface({ input: child.stdout! }).on('line', line => this.log(LogSource.STDOUT, line));
    readline.createInterface({ input: child.stderr! }).on('line', line => {
      errors.push(line);
      if (errors.length > 20) errors.shift();
      this.log(LogSource.STDERR, line);
    });
    return new Promise<Target>(resolve => {
      let port: number | undefined;
      let loaded = false;
      let answered = 0;
      let settled = false;
      const settle = (target: Target) => {
        if (settled) return;
        settled = true;
        resolve(target);
      };
      readline.createInterface({ input: child.stdio[CONTROL_FD] as NodeJS.ReadableStream }).on('line', line => {
        let message: ControlMessage;
        try {
          message = JSON.parse(line) as ControlMessage;
        } catch {
          return;
        }
        switch (message.type) {
          case 'listening':
            port = message.port;
            break;
          case 'loaded':
            loaded = true;
            this.log(LogSource.RUNTIME, `${definition.name} (${definition.runtime.name}, namespace ${definition.namespace}, `
              + `Serverless ${this.release}) answers at ${this.url}`);
            this.checkStartupTime();
            settle({ port: port! });
            break;
          case 'load-failed':
            settle({ failure: message.message });
            break;
          case 'listen-failed':
            settle({ failure: `The runtime could not listen: ${message.message}` });
            break;
          case 'request':
            answered++;
            this.log(LogSource.RUNTIME, `${message.method} ${message.path} → ${message.status} (${message.ms} ms)`);
            break;
          case 'note':
            this.log(LogSource.RUNTIME, message.message);
            break;
        }
      });
      child.on('error', e => settle({ failure: `Cannot start ${command}: ${e.message}` }));
      child.on('exit', (code, signal) => {
        fs.rmSync(cwd, { recursive: true, force: true });
        if (this.child !== child || this.stopping) return;
        const how = signal ? `signal ${signal}` : `code ${code}`;
        if (!loaded) {
          settle({ failure: `The Function's process exited (${how}) before its handler loaded${output()}` });
        } else if (!answered) {
          // It would only crash again: Kubernetes would back off, here it waits for a change.
          this.current = this.track(Promise.resolve({
            failure: `The Function's process exited (${how}) before it answered a request${output()}`,
          }));
        } else {
          // As Kubernetes restarts the container.
          this.log(LogSource.RUNTIME, `The Function's process exited (${how}): starting it again, as Kubernetes restarts the container`);
          this.current = this.track(this.spawn(definition));
        }
      });
    });
  }

  /** Says when a start took longer than the startup probe allows: Kubernetes would restart the container before it answered. */
  private checkStartupTime(): void {
    const clock = this.startClock;
    if (!clock) return;
    this.startClock = undefined;
    const atStart = runtimeContract(this.release).installTime === DependencyInstallTime.POD_START;
    const seconds = (Date.now() - clock.started) / 1000 - (atStart ? 0 : clock.installSeconds);
    if (seconds <= STARTUP_PROBE_SECONDS) return;
    const install = atStart && clock.installSeconds ? `, ${clock.installSeconds.toFixed(0)} s of it installing dependencies,` : '';
    this.log(LogSource.RUNTIME, `this start took ${seconds.toFixed(0)} s${install} and the startup probe of Serverless ${this.release} allows `
      + `${STARTUP_PROBE_SECONDS} s: Kubernetes would restart the container before it answered, again and again`);
  }

  /** Remembers why the Function does not answer once a start settles, and logs it (a first start that fails throws it instead). */
  private async track(start: Promise<Target>): Promise<Target> {
    const target = await start;
    this.lastFailure = 'failure' in target ? target.failure : undefined;
    if (this.lastFailure && this.reporting) this.log(LogSource.RUNTIME, this.lastFailure);
    return target;
  }

  private stopChild(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise(resolve => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      // The runtime exits when its standard input ends; SIGTERM as well, for a handler that holds it up.
      child.stdin?.end();
      child.kill('SIGTERM');
    });
  }

  private async relaunch(): Promise<void> {
    const previous = this.current;
    let done!: (target: Target) => void;
    this.current = new Promise(resolve => done = resolve);
    await previous.catch(() => undefined);
    await this.stopChild();
    const target = await this.track(this.launch());
    done(target);
    for (const waiter of this.reloadWaiters.splice(0)) {
      if ('failure' in target) waiter.reject(new LocalFunctionError(target.failure));
      else waiter.resolve();
    }
  }

  private watch(): void {
    const ignored = /(^|[\\/])(node_modules|__pycache__|\.git)([\\/]|$)|(^|[\\/])\.[^\\/]*$|~$/;
    for (const target of this.watched) {
      if (!fs.existsSync(target)) continue;
      const watcher = fs.watch(target, (_event, file) => {
        if (file && ignored.test(String(file))) return;
        clearTimeout(this.debounce);
        // Editors write a file in several steps: reload once they are done.
        this.debounce = setTimeout(() => {
          if (this.stopping) return;
          this.log(LogSource.RUNTIME, `${file ? String(file) : path.basename(target)} changed: reloading`);
          void this.relaunch();
        }, 150);
      });
      this.watchers.push(watcher);
    }
  }

  private async proxy(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = await this.current;
    if ('failure' in target) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`kyma-serverless: the Function is not running: ${target.failure}\n`);
      return;
    }
    const request = { host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers, agent: this.agent };
    const upstream = http.request(request, answer => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on('error', e => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`kyma-serverless: the Function's process did not answer (${e.message})\n`);
    });
    req.pipe(upstream);
  }

  /** The publisher proxy: keeps and logs each event, and forwards it when asked to. */
  private publish(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v ?? '']));
      let event: CloudEvent | undefined;
      try {
        event = decodeCloudEvent({ headers, body });
      } catch (e) {
        this.log(LogSource.RUNTIME, `the Function published something that is not a CloudEvent: ${(e as Error).message}`);
        res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(`${(e as Error).message}\n`);
        return;
      }
      if (!event) {
        this.log(LogSource.RUNTIME, 'the Function published something that is not a CloudEvent (no ce-* headers, no application/cloudevents+json)');
        res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('not a CloudEvent\n');
        return;
      }
      this.published.push(event);
      const shown = event.data === undefined ? '' : ` ${Buffer.isBuffer(event.data) ? `<${event.data.length} bytes>` : JSON.stringify(event.data)}`;
      const forward = this.options.publisherProxy;
      this.log(LogSource.RUNTIME, `published ${event.type} from ${event.source}${shown}${forward ? ` → ${forward}` : ''}`);
      if (!forward) {
        res.writeHead(204).end();
        return;
      }
      // Delivered as Kyma Eventing delivers to subscribers: in binary mode.
      const delivery = encodeCloudEvent(event, CloudEventMode.BINARY);
      invokeFunction(forward, { method: 'POST', headers: delivery.headers, body: delivery.body.toString('utf8') })
        .then(answer => res.writeHead(answer.status, { 'content-type': answer.headers['content-type'] ?? 'text/plain' }).end(answer.body))
        .catch((e: Error) => {
          this.log(LogSource.RUNTIME, `forwarding ${event!.type} to ${forward} failed: ${e.message}`);
          res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`${e.message}\n`);
        });
    });
  }
}
