import * as fc from 'fast-check';
import { CLOUDEVENTS_JSON, CloudEventMode, decodeCloudEvent, encodeCloudEvent } from '../../src/runtime/cloudevents';

describe('encodeCloudEvent', () => {
  test('binary mode puts the attributes into ce-* headers and the data, as JSON, into the body', () => {
    const message = encodeCloudEvent({ type: 'order.created.v1', source: 'shop', id: '1', time: '2024-01-01T00:00:00.000Z', data: { n: 1 },
      extensions: { eventtypeversion: 'v1' } }, CloudEventMode.BINARY);
    expect(message.headers).toEqual({
      'ce-specversion': '1.0', 'ce-id': '1', 'ce-type': 'order.created.v1', 'ce-source': 'shop', 'ce-time': '2024-01-01T00:00:00.000Z',
      'ce-eventtypeversion': 'v1', 'content-type': 'application/json',
    });
    expect(message.body.toString()).toBe('{"n":1}');
  });

  test('structured mode writes one JSON document, bytes as data_base64', () => {
    const message = encodeCloudEvent({ type: 't', source: 's', id: '2', data: Buffer.from('hi') }, CloudEventMode.STRUCTURED);
    expect(message.headers).toEqual({ 'content-type': CLOUDEVENTS_JSON });
    expect(JSON.parse(message.body.toString())).toMatchObject({ specversion: '1.0', id: '2', type: 't', source: 's', data_base64: 'aGk=' });
  });

  test('gives text the type text/plain, and an event without data no body and no content type', () => {
    expect(encodeCloudEvent({ type: 't', source: 's', data: 'hello' }, CloudEventMode.BINARY)).toMatchObject({ headers: { 'content-type': 'text/plain' } });
    const empty = encodeCloudEvent({ type: 't', source: 's' }, CloudEventMode.BINARY);
    expect(empty.body.length).toBe(0);
    expect(empty.headers['content-type']).toBeUndefined();
  });

  test('throws when the type or the source is missing', () => {
    expect(() => encodeCloudEvent({ type: '', source: 's' }, CloudEventMode.BINARY)).toThrow(/needs a type/);
    expect(() => encodeCloudEvent({ type: 't', source: '' }, CloudEventMode.STRUCTURED)).toThrow(/needs a source/);
  });
});

describe('decodeCloudEvent', () => {
  // Empty text is no data in binary mode (an empty body), so it is left out.
  const json = fc.jsonValue().filter(v => v !== null && v !== '');
  const name = fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}$/);

  test('reads back what encodeCloudEvent wrote, in both modes', () => {
    fc.assert(fc.property(name, name, json, fc.constantFrom(CloudEventMode.BINARY, CloudEventMode.STRUCTURED), (type, source, data, mode) => {
      const message = encodeCloudEvent({ type, source, data, extensions: { eventtypeversion: 'v1' } }, mode);
      const event = decodeCloudEvent(message)!;
      expect(event).toMatchObject({ specversion: '1.0', type, source, extensions: { eventtypeversion: 'v1' } });
      // Text travels as text; everything else as JSON.
      expect(event.data).toEqual(typeof data === 'string' ? data : JSON.parse(JSON.stringify(data)));
    }));
  });

  test('is undefined for a plain request', () => {
    expect(decodeCloudEvent({ headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') })).toBeUndefined();
  });

  test('fails when a required attribute is missing, naming it', () => {
    expect(() => decodeCloudEvent({ headers: { 'ce-type': 't', 'ce-source': 's' }, body: Buffer.alloc(0) })).toThrow(/lacks specversion, id/);
    expect(() => decodeCloudEvent({ headers: { 'content-type': CLOUDEVENTS_JSON }, body: Buffer.from('[1]') })).toThrow(/one JSON object/);
  });
});
