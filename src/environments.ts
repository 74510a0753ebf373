/**
 * The environments this repository's app synthesizes: the default stack into dist/, and a dev
 * and a prod variant into dist/dev/ and dist/prod/. Each is plain, typed data.
 */
import { Size } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { BuildProfile, FunctionProfile } from './api';
import { GitOpsEnvironment } from './gitops/environment';
import { LogLevel } from './stack/controller';
import { Registry } from './stack/registry';

export const ENVIRONMENTS: readonly GitOpsEnvironment[] = [
  // The default stack, as upstream's chart installs it.
  { name: '' },
  // Small clusters: small presets, one controller, a small internal registry, debug logs.
  {
    name: 'dev',
    stack: {
      defaultFunctionPreset: FunctionProfile.XS,
      defaultBuildPreset: BuildProfile.LOCAL_DEV,
      registry: Registry.internal({ storageSize: Size.gibibytes(5) }),
      logLevel: LogLevel.DEBUG,
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
    },
    functionNamespaceQuota: { requestsCpu: Cpu.units(8), limitsMemory: Size.gibibytes(32), pods: 100 },
  },
];
