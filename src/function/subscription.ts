/**
 * FunctionSubscription: a Function subscribed to events of Kyma Eventing, as a Kyma
 * `Subscription` whose sink is the Function's Service.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { eventSourceProblems, eventTypeProblems, validateSubscription } from '../api/subscription-rules';
import { SUBSCRIPTION_API_VERSION, SUBSCRIPTION_KIND, TypeMatching, serviceSinkUrl } from '../api/subscription-schema';
import { declaredProblems } from './_declared';

/** Options of `subscribe()`. */
export interface SubscribeOptions {
  /**
   * Where the events come from, such as `commerce` or `my-app` (CloudEvents `source`). With
   * `TypeMatching.STANDARD` it is cleaned up like the types; with `EXACT` it is used as given.
   *
   * @see https://kyma-project.io/#/eventing-manager/user/evnt-event-names
   */
  readonly source: string;
  /**
   * The event types the Function receives, such as `order.created.v1`: at least two segments
   * separated by dots.
   */
  readonly types: string[];
  /**
   * How `source` and `types` are matched against published events.
   *
   * @default TypeMatching.STANDARD
   */
  readonly typeMatching?: TypeMatching;
  /**
   * How many events may be delivered to the Function at once, not yet acknowledged.
   *
   * @default 10
   */
  readonly maxInFlightMessages?: number;
}

/** Props of {@link FunctionSubscription}. */
export interface FunctionSubscriptionProps extends SubscribeOptions {
  /** The Function's name: the sink is its Service. */
  readonly functionName: string;
  /** The Function's namespace, which the Subscription must share. */
  readonly namespace: string;
  /**
   * The Subscription's name.
   *
   * @default - the Function's name
   */
  readonly name?: string;
  /**
   * Labels of the Subscription.
   *
   * @default - none
   */
  readonly labels?: { readonly [key: string]: string };
}

/**
 * A Kyma `Subscription` (`eventing.kyma-project.io/v1alpha2`) that delivers events of a source
 * and types to a Function's Service, `http://<function>.<namespace>.svc.cluster.local`. Create it
 * with `fn.subscribe()`. The event types and the source are checked at synth with the rules of
 * Kyma Eventing, each problem naming the prop.
 *
 * @see https://kyma-project.io/#/eventing-manager/user/resources/evnt-cr-subscription
 */
export class FunctionSubscription extends Construct {
  /** The Subscription's name. */
  public readonly name: string;
  /** Where events are delivered: the Function's Service. */
  public readonly sink: string;
  /** The Subscription object. */
  public readonly apiObject: ApiObject;

  private readonly problems: string[] = [];

  constructor(scope: Construct, id: string, props: FunctionSubscriptionProps) {
    super(scope, id);
    this.name = props.name ?? props.functionName;
    this.sink = serviceSinkUrl(props.functionName, props.namespace);
    const typeMatching = props.typeMatching ?? TypeMatching.STANDARD;
    const maxInFlight = props.maxInFlightMessages ?? 10;

    for (const problem of eventSourceProblems(props.source, typeMatching)) this.problems.push(`'source' (${JSON.stringify(props.source)}): ${problem}`);
    if (props.types.length === 0) this.problems.push('\'types\' is empty: give at least one event type, such as order.created.v1');
    props.types.forEach((type, i) => {
      for (const problem of eventTypeProblems(type, typeMatching)) this.problems.push(`'types[${i}]' (${JSON.stringify(type)}): ${problem}`);
      if (props.types.indexOf(type) !== i) this.problems.push(`'types[${i}]' (${JSON.stringify(type)}) is given twice: give each type once`);
    });
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
      this.problems.push(`'maxInFlightMessages' (${maxInFlight}) must be a whole number of at least 1`);
    }

    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: SUBSCRIPTION_API_VERSION,
      kind: SUBSCRIPTION_KIND,
      metadata: { name: this.name, namespace: props.namespace, labels: { ...props.labels } },
      spec: {
        sink: this.sink,
        source: props.source,
        types: [...props.types],
        typeMatching,
        config: { maxInFlightMessages: String(maxInFlight) },
      },
    } as any);
    this.node.addValidation({
      validate: () => declaredProblems(this, this.problems.length ? this.problems : validateSubscription(this.apiObject.toJson())
        .map(v => `Subscription ${this.name}: ${v.path ? `${v.path}: ` : ''}${v.message}${v.hint ? `; ${v.hint}` : ''}`)),
    });
  }
}
