/**
 * Every rule a Subscription (`eventing.kyma-project.io/v1alpha2`) must pass, written once.
 *
 * The CRD checks little (types and required fields); the eventing manager checks the spec when it
 * reconciles, and reports faults in `status` (`ready: false`, condition `Subscription spec valid`
 * `False`) rather than at apply time. `validateSubscription()` runs both, in the eventing manager's
 * words, so that a bad Subscription fails at synth or in `kyma-serverless validate` instead. The
 * one check that needs the cluster (the sink's Service exists) is left to it.
 *
 * The small functions (`eventTypeProblems`, `sinkProblems`, ...) check one value at a time, so
 * that the constructs that emit Subscriptions can name the prop at fault; `validateSubscription()`
 * uses the same functions.
 */
import { RuleReport, text } from './_rules';
import { parseGoRequestUri, parseGoUrl } from './_go-url';
import { isObject } from './_json';
import { RuleInfo, UpstreamEnforcement } from './rule-info';
import { CLUSTER_LOCAL_SUFFIX, MAX_IN_FLIGHT_MESSAGES, TypeMatching, subscriptionSchema } from './subscription-schema';
import { SchemaValidator, Violation } from './validator';

/** The prefix of Kyma's legacy application event types; allowed only with `exact` type matching. */
export const LEGACY_EVENT_TYPE_PREFIX = 'sap.kyma.custom';
/** The fewest dot-separated segments of an event type (`order.created`). */
export const EVENT_TYPE_MIN_SEGMENTS = 2;
/** The labels of a sink host: `<service>.<namespace>.svc.cluster.local`. */
export const SINK_HOST_LABELS = 5;

const API = UpstreamEnforcement.API_SERVER;
const EVENTING = UpstreamEnforcement.EVENTING_MANAGER;
const NOBODY = UpstreamEnforcement.NOBODY;

/**
 * Every rule of a Subscription. The OpenAPI rows stand for one keyword of the schema each; the
 * rest for the checks of {@link validateSubscription}.
 */
export const SUBSCRIPTION_RULES: readonly RuleInfo[] = [
  // The CRD's OpenAPI schema.
  { id: 'openapi.required', field: 'spec.sink, spec.source, spec.types', requires: 'required fields are present', hint: 'add the missing field (an empty source needs typeMatching: exact)', upstream: API },
  { id: 'openapi.type', field: 'every field', requires: 'the JSON type of the field (spec.config holds strings only)', hint: 'quote numbers in spec.config, such as maxInFlightMessages: "10"', upstream: API },
  { id: 'openapi.format', field: 'status.conditions[].lastTransitionTime (date-time), status.backend hashes (int64)', requires: 'a value of the format', hint: 'leave status to the eventing manager', upstream: API },
  { id: 'openapi.additionalProperties', field: 'every object', requires: 'no unknown fields (v1alpha1 fields such as filter and protocolsettings are gone)', hint: 'remove the field or fix its spelling', upstream: API },
  // Checks of the eventing manager (internal/controller/eventing/subscription/validator).
  { id: 'typeMatching', field: 'spec.typeMatching', requires: 'standard or exact', hint: 'write standard or exact, in lower case', upstream: EVENTING },
  { id: 'eventSource', field: 'spec.source', requires: 'not empty (unless typeMatching is exact), and a URI reference (RFC 3986)', hint: 'name the application the events come from, such as my-app', upstream: EVENTING },
  { id: 'eventTypes', field: 'spec.types', requires: 'at least one type, none twice', hint: 'list each event type once', upstream: EVENTING },
  { id: 'eventType', field: 'spec.types[]', requires: `not empty, at least ${EVENT_TYPE_MIN_SEGMENTS} dot-separated segments, no ${LEGACY_EVENT_TYPE_PREFIX} prefix unless typeMatching is exact`, hint: 'write the type as <object>.<action>.<version>, such as order.created.v1', upstream: EVENTING },
  { id: 'maxInFlightMessages', field: `spec.config.${MAX_IN_FLIGHT_MESSAGES}`, requires: 'an integer, as a string', hint: 'write the number in quotes, such as "10"', upstream: EVENTING },
  { id: 'maxInFlightPositive', field: `spec.config.${MAX_IN_FLIGHT_MESSAGES}`, requires: 'at least 1 (ours: NATS JetStream reads 0 as its own default and -1 as no limit)', hint: 'give the number of events the sink may process at once, such as "10"', upstream: NOBODY },
  { id: 'qos', field: 'spec.config.qos', requires: 'AT_LEAST_ONCE or AT_MOST_ONCE', hint: 'use AT_LEAST_ONCE', upstream: EVENTING },
  { id: 'webhookAuthType', field: 'spec.config.type', requires: 'oauth2', hint: 'remove the key, or write oauth2', upstream: EVENTING },
  { id: 'webhookGrantType', field: 'spec.config.grantType', requires: 'client_credentials', hint: 'remove the key, or write client_credentials', upstream: EVENTING },
  { id: 'sinkUrl', field: 'spec.sink', requires: 'an http:// or https:// URL', hint: 'write the sink as http://<service>.<namespace>.svc.cluster.local', upstream: EVENTING },
  { id: 'sinkHost', field: 'spec.sink', requires: `a host of ${SINK_HOST_LABELS} labels ending in ${CLUSTER_LOCAL_SUFFIX}: <service>.<namespace>.${CLUSTER_LOCAL_SUFFIX}`, hint: 'use the Service\'s full in-cluster name, such as http://orders.team-a.svc.cluster.local', upstream: EVENTING },
  { id: 'sinkNamespace', field: 'metadata.namespace, spec.sink', requires: 'the sink\'s Service in the Subscription\'s namespace', hint: 'put the Subscription in the namespace of the sink\'s Service', upstream: EVENTING },
];

let validator: SchemaValidator | undefined;

/** The validator of the Subscription CRD's schema (compiled ahead of time), built on first use. */
export function subscriptionSchemaValidator(): SchemaValidator {
  if (!validator) {
    // Required here, not imported: scripts/compile-validators.ts generates it from modules that import this one.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { subscriptionSchemaCheck } = require('./_generated/subscription-schema-check') as typeof import('./_generated/subscription-schema-check');
    validator = new SchemaValidator(subscriptionSchema(), subscriptionSchemaCheck());
  }
  return validator;
}

/** A problem and the rule it breaks. */
interface Problem {
  readonly rule: string;
  readonly message: string;
}

// ---------------------------------------------------------------------------------------------
// One value at a time.

/**
 * The problems of a `typeMatching` value.
 *
 * @returns one message, in the eventing manager's words, or none
 */
export function typeMatchingProblems(typeMatching: string): string[] {
  return typeMatching === TypeMatching.EXACT || typeMatching === TypeMatching.STANDARD
    ? [] : [`must be a valid TypeMatching value ${TypeMatching.EXACT} or ${TypeMatching.STANDARD}`];
}

/**
 * The problems of an event source: not empty unless type matching is exact, and a URI reference
 * (RFC 3986, as Go's `url.Parse` and the CloudEvents SDK read it).
 *
 * @param typeMatching the Subscription's type matching; `standard` when absent
 * @returns one message, in the eventing manager's words, or none
 */
export function eventSourceProblems(source: string, typeMatching: string = TypeMatching.STANDARD): string[] {
  if (source === '') return typeMatching === TypeMatching.EXACT ? [] : ['must not be empty'];
  // The CloudEvents SDK stores the parsed URI; one that prints as nothing is no source.
  const parsed = parseGoUrl(source);
  return parsed.error !== undefined || parsed.url.empty ? ['must be valid as per RFC 3986'] : [];
}

/**
 * The problems of one event type: not empty, at least two dot-separated segments, no legacy
 * `sap.kyma.custom` prefix unless type matching is exact, and a valid CloudEvents type. Like the
 * eventing manager, it reports the first problem only.
 *
 * @param typeMatching the Subscription's type matching; `standard` when absent
 * @returns one message, in the eventing manager's words, or none
 */
export function eventTypeProblems(type: string, typeMatching: string = TypeMatching.STANDARD): string[] {
  if (type.length === 0) return ['must not be of length zero'];
  if (type.split('.').length < EVENT_TYPE_MIN_SEGMENTS) return [`must have minimum ${EVENT_TYPE_MIN_SEGMENTS} segments`];
  if (typeMatching !== TypeMatching.EXACT && type.startsWith(LEGACY_EVENT_TYPE_PREFIX)) return [`must not have ${LEGACY_EVENT_TYPE_PREFIX} as type prefix`];
  if (type.trim() === '') return ['must be valid as per RFC 3986'];
  return [];
}

/** Whether a text is an integer as Go's `strconv.Atoi` reads it (a 64-bit int). */
function isGoInt(value: string): boolean {
  if (!/^[+-]?[0-9]+$/.test(value)) return false;
  const n = BigInt(value);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

function maxInFlightProblems(value: string): Problem[] {
  if (!isGoInt(value)) return [{ rule: 'maxInFlightMessages', message: `${MAX_IN_FLIGHT_MESSAGES} must be a stringified int value` }];
  if (BigInt(value) < 1n) return [{ rule: 'maxInFlightPositive', message: 'must be at least 1: NATS JetStream reads 0 as its own default and -1 as no limit' }];
  return [];
}

/**
 * The problems of `maxInFlightMessages`: an integer as a string (the eventing manager's rule), and
 * at least 1 (ours: smaller numbers do not cap anything the way they say).
 *
 * @returns one message, or none
 */
export function maxInFlightMessagesProblems(value: string): string[] {
  return maxInFlightProblems(value).map(p => p.message);
}

/** The problems of a sink, by rule; the namespace problem is the Subscription's, as upstream reports it. */
function sinkChecks(sink: string, namespace: string | undefined): Problem[] {
  if (sink === '') return [{ rule: 'sinkUrl', message: 'must not be empty' }];
  if (!sink.startsWith('http://') && !sink.startsWith('https://')) return [{ rule: 'sinkUrl', message: 'must have URL scheme \'http\' or \'https\'' }];
  const parsed = parseGoRequestUri(sink);
  if (parsed.error !== undefined) return [{ rule: 'sinkUrl', message: `failed to parse subscription sink URL: ${parsed.error}` }];
  const host = parsed.url.host.split(':')[0];
  if (!host.endsWith(CLUSTER_LOCAL_SUFFIX)) return [{ rule: 'sinkHost', message: `must have valid sink URL suffix ${CLUSTER_LOCAL_SUFFIX}` }];
  const labels = host.split('.');
  if (labels.length !== SINK_HOST_LABELS) return [{ rule: 'sinkHost', message: `must have sink URL with ${SINK_HOST_LABELS} sub-domains: ${host}` }];
  if (namespace !== undefined && labels[1] !== namespace) {
    return [{ rule: 'sinkNamespace', message: `must have the same namespace as the subscriber: ${labels[1]}` }];
  }
  return [];
}

/**
 * The problems of a sink URL: `http(s)://<service>.<namespace>.svc.cluster.local[:port][/path]`,
 * with `<namespace>` the Subscription's.
 *
 * @param namespace the Subscription's namespace; when absent, the sink's namespace is not compared
 * @returns one message, in the eventing manager's words, or none
 */
export function sinkProblems(sink: string, namespace?: string): string[] {
  return sinkChecks(sink, namespace).map(p => p.message);
}

/** A problem of the list of types, or of one type (with its index). */
interface TypesProblem extends Problem {
  readonly index?: number;
  readonly value: unknown;
}

function typesChecks(types: readonly unknown[], typeMatching: string): TypesProblem[] {
  const problems: TypesProblem[] = [];
  if (types.length === 0) problems.push({ rule: 'eventTypes', value: '', message: 'must not be empty' });
  const seen = new Set<unknown>();
  types.forEach((type, index) => {
    if (typeof type !== 'string') return;
    if (seen.has(type)) problems.push({ rule: 'eventTypes', index, value: type, message: 'must not have duplicate types' });
    seen.add(type);
    for (const message of eventTypeProblems(type, typeMatching)) problems.push({ rule: 'eventType', index, value: type, message });
  });
  return problems;
}

/**
 * The problems of the list of event types of a Subscription: at least one, none twice, and each
 * valid (see {@link eventTypeProblems}).
 *
 * @param typeMatching the Subscription's type matching; `standard` when absent
 * @returns one message per problem, naming the type as `types[i]`; empty when the types are valid
 */
export function eventTypesProblems(types: readonly string[], typeMatching: string = TypeMatching.STANDARD): string[] {
  return typesChecks(types, typeMatching).map(p => (p.index === undefined ? p.message : `types[${p.index}] (${text(p.value)}): ${p.message}`));
}

// ---------------------------------------------------------------------------------------------
// The whole object.

/** Settings of {@link validateSubscription}. */
export interface SubscriptionRuleOptions {
  /**
   * The namespace of a Subscription without `metadata.namespace`, as `kubectl apply -n` would give.
   *
   * @default - a Subscription without a namespace is not compared with its sink's
   */
  readonly defaultNamespace?: string;
}

function invalid(value: unknown, detail: string): string {
  return `Invalid value: ${text(value)}: ${detail}`;
}

function checkTypes(types: unknown, typeMatching: string, report: RuleReport): void {
  if (!Array.isArray(types)) return;
  for (const p of typesChecks(types, typeMatching)) {
    report.add(p.rule, p.index === undefined ? 'spec.types' : `spec.types[${p.index}]`, invalid(p.value, p.message));
  }
}

const CONFIG_VALUES: ReadonlyArray<[key: string, rule: string, valid: (value: string) => boolean, detail: string]> = [
  ['qos', 'qos', v => ['AT_LEAST_ONCE', 'AT_MOST_ONCE'].includes(v.replace(/-/g, '_')), 'must be a valid QoS value AT_LEAST_ONCE or AT_MOST_ONCE'],
  ['type', 'webhookAuthType', v => v === 'oauth2', 'must be a valid Auth Type value oauth2'],
  ['grantType', 'webhookGrantType', v => v === 'client_credentials', 'must be a valid Grant Type value client_credentials'],
];

function checkConfig(config: unknown, report: RuleReport): void {
  if (!isObject(config)) return;
  const maxInFlight = config[MAX_IN_FLIGHT_MESSAGES];
  if (typeof maxInFlight === 'string') {
    for (const p of maxInFlightProblems(maxInFlight)) report.add(p.rule, `spec.config.${MAX_IN_FLIGHT_MESSAGES}`, invalid(maxInFlight, p.message));
  }
  for (const [key, rule, valid, detail] of CONFIG_VALUES) {
    const value = config[key];
    if (typeof value === 'string' && !valid(value)) report.add(rule, `spec.config.${key}`, invalid(value, detail));
  }
}

/**
 * Checks a Subscription object against every rule of `SUBSCRIPTION_RULES`: the CRD's schema, and
 * the eventing manager's checks that need no cluster (the sink's Service is not looked up).
 * Absent `typeMatching` and `config` are read as the CRD's defaults.
 *
 * @param object a Subscription as JSON (`apiVersion`, `kind`, `metadata`, `spec`)
 * @returns every violation, in a stable order (schema first, then the eventing manager's checks
 * by field); empty when the eventing manager would find no fault in the spec
 */
export function validateSubscription(object: unknown, options: SubscriptionRuleOptions = {}): Violation[] {
  const report = new RuleReport(SUBSCRIPTION_RULES);
  report.addSchemaViolations(subscriptionSchemaValidator(), object, {});
  if (!isObject(object) || !isObject(object.spec)) return report.violations;
  const spec = object.spec;
  const typeMatching = spec.typeMatching ?? TypeMatching.STANDARD;
  if (typeof typeMatching === 'string') {
    for (const problem of typeMatchingProblems(typeMatching)) report.add('typeMatching', 'spec.typeMatching', invalid(typeMatching, problem));
  }
  const matching = typeof typeMatching === 'string' ? typeMatching : TypeMatching.STANDARD;
  if (typeof spec.source === 'string') {
    for (const problem of eventSourceProblems(spec.source, matching)) report.add('eventSource', 'spec.source', invalid(spec.source, problem));
  }
  checkTypes(spec.types, matching, report);
  checkConfig(spec.config, report);
  if (typeof spec.sink === 'string') {
    const metadataNamespace = isObject(object.metadata) ? object.metadata.namespace : undefined;
    const namespace = typeof metadataNamespace === 'string' ? metadataNamespace : options.defaultNamespace;
    for (const p of sinkChecks(spec.sink, namespace)) {
      report.add(p.rule, p.rule === 'sinkNamespace' ? 'metadata.namespace' : 'spec.sink', invalid(spec.sink, p.message));
    }
  }
  return report.violations;
}
