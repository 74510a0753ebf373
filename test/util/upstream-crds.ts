/**
 * Validators built from upstream's CRDs in ../shared/reference/upstream (the APIRule of Kyma's API
 * Gateway 3.10.0, the Subscription of Kyma's eventing manager 1.6.3), read at test time: our
 * objects must pass the CRDs the API server would check them against, CEL rules included.
 */
import * as path from 'node:path';
import { SchemaValidator } from '../../src/api';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from './fixtures';

const FILES = { apirule: ['apirule-crd.yaml', 'v2'], subscription: ['subscription-crd.yaml', 'v1alpha2'] } as const;

const validators = new Map<string, SchemaValidator>();

/**
 * A validator of the served version we emit of an upstream CRD, or one that accepts everything
 * (and says so once) when the reference data is not beside the checkout.
 */
export function upstreamCrdValidator(crd: keyof typeof FILES): Pick<SchemaValidator, 'validate'> {
  if (!HAS_UPSTREAM_REFERENCE) return { validate: () => [] };
  let validator = validators.get(crd);
  if (!validator) {
    const [file, version] = FILES[crd];
    const [definition] = loadYamlDocuments(path.join(UPSTREAM_REFERENCE, file));
    const served = definition.spec.versions.find((v: any) => v.name === version);
    validator = new SchemaValidator(served.schema.openAPIV3Schema);
    validators.set(crd, validator);
  }
  return validator;
}
