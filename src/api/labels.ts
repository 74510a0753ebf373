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

/**
 * The annotation on a Function that names the kinds of the objects synth writes beside it and labels
 * {@link FUNCTION_LABEL} with its name (its APIRules, VirtualServices, HTTPRoutes, Subscriptions, Istio
 * policies, autoscaler, ScaledObject): sorted `Kind.group` (`Kind` for the core group), comma-separated,
 * as the ApplySet annotation `applyset.kubernetes.io/contains-group-kinds` lists kinds. Those objects
 * may be missing where the Function is not (the CRD of their kind is not installed, so a GitOps stage
 * or wave of them fails); the annotation, which travels with the Function whichever tool applied it,
 * tells `kyma-serverless status` which kinds a Function needs, so that it names a kind the cluster lacks
 * only for the Functions that need it.
 */
export const OBJECT_KINDS_ANNOTATION = 'cdk8s-kyma-serverless/object-kinds';

/**
 * A kind as {@link OBJECT_KINDS_ANNOTATION} names it: `APIRule.gateway.kyma-project.io`, `Service`.
 *
 * @param apiVersion the object's `apiVersion`: `gateway.kyma-project.io/v2`, `v1`
 * @param kind the object's `kind`
 */
export function groupKindOf(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
}

/**
 * The value of {@link OBJECT_KINDS_ANNOTATION} for some kinds: each once, sorted, comma-separated.
 *
 * @param groupKinds kinds as {@link groupKindOf} gives them
 * @returns undefined for no kinds: the Function then has no such annotation
 */
export function objectKindsValue(groupKinds: Iterable<string>): string | undefined {
  const kinds = [...new Set(groupKinds)].sort();
  return kinds.length ? kinds.join(',') : undefined;
}

/**
 * The kinds a Function's {@link OBJECT_KINDS_ANNOTATION} names, as {@link groupKindOf} gives them.
 *
 * @param annotations the Function's `metadata.annotations`
 * @returns none when it has no such annotation
 */
export function objectKindsOf(annotations: { readonly [key: string]: string } | undefined): string[] {
  return (annotations?.[OBJECT_KINDS_ANNOTATION] ?? '').split(',').map(k => k.trim()).filter(Boolean);
}
