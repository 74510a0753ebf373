/**
 * Bundles the `kubernetes-models` classes of the kinds the stack emits into one file,
 * `lib/models/kubernetes-models.js`, which `modelOf` (src/policy/manifests.ts) loads instead of
 * the package's own modules when it is there.
 *
 * Why: checking the stack's objects against the Kubernetes schema loads about 280 small modules
 * of `kubernetes-models`, `@kubernetes-models/*`, ajv-formats and ajv-i18n; a user's synth spends
 * 60–70 ms finding, reading and compiling them, one file at a time. One bundle of the same code
 * loads in under half of that, and without the 22 languages of `ajv-i18n` the classes never use.
 * The classes are the same code at the versions of the lock file, so
 * a check gives the same answer either way (a test compares both); kinds outside the bundle are
 * still loaded from their own modules.
 *
 * `npm run bundle` writes it (npm test and npm run synth run that), and `npm run build` before packing.
 */
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { SHIPPED_BUNDLE, bannered, writeBundle } from './_bundle-options';

const root = path.resolve(__dirname, '..');

/** Where the bundle goes: the package ships it (`files` in package.json). */
export const MODEL_BUNDLE = path.join(root, 'lib', 'models', 'kubernetes-models.js');

/**
 * The kinds in the bundle, as `apiVersion/kind`: every kind of a core API group that the stack,
 * `FunctionNamespace` and `KymaFunction` emit (a test fails when they emit one not listed here).
 */
export const BUNDLED_KINDS: readonly string[] = [
  'v1/ConfigMap',
  'v1/LimitRange',
  'v1/Namespace',
  'v1/PersistentVolumeClaim',
  'v1/ResourceQuota',
  'v1/Secret',
  'v1/Service',
  'v1/ServiceAccount',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
  'apiextensions.k8s.io/v1/CustomResourceDefinition',
  'apps/v1/Deployment',
  'autoscaling/v2/HorizontalPodAutoscaler',
  'batch/v1/Job',
  'networking.k8s.io/v1/NetworkPolicy',
  'policy/v1/PodDisruptionBudget',
  'rbac.authorization.k8s.io/v1/ClusterRole',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
  'rbac.authorization.k8s.io/v1/Role',
  'rbac.authorization.k8s.io/v1/RoleBinding',
  'scheduling.k8s.io/v1/PriorityClass',
];

/** The module of a kind in `kubernetes-models`, and the name of its class. */
export function kindModule(apiVersionKind: string): { module: string; className: string } {
  const parts = apiVersionKind.split('/');
  const className = parts[parts.length - 1];
  return { module: `kubernetes-models/${parts.join('/')}`, className };
}

/** The entry point: each kind a function that loads its class, so only the kinds used run their module. */
function entry(): string {
  const lines = BUNDLED_KINDS.map(k => {
    const { module, className } = kindModule(k);
    return `  ${JSON.stringify(k)}: () => require(${JSON.stringify(module)}).${className},`;
  });
  return `module.exports = {\n${lines.join('\n')}\n};\n`;
}


/** Builds the bundle in memory. */
export function bundleModels(): string {
  const result = buildSync({
    stdin: { contents: entry(), resolveDir: root, sourcefile: 'kubernetes-models-entry.js', loader: 'js' },
    ...SHIPPED_BUNDLE,
    // English messages only: the only ones the classes use (see scripts/_ajv-i18n-en.ts).
    alias: { 'ajv-i18n': './scripts/_ajv-i18n-en.ts' },
  });
  return bannered(result, 'The kubernetes-models classes of the kinds cdk8s-kyma-serverless emits', 'scripts/bundle-models.ts');
}

export function main(): void {
  writeBundle(MODEL_BUNDLE, bundleModels());
}

if (require.main === module) main();
