/**
 * The webhook's configuration file as js-yaml writes it (`dump` with sorted keys, no line width,
 * invalid values skipped), for the values such a file holds, without loading js-yaml.
 *
 * Why: every stack with a webhook renders this file, and js-yaml (its loader and dumper, about
 * 25 modules) was the largest thing the stack alone loaded for it: about a sixth of loading the
 * package. The file is a few maps of names, numbers and flags, which js-yaml writes one way: a key
 * and a plain scalar per line, nested maps indented by two spaces. {@link plainYamlOf} writes
 * exactly that for what it is sure of, and gives up on anything else (an empty map, a list, a
 * string js-yaml would quote or that might read as another type, a number that is no safe
 * integer), which js-yaml then writes as before. A test compares both on generated values.
 */

/**
 * Strings that js-yaml writes plain and reads back as the same string: a name that starts with a
 * letter and holds letters, digits, `.`, `_`, `/` and `-` (which no implicit type of js-yaml's
 * default schema matches but the words below), or a version such as `1.13.0`.
 */
const PLAIN = /^(?:[A-Za-z][A-Za-z0-9._/-]*|[0-9]+\.[0-9]+\.[0-9]+)$/;

/** Words of that form that js-yaml quotes: YAML 1.2's null and booleans, and YAML 1.1's booleans, which it quotes for older readers. */
const QUOTED_WORDS = new Set([
  'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
  'y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF',
]);

/** Keys from this length on js-yaml writes as explicit keys (`? key`); these are left to it. */
const LONG_KEY = 1024;

function plainString(value: string): boolean {
  return PLAIN.test(value) && !QUOTED_WORDS.has(value);
}

/** Appends the lines of a map at an indent; false when js-yaml might write it otherwise. */
function writeMap(map: object, indent: string, lines: string[]): boolean {
  const prototype = Object.getPrototypeOf(map);
  if ((prototype !== Object.prototype && prototype !== null) || Array.isArray(map)) return false;
  let written = false;
  for (const key of Object.keys(map).sort()) {
    if (key.length >= LONG_KEY || !plainString(key)) return false;
    const value = (map as Record<string, unknown>)[key];
    if (value === undefined) continue; // js-yaml's skipInvalid: the pair is left out.
    if (typeof value === 'string') {
      if (!plainString(value)) return false;
      lines.push(`${indent}${key}: ${value}`);
    } else if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || Object.is(value, -0)) return false;
      lines.push(`${indent}${key}: ${String(value)}`);
    } else if (typeof value === 'boolean') {
      lines.push(`${indent}${key}: ${String(value)}`);
    } else if (typeof value === 'object' && value !== null) {
      lines.push(`${indent}${key}:`);
      if (!writeMap(value, `${indent}  `, lines)) return false;
    } else {
      return false;
    }
    written = true;
  }
  // An empty map (or one of undefined values only) is `{}`, written after its key: left to js-yaml.
  return written;
}

/**
 * What `dump(value, { sortKeys: true, lineWidth: -1, skipInvalid: true })` of js-yaml gives, for
 * a map of maps, names, versions, safe integers and booleans.
 *
 * @param value the value to write
 * @returns the YAML text, or undefined when js-yaml may write the value otherwise
 */
export function plainYamlOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const lines: string[] = [];
  return writeMap(value, '', lines) ? `${lines.join('\n')}\n` : undefined;
}
