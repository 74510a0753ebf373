/**
 * Loading YAML fixtures, ours and (when the checkout has it beside) upstream's reference data.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Parses every document of a YAML file. */
export function loadYamlDocuments(file: string): any[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8')).map(d => d.toJS()).filter(d => d !== null);
}

/** A file of test/fixtures. */
export function fixture(...parts: string[]): string {
  return path.join(__dirname, '..', 'fixtures', ...parts);
}

/** The folder of upstream reference data, where a checkout has shared/ beside it (as CI does). */
export const UPSTREAM_REFERENCE = path.resolve(__dirname, '..', '..', '..', 'shared', 'reference', 'upstream');

/** Whether the upstream reference data is there. */
export const HAS_UPSTREAM_REFERENCE = fs.existsSync(UPSTREAM_REFERENCE);
