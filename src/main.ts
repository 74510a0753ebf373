/**
 * The app `cdk8s synth` runs: the default stack, and every function folder under functions/
 * in the FunctionNamespace its function.yaml names (default-functions when it names none).
 */
import * as path from 'node:path';
import { App, YamlOutputType } from 'cdk8s';
import { FunctionFolder, FunctionNamespace, ServerlessStack } from './index';

const DEFAULT_NAMESPACE = 'default-functions';

const app = new App({ yamlOutputType: YamlOutputType.FILE_PER_CHART });
const stack = new ServerlessStack(app, 'serverless');
const namespaces = new Map<string, FunctionNamespace>();

function functionNamespace(name: string): FunctionNamespace {
  let namespace = namespaces.get(name);
  if (!namespace) {
    namespace = new FunctionNamespace(app, name, { stack });
    // Charts that depend on others get an index prefix (0000-, 0001-), so `kubectl apply -f dist/`
    // creates the CRD and the stack's namespace before anything that uses them.
    namespace.addDependency(stack);
    namespaces.set(name, namespace);
  }
  return namespace;
}

try {
  functionNamespace(DEFAULT_NAMESPACE);
  for (const folder of FunctionFolder.discover(path.join(__dirname, '..', 'functions'))) {
    folder.addTo(functionNamespace(folder.namespace ?? DEFAULT_NAMESPACE));
  }
  app.synth();
} catch (e) {
  // Validation errors name every problem with its construct path or file, so their stack adds
  // nothing; anything else (a TypeError, say) is a bug and keeps its stack.
  const error = e as Error;
  process.stderr.write(`${error.name === 'Error' ? error.message : error.stack}\n`);
  process.exitCode = 1;
}
