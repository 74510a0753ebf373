/**
 * Who may call an endpoint (`EndpointAuth`) and which browsers may call it from other origins
 * (`EndpointCors`): what every way of exposing renders, whatever exposes it.
 */
import { Duration } from 'cdk8s';
import { HttpMethod } from '../api';

/** Options of {@link EndpointAuth.jwt}. */
export interface JwtAuthOptions {
  /** The token issuer (`iss`), such as `https://login.example.com`. */
  readonly issuer: string;
  /** Where the issuer publishes its signing keys (JWKS). */
  readonly jwksUri: string;
  /**
   * Scopes a token must all carry (in its `scp`, `scope` or `scopes` claim).
   *
   * @default - none: any valid token of the issuer
   */
  readonly requiredScopes?: string[];
  /**
   * Audiences a token must all name in its `aud` claim.
   *
   * @default - none
   */
  readonly audiences?: string[];
}

/** What {@link EndpointAuth} holds. @internal */
export interface EndpointAuthConfig {
  readonly jwt?: JwtAuthOptions;
}

/**
 * Who may call an endpoint. There is no default: a public endpoint without authentication must
 * be asked for with `EndpointAuth.none()`.
 */
export abstract class EndpointAuth {
  /**
   * No authentication: anyone who reaches the host may call the endpoint. Use it only for
   * Functions meant to be public, such as a web hook receiver that checks signatures itself.
   */
  public static none(): EndpointAuth {
    return new ConfiguredAuth({});
  }

  /**
   * A valid JSON Web Token of the issuer (header `Authorization: Bearer <token>`), checked by the
   * Istio sidecar of the Function; requests without one, or with an invalid one, get 403.
   *
   * @see https://kyma-project.io/#/api-gateway/user/expose-workloads/jwt/README
   */
  public static jwt(options: JwtAuthOptions): EndpointAuth {
    return new ConfiguredAuth({ jwt: options });
  }

  /** @internal */
  public abstract readonly _config: EndpointAuthConfig;
}

class ConfiguredAuth extends EndpointAuth {
  constructor(public readonly _config: EndpointAuthConfig) {
    super();
  }
}

/** Cross-origin resource sharing for browsers calling an endpoint from other origins. */
export interface EndpointCors {
  /** Origins allowed to call, exactly as browsers send them, such as `https://shop.example.com`. */
  readonly allowOrigins: string[];
  /**
   * Methods allowed across origins.
   *
   * @default - the methods of the endpoint's paths
   */
  readonly allowMethods?: HttpMethod[];
  /**
   * Request headers allowed across origins.
   *
   * @default - none beyond the CORS-safelisted ones
   */
  readonly allowHeaders?: string[];
  /**
   * Response headers the browser may show to the calling page.
   *
   * @default - none beyond the CORS-safelisted ones
   */
  readonly exposeHeaders?: string[];
  /**
   * Whether requests may carry credentials (cookies, `Authorization`).
   *
   * @default false
   */
  readonly allowCredentials?: boolean;
  /**
   * How long a browser may cache the answer to a preflight request.
   *
   * @default - the browser's default
   */
  readonly maxAge?: Duration;
}
