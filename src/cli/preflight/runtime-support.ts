/**
 * The check of `preflight` that lists the Functions in the cluster whose runtime is past its end
 * of support, or near it while their release has a newer runtime of the same language (see
 * `runtimeNotice`). It warns and never fails: a date must not stop a rollout.
 */
import { ServerlessRelease } from '../../api/release';
import { runtimeNotice } from '../../api/runtime-support';
import { CheckId, CheckResult, warn } from './report';

/** A Function in the cluster, as the check reads it. */
export interface FunctionRuntimeFact {
  readonly namespace: string;
  readonly name: string;
  /** `spec.runtime`, when it has one. */
  readonly runtime?: string;
}

/** The title of the check. */
const TITLE = 'runtime support';

/**
 * The Functions on runtimes past or near their end of support.
 *
 * @param functions the Functions in the cluster; undefined when they could not be read (no Function CRD)
 * @param release the release the Functions run on
 * @param now the time to judge at
 * @returns a warning that names them, or nothing when there are none: the report stays as short as the cluster's concerns
 */
export function checkRuntimeSupport(functions: readonly FunctionRuntimeFact[] | undefined, release: ServerlessRelease, now: Date): CheckResult | undefined {
  const noticed = (functions ?? []).flatMap(fn => {
    const notice = fn.runtime === undefined ? undefined : runtimeNotice(fn.runtime, release, now);
    return notice ? [{ fn, notice }] : [];
  }).sort((a, b) => `${a.fn.namespace}/${a.fn.name}`.localeCompare(`${b.fn.namespace}/${b.fn.name}`));
  if (!noticed.length) return undefined;
  const detail = noticed.map(({ fn, notice }) => `${fn.namespace}/${fn.name} (${notice.runtime}, support ${notice.ended ? 'ended' : 'ends'} ${notice.endOfSupport})`).join(', ');
  const moves = [...new Set(noticed.map(({ notice }) => notice.message))].join('; ');
  return warn(CheckId.RUNTIME_SUPPORT, TITLE, `${noticed.length} Function${noticed.length === 1 ? '' : 's'} on a runtime past or near its end of support: ${detail}`, moves);
}
