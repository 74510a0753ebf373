/**
 * The Function API (`serverless.kyma-project.io/v1alpha2`) as one typed schema.
 *
 * This is the single source of truth for the shape of a Function: the CRD we synthesize is
 * generated from it, and the validator used at synth, by the webhook and by the command line
 * compiles it. Field paths, types, enums, bounds, defaults and CEL rules are those of the
 * Function CRD that Kyma Serverless release 1.11.1 ships; the descriptions are ours.
 */
import { FIELD_REF_API_VERSION, RESOURCE_FIELD_REF_DIVISOR } from './controller-fixed-point';
import { FUNCTION_PROFILES, BUILD_PROFILES } from './profiles';
import { RESERVED_ENV_NAMES, RUNTIMES } from './runtimes';
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

/**
 * The CEL rules of the Function CRD, by the node they sit on. Their expressions and messages are
 * exactly upstream's, because clients match on the messages the API server returns.
 */
export const FunctionRules = {
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
  /** On `spec.env`. */
  reservedEnvs: {
    rule: `(self.all(e, !(e.name in ${celList(RESERVED_ENV_NAMES)})))`,
    message: `Following envs are reserved and cannot be used: ${celList(RESERVED_ENV_NAMES)}`,
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
  /** On `spec.scaleConfig`. */
  minLessOrEqualMax: {
    rule: 'self.minReplicas <= self.maxReplicas',
    message: 'minReplicas should be less than or equal maxReplicas',
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

function functionSpec(): JsonSchemaProps {
  return object({
    annotations: mapOf(string(), {
      description: 'Annotations added to the Function\'s Pods.',
      validations: [FunctionRules.annotationsPrefix],
    }),
    env: array(envVar(), {
      description: 'Environment variables of the Function container: plain values, or references to ConfigMaps, Secrets and Pod fields.',
      validations: [FunctionRules.reservedEnvs],
    }),
    labels: mapOf(string(), {
      description: 'Labels added to the Function\'s Pods.',
      validations: [FunctionRules.labelsPrefix, FunctionRules.labelsLength],
    }),
    replicas: integer({
      default: 1,
      format: 'int32',
      minimum: 0,
      description: 'How many Pods of the Function run. With `scaleConfig`, or an external autoscaler, the autoscaler sets it.',
    }),
    resourceConfiguration: object({
      build: resourceBlock('the build Job\'s Pod', FunctionRules.buildProfile, true),
      function: resourceBlock('the Function\'s Pod', FunctionRules.functionProfile, false),
    }, { description: 'Resources of the Function\'s Pods and of its build Job.' }),
    runtime: string({
      enum: RUNTIMES,
      description: `The runtime of the Function: one of ${RUNTIMES.map(r => `\`${r}\``).join(', ')}.`,
    }),
    runtimeImageOverride: string({ description: 'A base image used instead of the runtime\'s default one.' }),
    scaleConfig: object({
      maxReplicas: integer({ format: 'int32', minimum: 1, description: 'The most Pods the autoscaler runs.' }),
      minReplicas: integer({ format: 'int32', minimum: 1, description: 'The fewest Pods the autoscaler runs.' }),
    }, {
      required: ['maxReplicas', 'minReplicas'],
      description: 'Deprecated: bounds of the CPU-based HorizontalPodAutoscaler the controller creates when they differ.',
      validations: [FunctionRules.minLessOrEqualMax],
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
            validations: [FunctionRules.gitAuthSecretName],
          }),
          type: string({ enum: ['basic', 'key'], description: '`basic` for a password or token, `key` for an SSH key.' }),
        }, { required: ['secretName', 'type'], description: 'How the controller authenticates to the repository.' }),
        baseDir: string({ description: 'Directory in the repository that holds the handler and its dependencies.' }),
        reference: string({ description: 'Branch, tag or commit to build from.' }),
        url: string({ description: 'URL of the Git repository: `http(s)://`, `git://` or `ssh://` (or `git@host:`).' }),
      }, {
        required: ['url'],
        description: 'Source fetched from a Git repository. Cannot be used together with `inline`.',
        validations: [FunctionRules.gitBaseDir, FunctionRules.gitReference],
      }),
      inline: object({
        dependencies: string({ description: 'The dependencies file: `package.json` for Node.js, `requirements.txt` for Python.' }),
        source: string({ minLength: 1, description: 'The handler\'s source code.' }),
      }, { required: ['source'], description: 'Source given inline. Cannot be used together with `gitRepository`.' }),
    }, { description: 'Where the Function\'s code comes from.', validations: [FunctionRules.sourceOneOf] }),
    template: object({
      annotations: mapOf(string(), { description: 'Deprecated: use `spec.annotations`.' }),
      labels: mapOf(string(), { description: 'Deprecated: use `spec.labels`.' }),
    }, {
      description: 'Deprecated and rejected: use `spec.labels` and `spec.annotations`.',
      validations: [FunctionRules.templateUnsupported],
    }),
  }, { required: ['runtime', 'source'], description: 'The desired state of the Function.' });
}

function functionStatus(): JsonSchemaProps {
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

/** The `openAPIV3Schema` of the Function CRD. */
export function functionSchema(): JsonSchemaProps {
  return object({
    apiVersion: string({ description: 'Versioned schema of this object: `serverless.kyma-project.io/v1alpha2`.' }),
    kind: string({ description: 'Kind of this object: `Function`.' }),
    metadata: opaqueObject(),
    spec: functionSpec(),
    status: functionStatus(),
  }, {
    required: ['metadata', 'spec'],
    description: 'A Function: source code and a runtime, which the Function Controller builds into an image and runs as a Deployment.',
  });
}
