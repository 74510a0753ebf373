/**
 * How the command line tells which release a folder of manifests or a cluster runs: the Function
 * CRD of this package names it in an annotation; a CRD without it is told by its shape.
 */
import { FUNCTION_CRD_NAME } from './crd';
import { ServerlessRelease, parseRelease } from './release';

/**
 * The annotation on the Function CRD that names the release of the stack that wrote it:
 * `cdk8s-kyma-serverless/release: 1.13.0`. `validate`, `status` and `preflight` read it.
 */
export const RELEASE_ANNOTATION = 'cdk8s-kyma-serverless/release';

/** The short name upstream's buildless Function CRD (1.12.0 and later) gives, which 1.11.1's has not. */
const BUILDLESS_SHORT_NAME = 'fn';

/** Where {@link functionCrdRelease} read a release from. */
export enum CrdReleaseEvidence {
  /** The CRD's `cdk8s-kyma-serverless/release` annotation. */
  ANNOTATION = 'annotation',
  /** The CRD's shape: 1.13.0's has the short names `fn` and `fns`, 1.11.1's none. */
  SHAPE = 'shape',
}

/** The release a Function CRD belongs to, and how that was told. */
export interface CrdRelease {
  readonly release: ServerlessRelease;
  readonly evidence: CrdReleaseEvidence;
}

/** Whether an object is the Function CRD (`functions.serverless.kyma-project.io`), of any release. */
export function isFunctionCrd(object: unknown): boolean {
  const o = object as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } } | null | undefined;
  return typeof o === 'object' && o !== null && o.kind === 'CustomResourceDefinition'
    && typeof o.apiVersion === 'string' && o.apiVersion.startsWith('apiextensions.k8s.io/') && o.metadata?.name === FUNCTION_CRD_NAME;
}

/**
 * The release of a Function CRD: the one its annotation names, else the one its shape tells
 * (upstream's own CRDs and those this package wrote before it named its release).
 *
 * @param crd the CustomResourceDefinition, as a manifest or as the API server returns it
 * @returns the release and how it was told
 * @throws when the annotation names no release this package deploys, quoting it
 */
export function functionCrdRelease(crd: unknown): CrdRelease {
  const c = crd as { metadata?: { annotations?: { [key: string]: unknown } }; spec?: { names?: { shortNames?: unknown } } } | null | undefined;
  const annotated = c?.metadata?.annotations?.[RELEASE_ANNOTATION];
  if (typeof annotated === 'string') {
    return { release: parseRelease(annotated, `The Function CRD's annotation ${RELEASE_ANNOTATION}`), evidence: CrdReleaseEvidence.ANNOTATION };
  }
  const shortNames = c?.spec?.names?.shortNames;
  const buildless = Array.isArray(shortNames) && shortNames.includes(BUILDLESS_SHORT_NAME);
  return { release: buildless ? ServerlessRelease.V1_13_0 : ServerlessRelease.V1_11_1, evidence: CrdReleaseEvidence.SHAPE };
}
