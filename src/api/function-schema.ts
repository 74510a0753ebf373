/**
 * The Function API (`serverless.kyma-project.io/v1alpha2`) as one typed schema per release.
 *
 * This is the single source of truth for the shape of a Function: the CRD we synthesize is
 * generated from it, and the validator used at synth, by the webhook and by the command line
 * compiles it. Field paths, types, enums, bounds, defaults and CEL rules are those of the
 * Function CRD that the chosen Kyma Serverless release ships (1.11.1 or 1.13.0), plus two
 * defaults of ours (see controller-fixed-point.ts); the descriptions are ours. What both
 * releases share is written once; `releaseFacts()` says where they differ.
 */
import { containerSecurityContextSchema, podSecurityContextSchema } from './_security-context-schema';
import { FIELD_REF_API_VERSION, RESOURCE_FIELD_REF_DIVISOR } from './controller-fixed-point';
import { FUNCTION_PROFILES, BUILD_PROFILES } from './profiles';
import { DEFAULT_RELEASE, ReleaseFacts, ServerlessRelease, releaseFacts } from './release';
import {
  JsonSchemaProps, ValidationRule, array, boolean, integer, mapOf, object, opaqueObject, quantity, string,
} from './schema';

/** The API group of Functions. */
export const FUNCTION_GROUP = 'serverless.kyma-project.io';
/** The only served and stored version. */
export const FUNCTION_VERSION = 'v1alpha2';
/** `apiVersion` of a Function object. */
export const FUNCTION_API_VERSION = `${FUNCTION_GROUP}/${FUNCTION_VERSION}`;
/** `kind` of a Function object. */
export const FUNCTION_KIND = 'Function';
/** The reserved prefix of labels and annotations: the controller owns these keys. */
export const RESERVED_KEY_PREFIX = 'serverless.kyma-project.io/';

/** Renders `['a','b']` the way the CRD's CEL rules and messages spell lists. */
function celList(values: readonly string[]): string {
  return `[${values.map(v => `'${v}'`).join(',')}]`;
}

/** The CEL rules every release's Function CRD has, by the node they sit on. */
const SHARED_RULES = {
  /** On `spec.source`. */
  sourceOneOf: {
    rule: 'has(self.gitRepository) && !has(self.inline) || !has(self.gitRepository) && has(self.inline)',
    message: 'Use GitRepository or Inline source',
  },
  /** On `spec.source.gitRepository`. */
  gitBaseDir: {
    rule: 'has(self.baseDir) && (self.baseDir.trim().size() != 0)',
    message: 'BaseDir is required and cannot be empty',
  },
  /** On `spec.source.gitRepository`. */
  gitReference: {
    rule: 'has(self.reference) && (self.reference.trim().size() != 0)',
    message: 'Reference is required and cannot be empty',
  },
  /** On `spec.source.gitRepository.auth.secretName`. */
  gitAuthSecretName: {
    rule: 'self.trim().size() != 0',
    message: 'SecretName is required and cannot be empty',
  },
  /** On `spec.resourceConfiguration.function` and `.build`. */
  profileOrResources: {
    rule: 'has(self.profile) && !has(self.resources) || !has(self.profile) && has(self.resources)',
    message: 'Use profile or resources',
  },
  /** On `spec.resourceConfiguration.function`. */
  functionProfile: {
    rule: `(!has(self.profile) || self.profile in ${celList(FUNCTION_PROFILES)})`,
    message: `Invalid profile, please use one of: ${celList(FUNCTION_PROFILES)}`,
  },
  /** On `spec.resourceConfiguration.build`. */
  buildProfile: {
    rule: `(!has(self.profile) || self.profile in ${celList(BUILD_PROFILES)})`,
    message: `Invalid profile, please use one of: ${celList(BUILD_PROFILES)}`,
  },
  /** On `spec.template`. */
  templateUnsupported: {
    rule: '!has(self.labels) && !has(self.annotations)',
    message: 'Not supported: Use spec.labels and spec.annotations to label and/or annotate Function\'s Pods.',
  },
  /** On `spec.labels`. */
  labelsPrefix: {
    rule: `!(self.exists(e, e.startsWith('${RESERVED_KEY_PREFIX}')))`,
    message: `Labels has key starting with ${RESERVED_KEY_PREFIX} which is not allowed`,
  },
  /**
   * On `spec.labels`. On a map `self.all` ranges over the keys, so despite its message this
   * rule bounds the length of label keys, not values; we keep it as upstream wrote it.
   */
  labelsLength: {
    rule: 'self.all(e, size(e)<64)',
    message: 'Label value cannot be longer than 63',
  },
  /** On `spec.annotations`. */
  annotationsPrefix: {
    rule: `!(self.exists(e, e.startsWith('${RESERVED_KEY_PREFIX}')))`,
    message: `Annotations has key starting with ${RESERVED_KEY_PREFIX} which is not allowed`,
  },
} satisfies Record<string, ValidationRule>;

/** On `spec.env`: the environment variable names the release's controller sets itself. */
function reservedEnvsRule(facts: ReleaseFacts): ValidationRule {
  return {
    rule: `(self.all(e, !(e.name in ${celList(facts.reservedEnvNames)})))`,
    message: `Following envs are reserved and cannot be used: ${celList(facts.reservedEnvNames)}`,
  };
}

/** On `spec.annotations`: the annotation keys the release's controller writes into the Pod itself. */
function reservedAnnotationsRule(facts: ReleaseFacts): ValidationRule {
  const keys = facts.reservedAnnotations;
  return keys.length === 1
    ? { rule: `!(self.exists(e, e=='${keys[0]}'))`, message: `Annotations has key ${keys[0]} which is not allowed` }
    : { rule: `!(self.exists(e, e in ${celList(keys)}))`, message: `Annotations has keys ${celList(keys)} which are not allowed` };
}

const V1_11_1_FACTS = releaseFacts(ServerlessRelease.V1_11_1);
const V1_13_0_FACTS = releaseFacts(ServerlessRelease.V1_13_0);

/**
 * The CEL rules of 1.11.1's Function CRD, by the node they sit on. Their expressions and messages
 * are exactly upstream's, because clients match on the messages the API server returns.
 *
 * @see functionCelRules for the rules of another release
 */
export const FunctionRules = {
  ...SHARED_RULES,
  /** On `spec.env`. */
  reservedEnvs: reservedEnvsRule(V1_11_1_FACTS),
  /** On `spec.scaleConfig` (1.11.1 only: 1.13.0 creates no HorizontalPodAutoscaler and dropped the rule). */
  minLessOrEqualMax: {
    rule: 'self.minReplicas <= self.maxReplicas',
    message: 'minReplicas should be less than or equal maxReplicas',
  },
} satisfies Record<string, ValidationRule>;

/**
 * The CEL rules of 1.13.0's Function CRD, by the node they sit on: 1.11.1's without
 * `minLessOrEqualMax`, with more reserved env names, and with the `proxy.istio.io/config` annotation refused.
 */
export const FunctionRulesV1_13_0 = {
  ...SHARED_RULES,
  /** On `spec.env`. */
  reservedEnvs: reservedEnvsRule(V1_13_0_FACTS),
  /** On `spec.annotations` (1.13.0 only: its controller writes the Pod's Istio proxy configuration). */
  annotationsReservedKey: reservedAnnotationsRule(V1_13_0_FACTS),
} satisfies Record<string, ValidationRule>;

/** The id of a CEL rule of some release's Function CRD (a key of `FunctionRules` or `FunctionRulesV1_13_0`). */
export type FunctionCelRuleId = keyof typeof FunctionRules | keyof typeof FunctionRulesV1_13_0;

/** The CEL rules of one release's Function CRD, by id. */
export type FunctionCelRules = { readonly [id in FunctionCelRuleId]?: ValidationRule };

const CEL_RULES: { readonly [R in ServerlessRelease]: FunctionCelRules } = {
  [ServerlessRelease.V1_11_1]: FunctionRules,
  [ServerlessRelease.V1_13_0]: FunctionRulesV1_13_0,
};

/**
 * The CEL rules of a release's Function CRD, by id: what `validateFunction` names a broken rule after.
 *
 * @param release the release
 * @returns its rules; a rule both releases have is the same object in both
 */
export function functionCelRules(release: ServerlessRelease = DEFAULT_RELEASE): FunctionCelRules {
  return CEL_RULES[release];
}

/** A `LocalObjectReference`-style key selector (`configMapKeyRef`, `secretKeyRef`). */
function keySelector(kind: string): JsonSchemaProps {
  return object({
    key: string({ description: `The key of the ${kind} to select.` }),
    name: string({ default: '', description: `Name of the ${kind} in the Function's namespace.` }),
    optional: boolean({ description: `Whether the ${kind} or its key may be missing.` }),
  }, { required: ['key'], mapType: 'atomic', description: `Selects a key of a ${kind}.` });
}

/** The schema of one Kubernetes `EnvVar`, as the Function's `env` holds them. */
function envVar(): JsonSchemaProps {
  return object({
    name: string({ description: 'Name of the environment variable.' }),
    value: string({ description: 'Value of the variable; `$(VAR)` references other variables, `$$` escapes.' }),
    valueFrom: object({
      configMapKeyRef: keySelector('ConfigMap'),
      fieldRef: object({
        // A default beyond upstream's CRD: the API server then stores Functions as the 1.11.1
        // controller needs them, even without the webhook (see controller-fixed-point.ts).
        apiVersion: string({ default: FIELD_REF_API_VERSION, description: 'Version of the schema `fieldPath` is written in; defaults to "v1".' }),
        fieldPath: string({ description: 'Path of the Pod field to select, such as `metadata.name`.' }),
      }, { required: ['fieldPath'], mapType: 'atomic', description: 'Selects a field of the Pod.' }),
      fileKeyRef: object({
        key: string({ description: 'The key within the env file.' }),
        optional: boolean({ default: false, description: 'Whether the file or its key may be missing.' }),
        path: string({ description: 'Relative path of the env file within the volume.' }),
        volumeName: string({ description: 'Name of the volume mount that holds the env file.' }),
      }, {
        required: ['key', 'path', 'volumeName'],
        mapType: 'atomic',
        description: 'Selects a key of an env file (Kubernetes EnvFiles feature gate).',
      }),
      resourceFieldRef: object({
        containerName: string({ description: 'Container name; optional for env vars.' }),
        // Defaulted beyond upstream's CRD, like fieldRef.apiVersion (see controller-fixed-point.ts).
        divisor: quantity({ default: RESOURCE_FIELD_REF_DIVISOR, description: 'Unit the value is expressed in; defaults to "1".' }),
        resource: string({ description: 'Resource to select, such as `limits.cpu`.' }),
      }, { required: ['resource'], mapType: 'atomic', description: 'Selects a resource request or limit of the container.' }),
      secretKeyRef: keySelector('Secret'),
    }, { description: 'Source of the value; cannot be used together with a non-empty `value`.' }),
  }, { required: ['name'], description: 'An environment variable of the Function container.' });
}

/** The schema of a Kubernetes `ResourceRequirements`. */
function resourceRequirements(description: string): JsonSchemaProps {
  return object({
    claims: array(object({
      name: string({ description: 'Name of an entry of the Pod\'s `resourceClaims`.' }),
      request: string({ description: 'Name of a request in the referenced claim; empty means the whole claim.' }),
    }, { required: ['name'], description: 'A resource claim the container uses.' }), {
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Dynamic resource claims the container uses (DynamicResourceAllocation feature gate).',
    }),
    limits: mapOf(quantity(), { description: 'The most compute resources the container may use.' }),
    requests: mapOf(quantity(), { description: 'The compute resources the container is guaranteed.' }),
  }, { description });
}

/** `resourceConfiguration.function` or `.build`: a preset name, or explicit resources. */
function resourceBlock(what: string, profileRule: ValidationRule, deprecated: boolean): JsonSchemaProps {
  return object({
    profile: string({ description: 'Name of a resource preset of the stack. Cannot be used together with `resources`.' }),
    resources: resourceRequirements('Explicit requests and limits. Cannot be used together with `profile`.'),
  }, {
    description: `${deprecated ? 'Deprecated: ' : ''}Resources of ${what}.`,
    validations: [FunctionRules.profileOrResources, profileRule],
  });
}

/** The `description` of `spec.runtime`: the release's runtimes, the retired ones marked. */
function runtimeDescription(facts: ReleaseFacts): string {
  const names = facts.runtimes.map(r => `\`${r}\`${facts.deprecatedRuntimes[r] ? ' (deprecated)' : ''}`);
  return `The runtime of the Function: one of ${names.join(', ')}.`;
}

function functionSpec(facts: ReleaseFacts, rules: FunctionCelRules): JsonSchemaProps {
  const validations = (...ids: FunctionCelRuleId[]) => ids.flatMap(id => (rules[id] ? [rules[id]] : []));
  return object({
    annotations: mapOf(string(), {
      description: 'Annotations added to the Function\'s Pods.',
      validations: validations('annotationsPrefix', 'annotationsReservedKey'),
    }),
    ...(facts.securityContexts ? {
      containerSecurityContext: containerSecurityContextSchema(
        'The security context of the Function\'s container; the controller fills in what is left out with its own '
        + '(not privileged, all capabilities dropped, read-only root filesystem, no privilege escalation, not root).'),
    } : {}),
    env: array(envVar(), {
      description: 'Environment variables of the Function container: plain values, or references to ConfigMaps, Secrets and Pod fields.',
      validations: validations('reservedEnvs'),
    }),
    labels: mapOf(string(), {
      description: 'Labels added to the Function\'s Pods.',
      validations: validations('labelsPrefix', 'labelsLength'),
    }),
    ...(facts.securityContexts ? {
      podSecurityContext: podSecurityContextSchema(
        'The security context of the Function\'s Pod; the controller fills in what is left out with its own '
        + '(user, group and fsGroup 1000, supplemental group 1000, seccomp profile RuntimeDefault).'),
    } : {}),
    replicas: integer({
      default: 1,
      format: 'int32',
      minimum: 0,
      description: 'How many Pods of the Function run. With `scaleConfig`, or an external autoscaler, the autoscaler sets it.',
    }),
    resourceConfiguration: object({
      build: facts.buildsImages
        ? resourceBlock('the build Job\'s Pod', rules.buildProfile!, true)
        : resourceBlock('a build Job, which this release never runs: ignored', rules.buildProfile!, true),
      function: resourceBlock('the Function\'s Pod', rules.functionProfile!, false),
    }, {
      description: facts.buildsImages ? 'Resources of the Function\'s Pods and of its build Job.' : 'Resources of the Function\'s Pods (`build` is ignored: nothing is built).',
    }),
    runtime: string({
      enum: facts.runtimes,
      description: runtimeDescription(facts),
    }),
    runtimeImageOverride: string({ description: 'A base image used instead of the runtime\'s default one.' }),
    scaleConfig: object({
      maxReplicas: integer({ format: 'int32', minimum: 1, description: 'The most Pods the autoscaler runs.' }),
      minReplicas: integer({ format: 'int32', minimum: 1, description: 'The fewest Pods the autoscaler runs.' }),
    }, {
      required: ['maxReplicas', 'minReplicas'],
      description: facts.buildsImages
        ? 'Deprecated: bounds of the CPU-based HorizontalPodAutoscaler the controller creates when they differ.'
        : 'Deprecated and ignored: the controller creates no HorizontalPodAutoscaler; point one at the Function\'s scale subresource instead.',
      validations: validations('minLessOrEqualMax'),
    }),
    secretMounts: array(object({
      mountPath: string({ minLength: 1, description: 'Where the Secret is mounted in the Function container.' }),
      secretName: string({ minLength: 1, maxLength: 253, description: 'Name of a Secret in the Function\'s namespace.' }),
    }, { required: ['mountPath', 'secretName'] }), { description: 'Secrets mounted read-only into the Function container.' }),
    source: object({
      gitRepository: object({
        auth: object({
          secretName: string({
            description: 'Name of the Secret, in the Function\'s namespace, that holds the Git credentials.',
            validations: validations('gitAuthSecretName'),
          }),
          type: string({ enum: ['basic', 'key'], description: '`basic` for a password or token, `key` for an SSH key.' }),
        }, { required: ['secretName', 'type'], description: 'How the controller authenticates to the repository.' }),
        baseDir: string({ description: 'Directory in the repository that holds the handler and its dependencies.' }),
        reference: string({ description: facts.buildsImages ? 'Branch, tag or commit to build from.' : 'Branch, tag or commit to run.' }),
        url: string({ description: 'URL of the Git repository: `http(s)://`, `git://` or `ssh://` (or `git@host:`).' }),
      }, {
        required: ['url'],
        description: 'Source fetched from a Git repository. Cannot be used together with `inline`.',
        validations: validations('gitBaseDir', 'gitReference'),
      }),
      inline: object({
        dependencies: string({ description: 'The dependencies file: `package.json` for Node.js, `requirements.txt` for Python.' }),
        source: string({ minLength: 1, description: 'The handler\'s source code.' }),
      }, { required: ['source'], description: 'Source given inline. Cannot be used together with `gitRepository`.' }),
    }, { description: 'Where the Function\'s code comes from.', validations: validations('sourceOneOf') }),
    template: object({
      annotations: mapOf(string(), { description: 'Deprecated: use `spec.annotations`.' }),
      labels: mapOf(string(), { description: 'Deprecated: use `spec.labels`.' }),
    }, {
      description: 'Deprecated and rejected: use `spec.labels` and `spec.annotations`.',
      validations: validations('templateUnsupported'),
    }),
  }, { required: ['runtime', 'source'], description: 'The desired state of the Function.' });
}

/** 1.11.1's status: what the last build used. */
function buildStatus(): JsonSchemaProps {
  return object({
    baseDir: string({ description: 'The Git directory of the last build.' }),
    buildResourceProfile: string({ description: 'Deprecated: the build preset in use (`custom` for explicit resources).' }),
    commit: string({ description: 'The Git commit of the last build.' }),
    conditions: array(object({
      lastTransitionTime: string({ format: 'date-time', description: 'When the condition last changed status.' }),
      message: string({ description: 'Details of the last transition.' }),
      reason: string({ description: 'Why the condition last changed.' }),
      status: string({ description: '`True`, `False` or `Unknown`.' }),
      type: string({ description: '`ConfigurationReady`, `BuildReady` or `Running`.' }),
    }, { required: ['status'] }), { description: 'Progress of the Function through configuration, build and rollout.' }),
    functionResourceProfile: string({ description: 'The Function preset in use (`custom` for explicit resources).' }),
    podSelector: string({ description: 'Label selector of the Function\'s Pods (used by the scale subresource).' }),
    reference: string({ description: 'The Git reference of the last build.' }),
    replicas: integer({ format: 'int32', description: 'Pods of the Function that are not terminated.' }),
    runtime: string({ description: 'The runtime of the last build.' }),
    runtimeImage: string({ description: 'The base image of the last build.' }),
    runtimeImageOverride: string({ description: 'Deprecated: the base image override of the last build.' }),
  }, { description: 'The observed state of the Function, written by the controller.' });
}

/** 1.13.0's status: what the Function's Deployment runs, with Kubernetes' standard conditions. */
function buildlessStatus(): JsonSchemaProps {
  return object({
    baseDir: string({ description: 'Deprecated: the Git directory in use; see `gitRepository`.' }),
    commit: string({ description: 'Deprecated: the Git commit in use; see `gitRepository`.' }),
    conditions: array(object({
      lastTransitionTime: string({ format: 'date-time', description: 'When the condition last changed status.' }),
      message: string({ maxLength: 32768, description: 'Details of the last transition.' }),
      observedGeneration: integer({ format: 'int64', minimum: 0, description: 'The `metadata.generation` the condition was set for.' }),
      reason: string({
        maxLength: 1024,
        minLength: 1,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
        description: 'Why the condition last changed, in CamelCase.',
      }),
      status: string({ enum: ['True', 'False', 'Unknown'], description: '`True`, `False` or `Unknown`.' }),
      type: string({
        maxLength: 316,
        pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
        description: '`ConfigurationReady` or `Running`.',
      }),
    }, { required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'] }), { description: 'Progress of the Function through configuration and rollout.' }),
    containerSecurityContext: containerSecurityContextSchema('The security context the Function\'s container runs with.'),
    functionAnnotations: mapOf(string(), { description: 'The annotations last written into the Pod template.' }),
    functionResourceProfile: string({ description: 'The Function preset in use (`custom` for explicit resources).' }),
    gitRepository: object({
      baseDir: string({ description: 'The directory in the repository.' }),
      commit: string({ description: 'The commit the reference resolved to, which the Pods run.' }),
      reference: string({ description: 'The branch, tag or commit followed.' }),
      url: string({ description: 'The URL of the repository.' }),
    }, { required: ['url'], description: 'The Git source in use, for a Function from a Git repository.' }),
    observedGeneration: integer({ format: 'int64', description: 'The `metadata.generation` the controller last reconciled.' }),
    podSecurityContext: podSecurityContextSchema('The security context the Function\'s Pods run with.'),
    podSelector: string({ description: 'Label selector of the Function\'s Pods (used by the scale subresource).' }),
    reference: string({ description: 'Deprecated: the Git reference in use; see `gitRepository`.' }),
    replicas: integer({ format: 'int32', description: 'Pods of the Function that are not terminated.' }),
    runtime: string({ description: 'The runtime in use.' }),
    runtimeImage: string({ description: 'The image the Function\'s container runs.' }),
  }, { description: 'The observed state of the Function, written by the controller.' });
}

/**
 * The `openAPIV3Schema` of a release's Function CRD: upstream's fields, types, enums, bounds and
 * CEL rules of that release, and our defaults of `fieldRef.apiVersion` and `resourceFieldRef.divisor`.
 *
 * @param release the release whose CRD to describe
 * @returns a fresh schema (callers may change it)
 */
export function functionSchema(release: ServerlessRelease = DEFAULT_RELEASE): JsonSchemaProps {
  const facts = releaseFacts(release);
  return object({
    apiVersion: string({ description: 'Versioned schema of this object: `serverless.kyma-project.io/v1alpha2`.' }),
    kind: string({ description: 'Kind of this object: `Function`.' }),
    metadata: opaqueObject(),
    spec: functionSpec(facts, functionCelRules(release)),
    status: facts.buildsImages ? buildStatus() : buildlessStatus(),
  }, {
    required: ['metadata', 'spec'],
    description: facts.buildsImages
      ? 'A Function: source code and a runtime, which the Function Controller builds into an image and runs as a Deployment.'
      : 'A Function: source code and a runtime, which the Function Controller runs as a Deployment of the runtime\'s image.',
  });
}
