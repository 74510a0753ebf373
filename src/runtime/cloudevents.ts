/**
 * CloudEvents over HTTP (CloudEvents 1.0 HTTP protocol binding): binary and structured mode,
 * written and read. Kyma Eventing delivers events to Functions this way, and Functions publish
 * them this way to the publisher proxy.
 *
 * @see https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/bindings/http-protocol-binding.md
 */
import { randomUUID } from 'node:crypto';

/** The media type of a structured-mode CloudEvent. */
export const CLOUDEVENTS_JSON = 'application/cloudevents+json';

/** How a CloudEvent travels in an HTTP message. */
export enum CloudEventMode {
  /** Attributes in `ce-*` headers, the data as the body with its own content type. */
  BINARY = 'binary',
  /** The whole event as one JSON document (`application/cloudevents+json`). */
  STRUCTURED = 'structured',
}

/** A CloudEvent to send: what the sender chooses; the rest has defaults. */
export interface CloudEventInit {
  /** The event type, such as `order.created.v1`. */
  readonly type: string;
  /** Where the event comes from, such as `shop`. */
  readonly source: string;
  /**
   * The data: objects and arrays travel as JSON, text as text.
   *
   * @default - no data
   */
  readonly data?: unknown;
  /**
   * The event's id.
   *
   * @default - a random UUID
   */
  readonly id?: string;
  /**
   * When the event happened, as RFC 3339 text.
   *
   * @default - now
   */
  readonly time?: string;
  /**
   * The data's media type.
   *
   * @default - `application/json` for data other than text, `text/plain` for text
   */
  readonly datacontenttype?: string;
  /**
   * The subject of the event within its source.
   *
   * @default - none
   */
  readonly subject?: string;
  /**
   * Extension attributes, such as Kyma's `eventtypeversion`.
   *
   * @default - none
   */
  readonly extensions?: { readonly [name: string]: string };
}

/** A CloudEvent as received. */
export interface CloudEvent {
  readonly specversion: string;
  readonly id: string;
  readonly type: string;
  readonly source: string;
  /** When it happened, when the sender said. */
  readonly time?: string;
  /** The data's media type, when the sender said. */
  readonly datacontenttype?: string;
  readonly subject?: string;
  readonly dataschema?: string;
  /** Extension attributes, by name. */
  readonly extensions: { readonly [name: string]: string };
  /** The data: parsed JSON for JSON media types, text for `text/*`, bytes otherwise; absent without data. */
  readonly data?: unknown;
}

/** An HTTP message: lower-case header names and a body. */
export interface HttpMessage {
  readonly headers: { readonly [name: string]: string };
  readonly body: Buffer;
}

const CONTEXT_ATTRIBUTES = ['specversion', 'id', 'type', 'source', 'time', 'datacontenttype', 'subject', 'dataschema'] as const;

/** Whether a media type holds JSON: `application/json`, `text/json` or any `+json`. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}

function isBytes(data: unknown): data is Uint8Array {
  return data instanceof Uint8Array;
}

/**
 * Writes a CloudEvent as an HTTP message.
 *
 * @param init the event
 * @param mode binary or structured
 * @returns the headers (lower case) and the body
 */
export function encodeCloudEvent(init: CloudEventInit, mode: CloudEventMode): HttpMessage {
  if (!init.type) throw new Error('A CloudEvent needs a type, such as order.created.v1');
  if (!init.source) throw new Error('A CloudEvent needs a source, such as shop');
  const hasData = init.data !== undefined;
  const datacontenttype = init.datacontenttype ?? (!hasData ? undefined
    : typeof init.data === 'string' ? 'text/plain'
      : isBytes(init.data) ? 'application/octet-stream' : 'application/json');
  const attributes: { [name: string]: string } = {
    specversion: '1.0',
    id: init.id ?? randomUUID(),
    type: init.type,
    source: init.source,
    time: init.time ?? new Date().toISOString(),
    ...(datacontenttype ? { datacontenttype } : {}),
    ...(init.subject ? { subject: init.subject } : {}),
    ...init.extensions,
  };
  if (mode === CloudEventMode.STRUCTURED) {
    const data = !hasData ? {} : isBytes(init.data) ? { data_base64: Buffer.from(init.data).toString('base64') } : { data: init.data };
    return { headers: { 'content-type': CLOUDEVENTS_JSON }, body: Buffer.from(JSON.stringify({ ...attributes, ...data })) };
  }
  const headers: { [name: string]: string } = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'datacontenttype') headers['content-type'] = value;
    else headers[`ce-${name}`] = value;
  }
  const body = !hasData ? Buffer.alloc(0)
    : isBytes(init.data) ? Buffer.from(init.data)
      : typeof init.data === 'string' && !isJsonMediaType(datacontenttype) ? Buffer.from(init.data)
        : Buffer.from(JSON.stringify(init.data));
  return { headers, body };
}

/** Reads data of a media type: JSON parsed, text as text, anything else as bytes. */
function readData(body: Buffer, contentType: string | undefined): unknown {
  if (isJsonMediaType(contentType)) {
    try {
      return JSON.parse(body.toString('utf8'));
    } catch {
      return body.toString('utf8');
    }
  }
  if (!contentType || /^text\//i.test(contentType)) return body.toString('utf8');
  return body;
}

/**
 * Reads a CloudEvent from an HTTP message, in either mode.
 *
 * @param message the headers (any case) and the body
 * @returns the event, or `undefined` when the message is no CloudEvent
 * @throws when it claims to be one but lacks a required attribute or does not parse
 */
export function decodeCloudEvent(message: HttpMessage): CloudEvent | undefined {
  const headers = Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const contentType = headers['content-type'];
  let attributes: { [name: string]: unknown };
  let data: unknown;
  if ((contentType ?? '').toLowerCase().startsWith(CLOUDEVENTS_JSON)) {
    try {
      attributes = JSON.parse(message.body.toString('utf8'));
    } catch (e) {
      throw new Error(`A structured CloudEvent must be one JSON object: ${(e as Error).message}`);
    }
    if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
      throw new Error('A structured CloudEvent must be one JSON object');
    }
    const { data: inline, data_base64: base64, ...rest } = attributes;
    attributes = rest;
    data = base64 !== undefined ? Buffer.from(String(base64), 'base64') : inline;
  } else if (headers['ce-id'] || headers['ce-type'] || headers['ce-specversion']) {
    attributes = Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('ce-')).map(([k, v]) => [k.slice(3), v]));
    if (contentType) attributes.datacontenttype = contentType;
    data = message.body.length ? readData(message.body, contentType) : undefined;
  } else {
    return undefined;
  }
  const missing = ['specversion', 'id', 'type', 'source'].filter(a => typeof attributes[a] !== 'string' || !attributes[a]);
  if (missing.length) throw new Error(`The CloudEvent lacks ${missing.join(', ')}: every event needs specversion, id, type and source`);
  const extensions: { [name: string]: string } = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (!(CONTEXT_ATTRIBUTES as readonly string[]).includes(name)) extensions[name] = String(value);
  }
  const attribute = (name: string) => (attributes[name] === undefined ? undefined : String(attributes[name]));
  return {
    specversion: attribute('specversion')!,
    id: attribute('id')!,
    type: attribute('type')!,
    source: attribute('source')!,
    time: attribute('time'),
    datacontenttype: attribute('datacontenttype'),
    subject: attribute('subject'),
    dataschema: attribute('dataschema'),
    extensions,
    ...(data !== undefined ? { data } : {}),
  };
}
