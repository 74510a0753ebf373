/**
 * The files of a new app (`kyma-serverless init`): a cdk8s TypeScript app as `cdk8s init
 * typescript-app` makes one, without what needs the internet (`cdk8s import`), with this package's
 * stack, one Function namespace and one function folder per runtime family.
 */
import { RUNTIME_FILES, RuntimeFamily } from '../../api';
import { FUNCTION_FILE } from '../../function/function-folder';
import { FunctionRuntime } from '../../function/runtime';
import { APP_DEPENDENCIES, APP_DEV_DEPENDENCIES } from './_versions';

/** The name of the package, as a new app depends on it. */
export const PACKAGE_NAME = 'cdk8s-kyma-serverless';

/** The folder of the app's function folders, and the name of their FunctionNamespace. */
export const FUNCTIONS_FOLDER = 'functions';

/** The commands a new app's README gives, in order. */
export const NEXT_COMMANDS = ['npm install', 'npm run synth', 'npx kyma-serverless apply dist/ --wait'] as const;

/** What the files of a new app are made from. */
export interface AppTemplateOptions {
  /** The npm package name of the app. */
  readonly name: string;
  /** How package.json names this package: a version range, or `file:` and a tarball. */
  readonly packageSpec: string;
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

const MAIN_TS = `import { FunctionFolder, FunctionNamespace, GitOpsApp, ServerlessStack } from '${PACKAGE_NAME}';

// Writes dist/ in apply order: 0000-serverless.k8s.yaml (the stack), 0001-${FUNCTIONS_FOLDER}.k8s.yaml (the
// namespace and its Functions), and a kustomization.yaml that Argo CD and Flux take as it is.
const app = new GitOpsApp();
const stack = new ServerlessStack(app, 'serverless');
const ${FUNCTIONS_FOLDER} = new FunctionNamespace(app, '${FUNCTIONS_FOLDER}', { stack });

// One Function per folder of ${FUNCTIONS_FOLDER}/: the folder's name is the Function's name.
for (const folder of FunctionFolder.discover('${FUNCTIONS_FOLDER}')) folder.addTo(${FUNCTIONS_FOLDER});

app.synth();
`;

const GITIGNORE = `node_modules/
# What tsc writes when run by hand (ts-node runs main.ts without it). The handlers are sources.
*.js
*.d.ts
!/${FUNCTIONS_FOLDER}/**/*.js
# A synth that was killed can leave its scratch folder beside dist/.
/.dist.synth-*
# dist/ is committed: it is what Argo CD or Flux syncs, and what reviews show.
`;

const readme = (name: string) => `# ${name}

A cdk8s app that deploys the Kyma Serverless stack and its Functions, made by \`kyma-serverless init\`.

\`\`\`sh
${NEXT_COMMANDS.join('\n')}
\`\`\`

\`npm run synth\` writes the manifests to \`dist/\` and checks them; when it fails, \`dist/\` stays as it was.
Commit \`dist/\`: Argo CD or Flux can sync it, or \`apply\` sends it to the cluster of the current kube context,
in order, and waits until the stack is ready. \`npx kyma-serverless status --watch -n ${FUNCTIONS_FOLDER}\` then follows the
Functions' builds.

- \`main.ts\`: the app: the stack (\`ServerlessStack\`), the namespace \`${FUNCTIONS_FOLDER}\` (\`FunctionNamespace\`), and a
  Function for each folder of \`${FUNCTIONS_FOLDER}/\`.
- \`${FUNCTIONS_FOLDER}/<name>/\`: a Function: its handler, its dependencies and \`${FUNCTION_FILE}\` (runtime, env, scaling...).
  Try one on this machine with \`npx kyma-serverless run ${FUNCTIONS_FOLDER}/hello-node\`.

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

const functionYaml = (runtime: FunctionRuntime) => `# Settings of this Function. Every key is optional; the names are those of KymaFunctionProps.
runtime: ${runtime.name}
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
  const node = RUNTIME_FILES[RuntimeFamily.NODEJS];
  const python = RUNTIME_FILES[RuntimeFamily.PYTHON];
  return {
    'package.json': json({
      name: options.name,
      version: '0.1.0',
      private: true,
      scripts: { synth: 'kyma-serverless synth' },
      dependencies: { [PACKAGE_NAME]: options.packageSpec, ...APP_DEPENDENCIES },
      devDependencies: { ...APP_DEV_DEPENDENCIES },
    }),
    // No imports: `cdk8s import` would download the Kubernetes schema; the package brings its types.
    'cdk8s.yaml': 'language: typescript\napp: npx ts-node main.ts\noutput: dist\n',
    'tsconfig.json': json(CDK8S_INIT_TSCONFIG),
    'main.ts': MAIN_TS,
    '.gitignore': GITIGNORE,
    'README.md': readme(options.name),
    [`${FUNCTIONS_FOLDER}/hello-node/${node.handler}`]: NODE_HANDLER,
    [`${FUNCTIONS_FOLDER}/hello-node/${node.dependencies}`]: json({ name: 'hello-node', version: '1.0.0', private: true, dependencies: {} }),
    [`${FUNCTIONS_FOLDER}/hello-node/${FUNCTION_FILE}`]: functionYaml(FunctionRuntime.NODEJS_22),
    [`${FUNCTIONS_FOLDER}/hello-python/${python.handler}`]: PYTHON_HANDLER,
    [`${FUNCTIONS_FOLDER}/hello-python/${python.dependencies}`]: '# One package per line, as pip takes them; the runtime brings the web server.\n',
    [`${FUNCTIONS_FOLDER}/hello-python/${FUNCTION_FILE}`]: functionYaml(FunctionRuntime.PYTHON_312),
  };
}
