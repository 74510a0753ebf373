/**
 * What the bundle of scripts/bundle-models.ts holds in place of `ajv-formats-draft2019`'s formats
 * and `is-cidr`, which it aliases here: `@kubernetes-models/validate` adds them to its `formats`,
 * but no schema of the bundled kinds names one of them (`iri`, `duration`, `idn-email`,
 * `idn-hostname`, `iri-reference`, `cidr`; a test checks the formats the bundled schemas use). They
 * were a tenth of the bundle (nearley, uri-js, schemes, smtp-address-parser), compiled and run on
 * every check, and the only characters outside ASCII in it. A function with no properties: spread
 * as a table of formats it adds none, and called as `is-cidr` it says why it cannot answer.
 */
module.exports = function unusedFormat(): never {
  throw new Error('this format is not in the bundle of kubernetes-models (scripts/bundle-models.ts): no bundled kind uses it');
};
