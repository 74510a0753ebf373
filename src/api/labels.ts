/**
 * Labels and annotations that tie the objects of a Function's endpoints, subscriptions and
 * traffic splits to it: synth writes them, `kyma-serverless status` and `preflight` read them.
 */
import { FunctionChildLabel } from './function-status';

/** The label that ties an endpoint's or a subscription's objects to their Function, with its name. */
export const FUNCTION_LABEL = 'cdk8s-kyma-serverless/function';

/** The label that ties a traffic split's objects to it, with its name. */
export const TRAFFIC_LABEL = 'cdk8s-kyma-serverless/traffic';

/** The annotation that holds an endpoint's URL, on its APIRule, VirtualService or HTTPRoute. */
export const URL_ANNOTATION = 'cdk8s-kyma-serverless/url';

/** The label the Function Controller puts on a Function's Pods (and its other objects), with the Function's name. */
export const FUNCTION_POD_LABEL = FunctionChildLabel.FUNCTION_NAME;
