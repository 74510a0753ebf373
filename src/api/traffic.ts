/**
 * The rules of a traffic split: one stable name in front of several Functions, each route with a
 * share of the requests in percent and an optional tag that gives the route an address of its own.
 *
 * Kyma has no traffic API of its own; the split is rendered as a weighted Istio VirtualService or
 * Gateway API HTTPRoute, whose weights are relative. We keep the stricter Knative convention of
 * whole percents that add up to 100, so that the numbers a user writes are the shares they get.
 */
import { isDns1035Label } from './names';

/** The most characters of a Service name (a DNS-1035 label). */
export const SERVICE_NAME_MAX_LENGTH = 63;

/** A route of a traffic split, as its rules see it. */
export interface TrafficRouteWeight {
  /** The share of requests, in whole percent (0 to 100). */
  readonly percent: number;
  /**
   * A name for the route's own address, `<tag>-<name>`.
   *
   * @default - the route has no address of its own
   */
  readonly tag?: string;
}

/**
 * The name of the Service that addresses one tagged route of a split: `<tag>-<name>`.
 */
export function taggedServiceName(tag: string, name: string): string {
  return `${tag}-${name}`;
}

/**
 * The problems of the routes of a traffic split: at least one route; each percent a whole number
 * from 0 to 100, all adding up to exactly 100; each tag a DNS-1035 label used once, short enough
 * that `<tag>-<name>` is a Service name of at most 63 characters.
 *
 * @param routes the routes, in order (messages name them `routes[i]`)
 * @param name the stable name of the split; when given, the tagged Service names are checked
 * @returns one message per problem, each naming the route and the value; empty when the routes are valid
 */
export function trafficRouteProblems(routes: readonly TrafficRouteWeight[], name?: string): string[] {
  if (routes.length === 0) return ['a traffic split needs at least one route'];
  const problems: string[] = [];
  let total = 0;
  let whole = true;
  routes.forEach(({ percent }, i) => {
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
      problems.push(`routes[${i}].percent (${percent}) must be a whole number from 0 to 100`);
      whole = false;
    } else {
      total += percent;
    }
  });
  if (whole && total !== 100) {
    problems.push(`the percents of the routes add up to ${total}; they must add up to exactly 100 (${routes.map(r => r.percent).join(' + ')})`);
  }
  const tags = new Map<string, number>();
  routes.forEach(({ tag }, i) => {
    if (tag === undefined) return;
    if (!isDns1035Label(tag)) {
      problems.push(`routes[${i}].tag (${JSON.stringify(tag)}) must be a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit`);
    } else if (name !== undefined && taggedServiceName(tag, name).length > SERVICE_NAME_MAX_LENGTH) {
      const service = taggedServiceName(tag, name);
      problems.push(`routes[${i}].tag (${JSON.stringify(tag)}) makes the Service name ${JSON.stringify(service)} ${service.length} characters long; `
        + `at most ${SERVICE_NAME_MAX_LENGTH} are allowed, so shorten the tag to ${SERVICE_NAME_MAX_LENGTH - name.length - 1} characters or fewer`);
    }
    const first = tags.get(tag);
    if (first !== undefined) problems.push(`routes[${i}].tag (${JSON.stringify(tag)}) is already the tag of routes[${first}]; each tag names one route`);
    else tags.set(tag, i);
  });
  return problems;
}
