/**
 * `kyma-serverless invoke`: one request or CloudEvent to a Function, on this machine (a folder
 * that `run` serves, or started for this one call) or in a cluster (its URL), and its answer.
 */
import * as fs from 'node:fs';
import { Command, Option } from 'commander';
import { DEFAULT_RELEASE, ServerlessRelease, parseRelease } from '../../api';
import { CloudEventMode } from '../../runtime/cloudevents';
import { FunctionRequest, FunctionResponse, invokeFunction } from '../../runtime/invoke';
import { LocalFunction, LogLine, LogSource } from '../../runtime/local-function';
import { parseDuration } from '../status';
import { CliError } from '../errors';
import { OutputFormat, isStructured, print, printDocument } from '../_output';
import { findRun } from '../_runs';

/** Options of {@link invokeCommand}. */
export interface InvokeOptions {
  /**
   * The HTTP method.
   *
   * @default - GET, or POST with data or an event
   */
  readonly method?: string;
  /**
   * The path and query.
   *
   * @default - the URL's own, or /
   */
  readonly path?: string;
  /**
   * The body, or `@file` for a file's content.
   *
   * @default - none
   */
  readonly data?: string;
  /**
   * Send a CloudEvent of this type.
   *
   * @default - a plain request
   */
  readonly type?: string;
  /**
   * The CloudEvent's source.
   *
   * @default 'kyma-serverless-invoke'
   */
  readonly source?: string;
  /**
   * The CloudEvent's id.
   *
   * @default - a random UUID
   */
  readonly id?: string;
  /**
   * How the CloudEvent travels.
   *
   * @default CloudEventMode.BINARY
   */
  readonly mode?: CloudEventMode;
  /**
   * `Name: value` headers.
   *
   * @default - none
   */
  readonly header?: readonly string[];
  /**
   * How long to wait, such as `30s`.
   *
   * @default '5m'
   */
  readonly timeout?: string;
  /**
   * For a folder started for this call: env files, as `run` takes them.
   *
   * @default - none
   */
  readonly envFile?: readonly string[];
  /**
   * For a folder started for this call: the Serverless release whose runtime contract it follows, as `run` takes it.
   *
   * @default ServerlessRelease.V1_11_1
   */
  readonly release?: string;
  /**
   * For a folder started for this call: the Node.js executable, as `run` takes it.
   *
   * @default - the Node.js that runs the command
   */
  readonly node?: string;
  /**
   * The output format.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
}

/** What the options ask to send. */
export function invokeRequest(options: InvokeOptions): FunctionRequest {
  const headers: { [name: string]: string } = {};
  for (const header of options.header ?? []) {
    const at = header.indexOf(':');
    if (at <= 0) throw new CliError(`--header ${header}: give it as "Name: value"`);
    headers[header.slice(0, at).trim().toLowerCase()] = header.slice(at + 1).trim();
  }
  let data = options.data;
  if (data?.startsWith('@')) {
    try {
      data = fs.readFileSync(data.slice(1), 'utf8');
    } catch (e) {
      const cause = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      throw new CliError(`--data ${options.data}: cannot read ${data.slice(1)} (${cause}): give an existing file`);
    }
  }
  let json: unknown;
  try {
    json = data === undefined ? undefined : JSON.parse(data);
  } catch {
    json = undefined;
  }
  const timeout = parseDuration(options.timeout ?? '5m');
  const common = { method: options.method, path: options.path, headers, timeout };
  if (options.type) {
    return {
      ...common,
      event: { type: options.type, source: options.source ?? 'kyma-serverless-invoke', id: options.id, data: json ?? data },
      mode: options.mode ?? CloudEventMode.BINARY,
    };
  }
  if (options.source || options.id) throw new CliError('--source and --id describe a CloudEvent: give its --type too');
  return json !== undefined && headers['content-type'] === undefined ? { ...common, json } : { ...common, body: data };
}

/** The answer as `invoke` prints it: status line, headers, a blank line, the body. */
export function formatResponse(response: FunctionResponse): string {
  const head = [`HTTP ${response.status} ${response.statusText}`, ...Object.entries(response.headers).map(([name, value]) => `${name}: ${value}`)];
  const type = response.headers['content-type'] ?? '';
  const text = response.text();
  const printable = !/[\u0000-\u0008\u000e-\u001f]/.test(text) && !text.includes('\ufffd');
  const body = !response.body.length ? ''
    : printable || /^text\/|json|xml/.test(type) ? text.replace(/\n$/, '')
      : `<${response.body.length} bytes of ${type || 'data'}>`;
  return `${head.join('\n')}\n\n${body}`;
}

/** What {@link invokeTarget} got. */
export interface InvokeResult {
  /** The answer. */
  readonly response: FunctionResponse;
  /** Where it came from. */
  readonly url: string;
  /** Whether the folder was started for this one call. */
  readonly started: boolean;
  /** For a folder started for this call: what the Function and the runtime logged (its load, the call, the runtime's notes). */
  readonly log?: readonly LogLine[];
  /** For a folder a `run` serves: the process id of that run, whose output holds the Function's log. */
  readonly runPid?: number;
}

/**
 * Sends the request of the options to a folder's local run (started for this call when none runs) or to a URL.
 *
 * @param target a Function folder or a URL
 * @returns the answer, and where it came from
 */
export async function invokeTarget(target: string, options: InvokeOptions): Promise<InvokeResult> {
  const request = invokeRequest(options);
  const release = options.release === undefined ? undefined : parseRelease(options.release, '--release');
  if (fs.existsSync(target) && fs.statSync(target).isDirectory()) {
    const run = findRun(target);
    if (run) return { response: await invokeFunction(run.url, { path: '/', ...request }), url: run.url, started: false, runPid: run.pid };
    let fn: LocalFunction;
    const log: LogLine[] = [];
    try {
      fn = await LocalFunction.startFolder(target, { envFiles: options.envFile, release, node: options.node, log: line => log.push(line) });
    } catch (e) {
      // The fix may name an option of run (--env, --mount, --from-cluster, --python), which invoke has not.
      throw new CliError(`${(e as Error).message}\n  invoke starts a folder that no run serves with --env-file only: for the options of run `
        + `(--env, --mount, --from-cluster, --python), serve it with kyma-serverless run ${target} <options>, then invoke it again`);
    }
    try {
      return { response: await fn.request(request), url: fn.url, started: true, log };
    } finally {
      await fn.stop();
    }
  }
  if (!/^https?:\/\//.test(target)) {
    throw new CliError(`'${target}' is neither a Function folder nor a URL: `
      + 'give a folder such as functions/hello-node, or a URL such as http://127.0.0.1:8080');
  }
  return { response: await invokeFunction(target, request), url: target, started: false };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The log of a folder started for a call that failed, for standard error: its output and the runtime's lines (as `run` prints them). */
export function failureLog(log: readonly LogLine[]): string {
  const lines = log.filter(l => l.source !== LogSource.STDOUT || l.text.trim());
  if (!lines.length) return '';
  return `kyma-serverless: the Function's log for this call:\n${lines.map(l => `  ${l.source === LogSource.RUNTIME ? 'kyma-serverless: ' : ''}${l.text}`).join('\n')}\n`;
}

/** Adds `invoke` to a program. */
export function addInvokeCommand(program: Command): void {
  program.command('invoke')
    .description('Send a request or a CloudEvent to a Function, local or in a cluster, and print its answer')
    .argument('<target>', 'a Function folder (its `run`, or started for this call), or a URL (of a run, or the endpoint `status` shows)')
    .option('-X, --method <method>', 'HTTP method (default: GET, or POST with --data or --type)')
    .option('--path <path>', 'path and query, such as "/?name=Ada"')
    .option('-d, --data <data>', 'the body, or @file; JSON is sent as application/json, other text as text/plain')
    .option('-t, --type <type>', 'send a CloudEvent of this type, with --data as its data')
    .option('-s, --source <source>', 'the CloudEvent\'s source', undefined)
    .option('--id <id>', 'the CloudEvent\'s id (default: a random UUID)')
    .addOption(new Option('--mode <mode>', 'how the CloudEvent travels').choices(Object.values(CloudEventMode)).default(CloudEventMode.BINARY))
    .option('-H, --header <header>', '"Name: value" (repeatable)', collect)
    .option('--env-file <file>', 'for a folder started for this call: NAME=value lines, as run takes them (repeatable)', collect)
    .option('--timeout <duration>', 'how long to wait for the answer', '5m')
    .option('--release <version>', `for a folder started for this call: the Serverless release whose runtime contract to follow, `
      + `${Object.values(ServerlessRelease).join(' or ')} (default: ${DEFAULT_RELEASE})`)
    .option('--node <executable>', 'for a folder started for this call: the Node.js for Node.js Functions')
    .addHelpText('after', `
Exit code 0 when the Function answers with a status below 400, 1 otherwise.

Examples:
  kyma-serverless invoke functions/hello-node --path "/?name=Ada"
  kyma-serverless invoke http://127.0.0.1:8080 -d '{"order": 42}'
  kyma-serverless invoke functions/hello-python -t greeting.sent.v1 -s hello-node -d '{"name": "Ada"}'
  kyma-serverless invoke https://hello-node.local.kyma.dev -t order.created.v1 --mode structured -o json
`)
    .action(async (target: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<InvokeOptions>();
      const { response, url, started, log = [], runPid } = await invokeTarget(target, options);
      if (isStructured(options.output)) {
        let json: unknown;
        try {
          json = JSON.parse(response.text());
        } catch {
          json = undefined;
        }
        const { status, statusText, headers } = response;
        printDocument({
          url, started, status, statusText, headers, body: response.text(), ...(json !== undefined ? { json } : {}), ...(started ? { log } : {}),
        }, options.output!);
      } else {
        if (started) process.stderr.write(`kyma-serverless: ${target} is not running here (kyma-serverless run): started it for this call\n`);
        // A failure's cause is in the log (what main threw, the runtime's note on the answer), which `run` would show and nothing else does.
        if (started && response.status >= 500) process.stderr.write(failureLog(log));
        if (runPid !== undefined && response.status >= 500) {
          process.stderr.write(`kyma-serverless: the cause is in the log of the kyma-serverless run serving ${target} (process ${runPid}): `
            + 'what main threw, and the runtime\'s note on the answer\n');
        }
        print(formatResponse(response));
      }
      if (response.status >= 400) process.exitCode = 1;
    });
}
