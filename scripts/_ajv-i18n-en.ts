/**
 * What the bundle of scripts/bundle-models.ts holds in place of `ajv-i18n`, which it aliases here:
 * `@kubernetes-models/validate` only calls `localize.en` on its errors, and the package's index
 * loads the messages of all 23 languages (93 KB of the bundle to compile and run on every check).
 * CommonJS without `__esModule`, as the package's index is: its user reads it through
 * `__importDefault(require('ajv-i18n')).default.en`. The path is relative: the alias would turn
 * `ajv-i18n/localize/en` into this file again.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
module.exports = { en: require('../node_modules/ajv-i18n/localize/en') };
