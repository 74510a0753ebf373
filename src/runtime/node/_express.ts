/**
 * The parts of Express 5 and body-parser 2 that the Node.js runtime images (1.11.1) hand a
 * handler, on Node.js's own http module: `event.extensions.request` and `.response` are the
 * server's request and response with Express's methods added, and the body is parsed as the
 * images parse it (JSON and CloudEvents JSON, text, URL-encoded forms, anything else as bytes).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import * as querystring from 'node:querystring';

/** A request as a handler sees it: Node.js's, with what Express adds. */
export interface ExpressRequest extends IncomingMessage {
  body?: unknown;
  query: querystring.ParsedUrlQuery;
  params: { path: string[] };
  path: string;
  hostname: string;
  protocol: string;
  secure: boolean;
  ip: string | undefined;
  originalUrl: string;
  baseUrl: string;
  get(name: string): string | undefined;
  header(name: string): string | undefined;
  is(...types: string[]): string | false | null;
}

/** A response as a handler sees it: Node.js's, with what Express adds. */
export interface ExpressResponse extends ServerResponse {
  status(code: number): ExpressResponse;
  set(field: string | { [name: string]: string }, value?: string | string[]): ExpressResponse;
  header(field: string | { [name: string]: string }, value?: string | string[]): ExpressResponse;
  get(field: string): string | number | string[] | undefined;
  type(type: string): ExpressResponse;
  send(body?: unknown): ExpressResponse;
  json(body?: unknown): ExpressResponse;
  sendStatus(code: number): ExpressResponse;
  redirect(url: string): void;
  redirect(status: number, url: string): void;
}

/** A body that failed to parse or was too large: Express answers it with an error page. */
export class BodyError extends Error {
  constructor(message: string, public readonly status: number, public readonly errorName: string) {
    super(message);
    this.name = errorName;
  }
}

const SHORT_TYPES: { readonly [name: string]: string } = {
  html: 'text/html', text: 'text/plain', txt: 'text/plain', json: 'application/json', xml: 'application/xml',
  js: 'application/javascript', css: 'text/css', bin: 'application/octet-stream', urlencoded: 'application/x-www-form-urlencoded',
  multipart: 'multipart/*',
};

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/** Whether a media type matches a pattern of type-is: `json`, `text/*`, `*\/json`, `+json`. */
function typeMatches(actual: string, pattern: string): boolean {
  const expected = pattern.startsWith('+') ? `*/*${pattern}` : SHORT_TYPES[pattern] ?? pattern;
  const [type, subtype] = actual.split('/');
  const [wantType, wantSubtype] = expected.split('/');
  if (!type || !subtype || !wantType || !wantSubtype) return false;
  if (wantType !== '*' && wantType !== type) return false;
  if (wantSubtype.startsWith('*+')) return subtype.endsWith(wantSubtype.slice(1));
  return wantSubtype === '*' || wantSubtype === subtype;
}

/** The Content-Type Express writes for a type: a charset added to text, JSON and JavaScript. */
function withCharset(type: string): string {
  if (/;\s*charset=/i.test(type)) return type;
  const media = mediaType(type);
  return /^text\//.test(media) || media === 'application/json' || media === 'application/javascript' ? `${type}; charset=utf-8` : type;
}

/** The weak ETag Express sets (`etag` package): length and SHA-1 of the body. */
function etag(body: Buffer): string {
  const hash = createHash('sha1').update(body).digest('base64').substring(0, 27);
  return `W/"${body.length.toString(16)}-${hash}"`;
}

/**
 * `a=1&b[c]=2&d[]=3` as the qs package reads it for `urlencoded({ extended: true })`: brackets
 * nest objects, `[]` and numbers make arrays.
 */
function parseNestedForm(text: string): { [key: string]: unknown } {
  const result: { [key: string]: unknown } = {};
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    const keys = match ? [match[1], ...[...match[2].matchAll(/\[([^[\]]*)\]/g)].map(m => m[1])] : [rawKey];
    let target: any = result;
    keys.forEach((key, i) => {
      const last = i === keys.length - 1;
      const nextIsList = !last && (keys[i + 1] === '' || /^\d+$/.test(keys[i + 1]));
      if (Array.isArray(target)) {
        const index = key === '' ? target.length : Number(key);
        if (last) target[index] = value;
        else target = target[index] ??= nextIsList ? [] : {};
      } else if (last) {
        // A repeated key collects its values, as qs does.
        target[key] = key in target ? [].concat(target[key], value as never) : value;
      } else {
        target = target[key] ??= nextIsList ? [] : {};
      }
    });
  }
  return result;
}

/**
 * Parses a request body as the images' body-parser chain does: `json` for JSON and CloudEvents
 * JSON (any JSON value), `text` for `text/*`, `urlencoded` (extended) for forms, and `raw` for
 * the rest. An empty body parses to nothing.
 *
 * @throws BodyError for JSON that does not parse (400)
 */
export function parseBody(contentType: string | undefined, raw: Buffer): unknown {
  if (!raw.length) return undefined;
  const media = mediaType(contentType);
  const charset = /;\s*charset=([^;]+)/i.exec(contentType ?? '')?.[1]?.trim().toLowerCase() === 'latin1' ? 'latin1' : 'utf8';
  if (media === 'application/json' || media === 'application/cloudevents+json') {
    try {
      return JSON.parse(raw.toString(charset));
    } catch (e) {
      throw new BodyError((e as Error).message, 400, 'SyntaxError');
    }
  }
  if (media.startsWith('text/')) return raw.toString(charset);
  if (media === 'application/x-www-form-urlencoded') return parseNestedForm(raw.toString(charset));
  return raw;
}

/**
 * Adds Express's request methods to a Node.js request.
 *
 * @param req the request
 * @param body the parsed body
 */
export function expressRequest(req: IncomingMessage, body: unknown): ExpressRequest {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const get = (name: string) => {
    const key = name.toLowerCase();
    const value = req.headers[key === 'referrer' ? 'referer' : key];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return Object.assign(req, {
    body,
    query: querystring.parse(url.search.slice(1)),
    params: { path: url.pathname.split('/') },
    path: url.pathname,
    hostname: (req.headers.host ?? '').replace(/:\d+$/, ''),
    protocol: 'http',
    secure: false,
    ip: req.socket.remoteAddress,
    originalUrl: req.url ?? '/',
    baseUrl: '',
    get,
    header: get,
    is(...types: string[]) {
      const length = req.headers['content-length'];
      if (length === undefined && req.headers['transfer-encoding'] === undefined) return null;
      const actual = mediaType(req.headers['content-type']);
      if (!actual) return false;
      if (!types.length) return actual;
      const match = types.flat().find(t => typeMatches(actual, t));
      return match ? (match.includes('/') && !match.includes('*') ? match : actual) : false;
    },
  }) as ExpressRequest;
}

/**
 * Adds Express's response methods to a Node.js response.
 *
 * @param res the response
 * @param req its request, for HEAD and conditional GETs
 */
export function expressResponse(res: ServerResponse, req: IncomingMessage): ExpressResponse {
  const self = res as ExpressResponse;
  const set = (field: string | { [name: string]: string }, value?: string | string[]) => {
    if (typeof field === 'object') {
      for (const [name, v] of Object.entries(field)) set(name, v);
      return self;
    }
    const text = Array.isArray(value) ? value.map(String) : String(value);
    res.setHeader(field, field.toLowerCase() === 'content-type' && typeof text === 'string' ? withCharset(text) : text);
    return self;
  };
  const send = (body?: unknown): ExpressResponse => {
    let chunk: Buffer | undefined;
    if (typeof body === 'string') {
      if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'text/html; charset=utf-8');
      chunk = Buffer.from(body);
    } else if (body === null || body === undefined) {
      chunk = Buffer.alloc(0);
    } else if (ArrayBuffer.isView(body)) {
      if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'application/octet-stream');
      chunk = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    } else {
      return self.json(body);
    }
    if (!res.hasHeader('etag') && chunk.length) res.setHeader('ETag', etag(chunk));
    const fresh = (req.method === 'GET' || req.method === 'HEAD') && res.statusCode >= 200 && res.statusCode < 300
      && req.headers['if-none-match'] !== undefined && req.headers['if-none-match'] === res.getHeader('etag');
    if (fresh) res.statusCode = 304;
    if (res.statusCode === 204 || res.statusCode === 304) {
      for (const name of ['content-type', 'content-length', 'transfer-encoding']) res.removeHeader(name);
      res.end();
      return self;
    }
    res.setHeader('Content-Length', chunk.length);
    res.end(req.method === 'HEAD' ? undefined : chunk);
    return self;
  };
  return Object.assign(res, {
    status(code: number) {
      res.statusCode = code;
      return self;
    },
    set,
    header: set,
    get: (field: string) => res.getHeader(field),
    type(type: string) {
      return set('Content-Type', type.includes('/') ? type : SHORT_TYPES[type.replace(/^\./, '')] ?? 'application/octet-stream');
    },
    send,
    json(body?: unknown) {
      if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'application/json; charset=utf-8');
      return send(JSON.stringify(body) ?? '');
    },
    sendStatus(code: number) {
      res.statusCode = code;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      return send(STATUS_CODES[code] ?? String(code));
    },
    redirect(statusOrUrl: number | string, url?: string) {
      res.statusCode = typeof statusOrUrl === 'number' ? statusOrUrl : 302;
      res.setHeader('Location', typeof statusOrUrl === 'string' ? statusOrUrl : url ?? '/');
      send(`Redirecting to ${res.getHeader('location')}`);
    },
  }) as ExpressResponse;
}

const HTML_ESCAPES: { readonly [c: string]: string } = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' };

/** The error page of Express's final handler outside production: the error's stack, escaped. */
export function errorPage(res: ServerResponse, status: number, error: Error): void {
  const escaped = (error.stack ?? String(error)).replace(/[&<>"']/g, c => HTML_ESCAPES[c])
    .replace(/\n/g, '<br>').replace(/ {2}/g, ' &nbsp;');
  const page = ['<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">', '<title>Error</title>', '</head>',
    '<body>', `<pre>${escaped}</pre>`, '</body>', '</html>', ''];
  const body = Buffer.from(page.join('\n'));
  res.statusCode = status;
  res.setHeader('Content-Security-Policy', 'default-src \'none\'');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
