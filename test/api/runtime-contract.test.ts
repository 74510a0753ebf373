import { DEFAULT_TRACE_COLLECTOR_ENDPOINT, functionContainerEnv } from '../../src/api';

describe('functionContainerEnv', () => {
  const identity = { name: 'orders', namespace: 'team-a', publisherProxyAddress: 'http://eventing-publisher-proxy.kyma-system/publish' };

  test('gives a Node.js container the runtime and handler path first, then the identity and addresses, in the controller\'s order', () => {
    expect(functionContainerEnv({ runtime: 'nodejs22', ...identity })).toEqual([
      { name: 'FUNC_RUNTIME', value: 'nodejs22' },
      { name: 'HANDLER_PATH', value: './function/handler.js' },
      { name: 'FUNC_NAME', value: 'orders' },
      { name: 'SERVICE_NAMESPACE', value: 'team-a' },
      { name: 'TRACE_COLLECTOR_ENDPOINT', value: DEFAULT_TRACE_COLLECTOR_ENDPOINT },
      { name: 'PUBLISHER_PROXY_ADDRESS', value: 'http://eventing-publisher-proxy.kyma-system/publish' },
      { name: 'FUNC_HANDLER', value: 'main' },
      { name: 'MOD_NAME', value: 'handler' },
      { name: 'FUNC_PORT', value: '8080' },
    ]);
  });

  test('gives a Python container the paths of the python312 image, and the stack\'s trace collector when it has one', () => {
    const env = functionContainerEnv({ runtime: 'python312', ...identity, traceCollectorEndpoint: 'http://otel:4318/v1/traces' });
    expect(env.slice(0, 4).map(e => e.name)).toEqual(['FUNC_RUNTIME', 'PYTHONPATH', 'FUNCTION_PATH', 'PYTHONUNBUFFERED']);
    expect(Object.fromEntries(env.map(e => [e.name, e.value]))).toMatchObject({
      FUNCTION_PATH: '/kubeless', PYTHONUNBUFFERED: 'TRUE', TRACE_COLLECTOR_ENDPOINT: 'http://otel:4318/v1/traces',
    });
  });
});
