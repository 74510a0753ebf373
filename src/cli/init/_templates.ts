/**
 * The files of a new app (`kyma-serverless init`): a cdk8s TypeScript app as `cdk8s init
 * typescript-app` makes one, without what needs the internet (`cdk8s import`), with this package's
 * stack, one Function namespace and one function folder per runtime family.
 */
import { DEFAULT_RELEASE, RUNTIME_FILES, RuntimeFamily, ServerlessRelease, releaseFacts } from '../../api';
import { FUNCTION_FILE } from '../../function/function-folder';
import { FunctionRuntime } from '../../function/runtime';
import { APP_DEPENDENCIES, APP_DEV_DEPENDENCIES } from './_versions';

/** The name of the package, as a new app depends on it. */
export const PACKAGE_NAME = 'cdk8s-kyma-serverless';

/** The folder of the app's function folders, and the name of their FunctionNamespace. */
export const FUNCTIONS_FOLDER = 'functions';

/** The commands a new app's README gives, in order. */
export const NEXT_COMMANDS = ['npm install', 'npm run synth', 'npm test', 'npx kyma-serverless apply dist/ --wait'] as const;

/**
 * The release a new app's stack deploys: upstream's current one, whose runtimes have support left
 * (the construct's default stays 1.11.1, for the apps that exist).
 */
export const INIT_RELEASE = ServerlessRelease.V1_13_0;

/** The folder of the app's tests, which `npm test` runs with jest. */
export const TESTS_FOLDER = 'test';

/** What the files of a new app are made from. */
export interface AppTemplateOptions {
  /** The npm package name of the app. */
  readonly name: string;
  /** How package.json names this package: a version range, or `file:` and a tarball. */
  readonly packageSpec: string;
  /**
   * The Serverless release the app's stack deploys.
   *
   * @default ServerlessRelease.V1_13_0 (INIT_RELEASE)
   */
  readonly release?: ServerlessRelease;
}

/** The name of a release's enum member, as main.ts writes it (`V1_13_0`). */
function releaseMember(release: ServerlessRelease): string {
  return Object.entries(ServerlessRelease).find(([, value]) => value === release)![0];
}

/** The Node.js runtime of the example Function: the newest the release runs. */
function nodeRuntime(release: ServerlessRelease): string {
  return [...releaseFacts(release).runtimes].reverse().find(r => r.startsWith('nodejs'))!;
}

/** The tsconfig.json of `cdk8s init typescript-app` (cdk8s-cli 2.x), as a user's app has it. */
export const CDK8S_INIT_TSCONFIG = {
  compilerOptions: {
    alwaysStrict: true,
    declaration: true,
    experimentalDecorators: true,
    inlineSourceMap: true,
    inlineSources: true,
    lib: ['es2016'],
    module: 'CommonJS',
    noEmit: false,
    noEmitOnError: true,
    noFallthroughCasesInSwitch: true,
    noImplicitAny: true,
    noImplicitReturns: true,
    noImplicitThis: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    resolveJsonModule: true,
    strict: true,
    strictNullChecks: true,
    strictPropertyInitialization: true,
    stripInternal: true,
    target: 'ES2017',
  },
  include: ['**/*.ts'],
  exclude: ['node_modules'],
};

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The part of main.ts after the stack: the Function namespace and a Function per folder. */
const MAIN_TS_FUNCTIONS = `const ${FUNCTIONS_FOLDER} = new FunctionNamespace(app, '${FUNCTIONS_FOLDER}', { stack });

// One Function per folder of ${FUNCTIONS_FOLDER}/: the folder's name is the Function's name.
for (const folder of FunctionFolder.discover('${FUNCTIONS_FOLDER}')) folder.addTo(${FUNCTIONS_FOLDER});

app.synth();
`;

/** The app's main.ts: the default release's stack takes no props; another release is named. */
function mainTs(release: ServerlessRelease): string {
  const named = release !== DEFAULT_RELEASE;
  const stack = !named ? "const stack = new ServerlessStack(app, 'serverless');\n"
    : (releaseFacts(release).buildsImages ? '' : `// Serverless ${release}, buildless: each Function runs on its runtime's image, which installs the
// Function's dependencies at every Pod start (so its Pods need to reach the package registry).
`) + `const stack = new ServerlessStack(app, 'serverless', { release: ServerlessRelease.${releaseMember(release)} });\n`;
  return `import { FunctionFolder, FunctionNamespace, GitOpsApp, ${named ? 'ServerlessRelease, ' : ''}ServerlessStack } from '${PACKAGE_NAME}';

// Writes dist/ in apply order: 0000-serverless.k8s.yaml (the stack), 0001-${FUNCTIONS_FOLDER}.k8s.yaml (the
// namespace and its Functions), and a kustomization.yaml that Argo CD and Flux take as it is.
const app = new GitOpsApp();
${stack}${MAIN_TS_FUNCTIONS}`;
}

const GITIGNORE = `node_modules/
# What tsc writes when run by hand (ts-node runs main.ts without it). The handlers and jest's
# configuration are sources.
*.js
*.d.ts
!/${FUNCTIONS_FOLDER}/**/*.js
!/jest.config.js
# Values of Secret and ConfigMap keys for local runs (kyma-serverless run --env-file .env): never in Git.
.env
# A synth that was killed can leave its scratch folder beside dist/.
/.dist.synth-*
# dist/ is committed: it is what Argo CD or Flux syncs, and what reviews show.
`;

/** An import of a generated file (built here, so that test/package.test.ts does not take it for one of this package's own). */
const importStatement = (names: string, from: string) => `import { ${names} } from '${from}';`;

const JEST_CONFIG = `// npm test: jest runs the tests of ${TESTS_FOLDER}/ through ts-jest (with this app's tsconfig.json).
/** @type {import("jest").Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/${TESTS_FOLDER}'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\\\.ts$': 'ts-jest' },
  // The testing kit starts each Function in a process of its own, and installs its dependencies
  // on the first start: seconds, more than jest's default of 5.
  testTimeout: 60000,
};
`;

const HELLO_NODE_TEST = `// A test of a Function on this machine (npm test): the testing kit starts the folder with the
// contract of its runtime image, as \`npx kyma-serverless run ${FUNCTIONS_FOLDER}/hello-node\` does. More in
// node_modules/${PACKAGE_NAME}/docs/develop-locally.md ("Test handlers").
${importStatement('LocalFunction', `${PACKAGE_NAME}/testing`)}

describe('hello-node', () => {
  let fn: LocalFunction;
  beforeAll(async () => {
    fn = await LocalFunction.startFolder('${FUNCTIONS_FOLDER}/hello-node');
  });
  afterAll(() => fn.stop());

  test('greets by name', async () => {
    const res = await fn.get('/?name=Ada');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ message: 'Hello, Ada!' });
  });

  test('greets the GREETING_TARGET of its function.yaml when no name is given', async () => {
    expect((await fn.get('/')).json()).toEqual({ message: 'Hello, world!' });
  });
});
`;

/** The README's section on the release: which one the stack deploys, and how and why to choose the other. */
function releaseSection(release: ServerlessRelease): string {
  const facts = releaseFacts(release);
  const runtimes = `Its Functions run on ${facts.runtimes.filter(r => !facts.deprecatedRuntimes[r]).join(', ')}; upstream's runtime deprecation schedule says when each one's `
    + 'support ends, and `npm run synth` prints a notice for a Function past that date, or within 90 days of it when the release has a newer runtime of the language.';
  if (!facts.buildsImages) {
    return `## The release

The stack deploys Kyma Serverless ${release}, upstream's current release. It is buildless: each Function runs on its runtime's
image, which installs the Function's dependencies at every Pod start, so its Pods need to reach the package registry
(npm or PyPI, or a mirror). ${runtimes}

To deploy ${DEFAULT_RELEASE} instead, the last build-based release, remove \`release: ServerlessRelease.${releaseMember(release)}\` from \`main.ts\`
(${DEFAULT_RELEASE} is the default of \`ServerlessStack\`), or start the app with \`kyma-serverless init --release ${DEFAULT_RELEASE}\`. One would for
Pods that start without installing anything and need no way out to a package registry: ${DEFAULT_RELEASE} builds each
Function's image once, with a Kubernetes Job, into a registry in the cluster. But its images get no more fixes, and its
newest Node.js runtime is nodejs22, whose support ends in November 2026.
`;
  }
  return `## The release

The stack deploys Kyma Serverless ${release}, the last build-based release: a Kubernetes Job builds each Function's image
into a registry in the cluster, so its Pods start without installing anything. Its images get no more fixes, and its
newest Node.js runtime is nodejs22, whose support ends in November 2026. ${runtimes}

Upstream's current release is ${INIT_RELEASE} (buildless, with nodejs24): give the stack \`release: ServerlessRelease.${releaseMember(INIT_RELEASE)}\` in
\`main.ts\`, and its Functions the runtimes it has. The documentation's docs/changing-a-running-system.md says how to move a running stack.
`;
}

const readme = (name: string, release: ServerlessRelease) => `# ${name}

A cdk8s app that deploys the Kyma Serverless stack and its Functions, made by \`kyma-serverless init\`.

\`\`\`sh
${NEXT_COMMANDS.join('\n')}
\`\`\`

\`npm run synth\` writes the manifests to \`dist/\` and checks them; when it fails, \`dist/\` stays as it was.
Commit \`dist/\`: Argo CD or Flux can sync it, or \`apply\` sends it to the cluster of the current kube context,
in order, and waits until the stack is ready. \`npx kyma-serverless status --watch -n ${FUNCTIONS_FOLDER}\` then follows the
${releaseFacts(release).buildsImages ? 'Functions\' builds'
    : `Functions until they run (Serverless ${release} builds nothing: dependencies install at each Pod start)`}.

- \`main.ts\`: the app: the stack (\`ServerlessStack\`), the namespace \`${FUNCTIONS_FOLDER}\` (\`FunctionNamespace\`), and a
  Function for each folder of \`${FUNCTIONS_FOLDER}/\`.
- \`${FUNCTIONS_FOLDER}/<name>/\`: a Function: its handler, its dependencies and \`${FUNCTION_FILE}\` (runtime, env, scaling...).
  Try one on this machine with \`npx kyma-serverless run ${FUNCTIONS_FOLDER}/hello-node\`.
- \`${TESTS_FOLDER}/\`: tests of the Functions, which \`npm test\` runs with jest (\`jest.config.js\`): the testing kit
  (\`${PACKAGE_NAME}/testing\`) starts a folder on this machine, as \`run\` does, and sends it requests. A Python
  Function runs on this machine's \`python3\` (3.11 or newer).
- \`.env\` (not in Git): values of Secret keys for local runs, \`npx kyma-serverless run <folder> --env-file .env\`.

${releaseSection(release)}
The documentation is in \`node_modules/${PACKAGE_NAME}/README.md\` and \`node_modules/${PACKAGE_NAME}/docs/\`.
`;

const NODE_HANDLER = `// A Kyma Function: the runtime calls main(event, context) for every HTTP request and sends
// what it returns as the response. It loads this file with import(), which finds main only
// when it is assigned like this (not as a method inside an object literal).
exports.main = async function (event) {
  const name = event.extensions.request.query.name || process.env.GREETING_TARGET;
  return { message: \`Hello, \${name}!\` };
};
`;

const PYTHON_HANDLER = `# A Kyma Function: the runtime calls main(event, context) for every HTTP request and sends
# what it returns as the response.
import os


def main(event, context):
    request = event["extensions"]["request"]
    name = request.query.get("name") or os.environ.get("GREETING_TARGET", "world")
    return {"message": f"Hello, {name}!"}
`;

const functionYaml = (runtime: string) => `# Settings of this Function. Every key is optional; the names are those of KymaFunctionProps.
runtime: ${runtime}
env:
  GREETING_TARGET: world
resources:
  profile: XS
`;

/**
 * The files of a new app.
 *
 * @returns each file's path in the app (with `/`) and its text, in the order they are listed to the user
 */
export function appFiles(options: AppTemplateOptions): { readonly [file: string]: string } {
  const release = options.release ?? INIT_RELEASE;
  const node = RUNTIME_FILES[RuntimeFamily.NODEJS];
  const python = RUNTIME_FILES[RuntimeFamily.PYTHON];
  return {
    'package.json': json({
      name: options.name,
      version: '0.1.0',
      private: true,
      scripts: { synth: 'kyma-serverless synth', test: 'jest' },
      dependencies: { [PACKAGE_NAME]: options.packageSpec, ...APP_DEPENDENCIES },
      devDependencies: { ...APP_DEV_DEPENDENCIES },
    }),
    // No imports: `cdk8s import` would download the Kubernetes schema; the package brings its types.
    'cdk8s.yaml': 'language: typescript\napp: npx ts-node main.ts\noutput: dist\n',
    'tsconfig.json': json(CDK8S_INIT_TSCONFIG),
    'main.ts': mainTs(release),
    '.gitignore': GITIGNORE,
    'jest.config.js': JEST_CONFIG,
    'README.md': readme(options.name, release),
    [`${TESTS_FOLDER}/hello-node.test.ts`]: HELLO_NODE_TEST,
    [`${FUNCTIONS_FOLDER}/hello-node/${node.handler}`]: NODE_HANDLER,
    [`${FUNCTIONS_FOLDER}/hello-node/${node.dependencies}`]: json({ name: 'hello-node', version: '1.0.0', private: true, dependencies: {} }),
    [`${FUNCTIONS_FOLDER}/hello-node/${FUNCTION_FILE}`]: functionYaml(nodeRuntime(release)),
    [`${FUNCTIONS_FOLDER}/hello-python/${python.handler}`]: PYTHON_HANDLER,
    [`${FUNCTIONS_FOLDER}/hello-python/${python.dependencies}`]: '# One package per line, as pip takes them; the runtime brings the web server.\n',
    [`${FUNCTIONS_FOLDER}/hello-python/${FUNCTION_FILE}`]: functionYaml(FunctionRuntime.PYTHON_312.name),
  };
}
