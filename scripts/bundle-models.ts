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
 * Each kind's schema check (`kubernetes-models/_schemas/…`) is in it too, with the function that
 * runs one as the classes do: `validateObject` runs a kind's check on the object itself, not on a
 * copy the class makes of it, when the object is plain JSON data (the copy is then the same data).
 *
 * `npm run bundle` writes it (npm test and npm run synth run that), and `npm run build` before packing.
 */
import * as fs from 'node:fs';
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

/**
 * The module of a kind's schema check, which its class's module requires (one per kind), as a
 * path from the repository (the package exports no `_schemas/`):
 * `./node_modules/kubernetes-models/_schemas/IoK8sApiCoreV1Namespace.js` for `v1/Namespace`.
 */
export function schemaModule(apiVersionKind: string): string {
  const { module } = kindModule(apiVersionKind);
  const file = require.resolve(module, { paths: [root] });
  const schemas = [...fs.readFileSync(file, 'utf8').matchAll(/require\("((?:\.\.\/)+_schemas\/\w+\.js)"\)/g)].map(m => m[1]);
  if (schemas.length !== 1) throw new Error(`${file} requires ${schemas.length} schema modules, not one: see how its class sets its check`);
  return `./${path.relative(root, path.resolve(path.dirname(file), schemas[0])).split(path.sep).join('/')}`;
}

/** The formats of `@kubernetes-models/validate` that the bundle leaves out (see scripts/_unused-formats.ts). */
export const UNUSED_FORMATS: readonly string[] = ['iri', 'duration', 'idn-email', 'idn-hostname', 'iri-reference', 'cidr'];

/**
 * The entry point: each kind's class and its schema check, each behind a function so that only
 * the kinds used run their modules, and the function that runs a check as the classes do.
 */
function entry(): string {
  const table = (of: (kind: string) => string) => BUNDLED_KINDS.map(k => `    ${JSON.stringify(k)}: () => ${of(k)},`).join('\n');
  return [
    'module.exports = {',
    '  models: {',
    table(k => `require(${JSON.stringify(kindModule(k).module)}).${kindModule(k).className}`),
    '  },',
    '  checks: {',
    table(k => `require(${JSON.stringify(schemaModule(k))}).validate`),
    '  },',
    "  runValidateFunc: require('@kubernetes-models/validate').runValidateFunc,",
    '};',
    '',
  ].join('\n');
}


/** Builds the bundle in memory. */
export function bundleModels(): string {
  const result = buildSync({
    stdin: { contents: entry(), resolveDir: root, sourcefile: 'kubernetes-models-entry.js', loader: 'js' },
    ...SHIPPED_BUNDLE,
    alias: {
      // English messages only: the only ones the classes use (see scripts/_ajv-i18n-en.ts).
      'ajv-i18n': './scripts/_ajv-i18n-en.ts',
      // Formats no bundled schema names (see scripts/_unused-formats.ts).
      'ajv-formats-draft2019/formats/index.js': './scripts/_unused-formats.ts',
      'is-cidr': './scripts/_unused-formats.ts',
    },
  });
  return bannered(result, 'The kubernetes-models classes of the kinds cdk8s-kyma-serverless emits', 'scripts/bundle-models.ts');
}

export function main(): void {
  writeBundle(MODEL_BUNDLE, bundleModels());
}

if (require.main === module) main();
