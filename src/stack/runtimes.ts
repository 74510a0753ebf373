/**
 * The runtime Dockerfiles the controller builds Functions with, and the Function Pods' identity.
 */
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { RUNTIMES, RuntimeFamily, RuntimeName, runtimeFamily } from '../api/runtimes';
import { CONTROLLER_NAMES } from './controller';

/**
 * The Dockerfile of a runtime. Its first line must stay `ARG base_image=<image>`: the controller
 * finds the base image with the regular expression `base_image=.*` and hashes it into the tag.
 */
export function runtimeDockerfile(runtime: RuntimeName, baseImage: string): string {
  const head = [`ARG base_image=${baseImage}`, 'FROM ${base_image}', 'USER root'];
  switch (runtimeFamily(runtime)) {
    case RuntimeFamily.NODEJS:
      return [
        ...head,
        'ARG SRC_DIR=/src',
        '',
        'RUN mkdir -p /usr/src/app/function',
        'WORKDIR /usr/src/app/function',
        '',
        '# Optional .npmrc from the serverless-package-registry-config Secret.',
        'COPY /registry-config/* /usr/src/app/function/',
        'COPY $SRC_DIR/package.json /usr/src/app/function/package.json',
        'RUN npm install --omit=dev',
        'COPY $SRC_DIR /usr/src/app/function',
        'RUN ls -l /usr/src/app/function',
        'WORKDIR /usr/src/app',
        '',
        'USER 1000',
        '',
      ].join('\n');
    case RuntimeFamily.PYTHON:
      return [
        ...head,
        'ENV KUBELESS_INSTALL_VOLUME=/kubeless',
        '',
        'COPY /src/requirements.txt $KUBELESS_INSTALL_VOLUME/requirements.txt',
        '# Optional pip.conf from the serverless-package-registry-config Secret.',
        'COPY /registry-config/* /etc/',
        'RUN pip install --no-cache-dir -r $KUBELESS_INSTALL_VOLUME/requirements.txt',
        'COPY /src $KUBELESS_INSTALL_VOLUME',
        'RUN rm -rf /etc/pip.conf',
        '',
        'USER 1000',
        '',
      ].join('\n');
    default:
      throw new Error(`No Dockerfile is known for runtime '${runtime}'`);
  }
}

/** Props of {@link FunctionRuntimes}. */
export interface FunctionRuntimesProps {
  /** The base image of each runtime; every runtime of 1.11.1 must have one. */
  readonly images: { readonly [runtime: string]: string };
  readonly registrySecretName: string;
}

/**
 * The `dockerfile-<runtime>` ConfigMaps and the `serverless-function` ServiceAccount, in the
 * stack's namespace. The controller copies all of them into every Function namespace.
 */
export class FunctionRuntimes extends Construct {
  constructor(scope: Construct, id: string, props: FunctionRuntimesProps) {
    super(scope, id);
    for (const runtime of RUNTIMES) {
      const baseImage = props.images[runtime];
      if (!baseImage) throw new Error(`No base image was given for runtime '${runtime}'`);
      new k8s.KubeConfigMap(this, runtime, {
        metadata: {
          name: `dockerfile-${runtime}`,
          labels: {
            'app.kubernetes.io/name': 'serverless',
            'app.kubernetes.io/component': 'runtime',
            // The controller selects base runtime ConfigMaps by these labels.
            'serverless.kyma-project.io/config': 'runtime',
            'serverless.kyma-project.io/runtime': runtime,
          },
        },
        data: { Dockerfile: runtimeDockerfile(runtime, baseImage) },
      });
    }

    new k8s.KubeServiceAccount(this, 'FunctionServiceAccount', {
      metadata: {
        name: CONTROLLER_NAMES.functionServiceAccount,
        labels: {
          'app.kubernetes.io/name': 'serverless',
          'app.kubernetes.io/component': 'function',
          'serverless.kyma-project.io/config': 'service-account',
        },
      },
      // Function Pods do not talk to the API server.
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: props.registrySecretName }],
    });
  }
}
