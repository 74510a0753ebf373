/**
 * The validator of Function objects, built once per process and release from the Function schema.
 */
import { functionSchema } from './function-schema';
import { DEFAULT_RELEASE, ServerlessRelease } from './release';
import { SchemaCheck, SchemaValidator } from './validator';

/** The validators built so far, by release: with the CEL rules, and without. */
const validators = new Map<ServerlessRelease, { withRules?: SchemaValidator; withoutRules?: SchemaValidator }>();

/** The compiled check of each release's schema: its module in `src/api/_generated/`, loaded on first use. */
function compiledCheck(release: ServerlessRelease): SchemaCheck {
  // Required here, not imported: scripts/compile-validators.ts generates them from modules that import this one.
  /* eslint-disable @typescript-eslint/no-require-imports */
  switch (release) {
    case ServerlessRelease.V1_11_1:
      return (require('./_generated/function-schema-check') as typeof import('./_generated/function-schema-check')).functionSchemaCheck();
    case ServerlessRelease.V1_13_0:
      return (require('./_generated/function-schema-1.13.0-check') as typeof import('./_generated/function-schema-1.13.0-check')).functionSchemaV1_13_0Check();
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/**
 * The validator of a release's Function CRD: its schema and CEL rules. Its OpenAPI part is compiled
 * ahead of time (`src/api/_generated/`), so building it costs no ajv; it is built on first use and then shared.
 *
 * @param release the release whose CRD to check against
 * @param celRules whether to evaluate the CRD's CEL rules too (see `SchemaValidatorOptions.celRules`)
 */
export function functionSchemaValidator(release: ServerlessRelease = DEFAULT_RELEASE, celRules = true): SchemaValidator {
  let built = validators.get(release);
  if (!built) validators.set(release, built = {});
  const which = celRules ? 'withRules' : 'withoutRules';
  return built[which] ??= new SchemaValidator(functionSchema(release), compiledCheck(release), { celRules });
}
