/**
 * `cdk8s-kyma-serverless/api`: the Function API for users' own tools and policy code. The checks
 * synth, the admission webhook and `kyma-serverless validate` run on Functions, APIRules and
 * Subscriptions; the schemas and the CRD they come from; the rule tables; release, runtime and
 * status facts; the names and labels of the objects. Nothing else: the helpers that the constructs,
 * the command line, the webhook and the local runtime share live in their own files of src/api/,
 * and those import them from there. api-report/ lists every exported name.
 */

// Checking a Function: every rule of a release, the warnings, the handler code, Services that take its name.
export {
  validateFunction, validateFunctionBounded, BoundedViolations, FunctionRuleOptions, functionWarnings, FUNCTION_WARNINGS, functionServiceClashes,
  FunctionServiceClash,
} from './function-rules';
export { handlerCodeViolations, ACCEPT_WARNINGS_ANNOTATION, HandlerWarning } from './handler-code';
export { Violation, describeViolation, formatViolations } from './validator';
export { MinimumRequest } from './profiles';

// Checking APIRules and Subscriptions, and their shapes.
export { validateApiRule, apiRuleSchemaValidator, APIRULE_RULES } from './apirule-rules';
export {
  apiRuleSchema, ApiRule, ApiRuleSpec, ApiRuleRule, ApiRuleService, ApiRuleJwt, ApiRuleJwtAuthentication, ApiRuleJwtAuthorization, ApiRuleJwtHeader,
  ApiRuleCorsPolicy, ApiRuleStringMatch, ApiRuleExtAuth, ApiRuleRequest, ApiRuleState, HttpMethod, HTTP_METHODS, APIRULE_API_VERSION, APIRULE_GROUP,
  APIRULE_KIND, APIRULE_VERSION,
} from './apirule-schema';
export { validateSubscription, subscriptionSchemaValidator, SubscriptionRuleOptions, SUBSCRIPTION_RULES } from './subscription-rules';
export {
  subscriptionSchema, Subscription, SubscriptionSpec, SubscriptionConfig, TypeMatching, SUBSCRIPTION_API_VERSION, SUBSCRIPTION_GROUP,
  SUBSCRIPTION_KIND, SUBSCRIPTION_VERSION,
} from './subscription-schema';

// Defaults: what the webhook fills in.
export { defaultFunction, FunctionDefaults, DEFAULT_FUNCTION_DEFAULTS } from './function-defaults';

// The Function API's schema, its CRD, and the validator of any structural schema.
export { functionSchema, FUNCTION_API_VERSION, FUNCTION_GROUP, FUNCTION_KIND, FUNCTION_VERSION } from './function-schema';
export { functionSchemaValidator } from './function-validator';
export { SchemaValidator, SchemaValidatorOptions, SchemaCheck } from './validator';
export { JsonSchemaProps, ValidationRule, QUANTITY_PATTERN } from './schema';
export { functionCrdSpec, FunctionCrdSpec, FUNCTION_CRD_NAME } from './crd';
export { functionCrdRelease, isFunctionCrd, CrdRelease, CrdReleaseEvidence, RELEASE_ANNOTATION } from './crd-release';

// The rule tables, for docs and for checks that must cover every rule.
export { FUNCTION_RULES, FunctionRuleInfo, functionRulesOf } from './function-rules';
export { RuleInfo, UpstreamEnforcement } from './rule-info';

// Releases and their runtimes.
export {
  ServerlessRelease, RELEASES, DEFAULT_RELEASE, releaseFacts, ReleaseFacts, parseRelease, isServerlessRelease, KNOWN_RUNTIMES, KnownRuntimeName,
} from './release';
export { RUNTIMES, RuntimeName, RuntimeFamily, runtimeFamily, RUNTIME_FILES, RuntimeFiles } from './runtimes';

// Upstream's runtime deprecation schedule, and the notice for a Function near or past its runtime's end.
export {
  RUNTIME_SUPPORT, RUNTIME_SUPPORT_SOURCE, RUNTIME_NOTICE_DAYS, RUNTIME_SUPPORT_DATE_ENV, RuntimeSupport, RuntimeNotice, RuntimeMove, runtimeNotice,
  runtimeSupport, runtimeSupportNow, supportEndsAt,
} from './runtime-support';

// What a change to a running Function does (see docs/changing-a-running-system.md).
export { functionChangeOf, FunctionChange, FunctionChangeKind, functionReleaseMoveOf, FunctionReleaseMove } from './function-changes';

// A Function's status, and the controller's labels on what it creates.
export {
  FunctionConditionType, FunctionConditionReason, ConditionStatus, functionReadiness, FunctionReadiness, FunctionChildLabel, FUNCTION_CONTROLLER,
} from './function-status';
export { FUNCTION_LABEL, FUNCTION_POD_LABEL, OBJECT_KINDS_ANNOTATION, TRAFFIC_LABEL, URL_ANNOTATION } from './labels';

// Resource profiles and presets.
export { BuildProfile, FunctionProfile } from './profiles';
export { ResourcePreset, DEFAULT_FUNCTION_PRESETS, DEFAULT_BUILD_PRESETS } from './presets';

// Names and quantities, as the API server checks them.
export {
  isDns1123Label, isDns1123Subdomain, isDns1035Label, isLabelValue, isConfigMapKey, isEnvVarName, isImageReference, qualifiedNameProblems,
} from './names';
export { parseQuantity } from './quantity';
