/**
 * Kubernetes name and key syntax, written once for every name, key and label the package checks.
 * The rules and their wording follow the API server's (`k8s.io/apimachinery/pkg/util/validation`).
 */

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const DNS1123_LABEL_PATTERN = new RegExp(`^${DNS1123_LABEL}$`);
const DNS1123_SUBDOMAIN_PATTERN = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);

/** A DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric. */
export function isDns1123Label(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL_PATTERN.test(name);
}

/** A DNS-1123 subdomain: at most 253 characters of dot-separated DNS-1123 labels. */
export function isDns1123Subdomain(name: string): boolean {
  return name.length <= 253 && DNS1123_SUBDOMAIN_PATTERN.test(name);
}

/**
 * A DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter and
 * ending alphanumeric. Service names must be DNS-1035 labels.
 */
export function isDns1035Label(name: string): boolean {
  return name.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name);
}

/**
 * A valid environment variable name, as the API server accepts it in a container's `env`:
 * letters, digits, '_', '-' and '.', not starting with a digit, and not '.', '..' or '..'-prefixed.
 */
export function isEnvVarName(name: string): boolean {
  return /^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name) && name !== '.' && !name.startsWith('..');
}

/** A valid key of a ConfigMap or Secret. */
export function isConfigMapKey(key: string): boolean {
  return key.length > 0 && key.length <= 253 && /^[-._a-zA-Z0-9]+$/.test(key) && key !== '.' && key !== '..' && !key.startsWith('..');
}

/**
 * The problems of a qualified name, the syntax of label and annotation keys: an optional
 * DNS-1123 subdomain prefix and '/', then a name of at most 63 characters.
 *
 * @returns one message per problem, in the API server's words; empty when the key is valid
 */
export function qualifiedNameProblems(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return ['a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and \'/\' (e.g. \'example.com/MyName\')'];
  }
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  const problems: string[] = [];
  if (prefix !== undefined) {
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else if (!isDns1123Subdomain(prefix)) {
      problems.push('prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character');
    }
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) {
    problems.push('name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character');
  }
  return problems;
}

/** Whether a text is a valid label value: empty, or at most 63 characters of the qualified-name alphabet. */
export function isLabelValue(value: string): boolean {
  return value.length === 0 || (value.length <= 63 && QUALIFIED_NAME.test(value));
}

const DOMAIN_COMPONENT = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const IMAGE_REFERENCE = new RegExp(
  `^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`
  + '(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$',
);

/**
 * Whether a text is a container image reference (`[registry[:port]/]path[:tag][@digest]`),
 * by the grammar of the distribution project's reference package.
 */
export function isImageReference(image: string): boolean {
  return image.length <= 255 + 128 + 80 && IMAGE_REFERENCE.test(image);
}
