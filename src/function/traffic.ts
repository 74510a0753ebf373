/**
 * FunctionTraffic: one stable name in front of several Functions, with the share of requests each
 * gets, as Knative's Route split traffic between revisions.
 */
import { ApiObject, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { IVirtualService } from '@kubernetes-models/istio/networking.istio.io/v1beta1/VirtualService';
import { TRAFFIC_LABEL, isDns1035Label } from '../api';
import { trafficRouteProblems } from '../api/traffic';
import { EndpointBackend, EndpointTarget, FUNCTION_SERVICE_PORT } from '../exposure/exposure';
import { ExposeOptions, FunctionEndpoint, IExposable } from './endpoint';
import type { KymaFunction } from './kyma-function';

/** One Function behind a traffic split. */
export interface TrafficRoute {
  /** The Function, in the split's namespace. */
  readonly function: KymaFunction;
  /** Percent of the requests it gets: a whole number from 0 to 100; all routes' add up to 100. */
  readonly percent: number;
  /**
   * A name for this Function alone: it also answers at `<tag>-<name>`, whatever its percent, as
   * Knative's tags do (to try a new version at 0 % before it gets traffic).
   *
   * @default - no name of its own
   */
  readonly tag?: string;
}

/** Props of {@link FunctionTraffic}. */
export interface FunctionTrafficProps {
  /**
   * The stable name: the split answers at `http://<name>.<namespace>.svc.cluster.local`. A
   * DNS-1035 label, and not the name of one of the Functions.
   *
   * @default - the construct id
   */
  readonly name?: string;
  /** The Functions and their shares. */
  readonly routes: TrafficRoute[];
}

/**
 * A stable in-cluster name in front of several Functions, such as `orders-v1` at 90 % and
 * `orders-v2` at 10 % behind `orders`: a Service without selector gives the name its DNS entry,
 * and an Istio VirtualService for the mesh sends each request to one Function's Service with the
 * given weights. Each route's `tag` also gets a name of its own, `<tag>-<name>`. Callers must be
 * in the mesh (Istio sidecar), as Function Pods are.
 *
 * `expose()` makes the split reachable from outside, through `Exposure.istio` or
 * `Exposure.gatewayApi` (an APIRule cannot send one path to several Services).
 */
export class FunctionTraffic extends Construct implements IExposable {
  /** The stable name. */
  public readonly name: string;
  /** The namespace of the split and its Functions. */
  public readonly namespace?: string;
  /** The in-cluster URL of the split. */
  public readonly url: string;

  private readonly routes: readonly TrafficRoute[];
  private readonly problems: string[] = [];
  private endpoints = 0;

  constructor(scope: Construct, id: string, props: FunctionTrafficProps) {
    super(scope, id);
    this.name = props.name ?? id;
    this.namespace = Chart.of(this).namespace;
    this.routes = props.routes;
    const namespace = this.namespace ?? '';
    this.url = `http://${this.name}.${namespace}.svc.cluster.local`;

    if (!isDns1035Label(this.name)) {
      this.problems.push(`'name' (${this.name}) must be a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter (it names a Service)`);
    }
    if (this.namespace === undefined) {
      this.problems.push('\'namespace\': the enclosing chart has no namespace; add the split to the FunctionNamespace of its Functions');
    }
    for (const problem of trafficRouteProblems(props.routes.map(r => ({ percent: r.percent, tag: r.tag })), this.name)) {
      // Name the prop as every synth error does: 'routes[0].percent' (...) or 'routes': ...
      const route = /^(routes\[\d+\]\.\w+) (.*)$/.exec(problem);
      this.problems.push(route ? `'${route[1]}' ${route[2]}` : `'routes': ${problem}`);
    }
    props.routes.forEach((route, i) => {
      if (route.function.namespace !== this.namespace) {
        this.problems.push(`'routes[${i}].function' (${route.function.name}) is in namespace ${route.function.namespace}, the split in ${this.namespace}: `
          + 'a Service can only name Functions of its own namespace; move the split or the Function');
      }
      if (route.function.name === this.name) {
        this.problems.push(`'routes[${i}].function' (${route.function.name}) has the split's own name: its Service would clash with the split's; rename the split`);
      }
      if (props.routes.findIndex(r => r.function === route.function) !== i) {
        this.problems.push(`'routes[${i}].function' (${route.function.name}) is routed to twice: give each Function one route`);
      }
    });
    this.node.addValidation({ validate: () => this.problems });
    if (this.problems.length) return;

    const labels = { [TRAFFIC_LABEL]: this.name };
    this.stableName('Resource', this.name, props.routes.filter(r => r.percent > 0).map(r => ({ service: r.function.name, percent: r.percent })), labels);
    for (const route of props.routes) {
      if (route.tag) this.stableName(`Tag-${route.tag}`, `${route.tag}-${this.name}`, [{ service: route.function.name, percent: 100 }], labels);
    }
  }

  /**
   * Exposes the split outside the cluster, with the same weights.
   *
   * @param options host, paths, auth, CORS, timeout, and `via` (`Exposure.istio` or `Exposure.gatewayApi`)
   * @returns the endpoint, with its `url`
   */
  public expose(options: ExposeOptions): FunctionEndpoint {
    this.endpoints++;
    const id = this.endpoints === 1 ? 'Endpoint' : `Endpoint${this.endpoints}`;
    // Not `<name>`: the split's own Service and VirtualService for the mesh have that name.
    const name = this.endpoints === 1 ? `${this.name}-endpoint` : `${this.name}-endpoint-${this.endpoints}`;
    return new FunctionEndpoint(this, id, { ...options, target: this, name });
  }

  /** @internal */
  public _endpointTarget(): Pick<EndpointTarget, 'namespace' | 'backends' | 'workloads' | 'labels'> {
    return {
      namespace: this.namespace ?? '',
      backends: this.routes.map(r => ({ service: r.function.name, percent: r.percent })),
      workloads: this.routes.filter(r => r.percent > 0).map(r => r.function.name),
      labels: { [TRAFFIC_LABEL]: this.name },
    };
  }

  /** A Service without selector (the DNS name) and a mesh VirtualService with the weights. */
  private stableName(id: string, name: string, backends: readonly EndpointBackend[], labels: { [key: string]: string }): void {
    const scope = id === 'Resource' ? this : new Construct(this, id);
    const namespace = this.namespace!;
    const host = `${name}.${namespace}.svc.cluster.local`;
    new k8s.KubeService(scope, id === 'Resource' ? 'Resource' : 'Service', {
      metadata: { name, labels },
      // No selector: the name only has to resolve; the sidecars route by the VirtualService.
      spec: { type: 'ClusterIP', ports: [{ name: 'http', port: FUNCTION_SERVICE_PORT, protocol: 'TCP', targetPort: k8s.IntOrString.fromNumber(8080) }] },
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { VirtualService } = require('@kubernetes-models/istio/networking.istio.io/v1beta1/VirtualService');
    const service: IVirtualService = {
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'VirtualService',
      metadata: { name, namespace, labels },
      spec: {
        hosts: [host],
        gateways: ['mesh'],
        http: [{
          route: backends.map(b => ({
            destination: { host: `${b.service}.${namespace}.svc.cluster.local`, port: { number: FUNCTION_SERVICE_PORT } },
            ...(backends.length > 1 ? { weight: b.percent } : {}),
          })),
        }],
      },
    };
    const model = new VirtualService(service);
    model.validate();
    new ApiObject(scope, 'VirtualService', model.toJSON());
  }
}
