/**
 * Calling a Function over HTTP: a plain request, or a CloudEvent in binary or structured mode,
 * to a local run or to a Function's URL in a cluster.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { Duration } from 'cdk8s';
import { CloudEventInit, CloudEventMode, encodeCloudEvent } from './cloudevents';

/** A request to a Function. */
export interface FunctionRequest {
  /**
   * The HTTP method.
   *
   * @default - GET, or POST when the request has a body, JSON or an event
   */
  readonly method?: string;
  /**
   * The path and query, resolved against the Function's URL.
   *
   * @default - the URL's own
   */
  readonly path?: string;
  /**
   * Request headers.
   *
   * @default - none beyond those of the body
   */
  readonly headers?: { readonly [name: string]: string };
  /**
   * A text body.
   *
   * @default - no body
   */
  readonly body?: string;
  /**
   * A body sent as JSON (`Content-Type: application/json`).
   *
   * @default - no JSON body
   */
  readonly json?: unknown;
  /**
   * A CloudEvent to send instead of a body.
   *
   * @default - no event
   */
  readonly event?: CloudEventInit;
  /**
   * How the event travels.
   *
   * @default CloudEventMode.BINARY
   */
  readonly mode?: CloudEventMode;
  /**
   * How long to wait for the answer.
   *
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;
}

/** A Function's answer. */
export class FunctionResponse {
  constructor(
    /** The HTTP status. */
    public readonly status: number,
    /** The reason phrase, such as `OK`. */
    public readonly statusText: string,
    /** The headers, names in lower case; repeated headers joined with `, `. */
    public readonly headers: { readonly [name: string]: string },
    /** The body. */
    public readonly body: Buffer,
  ) {}

  /** The body as UTF-8 text. */
  public text(): string {
    return this.body.toString('utf8');
  }

  /**
   * The body parsed as JSON.
   *
   * @throws when the body is not JSON, quoting its start
   */
  public json<T = any>(): T {
    try {
      return JSON.parse(this.text()) as T;
    } catch {
      throw new Error(`The Function answered ${this.status} with a body that is not JSON: ${JSON.stringify(this.text().slice(0, 200))}`);
    }
  }
}

/** A Function that could not be reached: the cause, and what to check. */
export class InvokeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvokeError';
  }
}

/** The method, headers and body of a request. */
export function requestMessage(request: FunctionRequest): { method: string; headers: { [name: string]: string }; body?: Buffer } {
  const headers: { [name: string]: string } = {};
  let body: Buffer | undefined;
  if (request.event) {
    const message = encodeCloudEvent(request.event, request.mode ?? CloudEventMode.BINARY);
    Object.assign(headers, message.headers);
    body = message.body;
  } else if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = Buffer.from(JSON.stringify(request.json));
  } else if (request.body !== undefined) {
    headers['content-type'] = 'text/plain';
    body = Buffer.from(request.body);
  }
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  return { method: (request.method ?? (body ? 'POST' : 'GET')).toUpperCase(), headers, body };
}

/**
 * Sends a request to a Function and reads the whole answer.
 *
 * @param url the Function's URL, such as `http://127.0.0.1:8080` or `https://hello.example.com`
 * @param request what to send
 * @returns the answer, whatever its status
 * @throws InvokeError when nothing answers, the host is unknown, or the answer takes longer than the timeout
 */
export function invokeFunction(url: string, request: FunctionRequest = {}): Promise<FunctionResponse> {
  let target: URL;
  try {
    target = request.path ? new URL(request.path, url) : new URL(url);
  } catch {
    return Promise.reject(new InvokeError(`'${url}' is not a URL: give one such as http://127.0.0.1:8080 or https://hello.example.com`));
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return Promise.reject(new InvokeError(`'${url}' is not an http or https URL: give one such as http://127.0.0.1:8080`));
  }
  const { method, headers, body } = requestMessage(request);
  const timeout = (request.timeout ?? Duration.minutes(5)).toMilliseconds();
  return new Promise((resolve, reject) => {
    const sent = { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) };
    const call = (target.protocol === 'https:' ? https : http).request(target, { method, headers: sent }, res => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const flat: { [name: string]: string } = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve(new FunctionResponse(res.statusCode ?? 0, res.statusMessage ?? '', flat, Buffer.concat(chunks)));
      });
      res.on('error', e => reject(new InvokeError(`The answer of ${target.origin} broke off: ${e.message}`)));
    });
    call.setTimeout(timeout, () => call.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    call.on('error', (e: NodeJS.ErrnoException) => {
      switch (e.code) {
        case 'ECONNREFUSED':
          return reject(new InvokeError(`Nothing answers at ${target.origin} (connection refused): `
            + 'start the Function (kyma-serverless run <folder>), or check the URL'));
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
          return reject(new InvokeError(`Cannot find the host ${target.hostname}: check the URL (kyma-serverless status shows each Function's)`));
        case 'TIMEOUT':
          return reject(new InvokeError(`${target.origin} did not answer within ${timeout / 1000} s: the Function may hang, `
            + 'or give it more time (invoke --timeout, or the timeout of the request)'));
        default:
          return reject(new InvokeError(`Cannot reach ${target.origin}: ${e.code ? `${e.code} ` : ''}${e.message}`));
      }
    });
    call.end(body);
  });
}
