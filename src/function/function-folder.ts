/**
 * Function folders: a Function declared as a folder in Git (handler, dependencies file and an
 * optional `function.yaml`), instead of in TypeScript.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Chart, Duration, Size } from 'cdk8s';
import { ConfigMap, ContainerResources, Cpu, EnvFieldPaths, EnvValue, ResourceFieldPaths, Secret, k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { ErrorObject } from 'ajv';
import type * as Yaml from 'yaml';
import {
  BuildProfile, FunctionProfile, HandlerWarning, HttpMethod, KNOWN_RUNTIMES, QUANTITY_PATTERN, RUNTIME_FILES, RuntimeFamily, TypeMatching,
  parseQuantity,
} from '../api';
import { showJson } from '../api/_json';
import { closestMatch, editDistance } from '../api/_suggest';
import { functionNameProblem } from '../api/function-rules';
import { folderFileProblems } from '../api/handler-code';
import { BUILD_PROFILES, FUNCTION_PROFILES } from '../api/profiles';
import type { SchemaCheck } from '../api/validator';
import { DECLARED_AS_METADATA, DECLARED_FOLDER_METADATA, DECLARED_IN_METADATA, FUNCTION_FILE } from './_declared';
import { displayPath } from './_paths';
import { EndpointAuth, EndpointCors } from '../exposure/endpoint-auth';
import { Exposure, GatewayParentRef } from '../exposure/exposure';
import { ExposeOptions } from './endpoint';
import { CpuTriggerOptions, CronTriggerOptions, KedaScaleOptions, KedaTrigger, PrometheusTriggerOptions } from './keda';
import { KymaFunction, SecretMount } from './kyma-function';
import { BuildResources, FunctionResources } from './resources';
import { FunctionRuntime } from './runtime';
import { FunctionSource } from './source';
import { SubscribeOptions } from './subscription';

export { FUNCTION_FILE };

/**
 * Whether a file name looks like a misspelt {@link FUNCTION_FILE} (`function.yml`, `function.json`,
 * `Function.yaml`, `functions.yaml`, `funtion.yaml`): a name a folder must not hold, as the loader
 * would not read it and the Function would silently get the defaults.
 */
function isMisnamedFunctionFile(name: string): boolean {
  if (name === FUNCTION_FILE) return false;
  const lower = name.toLowerCase();
  const dot = lower.indexOf('.');
  if (dot < 0 || !['yaml', 'yml', 'json'].includes(lower.slice(dot + 1))) return false;
  return editDistance(lower.slice(0, dot), FUNCTION_FILE.slice(0, FUNCTION_FILE.indexOf('.'))) <= 2;
}

/** A valid Function name close to a folder's name (`Orders_API` → `orders-api`), if there is one. */
function suggestedFunctionName(name: string): string | undefined {
  const suggestion = name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^[^a-z]+/, '').replace(/-+$/, '').slice(0, 63).replace(/-+$/, '');
  return suggestion && !functionNameProblem(suggestion) ? suggestion : undefined;
}

/** The runtime of a folder without `function.yaml` (or without `runtime` in it), by the handler it holds. */
export const DEFAULT_FOLDER_RUNTIMES: { readonly [F in RuntimeFamily]: FunctionRuntime } = {
  [RuntimeFamily.NODEJS]: FunctionRuntime.NODEJS_22,
  [RuntimeFamily.PYTHON]: FunctionRuntime.PYTHON_312,
};

type Quantity = string | number;
interface Amounts { readonly cpu?: Quantity; readonly memory?: Quantity }
interface ResourcesSettings { readonly profile?: string; readonly requests?: Amounts; readonly limits?: Amounts }
interface KeyRef { readonly name: string; readonly key: string; readonly optional?: boolean }
type EnvSetting = string | number | boolean | {
  readonly secretKeyRef?: KeyRef;
  readonly configMapKeyRef?: KeyRef;
  readonly fieldRef?: { readonly fieldPath: string; readonly apiVersion?: string };
  readonly resourceFieldRef?: { readonly resource: string; readonly divisor?: Quantity };
};

/**
 * `expose` of a `function.yaml`: the options of `expose()`, in YAML.
 *
 * @jsii ignore
 */
export interface ExposeSettings {
  readonly host: string;
  readonly paths?: { readonly path: string; readonly methods?: HttpMethod[] }[];
  /** `none`, or `{ jwt: { issuer, jwksUri, requiredScopes?, audiences? } }`. */
  readonly auth: 'none' | { readonly jwt: { readonly issuer: string; readonly jwksUri: string; readonly requiredScopes?: string[]; readonly audiences?: string[] } };
  readonly cors?: Omit<EndpointCors, 'maxAge'> & { readonly maxAge?: number };
  /** Seconds. */
  readonly timeout?: number;
  /** One of `{ istio: { gateway, tls? } }`, `{ apiRule: { gateway? } }`, `{ gatewayApi: { parentRefs, tls? } }`. */
  readonly via?: {
    readonly istio?: { readonly gateway: string; readonly tls?: boolean };
    readonly apiRule?: { readonly gateway?: string };
    readonly gatewayApi?: { readonly parentRefs: GatewayParentRef[]; readonly tls?: boolean };
  };
}

/**
 * One trigger of `keda.triggers` of a `function.yaml`: one of `prometheus`, `cron`, `cpu`, or `type` with `metadata`.
 *
 * @jsii ignore
 */
export interface KedaTriggerSettings {
  /** The options of `KedaTrigger.prometheus()`. */
  readonly prometheus?: PrometheusTriggerOptions;
  /** The options of `KedaTrigger.cron()`. */
  readonly cron?: CronTriggerOptions;
  /** The options of `KedaTrigger.cpu()`. */
  readonly cpu?: CpuTriggerOptions;
  /** With `metadata`, the arguments of `KedaTrigger.of()`. */
  readonly type?: string;
  readonly metadata?: { readonly [key: string]: string };
}

/**
 * `keda` of a `function.yaml`: the `keda` prop, with the periods in seconds.
 *
 * @jsii ignore
 */
export interface KedaSettings {
  readonly minReplicas?: number;
  readonly maxReplicas: number;
  readonly triggers: KedaTriggerSettings[];
  /** Seconds. */
  readonly cooldownPeriod?: number;
  /** Seconds. */
  readonly pollingInterval?: number;
}

/**
 * The contents of a `function.yaml`. Every key is optional; the names are those of `KymaFunctionProps`.
 *
 * @jsii ignore
 */
export interface FunctionFolderSettings {
  readonly runtime?: string;
  /**
   * The namespace the Function belongs in. `addTo()` adds the folder to a chart of this namespace
   * (or of none) and throws for a chart of another, so that a Function never lands in a namespace
   * nothing creates; apps read it (`FunctionFolder.namespace`) to pick the FunctionNamespace to add
   * the folder to, as this repository's `src/main.ts` does.
   */
  readonly namespace?: string;
  readonly env?: { readonly [name: string]: EnvSetting };
  readonly secretMounts?: SecretMount[];
  readonly replicas?: number;
  readonly scale?: { readonly minReplicas: number; readonly maxReplicas: number };
  /** Scaling by KEDA: what the `keda` prop takes. */
  readonly keda?: KedaSettings;
  readonly resources?: ResourcesSettings;
  readonly buildResources?: ResourcesSettings;
  readonly labels?: { readonly [key: string]: string };
  readonly annotations?: { readonly [key: string]: string };
  readonly runtimeImageOverride?: string;
  /** The container's security context, as in a Pod (release 1.13.0 only): what the `containerSecurityContext` prop takes. */
  readonly containerSecurityContext?: k8s.SecurityContext;
  /** The Pod's security context, as in a Pod (release 1.13.0 only): what the `podSecurityContext` prop takes. */
  readonly podSecurityContext?: k8s.PodSecurityContext;
  /** Warnings about the handler code the Function accepts: what the `acceptWarnings` prop takes (`undeclaredImport`, `undeclaredImport:<module>`). */
  readonly acceptWarnings?: string[];
  /** An HTTP endpoint: what `expose()` takes. */
  readonly expose?: ExposeSettings;
  /** Event subscriptions: what `subscribe()` takes, one entry per Subscription. */
  readonly subscribe?: SubscribeOptions[];
}

// Without anyOf, so that errors point at the wrong part rather than at "no branch matched":
// `pattern` applies to strings only, `minimum` to numbers only, the object keywords to objects only.
// Amounts are never negative: the pattern without its leading sign, and minimum 0 for numbers.
const quantity = { type: ['string', 'number'], pattern: QUANTITY_PATTERN.replace('^(\\+|-)?', '^\\+?'), minimum: 0 };
const amounts = { type: 'object', additionalProperties: false, properties: { cpu: quantity, memory: quantity } };
const resources = (profiles: readonly string[]) => ({
  type: 'object',
  additionalProperties: false,
  properties: { profile: { enum: profiles }, requests: amounts, limits: amounts },
});
const keyRef = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'key'],
  properties: { name: { type: 'string' }, key: { type: 'string' }, optional: { type: 'boolean' } },
};
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
const strings = { type: 'array', items: { type: 'string' } };
const methods = { type: 'array', items: { enum: Object.values(HttpMethod) } };
const closed = (properties: object, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties });

// The security contexts of Kubernetes 1.27, field by field, closed: a misspelt field fails the load
// instead of vanishing. Values are checked again against the Function CRD of the release at synth.
const int64 = { type: 'integer' };
const seLinuxOptions = closed({ level: { type: 'string' }, role: { type: 'string' }, type: { type: 'string' }, user: { type: 'string' } });
const seccompProfile = closed({ type: { enum: ['Localhost', 'RuntimeDefault', 'Unconfined'] }, localhostProfile: { type: 'string' } }, ['type']);
const windowsOptions = closed({
  gmsaCredentialSpec: { type: 'string' }, gmsaCredentialSpecName: { type: 'string' }, hostProcess: { type: 'boolean' }, runAsUserName: { type: 'string' },
});
const CONTAINER_SECURITY_CONTEXT_SCHEMA = closed({
  allowPrivilegeEscalation: { type: 'boolean' },
  capabilities: closed({ add: strings, drop: strings }),
  privileged: { type: 'boolean' },
  procMount: { type: 'string' },
  readOnlyRootFilesystem: { type: 'boolean' },
  runAsGroup: int64,
  runAsNonRoot: { type: 'boolean' },
  runAsUser: int64,
  seLinuxOptions,
  seccompProfile,
  windowsOptions,
});
const POD_SECURITY_CONTEXT_SCHEMA = closed({
  fsGroup: int64,
  fsGroupChangePolicy: { enum: ['OnRootMismatch', 'Always'] },
  runAsGroup: int64,
  runAsNonRoot: { type: 'boolean' },
  runAsUser: int64,
  seLinuxOptions,
  seccompProfile,
  supplementalGroups: { type: 'array', items: int64 },
  sysctls: { type: 'array', items: closed({ name: { type: 'string' }, value: { type: 'string' } }, ['name', 'value']) },
  windowsOptions,
});

/** `expose` of function.yaml. */
const EXPOSE_SCHEMA = closed({
  host: { type: 'string' },
  paths: { type: 'array', items: closed({ path: { type: 'string' }, methods }, ['path']) },
  // `none`, or a map with `jwt`.
  auth: {
    type: ['string', 'object'],
    pattern: '^none$',
    additionalProperties: false,
    required: ['jwt'],
    properties: {
      jwt: closed({ issuer: { type: 'string' }, jwksUri: { type: 'string' }, requiredScopes: strings, audiences: strings }, ['issuer', 'jwksUri']),
    },
  },
  cors: closed({
    allowOrigins: strings, allowMethods: methods, allowHeaders: strings, exposeHeaders: strings,
    allowCredentials: { type: 'boolean' }, maxAge: { type: 'integer', minimum: 1 },
  }, ['allowOrigins']),
  timeout: { type: 'integer', minimum: 1, maximum: 3900 },
  via: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    properties: {
      istio: closed({ gateway: { type: 'string' }, tls: { type: 'boolean' } }, ['gateway']),
      apiRule: closed({ gateway: { type: 'string' } }),
      gatewayApi: closed({
        parentRefs: {
          type: 'array',
          items: closed({ name: { type: 'string' }, namespace: { type: 'string' }, sectionName: { type: 'string' }, port: { type: 'integer' } }, ['name']),
        },
        tls: { type: 'boolean' },
      }, ['parentRefs']),
    },
  },
}, ['host', 'auth']);

/** One entry of `subscribe` of function.yaml. */
const SUBSCRIBE_SCHEMA = closed({
  source: { type: 'string' },
  types: strings,
  typeMatching: { enum: Object.values(TypeMatching) },
  maxInFlightMessages: { type: 'integer' },
}, ['source', 'types']);

/** `keda` of function.yaml; the checks of KedaTrigger and the ScaledObject follow at synth. */
const KEDA_SCHEMA = closed({
  minReplicas: { type: 'integer', minimum: 0 },
  maxReplicas: { type: 'integer', minimum: 1 },
  cooldownPeriod: { type: 'integer', minimum: 0 },
  pollingInterval: { type: 'integer', minimum: 1 },
  triggers: {
    type: 'array',
    minItems: 1,
    // Exactly one kind of trigger: checked after the schema (see kedaProblems), so that errors point at the part that is wrong.
    items: {
      ...closed({
        prometheus: closed({ serverAddress: { type: 'string' }, query: { type: 'string' }, threshold: { type: 'number', exclusiveMinimum: 0 } },
          ['serverAddress', 'query', 'threshold']),
        cron: closed({ timezone: { type: 'string' }, start: { type: 'string' }, end: { type: 'string' }, desiredReplicas: { type: 'integer', minimum: 1 } },
          ['timezone', 'start', 'end', 'desiredReplicas']),
        cpu: closed({ utilization: { type: 'integer', minimum: 1, maximum: 100 } }, ['utilization']),
        type: { type: 'string', minLength: 1 },
        metadata: stringMap,
      }),
      minProperties: 1,
      dependencies: { type: ['metadata'], metadata: ['type'] },
    },
  },
}, ['maxReplicas', 'triggers']);

/**
 * The JSON Schema of `function.yaml`. `scripts/compile-validators.ts` compiles it ahead of time
 * into `src/function/_generated/function-yaml-check.ts`.
 */
export const FUNCTION_YAML_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Every runtime of some release: the release of the folder's stack is checked at synth, naming the release that has it.
    runtime: { enum: KNOWN_RUNTIMES },
    namespace: { type: 'string' },
    env: {
      type: 'object',
      additionalProperties: {
        type: ['string', 'number', 'boolean', 'object'],
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 1,
        properties: {
          secretKeyRef: keyRef,
          configMapKeyRef: keyRef,
          fieldRef: {
            type: 'object', additionalProperties: false, required: ['fieldPath'],
            properties: { fieldPath: { type: 'string' }, apiVersion: { type: 'string' } },
          },
          resourceFieldRef: {
            type: 'object', additionalProperties: false, required: ['resource'],
            properties: { resource: { type: 'string' }, divisor: quantity },
          },
        },
      },
    },
    secretMounts: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['secretName', 'mountPath'],
        properties: { secretName: { type: 'string' }, mountPath: { type: 'string' } },
      },
    },
    replicas: { type: 'integer' },
    scale: {
      type: 'object', additionalProperties: false, required: ['minReplicas', 'maxReplicas'],
      properties: { minReplicas: { type: 'integer' }, maxReplicas: { type: 'integer' } },
    },
    keda: KEDA_SCHEMA,
    resources: resources(FUNCTION_PROFILES),
    buildResources: resources(BUILD_PROFILES),
    labels: stringMap,
    annotations: stringMap,
    runtimeImageOverride: { type: 'string' },
    containerSecurityContext: CONTAINER_SECURITY_CONTEXT_SCHEMA,
    podSecurityContext: POD_SECURITY_CONTEXT_SCHEMA,
    acceptWarnings: { type: 'array', items: { type: 'string', pattern: `^(${Object.values(HandlerWarning).join('|')})(:.+)?$` } },
    expose: EXPOSE_SCHEMA,
    subscribe: { type: 'array', items: SUBSCRIBE_SCHEMA },
  },
};

let settingsCheck: SchemaCheck | undefined;

/** The compiled check of function.yaml, loaded on first use: apps without function folders do not pay for it. */
function checkSettings(data: unknown): data is FunctionFolderSettings {
  // Required here, not imported: scripts/compile-validators.ts imports this module to generate it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  settingsCheck ??= (require('./_generated/function-yaml-check') as typeof import('./_generated/function-yaml-check')).functionYamlCheck();
  return settingsCheck(data);
}

/** The lists of function.yaml: a number after one of these is an index, anywhere else a key (`labels.8080`). */
const LISTS = new Set(['secretMounts', 'paths', 'subscribe', 'types', 'allowOrigins', 'allowMethods', 'allowHeaders', 'exposeHeaders',
  'methods', 'parentRefs', 'requiredScopes', 'audiences', 'triggers', 'add', 'drop', 'supplementalGroups', 'sysctls']);

function isIndex(parents: readonly string[]): boolean {
  return parents.length > 0 && LISTS.has(parents[parents.length - 1]);
}

/** `a.b[0].c` from an ajv instance path. */
function keyOf(instancePath: string, extra?: string): string {
  const key = instancePath.split('/').slice(1)
    .map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((k, s, i, all) => (/^\d+$/.test(s) && isIndex(all.slice(0, i)) ? `${k}[${s}]` : k ? `${k}.${s}` : s), '');
  return extra ? (key ? `${key}.${extra}` : extra) : key;
}

/**
 * How to fill in a required key of function.yaml, in YAML, by its key (list indexes as `[]`): the
 * keys whose value has a choice or a shape a bare name does not tell.
 */
const REQUIRED_EXAMPLES: { readonly [key: string]: string } = {
  'expose.auth': 'give `auth: none` to expose the Function without authentication, or for anything public '
    + '`auth: { jwt: { issuer: https://login.example.com, jwksUri: https://login.example.com/.well-known/jwks.json } }`',
  'expose.auth.jwt.issuer': 'the issuer URL exactly as the tokens\' iss claim has it, such as `issuer: https://login.example.com`',
  'expose.auth.jwt.jwksUri': 'the URL of the issuer\'s signing keys, such as `jwksUri: https://login.example.com/.well-known/jwks.json`',
  'expose.host': 'the host name to serve, such as `host: orders.example.com` (or `host: orders` with the stack\'s exposure domain)',
  'expose.via.istio.gateway': 'the Istio Gateway as namespace/name, such as `gateway: istio-system/kyma-gateway`',
  'expose.via.gatewayApi.parentRefs': 'the Gateway to attach to, such as `parentRefs: [{ name: web, namespace: gateways }]`',
  'keda.maxReplicas': 'the most replicas KEDA may scale to, such as `maxReplicas: 5`',
  'keda.triggers': 'at least one trigger, such as `triggers: [{ cpu: { utilization: 70 } }]`',
  'scale.minReplicas': 'such as `scale: { minReplicas: 1, maxReplicas: 5 }`',
  'scale.maxReplicas': 'such as `scale: { minReplicas: 1, maxReplicas: 5 }`',
  'secretMounts[].secretName': 'such as `- { secretName: orders-db, mountPath: /secrets/orders-db }`',
  'secretMounts[].mountPath': 'such as `- { secretName: orders-db, mountPath: /secrets/orders-db }`',
  'subscribe[].source': 'the event source, such as `source: orders`',
  'subscribe[].types': 'the event types, such as `types: [order.created.v1]`',
};

/**
 * A YAML syntax error as one line: the parser's message, where, and the line it is about (the
 * parser's own text ends with a colon and the excerpt on the lines below, which lists cannot show).
 */
function yamlErrorMessage(error: Yaml.YAMLError, text: string): string {
  const message = error.message.split('\n')[0].replace(/ at line \d+, column \d+:$/, '');
  const at = error.linePos?.[0];
  if (!at) return message;
  const line = text.split(/\r?\n/)[at.line - 1] ?? '';
  const excerpt = line.trim() ? `: \`${line.trim().length > 80 ? `${line.trim().slice(0, 77)}...` : line.trim()}\`` : '';
  return `line ${at.line}, column ${at.col}${excerpt}: ${message}; fix the YAML there (quote a value that holds ': ' or starts with [, {, * or &)`;
}

function describeSettingsError(error: ErrorObject): string {
  const params = error.params as Record<string, any>;
  if (error.instancePath === '/expose/auth' && ['pattern', 'type', 'required'].includes(error.keyword)) {
    return `'expose.auth' (${showJson(error.data)}): give none, or jwt: { issuer, jwksUri }`;
  }
  switch (error.keyword) {
    case 'required': {
      const key = keyOf(error.instancePath, params.missingProperty);
      const example = REQUIRED_EXAMPLES[key.replace(/\[\d+\]/g, '[]')];
      return `'${key}': required${example ? `: ${example}` : `: add '${params.missingProperty}' under '${keyOf(error.instancePath) || 'the top level'}'`}`;
    }
    case 'additionalProperties': {
      // The schema of the mapping the key sits in (ajv's `verbose`): its keys are the ones to offer.
      const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const key = String(params.additionalProperty);
      const closest = closestMatch(key, known);
      const hint = closest ? `did you mean '${closest}'?` : known.length ? `the keys here are ${known.join(', ')}` : 'remove it';
      return `'${keyOf(error.instancePath, key)}': unknown key; ${hint}`;
    }
    case 'enum':
      return `'${keyOf(error.instancePath)}' (${showJson(error.data)}): must be one of ${(params.allowedValues as string[]).join(', ')}`;
    case 'pattern':
      if (/^\/acceptWarnings\//.test(error.instancePath)) {
        return `'${keyOf(error.instancePath)}' (${showJson(error.data)}): must be ${Object.values(HandlerWarning).map(w => `${w} or ${w}:<module>`).join(', ')}`;
      }
      return `'${keyOf(error.instancePath)}' (${showJson(error.data)}): must be a quantity such as 100m, 0.5, 128Mi or 1Gi`;
    case 'minProperties':
    case 'maxProperties':
      if (/^\/expose\/via$/.test(error.instancePath)) return '\'expose.via\': give exactly one of istio, apiRule, gatewayApi';
      if (/^\/keda\/triggers\/\d+$/.test(error.instancePath)) return `'${keyOf(error.instancePath)}': ${KEDA_TRIGGER_CHOICE}`;
      return `'${keyOf(error.instancePath)}': give a plain value, or exactly one of secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef`;
    default:
      return `'${keyOf(error.instancePath)}' (${showJson(error.data)}): ${error.message}`;
  }
}

function toCpu(amount: Quantity): Cpu {
  return Cpu.millis(Math.round(parseQuantity(amount)! * 1000));
}

function toSize(amount: Quantity, key: string): Size {
  const bytes = parseQuantity(amount)!;
  if (bytes < 0) throw new Error(`'${key}' (${amount}): must not be negative`);
  if (bytes % 2 ** 20 === 0) return Size.mebibytes(bytes / 2 ** 20);
  if (bytes % 1024 === 0) return Size.kibibytes(bytes / 1024);
  throw new Error(`'${key}' (${amount}): must be a whole number of KiB, such as 128Mi or 1Gi`);
}

function containerResources(settings: ResourcesSettings, key: string): ContainerResources {
  const { requests = {}, limits = {} } = settings;
  return {
    cpu: {
      request: requests.cpu === undefined ? undefined : toCpu(requests.cpu),
      limit: limits.cpu === undefined ? undefined : toCpu(limits.cpu),
    },
    memory: {
      request: requests.memory === undefined ? undefined : toSize(requests.memory, `${key}.requests.memory`),
      limit: limits.memory === undefined ? undefined : toSize(limits.memory, `${key}.limits.memory`),
    },
  };
}

const KEDA_TRIGGER_CHOICE = 'give exactly one of prometheus, cron, cpu, or type and metadata';

/** Problems of `keda` that the schema cannot express: each trigger is of exactly one kind. */
function kedaProblems(settings: KedaSettings | undefined): string[] {
  return (settings?.triggers ?? []).flatMap((trigger, i) => {
    const kinds = [trigger.prometheus, trigger.cron, trigger.cpu, trigger.type].filter(k => k !== undefined).length;
    return kinds === 1 ? [] : [`'keda.triggers[${i}]': ${KEDA_TRIGGER_CHOICE}`];
  });
}

/** The `keda` prop a `keda` key of function.yaml describes. */
function kedaOptions(settings: KedaSettings): KedaScaleOptions {
  const seconds = (value: number | undefined) => (value === undefined ? undefined : Duration.seconds(value));
  return {
    minReplicas: settings.minReplicas,
    maxReplicas: settings.maxReplicas,
    cooldownPeriod: seconds(settings.cooldownPeriod),
    pollingInterval: seconds(settings.pollingInterval),
    triggers: settings.triggers.map(t => (t.prometheus ? KedaTrigger.prometheus(t.prometheus)
      : t.cron ? KedaTrigger.cron(t.cron)
        : t.cpu ? KedaTrigger.cpu(t.cpu)
          : KedaTrigger.of(t.type!, { ...t.metadata }))),
  };
}

/** Problems of a `resources` or `buildResources` block that the schema cannot express. */
function resourcesProblems(settings: ResourcesSettings | undefined, key: string): string[] {
  if (!settings) return [];
  const explicit = settings.requests !== undefined || settings.limits !== undefined;
  if (settings.profile !== undefined && explicit) return [`'${key}': give either 'profile' or 'requests'/'limits', not both`];
  if (settings.profile === undefined && !explicit) return [`'${key}': give 'profile', or 'requests' and 'limits'`];
  const problems: string[] = [];
  for (const kind of ['requests', 'limits'] as const) {
    const memory = settings[kind]?.memory;
    if (memory === undefined) continue;
    try {
      toSize(memory, `${key}.${kind}.memory`);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return problems;
}

/**
 * One function folder: `functions/<name>/` with the handler, its dependencies file and an
 * optional `function.yaml`. The folder's name is the Function's name.
 *
 * @example
 * for (const folder of FunctionFolder.discover('functions')) folder.addTo(team);
 */
export class FunctionFolder {
  /**
   * Loads every function folder under a root folder (each subfolder whose name does not start
   * with '.'), sorted by name.
   *
   * @param root the folder that holds the function folders; a relative path starts at the working directory
   * @returns the folders, at least one
   * @throws when the root does not exist, is not a folder or holds no function folder, naming its
   * path; or one error listing every problem of every folder, each naming its file and key
   */
  public static discover(root: string): FunctionFolder[] {
    const call = `FunctionFolder.discover(${JSON.stringify(root)})`;
    const where = path.resolve(root);
    const example = `such as ${path.join(displayPath(where), 'hello', 'handler.js')}`;
    if (!fs.existsSync(where)) {
      throw new Error(`${call}: ${where} does not exist: create it with one folder per Function (${example}), `
        + 'or give the folder that holds them (a relative path starts at the working directory)');
    }
    if (!fs.statSync(where).isDirectory()) throw new Error(`${call}: ${where} is a file, not a folder: give the folder that holds the function folders`);
    const folders: FunctionFolder[] = [];
    const problems: string[] = [];
    const names = fs.readdirSync(root, { withFileTypes: true })
      .filter(e => e.isDirectory() && !e.name.startsWith('.'))
      .map(e => e.name)
      .sort();
    if (!names.length) {
      throw new Error(`${call}: ${where} holds no function folders: add one folder per Function (${example}), or do not call discover()`);
    }
    for (const name of names) {
      try {
        folders.push(FunctionFolder.load(path.join(root, name)));
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    if (problems.length) throw new Error(`Invalid function folders:\n  ${problems.join('\n  ')}`);
    return folders;
  }

  /**
   * Loads one function folder.
   *
   * @param directory the folder
   * @throws one error listing every problem of its `function.yaml`, each naming the file and the key;
   * or naming a file whose name is a misspelt `function.yaml` (`function.yml`, `function.json`...)
   */
  public static load(directory: string): FunctionFolder {
    const name = path.basename(path.resolve(directory));
    const file = path.join(directory, FUNCTION_FILE);
    const fail = (where: string, problems: string[]): never => {
      throw new Error(problems.map(p => `${displayPath(where)}: ${p}`).join('\n  '));
    };
    // The folder's name is the Function's: a name the Function API refuses is the folder's to change.
    const nameProblem = functionNameProblem(name);
    if (nameProblem) {
      const suggestion = suggestedFunctionName(name);
      fail(directory, [`the folder's name (${JSON.stringify(name)}) is the Function's name, and ${nameProblem}: rename the folder`
        + `${suggestion ? `, such as to ${suggestion}` : ''}`]);
    }
    const isFolder = fs.existsSync(directory) && fs.statSync(directory).isDirectory();
    const misnamed = (isFolder ? fs.readdirSync(directory) : []).filter(isMisnamedFunctionFile).sort();
    if (misnamed.length) {
      const fix = (m: string) => (m.toLowerCase() === FUNCTION_FILE ? `rename it to ${FUNCTION_FILE} (the name is case-sensitive)`
        : fs.existsSync(file) ? `move its settings into ${FUNCTION_FILE} and delete it` : `rename it to ${FUNCTION_FILE}`);
      throw new Error(misnamed.map(m => `${displayPath(path.join(directory, m))}: not read: the settings of a function folder are read from `
        + `${FUNCTION_FILE} only (YAML): ${fix(m)}`).join('\n  '));
    }
    let settings: FunctionFolderSettings = {};
    if (fs.existsSync(file)) {
      let text = '';
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (e) {
        fail(file, [`cannot be read: ${(e as Error).message}`]);
      }
      // Loaded here: an app without function folders does not load the YAML parser.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const document = (require('yaml') as typeof Yaml).parseDocument(text, { prettyErrors: true });
      if (document.errors.length) fail(file, document.errors.map(e => yamlErrorMessage(e, text)));
      let data: unknown;
      try {
        // Aliases resolve here: an unknown one, or too many, throw.
        data = document.toJS() ?? {};
      } catch (e) {
        fail(file, [(e as Error).message]);
      }
      // A tagged root (!!omap, !!set, !!binary...) parses to a Map, Set or bytes, not to settings.
      if (typeof data !== 'object' || data === null || Array.isArray(data) || ![Object.prototype, null].includes(Object.getPrototypeOf(data))) {
        fail(file, ['must be a mapping of settings, such as `runtime: nodejs22`']);
      }
      if (!checkSettings(data)) fail(file, (settingsCheck?.errors ?? []).map(describeSettingsError));
      settings = data as FunctionFolderSettings;
      const problems = [
        ...resourcesProblems(settings.resources, 'resources'), ...resourcesProblems(settings.buildResources, 'buildResources'), ...kedaProblems(settings.keda),
      ];
      if (problems.length) fail(file, problems);
    }
    let runtime: FunctionRuntime;
    if (settings.runtime) {
      runtime = FunctionRuntime.of(settings.runtime);
    } else {
      const family = Object.values(RuntimeFamily).find(f => fs.existsSync(path.join(directory, RUNTIME_FILES[f].handler)));
      if (!family) {
        const misnamed = Object.values(RuntimeFamily).flatMap(f => folderFileProblems(isFolder ? fs.readdirSync(directory) : [], f));
        if (misnamed.length) return fail(path.join(directory, misnamed[0].file), [misnamed[0].message]);
        const handlers = Object.values(RUNTIME_FILES).map(f => f.handler).join(' or ');
        return fail(directory, [`no ${handlers}, and no 'runtime' in ${FUNCTION_FILE}: add a handler, or remove the folder`]);
      }
      runtime = DEFAULT_FOLDER_RUNTIMES[family];
    }
    return new FunctionFolder(name, directory, fs.existsSync(file) ? file : undefined, runtime, settings);
  }

  /** The namespace `function.yaml` names, if any: the namespace of the chart to add the folder to. */
  public readonly namespace?: string;

  private constructor(
    /** The folder's name: the Function's name and construct id. */
    public readonly name: string,
    /** The folder. */
    public readonly directory: string,
    /** Its `function.yaml`, when it has one. */
    public readonly file: string | undefined,
    /** The runtime: from `function.yaml`, or by the handler the folder holds. */
    public readonly runtime: FunctionRuntime,
    /** The settings of `function.yaml`, as read. @jsii ignore */
    public readonly settings: FunctionFolderSettings,
  ) {
    this.namespace = settings.namespace;
  }

  /**
   * Adds the Function to a scope, usually the FunctionNamespace of the folder's namespace: the
   * Function is in the namespace of the scope's chart. Problems the Function API finds are
   * reported at synth, naming the construct path, the key (keys and props have the same names)
   * and this folder's `function.yaml`.
   *
   * @param scope the scope
   * @returns the Function
   * @throws when `function.yaml` names a namespace and the scope's chart has another one: nothing
   * would create the namespace the file names, or the file would be ignored
   */
  public addTo(scope: Construct): KymaFunction {
    const s = this.settings;
    const chart = Chart.of(scope);
    if (s.namespace !== undefined && chart.namespace !== undefined && s.namespace !== chart.namespace) {
      throw new Error(`${displayPath(this.file!)}: 'namespace' (${s.namespace}) is not the namespace of the chart the folder is added to `
        + `(${chart.node.path}, namespace ${chart.namespace}): add the folder to the FunctionNamespace ${s.namespace} `
        + `(new FunctionNamespace(app, '${s.namespace}')), or change 'namespace' to ${chart.namespace}, or remove it`);
    }
    const namesake = scope.node.tryFindChild(this.name);
    if (namesake) {
      // constructs' own error names neither this folder nor where the other one comes from.
      const declaredIn = namesake.node.metadata.find(m => m.type === DECLARED_IN_METADATA)?.data as string | undefined;
      const other = declaredIn === undefined ? `is declared in code (the construct ${namesake.node.path})`
        : `comes from the folder ${path.basename(declaredIn) === FUNCTION_FILE ? path.dirname(declaredIn) : declaredIn}`;
      throw new Error(`${displayPath(this.directory)}: ${scope.node.path} already holds a Function named ${this.name}, which ${other}: `
        + 'a folder\'s name is its Function\'s name, unique in its namespace: rename one of them, or add them to different namespaces');
    }
    const fn = new KymaFunction(scope, this.name, {
      runtime: this.runtime,
      source: FunctionSource.fromDirectory(this.directory),
      namespace: s.namespace,
      secretMounts: s.secretMounts,
      replicas: s.replicas,
      scale: s.scale,
      keda: s.keda && kedaOptions(s.keda),
      resources: s.resources && (s.resources.profile
        ? FunctionResources.preset(s.resources.profile as FunctionProfile)
        : FunctionResources.custom(containerResources(s.resources, 'resources'))),
      buildResources: s.buildResources && (s.buildResources.profile
        ? BuildResources.preset(s.buildResources.profile as BuildProfile)
        : BuildResources.custom(containerResources(s.buildResources, 'buildResources'))),
      labels: s.labels,
      annotations: s.annotations,
      runtimeImageOverride: s.runtimeImageOverride,
      acceptWarnings: s.acceptWarnings,
      // The keys of function.yaml are the fields of Kubernetes, which the generated types name alike.
      containerSecurityContext: s.containerSecurityContext,
      podSecurityContext: s.podSecurityContext,
    });
    const declaredIn = displayPath(this.file ?? this.directory);
    fn.node.addMetadata(DECLARED_IN_METADATA, declaredIn);
    fn.node.addMetadata(DECLARED_FOLDER_METADATA, displayPath(this.directory));
    fn.scaledObject?.node.addMetadata(DECLARED_IN_METADATA, declaredIn);
    for (const [name, setting] of Object.entries(s.env ?? {})) fn.addEnv(name, envValue(fn, name, setting));
    if (s.expose) {
      const endpoint = fn.expose(exposeOptions(s.expose));
      endpoint.node.addMetadata(DECLARED_IN_METADATA, declaredIn);
      endpoint.node.addMetadata(DECLARED_AS_METADATA, 'expose');
    }
    (s.subscribe ?? []).forEach((options, i) => {
      const subscription = fn.subscribe(options);
      subscription.node.addMetadata(DECLARED_IN_METADATA, declaredIn);
      subscription.node.addMetadata(DECLARED_AS_METADATA, `subscribe[${i}]`);
    });
    return fn;
  }
}

/** The options of `expose()` that an `expose` key of function.yaml describes. */
function exposeOptions(settings: ExposeSettings): ExposeOptions {
  const { auth, via, cors } = settings;
  return {
    host: settings.host,
    paths: settings.paths,
    auth: auth === 'none' ? EndpointAuth.none() : EndpointAuth.jwt(auth.jwt),
    cors: cors && { ...cors, maxAge: cors.maxAge === undefined ? undefined : Duration.seconds(cors.maxAge) },
    timeout: settings.timeout === undefined ? undefined : Duration.seconds(settings.timeout),
    via: via?.istio ? Exposure.istio(via.istio)
      : via?.apiRule ? Exposure.apiRule(via.apiRule)
        : via?.gatewayApi ? Exposure.gatewayApi(via.gatewayApi)
          : undefined,
  };
}

function envValue(scope: Construct, name: string, setting: EnvSetting): EnvValue {
  if (typeof setting !== 'object') return EnvValue.fromValue(String(setting));
  const { secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef } = setting;
  if (secretKeyRef) {
    const secret = Secret.fromSecretName(scope, `Env${name}Secret`, secretKeyRef.name);
    return EnvValue.fromSecretValue({ secret, key: secretKeyRef.key }, { optional: secretKeyRef.optional });
  }
  if (configMapKeyRef) {
    const configMap = ConfigMap.fromConfigMapName(scope, `Env${name}ConfigMap`, configMapKeyRef.name);
    return EnvValue.fromConfigMap(configMap, configMapKeyRef.key, { optional: configMapKeyRef.optional });
  }
  if (fieldRef) return EnvValue.fromFieldRef(fieldRef.fieldPath as EnvFieldPaths, { apiVersion: fieldRef.apiVersion });
  return EnvValue.fromResource(resourceFieldRef!.resource as ResourceFieldPaths, {
    divisor: resourceFieldRef!.divisor === undefined ? undefined : String(resourceFieldRef!.divisor),
  });
}
