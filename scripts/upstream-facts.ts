/**
 * Writes test/fixtures/upstream-1.11.1-function-crd-facts.json from upstream's 1.11.1 Function
 * CRD (in ../shared/reference by default): the field paths, types, bounds, defaults and CEL
 * rules our CRD must have, and the CRD-level settings. Descriptions are left out.
 *
 * Usage: ts-node scripts/upstream-facts.ts [path/to/serverless-1.11.1-function-crd.yaml]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { flattenSchema } from '../test/util/schema-facts';

const root = path.resolve(__dirname, '..');
const source = process.argv[2] ?? path.join(root, '..', 'shared', 'reference', 'upstream', 'serverless-1.11.1-function-crd.yaml');
const crd = parse(fs.readFileSync(source, 'utf8'));
const [version] = crd.spec.versions;
const facts = {
  comment: 'Facts of Kyma Serverless 1.11.1\'s Function CRD, extracted by scripts/upstream-facts.ts. Do not edit.',
  name: crd.metadata.name,
  group: crd.spec.group,
  names: crd.spec.names,
  scope: crd.spec.scope,
  version: {
    name: version.name,
    served: version.served,
    storage: version.storage,
    additionalPrinterColumns: version.additionalPrinterColumns,
    subresources: version.subresources,
  },
  schema: flattenSchema(version.schema.openAPIV3Schema),
};
const out = path.join(root, 'test', 'fixtures', 'upstream-1.11.1-function-crd-facts.json');
fs.writeFileSync(out, `${JSON.stringify(facts, null, 2)}\n`);
process.stdout.write(`${out}: ${Object.keys(facts.schema).length} schema nodes\n`);
