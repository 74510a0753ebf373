/**
 * FunctionEndpoint: a Function (or a traffic split) reachable over HTTP from outside the cluster,
 * with the paths, methods, authentication, CORS and timeout `expose()` was given.
 */
import { Duration } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { endpointPathProblems, hostProblems, jwtIssuerProblems, jwtIssuerSchemeProblems, pathConflicts, uriProblems } from '../api/apirule-rules';
import { HttpMethod } from '../api/apirule-schema';
import { EndpointAuth, EndpointCors, JwtAuthOptions } from '../exposure/endpoint-auth';
import { EndpointTarget, Exposure, IRenderedObject } from '../exposure/exposure';
import { exposureDefaultsOf } from '../exposure/exposure-defaults';
import { DECLARED_IN_METADATA, declaredProblems } from './_declared';

/** The methods a path allows when it names none. */
export const DEFAULT_METHODS: readonly HttpMethod[] = [
  HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.DELETE, HttpMethod.HEAD,
];

/** The path of an endpoint when it names none: every path. */
export const ALL_PATHS = '/*';

/** One path of an endpoint and the methods it allows. */
export interface EndpointPath {
  /**
   * The path, as Kyma's APIRule v2 writes them: `/orders` (exactly that path), `/orders/{*}` (one
   * more segment), `/orders/{**}` (any number of segments; last, and once), or `/*` (every path).
   * Paths are matched in the order given: the first that matches wins, so put specific paths first.
   *
   * @see https://kyma-project.io/#/api-gateway/user/custom-resources/apirule/04-10-apirule-custom-resource
   */
  readonly path: string;
  /**
   * The methods it allows; others get 403 (APIRule) or 404.
   *
   * @default - GET, POST, PUT, PATCH, DELETE and HEAD
   */
  readonly methods?: HttpMethod[];
}

/** Options of `expose()`. */
export interface ExposeOptions {
  /**
   * The host name: a full one (`orders.example.com`), or a short one (`orders`) that is completed
   * with the stack's exposure domain (`ServerlessStack`'s `exposure.domain`).
   */
  readonly host: string;
  /**
   * The paths served, with their methods, first match wins.
   *
   * @default - every path (`/*`) with GET, POST, PUT, PATCH, DELETE and HEAD
   */
  readonly paths?: EndpointPath[];
  /**
   * Who may call. Required: `EndpointAuth.jwt({...})` for anything public, or an explicit
   * `EndpointAuth.none()`.
   *
   * @default - none: synth fails and asks for one
   */
  readonly auth?: EndpointAuth;
  /**
   * CORS for browsers (not with `Exposure.gatewayApi`).
   *
   * @default - no CORS headers
   */
  readonly cors?: EndpointCors;
  /**
   * How long a request may take before the gateway answers 504.
   *
   * @default - the gateway's default (180 s for an APIRule, none for Istio and Gateway API)
   */
  readonly timeout?: Duration;
  /**
   * How the endpoint is exposed.
   *
   * @default - the stack's `exposure.via`; without one, synth fails and asks for it
   */
  readonly via?: Exposure;
}

/** Something that can be exposed: a Function, or a traffic split between Functions. */
export interface IExposable extends IConstruct {
  /** The name of the objects its endpoints are named after. */
  readonly name: string;
  /**
   * The backends and workloads of an endpoint.
   *
   * @internal
   */
  _endpointTarget(): Pick<EndpointTarget, 'namespace' | 'backends' | 'workloads' | 'labels'>;
}

/** Props of {@link FunctionEndpoint}. */
export interface FunctionEndpointProps extends ExposeOptions {
  /** What is exposed. */
  readonly target: IExposable;
  /**
   * Name of the objects of the endpoint (APIRule, VirtualService, HTTPRoute and policies).
   *
   * @default - the target's name
   */
  readonly name?: string;
}


/**
 * An HTTP endpoint of a Function or of a traffic split, through the Istio ingress gateway
 * (`Exposure.istio`), Kyma's API Gateway (`Exposure.apiRule`) or a Gateway API implementation
 * (`Exposure.gatewayApi`). Create it with `fn.expose()` or `traffic.expose()`.
 *
 * Problems of the props are reported at synth, all together, each naming the prop.
 */
export class FunctionEndpoint extends Construct {
  /** The URL of the endpoint, such as `https://orders.example.com`. */
  public readonly url: string;
  /** The full host name. */
  public readonly host: string;
  /** How it is exposed. */
  public readonly via?: Exposure;
  /** The objects it consists of. */
  public readonly objects: IRenderedObject[];
  /**
   * Whether the endpoint puts an ALLOW AuthorizationPolicy on its Functions' Pods (an APIRule
   * always does; Istio and Gateway API with JWT), so that they refuse requests it does not admit,
   * from inside the cluster too.
   */
  public readonly restrictsCallers: boolean;

  private readonly problems: string[] = [];

  constructor(scope: Construct, id: string, props: FunctionEndpointProps) {
    super(scope, id);
    const defaults = exposureDefaultsOf(props.target);
    this.via = props.via ?? defaults.via;
    const problems = this.problems;

    // Without `via`, the problem is told at synth, in the words of where the endpoint was declared (code, or a function.yaml).
    this.host = this.fullHost(props.host, defaults.domain);
    // Browsers send CORS preflights as OPTIONS: with `cors`, every path allows it.
    const withPreflight = (methods: readonly HttpMethod[]) => (props.cors && !methods.includes(HttpMethod.OPTIONS) ? [...methods, HttpMethod.OPTIONS] : [...methods]);
    const paths = (props.paths ?? [{ path: ALL_PATHS }]).map(p => ({ path: p.path, methods: withPreflight(p.methods ?? DEFAULT_METHODS) }));
    if (props.paths && props.paths.length === 0) problems.push('\'paths\' is empty: give at least one path, or leave it out to serve every path');
    paths.forEach((p, i) => {
      for (const problem of endpointPathProblems(p.path)) problems.push(`'paths[${i}].path' (${p.path}): ${problem}`);
      if (props.paths?.[i].methods?.length === 0) problems.push(`'paths[${i}].methods' is empty: give at least one method, or leave it out for the default ones`);
      const seen = new Set<string>();
      for (const method of p.methods) {
        if (seen.has(method)) problems.push(`'paths[${i}].methods' names ${method} twice: give each method once`);
        seen.add(method);
      }
    });
    // First match wins: a path an earlier one already matches for a method never applies to it.
    for (const conflict of pathConflicts(paths)) {
      problems.push(`'paths[${conflict.index}]' (${paths[conflict.index].path}, ${conflict.method}) is matched by an earlier path first: put specific paths before general ones, or drop it`);
    }
    const auth = props.auth?._config;
    if (!auth) {
      problems.push('\'auth\' is not set: give EndpointAuth.jwt({ issuer, jwksUri }) for anything public, '
        + 'or EndpointAuth.none() to expose the Function without authentication');
    }
    if (auth?.jwt) this.checkJwt(auth.jwt);
    if (props.cors) this.checkCors(props.cors);
    let timeoutSeconds: number | undefined;
    if (props.timeout) {
      timeoutSeconds = props.timeout.toSeconds();
      if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 3900) {
        problems.push(`'timeout' (${timeoutSeconds} s) must be a whole number of seconds from 1 to 3900`);
      }
    }

    const name = props.name ?? props.target.name;
    const target: EndpointTarget = {
      ...props.target._endpointTarget(),
      objectName: name,
      host: this.host,
      paths,
      auth: auth ?? {},
      cors: props.cors,
      timeoutSeconds,
    };
    this.restrictsCallers = this.via?.kind === 'APIRule' || auth?.jwt !== undefined;
    const url = `${this.via?._scheme ?? 'https'}://${this.host}`;
    this.url = url;
    if (this.via) problems.push(...this.via._problems(target));
    // Rendered only when the props hold together; synth fails on the problems anyway.
    this.objects = problems.length || !this.via ? [] : this.via._render(this, { ...target, url });
    this.node.addValidation({
      validate: () => declaredProblems(this, [...(this.via ? [] : [this.viaProblem()]), ...this.problems, ...this.objects.flatMap(o => o.problems())]),
    });
  }

  /** That no `via` is given and the stack has no default: in TypeScript, or in the YAML of the file the endpoint was declared in. */
  private viaProblem(): string {
    const inFile = this.node.metadata.some(m => m.type === DECLARED_IN_METADATA);
    return '\'via\' is not set, and the stack sets no default: ' + (inFile
      ? 'give one of `via: { istio: { gateway: istio-system/kyma-gateway } }`, `via: { apiRule: {} }` '
        + 'or `via: { gatewayApi: { parentRefs: [{ name: web, namespace: gateways }] } }` under expose, '
      : 'give Exposure.istio({ gateway }), Exposure.apiRule({ gateway }) or Exposure.gatewayApi({ parentRefs }), ')
      + 'or the ServerlessStack prop exposure: { via, domain }';
  }

  /** The host completed with the stack's domain when it is a short one. */
  private fullHost(host: string, domain: string | undefined): string {
    if (host.includes('.') || host.startsWith('*')) {
      for (const problem of hostProblems(host)) this.problems.push(`'host' (${host}): ${problem}`);
      return host;
    }
    if (!domain) {
      this.problems.push(`'host' (${host}) is a short name and the stack sets no exposure domain: give a full host name, such as ${host}.example.com, `
        + 'or the ServerlessStack prop exposure: { via, domain }');
      return host;
    }
    const full = `${host}.${domain}`;
    for (const problem of hostProblems(full)) this.problems.push(`'host' (${host}, completed to ${full}): ${problem}`);
    return full;
  }

  private checkJwt(jwt: JwtAuthOptions): void {
    // Named as EndpointAuth.jwt({ ... }) and function.yaml's `auth: { jwt: { ... } }` both have them.
    for (const problem of [...jwtIssuerProblems(jwt.issuer), ...jwtIssuerSchemeProblems(jwt.issuer)]) {
      this.problems.push(`'auth.jwt.issuer' (${JSON.stringify(jwt.issuer)}): ${problem}`);
    }
    for (const problem of uriProblems(jwt.jwksUri)) {
      const hint = /^[^:/]+\.[^:/]+\//.test(jwt.jwksUri) ? `: give the full URL, such as https://${jwt.jwksUri}` : '';
      this.problems.push(`'auth.jwt.jwksUri' (${JSON.stringify(jwt.jwksUri)}): ${problem}${hint}`);
    }
    for (const [prop, values] of [['requiredScopes', jwt.requiredScopes], ['audiences', jwt.audiences]] as const) {
      if (values && values.length === 0) this.problems.push(`'auth.jwt.${prop}' is empty: leave it out, or give at least one value`);
      values?.forEach((v, i) => {
        if (v.trim() === '') this.problems.push(`'auth.jwt.${prop}[${i}]' is blank: give a value`);
      });
    }
  }

  private checkCors(cors: EndpointCors): void {
    if (cors.allowOrigins.length === 0) this.problems.push('\'cors.allowOrigins\' is empty: name at least one origin, such as https://shop.example.com');
    cors.allowOrigins.forEach((origin, i) => {
      if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
        this.problems.push(`'cors.allowOrigins[${i}]' (${origin}) must be an origin (scheme and host, such as https://shop.example.com, no path) or *`);
      }
    });
    if (cors.allowCredentials && cors.allowOrigins.includes('*')) {
      this.problems.push('\'cors.allowCredentials\' cannot be true with the origin *: browsers refuse credentials for any origin; name the origins');
    }
    if (cors.maxAge !== undefined) {
      const seconds = cors.maxAge.toSeconds();
      if (!Number.isInteger(seconds) || seconds < 1) this.problems.push(`'cors.maxAge' (${seconds} s) must be a whole number of seconds, at least 1`);
    }
  }
}
