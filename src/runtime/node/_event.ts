/**
 * The `event` the Node.js runtime images (1.11.1, `lib/ce.js`) hand `main(event, context)`: the
 * request and response, the data or the CloudEvent's attributes, and functions that set the
 * response or publish CloudEvents to `PUBLISHER_PROXY_ADDRESS`.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { CLOUDEVENTS_JSON, CloudEventMode, encodeCloudEvent } from '../cloudevents';
import { ExpressRequest, ExpressResponse, mediaType } from './_express';

/** What a publish resolves to: the parts of an axios response handlers read. */
export interface PublishResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly data: unknown;
}

/** POSTs a body to the publisher proxy; rejects on a status outside 2xx, as axios does. */
function post(address: string | undefined, headers: { [name: string]: string }, body: Buffer): Promise<PublishResponse> {
  return new Promise((resolve, reject) => {
    if (!address) {
      reject(new Error('PUBLISHER_PROXY_ADDRESS is not set: the Function has nowhere to publish events'));
      return;
    }
    const url = new URL(address);
    const sent = { ...headers, 'content-length': body.length };
    const request = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers: sent }, response => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let data: unknown = text;
        try {
          data = text ? JSON.parse(text) : text;
        } catch {
          // Not JSON: the text.
        }
        const result = { status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: response.headers, data };
        if (result.status >= 200 && result.status < 300) resolve(result);
        else reject(Object.assign(new Error(`Request failed with status code ${result.status}`), { response: result }));
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** `ce.js`'s resolvedatatype: the content type it gives emitted data. */
function resolveDataType(data: unknown): string | undefined {
  if (typeof data === 'object') return 'application/json';
  if (typeof data === 'string') return 'text/plain';
  return undefined;
}

const CORE_ATTRIBUTES = new Set(['id', 'time', 'type', 'source', 'specversion', 'datacontenttype', 'subject', 'data']);

/** The attributes of a CloudEvent request, as the cloudevents SDK (10.x) reads it in `ce.js`. */
function cloudEventAttributes(req: ExpressRequest): { [key: string]: unknown } {
  const headers = req.headers;
  const contentType = headers['content-type'];
  let attributes: { [name: string]: unknown };
  let data: unknown;
  if (contentType?.startsWith(CLOUDEVENTS_JSON)) {
    const envelope = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as { [name: string]: unknown };
    const { data: inline, data_base64: base64, ...rest } = envelope;
    attributes = rest;
    // The SDK hands binary data of a structured event over as a Uint32Array of its bytes.
    data = base64 ? new Uint32Array(Buffer.from(String(base64), 'base64')) : inline;
  } else if (headers['ce-id']) {
    attributes = {};
    for (const [name, value] of Object.entries(headers)) {
      if (name.startsWith('ce-')) attributes[name.slice(3)] = value;
    }
    if (contentType) attributes.datacontenttype = contentType;
    data = req.body;
  } else {
    // The SDK's own words; ce.js does not catch it, so Express answers 500.
    throw new TypeError('no cloud event detected');
  }
  const time = attributes.time === undefined ? new Date() : new Date(String(attributes.time));
  return {
    'ce-type': attributes.type,
    'ce-source': attributes.source,
    'ce-eventtypeversion': attributes.eventtypeversion,
    'ce-specversion': attributes.specversion ?? '1.0',
    'ce-id': attributes.id,
    'ce-time': time.toISOString(),
    'ce-datacontenttype': attributes.datacontenttype,
    'data': data,
  };
}

/** A tracer that records nothing: locally there is no trace collector. */
const NO_SPAN = {
  setAttribute: () => NO_SPAN, setAttributes: () => NO_SPAN, setStatus: () => NO_SPAN, addEvent: () => NO_SPAN, updateName: () => NO_SPAN,
  recordException: () => undefined, end: () => undefined, isRecording: () => false,
  spanContext: () => ({ traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: 0 }),
};
const NO_TRACER = {
  startSpan: () => NO_SPAN,
  startActiveSpan: (...args: unknown[]) => (args[args.length - 1] as (span: typeof NO_SPAN) => unknown)(NO_SPAN),
};

/**
 * Builds the `event` of a request.
 *
 * @param req the request, its body parsed
 * @param res the response
 * @param publisher `PUBLISHER_PROXY_ADDRESS`
 * @throws TypeError for a request with `ce-type` and `ce-source` but neither a CloudEvents body nor `ce-id`
 */
export function buildEvent(req: ExpressRequest, res: ExpressResponse, publisher: string | undefined): { [key: string]: unknown } {
  const event: { [key: string]: unknown } = {
    tracer: NO_TRACER,
    extensions: { request: req, response: res },
    setResponseHeader: (key: string, value: string) => res.set(key, value),
    setResponseContentType: (type: string) => res.type(type),
    setResponseStatus: (status: number) => res.status(status),
    publishCloudEvent: (data: unknown) => {
      process.stderr.write('publishCloudEvent is deprecated. Use emitCloudEvent\n');
      const body = Buffer.from(typeof data === 'string' ? data : JSON.stringify(data));
      return post(publisher, { 'content-type': CLOUDEVENTS_JSON }, body);
    },
    buildResponseCloudEvent: (id: string, type: string, data: unknown) => {
      process.stderr.write('buildResponseCloudEvent is deprecated. Use emitCloudEvent\n');
      return {
        type, source: req.get('ce-source'), eventtypeversion: req.get('ce-eventtypeversion'), specversion: req.get('ce-specversion'),
        id, data, datacontenttype: resolveDataType(data),
      };
    },
    emitCloudEvent: (type: string, source: string, data: unknown, optional?: { [name: string]: unknown }) => {
      const attributes = { datacontenttype: resolveDataType(data), ...optional } as { [name: string]: unknown };
      const extensions = Object.fromEntries(Object.entries(attributes)
        .filter(([k, v]) => !CORE_ATTRIBUTES.has(k) && v !== undefined)
        .map(([k, v]) => [k, String(v)]));
      // Thrown here, not rejected, as the SDK's strict CloudEvent constructor throws.
      const message = encodeCloudEvent({
        type, source, data,
        id: attributes.id as string | undefined,
        time: attributes.time as string | undefined,
        subject: attributes.subject as string | undefined,
        datacontenttype: attributes.datacontenttype as string | undefined,
        extensions,
      }, CloudEventMode.STRUCTURED);
      return post(publisher, { 'content-type': `${CLOUDEVENTS_JSON}; charset=utf-8` }, message.body);
    },
  };
  if (req.body && !/^multipart\//.test(mediaType(req.headers['content-type']))) {
    const isCloudEvent = mediaType(req.headers['content-type']) === CLOUDEVENTS_JSON || (req.get('ce-type') && req.get('ce-source'));
    Object.assign(event, isCloudEvent ? cloudEventAttributes(req) : { data: req.body });
  }
  return event;
}
