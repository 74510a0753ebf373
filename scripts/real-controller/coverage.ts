/**
 * The Functions of the run with the real controller beyond the default app: one app that uses
 * every option of `KymaFunction` and every key of `function.yaml` (env of each kind, secretMounts,
 * presets and explicit resources for the Function and its build, replicas, scale, keda, labels,
 * annotations, a runtime image override, inline sources, a folder read at synth, and Git sources
 * with and without credentials), written as a user writes them with the public API.
 *
 * The stack's release is the app's one choice. What only one release has is added for it: build
 * resources under 1.11.1 (1.13.0 refuses them), and under 1.13.0 nodejs24, security contexts and a
 * Git commit as the reference. Without those (`portable`), the same app synthesizes for both
 * releases: the app the move from 1.11.1 to 1.13.0 runs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duration, Size } from 'cdk8s';
import { ConfigMap, Cpu, EnvFieldPaths, EnvValue, ResourceFieldPaths, Secret } from 'cdk8s-plus-27';
import {
  BuildProfile, BuildResources, FunctionFolder, FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource,
  GitAuthType, GitOpsApp, KedaTrigger, KymaFunction, ServerlessRelease, ServerlessStack, ServerlessStackProps,
} from '../../src';

/** Where the coverage app's Git Functions clone from. */
export interface CoverageGit {
  /** A public repository with `node/handler.js` and `python/handler.py` on `main` and the tag `v1`. */
  readonly publicUrl: string;
  /** A repository that asks for credentials, with `handler.js` at its root on `main`. */
  readonly privateUrl: string;
  /** A commit of the public repository with `node/handler.js`, for a reference by commit (1.13.0). */
  readonly commit?: string;
}

/** What the coverage app is synthesized for. */
export interface CoverageOptions {
  /** The stack's release. */
  readonly release: ServerlessRelease;
  /** Only what both releases accept (no build resources, nothing new in 1.13.0): the app of the move. */
  readonly portable?: boolean;
  /** Also the Functions of the app `cdk8s.yaml` synthesizes (functions/), in default-functions. */
  readonly defaultFunctions?: string;
  /** Props of the stack besides its release (the default app's exposure, for its Functions). */
  readonly stack?: ServerlessStackProps;
}

/** The namespaces of the coverage app. */
export const COVERAGE_NAMESPACES = ['coverage-ts', 'coverage-folders'];

/** The Secret and ConfigMap the coverage Functions read, and the Git credentials: the run creates them, as a user would. */
export const COVERAGE_REFERENCED = {
  secret: { name: 'greeter-secret', data: { token: 's3cr3t', name: 'Ada' } },
  tls: { name: 'greeter-tls', data: { 'tls.crt': 'certificate', 'tls.key': 'key' } },
  config: { name: 'greeter-settings', data: { level: 'debug', greeting: 'Hello' } },
  gitCredentials: { name: 'git-credentials', data: { username: 'runner', password: 'pa55word' } },
};

const NODE_HANDLER = 'exports.main = (event) => `Hello from ${process.env.FUNC_NAME}`;\n';
const PYTHON_HANDLER = 'def main(event, context):\n    return "Hello from Python"\n';

/** Writes the function folders of the coverage app: one with every key of function.yaml, and a KEDA one; build resources only when `builds`. */
function writeFolders(root: string, builds: boolean): void {
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  write('folder-node/handler.js', NODE_HANDLER);
  write('folder-node/package.json', '{ "name": "folder-node", "version": "1.0.0", "dependencies": {} }\n');
  write('folder-node/function.yaml', `runtime: nodejs20
env:
  PLAIN: text
  COUNT: 3
  ENABLED: true
  TOKEN: { secretKeyRef: { name: ${COVERAGE_REFERENCED.secret.name}, key: token } }
  OPTIONAL_TOKEN: { secretKeyRef: { name: missing-secret, key: token, optional: true } }
  LEVEL: { configMapKeyRef: { name: ${COVERAGE_REFERENCED.config.name}, key: level } }
  POD_NAME: { fieldRef: { fieldPath: metadata.name } }
  POD_IP: { fieldRef: { fieldPath: status.podIP, apiVersion: v1 } }
  MEMORY_LIMIT: { resourceFieldRef: { resource: limits.memory, divisor: 1Mi } }
secretMounts:
  - { secretName: ${COVERAGE_REFERENCED.tls.name}, mountPath: /etc/tls }
resources:
  requests: { cpu: 50m, memory: 64Mi }
  limits: { cpu: 200m, memory: 128Mi }
${builds ? 'buildResources:\n  profile: local-dev\n' : ''}replicas: 2
labels:
  team: coverage
annotations:
  coverage.example.com/owner: platform
`);
  write('folder-python/handler.py', PYTHON_HANDLER);
  write('folder-python/requirements.txt', '# none\n');
  write('folder-python/function.yaml', `runtime: python312
scale: { minReplicas: 1, maxReplicas: 4 }
resources: { profile: S }
${builds ? 'buildResources:\n  requests: { cpu: 300m, memory: 300Mi }\n  limits: { cpu: 900m, memory: 900Mi }\n' : ''}`);
  write('folder-keda/handler.js', NODE_HANDLER);
  write('folder-keda/function.yaml', `keda:
  minReplicas: 0
  maxReplicas: 3
  cooldownPeriod: 300
  triggers:
    - cron: { timezone: Europe/Berlin, start: 0 8 * * 1-5, end: 0 18 * * 1-5, desiredReplicas: 1 }
    - cpu: { utilization: 60 }
`);
  write('folder-default/handler.py', PYTHON_HANDLER);
}

/**
 * Synthesizes the coverage app into a folder (the stack too, as every app has it; the run applies
 * only the Functions' charts of it).
 *
 * @param outdir where the manifests go
 * @param scratch a folder for the function folders
 * @param git the Git repositories the Git Functions clone
 */
export function synthCoverage(outdir: string, scratch: string, git: CoverageGit, options: CoverageOptions): void {
  const builds = !options.portable && options.release === ServerlessRelease.V1_11_1;
  const newIn113 = !options.portable && options.release === ServerlessRelease.V1_13_0;
  writeFolders(scratch, builds);
  const app = new GitOpsApp({ outdir });
  const stack = new ServerlessStack(app, 'serverless', { ...options.stack, release: options.release });
  if (options.defaultFunctions) {
    const defaults = new FunctionNamespace(app, 'default-functions', { stack });
    for (const folder of FunctionFolder.discover(options.defaultFunctions)) folder.addTo(defaults);
  }
  const ts = new FunctionNamespace(app, COVERAGE_NAMESPACES[0], { stack });
  const secret = Secret.fromSecretName(ts, 'Secret', COVERAGE_REFERENCED.secret.name);
  const config = ConfigMap.fromConfigMapName(ts, 'Config', COVERAGE_REFERENCED.config.name);

  new KymaFunction(ts, 'env-every-kind', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromInline(NODE_HANDLER, '{ "name": "env-every-kind", "dependencies": { "lodash": "^4.17.21" } }'),
    env: {
      PLAIN: EnvValue.fromValue('text'),
      REFERENCE: EnvValue.fromValue('$(PLAIN)-suffix'),
      TOKEN: EnvValue.fromSecretValue({ secret, key: 'token' }),
      OPTIONAL_TOKEN: EnvValue.fromSecretValue({ secret: Secret.fromSecretName(ts, 'Missing', 'missing-secret'), key: 'token' }, { optional: true }),
      GREETING: EnvValue.fromConfigMap(config, 'greeting'),
      POD_NAME: EnvValue.fromFieldRef(EnvFieldPaths.POD_NAME),
      NODE_NAME: EnvValue.fromFieldRef(EnvFieldPaths.NODE_NAME),
      NAMESPACE: EnvValue.fromFieldRef(EnvFieldPaths.POD_NAMESPACE, { apiVersion: 'v1' }),
      CPU_LIMIT: EnvValue.fromResource(ResourceFieldPaths.CPU_LIMIT, { divisor: '1m' }),
      MEMORY_REQUEST: EnvValue.fromResource(ResourceFieldPaths.MEMORY_REQUEST),
    },
    labels: { 'app.kubernetes.io/part-of': 'coverage' },
    annotations: { 'coverage.example.com/reviewed': 'true' },
  });
  new KymaFunction(ts, 'mounts-and-resources', {
    runtime: FunctionRuntime.PYTHON_312,
    source: FunctionSource.fromInline(PYTHON_HANDLER, 'requests==2.32.3\n'),
    secretMounts: [
      { secretName: COVERAGE_REFERENCED.secret.name, mountPath: '/etc/greeter' },
      { secretName: COVERAGE_REFERENCED.tls.name, mountPath: '/etc/tls' },
    ],
    resources: FunctionResources.custom({ cpu: { request: Cpu.millis(20), limit: Cpu.millis(100) }, memory: { request: Size.mebibytes(32), limit: Size.mebibytes(96) } }),
    ...(builds ? { buildResources: BuildResources.custom({ cpu: { request: Cpu.millis(250), limit: Cpu.millis(800) }, memory: { request: Size.mebibytes(256), limit: Size.mebibytes(800) } }) } : {}),
  });
  new KymaFunction(ts, 'presets', {
    runtime: FunctionRuntime.NODEJS_20,
    source: FunctionSource.fromInline(NODE_HANDLER),
    resources: FunctionResources.preset(FunctionProfile.M),
    ...(builds ? { buildResources: BuildResources.preset(BuildProfile.FAST) } : {}),
    replicas: 3,
  });
  new KymaFunction(ts, 'scaled', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromInline(NODE_HANDLER),
    scale: { minReplicas: 1, maxReplicas: 5 },
  });
  new KymaFunction(ts, 'fixed-scale', {
    runtime: FunctionRuntime.PYTHON_312,
    source: FunctionSource.fromInline(PYTHON_HANDLER),
    scale: { minReplicas: 2, maxReplicas: 2 },
  });
  new KymaFunction(ts, 'keda-scaled', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromInline(NODE_HANDLER),
    keda: {
      minReplicas: 0,
      maxReplicas: 4,
      cooldownPeriod: Duration.minutes(5),
      triggers: [KedaTrigger.prometheus({ serverAddress: 'http://prometheus.monitoring:9090', query: 'sum(rate(istio_requests_total[2m]))', threshold: 20 })],
    },
  });
  new KymaFunction(ts, 'image-override', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromInline(NODE_HANDLER),
    runtimeImageOverride: 'europe-docker.pkg.dev/kyma-project/prod/function-runtime-nodejs22:1.11.1',
  });
  new KymaFunction(ts, 'from-directory', {
    runtime: FunctionRuntime.NODEJS_20,
    source: FunctionSource.fromDirectory(path.join(scratch, 'folder-node')),
  });
  new KymaFunction(ts, 'git-branch', {
    runtime: FunctionRuntime.NODEJS_22,
    source: FunctionSource.fromGitRepository({ url: git.publicUrl, baseDir: 'node', reference: 'main' }),
  });
  new KymaFunction(ts, 'git-tag-python', {
    runtime: FunctionRuntime.PYTHON_312,
    source: FunctionSource.fromGitRepository({ url: git.publicUrl, baseDir: '/python', reference: 'v1' }),
  });
  new KymaFunction(ts, 'git-private', {
    runtime: FunctionRuntime.NODEJS_20,
    source: FunctionSource.fromGitRepository({
      url: git.privateUrl, reference: 'main', auth: { type: GitAuthType.BASIC, secretName: COVERAGE_REFERENCED.gitCredentials.name },
    }),
  });
  if (newIn113) {
    new KymaFunction(ts, 'nodejs24-deps', {
      runtime: FunctionRuntime.of('nodejs24'),
      // An ES module (package.json says "type": "module"): the handler exports main as one.
      source: FunctionSource.fromInline(NODE_HANDLER.replace('exports.main =', 'export const main ='), '{ "name": "nodejs24-deps", "type": "module", "dependencies": { "lodash": "^4.17.21" } }'),
    });
    new KymaFunction(ts, 'security-contexts', {
      runtime: FunctionRuntime.NODEJS_22,
      source: FunctionSource.fromInline(NODE_HANDLER),
      // Typed props once the 1.13.0 Function constructs are merged.
      ...({
        containerSecurityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false },
        podSecurityContext: { runAsUser: 2000, runAsGroup: 2000, fsGroup: 2000 },
      } as object),
    });
    if (git.commit) {
      new KymaFunction(ts, 'git-commit', {
        runtime: FunctionRuntime.NODEJS_22,
        source: FunctionSource.fromGitRepository({ url: git.publicUrl, baseDir: 'node', reference: git.commit }),
      });
    }
  }

  const folders = new FunctionNamespace(app, COVERAGE_NAMESPACES[1], { stack });
  for (const folder of FunctionFolder.discover(scratch)) folder.addTo(folders);
  app.synth();
}

