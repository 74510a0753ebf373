/**
 * The Function CustomResourceDefinition, generated from the typed schema.
 */
import { FUNCTION_GROUP, FUNCTION_KIND, FUNCTION_VERSION, functionSchema } from './function-schema';
import { sortSchema, JsonSchemaProps } from './schema';

/** The name of the Function CRD: a contract with the controller and every client. */
export const FUNCTION_CRD_NAME = `functions.${FUNCTION_GROUP}`;

/** The category `kubectl get kyma-serverless` lists. */
export const FUNCTION_CATEGORY = 'kyma-serverless';

/** The `spec` of the Function CRD (`apiextensions.k8s.io/v1`). */
export interface FunctionCrdSpec {
  readonly group: string;
  readonly names: {
    readonly categories: string[];
    readonly kind: string;
    readonly listKind: string;
    readonly plural: string;
    readonly singular: string;
  };
  readonly scope: 'Namespaced';
  readonly versions: Array<{
    readonly name: string;
    readonly served: boolean;
    readonly storage: boolean;
    readonly additionalPrinterColumns: Array<{ readonly jsonPath: string; readonly name: string; readonly type: string }>;
    readonly schema: { readonly openAPIV3Schema: JsonSchemaProps };
    readonly subresources: {
      readonly scale: { readonly labelSelectorPath: string; readonly specReplicasPath: string; readonly statusReplicasPath: string };
      readonly status: Record<string, never>;
    };
  }>;
}

function conditionColumn(name: string, type: string) {
  return { jsonPath: `.status.conditions[?(@.type=='${type}')].status`, name, type: 'string' };
}

/**
 * The spec of the Function CRD: group, names, the one version `v1alpha2` with its schema,
 * printer columns, and the `status` and `scale` subresources (the scale subresource lets an
 * HPA, KEDA or `kubectl scale` drive `spec.replicas`).
 */
export function functionCrdSpec(): FunctionCrdSpec {
  // A fresh copy each time (callers may change it); built once, since every stack needs it.
  crdSpec ??= buildFunctionCrdSpec();
  return structuredClone(crdSpec);
}

let crdSpec: FunctionCrdSpec | undefined;

function buildFunctionCrdSpec(): FunctionCrdSpec {
  return {
    group: FUNCTION_GROUP,
    names: {
      categories: [FUNCTION_CATEGORY],
      kind: FUNCTION_KIND,
      listKind: `${FUNCTION_KIND}List`,
      plural: 'functions',
      singular: 'function',
    },
    scope: 'Namespaced',
    versions: [{
      additionalPrinterColumns: [
        conditionColumn('Configured', 'ConfigurationReady'),
        conditionColumn('Built', 'BuildReady'),
        conditionColumn('Running', 'Running'),
        { jsonPath: '.spec.runtime', name: 'Runtime', type: 'string' },
        { jsonPath: '.metadata.generation', name: 'Version', type: 'integer' },
        { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
      ],
      name: FUNCTION_VERSION,
      schema: { openAPIV3Schema: sortSchema(functionSchema()) },
      served: true,
      storage: true,
      subresources: {
        scale: {
          labelSelectorPath: '.status.podSelector',
          specReplicasPath: '.spec.replicas',
          statusReplicasPath: '.status.replicas',
        },
        status: {},
      },
    }],
  };
}
