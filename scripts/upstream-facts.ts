/**
 * Writes test/fixtures/upstream-<release>-function-crd-facts.json from upstream's Function CRD of a
 * release (in ../shared/reference by default): the field paths, types, bounds, defaults and CEL
 * rules our CRD must have, and the CRD-level settings. Descriptions are left out. The tests read
 * the facts, so that a checkout without ../shared still compares our CRDs with upstream's.
 *
 * Usage: ts-node scripts/upstream-facts.ts [--release 1.11.1|1.13.0] [path/to/function-crd.yaml]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { parseRelease, ServerlessRelease } from '../src/api/release';
import { flattenSchema } from '../test/util/schema-facts';

const root = path.resolve(__dirname, '..');
const reference = path.join(root, '..', 'shared', 'reference');

/** Where each release's CRD is in ../shared/reference. */
const SOURCES: { readonly [R in ServerlessRelease]: string } = {
  [ServerlessRelease.V1_11_1]: path.join(reference, 'upstream', 'serverless-1.11.1-function-crd.yaml'),
  [ServerlessRelease.V1_13_0]: path.join(reference, 'upstream-1.13.0', 'function-crd.yaml'),
};

/** The facts file of a release, relative to the repository. */
export function upstreamFactsFile(release: ServerlessRelease): string {
  return path.join('test', 'fixtures', `upstream-${release}-function-crd-facts.json`);
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--release');
  const release = at >= 0 ? parseRelease(args.splice(at, 2)[1] ?? '', '--release') : ServerlessRelease.V1_11_1;
  const source = args[0] ?? SOURCES[release];
  const crd = parse(fs.readFileSync(source, 'utf8'));
  const [version] = crd.spec.versions;
  const facts = {
    comment: `Facts of Kyma Serverless ${release}'s Function CRD, extracted by scripts/upstream-facts.ts. Do not edit.`,
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
  const out = path.join(root, upstreamFactsFile(release));
  fs.writeFileSync(out, `${JSON.stringify(facts, null, 2)}\n`);
  process.stdout.write(`${out}: ${Object.keys(facts.schema).length} schema nodes\n`);
}
