/**
 * Where the Node.js runtime program is. An installed package runs its compiled module
 * (`lib/src/runtime/node/server.js`). A checkout runs the bundle `npm run bundle` writes into
 * `lib/runtime/` (a tenth of a second to start), as long as it was built from the sources as they
 * are now, and otherwise the TypeScript through ts-node (a second to start).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../_package-root';

/** The bundle of a checkout, relative to the package's root. */
export const NODE_SERVER_BUNDLE = path.join('lib', 'runtime', 'node-server.js');

/** The record beside the bundle: the sources it was built from and their hash. */
export const NODE_SERVER_SOURCES = path.join('lib', 'runtime', 'node-server.sources.json');

/** The SHA-256 of files, relative to the package's root, in the order given. */
export function sourcesHash(root: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of files) {
    const full = path.join(root, file);
    hash.update(`${file}\0${fs.existsSync(full) ? fs.readFileSync(full) : ''}\0`);
  }
  return hash.digest('hex');
}

/** The program to start, and whether it is TypeScript (to run through ts-node). */
export function nodeServerProgram(): { readonly program: string; readonly typescript: boolean } {
  const compiled = path.join(__dirname, 'node', 'server.js');
  if (fs.existsSync(compiled)) return { program: compiled, typescript: false };
  const root = packageRoot();
  try {
    const record = JSON.parse(fs.readFileSync(path.join(root, NODE_SERVER_SOURCES), 'utf8')) as { files: string[]; sha256: string };
    if (record.sha256 === sourcesHash(root, record.files)) return { program: path.join(root, NODE_SERVER_BUNDLE), typescript: false };
  } catch {
    // No bundle yet.
  }
  return { program: path.join(__dirname, 'node', 'server.ts'), typescript: true };
}
