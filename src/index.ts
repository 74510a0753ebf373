/**
 * `cdk8s-kyma-serverless`: what a cdk8s app calls to deploy the Kyma Serverless stack and declare
 * Functions. The constructs, their props and options, the enum-like classes and factories, and the
 * few helpers the docs show; nothing else. The Function API behind them (validator, schemas, rule
 * tables, release facts) is `cdk8s-kyma-serverless/api`; the test kit for handlers is
 * `cdk8s-kyma-serverless/testing`. api-report/ lists every exported name of each entry.
 */

import { _compileFromCodeCache } from './_code-cache';

// The modules below compile from the code cache, once a first load wrote it (src/_code-cache.ts).
// In the built package each loads when one of its names is first read (scripts/lazy-entry.ts).
const compiledFromCodeCache = _compileFromCodeCache(__filename);

// The stack (L3) and its parts.
export { ServerlessStack, ServerlessStackProps } from './stack/serverless-stack';
// Names of the Function API the constructs' props take, each from its own module: the whole API
// (`cdk8s-kyma-serverless/api`) would load the rules of every kind with the first of them.
export { ServerlessRelease } from './api/release';
export { BuildProfile, FunctionProfile } from './api/profiles';
export { ResourcePreset } from './api/presets';
export { HttpMethod } from './api/apirule-schema';
export { TypeMatching } from './api/subscription-schema';
export { RuntimeFamily, RuntimeFiles } from './api/runtimes';
export { FunctionDefaults } from './api/function-defaults';
export { ContainerResources } from './stack/container-resources';
export { AlertThresholds } from './stack/alert-thresholds';
export { LogLevel } from './log-level';
export { FunctionController, FunctionControllerOptions, FunctionControllerProps, IFunctionController, LogFormat } from './stack/controller';
export { BuildlessFunctionController, BuildlessFunctionControllerProps } from './stack/buildless-controller';
export { ServerlessImages, ResolvedImages } from './stack/images';
export { FunctionRuntimes, FunctionRuntimesProps } from './stack/runtimes';
export { Registry, RegistryCredentials, ExternalRegistryOptions, InternalRegistryOptions } from './stack/registry';
export {
  AdmissionWebhook, AdmissionWebhookOptions, AdmissionWebhookProps, WebhookCertificates, CertManagerCertificatesOptions, CertManagerIssuer,
  CertManagerIssuerKind, SelfManagedCertificatesOptions,
} from './stack/webhook';
export { SelfManagedTlsConfig, WebhookConfig } from './webhook/config';
export {
  ServerlessMonitoring, ServerlessMonitoringProps, MonitoringOptions, MonitoringAlertOptions, MonitoringDashboardOptions, RegistryMetricsTarget,
} from './stack/monitoring';
export { ServerlessNetworkPolicies, ServerlessNetworkPoliciesProps, PrometheusScrapingOptions } from './stack/network-policies';
export { GatewayTls, GatewayCertManagerOptions, ExposureGateway, ExposureGatewayOptions, ExposureGatewayProps, StackExposureOptions } from './stack/exposure';

// Function namespaces.
export {
  FunctionNamespace, FunctionNamespaceProps, FunctionNamespaceQuota, MaxContainerResources, FunctionEgressOptions, EgressDestination, PackageRegistry, PodSecurityLevel,
} from './namespace/function-namespace';

// Functions (L2) and how they are reached, triggered and scaled.
export { KymaFunction, KymaFunctionProps, FunctionScale, SecretMount } from './function/kyma-function';
export { FunctionRuntime } from './function/runtime';
export {
  FunctionSource, FunctionSourceConfig, GitAuthType, GitRepositoryAuth, GitRepositorySourceOptions, InlineSourceConfig, GitRepositorySourceConfig,
  GitRepositoryAuthConfig,
} from './function/source';
export { FunctionResources, BuildResources, ResourceConfiguration, ResourceQuantities } from './function/resources';
export { FunctionFolder, FunctionFolderSettings, ExposeSettings, KedaSettings, KedaTriggerSettings } from './function/function-folder';
export { FunctionEndpoint, FunctionEndpointProps, ExposeOptions, EndpointPath, IExposable } from './function/endpoint';
export {
  Exposure, IstioExposureOptions, ApiRuleExposureOptions, GatewayApiExposureOptions, GatewayParentRef, IRenderedObject, RenderedObject,
} from './exposure/exposure';
export { EndpointAuth, JwtAuthOptions, EndpointCors } from './exposure/endpoint-auth';
export { FunctionSubscription, FunctionSubscriptionProps, SubscribeOptions } from './function/subscription';
export {
  FunctionScaledObject, FunctionScaledObjectProps, KedaTrigger, KedaScaleOptions, CpuTriggerOptions, CronTriggerOptions, PrometheusTriggerOptions,
} from './function/keda';
export { FunctionTraffic, FunctionTrafficProps, TrafficRoute } from './function/traffic';

// GitOps: the app, environments, Argo CD and Flux objects.
export { GitOpsApp, GitOpsAppProps } from './gitops/gitops-app';
export { IAppliedAfter } from './namespace/applied-after';
export { GitOpsEnvironment, environmentOutdir } from './gitops/environment';
export { SyncWave } from './gitops/sync-waves';
export {
  ArgoCdApplication, ArgoCdApplicationProps, ArgoCdApplicationSet, ArgoCdApplicationSetProps, ArgoCdCluster, ArgoCdSyncOptions, ArgoCdSyncPolicyOptions, GitRevisionOptions, GitSourceOptions,
  ARGO_CD_FUNCTION_HEALTH_KEY, ARGO_CD_FUNCTION_HEALTH_LUA, RUNTIME_IGNORE_DIFFERENCES, ArgoCdHealthChecks, ArgoCdHealthChecksProps, ARGO_CD_CONFIG_MAP,
} from './gitops/argo-cd';
export { FluxHealthCheck, fluxHealthChecks, argoCdHealthLua, argoCdHealthKey } from './gitops/health';
export {
  FluxGitRepository, FluxGitRepositoryProps, FluxKustomization, FluxKustomizationProps, FluxKustomizationStages, FluxKustomizationStagesProps, FluxSyncOptions, FLUX_FUNCTION_HEALTH_CHECK,
} from './gitops/flux';
export { FluxStage, FLUX_STAGES_FOLDER } from './gitops/flux-stages';

// Policies the output keeps, and the opt-ins a user writes on their own objects.
export { PolicyRuleId, PolicyException, policyExceptions } from './policy/policy';
export { allowReplacement } from './policy/replacement';

compiledFromCodeCache();
