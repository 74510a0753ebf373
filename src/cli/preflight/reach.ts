/**
 * The checks `preflight` makes of what the manifests declare to reach Functions (endpoints,
 * subscriptions, traffic splits, and the Gateway and Certificate of the stack's exposure domain)
 * and to scale them (KEDA's ScaledObjects) and watch the stack (its `monitoring`): the cluster
 * serves each custom kind they hold, in the version they hold it; the Gateways they
 * attach to exist (or the manifests create them) and admit their routes; the eventing publisher
 * proxy that Functions publish to runs.
 *
 * What the manifests declare is gathered offline ({@link declaredReach}); the checks are pure
 * functions of it and of what was read from the cluster ({@link reachChecks}).
 */
import type { V1CustomResourceDefinition, V1Deployment } from '@kubernetes/client-node';
import { DEFAULT_PUBLISHER_PROXY_ADDRESS } from '../../api/subscription-schema';
import { CONTROLLER_NAMES } from '../../stack/controller';
import {
  API_RULE, AUTHORIZATION_POLICY, CERTIFICATE, CERT_MANAGER, CLUSTER_ISSUER, CustomKind, GATEWAY_API, GATEWAY_API_GATEWAY, HTTP_ROUTE, ISSUER, ISTIO,
  ISTIO_GATEWAY, KEDA, KYMA_API_GATEWAY_MODULE, KYMA_EVENTING_MODULE, KindProvider, POD_MONITOR, PROMETHEUS_OPERATOR, PROMETHEUS_RULE,
  REQUEST_AUTHENTICATION, SCALED_OBJECT, SERVICE_MONITOR, SUBSCRIPTION, VIRTUAL_SERVICE, crdNameOf,
} from '../_reach-kinds';
import { parseApiVersion } from '../_rest';
import { CheckId, CheckResult, fail, pass, skip } from './report';

/** The variable of the controller's container that holds the publisher proxy's address. */
export const PUBLISHER_PROXY_ENV = 'APP_FUNCTION_PUBLISHER_PROXY_ADDRESS';

/**
 * The publisher proxy address of upstream 1.11.1 (Helm value `functionPublisherProxyAddress`), which
 * the stack's controller uses unless `controller.publisherProxyAddress` says otherwise.
 */
export const UPSTREAM_PUBLISHER_PROXY_ADDRESS = DEFAULT_PUBLISHER_PROXY_ADDRESS;

/** The Gateway that Kyma's api-gateway module creates, and APIRules name by default. */
const KYMA_GATEWAY = 'kyma-system/kyma-gateway';
/** The gateway name that binds a VirtualService to every sidecar, not to a Gateway. */
const MESH = 'mesh';

/** The check of a kind's CRD, by who installs it. */
const CHECK_IDS = new Map<KindProvider, CheckId>([
  [KYMA_API_GATEWAY_MODULE, CheckId.APIRULE_CRD],
  [ISTIO, CheckId.ISTIO_CRD],
  [GATEWAY_API, CheckId.GATEWAY_API_CRD],
  [KYMA_EVENTING_MODULE, CheckId.EVENTING_CRD],
  [CERT_MANAGER, CheckId.CERT_MANAGER_CRD],
  [KEDA, CheckId.KEDA_CRD],
  [PROMETHEUS_OPERATOR, CheckId.PROMETHEUS_OPERATOR_CRD],
]);

/** A kind whose CRD another project installs. */
interface RequiredKind {
  /** The kind, with who installs its CRD (see `_reach-kinds.ts`). */
  readonly kind: CustomKind;
  /** The check's title: `crd APIRule`. */
  readonly title: string;
  /** The releases of the provider that serve the version synth writes, for the fix. */
  readonly servedSince?: string;
}

/** The kinds the manifests may hold whose CRDs come from other projects, in the order of their checks. */
const REQUIRED_KINDS: readonly RequiredKind[] = [
  { kind: API_RULE, title: 'crd APIRule', servedSince: 'release 3.0 and later serve v2' },
  { kind: VIRTUAL_SERVICE, title: 'crd VirtualService' },
  { kind: ISTIO_GATEWAY, title: 'crd Gateway (Istio)' },
  { kind: REQUEST_AUTHENTICATION, title: 'crd RequestAuthentication', servedSince: 'Istio 1.22 and later serve v1' },
  { kind: AUTHORIZATION_POLICY, title: 'crd AuthorizationPolicy', servedSince: 'Istio 1.22 and later serve v1' },
  { kind: HTTP_ROUTE, title: 'crd HTTPRoute', servedSince: 'release 1.0 and later serve v1' },
  { kind: GATEWAY_API_GATEWAY, title: 'crd Gateway (Gateway API)', servedSince: 'release 1.0 and later serve v1' },
  { kind: SUBSCRIPTION, title: 'crd Subscription' },
  { kind: CERTIFICATE, title: 'crd Certificate' },
  { kind: ISSUER, title: 'crd Issuer' },
  { kind: CLUSTER_ISSUER, title: 'crd ClusterIssuer' },
  { kind: SCALED_OBJECT, title: 'crd ScaledObject', servedSince: 'KEDA 2.0 and later serve v1alpha1' },
  { kind: SERVICE_MONITOR, title: 'crd ServiceMonitor' },
  { kind: POD_MONITOR, title: 'crd PodMonitor' },
  { kind: PROMETHEUS_RULE, title: 'crd PrometheusRule' },
];

/** Labels of an object. */
export type Labels = { readonly [key: string]: string };

/** An object of the manifests, and the file it is in. */
export interface ManifestObject {
  /** The file: the folder joined with its name, such as `dist/0001-team-a.k8s.yaml`. */
  readonly file: string;
  readonly object: any;
}

/** A kind the manifests hold whose CRD another project installs. */
export interface DeclaredKind {
  /** The CRD's name: `apirules.gateway.kyma-project.io`. */
  readonly crd: string;
  /** The kind's name, for messages. */
  readonly kind: string;
  /** The versions the manifests write it in, sorted. */
  readonly versions: readonly string[];
  /** Its objects, for messages: `APIRule team-a/hello`. */
  readonly objects: readonly string[];
}

/** An object of the manifests that names a Gateway. */
export interface GatewayReference {
  /** The object, for messages: `HTTPRoute team-a/hello`. */
  readonly from: string;
  /** Its namespace. */
  readonly namespace: string;
  /** The listener it attaches to (an HTTPRoute's `sectionName`). */
  readonly sectionName?: string;
}

/** A Gateway the manifests' objects attach to. */
export interface GatewayUse {
  readonly namespace: string;
  readonly name: string;
  /** The objects that name it, in manifest order. */
  readonly references: readonly GatewayReference[];
  /** When the manifests create it themselves: the file, and the object. */
  readonly created?: ManifestObject;
}

/** What the manifests declare that a cluster must serve or hold for Functions to be reached. */
export interface DeclaredReach {
  /** The kinds whose CRDs come from other projects, in the order of their checks. */
  readonly kinds: readonly DeclaredKind[];
  /** The CRDs the manifests install themselves, by name. */
  readonly crds: ReadonlyMap<string, ManifestObject>;
  /** The Istio Gateways that APIRules and VirtualServices name (`spec.gateway`, `spec.gateways`), by `namespace/name`. */
  readonly istioGateways: readonly GatewayUse[];
  /** The Gateway API Gateways that HTTPRoutes name (`spec.parentRefs`), by `namespace/name`. */
  readonly gatewayApiGateways: readonly GatewayUse[];
  /** The Subscriptions, for messages. */
  readonly subscriptions: readonly string[];
  /** The Namespaces the manifests create, with their labels. */
  readonly namespaces: ReadonlyMap<string, Labels>;
  /** The publisher proxy address the controller Deployment of the manifests sets, and where. */
  readonly publisherProxyAddress?: { readonly address: string; readonly source: string };
}

/** A Gateway as the API server (or a manifest) gives it: an Istio Gateway or a Gateway API Gateway. */
export interface GatewayObject {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: {
    /** Gateway API: the listeners. */
    readonly listeners?: readonly {
      readonly name?: string;
      readonly protocol?: string;
      readonly allowedRoutes?: {
        readonly namespaces?: { readonly from?: string; readonly selector?: LabelSelector };
        readonly kinds?: readonly { readonly group?: string; readonly kind?: string }[];
      };
    }[];
  };
}

/** A label selector (`matchLabels`, `matchExpressions`), as a Gateway's `allowedRoutes` has it. */
export interface LabelSelector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

/** Where Functions publish events, and whether its Service exists. */
export interface PublisherProxyFacts {
  /** The address, such as `http://eventing-publisher-proxy.kyma-system.svc.cluster.local/publish`. */
  readonly address: string;
  /** Where it comes from, for messages. */
  readonly source: string;
  /** The Service the address names, and whether it exists; undefined when the address names no Service of the cluster. */
  readonly service?: { readonly namespace: string; readonly name: string; readonly exists: boolean };
}

/** What was read from the cluster for the checks of {@link reachChecks}. */
export interface ReachFacts {
  /** The CRD of each kind the manifests hold, by name; undefined when it is not installed. */
  readonly crds: ReadonlyMap<string, V1CustomResourceDefinition | undefined>;
  /** Every Istio Gateway; undefined when the cluster does not serve the kind (or none was needed). */
  readonly istioGateways?: readonly GatewayObject[];
  /** Every Gateway API Gateway; undefined when the cluster does not serve the kind (or none was needed). */
  readonly gatewayApiGateways?: readonly GatewayObject[];
  /** The labels of the cluster's Namespaces, by name, for the Gateways' namespace selectors. */
  readonly namespaceLabels: ReadonlyMap<string, Labels>;
  /** The publisher proxy, when the manifests hold Subscriptions. */
  readonly publisherProxy?: PublisherProxyFacts;
}

// ---------------------------------------------------------------------------------------------
// What the manifests declare

const groupOf = (object: any) => parseApiVersion(String(object?.apiVersion ?? '')).group;
const isKind = (object: any, kind: CustomKind) => object?.kind === kind.kind && groupOf(object) === kind.group;
const where = (object: any) => `${object?.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${object?.metadata?.name}`;
const labelOf = (object: any) => `${object?.kind} ${where(object)}`;

/**
 * What the manifests declare that a cluster must serve or hold for their Functions to be reached.
 *
 * @param objects the objects of the manifests, in file and document order
 */
export function declaredReach(objects: readonly ManifestObject[]): DeclaredReach {
  const kinds: DeclaredKind[] = [];
  for (const { kind } of REQUIRED_KINDS) {
    const own = objects.filter(o => isKind(o.object, kind));
    if (!own.length) continue;
    const versions = [...new Set(own.map(o => parseApiVersion(o.object.apiVersion).version))].sort();
    kinds.push({ crd: crdNameOf(kind), kind: kind.kind, versions, objects: own.map(o => labelOf(o.object)) });
  }
  const crds = new Map(objects
    .filter(o => o.object?.kind === 'CustomResourceDefinition' && groupOf(o.object) === 'apiextensions.k8s.io')
    .map(o => [String(o.object.metadata?.name), o]));

  const istio = new Map<string, { namespace: string; name: string; references: GatewayReference[] }>();
  const gatewayApi = new Map<string, { namespace: string; name: string; references: GatewayReference[] }>();
  const refer = (uses: typeof istio, namespace: string, name: string, reference: GatewayReference) => {
    const key = `${namespace}/${name}`;
    if (!uses.has(key)) uses.set(key, { namespace, name, references: [] });
    uses.get(key)!.references.push(reference);
  };
  for (const { object } of objects) {
    const namespace = object?.metadata?.namespace ?? 'default';
    const from = labelOf(object);
    if (isKind(object, API_RULE) && typeof object.spec?.gateway === 'string') {
      const [gatewayNamespace, name] = object.spec.gateway.split('/');
      if (gatewayNamespace && name) refer(istio, gatewayNamespace, name, { from, namespace });
    }
    if (isKind(object, VIRTUAL_SERVICE)) {
      for (const gateway of (object.spec?.gateways ?? []) as unknown[]) {
        if (typeof gateway !== 'string' || gateway === MESH) continue;
        // A gateway without a namespace is in the VirtualService's.
        const [gatewayNamespace, name] = gateway.includes('/') ? gateway.split('/') : [namespace, gateway];
        refer(istio, gatewayNamespace, name, { from, namespace });
      }
    }
    if (isKind(object, HTTP_ROUTE)) {
      for (const ref of (object.spec?.parentRefs ?? []) as any[]) {
        if ((ref?.group ?? GATEWAY_API_GATEWAY.group) !== GATEWAY_API_GATEWAY.group || (ref?.kind ?? 'Gateway') !== 'Gateway' || !ref?.name) continue;
        refer(gatewayApi, ref.namespace ?? namespace, ref.name, { from, namespace, ...(ref.sectionName ? { sectionName: ref.sectionName } : {}) });
      }
    }
  }
  /** The Gateways named, sorted, each with the manifest object that creates it, if one does. */
  const gatewayUses = (uses: typeof istio, kind: CustomKind): GatewayUse[] => [...uses.values()]
    .map(use => {
      const created = objects.find(o => isKind(o.object, kind) && (o.object.metadata?.namespace ?? 'default') === use.namespace
        && o.object.metadata?.name === use.name);
      return created ? { ...use, created } : use;
    })
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));

  const namespaces = new Map<string, Labels>(objects
    .filter(o => o.object?.kind === 'Namespace' && o.object?.apiVersion === 'v1')
    .map(o => [String(o.object.metadata?.name), { ...o.object.metadata?.labels }]));
  const controller = objects.find(o => o.object?.kind === 'Deployment' && o.object?.metadata?.name === CONTROLLER_NAMES.deployment
    && envOf(o.object, PUBLISHER_PROXY_ENV) !== undefined);
  return {
    kinds,
    crds,
    istioGateways: gatewayUses(istio, ISTIO_GATEWAY),
    gatewayApiGateways: gatewayUses(gatewayApi, GATEWAY_API_GATEWAY),
    subscriptions: objects.filter(o => isKind(o.object, SUBSCRIPTION)).map(o => labelOf(o.object)),
    namespaces,
    ...(controller ? {
      publisherProxyAddress: {
        address: envOf(controller.object, PUBLISHER_PROXY_ENV)!,
        source: `set in ${controller.file}`,
      },
    } : {}),
  };
}

/** The value of a container variable of a Deployment. */
function envOf(deployment: V1Deployment | any, name: string): string | undefined {
  const containers: any[] = deployment?.spec?.template?.spec?.containers ?? [];
  return containers.flatMap(c => c?.env ?? []).find((e: any) => e?.name === name)?.value;
}

/** Whether the manifests hold anything the checks of {@link reachChecks} look at. */
export function declaresReach(declared: DeclaredReach | undefined): declared is DeclaredReach {
  return !!declared && (declared.kinds.length > 0 || declared.istioGateways.length > 0 || declared.gatewayApiGateways.length > 0);
}

/**
 * The publisher proxy Functions get: the address the manifests' controller sets, else the one the
 * running controller has, else upstream's.
 *
 * @param declared what the manifests declare
 * @param controller the controller Deployment in the cluster; undefined when it is not installed
 */
export function publisherProxyAddressOf(declared: DeclaredReach, controller: V1Deployment | undefined): { address: string; source: string } {
  if (declared.publisherProxyAddress) return declared.publisherProxyAddress;
  const running = envOf(controller, PUBLISHER_PROXY_ENV);
  if (running !== undefined) return { address: running, source: `set by Deployment ${where(controller)} in the cluster` };
  return { address: UPSTREAM_PUBLISHER_PROXY_ADDRESS, source: 'upstream\'s default' };
}

/**
 * The Service an in-cluster address names: `http://<service>.<namespace>[.svc[.cluster.local]][:port]/...`.
 *
 * @returns undefined for any other address (an IP, an outside host, a bare name)
 */
export function serviceOfAddress(address: string): { namespace: string; name: string } | undefined {
  let host: string;
  try {
    host = new URL(address).hostname;
  } catch {
    return undefined;
  }
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.svc(\.cluster\.local)?)?$/.exec(host);
  return m ? { name: m[1], namespace: m[3] } : undefined;
}

// ---------------------------------------------------------------------------------------------
// The checks

/** `APIRule team-a/hello`, `APIRule team-a/hello and VirtualService team-b/x`, or the first two and a count. */
function some(items: readonly string[]): string {
  if (items.length <= 2) return items.join(' and ');
  return `${items.slice(0, 2).join(', ')} and ${items.length - 2} more`;
}

/** {@link some} items and a verb that agrees: `APIRule team-a/hello names`, `... and 2 more name`. */
const they = (items: readonly string[], singular: string, plural: string) => `${some(items)} ${items.length === 1 ? singular : plural}`;

/** The CRD of a kind the manifests hold serves the versions they hold it in. */
export function checkRequiredKind(declared: DeclaredKind, crd: V1CustomResourceDefinition | undefined, installed?: ManifestObject): CheckResult {
  const required = REQUIRED_KINDS.find(r => crdNameOf(r.kind) === declared.crd)!;
  const { title } = required;
  const provider = required.kind.provider;
  const id = CHECK_IDS.get(provider)!;
  const name = declared.crd;
  const wanted = declared.versions;
  const needs = `${they(declared.objects, 'needs', 'need')} ${wanted.map(v => `${required.kind.group}/${v}`).join(', ')}`;
  const versions: readonly { name: string; served: boolean; storage: boolean }[] = (installed ? installed.object.spec?.versions : crd?.spec?.versions) ?? [];
  if (!installed && !crd) return fail(id, title, `${name} is not installed; ${needs}`, provider.fix);
  const served = versions.filter(v => v.served).map(v => v.name);
  const missing = wanted.filter(v => !served.includes(v));
  const by = installed ? ` (in the manifests, ${installed.file})` : '';
  if (missing.length) {
    const listed = versions.map(v => `${v.name}${v.served ? '' : ' (not served)'}${v.storage ? ' (storage)' : ''}`).join(', ') || 'none';
    const upgrade = installed
      ? `serve ${missing.join(', ')} in the CRD ${name} of ${installed.file}`
      : `upgrade ${provider.name} to a release that serves ${required.kind.group}/${missing[0]}${required.servedSince ? ` (${required.servedSince})` : ''}`;
    return fail(id, title, `${name}${by} does not serve ${missing.join(', ')} (versions: ${listed}); ${needs}`, upgrade);
  }
  const count = `${declared.objects.length} ${declared.kind}${declared.objects.length === 1 ? '' : 's'}`;
  return pass(id, title, `${name}${by} serves ${wanted.join(', ')} (${count} in the manifests)`);
}

/** An Istio Gateway that APIRules or VirtualServices name exists, or the manifests create it. */
export function checkIstioGateway(use: GatewayUse, gateways: readonly GatewayObject[] | undefined): CheckResult {
  const ref = `${use.namespace}/${use.name}`;
  const title = `gateway ${ref}`;
  const from = use.references.map(r => r.from);
  const users = some(from);
  if (use.created) return pass(CheckId.ISTIO_GATEWAY, title, `Istio Gateway ${ref} is in the manifests (${use.created.file}), for ${users}`);
  if (gateways === undefined) {
    return fail(CheckId.ISTIO_GATEWAY, title, `the cluster does not serve Istio's Gateway kind, so Istio Gateway ${ref} does not exist; ${they(from, 'names', 'name')} it`,
      `${ISTIO.fix}, then create Istio Gateway ${ref}`);
  }
  if (gateways.some(g => g.metadata?.namespace === use.namespace && g.metadata?.name === use.name)) {
    return pass(CheckId.ISTIO_GATEWAY, title, `Istio Gateway ${ref} exists, for ${users}`);
  }
  const names = gateways.map(g => `${g.metadata?.namespace}/${g.metadata?.name}`).sort();
  const others = names.length ? `Istio Gateways: ${names.join(', ')}` : 'the cluster has no Istio Gateway';
  const fix = ref === KYMA_GATEWAY
    ? `${KYMA_API_GATEWAY_MODULE.fix}, with its Kyma Gateway enabled (the APIGateway CR's spec.enableKymaGateway: true, the default)`
    : `create Istio Gateway ${ref} with a server for the endpoints' hosts, or expose them through an existing Gateway (gateway: '${names[0] ?? KYMA_GATEWAY}')`;
  return fail(CheckId.ISTIO_GATEWAY, title, `Istio Gateway ${ref} does not exist (${others}); ${they(from, 'names', 'name')} it`, fix);
}

/** Whether a label selector matches labels. */
function selects(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (!selector) return true;
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v)
    && (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      switch (operator) {
        case 'In': return labels[key] !== undefined && values.includes(labels[key]);
        case 'NotIn': return labels[key] === undefined || !values.includes(labels[key]);
        case 'Exists': return labels[key] !== undefined;
        case 'DoesNotExist': return labels[key] === undefined;
        default: return false;
      }
    });
}

/**
 * A Gateway that HTTPRoutes name as parent exists (or the manifests create it), has the listener
 * each names, and a listener of it admits each route: HTTPRoutes (by `allowedRoutes.kinds`, else
 * by an HTTP or HTTPS protocol) from the route's namespace (by `allowedRoutes.namespaces`: `Same`,
 * the default, `All`, or a `Selector` of the namespace's labels).
 *
 * @param use the Gateway and the routes that name it
 * @param gateways every Gateway API Gateway of the cluster; undefined when the kind is not served
 * @param namespaceLabels the labels of namespaces: the cluster's, with the manifests' set over them
 */
export function checkGatewayApiGateway(use: GatewayUse, gateways: readonly GatewayObject[] | undefined,
  namespaceLabels: ReadonlyMap<string, Labels>): CheckResult {
  const ref = `${use.namespace}/${use.name}`;
  const title = `gateway ${ref}`;
  const from = use.references.map(r => r.from);
  const users = some(from);
  const edit = `kubectl edit gateways.gateway.networking.k8s.io ${use.name} -n ${use.namespace}`;
  const gateway: GatewayObject | undefined = use.created?.object
    ?? gateways?.find(g => g.metadata?.namespace === use.namespace && g.metadata?.name === use.name);
  if (!gateway) {
    if (gateways === undefined) {
      return fail(CheckId.GATEWAY_API_GATEWAY, title,
        `the cluster does not serve the Gateway API's Gateway kind, so Gateway ${ref} does not exist; ${they(from, 'names', 'name')} it as parent`,
        `${GATEWAY_API.fix} and a Gateway implementation, then create Gateway ${ref}`);
    }
    const names = gateways.map(g => `${g.metadata?.namespace}/${g.metadata?.name}`).sort();
    const others = names.length ? `Gateways: ${names.join(', ')}` : 'the cluster has no Gateway';
    return fail(CheckId.GATEWAY_API_GATEWAY, title, `Gateway ${ref} does not exist (${others}); ${they(from, 'names', 'name')} it as parent`,
      `create Gateway ${ref} (gateway.networking.k8s.io/v1) with a listener for the routes' hostnames, or name an existing one in the routes' parentRefs`);
  }
  const listeners = gateway.spec?.listeners ?? [];
  const problems: string[] = [];
  const fixes = new Set<string>();
  for (const reference of use.references) {
    const named = reference.sectionName ? listeners.filter(l => l.name === reference.sectionName) : listeners;
    if (reference.sectionName && !named.length) {
      problems.push(`${reference.from} names listener ${reference.sectionName}, which it does not have (listeners: ${listeners.map(l => l.name).join(', ') || 'none'})`);
      fixes.add(`name one of its listeners in the parentRef's sectionName, or add listener ${reference.sectionName}: ${edit}`);
      continue;
    }
    const labels = { ...namespaceLabels.get(reference.namespace), 'kubernetes.io/metadata.name': reference.namespace };
    const admits = named.filter(l => {
      const kinds = l.allowedRoutes?.kinds;
      const httpRoutes = kinds ? kinds.some(k => (k.group ?? GATEWAY_API_GATEWAY.group) === HTTP_ROUTE.group && k.kind === HTTP_ROUTE.kind)
        : ['HTTP', 'HTTPS'].includes(l.protocol ?? '');
      const from = l.allowedRoutes?.namespaces?.from ?? 'Same';
      const namespace = from === 'All' || (from === 'Same' && reference.namespace === use.namespace)
        || (from === 'Selector' && selects(l.allowedRoutes?.namespaces?.selector, labels));
      return httpRoutes && namespace;
    });
    if (!admits.length) {
      const said = named.map(l => `${l.name}: ${l.protocol}, from ${l.allowedRoutes?.namespaces?.from ?? 'Same'}`).join('; ') || 'no listeners';
      problems.push(`no listener admits ${reference.from} from namespace ${reference.namespace} (${said})`);
      fixes.add(`let a listener admit HTTPRoutes from namespace ${reference.namespace} (allowedRoutes.namespaces.from: All, or a Selector that matches it): ${edit}`);
    }
  }
  const is = use.created ? `is in the manifests (${use.created.file})` : 'exists';
  if (problems.length) return fail(CheckId.GATEWAY_API_GATEWAY, title, `Gateway ${ref} ${is}, but ${problems.join('; ')}`, [...fixes].join('; '));
  return pass(CheckId.GATEWAY_API_GATEWAY, title, `Gateway ${ref} ${is} and admits ${users}`);
}

/** The Service of the publisher proxy that Functions publish events to exists. */
export function checkPublisherProxy(facts: PublisherProxyFacts, subscriptions: readonly string[]): CheckResult {
  const title = 'publisher proxy';
  const from = `${facts.address} (${facts.source})`;
  if (!facts.service) return skip(CheckId.PUBLISHER_PROXY, title, `${from} names no Service of the cluster: not checked`);
  const service = `${facts.service.namespace}/${facts.service.name}`;
  if (facts.service.exists) return pass(CheckId.PUBLISHER_PROXY, title, `Service ${service} exists: Functions publish events to ${from}`);
  return fail(CheckId.PUBLISHER_PROXY, title,
    `Service ${service} does not exist: Functions cannot publish events to ${from}, and ${they(subscriptions, 'needs', 'need')} Kyma's eventing`,
    `${KYMA_EVENTING_MODULE.fix}: it runs the publisher proxy; or set the ServerlessStack's controller.publisherProxyAddress to yours`);
}

/**
 * The checks of what the manifests declare to reach Functions, each only when they hold such
 * objects: the CRD of each custom kind they hold (in the order of {@link REQUIRED_KINDS}), each
 * Istio Gateway and Gateway API Gateway they name, and with Subscriptions, the publisher proxy.
 *
 * @param declared what the manifests declare
 * @param facts what was read from the cluster for them
 */
export function reachChecks(declared: DeclaredReach, facts: ReachFacts): CheckResult[] {
  // Applying the manifests sets their labels and keeps the others a Namespace has.
  const labels = new Map(facts.namespaceLabels);
  for (const [name, own] of declared.namespaces) labels.set(name, { ...labels.get(name), ...own });
  return [
    ...declared.kinds.map(k => checkRequiredKind(k, facts.crds.get(k.crd), declared.crds.get(k.crd))),
    ...declared.istioGateways.map(use => checkIstioGateway(use, facts.istioGateways)),
    ...declared.gatewayApiGateways.map(use => checkGatewayApiGateway(use, facts.gatewayApiGateways, labels)),
    ...(declared.subscriptions.length && facts.publisherProxy ? [checkPublisherProxy(facts.publisherProxy, declared.subscriptions)] : []),
  ];
}
