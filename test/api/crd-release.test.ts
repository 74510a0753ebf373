import { CrdReleaseEvidence, FUNCTION_CRD_NAME, RELEASE_ANNOTATION, ServerlessRelease, functionCrdRelease, isFunctionCrd } from '../../src/api';

const crd = (extra: { annotations?: Record<string, string>; shortNames?: string[] } = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: FUNCTION_CRD_NAME, annotations: extra.annotations },
  spec: { names: { kind: 'Function', plural: 'functions', shortNames: extra.shortNames } },
});

describe('functionCrdRelease', () => {
  test('reads the release from the annotation', () => {
    expect(functionCrdRelease(crd({ annotations: { [RELEASE_ANNOTATION]: '1.13.0' } })))
      .toEqual({ release: ServerlessRelease.V1_13_0, evidence: CrdReleaseEvidence.ANNOTATION });
    expect(functionCrdRelease(crd({ annotations: { [RELEASE_ANNOTATION]: '1.11.1' }, shortNames: ['fn'] })).release).toBe(ServerlessRelease.V1_11_1);
  });

  test('tells a CRD without the annotation by its shape: upstream\'s buildless CRD has the short names fn and fns', () => {
    expect(functionCrdRelease(crd({ shortNames: ['fn', 'fns'] }))).toEqual({ release: ServerlessRelease.V1_13_0, evidence: CrdReleaseEvidence.SHAPE });
    expect(functionCrdRelease(crd())).toEqual({ release: ServerlessRelease.V1_11_1, evidence: CrdReleaseEvidence.SHAPE });
  });

  test('throws when the annotation names no release of this package', () => {
    expect(() => functionCrdRelease(crd({ annotations: { [RELEASE_ANNOTATION]: '2.0.0' } })))
      .toThrow(/^The Function CRD's annotation cdk8s-kyma-serverless\/release \(2\.0\.0\) is no release this package deploys: use '1\.11\.1' or '1\.13\.0'/);
  });

  test('isFunctionCrd knows the Function CRD of any API version and nothing else', () => {
    expect(isFunctionCrd(crd())).toBe(true);
    expect(isFunctionCrd({ ...crd(), apiVersion: 'apiextensions.k8s.io/v1beta1' })).toBe(true);
    expect(isFunctionCrd({ ...crd(), metadata: { name: 'apirules.gateway.kyma-project.io' } })).toBe(false);
    expect(isFunctionCrd({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: FUNCTION_CRD_NAME } })).toBe(false);
    expect(isFunctionCrd(null)).toBe(false);
  });
});
