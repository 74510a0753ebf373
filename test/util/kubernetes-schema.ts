/**
 * Validates synthesized objects against the Kubernetes 1.27 OpenAPI schema
 * (kubernetes-models 4.4, generated from Kubernetes 1.27.1), cert-manager objects against
 * cert-manager's CRDs (@kubernetes-models/cert-manager), and Functions against our CRD.
 */
import { FUNCTION_API_VERSION, FUNCTION_KIND, formatViolations, functionSchemaValidator } from '../../src/api';

interface Model { validate(): void }
type ModelClass = new (data: unknown) => Model;

function modelClass(apiVersion: string, kind: string): ModelClass {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const modulePath = group === 'cert-manager.io'
    ? `@kubernetes-models/cert-manager/${group}/${version}`
    : group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(modulePath) as Record<string, ModelClass>;
  const model = mod[kind];
  if (!model) throw new Error(`Kubernetes 1.27 has no ${kind} in ${apiVersion}`);
  return model;
}

/**
 * Returns the reasons an object is invalid: Kubernetes objects against the 1.27 schema,
 * Functions against our CRD's schema and CEL rules.
 */
export function kubernetesViolations(object: any): string[] {
  if (object.apiVersion === FUNCTION_API_VERSION && object.kind === FUNCTION_KIND) {
    const violations = functionSchemaValidator().validate(object);
    return violations.length ? [formatViolations(violations)] : [];
  }
  try {
    new (modelClass(object.apiVersion, object.kind))(object).validate();
    return [];
  } catch (e) {
    return [`${object.kind}/${object.metadata?.name}: ${(e as Error).message}`];
  }
}

/** Throws with every reason when any object is invalid. */
export function expectValidKubernetesObjects(objects: readonly any[]): void {
  const problems = objects.flatMap(kubernetesViolations);
  if (problems.length) throw new Error(problems.join('\n'));
}
