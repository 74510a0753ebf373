/**
 * The app `cdk8s synth` runs: the default stack and a namespace for Functions.
 */
import { App, YamlOutputType } from 'cdk8s';
import { FunctionNamespace, ServerlessStack } from './index';

const app = new App({ yamlOutputType: YamlOutputType.FILE_PER_CHART });
const stack = new ServerlessStack(app, 'serverless');
const functions = new FunctionNamespace(app, 'default-functions', { stack });
// Charts that depend on others get an index prefix (0000-, 0001-), so `kubectl apply -f dist/`
// creates the CRD and the stack's namespace before anything that uses them.
functions.addDependency(stack);
app.synth();
