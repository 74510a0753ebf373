/**
 * `kyma-serverless run`: a Function served on localhost with the contract of the runtime images
 * of a Serverless release (see `runtime/local-function.ts`), from a Function folder or from a
 * Function of a cdk8s app, until Ctrl-C; with `--watch`, reloaded when its code, dependencies or
 * settings change. The release is `--release`, else that of the app's stack, else 1.11.1.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  DEFAULT_RELEASE, FUNCTION_API_VERSION, FUNCTION_CRD_NAME, FUNCTION_KIND, ServerlessRelease, isServerlessRelease, parseRelease, RELEASE_ANNOTATION,
} from '../../api';
import { FUNCTION_PORT } from '../../api/runtime-contract';
import { FunctionFolder } from '../../function/function-folder';
import { manifestFiles, parseManifests } from '../../policy/_manifest-files';
import { FunctionObject, FunctionObjectSource, LocalFunction, LocalFunctionOptions, LogLine, LogSource } from '../../runtime/local-function';
import { ClusterOptions, connect } from '../_kube';
import { CliError } from '../errors';
import { OutputFormat, isStructured, print, printDocument } from '../_output';
import { registerRun } from '../_runs';
import { synth } from '../synth';
import { clusterRelease, clusterValues } from './_cluster';

/** Options of {@link startRun}: the global cluster options and the command's own. */
export interface RunOptions extends ClusterOptions {
  /**
   * A cdk8s app to take the Function from (`--app`): a command, or a `.ts` or `.js` file.
   *
   * @default - a Function folder is given instead
   */
  readonly app?: string;
  /**
   * With `app`: the Function, as `namespace/name` or `name`.
   *
   * @default - required with `app`
   */
  readonly function?: string;
  /**
   * The port.
   *
   * @default 8080
   */
  readonly port?: number;
  /**
   * The address.
   *
   * @default '127.0.0.1'
   */
  readonly host?: string;
  /**
   * Env files.
   *
   * @default - none
   */
  readonly envFile?: readonly string[];
  /**
   * `NAME=value` pairs.
   *
   * @default - none
   */
  readonly env?: readonly string[];
  /**
   * `secret=folder` pairs.
   *
   * @default - none
   */
  readonly mount?: readonly string[];
  /**
   * Read Secret and ConfigMap keys and mounted Secrets that are not given locally from the current kube context.
   *
   * @default false
   */
  readonly fromCluster?: boolean;
  /**
   * Reload on changes.
   *
   * @default false
   */
  readonly watch?: boolean;
  /**
   * Where published events are forwarded.
   *
   * @default - they are printed only
   */
  readonly publisherProxy?: string;
  /**
   * The Python interpreter.
   *
   * @default 'python3'
   */
  readonly python?: string;
  /**
   * The Serverless release whose runtime contract the Function runs with (`--release`).
   *
   * @default - the release of the app's stack with `app` (for a folder: of the synthesized output of the app around it), else ServerlessRelease.V1_11_1
   */
  readonly release?: string;
  /**
   * A folder with `.npmrc` and `pip.conf`, as the Secret `serverless-package-registry-config` holds them (`--package-registry-config`).
   *
   * @default - with `fromCluster`, the namespace's Secret when it has one; else this machine's npm and pip settings
   */
  readonly packageRegistryConfig?: string;
  /**
   * The Node.js executable for Node.js Functions (`--node`).
   *
   * @default - the Node.js that runs the command
   */
  readonly node?: string;
  /**
   * Refuse a Node.js Function whose runtime's Node.js major version differs from the local one.
   *
   * @default false
   */
  readonly strictRuntimeVersion?: boolean;
  /**
   * The output format of the log.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
  /**
   * Receives the log instead of standard output and error.
   *
   * @default - printed
   */
  readonly log?: (line: LogLine) => void;
}

/** Whether a Function folder's function.yaml names its namespace (a folder that does not load is left to the run to report). */
function folderNamesNamespace(folder: string): boolean {
  try {
    return FunctionFolder.load(folder).namespace !== undefined;
  } catch {
    return true;
  }
}

/** `NAME=value` and `secret=folder` pairs, by their left side. */
function pairs(values: readonly string[] | undefined, flag: string, example: string): { [key: string]: string } {
  const result: { [key: string]: string } = {};
  for (const value of values ?? []) {
    const at = value.indexOf('=');
    if (at <= 0) throw new CliError(`${flag} ${value}: give it as ${example}`);
    result[value.slice(0, at)] = value.slice(at + 1);
  }
  return result;
}

/** The command that runs an app given as `--app`: `.ts` files through ts-node, `.js` files through node, anything else as it is. */
export function appCommand(app: string, cwd: string): string {
  const file = path.resolve(cwd, app);
  if (/\.[cm]?ts$/.test(app) && fs.existsSync(file)) return `npx ts-node ${JSON.stringify(app)}`;
  if (/\.[cm]?js$/.test(app) && fs.existsSync(file)) return `node ${JSON.stringify(app)}`;
  return app;
}

/** The objects of a folder of manifests, with the file each is in, shallowest files first. */
function objectsOfManifests(dir: string): { readonly object: any; readonly file: string }[] {
  return manifestFiles(dir, true)
    .sort((a, b) => a.split(path.sep).length - b.split(path.sep).length)
    .flatMap(file => parseManifests(fs.readFileSync(file, 'utf8'))
      .map(d => d.object)
      .filter(o => o && typeof o === 'object')
      .map(object => ({ object, file: path.relative(dir, file) })));
}

/**
 * The release of the stack among synthesized objects: the `cdk8s-kyma-serverless/release`
 * annotation of the Function CRD, else the `app.kubernetes.io/version` label the stack puts on its
 * objects (when it names a release).
 *
 * @param objects the app's objects
 * @returns the release, or undefined when the app has no stack (or several that disagree)
 */
export function releaseOfObjects(objects: readonly any[]): ServerlessRelease | undefined {
  const crd = objects.find(o => o.kind === 'CustomResourceDefinition' && o.metadata?.name === FUNCTION_CRD_NAME);
  const annotated = crd?.metadata?.annotations?.[RELEASE_ANNOTATION];
  if (isServerlessRelease(annotated)) return annotated;
  const versions = new Set(objects
    .filter(o => o.metadata?.labels?.['app.kubernetes.io/part-of'] === 'serverless'
      && o.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'cdk8s-kyma-serverless')
    .map(o => o.metadata.labels['app.kubernetes.io/version'])
    .filter(isServerlessRelease));
  return versions.size === 1 ? [...versions][0] : undefined;
}

/** Where the app around a Function folder synthesizes to: the `output` of the nearest cdk8s.yaml above it, else its dist/. */
function appOutputOf(folder: string): { readonly app: string; readonly output: string } | undefined {
  for (let dir = path.dirname(path.resolve(folder)); ; dir = path.dirname(dir)) {
    const config = path.join(dir, 'cdk8s.yaml');
    if (fs.existsSync(config)) {
      let output: unknown;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        output = (require('yaml') as typeof import('yaml')).parse(fs.readFileSync(config, 'utf8'))?.output;
      } catch {
        output = undefined;
      }
      return { app: dir, output: path.resolve(dir, typeof output === 'string' ? output : 'dist') };
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The namespace of a Function folder that neither `-n` nor its function.yaml names: the one the app
 * around it puts it in, as its synthesized output shows (the Function of the folder's name there),
 * with a line for the log that says where it comes from, or why it is `default`.
 */
export function folderNamespace(folder: string): { readonly namespace?: string; readonly note: string } {
  const name = path.basename(path.resolve(folder));
  const fallback = 'namespace default: neither -n nor function.yaml names one';
  const fix = `give -n <namespace>, or run the app's Function: run --app main.ts --function <namespace>/${name}`;
  const app = appOutputOf(folder);
  if (!app) return { note: `${fallback}, and no cdk8s app (cdk8s.yaml) holds the folder: ${fix.split(', or')[0]} to run it in another` };
  const shown = path.relative(process.cwd(), app.output) || '.';
  if (!fs.existsSync(app.output)) {
    return { note: `${fallback}, and the app has no synthesized output (${shown}/) to read the namespace it puts ${name} in: run npm run synth, or ${fix}` };
  }
  const namespaces = [...new Set(objectsOfManifests(app.output)
    .map(o => o.object)
    .filter(o => o.apiVersion === FUNCTION_API_VERSION && o.kind === FUNCTION_KIND && o.metadata?.name === name)
    .map(o => String(o.metadata.namespace ?? 'default')))].sort();
  if (namespaces.length === 1) return { namespace: namespaces[0], note: `namespace ${namespaces[0]}: the app's ${shown}/ has Function ${namespaces[0]}/${name} (-n overrides)` };
  if (!namespaces.length) return { note: `${fallback}, and the app's ${shown}/ has no Function ${name}: run npm run synth, or ${fix}` };
  return { note: `${fallback}, and the app's ${shown}/ has a Function ${name} in ${namespaces.join(' and ')}: ${fix}` };
}

/**
 * The release of the app around a Function folder, as its synthesized output names it (the
 * stack's Function CRD); undefined without an app, an output, or a release in it.
 */
export function folderRelease(folder: string): ServerlessRelease | undefined {
  const app = appOutputOf(folder);
  if (!app || !fs.existsSync(app.output)) return undefined;
  return releaseOfObjects(objectsOfManifests(app.output).map(o => o.object));
}

/** The folders of an app that hold its code (not node_modules, Git, outputs or hidden ones), for watching. */
function appFolders(cwd: string, depth = 3): string[] {
  const folders = [cwd];
  if (depth === 0) return folders;
  for (const entry of fs.readdirSync(cwd, { withFileTypes: true })) {
    if (!entry.isDirectory() || /^(node_modules|dist|lib|cdk\.out)$|^\./.test(entry.name)) continue;
    folders.push(...appFolders(path.join(cwd, entry.name), depth - 1));
  }
  return folders;
}

/** A Function of a cdk8s app: synthesized into a scratch folder (and checked, as synth does) on every read. */
function appSource(app: string, name: string, cwd: string): FunctionObjectSource {
  const [namespace, fnName] = name.includes('/') ? name.split('/', 2) : [undefined, name];
  let release: ServerlessRelease | undefined;
  return {
    description: `Function ${name} of the app (${app})`,
    watched: appFolders(cwd),
    releaseOf: () => release,
    async read() {
      const output = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-run-app-'));
      try {
        synth({ app: appCommand(app, cwd), output, cwd });
        const objects = objectsOfManifests(output);
        release = releaseOfObjects(objects.map(o => o.object));
        const all = objects
          .filter(o => o.object.apiVersion === FUNCTION_API_VERSION && o.object.kind === FUNCTION_KIND)
          .map(o => ({ object: o.object as FunctionObject, file: o.file }));
        const found = all.filter(f => f.object.metadata.name === fnName && (namespace === undefined || f.object.metadata.namespace === namespace));
        if (!found.length) {
          const names = [...new Set(all.map(f => `${f.object.metadata.namespace}/${f.object.metadata.name}`))].sort();
          throw new CliError(`The app has no Function ${name}: give one of ${names.join(', ') || '(it has none)'} with --function`);
        }
        const namespaces = new Set(found.map(f => f.object.metadata.namespace));
        if (namespaces.size > 1) {
          throw new CliError(`The app has a Function ${fnName} in ${[...namespaces].join(' and ')}: give --function <namespace>/${fnName}`);
        }
        return found[0].object;
      } finally {
        fs.rmSync(output, { recursive: true, force: true });
      }
    },
  };
}

/** Prints a line of the log: the Function's output as it is, the runtime's on standard error. */
function printLine(line: LogLine, format: OutputFormat): void {
  if (isStructured(format)) printDocument(line, format, true);
  else if (line.source === LogSource.STDOUT) process.stdout.write(`${line.text}\n`);
  else if (line.source === LogSource.STDERR) process.stderr.write(`${line.text}\n`);
  else process.stderr.write(`kyma-serverless: ${line.text}\n`);
}

/**
 * Starts a Function folder, or a Function of an app, as `run` does.
 *
 * @param folder the Function folder, unless `options.app` is given
 * @returns the running Function, and a function that stops it and forgets the run
 * @throws CliError (and the library's errors) naming what is wrong and the fix
 */
export async function startRun(folder: string | undefined, options: RunOptions): Promise<{ readonly fn: LocalFunction; stop(): Promise<void> }> {
  if (folder && options.app) throw new CliError('Give a Function folder, or --app with --function, not both');
  if (!folder && !options.app) {
    throw new CliError('Give the folder of a Function (kyma-serverless run functions/hello), or --app <main.ts> --function <namespace/name>');
  }
  if (options.app && !options.function) throw new CliError('--app needs --function <namespace/name>: the Function of the app to run');
  let namespace = options.namespace;
  let cluster;
  let release = options.release === undefined ? undefined : parseRelease(options.release, '--release');
  const format = options.output ?? OutputFormat.TABLE;
  const log = options.log ?? ((line: LogLine) => printLine(line, format));
  // A folder's release: that of the app around it, as its output says, before the cluster's.
  const appRelease = folder && !release ? folderRelease(folder) : undefined;
  if (appRelease) {
    release = appRelease;
    log({ source: LogSource.RUNTIME, text: `the app's synthesized output deploys Serverless ${appRelease} (its stack's Function CRD): following its runtime contract` });
  }
  if (options.fromCluster) {
    const connection = await connect(options);
    const context = options.context ?? connection.kubeConfig.getCurrentContext();
    namespace = connection.namespace;
    cluster = await clusterValues(connection, context);
    // A folder's release: the one the cluster runs (an app's is its stack's).
    if (!release && !options.app) {
      release = await clusterRelease(connection, RELEASE_ANNOTATION);
      const text = `the cluster of context ${context} runs Serverless ${release} (its Function CRD): following its runtime contract`;
      if (release) log({ source: LogSource.RUNTIME, text });
    }
  }
  if (folder && namespace === undefined && !folderNamesNamespace(folder)) {
    const found = folderNamespace(folder);
    namespace = found.namespace;
    log({ source: LogSource.RUNTIME, text: found.note });
  }
  const local: LocalFunctionOptions = {
    port: options.port ?? FUNCTION_PORT,
    host: options.host,
    env: pairs(options.env, '--env', 'NAME=value'),
    envFiles: options.envFile,
    secretMounts: pairs(options.mount, '--mount', '<secret>=<folder>'),
    cluster,
    namespace,
    publisherProxy: options.publisherProxy,
    watch: options.watch,
    python: options.python,
    release,
    node: options.node,
    packageRegistryConfig: options.packageRegistryConfig,
    strictRuntimeVersion: options.strictRuntimeVersion,
    log,
  };
  const fn = folder
    ? await LocalFunction.startFolder(folder, local)
    : await LocalFunction.startFrom(appSource(options.app!, options.function!, process.cwd()), local);
  const unregister = folder ? registerRun(folder, fn.url) : () => undefined;
  if (isStructured(format)) {
    printDocument({ url: fn.url, name: fn.name, namespace: fn.namespace, runtime: fn.runtime?.name, release: fn.release }, format);
  }
  return {
    fn,
    async stop() {
      unregister();
      await fn.stop();
    },
  };
}

function port(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new InvalidArgumentError(`'${text}' is not a port: give a number from 0 (any free port) to 65535`);
  }
  return value;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

const RELEASES_TEXT = Object.values(ServerlessRelease).join(' or ');

/** Adds `run` to a program. */
export function addRunCommand(program: Command): void {
  program.command('run')
    .description('Serve a Function on localhost with the contract of a Serverless release\'s runtime images: no Docker, no cluster')
    .argument('[folder]', 'Function folder: handler.js or handler.py, its dependencies file, an optional function.yaml')
    .option('--app <app>', 'take the Function from a cdk8s app instead: main.ts, or the command that runs the app')
    .option('--function <name>', 'with --app: the Function, as namespace/name or name')
    .addOption(new Option('-p, --port <port>', 'port to serve on (0: any free port)').argParser(port).default(FUNCTION_PORT))
    .option('--host <address>', 'address to serve on', '127.0.0.1')
    .option('--env-file <file>', 'NAME=value lines: values of Secret and ConfigMap keys the env names, and overrides (repeatable)', collect)
    .option('-e, --env <NAME=value>', 'one variable\'s value (repeatable; wins over --env-file)', collect)
    .option('--mount <secret=folder>', 'a local folder for a mounted Secret, one file per key (repeatable)', collect)
    .option('--from-cluster', 'read Secret and ConfigMap keys and mounted Secrets that are not given locally from the current kube context')
    .option('-w, --watch', 'reload when the code, the dependencies, function.yaml or an env file change')
    .option('--publisher-proxy <url>', 'forward the events the Function publishes to this URL (another local run, say) instead of only printing them')
    .option('--python <interpreter>', 'Python 3.11 or newer, for Python Functions', 'python3')
    .option('--release <version>', `the Serverless release whose runtime contract to follow: ${RELEASES_TEXT} `
      + `(default: the release of the app's stack with --app, or of the output of the app around the folder, else with --from-cluster the cluster's, else ${DEFAULT_RELEASE})`)
    .option('--node <executable>', 'the Node.js for Node.js Functions (nodejs24 runs on Node.js 24 in the cluster)', process.execPath)
    .option('--package-registry-config <folder>', 'install dependencies with this folder\'s .npmrc and pip.conf, as the Pods do with the '
      + 'Secret serverless-package-registry-config (default: with --from-cluster, that Secret of the namespace; else this machine\'s settings)')
    .option('--strict-runtime-version', 'refuse a Node.js Function whose runtime\'s Node.js major version is not the local one, instead of a notice')
    .addHelpText('after', `
The handler runs on this machine's node or python3, as the runtime images run it: main(event,
context) for every request, event.data, the ce-* attributes of CloudEvents, event.extensions.request
and .response, event.emitCloudEvent(), FUNC_TIMEOUT, and the variables the controller sets
(FUNC_NAME, SERVICE_NAMESPACE, FUNC_RUNTIME, ...). Events the Function publishes go to a local
publisher proxy, which prints them.

--release picks how the controller starts the container:
  1.11.1  dependencies installed once, as the image build does (npm install --omit=dev), into a
          cache (~/.cache/cdk8s-kyma-serverless) keyed by their hash; the controller's variables
          win over the Function's own.
  1.13.0  dependencies installed at every start, as every Pod does (npm install --prefer-offline,
          devDependencies included; pip install --target); the inline source in FUNC_HANDLER_SOURCE;
          the Function's own FUNC_NAME, PUBLISHER_PROXY_ADDRESS, ... win over the controller's.
The release is --release, else the app's stack's (--app, or for a folder the one the synthesized output
of the app around it names), else the cluster's (--from-cluster), else 1.11.1.
A nodejs24 Function runs on the local Node.js (--node), with a notice when its major version is
not 24; --strict-runtime-version refuses instead.

Examples:
  kyma-serverless run functions/hello-node
  kyma-serverless run functions/orders --env-file .env --mount orders-tls=./secrets/tls --watch
  kyma-serverless run functions/orders --from-cluster -n team-a
  kyma-serverless run --app main.ts --function team-a/orders --port 8081
  kyma-serverless run functions/hello-node --publisher-proxy http://127.0.0.1:8081   # events to another run
  kyma-serverless run functions/hello-node --release 1.13.0 --node ~/.nvm/versions/node/v24.18.0/bin/node
`)
    .action(async (folder: string | undefined, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<RunOptions>();
      const run = await startRun(folder, options);
      if (!isStructured(options.output)) {
        print(run.fn.failure
          ? `${run.fn.name || folder} does not load (see above); watching for changes, it will answer at ${run.fn.url}; Ctrl-C stops it`
          : `${run.fn.name} answers at ${run.fn.url}${options.watch ? ' (watching for changes)' : ''}; Ctrl-C stops it`);
      }
      await new Promise<void>(resolve => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void run.stop().then(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
