/**
 * Every rule a Function must pass, written once.
 *
 * `validateFunction()` checks a Function object the way the cluster of a release would judge it:
 * the CRD's OpenAPI schema and CEL rules (what the API server rejects at apply time), the checks
 * the Function Controller runs before it runs anything (what would otherwise surface later as
 * `ConfigurationReady=False`), and the few rules nobody upstream checks but that make the
 * Function fail later or do less than it says (its Service name, the size of its inline source,
 * fields a release ignores). `KymaFunction` runs it at synth, the webhook at admission and
 * `kyma-serverless validate` on files, so all three agree.
 *
 * A rule that holds in one release only says so in `FUNCTION_RULES` (`releases`);
 * `functionWarnings()` names what a release still accepts but will stop running (retired runtimes).
 */
import { RuleReport, text } from './_rules';
import { FUNCTION_API_VERSION, FUNCTION_KIND, functionCelRules } from './function-schema';
import { FUNCTION_SHAPE_LIMITS, functionShapeProblem } from './function-shape';
import { functionSchemaValidator } from './function-validator';
import {
  isConfigMapKey, isDns1035Label, isDns1123Label, isDns1123Subdomain, isEnvVarName, isImageReference, isLabelValue, qualifiedNameProblems,
} from './names';
import { isObject } from './_json';
import { FIELD_REF_API_VERSION, RESOURCE_FIELD_REF_DIVISOR, serverDefaultedFields } from './controller-fixed-point';
import { EMPTY_NODE_DEPENDENCIES } from './function-defaults';
import { BUILD_MIN_REQUEST, FUNCTION_MIN_REQUEST, MinimumRequest } from './profiles';
import { nodeHandlerProblem } from './node-handler';
import { parseQuantity } from './quantity';
import { DEFAULT_RELEASE, RELEASES, ReleaseFacts, ServerlessRelease, releaseFacts } from './release';
import { RuleInfo, UpstreamEnforcement } from './rule-info';
import { RuntimeFamily, runtimeFamily } from './runtimes';
import { Violation } from './validator';

/**
 * 1.11.1: the most bytes inline source and dependencies may take together. The controller stores
 * them in a ConfigMap for the build Job; a ConfigMap holds 1 MiB, less room for its metadata.
 */
export const INLINE_SOURCE_MAX_BYTES = 900 * 1024;

/**
 * The most bytes one string of a process's environment may take, `NAME=value` and its closing NUL:
 * Linux's `MAX_ARG_STRLEN` (32 pages of 4 KiB). A container whose environment holds a longer one
 * never starts: `execve` fails with E2BIG ("argument list too long").
 */
export const ENV_STRING_MAX_BYTES = 128 * 1024;

/** The environment variables the 1.13.0 controller passes inline source and dependencies in. */
export const INLINE_SOURCE_ENV = { source: 'FUNC_HANDLER_SOURCE', dependencies: 'FUNC_HANDLER_DEPENDENCIES' } as const;

/** The most bytes the value of an environment variable may take: {@link ENV_STRING_MAX_BYTES} less `NAME=` and the NUL. */
export function envValueMaxBytes(name: string): number {
  return ENV_STRING_MAX_BYTES - Buffer.byteLength(`${name}=`, 'utf8') - 1;
}

/**
 * 1.13.0: the most bytes of inline source. The controller puts it, as it is, into the environment
 * variable `FUNC_HANDLER_SOURCE` of the Function's container (and the dependencies into
 * `FUNC_HANDLER_DEPENDENCIES`), whose shell writes it into the handler file at Pod start; Linux
 * limits each variable to 128 KiB, far below the 1.5 MiB etcd stores of the Deployment, its
 * ReplicaSet and its Pods. 131,051 bytes.
 */
export const INLINE_SOURCE_ENV_MAX_BYTES = envValueMaxBytes(INLINE_SOURCE_ENV.source);

/** 1.13.0: the most bytes of inline dependencies, in `FUNC_HANDLER_DEPENDENCIES` (see {@link INLINE_SOURCE_ENV_MAX_BYTES}). 131,045 bytes. */
export const INLINE_DEPENDENCIES_ENV_MAX_BYTES = envValueMaxBytes(INLINE_SOURCE_ENV.dependencies);

/** The most bytes all annotations of an object may take together (keys and values). */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

/**
 * The annotation client-side `kubectl apply` writes the whole object into, as JSON: an object
 * larger than {@link ANNOTATIONS_MAX_BYTES} cannot be applied that way.
 */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Where a mount path is taken: the controller mounts an emptyDir there in every Function Pod. */
export const FUNCTION_TMP_DIR = '/tmp';

/** Settings of {@link validateFunction}: the stack's configuration the rules depend on. */
export interface FunctionRuleOptions {
  /**
   * The smallest requests (and limits) of a Function's container with explicit resources.
   *
   * @default FUNCTION_MIN_REQUEST (10m CPU, 16Mi memory)
   */
  readonly functionMinRequest?: MinimumRequest;
  /**
   * The smallest requests (and limits) of a build Job's container with explicit resources.
   *
   * @default BUILD_MIN_REQUEST (200m CPU, 200Mi memory)
   */
  readonly buildMinRequest?: MinimumRequest;
  /**
   * The release of the stack that runs the Function: its CRD, its controller's checks, and what it ignores.
   *
   * @default ServerlessRelease.V1_11_1 (DEFAULT_RELEASE)
   */
  readonly release?: ServerlessRelease;
  /**
   * Evaluate the CEL rules of the Function CRD. The validating webhook leaves them out: the API
   * server has evaluated them on the same object before it calls the webhook.
   *
   * @default true
   */
  readonly celRules?: boolean;
  /**
   * The most violations to describe; past it they are only counted (see
   * {@link validateFunctionBounded}). The webhook sets it, so that a Function with a million
   * small faults costs a count rather than a million messages.
   *
   * @default - every violation
   */
  readonly maxViolations?: number;
}

/** A report's outcome, without the report. */
function bounded(report: RuleReport): BoundedViolations {
  return { violations: report.violations, omitted: report.omitted };
}

/** The outcome of {@link validateFunctionBounded}. */
export interface BoundedViolations {
  /** The first violations found, at most `maxViolations` of them, in {@link validateFunction}'s order. */
  readonly violations: Violation[];
  /** How many more violations there are, found and counted but not described. */
  readonly omitted: number;
}

/** What a rule of the Function API requires, for docs and for tests that must cover them all. */
export interface FunctionRuleInfo extends RuleInfo {
  /**
   * The releases in which the rule holds.
   *
   * @default - every release
   */
  readonly releases?: readonly ServerlessRelease[];
}

const API = UpstreamEnforcement.API_SERVER;
const CONTROLLER = UpstreamEnforcement.CONTROLLER;
const NOBODY = UpstreamEnforcement.NOBODY;

const V1_11_1 = ServerlessRelease.V1_11_1;

/** Releases in which a fact holds, for a rule's `releases`. */
function releasesWhere(fact: (facts: ReleaseFacts) => boolean): readonly ServerlessRelease[] {
  return RELEASES.filter(r => fact(releaseFacts(r)));
}

/** Per release, a list of the release's facts: `1.11.1: a, b; 1.13.0: a, b, c`. */
function perRelease(list: (facts: ReleaseFacts) => readonly string[]): string {
  return RELEASES.map(r => `${r}: ${list(releaseFacts(r)).join(', ')}`).join('; ');
}

/** Releases that build images: a build Job, a registry, an HPA for `scaleConfig`, inline source in a ConfigMap. */
const BUILDING = releasesWhere(f => f.buildsImages);
/** Releases that build nothing: build resources and `scaleConfig` do nothing there. */
const BUILDLESS = releasesWhere(f => !f.buildsImages);

/**
 * Every rule of the Function API. The OpenAPI rows stand for one keyword of the schema each;
 * the CEL rows for one rule of the CRD; the rest for the checks of {@link validateFunction}.
 */
export const FUNCTION_RULES: readonly FunctionRuleInfo[] = [
  // The CRD's OpenAPI schema.
  { id: 'openapi.required', field: 'spec.runtime, spec.source, and the required fields of each part', requires: 'required fields are present', hint: 'add the missing field', upstream: API },
  { id: 'openapi.enum', field: 'spec.runtime, spec.source.gitRepository.auth.type', requires: `a supported value (runtimes ${perRelease(f => f.runtimes)}; auth type basic or key)`, hint: 'use one of the supported values', upstream: API },
  { id: 'openapi.minimum', field: 'spec.replicas, spec.scaleConfig.minReplicas, spec.scaleConfig.maxReplicas', requires: 'replicas >= 0; minReplicas and maxReplicas >= 1', hint: 'raise the number', upstream: API },
  { id: 'openapi.minLength', field: 'spec.source.inline.source, spec.secretMounts[].secretName, spec.secretMounts[].mountPath', requires: 'not empty', hint: 'give a value', upstream: API },
  { id: 'openapi.maxLength', field: 'spec.secretMounts[].secretName', requires: 'at most 253 characters', hint: 'shorten the name', upstream: API },
  { id: 'openapi.type', field: 'every field', requires: 'the JSON type of the field', hint: 'use a value of the field\'s type', upstream: API },
  { id: 'openapi.pattern', field: 'resource quantities', requires: 'a Kubernetes quantity such as 100m, 1.5 or 128Mi', hint: 'write the amount as a quantity', upstream: API },
  { id: 'openapi.anyOf', field: 'resource quantities', requires: 'an integer or a string', hint: 'write a fractional amount as a string, such as "500m" or "0.5"', upstream: API },
  { id: 'openapi.format', field: 'spec.replicas, spec.scaleConfig (int32)', requires: 'whole numbers that fit in 32 bits', hint: 'use a smaller number', upstream: API },
  { id: 'openapi.additionalProperties', field: 'every object', requires: 'no unknown fields', hint: 'remove the field or fix its spelling', upstream: API },
  // The CRD's CEL rules.
  { id: 'sourceOneOf', field: 'spec.source', requires: 'exactly one of inline and gitRepository', hint: 'keep either the inline source or the Git repository', upstream: API },
  { id: 'gitBaseDir', field: 'spec.source.gitRepository.baseDir', requires: 'not blank', hint: 'give the folder of the handler in the repository, such as "/" or "functions/orders"', upstream: API },
  { id: 'gitReference', field: 'spec.source.gitRepository.reference', requires: 'not blank', hint: 'give a branch, tag or commit, such as "main"', upstream: API },
  { id: 'gitAuthSecretName', field: 'spec.source.gitRepository.auth.secretName', requires: 'not blank', hint: 'name the Secret that holds the Git credentials', upstream: API },
  { id: 'reservedEnvs', field: 'spec.env[].name', requires: `none of the names the controller sets (${perRelease(f => f.reservedEnvNames)})`, hint: 'rename the variable: the controller sets these itself', upstream: API },
  { id: 'profileOrResources', field: 'spec.resourceConfiguration.function, .build', requires: 'exactly one of profile and resources', hint: 'use either a preset or explicit resources', upstream: API },
  { id: 'functionProfile', field: 'spec.resourceConfiguration.function.profile', requires: 'one of XS, S, M, L, XL', hint: 'use one of the Function presets', upstream: API },
  { id: 'buildProfile', field: 'spec.resourceConfiguration.build.profile', requires: 'one of local-dev, slow, normal, fast', hint: 'use one of the build presets', upstream: API },
  { id: 'minLessOrEqualMax', field: 'spec.scaleConfig', requires: 'minReplicas <= maxReplicas (1.11.1 only: 1.13.0 dropped the rule with the HPA)', hint: 'swap the bounds or raise maxReplicas', upstream: API, releases: [V1_11_1] },
  { id: 'templateUnsupported', field: 'spec.template', requires: 'no labels or annotations', hint: 'move them to spec.labels and spec.annotations', upstream: API },
  { id: 'labelsPrefix', field: 'spec.labels', requires: 'no key starting with serverless.kyma-project.io/', hint: 'use another prefix: the controller owns that one', upstream: API },
  { id: 'labelsLength', field: 'spec.labels', requires: 'keys shorter than 64 characters', hint: 'shorten the key', upstream: API },
  { id: 'annotationsPrefix', field: 'spec.annotations', requires: 'no key starting with serverless.kyma-project.io/', hint: 'use another prefix: the controller owns that one', upstream: API },
  { id: 'annotationsReservedKey', field: 'spec.annotations', requires: `none of the keys the controller writes into the Pod itself (${perRelease(f => f.reservedAnnotations).replace(/: (;|$)/g, ': none$1')})`, hint: 'remove the annotation: the controller sets the Istio proxy\'s holdApplicationUntilProxyStarts itself', upstream: API, releases: releasesWhere(f => f.reservedAnnotations.length > 0) },
  // Checks of the Function Controller (validation.go) and of the objects it creates.
  { id: 'functionName', field: 'metadata.name', requires: 'a DNS-1035 label: at most 63 lower-case letters, digits and \'-\', starting with a letter', hint: 'rename the Function: its Service takes the same name', upstream: NOBODY },
  { id: 'namespaceName', field: 'metadata.namespace', requires: 'a DNS-1123 label', hint: 'use a valid namespace name', upstream: API },
  { id: 'envName', field: 'spec.env[].name', requires: 'letters, digits, \'_\', \'-\' or \'.\', not starting with a digit', hint: 'rename the variable', upstream: CONTROLLER },
  { id: 'envValueSource', field: 'spec.env[]', requires: 'either a value or a valueFrom with exactly one source', hint: 'keep one source for the variable', upstream: NOBODY },
  { id: 'envServerDefaults', field: 'spec.env[].valueFrom.fieldRef.apiVersion, spec.env[].valueFrom.resourceFieldRef.divisor', requires: `given (apiVersion ${FIELD_REF_API_VERSION}, divisor ${RESOURCE_FIELD_REF_DIVISOR}): the Function's Deployment holds them, and the controller, which compares env with the Deployment's, would never see them equal and never create the Service (1.11.1 updates the Deployment every second; 1.13.0 stays at Running Unknown, DeploymentUpdated)`, hint: 'synth, the stack\'s webhook and its CRD add it for you', upstream: NOBODY },
  { id: 'objectName', field: 'spec.env[].valueFrom (Secret and ConfigMap names), spec.secretMounts[].secretName, spec.source.gitRepository.auth.secretName', requires: 'DNS-1123 subdomains', hint: 'use the name of an existing Secret or ConfigMap', upstream: CONTROLLER },
  { id: 'objectKey', field: 'spec.env[].valueFrom (Secret and ConfigMap keys)', requires: 'letters, digits, \'-\', \'_\' or \'.\'', hint: 'use a key the Secret or ConfigMap has', upstream: NOBODY },
  { id: 'secretMountUnique', field: 'spec.secretMounts[].secretName', requires: 'each Secret mounted once', hint: 'remove the second mount of the Secret', upstream: CONTROLLER },
  { id: 'mountPath', field: 'spec.secretMounts[].mountPath', requires: `an absolute path without ':', unique, and not ${FUNCTION_TMP_DIR}`, hint: 'mount each Secret at its own absolute path', upstream: NOBODY },
  { id: 'nodeDependencies', field: 'spec.source.inline.dependencies (Node.js)', requires: 'blank, or a package.json: a JSON object', hint: 'write the dependencies as package.json, such as {"dependencies": {"lodash": "^4.17.21"}}', upstream: CONTROLLER },
  { id: 'nodeHandlerMain', field: 'spec.source.inline.source (Node.js)', requires: 'a `main` the runtime\'s import() sees: `exports.main = ...`, `module.exports = { main }` or, in an ES module, `export function main`', hint: 'declare `function main(event, context)` and export it by name: `module.exports = { main }`, or `export function main` in an ES module', upstream: NOBODY },
  { id: 'inlineSourceSize', field: 'spec.source.inline', requires: `1.11.1: source and dependencies within ${INLINE_SOURCE_MAX_BYTES / 1024} KiB together (they are stored in a 1 MiB ConfigMap; blank Node.js dependencies are stored as {}); 1.13.0: source within ${INLINE_SOURCE_ENV_MAX_BYTES} bytes and dependencies within ${INLINE_DEPENDENCIES_ENV_MAX_BYTES} (each travels in an environment variable of the container, ${INLINE_SOURCE_ENV.source} and ${INLINE_SOURCE_ENV.dependencies}, and Linux refuses to start a process with a variable over 128 KiB)`, hint: 'move the code to a Git repository (FunctionSource.fromGitRepository)', upstream: NOBODY },
  { id: 'gitUrl', field: 'spec.source.gitRepository.url', requires: 'an absolute URL (https://, http://, ssh://, git://) or git@host:path', hint: 'give the URL you would clone the repository with', upstream: CONTROLLER },
  { id: 'labelSyntax', field: 'spec.labels', requires: 'valid label keys and values (values at most 63 characters)', hint: 'fix the key or value', upstream: CONTROLLER },
  { id: 'annotationSyntax', field: 'spec.annotations', requires: `valid annotation keys, at most ${ANNOTATIONS_MAX_BYTES / 1024} KiB in all`, hint: 'fix the key or shorten the values', upstream: CONTROLLER },
  { id: 'requestsWithinLimits', field: 'spec.resourceConfiguration.*.resources', requires: 'requests <= limits', hint: 'raise the limit or lower the request', upstream: CONTROLLER },
  { id: 'functionMinimum', field: 'spec.resourceConfiguration.function.resources', requires: 'requests and limits of at least 10m CPU and 16Mi memory', hint: 'raise the amount, or use a preset', upstream: CONTROLLER },
  { id: 'buildMinimum', field: 'spec.resourceConfiguration.build.resources', requires: 'requests and limits of at least 200m CPU and 200Mi memory (1.11.1 only: 1.13.0 refuses build resources)', hint: 'raise the amount, or use a build preset', upstream: CONTROLLER, releases: BUILDING },
  { id: 'runtimeImageOverride', field: 'spec.runtimeImageOverride', requires: 'an image reference such as registry.example.com/node:22', hint: 'give a full image reference', upstream: NOBODY },
  { id: 'functionShape', field: 'the whole Function', requires: `at most ${FUNCTION_SHAPE_LIMITS.maxDepth} levels deep and ${FUNCTION_SHAPE_LIMITS.maxValues} values (fields, list items): a Function nests about 8 and holds a few hundred, and every check of the webhook, which each Function write waits for, walks them all`, hint: 'keep the environment, labels and annotations to what the Function needs', upstream: NOBODY },
  // What a release ignores or lacks: refused with the reason, never dropped silently.
  { id: 'buildResources', field: 'spec.resourceConfiguration.build', requires: 'absent under 1.13.0, which builds nothing: the controller ignores build resources', hint: 'remove buildResources (spec.resourceConfiguration.build)', upstream: NOBODY, releases: BUILDLESS },
  { id: 'scaleConfig', field: 'spec.scaleConfig', requires: 'absent under 1.13.0: its controller creates no HorizontalPodAutoscaler and ignores scaleConfig', hint: 'KymaFunction\'s `scale` writes a HorizontalPodAutoscaler on the Function\'s scale subresource, or write one yourself', upstream: NOBODY, releases: BUILDLESS },
  { id: 'securityContextRelease', field: 'spec.containerSecurityContext, spec.podSecurityContext', requires: 'only in a release whose CRD has them (1.13.0); 1.11.1\'s has no such fields', hint: 'set the stack\'s release to 1.13.0, or remove the field', upstream: API, releases: releasesWhere(f => !f.securityContexts) },
];

/**
 * The rules of {@link FUNCTION_RULES} that hold in a release.
 *
 * @param release the release
 * @returns the rules, in the table's order
 */
export function functionRulesOf(release: ServerlessRelease = DEFAULT_RELEASE): readonly FunctionRuleInfo[] {
  return FUNCTION_RULES.filter(r => !r.releases || r.releases.includes(release));
}

/**
 * What {@link functionWarnings} reports: what a release accepts and runs today, but will stop
 * running. Warnings never fail synth or admission; the webhook returns them as admission warnings
 * (which kubectl prints), and synth and `validate` can print them.
 */
export const FUNCTION_WARNINGS: readonly FunctionRuleInfo[] = [
  { id: 'deprecatedRuntime', field: 'spec.runtime', requires: `a runtime upstream still maintains (retired: ${perRelease(f => Object.entries(f.deprecatedRuntimes).map(([r, when]) => `${r} since ${when}`)).replace(/: (;|$)/g, ': none$1')})`, hint: 'move to a newer runtime of the same language, such as nodejs22 or nodejs24', upstream: NOBODY, releases: releasesWhere(f => Object.keys(f.deprecatedRuntimes).length > 0) },
  { id: 'clientSideApplySize', field: 'the whole Function', requires: `at most ${ANNOTATIONS_MAX_BYTES / 1024} KiB as JSON, with its annotations: client-side \`kubectl apply\` copies the object into the annotation ${LAST_APPLIED_ANNOTATION}, and the API server refuses annotations over ${ANNOTATIONS_MAX_BYTES / 1024} KiB (server-side apply, Argo CD's ServerSideApply=true, Flux and \`kyma-serverless apply\` write no such annotation)`, hint: 'apply it server-side (kubectl apply --server-side, Argo CD\'s ServerSideApply=true), or take the source from Git (FunctionSource.fromGitRepository)', upstream: API },
];

function utf8Bytes(value: unknown): number {
  return typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;
}

/** The UTF-16 code units of a string (0 for anything else): each takes 1 to 3 bytes in UTF-8, so `utf8Bytes(v) <= 3 * utf16Units(v)`. */
function utf16Units(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}

const GIT_SSH_URL = /^((git|ssh)|(git@[\w.]+))(:(\/\/)?)([\w.@:/\-~]+)(\/)?$/;

/** Whether a Git URL is one the controller accepts: the SSH forms, or an absolute URL. */
function isGitUrl(url: string): boolean {
  if (GIT_SSH_URL.test(url)) return true;
  try {
    const parsed = new URL(url);
    return /^[a-z][a-z0-9+.-]*:$/.test(parsed.protocol) && (parsed.host !== '' || parsed.pathname.startsWith('/'));
  } catch {
    return false;
  }
}

function checkMetadata(metadata: unknown, report: RuleReport): void {
  if (!isObject(metadata)) return;
  const { name, generateName, namespace } = metadata;
  if (name === undefined && generateName === undefined) {
    report.add('functionName', 'metadata.name', 'Required value: name or generateName is required');
  } else if (typeof name === 'string' && functionNameProblem(name)) {
    report.add('functionName', 'metadata.name', `Invalid value: ${text(name)}: ${functionNameProblem(name)}`);
  }
  if (typeof namespace === 'string' && !isDns1123Label(namespace)) {
    report.add('namespaceName', 'metadata.namespace', `Invalid value: ${text(namespace)}: a namespace must be a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric`);
  }
}

/**
 * Why a name cannot be a Function's name (rule `functionName`): the Function's Service is named
 * after it, so it must be a DNS-1035 label.
 *
 * @param name the name
 * @returns the reason, or undefined when the name is valid
 */
export function functionNameProblem(name: string): string | undefined {
  return isDns1035Label(name) ? undefined : 'a Function name must be a DNS-1035 label: at most 63 lower-case letters, digits and \'-\', '
    + 'starting with a letter and ending with a letter or digit (the Function\'s Service is named after it)';
}

/**
 * Reports a Secret or ConfigMap name that is not a DNS-1123 subdomain. An empty name is left
 * to the schema (`minLength`) or to the caller, and a blank one, when `blankChecked`, to a CEL rule.
 */
function checkObjectName(path: string, name: unknown, kind: string, report: RuleReport, blankChecked = false): void {
  if (typeof name !== 'string' || name === '' || (blankChecked && name.trim() === '')) return;
  if (!isDns1123Subdomain(name)) {
    report.add('objectName', path, `Invalid value: ${text(name)}: a ${kind} name must be a DNS-1123 subdomain: at most 253 lower-case letters, digits, '-' and '.', starting and ending alphanumeric`);
  }
}

const ENV_SOURCES = ['configMapKeyRef', 'fieldRef', 'fileKeyRef', 'resourceFieldRef', 'secretKeyRef'];

/** What the release's controller does with a Function whose env differs from its Deployment's for ever. */
function endlessUpdate(facts: ReleaseFacts): string {
  return facts.buildsImages
    ? `the ${facts.release} controller, which compares env as text, then updates the Deployment every second and never creates the Service`
    : `the ${facts.release} controller, which compares env with the Deployment's, then never sees them equal, keeps Running at Unknown (DeploymentUpdated) and never creates the Service`;
}

function checkEnv(env: unknown, facts: ReleaseFacts, report: RuleReport): void {
  if (!Array.isArray(env)) return;
  for (const field of serverDefaultedFields(env)) {
    report.add('envServerDefaults', field.path, `Required value: ${field.cause}, and ${endlessUpdate(facts)}; give ${field.path.split('.').pop()}: ${text(field.value)}`);
  }
  // As forEach: a hole is no variable.
  for (let i = 0; i < env.length; i++) {
    if (!(i in env)) continue;
    const variable: unknown = env[i];
    if (!isObject(variable)) continue;
    // Each path written where a violation needs it: most variables have none.
    if (typeof variable.name === 'string' && !isEnvVarName(variable.name)) {
      report.add('envName', `spec.env[${i}].name`, `Invalid value: ${text(variable.name)}: a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit, be '.' or start with '..'`);
    }
    const valueFrom = variable.valueFrom;
    if (valueFrom === undefined) continue;
    if (typeof variable.value === 'string' && variable.value !== '') {
      report.add('envValueSource', `spec.env[${i}].valueFrom`, 'Invalid value: "": may not be specified when `value` is not empty');
    }
    if (!isObject(valueFrom)) continue;
    const sources = ENV_SOURCES.filter(s => valueFrom[s] !== undefined);
    if (sources.length !== 1) {
      report.add('envValueSource', `spec.env[${i}].valueFrom`, sources.length === 0
        ? 'Invalid value: "": must specify one of: `configMapKeyRef`, `fieldRef`, `fileKeyRef`, `resourceFieldRef` or `secretKeyRef`'
        : `Invalid value: "": may not have more than one field specified at a time (found ${sources.join(', ')})`);
    }
    for (const [source, kind] of [['secretKeyRef', 'Secret'], ['configMapKeyRef', 'ConfigMap']] as const) {
      const ref = valueFrom[source];
      if (!isObject(ref)) continue;
      if (ref.name === undefined || ref.name === '') {
        report.add('objectName', `spec.env[${i}].valueFrom.${source}.name`, `Required value: the name of the ${kind}`);
      } else {
        checkObjectName(`spec.env[${i}].valueFrom.${source}.name`, ref.name, kind, report);
      }
      if (typeof ref.key === 'string' && !isConfigMapKey(ref.key)) {
        report.add('objectKey', `spec.env[${i}].valueFrom.${source}.key`, `Invalid value: ${text(ref.key)}: a valid ${kind} key must consist of alphanumeric characters, '-', '_' or '.'`);
      }
    }
  }
}

function checkSecretMounts(mounts: unknown, report: RuleReport): void {
  if (!Array.isArray(mounts)) return;
  const secrets = new Set<string>();
  const paths = new Set<string>([FUNCTION_TMP_DIR]);
  mounts.forEach((mount, i) => {
    if (!isObject(mount)) return;
    const path = `spec.secretMounts[${i}]`;
    const { secretName, mountPath } = mount;
    if (typeof secretName === 'string' && secretName !== '') {
      checkObjectName(`${path}.secretName`, secretName, 'Secret', report);
      if (secrets.has(secretName)) {
        report.add('secretMountUnique', `${path}.secretName`, `Duplicate value: ${text(secretName)}: each Secret can be mounted once`);
      }
      secrets.add(secretName);
    }
    if (typeof mountPath === 'string' && mountPath !== '') {
      const normalized = mountPath.replace(/\/+$/, '') || '/';
      if (!mountPath.startsWith('/') || mountPath.includes(':')) {
        report.add('mountPath', `${path}.mountPath`, `Invalid value: ${text(mountPath)}: must be an absolute path without ':'`);
      } else if (normalized === FUNCTION_TMP_DIR) {
        report.add('mountPath', `${path}.mountPath`, `Invalid value: ${text(mountPath)}: the controller mounts a scratch volume at ${FUNCTION_TMP_DIR} in every Function Pod`);
      } else if (paths.has(normalized)) {
        report.add('mountPath', `${path}.mountPath`, `Duplicate value: ${text(mountPath)}: each mount path can be used once`);
      }
      paths.add(normalized);
    }
  });
}

function checkSource(source: unknown, runtime: unknown, facts: ReleaseFacts, report: RuleReport): void {
  if (!isObject(source)) return;
  const { inline, gitRepository } = source;
  if (isObject(inline)) {
    const { dependencies } = inline;
    const nodejs = typeof runtime === 'string' && runtimeFamily(runtime) === RuntimeFamily.NODEJS;
    if (nodejs && typeof dependencies === 'string' && dependencies.trim() !== '') {
      const problem = packageJsonProblem(dependencies);
      if (problem) {
        report.add('nodeDependencies', 'spec.source.inline.dependencies', `Invalid value: ${text(abbreviate(dependencies))}: Node.js dependencies must be a package.json (a JSON object): ${problem}`);
      }
    }
    if (nodejs && typeof inline.source === 'string') {
      const problem = nodeHandlerProblem(inline.source);
      if (problem) report.add('nodeHandlerMain', 'spec.source.inline.source', `Invalid value: ${text(abbreviate(inline.source))}: ${problem}`);
    }
    if (facts.buildsImages) {
      checkInlineSizeInConfigMap(inline.source, dependencies, nodejs, report);
    } else {
      checkInlineSizeInEnv(inline.source, dependencies, report);
    }
  }
  if (isObject(gitRepository)) {
    const { url, auth } = gitRepository;
    if (typeof url === 'string' && !isGitUrl(url)) {
      report.add('gitUrl', 'spec.source.gitRepository.url', `Invalid value: ${text(url)}: must be an absolute URL (https://, http://, ssh://, git://) or an SSH address such as git@github.com:org/repo.git`);
    }
    if (isObject(auth)) checkObjectName('spec.source.gitRepository.auth.secretName', auth.secretName, 'Secret', report, true);
  }
}

/** 1.11.1: source and dependencies share the ConfigMap the controller stores them in for the build. */
function checkInlineSizeInConfigMap(source: unknown, dependencies: unknown, nodejs: boolean, report: RuleReport): void {
  // What the controller stores: blank Node.js dependencies become `{}` (and defaulting writes that).
  // Within the limit at 3 bytes per UTF-16 code unit, the most one takes, the bytes are within it: not counted.
  if (3 * (utf16Units(source) + Math.max(utf16Units(dependencies), EMPTY_NODE_DEPENDENCIES.length)) <= INLINE_SOURCE_MAX_BYTES) return;
  const blankNodeDependencies = nodejs
    && (dependencies === undefined || dependencies === null || (typeof dependencies === 'string' && dependencies.trim() === ''));
  const bytes = utf8Bytes(source) + (blankNodeDependencies ? utf8Bytes(EMPTY_NODE_DEPENDENCIES) : utf8Bytes(dependencies));
  if (bytes > INLINE_SOURCE_MAX_BYTES) {
    report.add('inlineSourceSize', 'spec.source.inline', `Too long: source and dependencies take ${bytes} bytes; at most ${INLINE_SOURCE_MAX_BYTES} fit in the ConfigMap the controller stores them in`);
  }
}

/** 1.13.0: source and dependencies each travel, as they are, in an environment variable of the Function's container. */
function checkInlineSizeInEnv(source: unknown, dependencies: unknown, report: RuleReport): void {
  // Within the limits at 3 bytes per UTF-16 code unit, the most one takes, the bytes are within them: not counted.
  if (3 * utf16Units(source) <= INLINE_SOURCE_ENV_MAX_BYTES && 3 * utf16Units(dependencies) <= INLINE_DEPENDENCIES_ENV_MAX_BYTES) return;
  for (const [field, value, variable] of [['source', source, INLINE_SOURCE_ENV.source], ['dependencies', dependencies, INLINE_SOURCE_ENV.dependencies]] as const) {
    const bytes = utf8Bytes(value);
    const most = envValueMaxBytes(variable);
    if (bytes > most) {
      const [takes, it] = field === 'source' ? ['takes', 'it'] : ['take', 'them'];
      report.add('inlineSourceSize', `spec.source.inline.${field}`, `Too long: the ${field} ${takes} ${bytes} bytes; at most ${most} fit in the environment variable ${variable} the controller passes ${it} in (Linux refuses to start a container with a variable over 128 KiB)`);
    }
  }
}

function abbreviate(value: string): string {
  return value.length > 40 ? `${value.slice(0, 37)}...` : value;
}

/** The answers of {@link packageJsonProblem} by text: a folder of Functions often shares one package.json. */
const packageJsonProblems = new Map<string, string | undefined>();
/** The longest text, and the most texts, {@link packageJsonProblems} keeps. */
const PACKAGE_JSON_MEMO = { maxChars: 4096, maxEntries: 1000 } as const;

/** Why a text is not a package.json, or `undefined` when it is one: found once per text. */
function packageJsonProblem(dependencies: string): string | undefined {
  const known = packageJsonProblems.get(dependencies);
  if (known !== undefined || packageJsonProblems.has(dependencies)) return known;
  const problem = readPackageJson(dependencies);
  if (dependencies.length <= PACKAGE_JSON_MEMO.maxChars && packageJsonProblems.size < PACKAGE_JSON_MEMO.maxEntries) packageJsonProblems.set(dependencies, problem);
  return problem;
}

function readPackageJson(dependencies: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(dependencies);
  } catch (e) {
    // One line: JSON.parse quotes the text it could not read, line breaks and all.
    return `it is not JSON (${(e as Error).message.replace(/\s+/g, ' ')})`;
  }
  return isObject(parsed) ? undefined : `it is JSON, but not an object`;
}

function checkLabels(labels: unknown, report: RuleReport): void {
  if (!isObject(labels)) return;
  for (const [key, value] of Object.entries(labels)) {
    for (const problem of qualifiedNameProblems(key)) {
      report.add('labelSyntax', 'spec.labels', `Invalid value: ${text(key)}: ${problem}`);
    }
    if (typeof value === 'string' && !isLabelValue(value)) {
      report.add('labelSyntax', `spec.labels.${key}`, `Invalid value: ${text(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63 characters`);
    }
  }
}

function checkAnnotations(annotations: unknown, report: RuleReport): void {
  if (!isObject(annotations)) return;
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations)) {
    // Like the API server, which checks annotation keys in lower case.
    for (const problem of qualifiedNameProblems(key.toLowerCase())) {
      report.add('annotationSyntax', 'spec.annotations', `Invalid value: ${text(key)}: ${problem}`);
    }
    bytes += utf8Bytes(key) + utf8Bytes(value);
  }
  if (bytes > ANNOTATIONS_MAX_BYTES) {
    report.add('annotationSyntax', 'spec.annotations', `Too long: must have at most ${ANNOTATIONS_MAX_BYTES} bytes (they take ${bytes})`);
  }
}

function amountOf(value: unknown): number | undefined {
  return typeof value === 'string' || typeof value === 'number' ? parseQuantity(value) : undefined;
}

function checkResources(block: unknown, path: string, what: 'Function' | 'build', minimum: MinimumRequest, report: RuleReport): void {
  if (!isObject(block) || !isObject(block.resources)) return;
  const requests = isObject(block.resources.requests) ? block.resources.requests : {};
  const limits = isObject(block.resources.limits) ? block.resources.limits : {};
  // Requests above limits: the API server rejects such a container, whatever the resource.
  for (const [resource, request] of Object.entries(requests)) {
    const [req, lim] = [amountOf(request), amountOf(limits[resource])];
    if (req !== undefined && lim !== undefined && req > lim) {
      report.add('requestsWithinLimits', `${path}.resources.requests.${resource}`, `Invalid value: ${text(request)}: must be less than or equal to ${resource} limit of ${String(limits[resource])}`);
    }
  }
  const minimumRule = what === 'Function' ? 'functionMinimum' : 'buildMinimum';
  const least = { cpu: parseQuantity(minimum.cpu)!, memory: parseQuantity(minimum.memory)! };
  for (const resource of ['cpu', 'memory'] as const) {
    for (const [kind, map] of [['requests', requests], ['limits', limits]] as const) {
      const amount = amountOf(map[resource]);
      // With a little slack, so that 0.01 and 10m compare equal despite floating point.
      if (amount !== undefined && amount < least[resource] * (1 - 1e-9)) {
        report.add(minimumRule, `${path}.resources.${kind}.${resource}`, `Invalid value: ${text(map[resource])}: must be at least ${minimum[resource]}, the smallest ${resource} the Function Controller accepts for a ${what} container`);
      }
    }
  }
}

/** The newest runtime of a release in the same language as a retired one, to move to. */
function successor(runtime: string, facts: ReleaseFacts): string | undefined {
  const family = runtimeFamily(runtime);
  return [...facts.runtimes].reverse().find(r => runtimeFamily(r) === family && !facts.deprecatedRuntimes[r]);
}

/**
 * Explains an unknown field that a later release's CRD has: 1.11.1 has no security contexts.
 * Replaces the schema's `unknown field` with the reason and the fix.
 */
function explainLaterFields(facts: ReleaseFacts, report: RuleReport): void {
  if (facts.securityContexts || !report.violations.length) return;
  report.explain(v => {
    const field = v.rule === 'openapi.additionalProperties' && v.path === 'spec' ? /^unknown field "((container|pod)SecurityContext)"$/.exec(v.message)?.[1] : undefined;
    return field === undefined ? undefined : {
      rule: 'securityContextRelease',
      path: `spec.${field}`,
      message: `unknown field "${field}": the Function CRD of release ${facts.release} has no such field; security contexts need release ${RELEASES.filter(r => releaseFacts(r).securityContexts).join(' or ')}`,
    };
  });
}

/** Refuses what the release accepts but ignores: build resources and `scaleConfig`, where nothing is built. */
function checkIgnoredFields(spec: { [key: string]: unknown }, facts: ReleaseFacts, report: RuleReport): void {
  if (facts.buildsImages) return;
  const resources = spec.resourceConfiguration;
  if (isObject(resources) && resources.build !== undefined && resources.build !== null) {
    report.add('buildResources', 'spec.resourceConfiguration.build', `Forbidden: ${facts.release} builds nothing; the controller ignores build resources; remove buildResources`);
  }
  if (spec.scaleConfig !== undefined && spec.scaleConfig !== null) {
    report.add('scaleConfig', 'spec.scaleConfig', `Forbidden: the ${facts.release} controller creates no HPA and ignores scaleConfig; KymaFunction's \`scale\` writes a HorizontalPodAutoscaler on the Function's scale subresource, or write one yourself`);
  }
}

/**
 * Checks a Function object against every rule of the Function API in a release: the CRD's schema
 * and CEL rules, the Function Controller's checks, and the rules that keep it from failing later
 * or from doing less than it says.
 *
 * @param object a Function as JSON (`apiVersion`, `kind`, `metadata`, `spec`)
 * @param options the stack's release and minimum requests
 * @returns every violation, in a stable order (schema first, then the other rules by field);
 * empty when the cluster would accept and run the Function
 */
export function validateFunction(object: unknown, options: FunctionRuleOptions = {}): Violation[] {
  return validateFunctionBounded(object, options).violations;
}

/**
 * {@link validateFunction}, describing at most `options.maxViolations` violations and counting
 * the rest: what the webhook answers with, whatever size the Function is.
 *
 * @param object a Function as JSON
 * @param options the stack's release and minimum requests, and the most violations to describe
 * @returns the first violations and the count of the others
 */
export function validateFunctionBounded(object: unknown, options: FunctionRuleOptions = {}): BoundedViolations {
  const release = options.release ?? DEFAULT_RELEASE;
  const facts = releaseFacts(release);
  const report = new RuleReport(FUNCTION_RULES, options.maxViolations);
  // First, and alone: every later check walks the object, some recursively.
  const tooLarge = functionShapeProblem(object);
  if (tooLarge) {
    report.add('functionShape', '', `${FUNCTION_KIND} ${tooLarge}`);
    return bounded(report);
  }
  report.addSchemaViolations(functionSchemaValidator(release, options.celRules ?? true), object, functionCelRules(release));
  explainLaterFields(facts, report);
  if (!isObject(object)) return bounded(report);
  checkMetadata(object.metadata, report);
  const spec = object.spec;
  if (!isObject(spec)) return bounded(report);
  checkEnv(spec.env, facts, report);
  checkSecretMounts(spec.secretMounts, report);
  checkSource(spec.source, spec.runtime, facts, report);
  checkLabels(spec.labels, report);
  checkAnnotations(spec.annotations, report);
  if (isObject(spec.resourceConfiguration)) {
    const { function: fn, build } = spec.resourceConfiguration;
    checkResources(fn, 'spec.resourceConfiguration.function', 'Function', options.functionMinRequest ?? FUNCTION_MIN_REQUEST, report);
    // Where nothing is built, build resources are refused as a whole (below).
    if (facts.buildsImages) checkResources(build, 'spec.resourceConfiguration.build', 'build', options.buildMinRequest ?? BUILD_MIN_REQUEST, report);
  }
  // The controller treats an empty override as none.
  if (typeof spec.runtimeImageOverride === 'string' && spec.runtimeImageOverride !== '' && !isImageReference(spec.runtimeImageOverride)) {
    report.add('runtimeImageOverride', 'spec.runtimeImageOverride', `Invalid value: ${text(spec.runtimeImageOverride)}: must be a container image reference such as registry.example.com/team/node:22`);
  }
  checkIgnoredFields(spec, facts, report);
  return bounded(report);
}

/**
 * What a release accepts and runs today but upstream has retired: a Function on a runtime past its
 * end of life. Never a reason to refuse a Function: the webhook returns these as admission warnings.
 *
 * @param object a Function as JSON
 * @param options the stack's release
 * @returns one warning per retired thing the Function uses (rule `deprecatedRuntime`); none under 1.11.1
 */
export function functionWarnings(object: unknown, options: Pick<FunctionRuleOptions, 'release'> = {}): Violation[] {
  const facts = releaseFacts(options.release ?? DEFAULT_RELEASE);
  if (!isObject(object) || !isObject(object.spec)) return [];
  // Made for a warning: most Functions have none.
  let report: RuleReport | undefined;
  const runtime = object.spec.runtime;
  const endOfLife = typeof runtime === 'string' ? facts.deprecatedRuntimes[runtime] : undefined;
  if (typeof runtime === 'string' && endOfLife && facts.runtimes.includes(runtime as never)) {
    const next = successor(runtime, facts);
    (report ??= new RuleReport(FUNCTION_WARNINGS)).add('deprecatedRuntime', 'spec.runtime', `Deprecated: ${text(runtime)} reached its end of life in ${endOfLife}; release ${facts.release} still runs it${next ? `, move to ${next}` : ''}`);
  }
  const bytes = lastAppliedBytesAbove(object, ANNOTATIONS_MAX_BYTES);
  if (bytes !== undefined) {
    const inline = isObject(object.spec.source) && isObject(object.spec.source.inline) ? object.spec.source.inline : undefined;
    const source = inline ? ` (its inline source and dependencies take ${utf8Bytes(inline.source) + utf8Bytes(inline.dependencies)})` : '';
    (report ??= new RuleReport(FUNCTION_WARNINGS)).add('clientSideApplySize', '', `Too large for client-side apply: the Function takes ${bytes} bytes as JSON${source}, and client-side `
      + `kubectl apply copies it into the annotation ${LAST_APPLIED_ANNOTATION}, which the API server refuses above ${ANNOTATIONS_MAX_BYTES} bytes of annotations`);
  }
  return report ? report.violations : [];
}

/**
 * What the annotations of a Function take when client-side `kubectl apply` adds the object, as
 * JSON, to them, when that is more than a limit. The object is written as JSON only when a bound
 * of its size ({@link jsonBytesWithin}) does not show it within the limit already: a Function of
 * a few KiB is not written to be measured.
 *
 * @returns the bytes, when above the limit; undefined when within it, or for an object too deeply
 * nested to write as JSON (which the rules refuse anyway)
 */
function lastAppliedBytesAbove(object: { [key: string]: unknown }, limit: number): number | undefined {
  // The object with the annotation left out is no larger than the object: within the limit with the key's bytes, the object fits.
  if (jsonBytesWithin(object, limit - LAST_APPLIED_ANNOTATION_BYTES - annotationBytesBound(object))) return undefined;
  const bytes = lastAppliedBytes(object);
  return bytes !== undefined && bytes > limit ? bytes : undefined;
}

/** The bytes of {@link LAST_APPLIED_ANNOTATION} in UTF-8. */
const LAST_APPLIED_ANNOTATION_BYTES = Buffer.byteLength(LAST_APPLIED_ANNOTATION, 'utf8');

/**
 * At least the bytes of the keys and string values of a Function's annotations, less the last-applied
 * one, in UTF-8: a UTF-16 code unit takes at most 3 bytes, so three times the length is a bound
 * found without encoding them (enough for a budget: a Function of a few KiB fits whatever the bound).
 */
function annotationBytesBound(object: { [key: string]: unknown }): number {
  const metadata = object.metadata;
  if (!isObject(metadata) || !isObject(metadata.annotations)) return 0;
  const annotations = metadata.annotations;
  let units = 0;
  for (const key of Object.keys(annotations)) {
    if (key === LAST_APPLIED_ANNOTATION) continue;
    const value = annotations[key];
    units += key.length + (typeof value === 'string' ? value.length : 0);
  }
  return 3 * units;
}

/** How deep {@link jsonBytesWithin} walks before it leaves the answer to `JSON.stringify`. */
const BOUND_DEPTH = 32;

/**
 * Whether a plain JSON value surely takes at most `budget` bytes as `JSON.stringify` writes it
 * in UTF-8, from a bound walked without writing it: a character takes at most 6 bytes (`\u001f`),
 * a number at most 24 characters. False when the bound is above the budget, or for anything but
 * plain JSON data (the caller writes it then).
 */
function jsonBytesWithin(value: unknown, budget: number): boolean {
  return jsonBytesBound(value, 0, budget) <= budget;
}

/** The bound of {@link jsonBytesWithin}, walked until it passes the budget; `Infinity` for anything but plain JSON data. */
function jsonBytesBound(value: unknown, depth: number, budget: number): number {
  switch (typeof value) {
    case 'string':
      return 2 + 6 * value.length;
    case 'number':
      return 24;
    case 'boolean':
    case 'undefined':
    case 'function':
      return 5;
    case 'object': {
      if (value === null) return 5;
      if (depth > BOUND_DEPTH) return Infinity;
      let bound = 2;
      // A string, the commonest value, is bounded here rather than by a call.
      if (Array.isArray(value)) {
        bound += value.length;
        for (let i = 0; i < value.length && bound <= budget; i++) {
          const item: unknown = value[i];
          bound += typeof item === 'string' ? 2 + 6 * item.length : jsonBytesBound(item, depth + 1, budget - bound);
        }
        return bound;
      }
      const prototype = Object.getPrototypeOf(value);
      if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return Infinity;
      // Inherited keys, if any, only add to the bound.
      for (const key in value) {
        const field = (value as { [key: string]: unknown })[key];
        bound += 4 + 6 * key.length + (typeof field === 'string' ? 2 + 6 * field.length : jsonBytesBound(field, depth + 1, budget - bound));
        if (bound > budget) return bound;
      }
      return bound;
    }
    default:
      return Infinity;
  }
}

/**
 * What the annotations of a Function take when client-side `kubectl apply` adds the object, as JSON, to them.
 *
 * @returns the bytes, or undefined for an object too deeply nested to write as JSON (which the rules refuse anyway)
 */
function lastAppliedBytes(object: { [key: string]: unknown }): number | undefined {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
  const others = Object.entries(annotations).filter(([key]) => key !== LAST_APPLIED_ANNOTATION)
    .reduce((sum, [key, value]) => sum + utf8Bytes(key) + utf8Bytes(value), 0);
  // The object as kubectl sends it, without the annotation itself.
  const kept = Object.fromEntries(Object.entries(annotations).filter(([key]) => key !== LAST_APPLIED_ANNOTATION));
  const applied = { ...object, metadata: { ...metadata, ...(Object.keys(annotations).length ? { annotations: kept } : {}) } };
  let json: string;
  try {
    json = JSON.stringify(applied);
  } catch {
    return undefined;
  }
  return others + utf8Bytes(LAST_APPLIED_ANNOTATION) + utf8Bytes(json);
}

/** A Service of a folder of manifests that has the name of a Function in its namespace. */
export interface FunctionServiceClash {
  /** The index of the Function among the objects. */
  readonly function: number;
  /** The index of the Service. */
  readonly service: number;
}

/**
 * Finds Services that take the name of a Function of the same namespace. The controller names each
 * Function's Service after the Function and fails it (`ServiceFailed`: the Service already exists)
 * when another Service has that name, such as a traffic split named after one of its Functions.
 *
 * @param objects the objects of one folder of manifests
 * @returns each clash, in the order of the Services
 */
export function functionServiceClashes(objects: readonly unknown[]): FunctionServiceClash[] {
  const named = (o: { [key: string]: unknown }): [string, string] => {
    const metadata = isObject(o.metadata) ? o.metadata : {};
    return [String(metadata.namespace), String(metadata.name)];
  };
  const isFunction = (o: unknown): o is { [key: string]: unknown } => isObject(o) && o.apiVersion === FUNCTION_API_VERSION
    && o.kind === FUNCTION_KIND;
  const isService = (o: unknown): o is { [key: string]: unknown } => isObject(o) && o.apiVersion === 'v1' && o.kind === 'Service';
  // The Services first (a folder has few), by namespace and name; then the Functions that have a Service's.
  const services: Array<{ readonly index: number; readonly namespace: string; readonly name: string }> = [];
  const serviceNames = new Map<string, Set<string>>();
  objects.forEach((o, index) => {
    if (!isService(o)) return;
    const [namespace, name] = named(o);
    services.push({ index, namespace, name });
    serviceNames.set(namespace, (serviceNames.get(namespace) ?? new Set<string>()).add(name));
  });
  if (!services.length) return [];
  // The last Function of each namespace and name; the key `namespace/name` when a '/' makes two pairs one key.
  // A '/' in a Service's namespace or name can: the key `a/b/c` is both `a`, `b/c` and `a/b`, `c`. Without one,
  // a Service's key has one '/', so a Function whose namespace or name has one matches none by key either:
  // pairs compare as keys do.
  const functions = new Map<string, Map<string, number>>();
  const slashed = services.some(s => s.namespace.includes('/') || s.name.includes('/'));
  for (let index = 0; index < objects.length && !slashed; index++) {
    const o = objects[index];
    if (!isFunction(o)) continue;
    const metadata = isObject(o.metadata) ? o.metadata : {};
    const namespace = String(metadata.namespace);
    const name = String(metadata.name);
    if (serviceNames.get(namespace)?.has(name)) functions.set(namespace, (functions.get(namespace) ?? new Map<string, number>()).set(name, index));
  }
  if (slashed) {
    const byKey = new Map<string, number>();
    objects.forEach((o, index) => {
      if (isFunction(o)) byKey.set(named(o).join('/'), index);
    });
    return services.flatMap(s => {
      const fn = byKey.get(`${s.namespace}/${s.name}`);
      return fn === undefined ? [] : [{ function: fn, service: s.index }];
    });
  }
  return services.flatMap(s => {
    const fn = functions.get(s.namespace)?.get(s.name);
    return fn === undefined ? [] : [{ function: fn, service: s.index }];
  });
}
