import { runtimeDockerfile } from '../../src/stack/runtimes';
import { find, synthStack } from '../util/synth';

describe('runtime Dockerfiles', () => {
  const objects = synthStack();

  test.each(['nodejs20', 'nodejs22', 'python312'])('dockerfile-%s names its base image on the line the controller parses', runtime => {
    const configMap = find(objects, 'ConfigMap', `dockerfile-${runtime}`);
    const dockerfile: string = configMap.data.Dockerfile;
    const [first, second] = dockerfile.split('\n');
    expect(first).toBe(`ARG base_image=europe-docker.pkg.dev/kyma-project/prod/function-runtime-${runtime}:1.11.1`);
    // The controller's own expression, applied as it applies it.
    expect(/base_image=.*/.exec(dockerfile)![0]).toBe(`base_image=europe-docker.pkg.dev/kyma-project/prod/function-runtime-${runtime}:1.11.1`);
    expect(second).toBe('FROM ${base_image}');
    expect(dockerfile.trimEnd().split('\n').pop()).toBe('USER 1000');
    expect(configMap.metadata.labels).toMatchObject({ 'serverless.kyma-project.io/config': 'runtime', 'serverless.kyma-project.io/runtime': runtime });
  });

  test('Node.js installs package.json dependencies and puts the handler where HANDLER_PATH points', () => {
    const dockerfile = runtimeDockerfile('nodejs22', 'img:1');
    expect(dockerfile).toContain('RUN npm install --omit=dev');
    expect(dockerfile).toContain('COPY $SRC_DIR /usr/src/app/function');
    expect(dockerfile).toContain('WORKDIR /usr/src/app\n');
  });

  test('Python installs requirements.txt into /kubeless', () => {
    const dockerfile = runtimeDockerfile('python312', 'img:1');
    expect(dockerfile).toContain('ENV KUBELESS_INSTALL_VOLUME=/kubeless');
    expect(dockerfile).toContain('RUN pip install --no-cache-dir -r $KUBELESS_INSTALL_VOLUME/requirements.txt');
  });

  test('runtime image overrides land in the Dockerfile', () => {
    const custom = synthStack({ images: { runtimes: { nodejs22: 'registry.example.com/node22:2.0' } } });
    expect(find(custom, 'ConfigMap', 'dockerfile-nodejs22').data.Dockerfile.split('\n')[0]).toBe('ARG base_image=registry.example.com/node22:2.0');
  });

  test('the Function ServiceAccount pulls with the registry Secret and has no API token', () => {
    expect(find(objects, 'ServiceAccount', 'serverless-function')).toMatchObject({
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: 'serverless-registry-config-default' }],
      metadata: { labels: { 'serverless.kyma-project.io/config': 'service-account' } },
    });
  });
});
