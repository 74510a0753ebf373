/**
 * Bundles the CEL interpreter the Function CRD's rules run on (`@bufbuild/cel` with its strings
 * extension) into one file, `lib/cel/cel.js`, which `src/api/validator.ts` loads instead of the
 * packages when it is there.
 *
 * Why: a synth with any Function evaluates the CRD's CEL rules, and loading `@bufbuild/cel` takes
 * about 130 modules of it and `@bufbuild/protobuf`, one file at a time. The bundle is built from
 * the packages' ES modules, so it holds only what the interpreter uses (100 modules' worth, not
 * every well-known protobuf type), and loads in about a third of the time. The code is the same, at
 * the versions of the lock file, so every rule gives the same answer (a test compares both).
 *
 * `npm run bundle` writes it (npm test and npm run synth run that), and `npm run build` before packing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { SHIPPED_BUNDLE, packagesOf } from './_bundle-options';

const root = path.resolve(__dirname, '..');

/** Where the bundle goes: the package ships it (`files` in package.json). */
export const CEL_BUNDLE = path.join(root, 'lib', 'cel', 'cel.js');

/** What the bundle exports: every name of `@bufbuild/cel` and its extension that validator.ts uses. */
export const CEL_EXPORTS = { '@bufbuild/cel': ['celEnv', 'isCelError', 'parse', 'plan'], '@bufbuild/cel/ext': ['strings'] } as const;


/** Builds the bundle in memory. */
export function bundleCel(): string {
  // `export ... from` takes the packages' ES modules, which esbuild can leave unused code out of.
  const entry = Object.entries(CEL_EXPORTS).map(([module, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(module)};`).join('\n');
  const result = buildSync({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'cel-entry.js', loader: 'js' },
    ...SHIPPED_BUNDLE,
  });
  const inputs = Object.keys(Object.values(result.metafile.outputs)[0].inputs);
  const banner = `/*! The CEL interpreter of cdk8s-kyma-serverless's Function rules, bundled by scripts/bundle-cel.ts from:\n${packagesOf(inputs).map(p => ` * ${p}`).join('\n')}\n */\n`;
  return banner + result.outputFiles[0].text;
}

export function main(): void {
  const code = bundleCel();
  fs.mkdirSync(path.dirname(CEL_BUNDLE), { recursive: true });
  const current = fs.existsSync(CEL_BUNDLE) ? fs.readFileSync(CEL_BUNDLE, 'utf8') : undefined;
  if (current !== code) fs.writeFileSync(CEL_BUNDLE, code);
  if (process.argv.includes('--verbose')) process.stdout.write(`${path.relative(root, CEL_BUNDLE)}: ${code.length} bytes\n`);
}

if (require.main === module) main();
