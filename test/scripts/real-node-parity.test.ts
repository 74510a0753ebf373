import { answerDifferences, parityRequests, parityTable } from '../../scripts/real-node/parity';

describe('the developer loop beside the Pod (npm run e2e:node)', () => {
  const pod = { status: 200, headers: { 'x-powered-by': 'Express', 'access-control-allow-origin': '*', 'content-type': 'text/html; charset=utf-8' }, body: 'Hello from presets' };

  test('the same answer has no differences', () => {
    expect(answerDifferences(pod, { ...pod, headers: { ...pod.headers, date: 'another day' } })).toEqual([]);
  });

  test('status, body and the runtime\'s headers are compared', () => {
    expect(answerDifferences(pod, { status: 500, headers: { 'content-type': 'text/plain' }, body: 'Internal server error' })).toEqual([
      'status 200 in the Pod, 500 locally',
      'body "Hello from presets" in the Pod, "Internal server error" locally',
      'header x-powered-by: "Express" in the Pod, absent locally',
      'header access-control-allow-origin: "*" in the Pod, absent locally',
      'header content-type: "text/html; charset=utf-8" in the Pod, "text/plain" locally',
    ]);
  });

  test('the stack frames of Express\'s error page do not count as a difference, its message does', () => {
    const page = (frames: string, message = 'TypeError: Cannot read properties of undefined (reading &#39;setStatus&#39;)') => ({
      ...pod, status: 500, body: `<!DOCTYPE html>\n<html lang="en">\n<body>\n<pre>${message}<br> &nbsp; &nbsp;at ${frames}</pre>\n</body>\n</html>\n`,
    });
    expect(answerDifferences(page('handleError (/usr/src/app/lib/helper.js:69:10)'), page('handleError (/tmp/run/lib/helper.js:69:10)'))).toEqual([]);
    expect(answerDifferences(page('x (/a.js:1:1)'), page('x (/a.js:1:1)', 'Error: other'))).toHaveLength(1);
  });

  test('stack frames and paths of an error body do not count as a difference', () => {
    const a = { ...pod, status: 500, body: 'Error: boom\n    at main (/usr/src/app/function/handler.js:1:30)' };
    const b = { ...pod, status: 500, body: 'Error: boom\n    at main (/tmp/kyma-serverless-throws-x/handler.js:1:30)' };
    expect(answerDifferences(a, b)).toEqual([]);
  });

  test('the echo also gets a CloudEvent; the others a GET', () => {
    expect(parityRequests('presets').map(r => r.label)).toEqual(['GET /']);
    expect(parityRequests('cloudevent-echo').map(r => r.label)).toEqual(['GET /', 'CloudEvent (binary)']);
    expect(parityRequests('cloudevent-echo')[1].request.headers?.['ce-type']).toBe('order.created.v1');
  });

  test('the table says what differs, or yes', () => {
    const rows = parityTable([
      { key: 'ns/a', request: 'GET /', pod, local: pod, differences: [] },
      { key: 'ns/b', request: 'GET /', pod, differences: ['no local answer'] },
    ]);
    expect(rows[2]).toBe('| ns/a | GET / | 200 text/html; charset=utf-8 "Hello from presets" | 200 text/html; charset=utf-8 "Hello from presets" | yes |');
    expect(rows[3]).toBe('| ns/b | GET / | 200 text/html; charset=utf-8 "Hello from presets" | no answer | no: no local answer |');
    const documented = parityTable([{ key: 'node-checks/missing-dependency', request: 'GET /', pod, differences: ['no local answer'] }]);
    expect(documented[2]).toMatch(/\| no, on purpose \(docs\/develop-locally.md\): run refuses to start .*: no local answer \|$/);
  });
});
