/**
 * The Kyma APIRule (`gateway.kyma-project.io/v2`) as one typed schema, and the TypeScript shape
 * of the APIRules this package emits to expose Functions.
 *
 * The schema has the field paths, types, enums, bounds, patterns, required fields and CEL rules
 * of the `v2` version of the APIRule CRD that the API Gateway module 3.10.0 ships; the
 * descriptions are ours. `validateApiRule()` (`apirule-rules.ts`) compiles it, and adds the checks
 * the api-gateway controller runs before it creates anything.
 */
import type { k8s } from 'cdk8s-plus-27';
import { JsonSchemaProps, ValidationRule, array, boolean, integer, mapOf, object, opaqueObject, string } from './schema';

/** The API group of APIRules. */
export const APIRULE_GROUP = 'gateway.kyma-project.io';
/** The version we emit and check: served since API Gateway 3.0, the only one reconciled since 3.10. */
export const APIRULE_VERSION = 'v2';
/** `kind` of an APIRule object. */
export const APIRULE_KIND = 'APIRule';
/** `apiVersion` of an APIRule object. */
export const APIRULE_API_VERSION = `${APIRULE_GROUP}/${APIRULE_VERSION}`;

/** The most characters of a host. */
export const APIRULE_HOST_MAX_LENGTH = 255;
/** The most characters of a `namespace/name` Gateway reference. */
export const APIRULE_GATEWAY_MAX_LENGTH = 127;
/** The longest timeout, in seconds, of an APIRule or one of its rules (65 minutes). */
export const APIRULE_TIMEOUT_MAX_SECONDS = 3900;
/** The timeout, in seconds, of requests when neither the APIRule nor the rule sets one. */
export const APIRULE_DEFAULT_TIMEOUT_SECONDS = 180;

/** An RFC 1123 label in lower case, as the host pattern spells it. */
const HOST_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** The last label of a domain name: at least two characters. */
const TOP_LABEL = '[a-z0-9]{2,63}';

/**
 * The hosts an APIRule accepts: a wildcard domain (`*.example.com`), a fully qualified domain
 * name of at least two labels (`api.example.com`), or one label, a short host (`orders`), which
 * the controller completes with the domain of the Gateway.
 */
export const APIRULE_HOST_PATTERN = `^(?:\\*\\.(?:${HOST_LABEL}\\.)+${TOP_LABEL}|(?:${HOST_LABEL})(?:(?:\\.${HOST_LABEL})*(?:\\.${TOP_LABEL}))?)$`;

/** A Gateway (or ExternalGateway) reference: `namespace/name`, each a DNS label. */
export const APIRULE_GATEWAY_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?/([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)$';

/**
 * The path of a rule: `/` then segments of URI path characters (or `%` escapes), where a whole
 * segment may be the operator `{*}` (one segment) or `{**}` (any number of segments); or `/*`
 * alone, every path.
 */
export const APIRULE_PATH_PATTERN = '^((\\/([A-Za-z0-9-._~!$&\'()+,;=:@]|%[0-9a-fA-F]{2})*)|(\\/\\{\\*{1,2}\\}))+$|^\\/\\*$';

/** The namespace of a target Service. */
export const APIRULE_SERVICE_NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** The HTTP methods a rule may allow. */
export enum HttpMethod {
  GET = 'GET',
  HEAD = 'HEAD',
  POST = 'POST',
  PUT = 'PUT',
  DELETE = 'DELETE',
  CONNECT = 'CONNECT',
  OPTIONS = 'OPTIONS',
  TRACE = 'TRACE',
  PATCH = 'PATCH',
}

/** Every {@link HttpMethod}, in the order the CRD lists them. */
export const HTTP_METHODS: readonly HttpMethod[] = Object.values(HttpMethod);

/** The states the api-gateway controller reports in `status.state`. */
export enum ApiRuleState {
  PROCESSING = 'Processing',
  DELETING = 'Deleting',
  /** Reconciled: the VirtualService and policies exist. */
  READY = 'Ready',
  /** Invalid, or its objects could not be applied; `status.description` says why. */
  ERROR = 'Error',
  WARNING = 'Warning',
}

/** A CEL string literal in single quotes. */
function celString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, '\\\'')}'`;
}

/**
 * The CEL rules of the APIRule CRD (`v2`), by the node they sit on. Their expressions and
 * messages are exactly upstream's, because users search for the messages the API server returns.
 */
export const ApiRuleRules = {
  /** On each item of `spec.hosts`. */
  hostFormat: {
    rule: `self.matches(${celString(APIRULE_HOST_PATTERN)})`,
    message: 'Host must be a lowercase RFC 1123 label (must consist of lowercase alphanumeric characters or \'-\', and must start and end with an '
      + 'lowercase alphanumeric character), a fully qualified domain name, or a wildcard domain name (e.g. *.local.kyma.dev)',
  },
  /** On `spec.gateway`. */
  gatewayFormat: {
    rule: `self.matches(${celString(APIRULE_GATEWAY_PATTERN)})`,
    message: 'Gateway must be in the namespace/name format',
  },
  /** On `spec.externalGateway`. */
  externalGatewayFormat: {
    rule: `self.matches(${celString(APIRULE_GATEWAY_PATTERN)})`,
    message: 'ExternalGateway must be in the namespace/name format',
  },
  /** On each item of `spec.rules`: `noAuth: false` counts as no strategy. */
  oneAccessStrategy: {
    rule: '((has(self.extAuth)?1:0)+(has(self.jwt)?1:0)+((has(self.noAuth)&&self.noAuth==true)?1:0))==1',
    message: 'One of the following fields must be set: noAuth, jwt, extAuth',
  },
} satisfies Record<string, ValidationRule>;

/** The Service that receives a rule's requests. */
export interface ApiRuleService {
  /** Name of the Service: for a Function, the Function's name. */
  readonly name: string;
  /**
   * Namespace of the Service.
   *
   * @default - the namespace of `spec.service`, else the APIRule's own
   */
  readonly namespace?: string;
  /** Port of the Service: 80 for a Function. */
  readonly port: number;
  /** Declared by the CRD; the v2 controller does not read it. */
  readonly external?: boolean;
}

/** A header a JWT is read from. */
export interface ApiRuleJwtHeader {
  /** Name of the header, such as `Authorization`. */
  readonly name: string;
  /**
   * Text before the token, such as `Bearer `.
   *
   * @default - none
   */
  readonly prefix?: string;
}

/** An issuer whose tokens a rule accepts. */
export interface ApiRuleJwtAuthentication {
  /** The `iss` claim of the tokens; a URL when it contains `:`. */
  readonly issuer: string;
  /** URL of the issuer's JSON Web Key Set, to check the tokens' signatures. */
  readonly jwksUri: string;
  /**
   * The header the token is read from (at most one).
   *
   * @default - `Authorization: Bearer <token>`
   */
  readonly fromHeaders?: readonly ApiRuleJwtHeader[];
  /**
   * The query parameter the token is read from (at most one).
   *
   * @default - none
   */
  readonly fromParams?: readonly string[];
}

/** What a token must claim to pass a rule; several authorizations are alternatives. */
export interface ApiRuleJwtAuthorization {
  /**
   * Scopes that must all be in one of the claims `scp`, `scope` or `scopes`.
   *
   * @default - no scope required
   */
  readonly requiredScopes?: readonly string[];
  /**
   * Audiences that must all be in the claim `aud`.
   *
   * @default - no audience required
   */
  readonly audiences?: readonly string[];
}

/** The JWT access strategy of a rule. */
export interface ApiRuleJwt {
  /** The issuers whose tokens are accepted (at least one). */
  readonly authentications: readonly ApiRuleJwtAuthentication[];
  /**
   * Claims a token must have; never an empty list.
   *
   * @default - any valid token of the issuers passes
   */
  readonly authorizations?: readonly ApiRuleJwtAuthorization[];
}

/** The external-authorizer access strategy of a rule. This package never emits it. */
export interface ApiRuleExtAuth {
  /** Names of Istio extension providers of type `envoyExtAuthzHttp`. */
  readonly authorizers: readonly string[];
  /**
   * Tokens required in addition to the authorizers' decision.
   *
   * @default - none
   */
  readonly restrictions?: ApiRuleJwt;
}

/** Request headers and cookies set before a request reaches the Service. This package never emits it. */
export interface ApiRuleRequest {
  /** Headers to set. */
  readonly headers?: { readonly [name: string]: string };
  /** Cookies to set, joined into one `Cookie` header. */
  readonly cookies?: { readonly [name: string]: string };
}

/** One rule of an APIRule: a path, methods, one access strategy. */
export interface ApiRuleRule {
  /** `/exact`, a path with `{*}` or `{**}` segments, or `/*` (every path). */
  readonly path: string;
  /** The methods the rule allows; other methods get 403. */
  readonly methods: readonly HttpMethod[];
  /**
   * `true` for a public rule; exactly one of `noAuth: true`, `jwt` and `extAuth`.
   *
   * @default - not public
   */
  readonly noAuth?: boolean;
  /**
   * Require a JWT.
   *
   * @default - no JWT required
   */
  readonly jwt?: ApiRuleJwt;
  /**
   * Ask external authorizers.
   *
   * @default - none
   */
  readonly extAuth?: ApiRuleExtAuth;
  /**
   * Timeout of the rule's requests, in seconds (1 to 3900).
   *
   * @default - the APIRule's timeout
   */
  readonly timeout?: number;
  /**
   * The Service of this rule.
   *
   * @default - `spec.service`
   */
  readonly service?: ApiRuleService;
  /**
   * Headers and cookies to set.
   *
   * @default - none
   */
  readonly request?: ApiRuleRequest;
}

/** An Istio string match: exactly one of `exact`, `prefix` and `regex`. */
export interface ApiRuleStringMatch {
  readonly exact?: string;
  readonly prefix?: string;
  readonly regex?: string;
}

/** The CORS headers of the responses. Without it, the route removes every CORS header. */
export interface ApiRuleCorsPolicy {
  /** `Access-Control-Allow-Origin`: the origins allowed. */
  readonly allowOrigins?: readonly ApiRuleStringMatch[];
  /** `Access-Control-Allow-Methods`. */
  readonly allowMethods?: readonly string[];
  /** `Access-Control-Allow-Headers`. */
  readonly allowHeaders?: readonly string[];
  /** `Access-Control-Expose-Headers`. */
  readonly exposeHeaders?: readonly string[];
  /** `Access-Control-Allow-Credentials`. */
  readonly allowCredentials?: boolean;
  /** `Access-Control-Max-Age`, in seconds (at least 1). */
  readonly maxAge?: number;
}

/** The `spec` of an APIRule. */
export interface ApiRuleSpec {
  /** Exactly one host: a short host, an FQDN or a wildcard domain. */
  readonly hosts: readonly string[];
  /** The Istio Gateway, `namespace/name`; exactly one of `gateway` and `externalGateway`. */
  readonly gateway?: string;
  /** An ExternalGateway, `namespace/name`. This package never emits it. */
  readonly externalGateway?: string;
  /**
   * The Service of every rule without its own.
   *
   * @default - every rule names its Service
   */
  readonly service?: ApiRuleService;
  /** The rules, most specific first: an earlier rule wins. */
  readonly rules: readonly ApiRuleRule[];
  /**
   * CORS headers of the responses.
   *
   * @default - no CORS headers
   */
  readonly corsPolicy?: ApiRuleCorsPolicy;
  /**
   * Timeout of requests, in seconds (1 to 3900).
   *
   * @default 180
   */
  readonly timeout?: number;
}

/** An APIRule object, `gateway.kyma-project.io/v2`. */
export interface ApiRule {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: k8s.ObjectMeta;
  readonly spec: ApiRuleSpec;
}

/** A Service reference (`spec.service` or `spec.rules[].service`). */
function serviceSchema(where: string): JsonSchemaProps {
  return object({
    external: boolean({ description: 'Declared for Services outside the cluster; the v2 controller does not read it.' }),
    name: string({ description: 'Name of the Service.' }),
    namespace: string({
      pattern: APIRULE_SERVICE_NAMESPACE_PATTERN,
      description: 'Namespace of the Service; defaults to the namespace of `spec.service`, then to the APIRule\'s.',
    }),
    port: integer({ format: 'int32', minimum: 1, maximum: 65535, description: 'Port of the Service.' }),
  }, { required: ['name', 'port'], description: where });
}

/** A JWT configuration (`rules[].jwt` or `rules[].extAuth.restrictions`). */
function jwtSchema(description: string): JsonSchemaProps {
  const values = (what: string) => array(string(), { description: what });
  return object({
    authentications: array(object({
      fromHeaders: array(object({
        name: string({ description: 'The header, such as `Authorization`.' }),
        prefix: string({ description: 'Text before the token in the header, such as `Bearer `.' }),
      }, { required: ['name'], description: 'A header that carries the token.' }), { description: 'Where to read the token: at most one header.' }),
      fromParams: values('Where to read the token: at most one query parameter. Cannot be combined with headers.'),
      issuer: string({ description: 'The `iss` claim of accepted tokens; must be a URI when it contains \':\'.' }),
      jwksUri: string({ description: 'URL of the JSON Web Key Set that signs the issuer\'s tokens.' }),
    }, { required: ['issuer', 'jwksUri'], description: 'An accepted issuer.' }), { description: 'Accepted issuers; at least one.' }),
    authorizations: array(object({
      audiences: values('Audiences that must all be in the `aud` claim.'),
      requiredScopes: values('Scopes that must all be in the `scp`, `scope` or `scopes` claim.'),
    }, { description: 'Claims a token must have.' }), { description: 'Alternative sets of required claims; absent means any valid token passes.' }),
  }, { description });
}

function timeoutSchema(description: string): JsonSchemaProps {
  return integer({ minimum: 1, maximum: APIRULE_TIMEOUT_MAX_SECONDS, description });
}

function ruleSchema(): JsonSchemaProps {
  return object({
    extAuth: object({
      authorizers: array(string(), { minItems: 1, description: 'Names of Istio extension providers that authorize each request.' }),
      restrictions: jwtSchema('Tokens required in addition to the authorizers\' decision.'),
    }, { required: ['authorizers'], description: 'Authorize requests with external authorizers.' }),
    jwt: jwtSchema('Require a valid JWT of one of the issuers.'),
    methods: array(string({ enum: HTTP_METHODS, description: 'An HTTP method.' }), {
      minItems: 1,
      description: 'The methods this rule allows on its path; requests with other methods are denied.',
    }),
    noAuth: boolean({ description: '`true` makes the path public. Exactly one of `noAuth: true`, `jwt` and `extAuth`.' }),
    path: string({
      pattern: APIRULE_PATH_PATTERN,
      description: 'The path: exact (`/orders`), with `{*}` for one segment or `{**}` for any number (the last operator), or `/*` for every path.',
    }),
    request: object({
      cookies: mapOf(string(), { description: 'Cookies set on the request, joined into one `Cookie` header.' }),
      headers: mapOf(string(), { description: 'Headers set on the request.' }),
    }, { description: 'Changes to the request before it reaches the Service.' }),
    service: serviceSchema('The Service of this rule; overrides `spec.service`.'),
    timeout: timeoutSchema('Timeout of this rule\'s requests, in seconds; overrides `spec.timeout`.'),
  }, {
    required: ['methods', 'path'],
    description: 'A path, the methods allowed on it, and how callers are authorized. Earlier rules win.',
    validations: [ApiRuleRules.oneAccessStrategy],
  });
}

function apiRuleSpecSchema(): JsonSchemaProps {
  const headers = (what: string) => array(string(), { description: what });
  return object({
    corsPolicy: object({
      allowCredentials: boolean({ description: 'Sent as `Access-Control-Allow-Credentials`.' }),
      allowHeaders: headers('Sent as `Access-Control-Allow-Headers`.'),
      allowMethods: headers('Sent as `Access-Control-Allow-Methods`.'),
      allowOrigins: array(mapOf(string(), { description: 'An Istio string match: `exact`, `prefix` or `regex`, and the text.' }), {
        description: 'Origins allowed in `Access-Control-Allow-Origin`, each an Istio string match: `exact`, `prefix` or `regex`.',
      }),
      exposeHeaders: headers('Sent as `Access-Control-Expose-Headers`.'),
      maxAge: integer({ format: 'int64', minimum: 1, description: 'Sent as `Access-Control-Max-Age`: how long, in seconds, browsers may cache a preflight.' }),
    }, { description: 'CORS headers of the responses. Without it, every CORS header of the Service\'s responses is removed.' }),
    externalGateway: string({
      maxLength: APIRULE_GATEWAY_MAX_LENGTH,
      description: 'An ExternalGateway, as `namespace/name`. Exactly one of `gateway` and `externalGateway`.',
      validations: [ApiRuleRules.externalGatewayFormat],
    }),
    gateway: string({
      maxLength: APIRULE_GATEWAY_MAX_LENGTH,
      description: 'The Istio Gateway, as `namespace/name` (Kyma\'s is `kyma-system/kyma-gateway`). Exactly one of `gateway` and `externalGateway`.',
      validations: [ApiRuleRules.gatewayFormat],
    }),
    hosts: array(string({
      maxLength: APIRULE_HOST_MAX_LENGTH,
      description: 'A short host (`orders`, completed with the Gateway\'s domain), an FQDN (`orders.example.com`) or a wildcard domain (`*.example.com`).',
      validations: [ApiRuleRules.hostFormat],
    }), { minItems: 1, maxItems: 1, description: 'The host the rules apply to: exactly one.' }),
    rules: array(ruleSchema(), { minItems: 1, description: 'The rules, in order of priority.' }),
    service: serviceSchema('The Service of every rule that names none.'),
    timeout: timeoutSchema(`Timeout of requests, in seconds; ${APIRULE_DEFAULT_TIMEOUT_SECONDS} when unset.`),
  }, { required: ['hosts', 'rules'], description: 'Which host and paths reach which Service, and who may call them.' });
}

/** The `openAPIV3Schema` of the APIRule CRD's `v2` version. */
export function apiRuleSchema(): JsonSchemaProps {
  return object({
    apiVersion: string({ description: `Versioned schema of this object: \`${APIRULE_API_VERSION}\`.` }),
    kind: string({ description: `Kind of this object: \`${APIRULE_KIND}\`.` }),
    metadata: opaqueObject(),
    spec: apiRuleSpecSchema(),
    status: object({
      description: string({ description: 'Why the APIRule is in its state: the validation or apply errors when `Error`.' }),
      lastProcessedTime: string({ format: 'date-time', description: 'When the controller last reconciled the APIRule.' }),
      state: string({ enum: Object.values(ApiRuleState), description: '`Ready` once reconciled; `Error` when invalid or not applied.' }),
    }, { required: ['state'], description: 'The observed state, written by the api-gateway controller.' }),
  }, {
    required: ['spec'],
    description: 'An APIRule: exposes Services on a host of an Istio Gateway, with rules for paths, methods and access.',
  });
}
