/**
 * The app `cdk8s synth` runs: for each environment of environments.ts, the stack, and every
 * function folder under functions/ in the FunctionNamespace its function.yaml names
 * (default-functions when it names none), in the environment's folder of the output.
 */
import * as path from 'node:path';
import { environmentOutdir } from './gitops/environment';
import { GitOpsApp } from './gitops/gitops-app';
import { ENVIRONMENTS } from './environments';
import { FunctionFolder, FunctionNamespace, ServerlessStack } from './index';

const DEFAULT_NAMESPACE = 'default-functions';
const OUTDIR = process.env.CDK8S_OUTDIR ?? 'dist';

try {
  const folders = FunctionFolder.discover(path.join(__dirname, '..', 'functions'));
  for (const environment of ENVIRONMENTS) {
    const app = new GitOpsApp({ outdir: environmentOutdir(OUTDIR, environment) });
    const stack = new ServerlessStack(app, 'serverless', environment.stack);
    const namespaces = new Map<string, FunctionNamespace>();
    const functionNamespace = (name: string) => {
      let namespace = namespaces.get(name);
      if (!namespace) {
        // Given the stack, the namespace's file comes after the stack's (0000-, 0001-), so the
        // files list the CRD and the stack's namespace before anything that uses them.
        namespace = new FunctionNamespace(app, name, { stack, quota: environment.functionNamespaceQuota });
        namespaces.set(name, namespace);
      }
      return namespace;
    };
    functionNamespace(DEFAULT_NAMESPACE);
    for (const folder of folders) folder.addTo(functionNamespace(folder.namespace ?? DEFAULT_NAMESPACE));
    app.synth();
  }
} catch (e) {
  // Validation errors name every problem with its construct path or file, so their stack adds
  // nothing; anything else (a TypeError, say) is a bug and keeps its stack.
  const error = e as Error;
  process.stderr.write(`${error.name === 'Error' ? error.message : error.stack}\n`);
  process.exitCode = 1;
}
