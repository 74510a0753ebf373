/**
 * The three ways an endpoint reaches a Function from outside the cluster, each a renderer of the
 * objects it needs: an Istio VirtualService bound to a gateway, a Kyma APIRule v2, or a Gateway
 * API HTTPRoute. JWT authentication is Istio's RequestAuthentication and AuthorizationPolicy on
 * the Functions' Pods (the APIRule's controller makes those itself).
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IVirtualService } from '@kubernetes-models/istio/networking.istio.io/v1beta1/VirtualService';
import type { IAuthorizationPolicy } from '@kubernetes-models/istio/security.istio.io/v1/AuthorizationPolicy';
import type { IRequestAuthentication } from '@kubernetes-models/istio/security.istio.io/v1/RequestAuthentication';
import { APIRULE_API_VERSION, APIRULE_KIND, FUNCTION_POD_LABEL, HttpMethod, URL_ANNOTATION, Violation, validateApiRule } from '../api';
import { gatewayReferenceProblems } from '../api/apirule-rules';
import type { EndpointAuthConfig, EndpointCors } from './endpoint-auth';

/** The port of every Function's Service (80, to the container's 8080). */
export const FUNCTION_SERVICE_PORT = 80;

/** One Service an endpoint sends requests to, with its share. */
export interface EndpointBackend {
  /** The Service: a Function's, named after it. */
  readonly service: string;
  /** Percent of the requests, 0 to 100; the backends' add up to 100. */
  readonly percent: number;
}

/** Everything a renderer needs to know about an endpoint. @internal */
export interface EndpointTarget {
  /** Name of the objects. */
  readonly objectName: string;
  /** Their namespace: the Functions'. */
  readonly namespace: string;
  /** The full host name. */
  readonly host: string;
  /** Paths in order, each with its methods. */
  readonly paths: readonly { readonly path: string; readonly methods: readonly HttpMethod[] }[];
  readonly auth: EndpointAuthConfig;
  readonly cors?: EndpointCors;
  readonly timeoutSeconds?: number;
  /** Where requests go. */
  readonly backends: readonly EndpointBackend[];
  /** The Functions whose Pods serve the requests (for the JWT policies). */
  readonly workloads: readonly string[];
  /** Labels of every object. */
  readonly labels: { readonly [key: string]: string };
  /** The endpoint's URL, once known. */
  readonly url?: string;
}

/**
 * An object an endpoint is made of, and how to check it at synth.
 *
 * @deprecated renamed: use IRenderedObject
 * @jsii ignore
 */
export type RenderedObject = IRenderedObject;

/** An object an endpoint is made of, and how to check it at synth. */
export interface IRenderedObject {
  /** The object. */
  readonly apiObject: ApiObject;
  /** Its problems against its schema or model, each as one message naming the object. */
  problems(): string[];
}

/** Options of {@link Exposure.istio}. */
export interface IstioExposureOptions {
  /**
   * The Istio Gateway to bind to, as `namespace/name`, such as `istio-system/public-gateway`
   * (Kyma's is `kyma-system/kyma-gateway`).
   */
  readonly gateway: string;
  /**
   * Whether the gateway terminates TLS for the host: the endpoint's URL is then `https://`.
   *
   * @default true
   */
  readonly tls?: boolean;
}

/** Options of {@link Exposure.apiRule}. */
export interface ApiRuleExposureOptions {
  /**
   * The Istio Gateway the APIRule binds to, as `namespace/name`.
   *
   * @default 'kyma-system/kyma-gateway'
   */
  readonly gateway?: string;
}

/** A Gateway (or one of its listeners) an HTTPRoute attaches to. */
export interface GatewayParentRef {
  /** The Gateway's name. */
  readonly name: string;
  /**
   * The Gateway's namespace.
   *
   * @default - the Function's namespace
   */
  readonly namespace?: string;
  /**
   * The listener's name.
   *
   * @default - every listener that allows the route
   */
  readonly sectionName?: string;
  /**
   * The listener's port.
   *
   * @default - every port
   */
  readonly port?: number;
}

/** Options of {@link Exposure.gatewayApi}. */
export interface GatewayApiExposureOptions {
  /** The Gateways the HTTPRoute attaches to. */
  readonly parentRefs: GatewayParentRef[];
  /**
   * Whether the gateway terminates TLS for the host: the endpoint's URL is then `https://`.
   *
   * @default true
   */
  readonly tls?: boolean;
}

/** How an endpoint reaches its Functions from outside the cluster. */
export abstract class Exposure {
  /**
   * A VirtualService bound to an Istio Gateway, routing each path to the Function's Service.
   * JWT authentication adds a RequestAuthentication and an AuthorizationPolicy on the Function's
   * Pods. Works wherever the stack works: Function namespaces need Istio anyway.
   *
   * @see https://istio.io/latest/docs/reference/config/networking/virtual-service/
   */
  public static istio(options: IstioExposureOptions): Exposure {
    return new IstioExposure(options);
  }

  /**
   * A Kyma APIRule `gateway.kyma-project.io/v2` (Kyma's API Gateway module), whose controller
   * creates the VirtualService and, for JWT, the policies.
   *
   * @see https://kyma-project.io/#/api-gateway/user/custom-resources/apirule/04-10-apirule-custom-resource
   */
  public static apiRule(options: ApiRuleExposureOptions = {}): Exposure {
    return new ApiRuleExposure(options);
  }

  /**
   * A Gateway API HTTPRoute (`gateway.networking.k8s.io/v1`) attached to Gateways. JWT
   * authentication needs Istio: it adds a RequestAuthentication and an AuthorizationPolicy on
   * the Function's Pods.
   *
   * @see https://gateway-api.sigs.k8s.io/api-types/httproute/
   */
  public static gatewayApi(options: GatewayApiExposureOptions): Exposure {
    return new GatewayApiExposure(options);
  }

  /** What it creates, for messages: `Istio VirtualService`, `APIRule` or `Gateway API HTTPRoute`. */
  public abstract readonly kind: string;

  /** The URL scheme of its endpoints. @internal */
  public abstract readonly _scheme: 'http' | 'https';

  /** The Istio Gateway it binds to, as `namespace/name`, if any. @internal */
  public abstract readonly _gateway?: string;

  /** Problems of a target this exposure cannot serve, each naming the prop. @internal */
  public abstract _problems(target: EndpointTarget): string[];

  /** Creates the objects of an endpoint. @internal */
  public abstract _render(scope: Construct, target: EndpointTarget): IRenderedObject[];
}

type Json = { [key: string]: any };

/** An object checked by a kubernetes-models class (`validate()` throws what is wrong). */
function modelObject(scope: Construct, id: string, Model: new (data: any) => { validate(): void; toJSON(): any }, data: Json): IRenderedObject {
  const apiObject = new ApiObject(scope, id, new Model(data).toJSON());
  return {
    apiObject,
    problems: () => {
      try {
        new Model(apiObject.toJson()).validate();
        return [];
      } catch (e) {
        return [`${apiObject.kind} ${apiObject.name} is invalid: ${(e as Error).message}`];
      }
    },
  };
}

/** An object checked by a validator of `src/api`. */
function ruledObject(scope: Construct, id: string, data: Json, validate: (object: unknown) => Violation[]): IRenderedObject {
  const apiObject = new ApiObject(scope, id, data as any);
  return {
    apiObject,
    problems: () => validate(apiObject.toJson()).map(v => `${apiObject.kind} ${apiObject.name}: ${v.path ? `${v.path}: ` : ''}${v.message}${v.hint ? `; ${v.hint}` : ''}`),
  };
}

function metadata(target: EndpointTarget, name: string, url = true): Json {
  return {
    name,
    namespace: target.namespace,
    labels: { ...target.labels },
    ...(url && target.url ? { annotations: { [URL_ANNOTATION]: target.url } } : {}),
  };
}

const serviceHost = (service: string, namespace: string) => `${service}.${namespace}.svc.cluster.local`;

/** Characters of one path segment and of several, as the APIRule controller writes them into regexes. */
const SEGMENT = '([A-Za-z0-9-._~!$&\'()*+,;=:@]|%[0-9a-fA-F]{2})+';
const SEGMENTS = '([A-Za-z0-9-._~!$&\'()*+,;=:@/]|%[0-9a-fA-F]{2})*';

/** How an Istio VirtualService matches a path of the APIRule grammar. */
function istioUriMatch(path: string): Json {
  if (path === '/*') return { prefix: '/' };
  if (!path.includes('{')) return { exact: path };
  const regex = path.split(/(\{\*\*\}|\{\*\})/).map(part => {
    if (part === '{**}') return SEGMENTS;
    if (part === '{*}') return SEGMENT;
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('');
  return { regex: `^${regex}$` };
}

/** A path of the APIRule grammar as AuthorizationPolicy `paths` take it (Envoy URI templates). */
function policyPath(path: string): string {
  return path === '/*' ? '/{**}' : path;
}

/** The methods CORS allows, when the props name none: those of the paths. */
function corsMethods(target: EndpointTarget): string[] {
  return target.cors?.allowMethods ?? [...new Set(target.paths.flatMap(p => p.methods))];
}

/**
 * The CORS policy of a target, as the Istio VirtualService and the APIRule both spell it; they
 * differ only in how they write maxAge (a duration string, a number of seconds).
 */
function corsPolicyOf(cors: EndpointCors, target: EndpointTarget, maxAge: (seconds: number) => string | number): Json {
  return {
    allowOrigins: cors.allowOrigins.map(o => (o === '*' ? { regex: '.*' } : { exact: o })),
    allowMethods: corsMethods(target),
    ...(cors.allowHeaders ? { allowHeaders: [...cors.allowHeaders] } : {}),
    ...(cors.exposeHeaders ? { exposeHeaders: [...cors.exposeHeaders] } : {}),
    ...(cors.allowCredentials !== undefined ? { allowCredentials: cors.allowCredentials } : {}),
    ...(cors.maxAge ? { maxAge: maxAge(cors.maxAge.toSeconds()) } : {}),
  };
}

function weightedRoute(target: EndpointTarget): Json[] {
  const live = target.backends.filter(b => b.percent > 0);
  return live.map(b => ({
    destination: { host: serviceHost(b.service, target.namespace), port: { number: FUNCTION_SERVICE_PORT } },
    ...(target.backends.length > 1 ? { weight: b.percent } : {}),
  }));
}

/**
 * The RequestAuthentication and AuthorizationPolicy of JWT authentication, one pair per Function:
 * a token of the issuer is checked on every request, and the ALLOW policy admits only requests
 * with one (and its scopes and audiences) on the endpoint's host, paths and methods.
 */
function jwtPolicies(scope: Construct, target: EndpointTarget): IRenderedObject[] {
  const jwt = target.auth.jwt;
  if (!jwt) return [];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RequestAuthentication } = require('@kubernetes-models/istio/security.istio.io/v1/RequestAuthentication');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { AuthorizationPolicy } = require('@kubernetes-models/istio/security.istio.io/v1/AuthorizationPolicy');
  const claims = jwt.requiredScopes?.length ? ['scp', 'scope', 'scopes'] : [undefined];
  return target.workloads.flatMap(workload => {
    const suffix = target.workloads.length > 1 ? `-${workload}` : '';
    const name = `${target.objectName}${suffix}-jwt`;
    const selector = { matchLabels: { [FUNCTION_POD_LABEL]: workload, 'serverless.kyma-project.io/resource': 'deployment' } };
    const authentication: IRequestAuthentication = {
      apiVersion: 'security.istio.io/v1',
      kind: 'RequestAuthentication',
      metadata: metadata(target, name, false),
      spec: {
        selector,
        jwtRules: [{ issuer: jwt.issuer, jwksUri: jwt.jwksUri, ...(jwt.audiences?.length ? { audiences: [...jwt.audiences] } : {}), forwardOriginalToken: true }],
      },
    };
    // One rule per path (methods differ) and per claim the scopes may be in: the rules of one policy are ORed.
    const rules = target.paths.flatMap(p => claims.map(claim => ({
      from: [{ source: { requestPrincipals: [`${jwt.issuer}/*`] } }],
      to: [{ operation: { hosts: [target.host], paths: [policyPath(p.path)], methods: [...p.methods] } }],
      ...(claim || jwt.audiences?.length ? {
        when: [
          ...(claim ? (jwt.requiredScopes ?? []).map(s => ({ key: `request.auth.claims[${claim}]`, values: [s] })) : []),
          ...(jwt.audiences ?? []).map(a => ({ key: 'request.auth.claims[aud]', values: [a] })),
        ],
      } : {}),
    })));
    const policy: IAuthorizationPolicy = {
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: metadata(target, name, false),
      spec: { selector, action: 'ALLOW', rules },
    };
    return [
      modelObject(scope, `RequestAuthentication${suffix}`, RequestAuthentication, authentication),
      modelObject(scope, `AuthorizationPolicy${suffix}`, AuthorizationPolicy, policy),
    ];
  });
}

class IstioExposure extends Exposure {
  public readonly kind = 'Istio VirtualService';
  public readonly _scheme: 'http' | 'https';
  public readonly _gateway: string;

  constructor(private readonly options: IstioExposureOptions) {
    super();
    this._scheme = options.tls === false ? 'http' : 'https';
    this._gateway = options.gateway;
  }

  public _problems(): string[] {
    return gatewayReferenceProblems(this.options.gateway).map(p => `'via' (Exposure.istio, gateway ${JSON.stringify(this.options.gateway)}): ${p}`);
  }

  public _render(scope: Construct, target: EndpointTarget): IRenderedObject[] {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { VirtualService } = require('@kubernetes-models/istio/networking.istio.io/v1beta1/VirtualService');
    const cors = target.cors;
    const service: IVirtualService = {
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'VirtualService',
      metadata: metadata(target, target.objectName),
      spec: {
        hosts: [target.host],
        gateways: [this.options.gateway],
        // In order: the first route that matches wins, as with an APIRule's rules.
        http: target.paths.map(p => ({
          match: [{ uri: istioUriMatch(p.path), method: { regex: `^(${p.methods.join('|')})$` } }],
          route: weightedRoute(target),
          ...(target.timeoutSeconds ? { timeout: `${target.timeoutSeconds}s` } : {}),
          ...(cors ? {
            corsPolicy: corsPolicyOf(cors, target, seconds => `${seconds}s`),
          } : {}),
        })),
      },
    };
    return [modelObject(scope, 'VirtualService', VirtualService, service), ...jwtPolicies(scope, target)];
  }
}

class ApiRuleExposure extends Exposure {
  public readonly kind = 'APIRule';
  public readonly _scheme = 'https';
  public readonly _gateway: string;

  constructor(options: ApiRuleExposureOptions) {
    super();
    this._gateway = options.gateway ?? 'kyma-system/kyma-gateway';
  }

  public _problems(target: EndpointTarget): string[] {
    const problems = gatewayReferenceProblems(this._gateway).map(p => `'via' (Exposure.apiRule, gateway ${JSON.stringify(this._gateway)}): ${p}`);
    if (target.backends.length > 1) {
      problems.push('\'via\' (Exposure.apiRule) cannot expose a traffic split: an APIRule v2 sends each path to one Service, without weights, '
        + 'and cannot target the split\'s Service, which has no selector; use Exposure.istio({ gateway }) or Exposure.gatewayApi({ parentRefs })');
    }
    return problems;
  }

  public _render(scope: Construct, target: EndpointTarget): IRenderedObject[] {
    const jwt = target.auth.jwt;
    const access = jwt ? {
      jwt: {
        authentications: [{ issuer: jwt.issuer, jwksUri: jwt.jwksUri }],
        ...(jwt.requiredScopes?.length || jwt.audiences?.length ? {
          authorizations: [{
            ...(jwt.requiredScopes?.length ? { requiredScopes: [...jwt.requiredScopes] } : {}),
            ...(jwt.audiences?.length ? { audiences: [...jwt.audiences] } : {}),
          }],
        } : {}),
      },
    } : { noAuth: true };
    const cors = target.cors;
    const rule = {
      apiVersion: APIRULE_API_VERSION,
      kind: APIRULE_KIND,
      metadata: metadata(target, target.objectName),
      spec: {
        hosts: [target.host],
        gateway: this._gateway,
        service: { name: target.backends[0].service, namespace: target.namespace, port: FUNCTION_SERVICE_PORT },
        rules: target.paths.map(p => ({ path: p.path, methods: [...p.methods], ...access })),
        ...(target.timeoutSeconds ? { timeout: target.timeoutSeconds } : {}),
        ...(cors ? {
          corsPolicy: corsPolicyOf(cors, target, seconds => seconds),
        } : {}),
      },
    };
    return [ruledObject(scope, 'APIRule', rule, validateApiRule)];
  }
}

/** Gateway API's limits on one HTTPRoute. */
const HTTPROUTE_MAX_RULES = 16;
const HTTPROUTE_MAX_MATCHES = 128;

/** How an HTTPRoute matches a path of the APIRule grammar, or `undefined` when it cannot. */
function gatewayApiPathMatch(path: string): { type: 'Exact' | 'PathPrefix'; value: string } | undefined {
  if (path === '/*') return { type: 'PathPrefix', value: '/' };
  if (!path.includes('{')) return { type: 'Exact', value: path };
  const prefix = path.slice(0, -'/{**}'.length);
  if (path.endsWith('/{**}') && !prefix.includes('{')) return { type: 'PathPrefix', value: prefix || '/' };
  return undefined;
}

class GatewayApiExposure extends Exposure {
  public readonly kind = 'Gateway API HTTPRoute';
  public readonly _scheme: 'http' | 'https';
  public readonly _gateway = undefined;

  constructor(private readonly options: GatewayApiExposureOptions) {
    super();
    this._scheme = options.tls === false ? 'http' : 'https';
  }

  public _problems(target: EndpointTarget): string[] {
    const problems: string[] = [];
    if (this.options.parentRefs.length === 0) problems.push('\'via\' (Exposure.gatewayApi) has no parentRefs: name at least one Gateway');
    this.options.parentRefs.forEach((ref, i) => {
      if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(ref.name)) problems.push(`'via' (Exposure.gatewayApi, parentRefs[${i}].name ${JSON.stringify(ref.name)}) must be a Gateway's name`);
      if (ref.namespace !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ref.namespace)) {
        problems.push(`'via' (Exposure.gatewayApi, parentRefs[${i}].namespace ${JSON.stringify(ref.namespace)}) must be a namespace's name`);
      }
      if (ref.port !== undefined && (!Number.isInteger(ref.port) || ref.port < 1 || ref.port > 65535)) {
        problems.push(`'via' (Exposure.gatewayApi, parentRefs[${i}].port ${ref.port}) must be a port number from 1 to 65535`);
      }
    });
    target.paths.forEach((p, i) => {
      if (!gatewayApiPathMatch(p.path)) {
        problems.push(`'paths[${i}].path' (${p.path}) cannot be matched by a Gateway API HTTPRoute, which knows exact paths and prefixes only: `
          + 'use /*, an exact path, or a prefix such as /orders/{**}; or Exposure.istio for segment wildcards');
      }
    });
    if (target.paths.length > HTTPROUTE_MAX_RULES) {
      problems.push(`'paths' has ${target.paths.length} paths; an HTTPRoute holds at most ${HTTPROUTE_MAX_RULES}: merge paths, or use Exposure.istio`);
    }
    const matches = target.paths.reduce((n, p) => n + p.methods.length, 0);
    if (matches > HTTPROUTE_MAX_MATCHES) {
      problems.push(`'paths' make ${matches} matches (one per path and method); an HTTPRoute holds at most ${HTTPROUTE_MAX_MATCHES}: name fewer methods`);
    }
    if (target.cors) {
      problems.push('\'cors\' is not available with Exposure.gatewayApi: the Gateway API release this package validates against has no CORS filter; '
        + 'use Exposure.istio or Exposure.apiRule, or configure CORS in your gateway');
    }
    return problems;
  }

  public _render(scope: Construct, target: EndpointTarget): IRenderedObject[] {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { HTTPRoute } = require('@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute');
    const live = target.backends.filter(b => b.percent > 0);
    const route: IHTTPRoute = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: metadata(target, target.objectName),
      spec: {
        parentRefs: this.options.parentRefs.map(ref => ({
          group: 'gateway.networking.k8s.io',
          kind: 'Gateway',
          name: ref.name,
          ...(ref.namespace ? { namespace: ref.namespace } : {}),
          ...(ref.sectionName ? { sectionName: ref.sectionName } : {}),
          ...(ref.port ? { port: ref.port } : {}),
        })),
        hostnames: [target.host],
        rules: target.paths.map(p => ({
          matches: p.methods.map(method => ({ path: gatewayApiPathMatch(p.path)!, method })),
          backendRefs: live.map(b => ({ name: b.service, port: FUNCTION_SERVICE_PORT, ...(target.backends.length > 1 ? { weight: b.percent } : {}) })),
          ...(target.timeoutSeconds ? { timeouts: { request: `${target.timeoutSeconds}s` } } : {}),
        })),
      },
    };
    return [modelObject(scope, 'HTTPRoute', HTTPRoute, route), ...jwtPolicies(scope, target)];
  }
}
