/**
 * What `status` says of Functions on a runtime past its end of support, or near it while their
 * release has a newer runtime of the same language (see `runtimeNotice`). Pure: no I/O.
 */
import { DEFAULT_RELEASE } from '../../api/release';
import { runtimeNotice } from '../../api/runtime-support';
import { FunctionStatusReport } from './report';

/**
 * The lines that list the Functions on runtimes past or near their end of support, after a heading.
 *
 * @param reports the Functions' reports
 * @param now the time to judge at
 * @returns no lines when there are none
 */
export function runtimeSupportLines(reports: readonly FunctionStatusReport[], now: Date): string[] {
  const lines = reports.flatMap(r => {
    const notice = r.runtime === undefined ? undefined : runtimeNotice(r.runtime, r.release ?? DEFAULT_RELEASE, now);
    return notice ? [`  ${r.namespace}/${r.name}: ${notice.message}`] : [];
  });
  return lines.length ? [`${lines.length} Function${lines.length === 1 ? '' : 's'} on a runtime past or near its end of support:`, ...lines] : [];
}
