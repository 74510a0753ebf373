/**
 * `npm run bundle`: bundles the admission webhook server (`src/webhook/main.ts` and everything it
 * imports) into one JavaScript file, and writes it gzip-compressed to `lib/webhook/server.js.gz`,
 * where `ServerlessStack` reads it at synth to ship it in a ConfigMap (see `src/stack/webhook.ts`).
 *
 * The bytes depend only on the sources and on the exact versions of esbuild and fflate in the lock
 * file (both pinned), so every machine writes the same file and the same `dist/`. fflate is pure
 * JavaScript: Node's own zlib may compress differently from one CPU or Node.js release to another.
 *
 * The build fails when the server's module graph reaches anything that has no place in it (cdk8s,
 * constructs, the Kubernetes client, the command line, the stack's constructs).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { gzipSync } from 'fflate';

const root = path.resolve(__dirname, '..');

/** The entry point of the server. */
export const WEBHOOK_ENTRY = path.join(root, 'src', 'webhook', 'main.ts');

/** Where the compressed bundle goes: the package ships it (`files` in package.json). */
export const WEBHOOK_BUNDLE = path.join(root, 'lib', 'webhook', 'server.js.gz');

/** Modules the server must never bundle, as paths relative to the project. */
const FORBIDDEN: readonly RegExp[] = [
  /^node_modules\/(cdk8s|cdk8s-plus-27|constructs|@kubernetes\/client-node|node-forge|yaml|commander|fast-uri)\//,
  // ajv's compiler: the server's checks are compiled ahead of time (src/_generated/) and need only ajv's run-time helpers.
  /^node_modules\/ajv\/dist\/(?!runtime\/)/,
  /^node_modules\/ajv-formats\/dist\/(?!formats\.js$)/,
  /^src\/api\/schema-compiler\.ts$/,
  /^src\/(stack|cli|function|namespace|gitops|policy)\//,
  /^imports\//,
];

/** The bundle, uncompressed and compressed. */
export interface WebhookBundle {
  /** The JavaScript. */
  readonly code: string;
  /** The gzip of {@link code}, as the ConfigMap holds it. */
  readonly gzip: Uint8Array;
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
    // The server leaves CRD CEL rules to the API server (see SchemaValidatorOptions.celRules), so the
    // interpreter, about half of the bundle, stays out; a call that reached it would say why.
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
  return { code, gzip: gzipSync(Buffer.from(code, 'utf8'), { level: 9, mtime: 0 }), inputs };
}

export function main(): void {
  const bundle = bundleWebhook();
  fs.mkdirSync(path.dirname(WEBHOOK_BUNDLE), { recursive: true });
  // Only rewritten when it changed, so that tools watching lib/ see no change when there is none.
  const current = fs.existsSync(WEBHOOK_BUNDLE) ? fs.readFileSync(WEBHOOK_BUNDLE) : undefined;
  if (!current?.equals(bundle.gzip)) fs.writeFileSync(WEBHOOK_BUNDLE, bundle.gzip);
  if (process.argv.includes('--verbose')) {
    process.stdout.write(`${path.relative(root, WEBHOOK_BUNDLE)}: ${bundle.code.length} bytes of JavaScript, ${bundle.gzip.length} compressed\n`);
  }
}

if (require.main === module) main();
