/**
 * The environments this repository's app synthesizes: the default stack into dist/, and a dev
 * and a prod variant into dist/dev/ and dist/prod/. Each is plain, typed data.
 *
 * Functions are exposed through Kyma's APIRule on open-source Kyma's domain by default and in
 * dev, and through the stack's own Istio Gateway with a cert-manager certificate in prod.
 */
import { Size } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { BuildProfile, FunctionProfile } from './api';
import { Exposure } from './exposure/exposure';
import { GitOpsEnvironment } from './gitops/environment';
import { GatewayTls } from './stack/exposure';
import { CertManagerIssuerKind } from './stack/webhook';
import { LogLevel } from './log-level';
import { Registry } from './stack/registry';

/** Kyma's own gateway and the domain open-source Kyma serves (`*.local.kyma.dev`). */
const KYMA_EXPOSURE = { via: Exposure.apiRule({ gateway: 'kyma-system/kyma-gateway' }), domain: 'local.kyma.dev' };

export const ENVIRONMENTS: readonly GitOpsEnvironment[] = [
  // The default stack, as upstream's chart installs it, exposing Functions the Kyma way.
  { name: '', stack: { exposure: KYMA_EXPOSURE } },
  // Small clusters: small presets, one controller, a small internal registry, debug logs.
  {
    name: 'dev',
    stack: {
      defaultFunctionPreset: FunctionProfile.XS,
      defaultBuildPreset: BuildProfile.LOCAL_DEV,
      registry: Registry.internal({ storageSize: Size.gibibytes(5) }),
      logLevel: LogLevel.DEBUG,
      exposure: KYMA_EXPOSURE,
    },
  },
  // Production: an external registry, two controllers, network policies, bounded namespaces.
  {
    name: 'prod',
    stack: {
      defaultFunctionPreset: FunctionProfile.M,
      defaultBuildPreset: BuildProfile.FAST,
      controller: { replicas: 2 },
      registry: Registry.external({ secretName: 'serverless-registry-config-default' }),
      networkPolicies: true,
      // The stack's own gateway for *.functions.example.com, its certificate from Let's Encrypt.
      exposure: {
        via: Exposure.istio({ gateway: 'istio-system/functions' }),
        domain: 'functions.example.com',
        gateway: { tls: GatewayTls.certManager({ issuer: { name: 'letsencrypt-dns', kind: CertManagerIssuerKind.CLUSTER_ISSUER } }) },
      },
    },
    functionNamespaceQuota: { requestsCpu: Cpu.units(8), limitsMemory: Size.gibibytes(32), pods: 100 },
  },
];
