/**
 * What the bundles the package ships (the webhook's program, the kubernetes-models classes, the CEL
 * interpreter) share: how esbuild builds them, and the banner's list of the packages inside.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildOptions, BuildResult } from 'esbuild';

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

/**
 * A bundle's text: a banner that says what it is and which packages it holds, then esbuild's output.
 *
 * @param result esbuild's result for one output file, with its metafile
 * @param what what the bundle is, such as "The CEL interpreter of cdk8s-kyma-serverless's Function rules"
 * @param script the script that bundles it, such as `scripts/bundle-cel.ts`
 */
export function bannered(result: BuildResult<{ metafile: true; write: false }>, what: string, script: string): string {
  const inputs = Object.keys(Object.values(result.metafile.outputs)[0].inputs);
  const banner = `/*! ${what}, bundled by ${script} from:\n${packagesOf(inputs).map(p => ` * ${p}`).join('\n')}\n */\n`;
  return banner + result.outputFiles[0].text;
}

/**
 * Writes a bundle, only when its text changed (an unchanged one keeps its time), and names it with
 * its size under `--verbose`.
 */
export function writeBundle(file: string, code: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  if (current !== code) fs.writeFileSync(file, code);
  if (process.argv.includes('--verbose')) process.stdout.write(`${path.relative(root, file)}: ${code.length} bytes\n`);
}
