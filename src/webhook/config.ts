/**
 * The admission webhook's configuration file: what the stack mounts, and what
 * `kyma-serverless webhook serve --config <file>` reads.
 *
 * This module is light on purpose (js-yaml and ajv only, each loaded when first needed): the stack
 * renders the file from the same types the server parses it into, so the two cannot drift apart.
 */
import * as fs from 'node:fs';
import type { ErrorObject } from 'ajv';
import type * as JsYaml from 'js-yaml';
import { DEFAULT_FUNCTION_DEFAULTS, FunctionDefaults } from '../api/function-defaults';
import { FUNCTION_GROUP } from '../api/function-schema';
import { BUILD_PROFILES, FUNCTION_PROFILES } from '../api/profiles';
import { RELEASES, ServerlessRelease } from '../api/release';
import type { SchemaCheck } from '../api/validator';
import { plainYamlOf } from './_config-yaml';

/** The HTTP paths of the two admission endpoints (upstream's, which the webhook configurations point to). */
export const WEBHOOK_PATHS = {
  /** Mutating: fills in defaults with a JSONPatch. */
  defaulting: '/defaulting/functions',
  /** Validating: denies Functions that break a rule of the Function API. */
  validation: '/validation/function',
} as const;

/** Names of the webhook's objects, as upstream 1.11.1 names them. */
export const WEBHOOK_NAMES = {
  /** The Service (443 to the webhook's HTTPS port) the configurations call. */
  service: 'serverless-webhook',
  /** The Deployment, ServiceAccount and RBAC objects. */
  workload: 'serverless-webhook',
  /** The Secret that holds the self-managed serving certificate. */
  secret: 'serverless-webhook',
  /** The MutatingWebhookConfiguration and its one webhook. */
  mutating: `defaulting.webhook.${FUNCTION_GROUP}`,
  /** The ValidatingWebhookConfiguration and its one webhook. */
  validating: `validation.webhook.${FUNCTION_GROUP}`,
  /** The ConfigMap that holds the configuration file. */
  config: 'serverless-webhook-config',
  /** The ConfigMap that holds the server's program (unless a prebuilt image runs it). */
  program: 'serverless-webhook-server',
} as const;

/** The HTTPS port the server listens on in the cluster. */
export const WEBHOOK_PORT = 8443;

/** The plain-HTTP port of `/metrics` (and the probes) in the cluster. */
export const WEBHOOK_METRICS_PORT = 8080;

/**
 * The DNS names the serving certificate holds for a Service: the API server calls
 * `<service>.<namespace>.svc`; the shorter and longer forms cover other clients.
 */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

/** The largest request body the server reads: an AdmissionReview holds an object and its old version. */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/**
 * Self-managed TLS: the server keeps its serving certificate in a Secret, renews it, and
 * writes its CA into both webhook configurations' `caBundle`.
 */
export interface SelfManagedTlsConfig {
  /** The namespace of the Secret and the Service. */
  readonly namespace: string;
  /** The Secret holding the CA and the serving certificate (created when missing). */
  readonly secretName: string;
  /** The Service the certificate is issued for (`<service>.<namespace>.svc` and its shorter forms). */
  readonly serviceName: string;
  /** The MutatingWebhookConfiguration whose webhooks get the `caBundle`. */
  readonly mutatingWebhookConfiguration: string;
  /** The ValidatingWebhookConfiguration whose webhooks get the `caBundle`. */
  readonly validatingWebhookConfiguration: string;
  /** Renew a certificate this many days before it expires. */
  readonly renewBeforeDays: number;
  /** How often to re-check the Secret and the `caBundle`s (a re-sync may have blanked them), in seconds. */
  readonly checkIntervalSeconds: number;
}

/** The whole configuration, with every default filled in. */
export interface WebhookConfig {
  /**
   * The stack's release: the Function CRD, rules and defaults the webhook judges and fills in
   * Functions by. Absent (as in every file written before releases), 1.11.1; the stack writes it
   * only for another release, so that a 1.11.1 stack's file stays as it was.
   *
   * @default ServerlessRelease.V1_11_1 (DEFAULT_RELEASE)
   */
  readonly release?: ServerlessRelease;
  /** What defaulting writes. */
  readonly defaults: FunctionDefaults;
  /** How long one request may take, from its first byte to the response, in seconds. */
  readonly requestTimeoutSeconds: number;
  /**
   * On SIGTERM, how long to keep serving while reporting not ready, so that the Service stops
   * sending new requests before the listener closes, in seconds.
   */
  readonly shutdownDelaySeconds: number;
  /** Self-managed TLS; without it the certificate comes from files. */
  readonly selfManagedTls?: SelfManagedTlsConfig;
}

/** The configuration file as written: every key optional. */
export interface WebhookConfigFile {
  readonly release?: ServerlessRelease;
  readonly defaults?: Partial<FunctionDefaults>;
  readonly requestTimeoutSeconds?: number;
  readonly shutdownDelaySeconds?: number;
  readonly selfManagedTls?: Partial<SelfManagedTlsConfig> & Pick<SelfManagedTlsConfig, 'namespace'>;
}

const positiveInteger = { type: 'integer', minimum: 1 };
/**
 * The JSON Schema of the configuration file. `scripts/compile-validators.ts` compiles it ahead of
 * time into `src/webhook/_generated/webhook-config-check.ts`, so the server's bundle holds no ajv compiler.
 */
export const WEBHOOK_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    release: { enum: RELEASES },
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: {
        replicas: { type: 'integer', minimum: 0 },
        functionProfile: { enum: FUNCTION_PROFILES },
        buildProfile: { enum: BUILD_PROFILES },
      },
    },
    requestTimeoutSeconds: { type: 'integer', minimum: 1, maximum: 30 },
    shutdownDelaySeconds: { type: 'integer', minimum: 0, maximum: 60 },
    selfManagedTls: {
      type: 'object',
      additionalProperties: false,
      required: ['namespace'],
      properties: {
        namespace: { type: 'string', minLength: 1 },
        secretName: { type: 'string', minLength: 1 },
        serviceName: { type: 'string', minLength: 1 },
        mutatingWebhookConfiguration: { type: 'string', minLength: 1 },
        validatingWebhookConfiguration: { type: 'string', minLength: 1 },
        // Below the serving certificate's 365 days, or it would be renewed on every check.
        renewBeforeDays: { type: 'integer', minimum: 1, maximum: 364 },
        checkIntervalSeconds: positiveInteger,
      },
    },
  },
};

let validateFile: SchemaCheck | undefined;

function describe(error: ErrorObject): string {
  const where = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : 'the file';
  if (error.keyword === 'additionalProperties') return `${where}: unknown key '${error.params.additionalProperty}'`;
  if (error.keyword === 'enum') return `${where}: must be one of ${(error.params.allowedValues as string[]).join(', ')}`;
  return `${where}: ${error.message}`;
}

/**
 * Fills in every default of a configuration.
 *
 * @param file the configuration as written (parsed, already checked)
 * @returns the complete configuration
 */
export function resolveWebhookConfig(file: WebhookConfigFile = {}): WebhookConfig {
  const tls = file.selfManagedTls;
  return {
    ...(file.release !== undefined ? { release: file.release } : {}),
    defaults: { ...DEFAULT_FUNCTION_DEFAULTS, ...file.defaults },
    requestTimeoutSeconds: file.requestTimeoutSeconds ?? 9,
    shutdownDelaySeconds: file.shutdownDelaySeconds ?? 5,
    selfManagedTls: tls && {
      secretName: WEBHOOK_NAMES.secret,
      serviceName: WEBHOOK_NAMES.service,
      mutatingWebhookConfiguration: WEBHOOK_NAMES.mutating,
      validatingWebhookConfiguration: WEBHOOK_NAMES.validating,
      renewBeforeDays: 30,
      checkIntervalSeconds: 300,
      ...tls,
    },
  };
}

/**
 * Parses and checks a configuration file's text (YAML or JSON).
 *
 * @param text the file's contents
 * @param source how to name the file in errors
 * @returns the complete configuration
 * @throws when the text does not parse or breaks the schema; the message lists every problem
 */
export function parseWebhookConfig(text: string, source = 'webhook configuration'): WebhookConfig {
  let data: unknown;
  try {
    data = jsYaml().load(text) ?? {};
  } catch (e) {
    throw new Error(`${source} is not valid YAML: ${(e as Error).message}`);
  }
  // Required here, not imported: scripts/compile-validators.ts imports this module to generate it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  validateFile ??= (require('./_generated/webhook-config-check') as typeof import('./_generated/webhook-config-check')).webhookConfigCheck();
  if (!validateFile(data)) {
    throw new Error(`${source} is invalid:\n${(validateFile.errors ?? []).map(e => `  ${describe(e)}`).join('\n')}`);
  }
  return resolveWebhookConfig(data as WebhookConfigFile);
}

/**
 * Reads a configuration file.
 *
 * @param file its path
 * @returns the complete configuration
 * @throws when the file cannot be read or is invalid, naming the file
 */
export function loadWebhookConfig(file: string): WebhookConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`Cannot read the webhook configuration ${file}: ${(e as Error).message}`);
  }
  return parseWebhookConfig(text, file);
}

/**
 * Renders a configuration as the YAML file the server reads.
 *
 * @param config the configuration
 * @returns YAML text, keys in a fixed order
 */
export function renderWebhookConfig(config: WebhookConfig): string {
  return plainYamlOf(config) ?? jsYaml().dump(config, { sortKeys: true, lineWidth: -1, skipInvalid: true });
}

/** js-yaml, loaded when a file is read or a configuration holds what only it writes (see ./_config-yaml.ts). */
function jsYaml(): typeof JsYaml {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('js-yaml') as typeof JsYaml;
}
