/**
 * The validator of Function objects, built once per process from the Function schema.
 */
import { functionSchema } from './function-schema';
import { SchemaValidator } from './validator';

let validator: SchemaValidator | undefined;

/**
 * The validator of the Function CRD's schema and CEL rules. Its OpenAPI part is compiled ahead of
 * time (`src/_generated/`), so building it costs no ajv; it is built on first use and then shared.
 */
export function functionSchemaValidator(): SchemaValidator {
  if (!validator) {
    // Required here, not imported: scripts/compile-validators.ts generates it from modules that import this one.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { functionSchemaCheck } = require('../_generated/function-schema-check') as typeof import('../_generated/function-schema-check');
    validator = new SchemaValidator(functionSchema(), functionSchemaCheck());
  }
  return validator;
}
