/**
 * The stack plus N generated Functions (N from BENCH_FUNCTIONS), spread over ten
 * FunctionNamespaces: half with inline Node.js sources and half with inline Python ones, each
 * source its own, with env, scaling and presets, so every Function goes through the same
 * validation as a real one, handler checks included.
 */
import { EnvValue } from 'cdk8s-plus-27';
import {
  FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack,
} from '../../src';

const count = Number(process.env.BENCH_FUNCTIONS ?? '100');
if (!Number.isInteger(count) || count < 0) throw new Error(`BENCH_FUNCTIONS (${process.env.BENCH_FUNCTIONS}) must be a whole number`);

const app = new GitOpsApp();
const stack = new ServerlessStack(app, 'serverless');
const namespaces = Array.from({ length: 10 }, (_, i) => new FunctionNamespace(app, `team-${i}`, { stack }));
for (let i = 0; i < count; i++) {
  const python = i % 2 === 1;
  new KymaFunction(namespaces[i % namespaces.length], `fn-${i}`, {
    runtime: python ? FunctionRuntime.PYTHON_312 : FunctionRuntime.NODEJS_22,
    source: python
      ? FunctionSource.fromInline(`def main(event, context):\n    return "function ${i}"\n`, 'requests==2.31.0\n')
      : FunctionSource.fromInline(`exports.main = () => 'function ${i}';\n`, '{ "dependencies": { "lodash": "^4.17.21" } }'),
    env: { GREETING: EnvValue.fromValue(`hello from ${i}`), INDEX: EnvValue.fromValue(String(i)) },
    resources: FunctionResources.preset(i % 2 ? FunctionProfile.S : FunctionProfile.M),
    ...(i % 4 === 0 ? { scale: { minReplicas: 1, maxReplicas: 3 } } : {}),
  });
}
app.synth();
