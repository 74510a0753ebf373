/**
 * `npm run bundle`: bundles the admission webhook server (`src/webhook/main.ts` and everything it
 * imports) into one JavaScript file, and writes it Brotli-compressed to `lib/webhook/server.js.br`,
 * where `ServerlessStack` reads it at synth to ship it in a ConfigMap (see `src/stack/webhook.ts`).
 *
 * Brotli, not gzip: at the same work it makes the bundle a fifth smaller (78 KB against 98 KB for
 * 429 KB of JavaScript), which keeps the ConfigMap well inside what client-side apply can record.
 * The bytes depend only on the sources, the exact version of esbuild in the lock file and the
 * Brotli encoder of Node.js (the reference encoder in C, with no CPU-specific paths, unlike Node's
 * zlib): machines on one Node.js line write the same file and the same `dist/`. Users never
 * compress: their synth reads the file the package ships.
 *
 * The build fails when the server's module graph reaches anything that has no place in it (cdk8s,
 * constructs, the Kubernetes client, the command line, the stack's constructs).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { SHIPPED_BUNDLE } from './_bundle-options';
import { constants, brotliCompressSync } from 'node:zlib';

const root = path.resolve(__dirname, '..');

/** The entry point of the server. */
export const WEBHOOK_ENTRY = path.join(root, 'src', 'webhook', 'main.ts');

/** Where the compressed bundle goes: the package ships it (`files` in package.json). */
export const WEBHOOK_BUNDLE = path.join(root, 'lib', 'webhook', 'server.js.br');

/** Modules the server must never bundle, as paths relative to the project. */
const FORBIDDEN: readonly RegExp[] = [
  /^node_modules\/(cdk8s|cdk8s-plus-27|constructs|@kubernetes\/client-node|node-forge|yaml|commander|fast-uri)\//,
  // ajv's compiler: the server's checks are compiled ahead of time (the `_generated/` folders of src/api, src/function and src/webhook) and need only ajv's run-time helpers.
  /^node_modules\/ajv\/dist\/(?!runtime\/)/,
  /^node_modules\/ajv-formats\/dist\/(?!formats\.js$)/,
  /^src\/api\/schema-compiler\.ts$/,
  // The evaluation of CEL rules, compiled ones and the interpreter: the server evaluates none (SchemaValidatorOptions.celRules).
  /^src\/api\/(_cel|_generated\/cel-rules)\.ts$/,
  /^node_modules\/@bufbuild\//,
  /^src\/(stack|cli|function|namespace|gitops|policy)\//,
  /^imports\//,
];

/** The bundle, uncompressed and compressed. */
export interface WebhookBundle {
  /** The JavaScript. */
  readonly code: string;
  /** {@link code} compressed, as the ConfigMap holds it. */
  readonly compressed: Buffer;
  /** Bytes each input contributes to {@link code}, by path relative to the project. */
  readonly inputs: { readonly [input: string]: number };
}

/**
 * Builds the bundle in memory.
 *
 * @throws when esbuild fails, or the server's module graph reaches a forbidden module
 */
export function bundleWebhook(): WebhookBundle {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; license: string };
  const result = buildSync({
    entryPoints: [WEBHOOK_ENTRY],
    ...SHIPPED_BUNDLE,
    // The server leaves CRD CEL rules to the API server (see SchemaValidatorOptions.celRules), so the
    // interpreter, about half of the bundle, stays out (src/api/validator.ts loads the module that
    // evaluates them by its path); a call that reached it anyway would say why.
    alias: { '@bufbuild/cel': './src/webhook/_no-cel.ts', '@bufbuild/cel/ext': './src/webhook/_no-cel.ts' },
    banner: { js: `/*! ${pkg.name} ${pkg.version}: the admission webhook server (${pkg.license}). Built from src/webhook/main.ts by scripts/bundle-webhook.ts. */` },
  });
  const inputs: { [input: string]: number } = {};
  for (const [input, { bytesInOutput }] of Object.entries(Object.values(result.metafile.outputs)[0].inputs)) inputs[input] = bytesInOutput;
  const forbidden = Object.keys(inputs).filter(input => FORBIDDEN.some(pattern => pattern.test(input)));
  if (forbidden.length) {
    throw new Error(`The webhook server must not bundle these modules (import single modules of src/api, never its index):\n  ${forbidden.join('\n  ')}`);
  }
  const code = result.outputFiles[0].text;
  const source = Buffer.from(code, 'utf8');
  const compressed = brotliCompressSync(source, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
      [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
    },
  });
  return { code, compressed, inputs };
}

export function main(): void {
  const bundle = bundleWebhook();
  fs.mkdirSync(path.dirname(WEBHOOK_BUNDLE), { recursive: true });
  // Only rewritten when it changed, so that tools watching lib/ see no change when there is none.
  const current = fs.existsSync(WEBHOOK_BUNDLE) ? fs.readFileSync(WEBHOOK_BUNDLE) : undefined;
  if (!current?.equals(bundle.compressed)) fs.writeFileSync(WEBHOOK_BUNDLE, bundle.compressed);
  if (process.argv.includes('--verbose')) {
    process.stdout.write(`${path.relative(root, WEBHOOK_BUNDLE)}: ${bundle.code.length} bytes of JavaScript, ${bundle.compressed.length} compressed\n`);
  }
}

if (require.main === module) main();
