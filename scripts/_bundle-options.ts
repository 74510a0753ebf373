/**
 * What the bundles the package ships (the webhook's program, the kubernetes-models classes, the CEL
 * interpreter) share: how esbuild builds them, and the banner's list of the packages inside.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildOptions } from 'esbuild';

const root = path.resolve(__dirname, '..');

/** One minified CommonJS file for Node.js 20, kept in memory, with its license comments at its end. */
export const SHIPPED_BUNDLE = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  charset: 'utf8',
  legalComments: 'eof',
  metafile: true,
  write: false,
  logLevel: 'silent',
} as const satisfies BuildOptions;

/**
 * The packages the inputs of a bundle come from, with their versions and licenses, sorted.
 *
 * @param inputs the bundle's inputs as esbuild's metafile names them (relative to the repository)
 */
export function packagesOf(inputs: readonly string[]): string[] {
  const names = new Set<string>();
  for (const input of inputs) {
    const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) names.add(match[1]);
  }
  // Read from the file system: some of these packages do not export their package.json.
  return [...names].sort().map(name => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string; license?: string };
    return `${name}@${pkg.version} (${pkg.license ?? 'see its package'})`;
  });
}
