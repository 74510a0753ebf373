/**
 * Health checks for the GitOps engines: when Flux and Argo CD count a Function, an APIRule or a
 * Subscription healthy, still progressing, or failed. Neither engine can judge these kinds by
 * itself (a Function has no `Ready` condition; an APIRule says `status.state`; a Subscription
 * `status.ready`). Each kind's rule is written once, as data ({@link KindHealth}), and rendered
 * twice: into Flux's CEL (`healthCheckExprs` of a Kustomization) and into Argo CD's Lua
 * (`resource.customizations.health.<group>_<kind>` of `argocd-cm`).
 */
import {
  APIRULE_API_VERSION, APIRULE_GROUP, APIRULE_KIND, ConditionStatus, DEFAULT_RELEASE, FUNCTION_API_VERSION, FUNCTION_GROUP, FUNCTION_KIND,
  SUBSCRIPTION_API_VERSION, SUBSCRIPTION_GROUP, SUBSCRIPTION_KIND, ServerlessRelease, functionReadiness,
} from '../api';

/** A kind's rule: by its conditions, by a state field, or by a ready flag. */
type HealthRule =
  /**
   * Healthy when every condition of `conditions` is True (and, with `observedGeneration`, the
   * status is of the current generation); failed when one of them is False.
   */
  | { readonly by: 'conditions'; readonly conditions: readonly string[]; readonly observedGeneration: boolean; readonly healthy: string }
  /** Healthy when `status.<field>` is `ready`; failed when it is one of `failed`, with `status.<message>`. */
  | { readonly by: 'state'; readonly field: string; readonly ready: string; readonly failed: readonly string[]; readonly message: string }
  /** Healthy when `status.<field>` is true; failed when one of `failing` conditions is False. */
  | { readonly by: 'flag'; readonly field: string; readonly failing: readonly string[]; readonly healthy: string };

/** How a GitOps engine judges one kind. */
interface KindHealth {
  readonly apiVersion: string;
  readonly group: string;
  readonly kind: string;
  /** Who writes the status, for the message while there is none: `the Function Controller`. */
  readonly writer: string;
  readonly rule: HealthRule;
}

const TRUE = ConditionStatus.TRUE as string;
const FALSE = ConditionStatus.FALSE as string;

/** A Function under a release's controller: its conditions, and its observedGeneration where the release writes one. */
function functionHealth(release: ServerlessRelease): KindHealth {
  const readiness = functionReadiness(release);
  return {
    apiVersion: FUNCTION_API_VERSION,
    group: FUNCTION_GROUP,
    kind: FUNCTION_KIND,
    writer: 'the Function Controller',
    rule: { by: 'conditions', conditions: readiness.conditions, observedGeneration: readiness.observedGeneration, healthy: 'Function is running' },
  };
}

/**
 * An APIRule v2: `status.state` Ready; Error or Warning fail, with `status.description` (the API
 * Gateway controller writes its validation and apply errors there); Processing, Deleting or no
 * state yet is progressing.
 */
const API_RULE_HEALTH: KindHealth = {
  apiVersion: APIRULE_API_VERSION,
  group: APIRULE_GROUP,
  kind: APIRULE_KIND,
  writer: 'the API Gateway controller',
  rule: { by: 'state', field: 'state', ready: 'Ready', failed: ['Error', 'Warning'], message: 'description' },
};

/**
 * A Subscription: `status.ready` true; failed only when its spec is invalid (`Subscription spec
 * valid` False), which the eventing manager will not get past without a change; any other False
 * condition (the sink's Service not there yet, the backend not active yet) is progressing, since
 * the manager keeps trying.
 */
const SUBSCRIPTION_HEALTH: KindHealth = {
  apiVersion: SUBSCRIPTION_API_VERSION,
  group: SUBSCRIPTION_GROUP,
  kind: SUBSCRIPTION_KIND,
  writer: 'the eventing manager',
  rule: { by: 'flag', field: 'ready', failing: ['Subscription spec valid'], healthy: 'Subscription is ready' },
};

/** Every kind whose health the engines are taught, for a stack of a release. */
function kindsHealth(release: ServerlessRelease): readonly KindHealth[] {
  return [functionHealth(release), API_RULE_HEALTH, SUBSCRIPTION_HEALTH];
}

// ---------------------------------------------------------------------------------------------
// Flux: CEL

/** A Flux `healthCheckExprs` entry (Flux 2.5 and later): CEL over the object's top-level fields. */
export interface FluxHealthCheck {
  /** `apiVersion` of the objects it judges. */
  readonly apiVersion: string;
  /** `kind` of the objects it judges. */
  readonly kind: string;
  /** True while the object is on its way: Flux reads it first. */
  readonly inProgress: string;
  /** True when the object failed: Flux reads it second, and fails the health check at once. */
  readonly failed: string;
  /** True when the object is ready: Flux reads it last; when none is true, the object is in progress. */
  readonly current: string;
}

const celList = (items: readonly string[]) => `[${items.map(i => `'${i}'`).join(', ')}]`;

/**
 * Whether a controller has written the object's status. Flux binds each top-level field of the
 * object to a variable, so before a controller writes a status, `status` is not an empty map but
 * an undefined variable, and CEL (cel-go) fails on any use of it, `has()` included; nor can CEL ask
 * whether a variable is defined. The object's `managedFields` tell instead: since Kubernetes 1.22
 * every write through the status subresource has an entry with `subresource: status`. Without
 * managedFields (a reader that strips them), the status is taken as written.
 */
const STATUS_WRITTEN = '(!has(metadata.managedFields) || metadata.managedFields.exists(f, has(f.subresource) && f.subresource == \'status\'))';

function celOf(health: KindHealth): FluxHealthCheck {
  const rule = health.rule;
  const inProgress = `!${STATUS_WRITTEN}`;
  switch (rule.by) {
    case 'conditions': {
      const conditions = celList(rule.conditions);
      const generation = rule.observedGeneration ? 'has(status.observedGeneration) && status.observedGeneration == metadata.generation && ' : '';
      return {
        apiVersion: health.apiVersion,
        kind: health.kind,
        inProgress,
        failed: `has(status.conditions) && status.conditions.exists(c, c.type in ${conditions} && c.status == '${FALSE}')`,
        current: `${generation}has(status.conditions) && ${conditions}.all(t, status.conditions.exists(c, c.type == t && c.status == '${TRUE}'))`,
      };
    }
    case 'state':
      return {
        apiVersion: health.apiVersion,
        kind: health.kind,
        inProgress,
        failed: `has(status.${rule.field}) && status.${rule.field} in ${celList(rule.failed)}`,
        current: `has(status.${rule.field}) && status.${rule.field} == '${rule.ready}'`,
      };
    case 'flag':
      return {
        apiVersion: health.apiVersion,
        kind: health.kind,
        inProgress,
        failed: `has(status.conditions) && status.conditions.exists(c, c.type in ${celList(rule.failing)} && c.status == '${FALSE}')`,
        current: `has(status.${rule.field}) && status.${rule.field} == true`,
      };
  }
}

/**
 * Flux's health checks for the kinds of a stack's release (a Kustomization's `healthCheckExprs`,
 * Flux 2.5 and later): Functions by the release's conditions (1.11.1: `ConfigurationReady`,
 * `BuildReady` and `Running`; 1.13.0: `ConfigurationReady` and `Running`, for the generation in
 * `status.observedGeneration`), APIRules by `status.state`, Subscriptions by `status.ready`.
 * Without them Flux counts these objects healthy as soon as they exist. Each is in progress until
 * a controller writes a status, never an error; failed when a condition the release sets is False
 * (an APIRule in Error or Warning; a Subscription whose spec is invalid). Flux itself counts an
 * object whose `status.observedGeneration` differs from its `metadata.generation` in progress.
 *
 * @param release the release of the stack the Kustomization syncs
 */
export function fluxHealthChecks(release: ServerlessRelease = DEFAULT_RELEASE): FluxHealthCheck[] {
  return kindsHealth(release).map(celOf);
}

// ---------------------------------------------------------------------------------------------
// Argo CD: Lua

const luaString = (text: string) => JSON.stringify(text);
const luaList = (items: readonly string[]) => `{ ${items.map(luaString).join(', ')} }`;

/** A condition's words for a message: its message, else its reason, else what is given. */
const SAYS = `local function says(c, otherwise)
  if c.message ~= nil and c.message ~= "" then return c.message end
  if c.reason ~= nil and c.reason ~= "" then return c.reason end
  return otherwise
end`;

function luaOf(health: KindHealth, release: ServerlessRelease): string {
  const rule = health.rule;
  const waiting = `Waiting for ${health.writer}`;
  const head = `-- Health of ${health.apiVersion} ${health.kind}${rule.by === 'conditions' ? ` under Kyma Serverless ${release}` : ''}, written by cdk8s-kyma-serverless.`;
  switch (rule.by) {
    case 'conditions':
      return `${head}
${SAYS}
if obj.status == nil or obj.status.conditions == nil then
  return { status = "Progressing", message = ${luaString(waiting)} }
end
${rule.observedGeneration ? `local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
local behind = ${luaString(`${waiting} to process generation `)}
if generation ~= nil and observed ~= nil and observed ~= generation then
  return { status = "Progressing", message = behind .. tostring(generation) }
end
` : ''}local wanted = ${luaList(rule.conditions)}
local byType = {}
for _, c in ipairs(obj.status.conditions) do
  byType[c.type] = c
end
for _, t in ipairs(wanted) do
  local c = byType[t]
  if c ~= nil and c.status == "${FALSE}" then
    return { status = "Degraded", message = t .. ": " .. says(c, "${FALSE}") }
  end
end
for _, t in ipairs(wanted) do
  local c = byType[t]
  if c == nil then
    return { status = "Progressing", message = t .. ": not reported yet" }
  end
  if c.status ~= "${TRUE}" then
    return { status = "Progressing", message = t .. ": " .. says(c, "in progress") }
  end
end
${rule.observedGeneration ? `if generation ~= nil and observed == nil then
  return { status = "Progressing", message = behind .. tostring(generation) }
end
` : ''}return { status = "Healthy", message = ${luaString(rule.healthy)} }
`;
    case 'state':
      return `${head}
if obj.status == nil or obj.status.${rule.field} == nil or obj.status.${rule.field} == "" then
  return { status = "Progressing", message = ${luaString(waiting)} }
end
local state = obj.status.${rule.field}
local said = state
if obj.status.${rule.message} ~= nil and obj.status.${rule.message} ~= "" then
  said = state .. ": " .. obj.status.${rule.message}
end
if state == ${luaString(rule.ready)} then
  return { status = "Healthy", message = said }
end
for _, failed in ipairs(${luaList(rule.failed)}) do
  if state == failed then
    return { status = "Degraded", message = said }
  end
end
return { status = "Progressing", message = said }
`;
    case 'flag':
      return `${head}
${SAYS}
if obj.status == nil then
  return { status = "Progressing", message = ${luaString(waiting)} }
end
if obj.status.${rule.field} == true then
  return { status = "Healthy", message = ${luaString(rule.healthy)} }
end
local failing = {}
for _, t in ipairs(${luaList(rule.failing)}) do
  failing[t] = true
end
local pending = nil
for _, c in ipairs(obj.status.conditions or {}) do
  if c.status == "${FALSE}" then
    if failing[c.type] then
      return { status = "Degraded", message = c.type .. ": " .. says(c, "${FALSE}") }
    end
    if pending == nil then
      pending = c.type .. ": " .. says(c, "${FALSE}")
    end
  end
end
return { status = "Progressing", message = pending or "Not ready yet" }
`;
  }
}

/** The `argocd-cm` key of a kind's health check: `resource.customizations.health.<group>_<kind>`. */
export function argoCdHealthKey(group: string, kind: string): string {
  return `resource.customizations.health.${group}_${kind}`;
}

/**
 * Argo CD's health checks for the kinds of a stack's release, as `argocd-cm` entries (key
 * `resource.customizations.health.<group>_<kind>`, value the Lua script): a Function is Healthy
 * when the release's conditions are all True (under 1.13.0, for the generation in
 * `status.observedGeneration`), Degraded with the False condition's message, Progressing while
 * the controller works or has not written a status yet; an APIRule by `status.state` (Degraded
 * in Error or Warning, with `status.description`); a Subscription by `status.ready` (Degraded
 * when its spec is invalid). {@link ArgoCdHealthChecks} writes them as an object to apply.
 *
 * @param release the release of the stack the Application syncs
 * @returns the entries, sorted by key
 */
export function argoCdHealthLua(release: ServerlessRelease = DEFAULT_RELEASE): { [key: string]: string } {
  const entries = kindsHealth(release).map(h => [argoCdHealthKey(h.group, h.kind), luaOf(h, release)] as const);
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
