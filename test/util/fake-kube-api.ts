/**
 * An in-process fake of the Kubernetes API server, for tests of code that talks to the API
 * through the real @kubernetes/client-node HTTP stack.
 *
 * It serves plain HTTP on 127.0.0.1 (a random port) from an in-memory store, and answers as the
 * real API server does where our code can tell: metav1 Status bodies for errors (NotFound,
 * AlreadyExists, Conflict, Forbidden, Invalid, BadRequest), one resourceVersion counter shared by
 * every object that grows on every write, optimistic concurrency on PUT, `[]byte` fields
 * (Secret data, caBundle) checked and stored as canonical base64, and per-kind validation and
 * defaulting.
 *
 * Extending it: describe a kind with a {@link ResourceType} (group, version, plural, kind, scope,
 * and optionally validate/prepare hooks) and pass it to {@link FakeKubeApi.start} or
 * {@link FakeKubeApi.addResource}; its collection and item paths are routed from then on. Every
 * write emits a `change` event ({@link WatchEvent}) on {@link FakeKubeApi.events}.
 *
 * Writes: POST creates, PUT replaces, and PATCH is server-side apply (`application/apply-patch+yaml`,
 * JSON or YAML body, `fieldManager`, `force`, `dryRun=All`; a simplified merge, see the `apply`
 * method), with managed fields recorded per apply manager. With
 * {@link FakeKubeApiOptions.namespaceLifecycle}, objects are created only in existing namespaces.
 *
 * Discovery: `/api`, `/apis`, `/apis/<group>`, `/api/v1` and `/apis/<group>/<version>` list the kinds
 * served. A CustomResourceDefinition written through the API is given `NamesAccepted` and, at once
 * or after {@link FakeKubeApiOptions.crdEstablishDelayMs} (or at {@link FakeKubeApi.establish}),
 * `Established`; its kinds are served from then on (one seeded with {@link FakeKubeApi.put} at
 * once). `test/util/fake-controllers.ts` plays the controllers that make workloads ready.
 *
 * Lists take `labelSelector` (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-separated) and
 * `fieldSelector` (`metadata.name`, `metadata.namespace`). A list with `watch=true` (or `1`) is a
 * watch: a chunked 200 answer with one JSON event per line (`{"type":"ADDED","object":{...}}`)
 * for the path's kind and namespace and the selectors, from `resourceVersion` on (without one,
 * or with "0", ADDED for the existing objects first), open until the client aborts,
 * `timeoutSeconds` pass, {@link FakeKubeApi.closeWatches} or {@link FakeKubeApi.close}. Kinds with
 * {@link ResourceType.statusSubresource} serve `.../<name>/status`, and their main resource
 * ignores status as the API server does; {@link FUNCTION_RESOURCES} are the kinds the Function
 * controller reads and writes.
 *
 * @example
 * const api = await FakeKubeApi.start();
 * api.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, data: {} });
 * const kubeConfig = kubeConfigFor(api);          // or writeKubeconfig(api, file)
 * api.failNext('GET', /\/secrets\/s$/, 403);     // the next matching request is refused
 * ...
 * expect(api.requests.filter(r => r.method === 'PUT')).toHaveLength(0);
 * await api.close();
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml, stringify } from 'yaml';

/** A Kubernetes object as JSON. */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    creationTimestamp?: string;
    labels?: { [key: string]: string };
    annotations?: { [key: string]: string };
    [key: string]: unknown;
  };
  [key: string]: any;
};

/** One field error of a 422 Invalid answer, as the API server lists it in `details.causes`. */
export interface FieldCause {
  /** e.g. `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`. */
  readonly reason: string;
  /** The field's path, e.g. `data[tls.crt]`. */
  readonly field: string;
  /** e.g. `Required value`, `Invalid value: "x": field is immutable`. */
  readonly message: string;
}

/** Thrown by a {@link ResourceType.prepare} hook to answer 400 BadRequest. */
export class BadRequest extends Error {}

/** A kind the fake serves. */
export interface ResourceType {
  /** The API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** The resource name in paths, e.g. `secrets`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Whether PUT of a missing object creates it (Services, Leases) or answers 404 (most kinds). */
  readonly allowCreateOnUpdate?: boolean;
  /**
   * Decoding and defaulting, before validation, on every create and update: normalize the
   * object in place (e.g. canonical base64); throw {@link BadRequest} where decoding fails.
   */
  readonly prepare?: (object: KubeObject) => void;
  /** Validation of a create (`old` undefined) or an update: field errors make a 422 Invalid. */
  readonly validate?: (object: KubeObject, old: KubeObject | undefined) => FieldCause[];
  /**
   * A change of an existing object the API server refuses (an immutable field): the name of its
   * answer, recorded from kube-apiserver, in `test/fixtures/api-server/immutable/` (see
   * {@link recordedRefusal}); undefined when the change is allowed.
   */
  readonly immutable?: (object: KubeObject, old: KubeObject) => string | undefined;
  /**
   * Whether the kind has a `status` subresource: `PUT .../<name>/status` writes only the status,
   * and creates and updates of the object itself keep the stored status (none on create).
   * {@link FakeKubeApi.put} stores the status it is given either way.
   *
   * @default false
   */
  readonly statusSubresource?: boolean;
  /**
   * Whether the API server keeps `metadata.generation`: 1 on create, one more on every write that
   * changes anything but metadata and status. {@link FakeKubeApi.put} keeps a generation it is given.
   *
   * @default false
   */
  readonly generation?: boolean;
}

/** A request as the fake received it. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  /** The query parameters (e.g. `fieldManager`). */
  readonly query: { [key: string]: string };
  /** The parsed JSON body (the raw text when it is not JSON); undefined without a body. */
  readonly body: any;
  /** The body's media type (`Content-Type` without parameters), such as `application/apply-patch+yaml`. */
  readonly contentType?: string;
  /** The status code of the answer. */
  status?: number;
}

/** A change to the store, for watches. */
export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The resource's `group/plural` (`/secrets` for the core group). */
  readonly resource: string;
  readonly object: KubeObject;
}

/** What an interceptor may answer instead of the fake's normal handling. */
export interface InterceptedResponse {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Called for a matching request before the fake handles it. It may return (or resolve to) the
 * answer, or nothing to let the fake handle the request; returning a Promise delays the answer
 * (a slow or hanging API server).
 */
export type Interceptor = (request: RecordedRequest, api: FakeKubeApi) => InterceptedResponse | void | Promise<InterceptedResponse | void>;

/** How long an interceptor or failure stays. */
export interface InterceptOptions {
  /**
   * How many matching requests it applies to.
   *
   * @default 1
   */
  readonly times?: number;
}

/** Options of {@link FakeKubeApi.failNext}. */
export interface FailOptions extends InterceptOptions {
  /** The Status message (a realistic one for the code by default). */
  readonly message?: string;
}

/** Options of {@link FakeKubeApi.start}. */
export interface FakeKubeApiOptions {
  /**
   * The kinds served.
   *
   * @default DEFAULT_RESOURCES
   */
  readonly resources?: readonly ResourceType[];
  /**
   * The bearer token every request must carry (401 otherwise).
   *
   * @default FAKE_TOKEN
   */
  readonly token?: string;
  /**
   * The user named in 403 Forbidden messages.
   *
   * @default 'system:serviceaccount:kyma-system:serverless-webhook'
   */
  readonly user?: string;
  /**
   * Refuse writes of namespaced objects into a namespace that does not exist (404 NotFound
   * `namespaces "x" not found`), as the API server's NamespaceLifecycle admission does. Needs
   * Namespaces among the kinds served; {@link FakeKubeApi.put} is never refused.
   *
   * @default false
   */
  readonly namespaceLifecycle?: boolean;
  /**
   * How long after a CustomResourceDefinition is written through the API its `Established`
   * condition turns True, and its kinds are served (listed by discovery, routed). `NamesAccepted`
   * is True at once. `Infinity`: only when the test calls {@link FakeKubeApi.establish}.
   *
   * @default 0 (in the same write)
   */
  readonly crdEstablishDelayMs?: number;
}

/** The token {@link kubeConfigFor} and {@link writeKubeconfig} use, and the fake expects by default. */
export const FAKE_TOKEN = 'fake-service-account-token';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes a `[]byte` field as Go's encoding/json does (standard base64, CR and LF ignored) and
 * returns its canonical encoding.
 *
 * @throws BadRequest when it is not base64
 */
export function canonicalBase64(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new BadRequest(`${field}: expected a base64 string, got ${JSON.stringify(value)}`);
  const text = value.replace(/[\r\n]/g, '');
  if (!BASE64.test(text)) throw new BadRequest(`${field}: illegal base64 data`);
  return Buffer.from(text, 'base64').toString('base64');
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** Secrets: data is `map[string][]byte`, stringData is merged in, the type is immutable. */
export const SECRETS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'secrets',
  kind: 'Secret',
  namespaced: true,
  prepare: secret => {
    const data: { [key: string]: string } = {};
    for (const [key, value] of Object.entries(secret.data ?? {})) data[key] = canonicalBase64(value, `data[${key}]`);
    for (const [key, value] of Object.entries(secret.stringData ?? {})) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
    delete secret.stringData;
    if (Object.keys(data).length) secret.data = data;
    else delete secret.data;
    secret.type ??= 'Opaque';
  },
  validate: (secret, old) => {
    const causes: FieldCause[] = [];
    for (const key of Object.keys(secret.data ?? {})) {
      if (!CONFIG_KEY.test(key) || key === '.' || key === '..' || key.length > 253) {
        causes.push({ reason: 'FieldValueInvalid', field: `data[${key}]`, message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'` });
      }
    }
    if (secret.type === 'kubernetes.io/tls') {
      for (const key of ['tls.crt', 'tls.key']) {
        if (secret.data?.[key] === undefined) causes.push({ reason: 'FieldValueRequired', field: `data[${key}]`, message: 'Required value' });
      }
    }
    if (old && old.type !== secret.type) {
      causes.push({ reason: 'FieldValueInvalid', field: 'type', message: `Invalid value: "${secret.type}": field is immutable` });
    }
    return causes;
  },
};

function prepareWebhookConfiguration(mutating: boolean) {
  return (configuration: KubeObject) => {
    (configuration.webhooks ?? []).forEach((webhook: any, i: number) => {
      const clientConfig = webhook.clientConfig ?? {};
      if (clientConfig.caBundle !== undefined) {
        const canonical = canonicalBase64(clientConfig.caBundle, `webhooks[${i}].clientConfig.caBundle`);
        // []byte with omitempty: an empty caBundle is stored as none.
        if (canonical) clientConfig.caBundle = canonical;
        else delete clientConfig.caBundle;
      }
      if (clientConfig.service) clientConfig.service.port ??= 443;
      webhook.failurePolicy ??= 'Fail';
      webhook.matchPolicy ??= 'Equivalent';
      webhook.namespaceSelector ??= {};
      webhook.objectSelector ??= {};
      webhook.timeoutSeconds ??= 10;
      if (mutating) webhook.reinvocationPolicy ??= 'Never';
    });
  };
}

function validateWebhookConfiguration(configuration: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  (configuration.webhooks ?? []).forEach((webhook: any, i: number) => {
    const at = `webhooks[${i}]`;
    if (!webhook.name) causes.push({ reason: 'FieldValueRequired', field: `${at}.name`, message: 'Required value' });
    if (!webhook.sideEffects) causes.push({ reason: 'FieldValueRequired', field: `${at}.sideEffects`, message: 'Required value' });
    if (!webhook.admissionReviewVersions?.length) {
      causes.push({ reason: 'FieldValueRequired', field: `${at}.admissionReviewVersions`, message: 'Required value' });
    }
    const clientConfig = webhook.clientConfig ?? {};
    if ((clientConfig.url === undefined) === (clientConfig.service === undefined)) {
      causes.push({ reason: 'FieldValueRequired', field: `${at}.clientConfig`, message: 'Required value: exactly one of url or service is required' });
    }
  });
  return causes;
}

/** MutatingWebhookConfigurations, defaulted as the API server defaults them. */
export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'mutatingwebhookconfigurations',
  kind: 'MutatingWebhookConfiguration',
  namespaced: false,
  prepare: prepareWebhookConfiguration(true),
  validate: validateWebhookConfiguration,
};

/** ValidatingWebhookConfigurations, defaulted as the API server defaults them. */
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
  prepare: prepareWebhookConfiguration(false),
  validate: validateWebhookConfiguration,
};

/**
 * The API server's answer to a refused change of an immutable field, as recorded from
 * kube-apiserver 1.28 (`test/fixtures/api-server/immutable/<name>.json`, see its README), for the
 * object of this name: a 422 Invalid whose causes name the field.
 */
export function recordedRefusal(name: string, objectName: string): object {
  const body = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'api-server', 'immutable', `${name}.json`), 'utf8'));
  const recordedName: string = body.details.name;
  return {
    ...body,
    message: body.message.replace(`"${recordedName}"`, `"${objectName}"`),
    details: { ...body.details, name: objectName },
  };
}

/** The kinds served unless {@link FakeKubeApiOptions.resources} says otherwise. */
export const DEFAULT_RESOURCES: readonly ResourceType[] = [SECRETS, MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS];

/** ConfigMaps: data keys are checked as the API server checks them. */
export const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
  immutable: (configMap, old) => (old.immutable === true && (canonical(configMap.data) !== canonical(old.data) || configMap.immutable !== true)
    ? 'configmap-immutable' : undefined),
  validate: configMap => Object.keys({ ...configMap.data, ...configMap.binaryData })
    .filter(key => !CONFIG_KEY.test(key) || key === '.' || key === '..' || key.length > 253)
    .map(key => ({
      reason: 'FieldValueInvalid',
      field: `data[${key}]`,
      message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
    })),
};

/** Services (ClusterIP by default); a PUT of a missing Service creates it. */
export const SERVICES: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'services',
  kind: 'Service',
  namespaced: true,
  allowCreateOnUpdate: true,
  prepare: service => {
    service.spec = { type: 'ClusterIP', sessionAffinity: 'None', ...service.spec };
  },
};

/** batch/v1 Jobs, such as the Function controller's build Jobs. */
export const JOBS: ResourceType = {
  group: 'batch',
  version: 'v1',
  plural: 'jobs',
  kind: 'Job',
  namespaced: true,
  immutable: (job, old) => (canonical(job.spec?.template) !== canonical(old.spec?.template) ? 'job-template' : undefined),
  statusSubresource: true,
  generation: true,
};

/** apps/v1 Deployments. */
export const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
  immutable: (deployment, old) => (canonical(deployment.spec?.selector) !== canonical(old.spec?.selector) ? 'deployment-selector' : undefined),
  statusSubresource: true,
  generation: true,
};

/**
 * autoscaling/v2 HorizontalPodAutoscalers. The Function controller writes autoscaling/v1 ones;
 * the API server serves each HPA in both versions, and the fake serves this one.
 */
export const HORIZONTAL_POD_AUTOSCALERS: ResourceType = {
  group: 'autoscaling',
  version: 'v2',
  plural: 'horizontalpodautoscalers',
  kind: 'HorizontalPodAutoscaler',
  namespaced: true,
  statusSubresource: true,
  generation: true,
};

/**
 * Kyma Functions (`serverless.kyma-project.io/v1alpha2`), with the status subresource the CRD
 * declares. No schema checks: the webhook's and the CRD's rules are tested elsewhere.
 */
export const FUNCTIONS: ResourceType = {
  group: 'serverless.kyma-project.io',
  version: 'v1alpha2',
  plural: 'functions',
  kind: 'Function',
  namespaced: true,
  statusSubresource: true,
  generation: true,
};

/**
 * The kinds the Function controller reads and writes per Function: Functions and their ConfigMaps,
 * Jobs, Deployments, Services and HorizontalPodAutoscalers. Serve them beside the defaults with
 * `FakeKubeApi.start({ resources: [...DEFAULT_RESOURCES, ...FUNCTION_RESOURCES] })`.
 */
export const FUNCTION_RESOURCES: readonly ResourceType[] = [FUNCTIONS, CONFIG_MAPS, JOBS, DEPLOYMENTS, SERVICES, HORIZONTAL_POD_AUTOSCALERS];

const customKind = (group: string, version: string, plural: string, kind: string): ResourceType =>
  ({ group, version, plural, kind, namespaced: true, statusSubresource: true, generation: true });

/** Kyma APIRules (`gateway.kyma-project.io/v2`), with the status subresource their CRD declares. */
export const API_RULES = customKind('gateway.kyma-project.io', 'v2', 'apirules', 'APIRule');
/** Gateway API HTTPRoutes (`gateway.networking.k8s.io/v1`). */
export const HTTP_ROUTES = customKind('gateway.networking.k8s.io', 'v1', 'httproutes', 'HTTPRoute');
/** Istio VirtualServices (`networking.istio.io/v1beta1`); Istio writes their status only with its status feature on. */
export const VIRTUAL_SERVICES = customKind('networking.istio.io', 'v1beta1', 'virtualservices', 'VirtualService');
/** Kyma Subscriptions (`eventing.kyma-project.io/v1alpha2`). */
export const SUBSCRIPTIONS = customKind('eventing.kyma-project.io', 'v1alpha2', 'subscriptions', 'Subscription');

/**
 * The kinds synth emits to reach Functions, as the CRDs of Kyma's API Gateway and Eventing modules,
 * Istio and the Gateway API serve them. A cluster without one of these CRDs answers 404 for its paths:
 * leave the kind out.
 */
export const REACH_RESOURCES: readonly ResourceType[] = [API_RULES, HTTP_ROUTES, VIRTUAL_SERVICES, SUBSCRIPTIONS];

/** KEDA ScaledObjects (`keda.sh/v1alpha1`), of Functions with `keda`; served only where a test installs KEDA. */
export const SCALED_OBJECTS = customKind('keda.sh', 'v1alpha1', 'scaledobjects', 'ScaledObject');

/** One requirement of a label selector. */
export interface LabelRequirement {
  readonly key: string;
  /** `=` (also for `==`), `!=`, `exists` (`k`) or `!exists` (`!k`). */
  readonly operator: '=' | '!=' | 'exists' | '!exists';
  /** The value, for `=` and `!=`. */
  readonly value?: string;
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/**
 * Parses the equality-based label selectors the API server takes: `k=v`, `k==v`, `k!=v`, `k`,
 * `!k`, comma-separated (set-based ones, `k in (a,b)`, are not supported).
 *
 * @throws BadRequest when the selector cannot be parsed, as the API server answers 400
 */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (!selector.trim()) return [];
  return selector.split(',').map(part => {
    const text = part.trim();
    const m = /^(!?)\s*([^!=\s]+)\s*(?:(==|=|!=)\s*(\S*))?$/.exec(text);
    const bad = () => new BadRequest(`unable to parse requirement: found '${text}', expected: key, !key, key=value or key!=value`);
    if (!m) throw bad();
    const [, not, key, op, value] = m;
    if (!LABEL_KEY.test(key)) throw new BadRequest(`unable to parse requirement: invalid label key "${key}"`);
    if (op === undefined) return { key, operator: not ? '!exists' : 'exists' } as LabelRequirement;
    if (not) throw bad();
    if (!LABEL_VALUE.test(value) || value.length > 63) throw new BadRequest(`unable to parse requirement: invalid label value: "${value}"`);
    return { key, operator: op === '!=' ? '!=' : '=', value } as LabelRequirement;
  });
}

/** Whether labels satisfy every requirement of a label selector (see {@link parseLabelSelector}). */
export function matchesLabelSelector(
  labels: { readonly [key: string]: string } | undefined,
  selector: string | readonly LabelRequirement[],
): boolean {
  const requirements = typeof selector === 'string' ? parseLabelSelector(selector) : selector;
  return requirements.every(({ key, operator, value }) => {
    const actual = labels?.[key];
    switch (operator) {
      case '=': return actual === value;
      case '!=': return actual !== value;
      case 'exists': return actual !== undefined;
      case '!exists': return actual === undefined;
    }
  });
}

/** One requirement of a field selector: only `metadata.name` and `metadata.namespace`, as CRDs allow. */
interface FieldRequirement {
  readonly field: 'metadata.name' | 'metadata.namespace';
  readonly equal: boolean;
  readonly value: string;
}

function parseFieldSelector(selector: string): FieldRequirement[] {
  if (!selector.trim()) return [];
  return selector.split(',').map(part => {
    const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(\S*)\s*$/.exec(part);
    if (!m) throw new BadRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    const [, field, op, value] = m;
    if (field !== 'metadata.name' && field !== 'metadata.namespace') {
      throw new BadRequest(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
    }
    return { field, equal: op !== '!=', value };
  });
}

function matchesFieldSelector(object: KubeObject, requirements: readonly FieldRequirement[]): boolean {
  return requirements.every(({ field, equal, value }) => {
    const actual = field === 'metadata.name' ? object.metadata?.name : object.metadata?.namespace ?? '';
    return (actual === value) === equal;
  });
}

/** The `apiVersion` of a kind's objects. */
export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** The path prefix of a kind's group version: `/api/v1` or `/apis/<group>/<version>`. */
function groupVersionPath(type: ResourceType): string {
  return type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
}

/**
 * The API path of an object, or of a collection without a name.
 *
 * @example objectPath(SECRETS, 'x', 'ns') === '/api/v1/namespaces/ns/secrets/x'
 */
export function objectPath(type: ResourceType, name?: string, namespace?: string): string {
  const scope = type.namespaced && namespace !== undefined ? `/namespaces/${namespace}` : '';
  return `${groupVersionPath(type)}${scope}/${type.plural}${name === undefined ? '' : `/${name}`}`;
}

/** The media type of a server-side apply patch. */
export const APPLY_PATCH_CONTENT_TYPE = 'application/apply-patch+yaml';

/** Whether a kind is the CustomResourceDefinition kind, whose writes serve new kinds. */
const isCrdType = (type: ResourceType) => type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition';

const isPlainObject = (value: unknown): value is { [key: string]: any } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A list merged item by item, by `name`: every item is an object with a string `name` (containers, env, webhooks). */
const isNamedList = (value: unknown): value is { name: string; [key: string]: any }[] =>
  Array.isArray(value) && value.length > 0 && value.every(item => isPlainObject(item) && typeof item.name === 'string');

const itemKey = (name: string) => `k:${JSON.stringify({ name })}`;

/** A field set (`fieldsV1`) as the API server records it in managedFields: `f:<field>` and `k:{"name":...}` keys, `{}` for leaves. */
type FieldSet = { [key: string]: FieldSet };

/** The fields a value sets: maps field by field, named lists item by item, anything else (scalars, other lists) as a whole. */
function fieldSetOf(value: unknown): FieldSet {
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [`f:${k}`, fieldSetOf(v)]));
  if (isNamedList(value)) return Object.fromEntries(value.map(item => [itemKey(item.name), { '.': {}, ...fieldSetOf(item) }]));
  return {};
}

/** The fields of an applied configuration, without what identifies the object (apiVersion, kind, name, namespace). */
function appliedFieldSet(applied: KubeObject): FieldSet {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = applied;
  const { name: _n, namespace: _ns, ...meta } = metadata ?? {};
  return fieldSetOf(Object.keys(meta).length ? { ...rest, metadata: meta } : rest);
}

/** Every leaf of a field set, as its path of keys. */
function leafPaths(set: FieldSet, prefix: string[] = []): string[][] {
  const children = Object.keys(set).filter(k => k !== '.');
  if (!children.length) return prefix.length ? [prefix] : [];
  return children.flatMap(k => leafPaths(set[k], [...prefix, k]));
}

/** The value at a field-set path of an object. */
function valueAt(value: unknown, path: readonly string[]): unknown {
  let at: unknown = value;
  for (const key of path) {
    if (key.startsWith('f:') && isPlainObject(at)) at = at[key.slice(2)];
    else if (key.startsWith('k:') && Array.isArray(at)) at = at.find(item => itemKey(item?.name) === key);
    else return undefined;
  }
  return at;
}

/** Whether a field set holds a path. */
function holds(set: FieldSet, path: readonly string[]): boolean {
  let at: FieldSet | undefined = set;
  for (const key of path) {
    if (!at || !(key in at)) return false;
    at = at[key];
  }
  return true;
}

/** `.spec.replicas`, `.webhooks[name="x"].caBundle`: a field-set path as the API server's conflict messages write it. */
function fieldPathText(path: readonly string[]): string {
  return path.map(key => (key.startsWith('f:') ? `.${key.slice(2)}` : `[name=${JSON.stringify(JSON.parse(key.slice(2)).name)}]`)).join('');
}

/** Removes a leaf path from a field set, and the maps it leaves empty. */
function removePath(set: FieldSet, path: readonly string[]): void {
  const [head, ...rest] = path;
  if (!(head in set)) return;
  if (rest.length) removePath(set[head], rest);
  if (!rest.length || !Object.keys(set[head]).filter(k => k !== '.').length) delete set[head];
}

/** JSON with sorted keys, to compare objects. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown => (Array.isArray(v) ? v.map(sorted)
    : isPlainObject(v) ? Object.fromEntries(Object.keys(v).sort().map(k => [k, sorted(v[k])])) : v);
  return JSON.stringify(sorted(value));
}

/**
 * Merges an applied configuration into the live object, as server-side apply does, simplified:
 * maps merge field by field and lists of named objects item by item (by `name`); any other value
 * (scalars, other lists) is replaced as a whole. A field the manager applied before (`previous`)
 * and leaves out now is removed, unless another manager's field set (`others`) holds it too.
 */
function mergeApplied(live: unknown, applied: unknown, previous: FieldSet | undefined, others: readonly FieldSet[]): unknown {
  const ownedByOthers = (key: string) => others.some(o => key in o);
  const below = (key: string) => others.map(o => o[key]).filter(Boolean);
  if (isPlainObject(applied) && isPlainObject(live)) {
    const result: { [key: string]: unknown } = { ...live };
    for (const key of Object.keys(previous ?? {})) {
      const field = key.slice(2);
      if (key.startsWith('f:') && !(field in applied) && !ownedByOthers(key)) delete result[field];
    }
    for (const [field, value] of Object.entries(applied)) {
      result[field] = mergeApplied(live[field], value, previous?.[`f:${field}`], below(`f:${field}`));
    }
    return result;
  }
  if (isNamedList(applied) && Array.isArray(live)) {
    const keys = new Set(applied.map(item => itemKey(item.name)));
    const result = live.filter(item => {
      const key = itemKey(item?.name);
      return keys.has(key) || !(previous && key in previous) || ownedByOthers(key);
    });
    for (const item of applied) {
      const key = itemKey(item.name);
      const at = result.findIndex(existing => itemKey(existing?.name) === key);
      if (at < 0) result.push(clone(item));
      else result[at] = mergeApplied(result[at], item, previous?.[key], below(key));
    }
    return result;
  }
  return clone(applied);
}

/** A CRD's conditions as the API server's controllers set them. */
const NAMES_ACCEPTED = { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
const ESTABLISHED = { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' };
const NOT_ESTABLISHED = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have not been accepted yet' };

/** Conditions with one of a type set: kept as it is when its status is the same, else replaced (new lastTransitionTime). */
function withCondition(conditions: any[] | undefined, condition: { type: string; status: string; reason: string; message: string }): any[] {
  const existing = (conditions ?? []).find(c => c.type === condition.type);
  if (existing?.status === condition.status) return conditions!;
  const lastTransitionTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return [...(conditions ?? []).filter(c => c.type !== condition.type), { ...condition, lastTransitionTime }];
}

const conditionIsTrue = (object: KubeObject | undefined, type: string) =>
  (object?.status?.conditions ?? []).some((c: any) => c.type === type && c.status === 'True');

interface Route {
  readonly pattern: RegExp;
  readonly type: ResourceType;
}

interface Target {
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
}

/** Thrown inside request handling to answer with a Status. */
class StatusError extends Error {
  constructor(readonly code: number, readonly status: object) {
    super(String((status as { message?: string }).message));
  }
}

const clone = <T>(value: T): T => structuredClone(value);

/** What a watch request asks for. */
interface WatchSpec {
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly FieldRequirement[];
  /** The resourceVersion to send changes after; undefined to send the existing objects first. */
  readonly resourceVersion?: number;
  readonly timeoutSeconds?: number;
}

/** An answer of the fake: a body, or (for a watch) the stream to open. */
interface Answer extends InterceptedResponse {
  readonly watch?: WatchSpec;
}

/** An open watch stream. */
interface Watcher {
  readonly spec: WatchSpec;
  readonly send: (event: WatchEvent) => void;
  readonly end: () => void;
}

const matches = (pattern: RegExp | string, path: string) => (typeof pattern === 'string' ? path === pattern : pattern.test(path));

/** The fake API server. Create it with {@link FakeKubeApi.start}; always {@link FakeKubeApi.close} it. */
export class FakeKubeApi {
  /** Starts a fake on 127.0.0.1 and a free port. */
  public static async start(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
    const api = new FakeKubeApi(options);
    await new Promise<void>((resolve, reject) => {
      api.server.once('error', reject);
      api.server.listen(0, '127.0.0.1', () => resolve());
    });
    return api;
  }

  /** Every request received, oldest first. */
  public readonly requests: RecordedRequest[] = [];
  /** Emits `change` with a {@link WatchEvent} on every write. */
  public readonly events = new EventEmitter();
  /** The bearer token requests must carry. */
  public readonly token: string;

  private readonly server: http.Server;
  private readonly routes: Route[] = [];
  private readonly types: ResourceType[] = [];
  private readonly store = new Map<string, KubeObject>();
  private readonly interceptors: { method: string; path: RegExp | string; handler: Interceptor; times: number }[] = [];
  private readonly user: string;
  private resourceVersion = 1000;
  /** Every change, with the resourceVersion counter when it happened, for watches that start in the past. */
  private readonly history: { readonly resourceVersion: number; readonly event: WatchEvent }[] = [];
  /** Watches from a resourceVersion older than this answer 410 Expired. */
  private oldestWatchable = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly namespaceLifecycle: boolean;
  private readonly crdEstablishDelayMs: number;
  /** Pending establishments of CRDs. */
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(options: FakeKubeApiOptions) {
    this.token = options.token ?? FAKE_TOKEN;
    this.user = options.user ?? 'system:serviceaccount:kyma-system:serverless-webhook';
    this.namespaceLifecycle = options.namespaceLifecycle ?? false;
    this.crdEstablishDelayMs = options.crdEstablishDelayMs ?? 0;
    for (const type of options.resources ?? DEFAULT_RESOURCES) this.addResource(type);
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  /** The server's base URL, `http://127.0.0.1:<port>`. */
  public get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Serves one more kind. */
  public addResource(type: ResourceType): void {
    const base = groupVersionPath(type).replace(/[.]/g, '\\.');
    const name = '([^/]+)';
    if (type.namespaced) {
      this.routes.push({ pattern: new RegExp(`^${base}/namespaces/${name}/${type.plural}(?:/${name}(?:/${name})?)?$`), type });
      // Lists and watches across namespaces.
      this.routes.push({ pattern: new RegExp(`^${base}/${type.plural}$`), type });
    } else {
      this.routes.push({ pattern: new RegExp(`^${base}/${type.plural}(?:/${name}(?:/${name})?)?$`), type });
    }
    this.types.push(type);
  }

  /** The kind of an object, by its apiVersion and kind. */
  public typeOf(object: Pick<KubeObject, 'apiVersion' | 'kind'>): ResourceType {
    const type = this.types.find(t => apiVersionOf(t) === object.apiVersion && t.kind === object.kind);
    if (!type) throw new Error(`The fake API server does not serve ${object.apiVersion} ${object.kind}`);
    return type;
  }

  /** The API path of an object of a kind the fake serves. */
  public pathOf(object: KubeObject): string {
    const type = this.typeOf(object);
    return objectPath(type, object.metadata?.name, type.namespaced ? object.metadata?.namespace : undefined);
  }

  /**
   * Stores an object without validation or concurrency checks, as if it had been applied: seeds
   * the store, or changes an object behind the code's back (a GitOps re-sync, another replica).
   * Decodes and defaults it as the API server would (the kind's `prepare`: an empty caBundle is
   * stored as none); sets uid, creationTimestamp and a new resourceVersion, and for kinds with
   * {@link ResourceType.generation} a generation unless the object has one. The status is stored
   * as given, also for kinds with a status subresource (the controller's writes, in one call).
   *
   * @returns what is stored
   */
  public put(object: KubeObject): KubeObject {
    const type = this.typeOf(object);
    const name = object.metadata?.name;
    if (!name) throw new Error('put: metadata.name is required');
    if (type.namespaced && !object.metadata?.namespace) throw new Error(`put: ${type.kind} ${name} needs a namespace`);
    const old = this.store.get(this.key(type, name, object.metadata?.namespace));
    const stored = clone(object);
    type.prepare?.(stored);
    const written = this.write(type, stored, old, true);
    // A CRD seeded into the store is an installed one: its kinds are served at once.
    if (isCrdType(type)) this.serveCrd(written);
    return clone(written);
  }

  /**
   * Turns a CustomResourceDefinition's `Established` condition True and serves its kinds, as the
   * API server's establishing controller does (see {@link FakeKubeApiOptions.crdEstablishDelayMs}).
   *
   * @returns the CRD as stored
   */
  public establish(name: string): KubeObject {
    const type = this.types.find(isCrdType);
    const crd = type && this.store.get(this.key(type, name));
    if (!type || !crd) throw new Error(`establish: no CustomResourceDefinition ${name}`);
    const updated = clone(crd);
    updated.status = { ...updated.status, conditions: withCondition(updated.status?.conditions, ESTABLISHED) };
    const written = this.write(type, updated, crd);
    this.serveCrd(written);
    return clone(written);
  }

  /**
   * The stored object at an API path (`/api/v1/namespaces/ns/secrets/x`), or a List for a
   * collection path; undefined when there is no such object.
   */
  public get(path: string): KubeObject | undefined {
    const target = this.route(path);
    if (!target) throw new Error(`get: the fake API server has no route for ${path}`);
    if (target.name === undefined) return this.list(target);
    const object = this.store.get(this.key(target.type, target.name, target.namespace));
    return object && clone(object);
  }

  /** Removes an object behind the code's back; returns whether there was one. */
  public remove(path: string): boolean {
    const target = this.route(path);
    if (!target?.name) throw new Error(`remove: ${path} is not an object path`);
    const key = this.key(target.type, target.name, target.namespace);
    const old = this.store.get(key);
    if (!old) return false;
    this.store.delete(key);
    this.emit('DELETED', target.type, old);
    return true;
  }

  /**
   * Calls `handler` for the next matching request(s) before the normal handling. The handler may
   * change the store (another writer wins a race) and return nothing, or return the answer.
   *
   * @param method HTTP method, or `*`
   * @param path the path (without query): exactly this string, or matching this RegExp
   */
  public intercept(method: string, path: RegExp | string, handler: Interceptor, options: InterceptOptions = {}): void {
    this.interceptors.push({ method: method.toUpperCase(), path, handler, times: options.times ?? 1 });
  }

  /**
   * Answers the next matching request(s) with an error Status as the API server words it:
   * 401 Unauthorized, 403 Forbidden (RBAC), 404 NotFound, 409 AlreadyExists (POST) or Conflict,
   * 422 Invalid, 429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable, 504 Timeout.
   */
  public failNext(method: string, path: RegExp | string, code: number, options: FailOptions = {}): void {
    this.intercept(method, path, request => {
      const target = this.route(request.path);
      const status = this.errorStatus(code, request.method, target, options.message);
      return { status: code, body: status };
    }, options);
  }

  /** The recorded requests of a method (and path pattern). */
  public requestsOf(method: string, path?: RegExp | string): RecordedRequest[] {
    return this.requests.filter(r => r.method === method.toUpperCase() && (path === undefined || matches(path, r.path)));
  }

  /** Forgets the recorded requests. */
  public clearRequests(): void {
    this.requests.length = 0;
  }

  /** How many watch streams are open. */
  public get openWatches(): number {
    return this.watchers.size;
  }

  /**
   * Waits until at least `count` watch streams are open (a client has started watching).
   *
   * @throws when they are not open within `timeoutMs`
   */
  public async waitForWatches(count: number, timeoutMs = 20_000): Promise<void> {
    for (const start = Date.now(); this.watchers.size < count; await new Promise(resolve => setTimeout(resolve, 10))) {
      if (Date.now() - start > timeoutMs) throw new Error(`waitForWatches: ${this.watchers.size} of ${count} watches open after ${timeoutMs} ms`);
    }
  }

  /**
   * Ends every open watch stream from the server's side, as the API server does when a watch's
   * timeout passes: clients are expected to watch again from the last resourceVersion they saw.
   */
  public closeWatches(): void {
    for (const watcher of [...this.watchers]) watcher.end();
  }

  /**
   * Forgets the changes made so far, as the API server's watch cache does: a watch from an older
   * resourceVersion then gets an ERROR event with a 410 Expired Status, and the client must list again.
   */
  public expireWatchHistory(): void {
    this.oldestWatchable = this.resourceVersion;
    this.history.length = 0;
  }

  /** Stops the server and drops its connections, open watches included. */
  public async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.closeWatches();
    this.events.removeAllListeners();
    await new Promise<void>(resolve => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private key(type: ResourceType, name: string, namespace?: string): string {
    return `${type.group}/${type.plural}/${type.namespaced ? namespace ?? '' : ''}/${name}`;
  }

  private route(path: string): Target | undefined {
    for (const { pattern, type } of this.routes) {
      const m = pattern.exec(path);
      if (!m) continue;
      const parts = m.slice(1).map(p => (p === undefined ? undefined : decodeURIComponent(p)));
      return type.namespaced
        ? { type, namespace: parts[0], name: parts[1], subresource: parts[2] }
        : { type, name: parts[0], subresource: parts[1] };
    }
    return undefined;
  }

  private list(target: Target, query: { [key: string]: string } = {}): KubeObject {
    const prefix = `${target.type.group}/${target.type.plural}/${target.namespace === undefined ? '' : `${target.namespace}/`}`;
    const labels = parseLabelSelector(query.labelSelector ?? '');
    const fields = parseFieldSelector(query.fieldSelector ?? '');
    const items = [...this.store.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .filter(([, object]) => matchesLabelSelector(object.metadata?.labels, labels) && matchesFieldSelector(object, fields))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, object]) => clone(object));
    return {
      apiVersion: apiVersionOf(target.type),
      kind: `${target.type.kind}List`,
      metadata: { resourceVersion: String(this.resourceVersion) },
      items,
    };
  }

  private write(type: ResourceType, object: KubeObject, old: KubeObject | undefined, keepGeneration = false): KubeObject {
    this.resourceVersion += 1;
    object.apiVersion = apiVersionOf(type);
    object.kind = type.kind;
    object.metadata = {
      ...object.metadata,
      uid: old?.metadata?.uid ?? randomUUID(),
      creationTimestamp: old?.metadata?.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      resourceVersion: String(this.resourceVersion),
    };
    if (type.generation && !(keepGeneration && typeof object.metadata.generation === 'number')) {
      const generation = Number(old?.metadata?.generation ?? 0);
      const { metadata: _m, status: _s, ...desired } = object;
      const { metadata: _om, status: _os, ...stored } = old ?? {};
      object.metadata.generation = old && JSON.stringify(desired) === JSON.stringify(stored) ? generation : generation + 1;
    }
    if (!type.namespaced) delete object.metadata.namespace;
    const key = this.key(type, object.metadata.name!, object.metadata.namespace);
    if (old && object.metadata.deletionTimestamp && !(object.metadata.finalizers as string[] | undefined)?.length) {
      // The last finalizer of an object being deleted is gone: so is the object.
      this.store.delete(key);
      this.emit('DELETED', type, object);
      return object;
    }
    this.store.set(key, object);
    this.emit(old ? 'MODIFIED' : 'ADDED', type, object);
    return object;
  }

  private emit(type: WatchEvent['type'], resource: ResourceType, object: KubeObject): void {
    const event: WatchEvent = { type, resource: `${resource.group}/${resource.plural}`, object: clone(object) };
    this.history.push({ resourceVersion: this.resourceVersion, event });
    for (const watcher of this.watchers) {
      if (this.watches(watcher.spec, event)) watcher.send(event);
    }
    this.events.emit('change', event);
  }

  /** Whether a change is one a watch asked for: its kind, namespace and selectors. */
  private watches(spec: WatchSpec, event: WatchEvent): boolean {
    return event.resource === `${spec.type.group}/${spec.type.plural}`
      && (spec.namespace === undefined || event.object.metadata?.namespace === spec.namespace)
      && matchesLabelSelector(event.object.metadata?.labels, spec.labels)
      && matchesFieldSelector(event.object, spec.fields);
  }

  /** Opens a watch stream: past changes (or the existing objects) first, then live ones. */
  private stream(spec: WatchSpec, res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const write = (event: { type: string; object: unknown }) => {
      if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify(event)}\n`);
    };
    let timer: NodeJS.Timeout | undefined;
    const watcher: Watcher = {
      spec,
      send: event => write({ type: event.type, object: clone(event.object) }),
      end: () => {
        this.watchers.delete(watcher);
        clearTimeout(timer);
        if (!res.writableEnded) res.end();
      },
    };
    if (spec.resourceVersion === undefined) {
      const target: Target = { type: spec.type, namespace: spec.namespace };
      for (const object of this.list(target).items) {
        if (matchesLabelSelector(object.metadata?.labels, spec.labels) && matchesFieldSelector(object, spec.fields)) write({ type: 'ADDED', object });
      }
    } else if (spec.resourceVersion < this.oldestWatchable) {
      const message = `too old resource version: ${spec.resourceVersion} (${this.oldestWatchable})`;
      write({ type: 'ERROR', object: this.status(410, 'Expired', message, undefined) });
      res.end();
      return;
    } else {
      // A delete does not count the resourceVersion up here, so one at the watch's own version is sent too.
      for (const { resourceVersion, event } of this.history) {
        const after = resourceVersion > spec.resourceVersion || (resourceVersion === spec.resourceVersion && event.type === 'DELETED');
        if (after && this.watches(spec, event)) watcher.send(event);
      }
    }
    this.watchers.add(watcher);
    res.on('close', () => watcher.end());
    if (spec.timeoutSeconds !== undefined) timer = setTimeout(() => watcher.end(), spec.timeoutSeconds * 1000);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const text = Buffer.concat(chunks).toString('utf8');
      const contentType = req.headers['content-type']?.split(';')[0].trim();
      let body: unknown;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
          // An apply patch may be YAML.
          if (contentType === APPLY_PATCH_CONTENT_TYPE) {
            try {
              body = parseYaml(text);
            } catch {
              // Left as text: the apply answers 400.
            }
          }
        }
      }
      const request: RecordedRequest = {
        method: (req.method ?? 'GET').toUpperCase(),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body,
        ...(contentType ? { contentType } : {}),
      };
      this.requests.push(request);
      void this.answer(request, req.headers.authorization).then(answer => {
        request.status = answer.status;
        if (res.destroyed) return;
        if (answer.watch) {
          this.stream(answer.watch, res);
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
  }

  private async answer(request: RecordedRequest, authorization: string | undefined): Promise<Answer> {
    try {
      if (authorization !== `Bearer ${this.token}`) return { status: 401, body: this.errorStatus(401, request.method, undefined) };
      const interceptor = this.interceptors.find(i => (i.method === '*' || i.method === request.method) && matches(i.path, request.path));
      if (interceptor) {
        interceptor.times -= 1;
        if (interceptor.times <= 0) this.interceptors.splice(this.interceptors.indexOf(interceptor), 1);
        const answer = await interceptor.handler(request, this);
        if (answer) return answer;
      }
      return this.handleRequest(request);
    } catch (e) {
      return e instanceof StatusError
        ? { status: e.code, body: e.status }
        : { status: 500, body: this.errorStatus(500, request.method, undefined, (e as Error).stack ?? String(e)) };
    }
  }

  private handleRequest(request: RecordedRequest): Answer {
    const discovery = request.method === 'GET' ? this.discovery(request.path) : undefined;
    if (discovery) return discovery;
    const target = this.route(request.path);
    if (!target) {
      return { status: 404, body: this.status(404, 'NotFound', 'the server could not find the requested resource', {}) };
    }
    if (target.subresource) {
      if (target.subresource === 'status' && target.type.statusSubresource && target.name !== undefined) {
        if (request.method === 'GET') return this.read(target, request.query);
        if (request.method === 'PUT') return this.updateStatus(target, request.body);
        throw this.methodNotAllowed();
      }
      throw new StatusError(404, this.status(404, 'NotFound', 'the server could not find the requested resource', {}));
    }
    switch (request.method) {
      case 'GET':
        if (request.query.watch === 'true' || request.query.watch === '1') return this.watch(target, request.query);
        return this.read(target, request.query);
      case 'POST':
        return this.create(target, request.body);
      case 'PUT':
        return this.update(target, request.body);
      case 'PATCH':
        return this.apply(target, request);
      case 'DELETE':
        return this.delete(target, request.query);
      default:
        return { status: 405, body: this.status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {}) };
    }
  }

  private read(target: Target, query: { [key: string]: string } = {}): InterceptedResponse {
    if (target.name === undefined) return { status: 200, body: this.selecting(() => this.list(target, query)) };
    const object = this.store.get(this.key(target.type, target.name, target.namespace));
    if (!object) throw this.notFound(target.type, target.name);
    return { status: 200, body: clone(object) };
  }

  /** Runs a selector-parsing step, answering 400 BadRequest where a selector cannot be parsed. */
  private selecting<T>(run: () => T): T {
    try {
      return run();
    } catch (e) {
      if (e instanceof BadRequest) throw new StatusError(400, this.status(400, 'BadRequest', e.message, {}));
      throw e;
    }
  }

  private watch(target: Target, query: { [key: string]: string }): Answer {
    const { labels, fields } = this.selecting(() => ({
      labels: parseLabelSelector(query.labelSelector ?? ''),
      fields: [
        ...parseFieldSelector(query.fieldSelector ?? ''),
        // A watch of one object's path is a watch of its collection for that name.
        ...(target.name === undefined ? [] : [{ field: 'metadata.name', equal: true, value: target.name } as FieldRequirement]),
      ],
    }));
    const version = query.resourceVersion;
    if (version !== undefined && version !== '' && !/^\d+$/.test(version)) {
      throw new StatusError(400, this.status(400, 'BadRequest', `invalid resource version: ${version}`, {}));
    }
    const timeoutSeconds = query.timeoutSeconds === undefined ? undefined : Number(query.timeoutSeconds);
    return {
      status: 200,
      body: undefined,
      watch: {
        type: target.type,
        namespace: target.namespace,
        labels,
        fields,
        resourceVersion: version === undefined || version === '' || version === '0' ? undefined : Number(version),
        timeoutSeconds: Number.isFinite(timeoutSeconds) ? timeoutSeconds : undefined,
      },
    };
  }

  /** `PUT .../<name>/status`: writes the status, and keeps everything else as stored. */
  private updateStatus(target: Target, body: unknown): InterceptedResponse {
    const object = this.decode(target, body);
    if (object.metadata!.name !== target.name) {
      const message = `the name of the object (${object.metadata!.name ?? ''}) does not match the name on the URL (${target.name})`;
      throw new StatusError(400, this.status(400, 'BadRequest', message, {}));
    }
    const old = this.store.get(this.key(target.type, target.name!, target.namespace));
    if (!old) throw this.notFound(target.type, target.name!);
    if (object.metadata!.resourceVersion && object.metadata!.resourceVersion !== old.metadata?.resourceVersion) {
      throw this.conflict(target.type, target.name!, 'Conflict');
    }
    const updated = clone(old);
    if (object.status === undefined) delete updated.status;
    else updated.status = object.status;
    return { status: 200, body: clone(this.write(target.type, updated, old)) };
  }

  private create(target: Target, body: unknown): InterceptedResponse {
    if (target.name !== undefined) throw this.methodNotAllowed();
    if (target.type.namespaced && target.namespace === undefined) throw this.methodNotAllowed();
    const object = this.decode(target, body);
    const metadata = object.metadata!;
    if (!metadata.name && metadata.generateName) metadata.name = `${metadata.generateName}${randomUUID().slice(0, 5)}`;
    if (!metadata.name) {
      throw this.invalid(target.type, '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
    }
    if (metadata.resourceVersion) {
      throw new StatusError(500, this.status(500, 'InternalError', 'Internal error occurred: resourceVersion should not be set on objects to be created', {}));
    }
    if (this.store.has(this.key(target.type, metadata.name, target.namespace))) throw this.conflict(target.type, metadata.name, 'AlreadyExists');
    this.admitNamespace(target);
    // With a status subresource, the status is the controller's to write: a create sets none.
    if (target.type.statusSubresource) delete object.status;
    this.check(target.type, object, undefined);
    return { status: 201, body: clone(this.writeFromApi(target.type, object, undefined)) };
  }

  private update(target: Target, body: unknown): InterceptedResponse {
    if (target.name === undefined) throw this.methodNotAllowed();
    const object = this.decode(target, body);
    const metadata = object.metadata!;
    if (metadata.name !== target.name) {
      throw new StatusError(400, this.status(400, 'BadRequest', `the name of the object (${metadata.name ?? ''}) does not match the name on the URL (${target.name})`, {}));
    }
    const old = this.store.get(this.key(target.type, target.name, target.namespace));
    if (!old) {
      if (!target.type.allowCreateOnUpdate) throw this.notFound(target.type, target.name);
      this.admitNamespace(target);
      delete metadata.resourceVersion;
      if (target.type.statusSubresource) delete object.status;
      this.check(target.type, object, undefined);
      return { status: 201, body: clone(this.writeFromApi(target.type, object, undefined)) };
    }
    if (metadata.resourceVersion && metadata.resourceVersion !== old.metadata?.resourceVersion) {
      throw this.conflict(target.type, target.name, 'Conflict');
    }
    // With a status subresource, an update of the object keeps the stored status.
    if (target.type.statusSubresource) {
      if (old.status === undefined) delete object.status;
      else object.status = clone(old.status);
    }
    this.check(target.type, object, old);
    return { status: 200, body: clone(this.writeFromApi(target.type, object, old)) };
  }

  /**
   * `PATCH` with `application/apply-patch+yaml`: server-side apply, simplified. A missing object is
   * created from the applied configuration; an existing one gets it merged in (see
   * {@link mergeApplied}: maps field by field, lists of named objects by name, other values
   * whole; fields the same manager applied before and leaves out now are removed). Each manager's
   * fields are recorded in `metadata.managedFields` (operation Apply, `fieldsV1`); applying a
   * field another Apply manager holds, with another value, is a 409 Conflict unless `force=true`,
   * which takes the field over. Writers of other kinds (POST, PUT, {@link put}) are not
   * recorded and never conflict (the API server records them as Update managers, which do). `dryRun=All` answers what would be stored and stores nothing. An
   * apply that changes nothing writes nothing: the resourceVersion stays. Only apply patches are
   * supported (415 for JSON, merge and strategic merge patches).
   */
  private apply(target: Target, request: RecordedRequest): InterceptedResponse {
    if (target.name === undefined) throw this.methodNotAllowed();
    const type = target.type;
    if (request.contentType !== APPLY_PATCH_CONTENT_TYPE) {
      const message = `the fake API server supports only server-side apply (${APPLY_PATCH_CONTENT_TYPE}) for PATCH, not ${request.contentType ?? 'no content type'}`;
      throw new StatusError(415, this.status(415, 'UnsupportedMediaType', message, {}));
    }
    const manager = request.query.fieldManager;
    if (!manager) {
      throw new StatusError(422, this.status(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {}));
    }
    const dryRun = request.query.dryRun;
    if (dryRun !== undefined && dryRun !== 'All') {
      throw new StatusError(400, this.status(400, 'BadRequest', `Invalid dry run value: ${dryRun}: supported values are All`, {}));
    }
    const body = request.body;
    if (!isPlainObject(body)) throw new StatusError(400, this.status(400, 'BadRequest', 'the body of the request was in an unknown format', {}));
    for (const field of ['apiVersion', 'kind'] as const) {
      if (!body[field]) throw new StatusError(400, this.status(400, 'BadRequest', `error decoding patch: ${field} must be set`, {}));
    }
    if (body.metadata?.name !== undefined && body.metadata.name !== target.name) {
      throw new StatusError(400, this.status(400, 'BadRequest', `the name of the object (${body.metadata.name}) does not match the name on the URL (${target.name})`, {}));
    }
    const applied = this.decode(target, body, false);
    applied.metadata = { ...applied.metadata, name: target.name };
    if (!type.namespaced) delete applied.metadata.namespace;
    // The main resource of a kind with a status subresource ignores status.
    if (type.statusSubresource) delete applied.status;

    const old = this.store.get(this.key(type, target.name, target.namespace));
    if (!old) this.admitNamespace(target);
    const managed: any[] = clone((old?.metadata?.managedFields ?? []) as any[]);
    const previous = managed.find(m => m.manager === manager && m.operation === 'Apply');
    const others = managed.filter(m => m !== previous && m.fieldsV1);
    const fields = appliedFieldSet(applied);

    // Conflicts: fields another Apply manager holds, set here to another value than the live one.
    const conflicts: { manager: string; path: string[] }[] = [];
    for (const path of leafPaths(fields)) {
      for (const other of others.filter(m => m.operation === 'Apply')) {
        if (holds(other.fieldsV1, path) && canonical(valueAt(old, path)) !== canonical(valueAt(applied, path))) conflicts.push({ manager: other.manager, path });
      }
    }
    if (conflicts.length && request.query.force !== 'true') {
      // As the API server words them when the managers applied the same apiVersion.
      const causes = conflicts.map(c => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: fieldPathText(c.path) }));
      const message = `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: `
        + causes.map(c => `${c.message}: ${c.field}`).join('; ');
      throw new StatusError(409, this.status(409, 'Conflict', message, { ...this.details(type, target.name), causes }));
    }
    for (const conflict of conflicts) removePath(others.find(m => m.manager === conflict.manager)!.fieldsV1, conflict.path);

    const { managedFields: _managed, ...liveMetadata } = old?.metadata ?? {};
    const merged = (old
      ? mergeApplied({ ...old, metadata: liveMetadata }, applied, previous?.fieldsV1, others.map(m => m.fieldsV1))
      : clone(applied)) as KubeObject;
    try {
      type.prepare?.(merged);
    } catch (e) {
      if (e instanceof BadRequest) throw new StatusError(400, this.status(400, 'BadRequest', e.message, {}));
      throw e;
    }
    if (old && type.statusSubresource) {
      if (old.status === undefined) delete merged.status;
      else merged.status = clone(old.status);
    }
    const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    merged.metadata!.managedFields = [
      ...others.filter(m => Object.keys(m.fieldsV1).length),
      { manager, operation: 'Apply', apiVersion: apiVersionOf(type), time, fieldsType: 'FieldsV1', fieldsV1: fields },
    ];
    this.check(type, merged, old);

    const withoutTimes = (o: KubeObject | undefined) => canonical({
      ...o, metadata: { ...o?.metadata, resourceVersion: undefined, managedFields: ((o?.metadata?.managedFields ?? []) as any[]).map(m => ({ ...m, time: undefined })) },
    });
    if (old && withoutTimes(old) === withoutTimes(merged)) return { status: 200, body: clone(old) };
    if (dryRun) {
      const wouldBe = clone(merged);
      wouldBe.metadata = { ...wouldBe.metadata, uid: old?.metadata?.uid ?? randomUUID(), creationTimestamp: old?.metadata?.creationTimestamp ?? time };
      if (old) wouldBe.metadata.resourceVersion = old.metadata?.resourceVersion;
      else delete wouldBe.metadata.resourceVersion;
      return { status: old ? 200 : 201, body: wouldBe };
    }
    return { status: old ? 200 : 201, body: clone(this.writeFromApi(type, merged, old)) };
  }

  /** NamespaceLifecycle: a namespaced object is created only in a namespace that exists. */
  private admitNamespace(target: Target): void {
    if (!this.namespaceLifecycle || !target.type.namespaced || target.namespace === undefined) return;
    const namespaces = this.types.find(t => t.group === '' && t.plural === 'namespaces');
    if (!namespaces || this.store.has(this.key(namespaces, target.namespace))) return;
    const name = target.namespace;
    throw new StatusError(404, this.status(404, 'NotFound', `namespaces "${name}" not found`, { name, kind: 'namespaces' }));
  }

  /**
   * A write through the API. A CustomResourceDefinition gets its conditions: NamesAccepted at once,
   * Established now or later ({@link FakeKubeApiOptions.crdEstablishDelayMs}), and then its kinds are served.
   */
  private writeFromApi(type: ResourceType, object: KubeObject, old: KubeObject | undefined): KubeObject {
    if (!isCrdType(type)) return this.write(type, object, old);
    const wasEstablished = conditionIsTrue(old, 'Established');
    const establishNow = wasEstablished || this.crdEstablishDelayMs === 0;
    const conditions = withCondition(withCondition(old?.status?.conditions, NAMES_ACCEPTED), establishNow ? ESTABLISHED : NOT_ESTABLISHED);
    object.status = {
      ...object.status,
      conditions,
      acceptedNames: object.spec?.names,
      storedVersions: (object.spec?.versions ?? []).filter((v: any) => v.storage).map((v: any) => v.name),
    };
    const written = this.write(type, object, old);
    if (establishNow) this.serveCrd(written);
    else if (Number.isFinite(this.crdEstablishDelayMs)) {
      const name = written.metadata!.name!;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.store.has(this.key(type, name))) this.establish(name);
      }, this.crdEstablishDelayMs);
      this.timers.add(timer);
    }
    return written;
  }

  /** Serves the kinds of a CRD's served versions, unless served already. CRDs deleted later stay served. */
  private serveCrd(crd: KubeObject): void {
    const spec = crd.spec ?? {};
    for (const version of spec.versions ?? []) {
      if (version.served === false || !spec.group || !spec.names?.plural || !spec.names?.kind) continue;
      if (this.types.some(t => t.group === spec.group && t.version === version.name && t.plural === spec.names.plural)) continue;
      this.addResource({
        group: spec.group, version: version.name, plural: spec.names.plural, kind: spec.names.kind,
        namespaced: spec.scope !== 'Cluster', statusSubresource: version.subresources?.status !== undefined, generation: true,
      });
    }
  }

  /** The discovery documents: `/api`, `/apis`, `/apis/<group>`, `/api/v1`, `/apis/<group>/<version>`, from the kinds served. */
  private discovery(path: string): InterceptedResponse | undefined {
    const groupOf = (group: string) => {
      const versions = [...new Set(this.types.filter(t => t.group === group).map(t => t.version))]
        .map(version => ({ groupVersion: `${group}/${version}`, version }));
      return { name: group, versions, preferredVersion: versions[0] };
    };
    if (path === '/api' || path === '/api/') {
      const versions = [...new Set(this.types.filter(t => t.group === '').map(t => t.version))];
      return { status: 200, body: { kind: 'APIVersions', versions, serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }] } };
    }
    if (path === '/apis' || path === '/apis/') {
      const groups = [...new Set(this.types.map(t => t.group).filter(Boolean))].map(groupOf);
      return { status: 200, body: { kind: 'APIGroupList', apiVersion: 'v1', groups } };
    }
    const group = /^\/apis\/([^/]+)\/?$/.exec(path);
    if (group) {
      if (!this.types.some(t => t.group === group[1])) return { status: 404, body: this.status(404, 'NotFound', 'the server could not find the requested resource', {}) };
      return { status: 200, body: { kind: 'APIGroup', apiVersion: 'v1', ...groupOf(group[1]) } };
    }
    const groupVersion = /^\/api\/([^/]+)\/?$/.exec(path) ?? /^\/apis\/([^/]+)\/([^/]+)\/?$/.exec(path);
    if (!groupVersion) return undefined;
    const [g, v] = groupVersion.length === 3 ? [groupVersion[1], groupVersion[2]] : ['', groupVersion[1]];
    const types = this.types.filter(t => t.group === g && t.version === v);
    if (!types.length) return { status: 404, body: this.status(404, 'NotFound', 'the server could not find the requested resource', {}) };
    const resources = types.flatMap(t => [
      { name: t.plural, singularName: t.kind.toLowerCase(), namespaced: t.namespaced, kind: t.kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
      ...(t.statusSubresource ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
    ]);
    return { status: 200, body: { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: g ? `${g}/${v}` : v, resources } };
  }

  /**
   * `DELETE`, as the API server answers it (bodies recorded from kube-apiserver 1.28): an object
   * without finalizers is removed and the answer is a Status `Success` naming it; one with
   * finalizers gets a `deletionTimestamp`, stays, and is the answer, until a write leaves it without
   * finalizers. `dryRun=All` answers the same and changes nothing. `propagationPolicy` is accepted
   * (`Orphan`, `Background`, `Foreground`); dependents are the test's to remove.
   */
  private delete(target: Target, query: { [key: string]: string } = {}): InterceptedResponse {
    if (target.name === undefined) throw this.methodNotAllowed();
    if (query.dryRun !== undefined && query.dryRun !== 'All') {
      throw new StatusError(400, this.status(400, 'BadRequest', `Invalid dry run value: ${query.dryRun}: supported values are All`, {}));
    }
    const policy = query.propagationPolicy;
    if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
      const cause = { reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: "${policy}"` };
      throw this.invalid(target.type, target.name, [cause]);
    }
    const key = this.key(target.type, target.name, target.namespace);
    const old = this.store.get(key);
    if (!old) throw this.notFound(target.type, target.name);
    const dryRun = query.dryRun === 'All';
    if ((old.metadata?.finalizers as string[] | undefined)?.length) {
      const deleting = clone(old);
      deleting.metadata!.deletionTimestamp ??= new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      return { status: 200, body: dryRun ? deleting : clone(this.write(target.type, deleting, old, true)) };
    }
    if (!dryRun) {
      this.store.delete(key);
      this.emit('DELETED', target.type, old);
    }
    return {
      status: 200,
      body: {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
        details: { ...this.details(target.type, target.name), uid: old.metadata?.uid },
      },
    };
  }

  /** Checks the envelope of a body as the API server's decoder does, and runs the kind's hooks. */
  private decode(target: Target, body: unknown, prepare = true): KubeObject {
    const bad = (message: string) => new StatusError(400, this.status(400, 'BadRequest', message, {}));
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('the body of the request was in an unknown format');
    const object = clone(body) as KubeObject;
    const apiVersion = apiVersionOf(target.type);
    if (object.apiVersion !== undefined && object.apiVersion !== apiVersion) {
      throw bad(`the API version in the data (${object.apiVersion}) does not match the expected API version (${apiVersion})`);
    }
    if (object.kind !== undefined && object.kind !== target.type.kind) {
      throw bad(`${object.kind} in version "${target.type.version}" cannot be handled as a ${target.type.kind}`);
    }
    object.metadata = { ...object.metadata };
    if (target.type.namespaced) {
      if (object.metadata.namespace !== undefined && object.metadata.namespace !== '' && object.metadata.namespace !== target.namespace) {
        throw bad('the namespace of the provided object does not match the namespace sent on the request');
      }
      object.metadata.namespace = target.namespace;
    }
    if (!prepare) return object;
    try {
      target.type.prepare?.(object);
    } catch (e) {
      if (e instanceof BadRequest) throw bad(`${target.type.kind} in version "${target.type.version}" cannot be handled as a ${target.type.kind}: ${e.message}`);
      throw e;
    }
    return object;
  }

  private check(type: ResourceType, object: KubeObject, old: KubeObject | undefined): void {
    const refused = old && type.immutable?.(object, old);
    if (refused) throw new StatusError(422, recordedRefusal(refused, object.metadata?.name ?? ''));
    const causes = type.validate?.(object, old) ?? [];
    if (causes.length) throw this.invalid(type, object.metadata?.name ?? '', causes);
  }

  /** `secrets` or `mutatingwebhookconfigurations.admissionregistration.k8s.io`, as messages name a resource. */
  private qualified(type: ResourceType): string {
    return type.group ? `${type.plural}.${type.group}` : type.plural;
  }

  private details(type: ResourceType, name: string | undefined, kind = type.plural): object {
    return { ...(name === undefined ? {} : { name }), ...(type.group ? { group: type.group } : {}), kind };
  }

  private status(code: number, reason: string, message: string, details: object | undefined): object {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      ...(details && Object.keys(details).length ? { details } : {}),
      code,
    };
  }

  private notFound(type: ResourceType, name: string): StatusError {
    return new StatusError(404, this.status(404, 'NotFound', `${this.qualified(type)} "${name}" not found`, this.details(type, name)));
  }

  private conflict(type: ResourceType, name: string, reason: 'AlreadyExists' | 'Conflict'): StatusError {
    const message = reason === 'AlreadyExists'
      ? `${this.qualified(type)} "${name}" already exists`
      : `Operation cannot be fulfilled on ${this.qualified(type)} "${name}": the object has been modified; please apply your changes to the latest version and try again`;
    return new StatusError(409, this.status(409, reason, message, this.details(type, name)));
  }

  private invalid(type: ResourceType, name: string, causes: FieldCause[]): StatusError {
    const message = `${type.kind} "${name}" is invalid: ${causes.map(c => `${c.field}: ${c.message}`).join(', ')}`;
    const details = { ...this.details(type, name, type.kind), causes };
    return new StatusError(422, this.status(422, 'Invalid', message, details));
  }

  private methodNotAllowed(): StatusError {
    return new StatusError(405, this.status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));
  }

  /** The Status of an injected failure, worded as the API server words it. */
  private errorStatus(code: number, method: string, target: Target | undefined, message?: string): object {
    const name = target?.name;
    const what = target ? `${this.qualified(target.type)}${name === undefined ? '' : ` "${name}"`}` : 'the requested resource';
    const details = target ? this.details(target.type, name) : {};
    switch (code) {
      case 401:
        return this.status(401, 'Unauthorized', message ?? 'Unauthorized', undefined);
      case 403: {
        const verb = { GET: name === undefined ? 'list' : 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[method] ?? method.toLowerCase();
        const where = target?.namespace === undefined ? ' at the cluster scope' : ` in the namespace "${target.namespace}"`;
        const resource = target ? `resource "${target.type.plural}" in API group "${target.type.group}"` : 'this resource';
        return this.status(403, 'Forbidden', message ?? `${what} is forbidden: User "${this.user}" cannot ${verb} ${resource}${where}`, details);
      }
      case 404:
        return this.status(404, 'NotFound', message ?? `${what} not found`, details);
      case 409:
        return method === 'POST'
          ? this.status(409, 'AlreadyExists', message ?? `${what} already exists`, details)
          : this.status(409, 'Conflict', message ?? `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`, details);
      case 422:
        return this.status(422, 'Invalid', message ?? `${what} is invalid`, details);
      case 429:
        return this.status(429, 'TooManyRequests', message ?? 'the server has received too many requests and has asked us to try again later', details);
      case 503:
        return this.status(503, 'ServiceUnavailable', message ?? 'the server is currently unable to handle the request', details);
      case 504:
        return this.status(504, 'Timeout', message ?? 'the server was unable to return a response in the time allotted', details);
      default:
        return this.status(code, 'InternalError', `Internal error occurred: ${message ?? 'injected failure'}`, { ...details, causes: [{ message: message ?? 'injected failure' }] });
    }
  }
}

/** Options of {@link kubeconfigYaml}. */
export interface FakeKubeconfigOptions {
  /** @default the fake's token */
  readonly token?: string;
  /** The context's namespace. */
  readonly namespace?: string;
  /** The server's URL: a proxy in front of the fake (`fault-proxy.ts`). @default the fake's own URL */
  readonly server?: string;
}

/**
 * A kubeconfig file's text for the fake: plain HTTP, which client-node only allows with
 * `insecure-skip-tls-verify`, and a bearer token.
 */
export function kubeconfigYaml(api: FakeKubeApi, options: FakeKubeconfigOptions = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { 'server': options.server ?? api.url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'fake', user: { token: options.token ?? api.token } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', ...(options.namespace ? { namespace: options.namespace } : {}) } }],
    'current-context': 'fake',
  });
}

/** Writes a kubeconfig file for the fake (see {@link kubeconfigYaml}); returns its path. */
export function writeKubeconfig(api: FakeKubeApi, file: string, options: FakeKubeconfigOptions = {}): string {
  fs.writeFileSync(file, kubeconfigYaml(api, options));
  return file;
}

/** A client-node KubeConfig for the fake, loaded from the kubeconfig text as a file would be. */
export function kubeConfigFor(api: FakeKubeApi, options: FakeKubeconfigOptions = {}): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfigYaml(api, options));
  return kubeConfig;
}
