/**
 * The stack's exposure defaults: how Functions are exposed when `expose()` names no `via`, the
 * domain short host names are completed with, and optionally the Istio Gateway for that domain.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { ICertificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import type { IGateway } from '@kubernetes-models/istio/networking.istio.io/v1beta1/Gateway';
// Types only: the APIRule rules load when a stack has exposure options to check.
import type * as ApiRuleRules from '../api/apirule-rules';
import { Exposure } from '../exposure/exposure';
import { CertManagerIssuer, CertManagerIssuerKind } from './webhook';

/** Options of {@link GatewayTls.certManager}. */
export interface GatewayCertManagerOptions {
  /** The issuer of the certificate; a wildcard certificate usually needs an ACME DNS-01 solver. */
  readonly issuer: CertManagerIssuer;
}

/** Where the gateway's TLS certificate comes from. */
export abstract class GatewayTls {
  /**
   * An existing Secret of type `kubernetes.io/tls` in the ingress gateway's namespace.
   *
   * @param secretName its name
   */
  public static fromSecret(secretName: string): GatewayTls {
    return new SecretTls(secretName);
  }

  /**
   * A cert-manager `Certificate` for `*.<domain>` (and the domain itself), in the ingress
   * gateway's namespace, whose Secret the gateway uses. cert-manager must be installed.
   */
  public static certManager(options: GatewayCertManagerOptions): GatewayTls {
    return new CertManagerTls(options);
  }

  /** The Secret's name, creating what makes it. @internal */
  public abstract _bind(scope: Construct, gatewayName: string, namespace: string, domain: string): string;
}

class SecretTls extends GatewayTls {
  constructor(private readonly secretName: string) {
    super();
  }

  public _bind(): string {
    return this.secretName;
  }
}

class CertManagerTls extends GatewayTls {
  constructor(private readonly options: GatewayCertManagerOptions) {
    super();
  }

  public _bind(scope: Construct, gatewayName: string, namespace: string, domain: string): string {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Certificate } = require('@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate');
    const secretName = `${gatewayName}-tls`;
    const certificate: ICertificate = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: gatewayName, namespace },
      spec: {
        secretName,
        dnsNames: [`*.${domain}`, domain],
        issuerRef: { group: 'cert-manager.io', kind: this.options.issuer.kind ?? CertManagerIssuerKind.ISSUER, name: this.options.issuer.name },
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      },
    };
    const model = new Certificate(certificate);
    model.validate();
    new ApiObject(scope, 'Certificate', model.toJSON());
    return secretName;
  }
}

/** The Istio Gateway the stack creates for its exposure domain. */
export interface ExposureGatewayOptions {
  /** Where its TLS certificate comes from. */
  readonly tls: GatewayTls;
  /**
   * Labels of the ingress gateway Pods it configures.
   *
   * @default { istio: 'ingressgateway' }
   */
  readonly selector?: { readonly [key: string]: string };
  /**
   * The namespace of those Pods, where Istio reads the TLS Secret.
   *
   * @default 'istio-system'
   */
  readonly ingressNamespace?: string;
}

/** The `exposure` prop of a ServerlessStack. */
export interface StackExposureOptions {
  /**
   * How Functions are exposed when `expose()` names no `via`, such as
   * `Exposure.apiRule({ gateway: 'kyma-system/kyma-gateway' })` in a Kyma cluster.
   */
  readonly via: Exposure;
  /**
   * The domain short host names are completed with: `expose({ host: 'orders' })` answers at
   * `orders.<domain>`. The gateway must serve `*.<domain>`.
   */
  readonly domain: string;
  /**
   * Also create the Istio Gateway `via` binds to, serving HTTPS for `*.<domain>` and redirecting
   * HTTP to it.
   *
   * @default - none: the gateway exists already (Kyma's kyma-system/kyma-gateway does)
   */
  readonly gateway?: ExposureGatewayOptions;
}

/** Props of {@link ExposureGateway}: a stack's `exposure` that creates its Gateway. */
export interface ExposureGatewayProps {
  /** How Functions are exposed: `Exposure.istio` or `Exposure.apiRule`, whose gateway this creates. */
  readonly via: Exposure;
  /** The domain the Gateway serves `*.<domain>` of. */
  readonly domain: string;
  /** The Gateway to create. */
  readonly gateway: ExposureGatewayOptions;
}

/**
 * The Istio Gateway of the stack's exposure domain: HTTPS on 443 for `*.<domain>` with the
 * certificate of `tls`, and HTTP on 80 redirecting to it.
 */
export class ExposureGateway extends Construct {
  /** The Gateway's `namespace/name`. */
  public readonly reference: string;

  constructor(scope: Construct, id: string, exposure: ExposureGatewayProps) {
    super(scope, id);
    const reference = exposure.via._gateway;
    if (!reference) {
      throw new Error(`'exposure.gateway' creates an Istio Gateway, which ${exposure.via.kind} does not bind to: `
        + 'use Exposure.istio or Exposure.apiRule as exposure.via, or create your Gateway API Gateway yourself');
    }
    const [namespace, name] = reference.split('/');
    this.reference = reference;
    const ingressNamespace = exposure.gateway.ingressNamespace ?? 'istio-system';
    const credentialName = exposure.gateway.tls._bind(this, name, ingressNamespace, exposure.domain);
    const hosts = [`*.${exposure.domain}`];
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Gateway } = require('@kubernetes-models/istio/networking.istio.io/v1beta1/Gateway');
    const gateway: IGateway = {
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'Gateway',
      metadata: { name, namespace },
      spec: {
        selector: { ...(exposure.gateway.selector ?? { istio: 'ingressgateway' }) },
        servers: [
          { port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts, tls: { mode: 'SIMPLE', credentialName } },
          { port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts, tls: { httpsRedirect: true } },
        ],
      },
    };
    const model = new Gateway(gateway);
    model.validate();
    new ApiObject(this, 'Resource', model.toJSON());
  }
}

/**
 * The problems of a stack's `exposure` prop, each naming it.
 *
 * @returns one message per problem
 */
export function exposureProblems(exposure: StackExposureOptions): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { hostProblems } = require('../api/apirule-rules') as typeof ApiRuleRules;
  const problems = hostProblems(`*.${exposure.domain}`).map(p => `'exposure.domain' (${exposure.domain}): ${p}`);
  if (exposure.domain.startsWith('*.')) problems.push(`'exposure.domain' (${exposure.domain}) must be the domain itself, without '*.'`);
  return problems;
}
