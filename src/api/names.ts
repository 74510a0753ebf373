/**
 * Kubernetes name rules, written once for every object name the package checks.
 */

/** A DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric. */
export function isDns1123Label(name: string): boolean {
  return name.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name);
}

/** A DNS-1123 subdomain: at most 253 characters of dot-separated DNS-1123 labels. */
export function isDns1123Subdomain(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
}
