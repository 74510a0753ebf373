/**
 * Validators built from upstream's CRDs: the Function of Serverless 1.11.1 (from recorded facts),
 * and from ../shared/reference/upstream the APIRule of Kyma's API Gateway 3.10.0 and the
 * Subscription of Kyma's eventing manager 1.6.3, read at test time: our objects must pass the CRDs
 * the API server would check them against, CEL rules included.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SchemaValidator } from '../../src/api';
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

let upstreamFunction: SchemaValidator | undefined;

/**
 * A validator of upstream's 1.11.1 Function CRD, built from the facts recorded in
 * test/fixtures/upstream-1.11.1-function-crd-facts.json: every Function we emit must pass it.
 */
export function upstreamFunctionValidator(): SchemaValidator {
  upstreamFunction ??= compileSchemaValidator(schemaFromFacts(upstreamFunctionCrdFacts().schema));
  return upstreamFunction;
}

/** The recorded facts of upstream's 1.11.1 Function CRD: names, field paths, rules. */
export function upstreamFunctionCrdFacts(): any {
  return JSON.parse(fs.readFileSync(fixture('upstream-1.11.1-function-crd-facts.json'), 'utf8'));
}
