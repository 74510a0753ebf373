/**
 * The Function CustomResourceDefinition, generated from the typed schema.
 */
import { FUNCTION_GROUP, FUNCTION_KIND, FUNCTION_VERSION, functionSchema } from './function-schema';
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from './release';
import { sortSchema, JsonSchemaProps } from './schema';

/** The name of the Function CRD: a contract with the controller and every client. */
export const FUNCTION_CRD_NAME = `functions.${FUNCTION_GROUP}`;

/** The category `kubectl get kyma-serverless` lists. */
export const FUNCTION_CATEGORY = 'kyma-serverless';

/** The short names of Functions from 1.13.0 on: `kubectl get fn`. */
export const FUNCTION_SHORT_NAMES = ['fn', 'fns'] as const;

/** The `spec` of the Function CRD (`apiextensions.k8s.io/v1`). */
export interface FunctionCrdSpec {
  readonly group: string;
  readonly names: {
    readonly categories: string[];
    readonly kind: string;
    readonly listKind: string;
    readonly plural: string;
    /** From 1.13.0 on. */
    readonly shortNames?: string[];
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
 * The spec of a release's Function CRD: group, names, the one version `v1alpha2` with its schema,
 * printer columns, and the `status` and `scale` subresources (the scale subresource lets an
 * HPA, KEDA or `kubectl scale` drive `spec.replicas`).
 *
 * Under 1.13.0 the names add upstream's short names `fn`/`fns` and its category `all` (so
 * `kubectl get all` lists Functions) to our category `kyma-serverless`, and there is no `Built`
 * column, as nothing is built.
 *
 * @param release the release whose CRD to describe
 * @returns a fresh copy (callers may change it)
 */
export function functionCrdSpec(release: ServerlessRelease = DEFAULT_RELEASE): FunctionCrdSpec {
  // A fresh copy each time (callers may change it); built once per release, since every stack needs it.
  let spec = crdSpecs.get(release);
  if (!spec) {
    spec = buildFunctionCrdSpec(release);
    crdSpecs.set(release, spec);
  }
  return structuredClone(spec);
}

const crdSpecs = new Map<ServerlessRelease, FunctionCrdSpec>();

function buildFunctionCrdSpec(release: ServerlessRelease): FunctionCrdSpec {
  const { buildsImages } = releaseFacts(release);
  return {
    group: FUNCTION_GROUP,
    names: {
      categories: buildsImages ? [FUNCTION_CATEGORY] : ['all', FUNCTION_CATEGORY],
      kind: FUNCTION_KIND,
      listKind: `${FUNCTION_KIND}List`,
      plural: 'functions',
      ...(buildsImages ? {} : { shortNames: [...FUNCTION_SHORT_NAMES] }),
      singular: 'function',
    },
    scope: 'Namespaced',
    versions: [{
      additionalPrinterColumns: [
        conditionColumn('Configured', 'ConfigurationReady'),
        ...(buildsImages ? [conditionColumn('Built', 'BuildReady')] : []),
        conditionColumn('Running', 'Running'),
        { jsonPath: '.spec.runtime', name: 'Runtime', type: 'string' },
        { jsonPath: '.metadata.generation', name: 'Version', type: 'integer' },
        { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
      ],
      name: FUNCTION_VERSION,
      schema: { openAPIV3Schema: sortSchema(functionSchema(release)) },
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
