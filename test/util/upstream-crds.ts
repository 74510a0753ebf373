/**
 * Validators built from upstream's CRDs: the Function of Serverless 1.11.1 and 1.13.0 (from recorded facts),
 * and from ../shared/reference/upstream the APIRule of Kyma's API Gateway 3.10.0 and the
 * Subscription of Kyma's eventing manager 1.6.3, read at test time: our objects must pass the CRDs
 * the API server would check them against, CEL rules included.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_RELEASE, SchemaValidator, ServerlessRelease } from '../../src/api';
import { compileSchemaValidator } from '../../src/api/schema-compiler';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, fixture, loadYamlDocuments } from './fixtures';
import { schemaFromFacts } from './schema-facts';

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
    validator = compileSchemaValidator(served.schema.openAPIV3Schema);
    validators.set(crd, validator);
  }
  return validator;
}

/** The folder of upstream 1.13.0's reference data (CRD, samples), beside 1.11.1's. */
export const UPSTREAM_REFERENCE_1_13_0 = path.join(path.dirname(UPSTREAM_REFERENCE), 'upstream-1.13.0');

/** Whether upstream 1.13.0's reference data is there. */
export const HAS_UPSTREAM_REFERENCE_1_13_0 = fs.existsSync(UPSTREAM_REFERENCE_1_13_0);

const upstreamFunction = new Map<ServerlessRelease, SchemaValidator>();

/**
 * A validator of upstream's Function CRD of a release, built from the facts recorded in
 * test/fixtures/upstream-<release>-function-crd-facts.json: every Function we emit for that release must pass it.
 */
export function upstreamFunctionValidator(release: ServerlessRelease = DEFAULT_RELEASE): SchemaValidator {
  let validator = upstreamFunction.get(release);
  if (!validator) {
    validator = compileSchemaValidator(schemaFromFacts(upstreamFunctionCrdFacts(release).schema));
    upstreamFunction.set(release, validator);
  }
  return validator;
}

/** The recorded facts of upstream's Function CRD of a release: names, field paths, rules. */
export function upstreamFunctionCrdFacts(release: ServerlessRelease = DEFAULT_RELEASE): any {
  return JSON.parse(fs.readFileSync(fixture(`upstream-${release}-function-crd-facts.json`), 'utf8'));
}
