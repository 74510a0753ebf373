/**
 * `npm run bundle`, the local runtime's part: copies the Python runtime program
 * (`src/runtime/python/server.py`) beside the compiled library, where the package finds it
 * (`lib/src/runtime/python/`; tsc copies only what it compiles), and bundles the Node.js runtime
 * program into `lib/runtime/node-server.js`, which a checkout starts instead of running the
 * TypeScript through ts-node (see `src/runtime/_node-server.ts`). The package does not ship the
 * bundle: it has the compiled module.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { NODE_SERVER_BUNDLE, NODE_SERVER_SOURCES, sourcesHash } from '../src/runtime/_node-server';

const root = path.resolve(__dirname, '..');

/** The Python runtime program, and where the package holds it. */
const PYTHON_SERVER = {
  source: path.join('src', 'runtime', 'python', 'server.py'),
  target: path.join('lib', 'src', 'runtime', 'python', 'server.py'),
};

/** Writes a file only when it changed, so that tools watching lib/ see no change when there is none. */
function update(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== content) fs.writeFileSync(file, content);
}

export function main(): void {
  update(path.join(root, PYTHON_SERVER.target), fs.readFileSync(path.join(root, PYTHON_SERVER.source), 'utf8'));
  const result = buildSync({
    entryPoints: [path.join(root, 'src', 'runtime', 'node', 'server.ts')],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const files = Object.keys(result.metafile.inputs).sort();
  update(path.join(root, NODE_SERVER_BUNDLE), result.outputFiles[0].text);
  update(path.join(root, NODE_SERVER_SOURCES), `${JSON.stringify({ files, sha256: sourcesHash(root, files) }, null, 2)}\n`);
}

if (require.main === module) main();
