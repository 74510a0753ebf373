/**
 * The Kyma Subscription (`eventing.kyma-project.io/v1alpha2`) as one typed schema, and the
 * TypeScript shape of the Subscriptions this package emits to deliver events to Functions.
 *
 * The schema has the field paths, types, defaults and required fields of the Subscription CRD
 * that the eventing manager 1.6.3 ships (it has no enums, patterns or CEL rules: the eventing
 * manager checks specs itself, see `subscription-rules.ts`); the descriptions are ours.
 */
import type { k8s } from 'cdk8s-plus-27';
import { JsonSchemaProps, array, boolean, integer, mapOf, object, opaqueObject, string } from './schema';

/** The API group of Subscriptions. */
export const SUBSCRIPTION_GROUP = 'eventing.kyma-project.io';
/** The only served and stored version. */
export const SUBSCRIPTION_VERSION = 'v1alpha2';
/** `kind` of a Subscription object. */
export const SUBSCRIPTION_KIND = 'Subscription';
/** `apiVersion` of a Subscription object. */
export const SUBSCRIPTION_API_VERSION = `${SUBSCRIPTION_GROUP}/${SUBSCRIPTION_VERSION}`;

/** The key of `spec.config` that caps the events delivered to the sink and not yet acknowledged. */
export const MAX_IN_FLIGHT_MESSAGES = 'maxInFlightMessages';
/** The `spec.config` the API server stores when a Subscription has none. */
export const SUBSCRIPTION_DEFAULT_CONFIG: { readonly [key: string]: string } = { [MAX_IN_FLIGHT_MESSAGES]: '10' };

/** The suffix of every in-cluster sink host. */
export const CLUSTER_LOCAL_SUFFIX = 'svc.cluster.local';

/** How the eventing backend reads a Subscription's source and types. */
export enum TypeMatching {
  /** The backend cleans them up (drops characters it cannot use) and prefixes the types with the source. */
  STANDARD = 'standard',
  /** They are used exactly as written; the source may be empty. */
  EXACT = 'exact',
}

/**
 * The sink URL of a Service in the cluster, the form the eventing manager requires:
 * `http://<service>.<namespace>.svc.cluster.local`. A Function's Service has the Function's name.
 */
export function serviceSinkUrl(service: string, namespace: string): string {
  return `http://${service}.${namespace}.${CLUSTER_LOCAL_SUFFIX}`;
}

/**
 * Where Functions publish events by default: Kyma Eventing's publisher proxy, which upstream's
 * controller hands every Function as `PUBLISHER_PROXY_ADDRESS`.
 */
export const DEFAULT_PUBLISHER_PROXY_ADDRESS = 'http://eventing-publisher-proxy.kyma-system.svc.cluster.local/publish';

/** `spec.config` of a Subscription: strings only. */
export interface SubscriptionConfig {
  /**
   * The most events delivered to the sink and not yet acknowledged, as a string (`"10"`).
   *
   * @default "10"
   */
  readonly maxInFlightMessages?: string;
  /** Settings of the EventMesh backend (`qos`, `protocol`, webhook auth); this package emits none. */
  readonly [key: string]: string | undefined;
}

/** The `spec` of a Subscription. */
export interface SubscriptionSpec {
  /** Where events are POSTed: `http://<service>.<namespace>.svc.cluster.local`, in the Subscription's namespace. */
  readonly sink: string;
  /** The origin of the events, such as `my-app`; may be empty only with `exact` matching. */
  readonly source: string;
  /** The event types, such as `order.created.v1`. */
  readonly types: readonly string[];
  /**
   * How the backend reads source and types.
   *
   * @default TypeMatching.STANDARD
   */
  readonly typeMatching?: TypeMatching;
  /**
   * Backend settings.
   *
   * @default { maxInFlightMessages: "10" }
   */
  readonly config?: SubscriptionConfig;
}

/** A Subscription object, `eventing.kyma-project.io/v1alpha2`. */
export interface Subscription {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: k8s.ObjectMeta;
  readonly spec: SubscriptionSpec;
}

function subscriptionSpecSchema(): JsonSchemaProps {
  return object({
    config: mapOf(string(), {
      default: SUBSCRIPTION_DEFAULT_CONFIG,
      description: 'Backend settings, all strings: `maxInFlightMessages` for every backend, `qos`, `protocol` and webhook auth for EventMesh.',
    }),
    id: string({ description: 'Set by the eventing manager; read-only.' }),
    sink: string({ description: 'URL of the Service that receives the events, in the Subscription\'s namespace: `http://<service>.<namespace>.svc.cluster.local`.' }),
    source: string({ description: 'Where the events come from, such as `my-app`.' }),
    typeMatching: string({
      default: TypeMatching.STANDARD,
      description: '`standard`: the backend cleans up source and types; `exact`: they are used as written.',
    }),
    types: array(string(), { description: 'The event types to receive, such as `order.created.v1`.' }),
  }, { required: ['sink', 'source', 'types'], description: 'Which events go to which sink.' });
}

function subscriptionStatusSchema(): JsonSchemaProps {
  const hash = (what: string) => integer({ format: 'int64', description: what });
  return object({
    backend: object({
      apiRuleName: string({ description: 'EventMesh: the APIRule the eventing manager made for the sink.' }),
      emsSubscriptionStatus: object({
        lastFailedDelivery: string({ description: 'When a delivery last failed.' }),
        lastFailedDeliveryReason: string({ description: 'Why it failed.' }),
        lastSuccessfulDelivery: string({ description: 'When a delivery last succeeded.' }),
        status: string({ description: 'The subscription\'s status in EventMesh.' }),
        statusReason: string({ description: 'Why it has that status.' }),
      }, { description: 'EventMesh: the subscription as EventMesh reports it.' }),
      emsTypes: array(object({
        eventMeshType: string({ description: 'The type on EventMesh.' }),
        originalType: string({ description: 'The type in the spec.' }),
      }, { required: ['eventMeshType', 'originalType'] }), { description: 'EventMesh: each type of the spec and its EventMesh form.' }),
      emshash: hash('EventMesh: hash of the subscription read back, without webhook auth.'),
      ev2hash: hash('Hash of the Subscription object.'),
      eventMeshLocalHash: hash('EventMesh: hash of the subscription sent, without webhook auth.'),
      externalSink: string({ description: 'EventMesh: the URL EventMesh calls.' }),
      failedActivation: string({ description: 'EventMesh: why activation failed.' }),
      types: array(object({
        consumerName: string({ description: 'The JetStream consumer of the type.' }),
        originalType: string({ description: 'The type in the spec.' }),
      }, { required: ['originalType'] }), { description: 'NATS: each type of the spec and its consumer.' }),
      webhookAuthHash: hash('EventMesh: hash of the webhook auth.'),
    }, { description: 'What the active backend reports.' }),
    conditions: array(object({
      lastTransitionTime: string({ format: 'date-time', description: 'When the condition last changed status.' }),
      message: string({ description: 'Details of the last change.' }),
      reason: string({ description: 'Why the condition last changed.' }),
      status: string({ description: '`True`, `False` or `Unknown`.' }),
      type: string({ description: 'Such as `Subscription active` or `Subscription spec valid`.' }),
    }, { required: ['status'] }), { description: 'Progress of the Subscription.' }),
    ready: boolean({ description: '`true` once events are delivered.' }),
    types: array(object({
      cleanType: string({ description: 'The type as the backend uses it.' }),
      originalType: string({ description: 'The type in the spec.' }),
    }, { required: ['cleanType', 'originalType'] }), { description: 'Each type of the spec, cleaned up for the backend.' }),
  }, { required: ['ready', 'types'], description: 'The observed state, written by the eventing manager.' });
}

/** The `openAPIV3Schema` of the Subscription CRD's `v1alpha2` version. */
export function subscriptionSchema(): JsonSchemaProps {
  return object({
    apiVersion: string({ description: `Versioned schema of this object: \`${SUBSCRIPTION_API_VERSION}\`.` }),
    kind: string({ description: `Kind of this object: \`${SUBSCRIPTION_KIND}\`.` }),
    metadata: opaqueObject(),
    spec: subscriptionSpecSchema(),
    status: subscriptionStatusSchema(),
  }, { description: 'A Subscription: delivers events of some types from a source to a sink in the cluster.' });
}
