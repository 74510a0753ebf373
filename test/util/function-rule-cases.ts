/**
 * The Function rules' test cases: for every rule of FUNCTION_RULES, one way to break it and one
 * way to keep it at its edge, each starting from a Function of test/fixtures/functions/valid.yaml
 * (or valid-1.13.0.yaml, for a rule of release 1.13.0 only), judged under the case's release.
 *
 * test/api/function-rules.test.ts checks both halves against validateFunction; the webhook's tests
 * use the failing halves (brokenFunction, ruleFailureCases) to see the webhook deny each rule.
 */
import { DEFAULT_RELEASE, FUNCTION_RULES, ServerlessRelease, functionRulesOf } from '../../src/api';
import { ANNOTATIONS_MAX_BYTES, INLINE_SOURCE_MAX_BYTES } from '../../src/api/function-rules';
import { FunctionRules, FunctionRulesV1_13_0 } from '../../src/api/function-schema';
import { FUNCTION_SHAPE_LIMITS } from '../../src/api/function-shape';
import { fixture, loadYamlDocuments } from './fixtures';

/** Our own valid Functions: greeter (inline Node.js, every field), weather, orders, private-repo, autoscaled, externally-scaled. */
export const VALID_FUNCTIONS: readonly any[] = loadYamlDocuments(fixture('functions', 'valid.yaml'));

/** Our own valid Functions of release 1.13.0: hello24 (inline nodejs24, every field), snake, catalog (Git), legacy20. */
export const VALID_FUNCTIONS_1_13_0: readonly any[] = loadYamlDocuments(fixture('functions', 'valid-1.13.0.yaml'));

/**
 * A deep copy of a Function of valid.yaml or valid-1.13.0.yaml, by its name: `greeter` (inline
 * Node.js, every field), `orders` (Git), `private-repo` (Git with auth), `hello24` (1.13.0, every field).
 */
export function validFunction(name: string = 'greeter'): any {
  const fn = [...VALID_FUNCTIONS, ...VALID_FUNCTIONS_1_13_0].find(f => f.metadata.name === name);
  if (!fn) throw new Error(`no Function ${name} in valid.yaml or valid-1.13.0.yaml`);
  return structuredClone(fn);
}

/** A Node.js handler that exports main, padded with a comment to a number of bytes. */
function handlerOfBytes(bytes: number): string {
  const handler = 'exports.main = () => 1; //';
  return handler + 'x'.repeat(bytes - handler.length);
}

/** A valid Function, changed. */
export function changed(change: (fn: any) => void, base?: string): any {
  const fn = validFunction(base);
  change(fn);
  return fn;
}

/** The message the API server gives for a broken CEL rule on an object, map or list node. */
export function celMessage(type: 'object' | 'array', rule: keyof typeof FunctionRules): string {
  return `Invalid value: "${type}": ${FunctionRules[rule].message}`;
}

/** The message the API server gives for a broken CEL rule of 1.13.0's CRD on an object, map or list node. */
export function celMessageV1_13_0(type: 'object' | 'array', rule: keyof typeof FunctionRulesV1_13_0): string {
  return `Invalid value: "${type}": ${FunctionRulesV1_13_0[rule].message}`;
}

/** One rule of the catalog, broken and kept. */
export interface RuleCase {
  /** The release both cases are judged under: one the rule holds in. @default DEFAULT_RELEASE */
  readonly release?: ServerlessRelease;
  /** Which Function of valid.yaml (or valid-1.13.0.yaml) both cases start from. @default 'greeter' */
  readonly base?: string;
  /** What the failing case does, for the test name ("fails when ..."). */
  readonly failsWhen: string;
  /** Breaks the rule. */
  readonly fail: (fn: any) => void;
  /** Where the violation is. */
  readonly path: string;
  /** The violation's message: exact when a string. */
  readonly message: string | RegExp;
  /** What the passing case does, for the test name ("accepts ..."). */
  readonly accepts: string;
  /** Keeps the rule, at its edge. */
  readonly pass: (fn: any) => void;
}

export const NAME_63 = `${'greeter-'.repeat(7)}greeter`;
export const EXAMPLE_KEY = 'example.com/notes';

/** A failing and a passing case for every rule of the catalog, by rule id. */
export const RULE_CASES: Readonly<Record<string, RuleCase>> = {
  // The CRD's OpenAPI schema.
  'openapi.required': {
    failsWhen: 'the runtime is missing',
    fail: fn => delete fn.spec.runtime,
    path: 'spec.runtime',
    message: 'Required value',
    accepts: 'a spec with only its required fields',
    pass: fn => { fn.spec = { runtime: fn.spec.runtime, source: fn.spec.source }; },
  },
  'openapi.enum': {
    failsWhen: 'the runtime is a retired one',
    fail: fn => { fn.spec.runtime = 'nodejs18'; },
    path: 'spec.runtime',
    message: 'Unsupported value: "nodejs18": supported values: "nodejs20", "nodejs22", "python312"',
    accepts: 'the oldest supported runtime',
    pass: fn => { fn.spec.runtime = 'nodejs20'; },
  },
  'openapi.minimum': {
    failsWhen: 'replicas is negative',
    fail: fn => { fn.spec.replicas = -1; },
    path: 'spec.replicas',
    message: 'Invalid value: -1: should be greater than or equal to 0',
    accepts: 'zero replicas',
    pass: fn => { fn.spec.replicas = 0; },
  },
  'openapi.minLength': {
    failsWhen: 'the inline source is empty',
    fail: fn => { fn.spec.source.inline.source = ''; },
    path: 'spec.source.inline.source',
    message: 'Invalid value: "": should be at least 1 chars long',
    accepts: 'an inline source of one character',
    // weather is Python: a Node.js handler of one character cannot export main.
    base: 'weather',
    pass: fn => { fn.spec.source.inline.source = 'x'; },
  },
  'openapi.maxLength': {
    failsWhen: 'a mounted Secret\'s name has 254 characters',
    fail: fn => { fn.spec.secretMounts[0].secretName = 's'.repeat(254); },
    path: 'spec.secretMounts[0].secretName',
    message: 'Too long: may not be more than 253 bytes',
    accepts: 'a mounted Secret\'s name of 253 characters',
    pass: fn => { fn.spec.secretMounts[0].secretName = 's'.repeat(253); },
  },
  'openapi.type': {
    failsWhen: 'replicas is a string',
    fail: fn => { fn.spec.replicas = '2'; },
    path: 'spec.replicas',
    message: 'Invalid value: "2": must be of type integer',
    accepts: 'replicas as an integer',
    pass: fn => { fn.spec.replicas = 2; },
  },
  'openapi.pattern': {
    failsWhen: 'a CPU limit is not a quantity',
    fail: fn => { fn.spec.resourceConfiguration.function.resources.limits.cpu = '1.5cores'; },
    path: 'spec.resourceConfiguration.function.resources.limits.cpu',
    message: /^Invalid value: "1\.5cores": should match '/,
    accepts: 'a decimal CPU limit',
    pass: fn => { fn.spec.resourceConfiguration.function.resources.limits.cpu = '1.5'; },
  },
  'openapi.anyOf': {
    failsWhen: 'a CPU limit is a fractional number rather than a string',
    fail: fn => { fn.spec.resourceConfiguration.function.resources.limits.cpu = 0.5; },
    path: 'spec.resourceConfiguration.function.resources.limits.cpu',
    message: 'Invalid value: 0.5: must be of type integer or string',
    accepts: 'a whole number of CPUs as a number',
    pass: fn => { fn.spec.resourceConfiguration.function.resources.limits.cpu = 1; },
  },
  'openapi.format': {
    failsWhen: 'replicas does not fit in 32 bits',
    fail: fn => { fn.spec.replicas = 2 ** 31; },
    path: 'spec.replicas',
    message: /^Invalid value: 2147483648: /,
    accepts: 'the largest int32',
    pass: fn => { fn.spec.replicas = 2 ** 31 - 1; },
  },
  'openapi.additionalProperties': {
    failsWhen: 'a field is misspelt',
    fail: fn => { fn.spec.replica = 2; },
    path: 'spec',
    message: 'unknown field "replica"',
    accepts: 'the field spelt right',
    pass: fn => { fn.spec.replicas = 2; },
  },

  // The CRD's CEL rules: their messages are upstream's, word for word.
  'sourceOneOf': {
    failsWhen: 'the source is both inline and a Git repository',
    fail: fn => { fn.spec.source.gitRepository = { url: 'https://git.example.com/shop/functions.git', baseDir: '/', reference: 'main' }; },
    path: 'spec.source',
    message: celMessage('object', 'sourceOneOf'),
    accepts: 'a Git repository alone',
    pass: fn => { fn.spec.source = { gitRepository: { url: 'https://git.example.com/shop/functions.git', baseDir: '/', reference: 'main' } }; },
  },
  'gitBaseDir': {
    base: 'orders',
    failsWhen: 'the Git base directory is blank',
    fail: fn => { fn.spec.source.gitRepository.baseDir = '  '; },
    path: 'spec.source.gitRepository',
    message: celMessage('object', 'gitBaseDir'),
    accepts: 'the repository root as the base directory',
    pass: fn => { fn.spec.source.gitRepository.baseDir = '/'; },
  },
  'gitReference': {
    base: 'orders',
    failsWhen: 'the Git reference is empty',
    fail: fn => { fn.spec.source.gitRepository.reference = ''; },
    path: 'spec.source.gitRepository',
    message: celMessage('object', 'gitReference'),
    accepts: 'a commit as the Git reference',
    pass: fn => { fn.spec.source.gitRepository.reference = 'f5076fc'; },
  },
  'gitAuthSecretName': {
    base: 'private-repo',
    failsWhen: 'the Git credentials\' Secret name is blank',
    fail: fn => { fn.spec.source.gitRepository.auth.secretName = ' '; },
    path: 'spec.source.gitRepository.auth.secretName',
    message: `Invalid value: " ": ${FunctionRules.gitAuthSecretName.message}`,
    accepts: 'a one-letter Secret name for the Git credentials',
    pass: fn => { fn.spec.source.gitRepository.auth.secretName = 'k'; },
  },
  'reservedEnvs': {
    failsWhen: 'an environment variable is one the controller sets',
    fail: fn => { fn.spec.env[0].name = 'FUNC_PORT'; },
    path: 'spec.env',
    message: celMessage('array', 'reservedEnvs'),
    accepts: 'a variable whose name only starts like a reserved one',
    pass: fn => { fn.spec.env[0].name = 'FUNC_PORT_NAME'; },
  },
  'profileOrResources': {
    failsWhen: 'the Function has both a profile and resources',
    fail: fn => { fn.spec.resourceConfiguration.function.profile = 'M'; },
    path: 'spec.resourceConfiguration.function',
    message: celMessage('object', 'profileOrResources'),
    accepts: 'a profile alone',
    pass: fn => { fn.spec.resourceConfiguration.function = { profile: 'M' }; },
  },
  'functionProfile': {
    failsWhen: 'the Function profile is not a preset',
    fail: fn => { fn.spec.resourceConfiguration.function = { profile: 'XXL' }; },
    path: 'spec.resourceConfiguration.function',
    message: celMessage('object', 'functionProfile'),
    accepts: 'the largest Function preset',
    pass: fn => { fn.spec.resourceConfiguration.function = { profile: 'XL' }; },
  },
  'buildProfile': {
    failsWhen: 'the build profile is not a preset',
    fail: fn => { fn.spec.resourceConfiguration.build = { profile: 'turbo' }; },
    path: 'spec.resourceConfiguration.build',
    message: celMessage('object', 'buildProfile'),
    accepts: 'the local-dev build preset',
    pass: fn => { fn.spec.resourceConfiguration.build = { profile: 'local-dev' }; },
  },
  'minLessOrEqualMax': {
    failsWhen: 'minReplicas is above maxReplicas',
    fail: fn => { fn.spec.scaleConfig = { minReplicas: 3, maxReplicas: 2 }; },
    path: 'spec.scaleConfig',
    message: celMessage('object', 'minLessOrEqualMax'),
    accepts: 'minReplicas equal to maxReplicas',
    pass: fn => { fn.spec.scaleConfig = { minReplicas: 3, maxReplicas: 3 }; },
  },
  'templateUnsupported': {
    failsWhen: 'the template has labels',
    fail: fn => { fn.spec.template = { labels: { app: 'greeter' } }; },
    path: 'spec.template',
    message: celMessage('object', 'templateUnsupported'),
    accepts: 'an empty template',
    pass: fn => { fn.spec.template = {}; },
  },
  'labelsPrefix': {
    failsWhen: 'a label key has the controller\'s prefix',
    fail: fn => { fn.spec.labels = { 'serverless.kyma-project.io/owner': 'me' }; },
    path: 'spec.labels',
    message: celMessage('object', 'labelsPrefix'),
    accepts: 'a label key whose prefix only starts like the controller\'s',
    pass: fn => { fn.spec.labels = { 'serverless.kyma-project.io.example.com/owner': 'me' }; },
  },
  'labelsLength': {
    failsWhen: 'a prefixed label key has 64 characters',
    fail: fn => { fn.spec.labels = { [`example.com/${'k'.repeat(52)}`]: 'v' }; },
    path: 'spec.labels',
    message: celMessage('object', 'labelsLength'),
    accepts: 'a prefixed label key of 63 characters',
    pass: fn => { fn.spec.labels = { [`example.com/${'k'.repeat(51)}`]: 'v' }; },
  },
  'annotationsPrefix': {
    failsWhen: 'a Pod annotation key has the controller\'s prefix',
    fail: fn => { fn.spec.annotations = { 'serverless.kyma-project.io/continuousGitCheckout': 'true' }; },
    path: 'spec.annotations',
    message: celMessage('object', 'annotationsPrefix'),
    accepts: 'the controller\'s prefix on the Function\'s own annotations',
    pass: fn => { fn.metadata.annotations = { 'serverless.kyma-project.io/continuousGitCheckout': 'true' }; },
  },
  'annotationsReservedKey': {
    release: ServerlessRelease.V1_13_0,
    base: 'hello24',
    failsWhen: 'a Pod annotation sets the Istio proxy configuration, which the 1.13.0 controller writes',
    fail: fn => { fn.spec.annotations = { 'proxy.istio.io/config': '{ "holdApplicationUntilProxyStarts": false }' }; },
    path: 'spec.annotations',
    message: celMessageV1_13_0('object', 'annotationsReservedKey'),
    accepts: 'another Istio annotation',
    pass: fn => { fn.spec.annotations = { 'proxy.istio.io/overrides': '{}', 'sidecar.istio.io/nativeSidecar': 'true' }; },
  },

  // Checks of the Function Controller and of the objects it creates.
  'functionName': {
    failsWhen: 'the name starts with a digit',
    fail: fn => { fn.metadata.name = '1greeter'; },
    path: 'metadata.name',
    message: /^Invalid value: "1greeter": a Function name must be a DNS-1035 label/,
    accepts: 'a name of 63 characters',
    pass: fn => { fn.metadata.name = NAME_63; },
  },
  'namespaceName': {
    failsWhen: 'the namespace has upper-case letters',
    fail: fn => { fn.metadata.namespace = 'Default'; },
    path: 'metadata.namespace',
    message: /^Invalid value: "Default": a namespace must be a DNS-1123 label/,
    accepts: 'a namespace that starts with a digit',
    pass: fn => { fn.metadata.namespace = '1default'; },
  },
  'envName': {
    failsWhen: 'an environment variable name starts with a digit',
    fail: fn => { fn.spec.env[0].name = '1GREETING'; },
    path: 'spec.env[0].name',
    message: /^Invalid value: "1GREETING": .*must not start with a digit/,
    accepts: 'an environment variable name with \'.\', \'-\' and digits',
    pass: fn => { fn.spec.env[0].name = 'GREETING.NAME-1'; },
  },
  'envValueSource': {
    failsWhen: 'a variable has both a value and a valueFrom',
    fail: fn => { fn.spec.env[1].value = 'Ada'; },
    path: 'spec.env[1].valueFrom',
    message: /may not be specified when `value` is not empty/,
    accepts: 'an empty value beside a valueFrom',
    pass: fn => { fn.spec.env[1].value = ''; },
  },
  'envServerDefaults': {
    failsWhen: 'a fieldRef leaves out the apiVersion the API server writes into the Deployment',
    fail: fn => { delete fn.spec.env[3].valueFrom.fieldRef.apiVersion; },
    path: 'spec.env[3].valueFrom.fieldRef.apiVersion',
    message: /^Required value: env "POD_NAME" selects a Pod field without apiVersion; the API server stores apiVersion "v1" in the Function's Deployment, .*; give apiVersion: "v1"$/,
    accepts: 'a fieldRef with apiVersion v1',
    pass: fn => { fn.spec.env[3].valueFrom.fieldRef.apiVersion = 'v1'; },
  },
  'objectName': {
    failsWhen: 'a secretKeyRef names a Secret in upper case',
    fail: fn => { fn.spec.env[2].valueFrom.secretKeyRef.name = 'Greeter-Secret'; },
    path: 'spec.env[2].valueFrom.secretKeyRef.name',
    message: /^Invalid value: "Greeter-Secret": a Secret name must be a DNS-1123 subdomain/,
    accepts: 'a secretKeyRef to a dotted Secret name',
    pass: fn => { fn.spec.env[2].valueFrom.secretKeyRef.name = 'greeter.secret-1'; },
  },
  'objectKey': {
    failsWhen: 'a configMapKeyRef key starts with \'..\'',
    fail: fn => { fn.spec.env[1].valueFrom.configMapKeyRef.key = '..name'; },
    path: 'spec.env[1].valueFrom.configMapKeyRef.key',
    message: /^Invalid value: "\.\.name": a valid ConfigMap key must consist of/,
    accepts: 'a configMapKeyRef key that starts with one \'.\'',
    pass: fn => { fn.spec.env[1].valueFrom.configMapKeyRef.key = '.name'; },
  },
  'secretMountUnique': {
    failsWhen: 'a Secret is mounted twice',
    fail: fn => { fn.spec.secretMounts.push({ secretName: 'greeter-tls', mountPath: '/etc/greeter/tls-2' }); },
    path: 'spec.secretMounts[1].secretName',
    message: /^Duplicate value: "greeter-tls"/,
    accepts: 'two Secrets with similar names',
    pass: fn => { fn.spec.secretMounts.push({ secretName: 'greeter-tls-2', mountPath: '/etc/greeter/tls-2' }); },
  },
  'mountPath': {
    failsWhen: 'a Secret is mounted at /tmp',
    fail: fn => { fn.spec.secretMounts[0].mountPath = '/tmp'; },
    path: 'spec.secretMounts[0].mountPath',
    message: /^Invalid value: "\/tmp": the controller mounts a scratch volume at \/tmp/,
    accepts: 'a mount path that only starts like /tmp',
    pass: fn => { fn.spec.secretMounts[0].mountPath = '/tmpfs'; },
  },
  'nodeDependencies': {
    failsWhen: 'Node.js dependencies are a JSON array',
    fail: fn => { fn.spec.source.inline.dependencies = '["lodash"]'; },
    path: 'spec.source.inline.dependencies',
    message: /^Invalid value: "\[\\"lodash\\"\]": Node\.js dependencies must be a package\.json \(a JSON object\): it is JSON, but not an object$/,
    accepts: 'an empty package.json',
    pass: fn => { fn.spec.source.inline.dependencies = '{}'; },
  },
  'functionShape': {
    failsWhen: 'the Function holds more values than the limit (7,000 env entries of three values each)',
    fail: fn => { fn.spec.env = Array.from({ length: 7_000 }, (_, i) => ({ name: `V${i}`, value: 'x' })); },
    path: '',
    message: `Function holds more than ${FUNCTION_SHAPE_LIMITS.maxValues} values (fields, list items); a Function holds a few hundred: keep the environment, labels and annotations to what the Function needs`,
    accepts: 'a Function just under the limit (6,500 env entries)',
    pass: fn => { fn.spec.env = Array.from({ length: 6_500 }, (_, i) => ({ name: `V${i}`, value: 'x' })); },
  },
  'inlineSourceSize': {
    failsWhen: 'the inline source is one byte over the limit',
    // greeter is Node.js: without dependencies, the controller stores `{}` beside the source.
    fail: fn => { fn.spec.source.inline = { source: handlerOfBytes(INLINE_SOURCE_MAX_BYTES - 1) }; },
    path: 'spec.source.inline',
    message: `Too long: source and dependencies take ${INLINE_SOURCE_MAX_BYTES + 1} bytes; at most ${INLINE_SOURCE_MAX_BYTES} fit in the ConfigMap the controller stores them in`,
    accepts: 'an inline source exactly at the limit, with the `{}` the controller adds',
    pass: fn => { fn.spec.source.inline = { source: handlerOfBytes(INLINE_SOURCE_MAX_BYTES - 2) }; },
  },
  'nodeHandlerMain': {
    failsWhen: 'a Node.js handler exports main as a property of an object literal, which import() cannot see',
    fail: fn => { fn.spec.source.inline.source = 'module.exports = { main: () => "hi" };\n'; },
    path: 'spec.source.inline.source',
    message: /^Invalid value: "module.exports = \{ main: \(\) => \\"hi\\" \};\\n": the Node.js runtime loads the handler with import\(\)/,
    accepts: 'main declared, then exported by name',
    pass: fn => { fn.spec.source.inline.source = 'function main(event, context) {\n  return "hi";\n}\nmodule.exports = { main };\n'; },
  },
  'gitUrl': {
    base: 'orders',
    failsWhen: 'the Git URL has no scheme',
    fail: fn => { fn.spec.source.gitRepository.url = 'git.example.com/shop/functions.git'; },
    path: 'spec.source.gitRepository.url',
    message: /^Invalid value: "git\.example\.com\/shop\/functions\.git": must be an absolute URL/,
    accepts: 'an ssh:// Git URL',
    pass: fn => { fn.spec.source.gitRepository.url = 'ssh://git.example.com/shop/functions.git'; },
  },
  'labelSyntax': {
    failsWhen: 'a label value has 64 characters',
    fail: fn => { fn.spec.labels = { app: 'a'.repeat(64) }; },
    path: 'spec.labels.app',
    message: /^Invalid value: "a{64}": a valid label must be .*at most 63 characters$/,
    accepts: 'a label value of 63 characters',
    pass: fn => { fn.spec.labels = { app: 'a'.repeat(63) }; },
  },
  'annotationSyntax': {
    failsWhen: 'the annotations take one byte over 256 KiB',
    fail: fn => { fn.spec.annotations = { [EXAMPLE_KEY]: 'x'.repeat(ANNOTATIONS_MAX_BYTES - EXAMPLE_KEY.length + 1) }; },
    path: 'spec.annotations',
    message: `Too long: must have at most ${ANNOTATIONS_MAX_BYTES} bytes (they take ${ANNOTATIONS_MAX_BYTES + 1})`,
    accepts: 'annotations of exactly 256 KiB, keys included',
    pass: fn => { fn.spec.annotations = { [EXAMPLE_KEY]: 'x'.repeat(ANNOTATIONS_MAX_BYTES - EXAMPLE_KEY.length) }; },
  },
  'requestsWithinLimits': {
    failsWhen: 'the Function requests more memory than its limit',
    fail: fn => { fn.spec.resourceConfiguration.function.resources.requests.memory = '1025Mi'; },
    path: 'spec.resourceConfiguration.function.resources.requests.memory',
    message: 'Invalid value: "1025Mi": must be less than or equal to memory limit of 1Gi',
    accepts: 'a memory request equal to the limit, in other units',
    pass: fn => { fn.spec.resourceConfiguration.function.resources.requests.memory = '1024Mi'; },
  },
  'functionMinimum': {
    failsWhen: 'the Function requests 9m CPU',
    fail: fn => { fn.spec.resourceConfiguration.function.resources.requests.cpu = '9m'; },
    path: 'spec.resourceConfiguration.function.resources.requests.cpu',
    message: /^Invalid value: "9m": must be at least 10m, the smallest cpu .* for a Function container$/,
    accepts: 'a Function CPU request of 10m',
    pass: fn => { fn.spec.resourceConfiguration.function.resources.requests.cpu = '10m'; },
  },
  'buildMinimum': {
    failsWhen: 'the build requests 199Mi memory',
    fail: fn => { fn.spec.resourceConfiguration.build.resources.requests.memory = '199Mi'; },
    path: 'spec.resourceConfiguration.build.resources.requests.memory',
    message: /^Invalid value: "199Mi": must be at least 200Mi, the smallest memory .* for a build container$/,
    accepts: 'a build memory request of 200Mi',
    pass: fn => { fn.spec.resourceConfiguration.build.resources.requests.memory = '200Mi'; },
  },
  'buildResources': {
    release: ServerlessRelease.V1_13_0,
    base: 'hello24',
    failsWhen: 'a Function gives build resources to a release that builds nothing',
    fail: fn => { fn.spec.resourceConfiguration.build = { profile: 'normal' }; },
    path: 'spec.resourceConfiguration.build',
    message: 'Forbidden: 1.13.0 builds nothing; the controller ignores build resources; remove buildResources',
    accepts: 'Function resources alone',
    pass: fn => { fn.spec.resourceConfiguration = { function: { profile: 'XL' } }; },
  },
  'scaleConfig': {
    release: ServerlessRelease.V1_13_0,
    base: 'hello24',
    failsWhen: 'a Function asks a release that creates no HPA for scaleConfig',
    fail: fn => { fn.spec.scaleConfig = { minReplicas: 1, maxReplicas: 5 }; },
    path: 'spec.scaleConfig',
    message: /^Forbidden: the 1\.13\.0 controller creates no HPA and ignores scaleConfig; KymaFunction's `scale` writes a HorizontalPodAutoscaler/,
    accepts: 'a fixed number of replicas, which an HPA of its own may drive through the scale subresource',
    pass: fn => { fn.spec.replicas = 5; },
  },
  'securityContextRelease': {
    failsWhen: 'a 1.11.1 Function sets a container security context',
    fail: fn => { fn.spec.containerSecurityContext = { runAsNonRoot: true }; },
    path: 'spec.containerSecurityContext',
    message: 'unknown field "containerSecurityContext": the Function CRD of release 1.11.1 has no such field; security contexts need release 1.13.0',
    accepts: 'a 1.11.1 Function without security contexts',
    pass: fn => { delete fn.spec.containerSecurityContext; delete fn.spec.podSecurityContext; },
  },
  'runtimeImageOverride': {
    failsWhen: 'the runtime image has upper-case letters in its path',
    fail: fn => { fn.spec.runtimeImageOverride = 'europe-docker.pkg.dev/kyma-project/Node:22'; },
    path: 'spec.runtimeImageOverride',
    message: /^Invalid value: "europe-docker\.pkg\.dev\/kyma-project\/Node:22": must be a container image reference/,
    accepts: 'a runtime image on a registry with a tag',
    pass: fn => { fn.spec.runtimeImageOverride = 'europe-docker.pkg.dev/kyma-project/node:22'; },
  },
};

/** The rules of FUNCTION_RULES that have no case in RULE_CASES: must be none. */
export function rulesWithoutFailure(): string[] {
  return FUNCTION_RULES.map(r => r.id).filter(id => !(id in RULE_CASES));
}

/**
 * Every rule of FUNCTION_RULES that holds in a release, with how to break it; a rule without a
 * case gets a placeholder, so that its test fails.
 */
export function ruleFailureCases(release: ServerlessRelease = DEFAULT_RELEASE): Array<{ id: string; failsWhen: string }> {
  return functionRulesOf(release).map(({ id }) => ({ id, failsWhen: RULE_CASES[id]?.failsWhen ?? `(no case for ${id}: add one to test/util/function-rule-cases.ts)` }));
}

/** A valid Function, broken so that it fails the rule `id` (the failing half of its case in RULE_CASES). */
export function brokenFunction(id: string): any {
  const ruleCase = RULE_CASES[id];
  if (!ruleCase) throw new Error(`no case for rule ${id}: add one to test/util/function-rule-cases.ts`);
  return changed(ruleCase.fail, ruleCase.base);
}
