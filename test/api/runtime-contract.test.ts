import { RELEASES, ServerlessRelease, releaseFacts } from '../../src/api';
import {
  DEFAULT_TRACE_COLLECTOR_ENDPOINT, DependencyInstallTime, MAX_ENV_VAR_BYTES, containerEnv, controllerEnv, functionContainerEnv, inlineSourceFiles,
  oversizedEnv, runtimeContract,
} from '../../src/api/runtime-contract';

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

describe('the contract of each release', () => {
  const identity = { name: 'orders', namespace: 'team-a', publisherProxyAddress: 'http://publisher/publish' };
  const inline = { source: 'exports.main = () => 1', dependencies: '{}' };

  test('1.11.1 puts every variable of the controller after the Function\'s own: none can be overridden', () => {
    const { beforeFunctionEnv, afterFunctionEnv } = controllerEnv({ runtime: 'nodejs22', ...identity, inline });
    expect(beforeFunctionEnv).toEqual([]);
    expect(afterFunctionEnv).toEqual(functionContainerEnv({ runtime: 'nodejs22', ...identity }));
  });

  test('1.13.0 puts identity and addresses before the Function\'s own, the inline source and handler path after, and sets no FUNC_PORT', () => {
    const node = controllerEnv({ runtime: 'nodejs24', ...identity, inline, release: ServerlessRelease.V1_13_0 });
    expect(node.beforeFunctionEnv.map(e => e.name)).toEqual(['FUNC_NAME', 'FUNC_RUNTIME', 'SERVICE_NAMESPACE', 'TRACE_COLLECTOR_ENDPOINT', 'PUBLISHER_PROXY_ADDRESS']);
    expect(node.afterFunctionEnv).toEqual([
      { name: 'FUNC_HANDLER_SOURCE', value: inline.source },
      { name: 'FUNC_HANDLER_DEPENDENCIES', value: '{}' },
      { name: 'HANDLER_PATH', value: './function/handler.js' },
    ]);
    const python = controllerEnv({ runtime: 'python312', ...identity, release: ServerlessRelease.V1_13_0 });
    expect(python.beforeFunctionEnv.slice(5).map(e => e.name)).toEqual(['PYTHONUNBUFFERED', 'MOD_NAME', 'FUNC_HANDLER']);
    // A Git source: no source variables; no PYTHONPATH (the container's shell sets it).
    expect(python.afterFunctionEnv).toEqual([{ name: 'FUNCTION_PATH', value: '/kubeless' }]);
  });

  test('containerEnv places the Function\'s own variables where the release\'s controller does', () => {
    const own = [{ name: 'FUNC_NAME', value: 'mine' }];
    const last = (release: ServerlessRelease) => {
      const list = containerEnv(own, { runtime: 'nodejs22', ...identity, release });
      return list.filter(e => e.name === 'FUNC_NAME').pop()!.value;
    };
    expect([last(ServerlessRelease.V1_11_1), last(ServerlessRelease.V1_13_0)]).toEqual(['orders', 'mine']);
  });

  test('inlineSourceFiles writes what each release\'s container finds', () => {
    expect(inlineSourceFiles(ServerlessRelease.V1_11_1, 'nodejs22', 'src', '  ')).toEqual({ handler: 'src', dependencies: '{}' });
    expect(inlineSourceFiles(ServerlessRelease.V1_11_1, 'nodejs22', 'src', ' \n')).toEqual({ handler: 'src', dependencies: ' \n' });
    expect(inlineSourceFiles(ServerlessRelease.V1_13_0, 'nodejs22', 'src', '')).toEqual({ handler: 'src\n', dependencies: '{}\n' });
    expect(inlineSourceFiles(ServerlessRelease.V1_13_0, 'nodejs22', 'src', '  ')).toEqual({ handler: 'src\n', dependencies: '  \n' });
    expect(inlineSourceFiles(ServerlessRelease.V1_13_0, 'python312', 'src')).toEqual({ handler: 'src\n', dependencies: '\n' });
  });

  test('oversizedEnv names the variables Linux starts no program with', () => {
    const fits = 'x'.repeat(MAX_ENV_VAR_BYTES - 'A='.length - 1);
    expect(oversizedEnv([{ name: 'A', value: fits }])).toEqual([]);
    expect(oversizedEnv([{ name: 'A', value: `${fits}x` }])).toEqual([{ name: 'A', bytes: MAX_ENV_VAR_BYTES + 1 }]);
  });

  test('runtimeContract: 1.11.1 installs at build without devDependencies, 1.13.0 at every Pod start with them; images\' Node.js', () => {
    expect(runtimeContract()).toMatchObject({ installTime: DependencyInstallTime.BUILD, npmInstall: ['install', '--omit=dev'], sourceInEnv: false });
    expect(runtimeContract(ServerlessRelease.V1_13_0)).toMatchObject({
      installTime: DependencyInstallTime.POD_START, npmInstallsDevDependencies: true, sourceInEnv: true,
      npmInstall: ['install', '--prefer-offline', '--no-audit', '--progress=false'],
      pipInstall: ['install', '--target=/kubeless/.local', '--no-cache-dir', '-r', 'requirements.txt'],
    });
    // Every runtime of a release's CRD has an image version in its contract.
    for (const release of RELEASES) {
      const contract = runtimeContract(release);
      for (const runtime of releaseFacts(release).runtimes) {
        expect({ runtime, version: (contract.nodeVersions[runtime] ?? contract.pythonVersions[runtime]) !== undefined }).toEqual({ runtime, version: true });
      }
    }
    expect(runtimeContract(ServerlessRelease.V1_13_0).nodeVersions.nodejs24).toBe('24.18.0');
  });
});
