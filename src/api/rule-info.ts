/**
 * What every rules table of the package says about a rule: `FUNCTION_RULES`, `APIRULE_RULES`
 * and `SUBSCRIPTION_RULES` list their rules in this one shape, for docs and for tests that must
 * cover them all.
 */

/** Who rejects an object that breaks a rule, in an upstream cluster without our webhook. */
export enum UpstreamEnforcement {
  /** The API server, from the CRD's schema or CEL rules: `kubectl apply` fails. */
  API_SERVER = 'API server (CRD)',
  /** The Function Controller: the Function is stored, then gets `ConfigurationReady=False`. */
  CONTROLLER = 'Function Controller',
  /** The api-gateway controller: the APIRule is stored, then gets `status.state: Error`. */
  API_GATEWAY = 'api-gateway controller (status.state: Error)',
  /**
   * The eventing manager: the Subscription is stored, then gets `status.ready: false` and the
   * condition `Subscription spec valid` set to `False`.
   */
  EVENTING_MANAGER = 'eventing manager (status.ready: false)',
  /** Nobody: the object is stored and fails later, or does something else than it says. */
  NOBODY = 'nobody: fails later',
}

/** One rule of a rules table. */
export interface RuleInfo {
  /**
   * The name of the rule, as `Violation.rule` gives it: `openapi.<keyword>` for a keyword of the
   * OpenAPI schema, the key of a CEL rule in its rules object (such as `FunctionRules`), or the
   * name of one of the checks of the validating function.
   */
  readonly id: string;
  /** The fields it looks at. */
  readonly field: string;
  /** What it requires. */
  readonly requires: string;
  /** How to fix an object that breaks it. */
  readonly hint: string;
  /** Who rejects an object that breaks it without our webhook. */
  readonly upstream: UpstreamEnforcement;
}
