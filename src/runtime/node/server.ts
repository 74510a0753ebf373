/**
 * The Node.js runtime on this machine: what the `nodejs20`, `nodejs22` and `nodejs24` images of
 * Serverless 1.11.1 and 1.13.0 run (`server.mjs`, the same in both), on Node.js's own http module
 * instead of Express. It listens on
 * `FUNC_PORT`, loads `HANDLER_PATH` with `import()` as the images do, and calls its `main(event,
 * context, callback)` for every request but `/healthz`, `/metrics` and `/favicon.ico`.
 *
 * It runs as its own process (LocalFunction starts it) and reports to its parent on file
 * descriptor 3 (see `../_control.ts`).
 */
import * as http from 'node:http';
import * as nodeModule from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
// The module, not the api index: the bundle of this program stays small.
import { DEFAULT_BODY_SIZE_LIMIT_MB, DEFAULT_FUNCTION_TIMEOUT_SECONDS, FUNCTION_PORT } from '../../api/runtime-contract';
import { PRIVATE_ENV, sendControl } from '../_control';
import { BodyError, errorPage, expressRequest, expressResponse, parseBody } from './_express';
import { buildEvent } from './_event';
import { redirectMounts } from './_mounts';

/** A handler's `main`. */
type SendResponse = (body?: unknown, status?: number, headers?: { [name: string]: string }) => void;
type UserFunction = (event: unknown, context: unknown, callback: SendResponse) => unknown;

/**
 * The images' `helper.handleError` sets the status of the current trace span, and there is none:
 * their tracing never instruments the Express they import before setting it up. So it throws,
 * and the 500 it meant to send is never sent.
 */
const SPAN_ERROR = 'Cannot read properties of undefined (reading \'setStatus\')';

/** `import()`, kept from the TypeScript compiler, which turns it into `require()` for CommonJS output. */
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<{ [name: string]: unknown }>;

/** Why a loaded module has no `main` the images can call, and the fix. */
function missingMainMessage(module: { [name: string]: unknown }, handler: string): string {
  const exported = module.default as { main?: unknown } | undefined;
  if (exported && typeof exported === 'object' && typeof exported.main === 'function') {
    return `${handler} sets main on module.exports, but the runtime loads the handler with import(), which sees only the exports Node.js finds `
      + 'in the code without running it: `module.exports = { async main() {...} }` and `main: () => ...` hide main. '
      + 'Write `module.exports.main = async function (event, context) { ... }`, '
      + 'or declare `function main(event, context) { ... }` and end with `module.exports = { main }`';
  }
  const names = Object.keys(module).filter(n => n !== 'default');
  return `${handler} exports no function main${names.length ? ` (it exports ${names.join(', ')})` : ''}: `
    + 'the runtime calls main(event, context); export it with `module.exports.main = async function (event, context) { ... }`';
}

/** Why a handler failed to load, and the fix. */
function loadErrorMessage(error: Error, handler: string): string {
  const missing = /Cannot find (?:module|package) '([^']+)'/.exec(error.message);
  if (missing && !missing[1].startsWith('.') && !path.isAbsolute(missing[1])) {
    return `${handler} requires '${missing[1]}', which is not installed: `
      + 'declare it in the dependencies of package.json (the cluster installs only those)';
  }
  return `${handler} failed to load: ${error.stack ?? error.message}`;
}

/**
 * Lets ES module handlers import the installed dependencies. The images install them beside the
 * handler (`function/node_modules`); here they are in the cache, which CommonJS finds through
 * `NODE_PATH` but `import` does not: a bare specifier not found from the handler is looked up from
 * the cache folder.
 */
function resolveFromDependencies(nodeModules: string | undefined): void {
  const register = (nodeModule as { register?: (specifier: string) => void }).register;
  if (!nodeModules || !register) return;
  const parentURL = pathToFileURL(path.join(path.dirname(nodeModules), 'index.js')).href;
  register(`data:text/javascript,${encodeURIComponent(`export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || /^([./]|[a-z]+:)/.test(specifier)) throw e;
    return next(specifier, { ...context, parentURL: ${JSON.stringify(parentURL)} });
  }
}`)}`);
}

function readEnvironment() {
  const mounts = JSON.parse(process.env[PRIVATE_ENV.MOUNTS] ?? '{}') as { [mountPath: string]: string };
  const host = process.env[PRIVATE_ENV.HOST] ?? '127.0.0.1';
  const release = process.env[PRIVATE_ENV.RELEASE] ?? '1.11.1';
  const port = Number(process.env[PRIVATE_ENV.PORT] ?? process.env.FUNC_PORT ?? FUNCTION_PORT);
  // What only this process needs (and ts-node's settings in a checkout) is not the handler's business.
  for (const name of [...Object.values(PRIVATE_ENV), 'TS_NODE_PROJECT', 'TS_NODE_SWC', 'TS_NODE_TRANSPILE_ONLY']) delete process.env[name];
  const timeout = Number(process.env.FUNC_TIMEOUT || DEFAULT_FUNCTION_TIMEOUT_SECONDS);
  const bodySizeLimit = Number(process.env.REQ_MB_LIMIT || DEFAULT_BODY_SIZE_LIMIT_MB);
  return {
    mounts, host, timeout, bodySizeLimit, release,
    handlerPath: path.resolve(process.env.HANDLER_PATH || './handler.js'),
    port,
    publisher: process.env.PUBLISHER_PROXY_ADDRESS,
    context: {
      'function-name': process.env.FUNC_NAME,
      'runtime': process.env.FUNC_RUNTIME,
      'namespace': process.env.SERVICE_NAMESPACE,
      'timeout': timeout,
      'body-size-limit': bodySizeLimit,
    },
  };
}

/** Starts the server and loads the handler. */
export function main(): void {
  const settings = readEnvironment();
  redirectMounts(settings.mounts);
  resolveFromDependencies(process.env.NODE_PATH);
  // As the images do: errors of the handler's callbacks are logged, and the server goes on.
  process.on('uncaughtException', err => console.error(`Caught exception: ${err}`));
  const handlerName = path.basename(settings.handlerPath);
  let userFunction: UserFunction | undefined;

  const note = (message: string) => sendControl({ type: 'note', message });
  const asyncErrorNote = (err: unknown) => note(`main's promise rejected, or what it resolved to could not be sent (${String(err)}); `
    + `the ${settings.context.runtime} runtime of Serverless ${settings.release} sends no 500 for that: its error handler fails (${SPAN_ERROR}), `
    + `so the request waits for FUNC_TIMEOUT (${settings.timeout} s) and gets 408 Request Timeout, as in the cluster. `
    + 'Catch errors in main and answer them yourself: event.setResponseStatus(500); return { error: ... }');
  const syncErrorNote = (err: unknown) => note(`main threw, or what it returned could not be sent (${String(err)}); `
    + `the ${settings.context.runtime} runtime of Serverless ${settings.release} then fails in its own error handler (${SPAN_ERROR}) `
    + 'and Express answers 500 with an error page about that, as in the cluster. '
    + 'Catch errors in main and answer them yourself: event.setResponseStatus(500); return { error: ... }');

  const callFunction = (fn: UserFunction, req: ReturnType<typeof expressRequest>, res: ReturnType<typeof expressResponse>) => {
    const event = buildEvent(req, res, settings.publisher);
    const sendResponse: SendResponse = (body, status, headers) => {
      if (res.writableEnded) return;
      for (const [name, value] of Object.entries(headers ?? {})) res.set(name, value);
      if (body) {
        if (status) res.status(status);
        if (typeof body === 'object') res.json(body);
        else res.end(body as string);
      } else if (status) {
        res.sendStatus(status);
      } else {
        res.end();
      }
    };
    const handleError = (err: unknown) => {
      console.error(err);
      throw new TypeError(SPAN_ERROR);
    };
    try {
      const out = fn(event, settings.context, sendResponse);
      if (out && typeof (out as Promise<unknown>).then === 'function') {
        (out as Promise<unknown>)
          .then(result => sendResponse(result))
          .catch(err => {
            asyncErrorNote(err);
            handleError(err);
          });
      } else {
        sendResponse(out);
      }
    } catch (err) {
      syncErrorNote(err);
      try {
        handleError(err);
      } catch (spanError) {
        // Thrown in the route: Express answers with its error page.
        errorPage(res, 500, spanError as Error);
      }
    }
  };

  const server = http.createServer((request, response) => {
    const started = Date.now();
    response.setHeader('X-Powered-By', 'Express');
    const res = expressResponse(response, request);
    response.on('finish', () => sendControl({
      type: 'request', method: request.method ?? 'GET', path: request.url ?? '/', status: response.statusCode, ms: Date.now() - started,
    }));
    const timer = setTimeout(() => {
      if (!response.headersSent) res.sendStatus(408);
    }, settings.timeout * 1000);
    response.on('close', () => clearTimeout(timer));

    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= settings.bodySizeLimit * 1024 * 1024) chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > settings.bodySizeLimit * 1024 * 1024) {
        errorPage(response, 413, new BodyError('request entity too large', 413, 'PayloadTooLargeError'));
        return;
      }
      let body: unknown;
      try {
        body = parseBody(request.headers['content-type'], Buffer.concat(chunks));
      } catch (e) {
        errorPage(response, (e as BodyError).status ?? 400, e as Error);
        return;
      }
      const req = expressRequest(request, body);
      if (req.method === 'GET' && req.path === '/healthz') return void res.status(200).send('OK');
      if (req.method === 'GET' && req.path === '/favicon.ico') return void res.status(204).end();
      if (req.method === 'GET' && req.path === '/metrics') {
        return void res.status(404).type('text/plain').send('The runtime image serves its Prometheus metrics here; kyma-serverless run does not.\n');
      }
      res.header('Access-Control-Allow-Origin', '*');
      if (req.method === 'OPTIONS') {
        const method = req.headers['access-control-request-method'];
        const headers = req.headers['access-control-request-headers'];
        if (method !== undefined) res.header('Access-Control-Allow-Methods', method);
        if (headers !== undefined) res.header('Access-Control-Allow-Headers', headers);
        return void res.end();
      }
      if (!userFunction) return void res.status(500).send('User function not loaded');
      try {
        callFunction(userFunction, req, res);
      } catch (e) {
        // buildEvent threw (a request that looks like a CloudEvent but is none): Express's error page.
        errorPage(response, 500, e as Error);
      }
    });
  });

  server.on('error', (e: NodeJS.ErrnoException) => {
    sendControl({ type: 'listen-failed', code: e.code ?? 'UNKNOWN', message: e.message });
    process.exit(1);
  });
  server.listen(settings.port, settings.host, () => {
    sendControl({ type: 'listening', port: (server.address() as { port: number }).port });
    const start = process.hrtime();
    importModule(pathToFileURL(settings.handlerPath).href).then(fn => {
      if (typeof fn.main === 'function') {
        userFunction = fn.main as UserFunction;
        const [seconds, nanos] = process.hrtime(start);
        console.log(`user code loaded in ${seconds}sec ${nanos / 1000000}ms`);
        sendControl({ type: 'loaded' });
      } else {
        console.error('Content loaded is not a function. Make sure your function exports \'main\' function', fn);
        sendControl({ type: 'load-failed', message: missingMainMessage(fn, handlerName) });
      }
    }, (e: Error) => {
      console.error(`Caught exception: ${e}`);
      sendControl({ type: 'load-failed', message: loadErrorMessage(e, handlerName) });
    });
  });
  // The parent holds standard input open while it runs: when it ends, the parent is gone, and so is the Function.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

if (require.main === module) main();
