/**
 * The validator of Function objects, compiled once per process from the Function schema.
 */
import { functionSchema } from './function-schema';
import { SchemaValidator } from './validator';

let validator: SchemaValidator | undefined;

/**
 * The validator of the Function CRD's schema and CEL rules. Compiling it takes a few
 * milliseconds, so it is built on first use and then shared.
 */
export function functionSchemaValidator(): SchemaValidator {
  validator ??= new SchemaValidator(functionSchema());
  return validator;
}
