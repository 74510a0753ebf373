/**
 * The URL checks of Go's `net/url`, which the Kyma controllers use to judge URIs: `url.Parse`
 * (any URI reference) and `url.ParseRequestURI` (an absolute URI or an absolute path). Written
 * from the documented behaviour of the Go standard library, so that our verdicts and the
 * controllers' agree; the messages read like Go's errors (`parse "x": invalid URI for request`).
 */

/** The parts of a URL that the rules of this package look at. */
export interface GoUrl {
  /** The scheme, in lower case; empty when there is none. */
  readonly scheme: string;
  /** `host[:port]` of the authority; empty when there is none. */
  readonly host: string;
  /** Whether the URL is `scheme:opaque` (no `/` after the scheme). */
  readonly opaque: boolean;
  /** Whether {@link formatGoUrl} would give an empty text (the URL has no part at all). */
  readonly empty: boolean;
}

/** The result of parsing: the URL, or Go's error message. */
export type GoUrlResult = { readonly url: GoUrl; readonly error?: undefined } | { readonly url?: undefined; readonly error: string };

const HEX = /^[0-9a-fA-F]$/;

function quote(value: string): string {
  return JSON.stringify(value);
}

/** Splits off the scheme the way Go's `getScheme` does. */
function splitScheme(raw: string): { scheme: string; rest: string } | string {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) return 'missing protocol scheme';
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    // Any other character: there is no scheme.
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

/** Go's `unescape`: the first bad `%` escape, or a character a host may not have. */
function escapeProblem(value: string, host: boolean): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '%') {
      if (!HEX.test(value[i + 1] ?? '') || !HEX.test(value[i + 2] ?? '')) return `invalid URL escape ${quote(value.slice(i, i + 3))}`;
      // A host may escape only bytes of multi-byte characters, and %25 (a zone's '%').
      if (host && parseInt(value[i + 1], 16) < 8 && value.slice(i, i + 3) !== '%25') return `invalid URL escape ${quote(value.slice(i, i + 3))}`;
      i += 2;
    } else if (host && c.charCodeAt(0) < 0x80 && !/[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]/.test(c)) {
      return `invalid character ${quote(c)} in host name`;
    }
  }
  return undefined;
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

/** Go's `parseHost`: the host, or the error. */
function hostProblem(host: string): string | undefined {
  let rest = host;
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) return 'missing \']\' in host';
    const colonPort = host.slice(end + 1);
    if (!validOptionalPort(colonPort)) return `invalid port ${quote(colonPort)} after host`;
    rest = host.slice(0, end + 1);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) {
      const colonPort = host.slice(colon);
      if (!validOptionalPort(colonPort)) return `invalid port ${quote(colonPort)} after host`;
    }
  }
  return escapeProblem(rest, true);
}

/** Go's `parseAuthority`: userinfo (checked only for its characters) and host. */
function authorityProblem(authority: string): string | undefined {
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) return 'net/url: invalid userinfo';
    const problem = escapeProblem(userinfo, false);
    if (problem) return problem;
  }
  return hostProblem(authority.slice(at + 1));
}

function parse(raw: string, viaRequest: boolean): GoUrl | string {
  if (/[\x00-\x1f\x7f]/.test(raw)) return 'net/url: invalid control character in URL';
  if (raw === '' && viaRequest) return 'empty url';
  if (raw === '*') return { scheme: '', host: '', opaque: false, empty: false };
  const split = splitScheme(raw);
  if (typeof split === 'string') return split;
  const scheme = split.scheme.toLowerCase();
  let rest = split.rest;
  let query = false;
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    rest = rest.slice(0, -1);
    query = true;
  } else if (rest.includes('?')) {
    rest = rest.slice(0, rest.indexOf('?'));
    query = true;
  }
  if (!rest.startsWith('/')) {
    if (scheme !== '') return { scheme, host: '', opaque: true, empty: false };
    if (viaRequest) return 'invalid URI for request';
    if (rest.split('/')[0].includes(':')) return 'first path segment in URL cannot contain colon';
  }
  let host = '';
  if ((scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const problem = authorityProblem(authority);
    if (problem) return problem;
    host = authority.slice(authority.lastIndexOf('@') + 1);
  }
  const problem = escapeProblem(rest, false);
  if (problem) return problem;
  return { scheme, host, opaque: false, empty: scheme === '' && host === '' && rest === '' && !query };
}

/**
 * Go's `url.Parse`: any URI reference, relative or absolute, with a fragment.
 *
 * @returns the URL's parts, or Go's error message
 */
export function parseGoUrl(raw: string): GoUrlResult {
  const hash = raw.indexOf('#');
  const [main, fragment] = hash >= 0 ? [raw.slice(0, hash), raw.slice(hash + 1)] : [raw, ''];
  const url = parse(main, false);
  if (typeof url === 'string') return { error: `parse ${quote(main)}: ${url}` };
  if (fragment === '') return { url };
  const problem = escapeProblem(fragment, false);
  if (problem) return { error: `parse ${quote(raw)}: ${problem}` };
  return { url: { ...url, empty: false } };
}

/**
 * Go's `url.ParseRequestURI`: an absolute URI or an absolute path, as a request line holds it
 * (no fragment).
 *
 * @returns the URL's parts, or Go's error message
 */
export function parseGoRequestUri(raw: string): GoUrlResult {
  const url = parse(raw, true);
  return typeof url === 'string' ? { error: `parse ${quote(raw)}: ${url}` } : { url };
}
