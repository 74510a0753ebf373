/**
 * Validates synthesized objects the way `kyma-serverless validate` does: Kubernetes objects
 * against the 1.27 schema (kubernetes-models 4.4, generated from Kubernetes 1.27.1),
 * cert-manager, Argo CD and Flux objects against their CRDs, Functions against every rule of
 * the Function API. A kind without a known schema is a failure here: tests know what they emit.
 */
import { formatViolations } from '../../src/api';
import { ValidateObjectOptions, validateObject } from '../../src/policy/manifests';

/** Returns the reasons an object is invalid. */
export function kubernetesViolations(object: any, options: ValidateObjectOptions = {}): string[] {
  const { violations, known } = validateObject(object, options);
  if (!known) return [`${object.apiVersion} ${object.kind}: no schema is known`];
  return violations.length ? [`${object.kind}/${object.metadata?.name}: ${formatViolations(violations)}`] : [];
}

/**
 * Throws with every reason when any object is invalid.
 *
 * @param options the release Functions are checked against (default: 1.11.1, as `validate` without a CRD)
 */
export function expectValidKubernetesObjects(objects: readonly any[], options: ValidateObjectOptions = {}): void {
  const problems = objects.flatMap(o => kubernetesViolations(o, options));
  if (problems.length) throw new Error(problems.join('\n'));
}
