/**
 * Every rule an APIRule (`gateway.kyma-project.io/v2`) must pass, written once.
 *
 * `validateApiRule()` judges an APIRule the way a Kyma cluster would: the CRD's OpenAPI schema and
 * CEL rules (what the API server rejects at apply time), and the checks the api-gateway controller
 * runs before it creates the VirtualService and policies (what would otherwise surface later as
 * `status.state: Error`). The checks that need the cluster (the Gateway exists, the target Pods
 * have sidecars, no other VirtualService holds the host, the extAuth providers exist) are left to
 * the cluster.
 *
 * The small functions (`hostProblems`, `endpointPathProblems`, ...) check one value at a time, so
 * that the constructs that emit APIRules can name the prop at fault; `validateApiRule()` uses the
 * same functions.
 */
import { RuleReport, text } from './_rules';
import { parseGoRequestUri } from './_go-url';
import { isObject } from './_json';
import {
  APIRULE_GATEWAY_MAX_LENGTH, APIRULE_GATEWAY_PATTERN, APIRULE_HOST_MAX_LENGTH, APIRULE_HOST_PATTERN, APIRULE_PATH_PATTERN,
  APIRULE_TIMEOUT_MAX_SECONDS, ApiRuleRules, apiRuleSchema,
} from './apirule-schema';
import { isDns1123Subdomain } from './names';
import { RuleInfo, UpstreamEnforcement } from './rule-info';
import { SchemaValidator, Violation } from './validator';

/** The most characters of an APIRule's name: the controller puts it in a label of the objects it creates. */
export const APIRULE_NAME_MAX_LENGTH = 63;

/** The keys of an Istio string match, as `corsPolicy.allowOrigins[]` holds them. */
export const STRING_MATCH_KEYS: readonly string[] = ['exact', 'prefix', 'regex'];

const API = UpstreamEnforcement.API_SERVER;
const GATEWAY = UpstreamEnforcement.API_GATEWAY;
const NOBODY = UpstreamEnforcement.NOBODY;

/**
 * Every rule of an APIRule. The OpenAPI rows stand for one keyword of the schema each; the CEL
 * rows for one rule of the CRD (their ids are the keys of `ApiRuleRules`); the rest for the
 * checks of {@link validateApiRule}.
 */
export const APIRULE_RULES: readonly RuleInfo[] = [
  // The CRD's OpenAPI schema.
  { id: 'openapi.required', field: 'spec, spec.hosts, spec.rules, rules[].path, rules[].methods, service.name, service.port, jwt issuer and jwksUri', requires: 'required fields are present', hint: 'add the missing field', upstream: API },
  { id: 'openapi.type', field: 'every field', requires: 'the JSON type of the field', hint: 'use a value of the field\'s type', upstream: API },
  { id: 'openapi.enum', field: 'spec.rules[].methods[], status.state', requires: 'an HTTP method: GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE or PATCH', hint: 'write the method in capitals', upstream: API },
  { id: 'openapi.minimum', field: 'service.port, timeout, corsPolicy.maxAge', requires: 'port >= 1, timeout >= 1, maxAge >= 1', hint: 'raise the number', upstream: API },
  { id: 'openapi.maximum', field: 'service.port, timeout', requires: `port <= 65535, timeout <= ${APIRULE_TIMEOUT_MAX_SECONDS} seconds`, hint: 'lower the number', upstream: API },
  { id: 'openapi.maxLength', field: 'spec.hosts[], spec.gateway, spec.externalGateway', requires: `hosts of at most ${APIRULE_HOST_MAX_LENGTH} characters, Gateway references of at most ${APIRULE_GATEWAY_MAX_LENGTH}`, hint: 'shorten the value', upstream: API },
  { id: 'openapi.minItems', field: 'spec.hosts, spec.rules, spec.rules[].methods, spec.rules[].extAuth.authorizers', requires: 'at least one item', hint: 'add an item', upstream: API },
  { id: 'openapi.maxItems', field: 'spec.hosts', requires: 'exactly one host', hint: 'write one APIRule per host', upstream: API },
  { id: 'openapi.pattern', field: 'spec.rules[].path, service.namespace', requires: 'a path of the APIRule grammar (\'/\', path characters, \'{*}\' and \'{**}\' segments, or \'/*\' alone); a DNS label as namespace', hint: 'write the path like /orders, /orders/{*} or /orders/{**}', upstream: API },
  { id: 'openapi.format', field: 'service.port (int32), corsPolicy.maxAge (int64), status.lastProcessedTime (date-time)', requires: 'a value of the format', hint: 'use a smaller number or an RFC 3339 time', upstream: API },
  { id: 'openapi.additionalProperties', field: 'every object', requires: 'no unknown fields (v1beta1 fields such as host and accessStrategies are gone in v2)', hint: 'remove the field or fix its spelling', upstream: API },
  // The CRD's CEL rules.
  { id: 'hostFormat', field: 'spec.hosts[]', requires: 'a short host (one lower-case DNS label), an FQDN of at least two labels, or a wildcard domain *.example.com', hint: 'write the host in lower case, such as orders or orders.example.com', upstream: API },
  { id: 'gatewayFormat', field: 'spec.gateway', requires: 'namespace/name, such as kyma-system/kyma-gateway', hint: 'write the Gateway as namespace/name; the v1beta1 forms (name.namespace.svc.cluster.local) are gone', upstream: API },
  { id: 'externalGatewayFormat', field: 'spec.externalGateway', requires: 'namespace/name', hint: 'write the ExternalGateway as namespace/name', upstream: API },
  { id: 'oneAccessStrategy', field: 'spec.rules[]', requires: 'exactly one of noAuth: true, jwt and extAuth', hint: 'keep one access strategy per rule; noAuth: false counts as none', upstream: API },
  // Checks of the api-gateway controller (internal/validation/v2alpha1) and of the objects it creates.
  { id: 'apiRuleName', field: 'metadata.name', requires: `at most ${APIRULE_NAME_MAX_LENGTH} characters (the controller labels its VirtualService and policies with the name)`, hint: 'shorten the name', upstream: GATEWAY },
  { id: 'gatewayOneOf', field: 'spec.gateway, spec.externalGateway', requires: 'exactly one of gateway and externalGateway', hint: 'set gateway, such as kyma-system/kyma-gateway', upstream: GATEWAY },
  { id: 'ruleService', field: 'spec.service, spec.rules[].service', requires: 'a Service for every rule: its own or spec.service', hint: 'set spec.service, or a service on the rule', upstream: GATEWAY },
  { id: 'pathOperators', field: 'spec.rules[].path', requires: 'at most one {**}, and no operator after it', hint: 'end the path with {**}, or use {*} for single segments', upstream: GATEWAY },
  { id: 'pathConflict', field: 'spec.rules[].path, spec.rules[].methods', requires: 'no rule whose path an earlier rule with the same method already matches', hint: 'put the more specific path first', upstream: GATEWAY },
  { id: 'jwtAuthentications', field: 'spec.rules[].jwt.authentications, spec.rules[].extAuth.restrictions.authentications', requires: 'at least one authentication', hint: 'add the issuer and jwksUri of your identity provider', upstream: GATEWAY },
  { id: 'jwtIssuer', field: 'jwt authentications[].issuer', requires: 'not empty, and a URI when it contains \':\'', hint: 'give the issuer URL exactly as the tokens\' iss claim has it, such as https://example.accounts.ondemand.com', upstream: GATEWAY },
  { id: 'jwtJwksUri', field: 'jwt authentications[].jwksUri', requires: 'an absolute URI or an absolute path', hint: 'give the full URL of the key set, such as https://example.accounts.ondemand.com/oauth2/certs', upstream: GATEWAY },
  { id: 'jwtTokenFromMixed', field: 'jwt authentications[].fromHeaders, .fromParams', requires: 'the authentications of a rule read tokens either from headers or from parameters, not both', hint: 'read every token from a header, or every token from a parameter', upstream: GATEWAY },
  { id: 'jwtTokenFromMultiple', field: 'jwt authentications[].fromHeaders, .fromParams', requires: 'at most one header and one parameter per authentication', hint: 'keep one header or parameter', upstream: GATEWAY },
  { id: 'jwtAuthorizations', field: 'jwt authorizations', requires: 'absent, or at least one authorization', hint: 'remove authorizations: [] to accept any valid token', upstream: GATEWAY },
  { id: 'jwtClaimValues', field: 'jwt authorizations[].requiredScopes, .audiences', requires: 'absent, or a list of non-empty values', hint: 'remove the empty list or the empty value', upstream: GATEWAY },
  { id: 'jwtSameIssuer', field: 'spec.rules[].jwt.authentications[]', requires: 'the same issuer and jwksUri configured identically (token headers and parameters) in every rule', hint: 'copy the authentication from the first rule that uses the issuer', upstream: GATEWAY },
  { id: 'corsOrigin', field: 'spec.corsPolicy.allowOrigins[]', requires: 'string matches with the keys exact, prefix or regex', hint: 'write each origin as {exact: https://app.example.com}, {prefix: ...} or {regex: ...}', upstream: NOBODY },
];

let validator: SchemaValidator | undefined;

/** The validator of the APIRule CRD's `v2` schema (compiled ahead of time) and CEL rules, built on first use. */
export function apiRuleSchemaValidator(): SchemaValidator {
  if (!validator) {
    // Required here, not imported: scripts/compile-validators.ts generates it from modules that import this one.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { apiRuleSchemaCheck } = require('./_generated/apirule-schema-check') as typeof import('./_generated/apirule-schema-check');
    validator = new SchemaValidator(apiRuleSchema(), apiRuleSchemaCheck());
  }
  return validator;
}

// ---------------------------------------------------------------------------------------------
// One value at a time.

/** The forms of an APIRule host. */
export enum HostForm {
  /** One DNS label, such as `orders`: the controller appends the domain of the Gateway. */
  SHORT = 'short',
  /** A fully qualified domain name of at least two labels, such as `orders.example.com`. */
  FQDN = 'fqdn',
  /** `*.` and an FQDN, such as `*.example.com`. */
  WILDCARD = 'wildcard',
}

const HOST = new RegExp(APIRULE_HOST_PATTERN);
const GATEWAY_REFERENCE = new RegExp(APIRULE_GATEWAY_PATTERN);
const PATH = new RegExp(APIRULE_PATH_PATTERN);

/**
 * Which form an APIRule host has.
 *
 * @returns the form, or `undefined` when the text is no valid host (see {@link hostProblems})
 */
export function hostForm(host: string): HostForm | undefined {
  if (host.length > APIRULE_HOST_MAX_LENGTH || !HOST.test(host)) return undefined;
  if (host.startsWith('*.')) return HostForm.WILDCARD;
  return host.includes('.') ? HostForm.FQDN : HostForm.SHORT;
}

/**
 * The problems of an APIRule host, by the CRD's rules: a short host, an FQDN or a wildcard
 * domain, in lower case, at most 255 characters.
 *
 * @returns one message per problem; empty when the host is valid
 */
export function hostProblems(host: string): string[] {
  const problems: string[] = [];
  if (host.length > APIRULE_HOST_MAX_LENGTH) problems.push(`must have at most ${APIRULE_HOST_MAX_LENGTH} characters (it has ${host.length})`);
  if (!HOST.test(host)) problems.push(ApiRuleRules.hostFormat.message);
  return problems;
}

/**
 * The problems of a Gateway reference (`spec.gateway`): `namespace/name`, at most 127 characters.
 *
 * @returns one message per problem; empty when the reference is valid
 */
export function gatewayReferenceProblems(gateway: string): string[] {
  const problems: string[] = [];
  if (gateway.length > APIRULE_GATEWAY_MAX_LENGTH) problems.push(`must have at most ${APIRULE_GATEWAY_MAX_LENGTH} characters (it has ${gateway.length})`);
  if (!GATEWAY_REFERENCE.test(gateway)) problems.push(ApiRuleRules.gatewayFormat.message);
  return problems;
}

/**
 * The problems of a timeout of an APIRule or rule, in seconds.
 *
 * @returns one message per problem; empty when the timeout is valid
 */
export function apiRuleTimeoutProblems(seconds: number): string[] {
  if (Number.isInteger(seconds) && seconds >= 1 && seconds <= APIRULE_TIMEOUT_MAX_SECONDS) return [];
  return [`must be a whole number of seconds from 1 to ${APIRULE_TIMEOUT_MAX_SECONDS} (it is ${seconds})`];
}

const PATH_CHARACTER = /[A-Za-z0-9\-._~!$&'()+,;=:@%]/;
const PATH_CHARACTERS = '- . _ ~ ! $ & \' ( ) + , ; = : @';

/** Why a path does not match the CRD's pattern, in words; empty when it matches. */
function pathSyntaxProblems(path: string): string[] {
  if (!path.startsWith('/')) return ['must start with \'/\''];
  if (path === '/*') return [];
  const problems = new Set<string>();
  const bad = new Set<string>();
  for (const segment of path.split('/').slice(1)) {
    if (segment === '{*}' || segment === '{**}') continue;
    if (/[{}]/.test(segment)) problems.add('\'{\' and \'}\' may appear only in the operators \'{*}\' and \'{**}\', each a whole segment');
    else if (segment.includes('*')) problems.add('\'*\' may appear only as the whole path \'/*\', or in the operators \'{*}\' and \'{**}\', each a whole segment');
    for (const c of segment) if (!PATH_CHARACTER.test(c) && !'*{}'.includes(c)) bad.add(c);
    if (/%(?![0-9a-fA-F]{2})/.test(segment)) problems.add('\'%\' must start an escape of two hex digits, such as %20');
  }
  if (bad.size) {
    problems.add(`must not contain ${[...bad].map(c => text(c)).join(', ')}: a path has letters, digits, %-escapes and ${PATH_CHARACTERS}`);
  }
  if (!problems.size && !PATH.test(path)) problems.add(`must match ${APIRULE_PATH_PATTERN}`);
  return [...problems];
}

/** The operator rules of the api-gateway controller: one `{**}`, and no operator after it. */
function pathOperatorProblems(path: string): string[] {
  const segments = path.replace(/^\/+/, '').split('/');
  const anywhere = path.split('{**}').length - 1;
  if (anywhere === 0) return [];
  if (anywhere > 1) return ['Only one {**} operator is allowed in the path.'];
  let afterDoubleStar = false;
  for (const segment of segments) {
    if (segment !== '{*}' && segment !== '{**}') continue;
    if (afterDoubleStar) return ['The {**} operator must be the last operator in the path.'];
    afterDoubleStar = segment === '{**}';
  }
  return [];
}

/**
 * The problems of the path of an APIRule rule: the CRD's grammar (a leading `/`, URI path
 * characters and `%` escapes, `{*}` and `{**}` as whole segments, `/*` only alone) and the
 * controller's operator rules (one `{**}`, the last operator).
 *
 * @returns one message per problem; empty when the path is valid
 */
export function endpointPathProblems(path: string): string[] {
  return [...pathSyntaxProblems(path), ...pathOperatorProblems(path)];
}

/** A rule as the path-conflict check sees it. */
export interface PathAndMethods {
  readonly path: string;
  readonly methods: readonly string[];
}

/** A rule whose path an earlier rule already matches for one of its methods. */
export interface PathConflict {
  /** The index of the later rule. */
  readonly index: number;
  /** The method both rules allow. */
  readonly method: string;
  /** The controller's message. */
  readonly message: string;
}

/** The segments of a path, as the controller splits them; `/*` is `/{**}`. */
function segmentsOf(path: string): string[] {
  return (path === '/*' ? '/{**}' : path).replace(/^\/+/, '').split('/');
}

function joinSegments(segments: readonly string[], from: number): string {
  return segments.slice(from).map(s => `/${s}`).join('');
}

/**
 * Whether a rule's path `earlier` matches every request path `later` matches, the way the
 * controller decides it: segment by segment, `{*}` for any one segment, and `{**}` for any
 * number of segments followed by the rest of `earlier` written out as it is.
 */
function pathCovers(earlier: readonly string[], later: readonly string[], e = 0, l = 0): boolean {
  if (l >= later.length) return e === earlier.length;
  if (e >= earlier.length) return false;
  const segment = earlier[e];
  if ((segment === later[l] || segment === '{*}') && pathCovers(earlier, later, e + 1, l + 1)) return true;
  if (segment === '{**}') {
    const rest = joinSegments(earlier, e + 1);
    if (rest === '') return true;
    for (let i = l; i <= later.length; i++) if (joinSegments(later, i) === rest) return true;
  }
  return false;
}

/**
 * The rules whose path an earlier rule already matches for one of the same methods. The
 * controller rejects such an APIRule: the later rule could never apply.
 *
 * One difference from the controller: it checks a path against a trie of the earlier paths, and a
 * path that ends where a longer earlier path passes (`/a` after `/a/b`) is not marked there as an
 * end; so a third rule `/a` slips through. Here it is a conflict, as the second `/a` can never apply.
 *
 * @param rules the rules, in order
 * @returns one conflict per later rule and method, in rule order
 */
export function pathConflicts(rules: readonly PathAndMethods[]): PathConflict[] {
  const conflicts: PathConflict[] = [];
  const segments = rules.map(r => segmentsOf(r.path));
  rules.forEach((rule, index) => {
    for (const method of new Set(rule.methods)) {
      const covered = rules.slice(0, index).some((earlier, i) => earlier.methods.includes(method) && pathCovers(segments[i], segments[index]));
      if (covered) {
        conflicts.push({ index, method, message: `Path ${rule.path} with method ${method} conflicts with at least one of the previous rule paths` });
      }
    }
  });
  return conflicts;
}

/**
 * The problems of a URI the controller reads as a URL (a JWT issuer with ':', a `jwksUri`): an
 * absolute URI or an absolute path, as Go's `url.ParseRequestURI` accepts them.
 *
 * @returns one message, in the controller's words, or none when the URI is valid
 */
export function uriProblems(uri: string): string[] {
  if (uri === '') return ['value is empty or not a valid uri err=value is empty'];
  const parsed = parseGoRequestUri(uri);
  return parsed.error ? [`value is empty or not a valid uri err=${parsed.error}`] : [];
}

/**
 * The problems of a JWT issuer: not empty, and a URI (see {@link uriProblems}) when it contains
 * ':' (RFC 7519 allows any string or URI as `iss`).
 *
 * @returns one message, in the controller's words, or none when the issuer is valid
 */
export function jwtIssuerProblems(issuer: string): string[] {
  if (issuer === '') return ['value is empty or not a valid uri err=value is empty'];
  return issuer.includes(':') ? uriProblems(issuer) : [];
}

/** A host name, with an optional path, and no scheme: `login.example.com`, `login.example.com/realms/a`. */
const HOST_WITHOUT_SCHEME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+(\/\S*)?$/i;

/**
 * The problems of a JWT issuer that the API server and the controllers accept but no token would
 * match: a host name without its scheme (`login.example.com`). The issuer is compared exactly with
 * the tokens' `iss` claim, which identity providers (OpenID Connect) write as an https URL. Issuers
 * that are not host names (`kubernetes/serviceaccount`) pass.
 *
 * @returns one message, or none
 */
export function jwtIssuerSchemeProblems(issuer: string): string[] {
  return HOST_WITHOUT_SCHEME.test(issuer)
    ? [`a host name without a scheme: the issuer is compared exactly with the tokens' iss claim, which identity providers write as a URL, `
      + `so no token would match and every request would be refused (401): give the issuer as its tokens have it, such as https://${issuer}`]
    : [];
}

/**
 * The problems of the `requiredScopes` of a JWT authorization: absent, or non-empty values.
 *
 * @returns one message, in the controller's words, or none
 */
export function requiredScopesProblems(scopes: readonly string[] | undefined): string[] {
  return claimValuesProblems(scopes, 'scope');
}

/**
 * The problems of the `audiences` of a JWT authorization: absent, or non-empty values.
 *
 * @returns one message, in the controller's words, or none
 */
export function audiencesProblems(audiences: readonly string[] | undefined): string[] {
  return claimValuesProblems(audiences, 'audience');
}

function claimValuesProblems(values: readonly unknown[] | undefined, what: string): string[] {
  if (values === undefined || values === null) return [];
  if (values.length === 0) return ['value is empty'];
  return values.some(v => v === '') ? [`${what} value is empty`] : [];
}

// ---------------------------------------------------------------------------------------------
// The whole object.

function checkGateway(spec: Record<string, unknown>, report: RuleReport): void {
  const hasGateway = spec.gateway !== undefined && spec.gateway !== null;
  const hasExternal = spec.externalGateway !== undefined && spec.externalGateway !== null;
  if (!hasGateway && !hasExternal) report.add('gatewayOneOf', 'spec', 'Either gateway or externalGateway must be specified');
  if (hasGateway && hasExternal) report.add('gatewayOneOf', 'spec', 'Only one of gateway or externalGateway can be specified');
}

function checkJwt(jwt: Record<string, unknown>, path: string, report: RuleReport): void {
  const { authentications, authorizations } = jwt;
  if (Array.isArray(authorizations)) {
    if (authorizations.length === 0) report.add('jwtAuthorizations', `${path}.authorizations`, 'authorizations defined, but no configuration exists');
    authorizations.forEach((authorization, i) => {
      if (!isObject(authorization)) return;
      const at = `${path}.authorizations[${i}]`;
      if (Array.isArray(authorization.requiredScopes)) {
        for (const problem of requiredScopesProblems(authorization.requiredScopes)) report.add('jwtClaimValues', `${at}.requiredScopes`, problem);
      }
      if (Array.isArray(authorization.audiences)) {
        for (const problem of audiencesProblems(authorization.audiences)) report.add('jwtClaimValues', `${at}.audiences`, problem);
      }
    });
  }
  const list = Array.isArray(authentications) ? authentications : [];
  if (list.length === 0) {
    report.add('jwtAuthentications', `${path}.authentications`, 'A JWT config must have at least one authentication');
    return;
  }
  let fromHeaders = false;
  let fromParams = false;
  list.forEach((authentication, i) => {
    if (!isObject(authentication)) return;
    const at = `${path}.authentications[${i}]`;
    const { issuer, jwksUri } = authentication;
    if (typeof issuer === 'string') for (const problem of jwtIssuerProblems(issuer)) report.add('jwtIssuer', `${at}.issuer`, problem);
    if (typeof jwksUri === 'string') for (const problem of uriProblems(jwksUri)) report.add('jwtJwksUri', `${at}.jwksUri`, problem);
    const headers = Array.isArray(authentication.fromHeaders) ? authentication.fromHeaders.length : 0;
    const params = Array.isArray(authentication.fromParams) ? authentication.fromParams.length : 0;
    if (headers > 0) {
      if (fromParams) report.add('jwtTokenFromMixed', `${at}.fromHeaders`, 'mixture of multiple fromHeaders and fromParams is not supported');
      fromHeaders = true;
    }
    if (params > 0) {
      if (fromHeaders) report.add('jwtTokenFromMixed', `${at}.fromParams`, 'mixture of multiple fromHeaders and fromParams is not supported');
      fromParams = true;
    }
    if (headers > 1) report.add('jwtTokenFromMultiple', `${at}.fromHeaders`, 'multiple fromHeaders are not supported');
    if (params > 1) report.add('jwtTokenFromMultiple', `${at}.fromParams`, 'multiple fromParams are not supported');
  });
}

/** How a JWT authentication reads tokens, to compare it across rules. */
function tokenSources(authentication: Record<string, unknown>): string {
  const headers = Array.isArray(authentication.fromHeaders) ? authentication.fromHeaders : [];
  const params = Array.isArray(authentication.fromParams) ? authentication.fromParams : [];
  return JSON.stringify([
    headers.map(h => (isObject(h) ? [h.name ?? '', h.prefix ?? ''] : h)),
    params,
  ]);
}

/** The same issuer and key set must read tokens the same way in every rule (one RequestAuthentication holds them). */
function checkSameIssuer(rules: readonly unknown[], report: RuleReport): void {
  const seen = new Map<string, string>();
  rules.forEach((rule, r) => {
    if (!isObject(rule) || !isObject(rule.jwt) || !Array.isArray(rule.jwt.authentications)) return;
    rule.jwt.authentications.forEach((authentication, a) => {
      if (!isObject(authentication)) return;
      const key = JSON.stringify([authentication.issuer, authentication.jwksUri]);
      const sources = tokenSources(authentication);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, sources);
      else if (first !== sources) {
        report.add('jwtSameIssuer', `spec.rules[${r}].jwt.authentications[${a}]`, 'multiple jwt configurations that differ for the same issuer');
      }
    });
  });
}

function checkRules(spec: Record<string, unknown>, report: RuleReport): void {
  if (!Array.isArray(spec.rules)) return;
  const specService = spec.service !== undefined && spec.service !== null;
  spec.rules.forEach((rule, i) => {
    if (!isObject(rule)) return;
    const path = `spec.rules[${i}]`;
    if (!specService && (rule.service === undefined || rule.service === null)) {
      report.add('ruleService', `${path}.service`, 'The rule must define a service, because no service is defined on spec level');
    }
    if (isObject(rule.jwt)) checkJwt(rule.jwt, `${path}.jwt`, report);
    else if (isObject(rule.extAuth) && isObject(rule.extAuth.restrictions)) checkJwt(rule.extAuth.restrictions, `${path}.extAuth.restrictions`, report);
    if (typeof rule.path === 'string') for (const problem of pathOperatorProblems(rule.path)) report.add('pathOperators', `${path}.path`, problem);
  });
  // The rules with a path and methods, and where each is in spec.rules.
  const comparable = spec.rules.flatMap((r, at) => (isObject(r) && typeof r.path === 'string' && Array.isArray(r.methods)
    ? [{ at, rule: { path: r.path, methods: r.methods } }] : []));
  for (const conflict of pathConflicts(comparable.map(c => c.rule))) {
    report.add('pathConflict', `spec.rules[${comparable[conflict.index].at}].path`, conflict.message);
  }
  checkSameIssuer(spec.rules, report);
}

function checkCors(spec: Record<string, unknown>, report: RuleReport): void {
  const origins = isObject(spec.corsPolicy) ? spec.corsPolicy.allowOrigins : undefined;
  if (!Array.isArray(origins)) return;
  origins.forEach((origin, i) => {
    if (!isObject(origin)) return;
    const path = `spec.corsPolicy.allowOrigins[${i}]`;
    const keys = Object.keys(origin);
    if (keys.length === 0) report.add('corsOrigin', path, 'Invalid value: {}: matches no origin; give one of exact, prefix or regex');
    for (const key of keys.filter(k => !STRING_MATCH_KEYS.includes(k))) {
      report.add('corsOrigin', `${path}.${key}`, `Invalid value: ${text(key)}: not a string match; the api-gateway controller reads it as a prefix match. Use exact, prefix or regex`);
    }
  });
}

/**
 * Checks an APIRule object against every rule of `APIRULE_RULES`: the `v2` CRD's schema and CEL
 * rules, and the api-gateway controller's checks that need no cluster.
 *
 * @param object an APIRule as JSON (`apiVersion`, `kind`, `metadata`, `spec`)
 * @returns every violation, in a stable order (schema first, then the controller's checks by
 * field); empty when the API server would store it and the controller would find no fault in it
 */
export function validateApiRule(object: unknown): Violation[] {
  const report = new RuleReport(APIRULE_RULES);
  report.addSchemaViolations(apiRuleSchemaValidator(), object, ApiRuleRules);
  if (!isObject(object)) return report.violations;
  if (isObject(object.metadata) && typeof object.metadata.name === 'string' && object.metadata.name.length > APIRULE_NAME_MAX_LENGTH
    && isDns1123Subdomain(object.metadata.name)) {
    report.add('apiRuleName', 'metadata.name', `Too long: ${text(object.metadata.name)} has ${object.metadata.name.length} characters; the controller labels its objects with the name, and a label value has at most ${APIRULE_NAME_MAX_LENGTH}`);
  }
  const spec = object.spec;
  if (!isObject(spec)) return report.violations;
  checkGateway(spec, report);
  checkRules(spec, report);
  checkCors(spec, report);
  return report.violations;
}
