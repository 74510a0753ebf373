/**
 * The admission webhook server as the stack ships it: one JavaScript bundle, Brotli-compressed
 * (`lib/webhook/server.js.br`, written by `npm run bundle` and by `npm run build` before packing),
 * and a few lines that unpack and run it. Both go into a ConfigMap that the webhook Deployment
 * mounts and runs on the official Node.js image, so no image of this project is needed.
 *
 * Compressed, the program takes less than a fifth of its size: the ConfigMap stays far below the
 * 1 MiB limit of an object, and below the 256 KiB that client-side `kubectl apply` can record in
 * its `last-applied-configuration` annotation.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../_package-root';

/** The ConfigMap key of the loader, which the container runs with `node`. */
export const WEBHOOK_PROGRAM_MAIN = 'main.js';

/** The ConfigMap key (in `binaryData`) of the compressed bundle. */
export const WEBHOOK_PROGRAM_BUNDLE = 'server.js.br';

/**
 * The loader: reads the compressed bundle beside it, and compiles and runs it as a module of its
 * own, with the command line arguments the container gives.
 */
export const WEBHOOK_PROGRAM_LOADER = `'use strict';
// The admission webhook server of cdk8s-kyma-serverless. Its bundle is stored Brotli-compressed beside
// this file (${WEBHOOK_PROGRAM_BUNDLE}); this unpacks it in memory and runs it.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { brotliDecompressSync } = require('node:zlib');
const Module = require('node:module');

const filename = join(__dirname, 'server.js');
const server = new Module(filename, module);
server.filename = filename;
server.paths = [];
server._compile(brotliDecompressSync(readFileSync(join(__dirname, '${WEBHOOK_PROGRAM_BUNDLE}'))).toString('utf8'), filename);
`;

/** The compressed bundle and its checksum. */
export interface WebhookProgram {
  /** The compressed bundle, base64-encoded as `binaryData` holds it. */
  readonly bundleBase64: string;
  /** SHA-256 of the compressed bundle and the loader, hex: a new program rolls the Pods. */
  readonly sha256: string;
}

let program: WebhookProgram | undefined;

/**
 * Reads the webhook program, once per process.
 *
 * @throws when the bundle is missing: only in a checkout that has not run `npm run bundle`
 */
export function webhookProgram(): WebhookProgram {
  if (program) return program;
  const file = path.join(packageRoot(), 'lib', 'webhook', WEBHOOK_PROGRAM_BUNDLE);
  let bundle: Buffer;
  try {
    bundle = fs.readFileSync(file);
  } catch (e) {
    throw new Error(`The webhook server's bundle ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): `
      + 'in a checkout of cdk8s-kyma-serverless, run `npm run bundle` (npm test and npm run synth do); an installed package ships it');
  }
  const sha256 = createHash('sha256').update(bundle).update(WEBHOOK_PROGRAM_LOADER).digest('hex');
  program = { bundleBase64: bundle.toString('base64'), sha256 };
  return program;
}
