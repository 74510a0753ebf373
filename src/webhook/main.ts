/**
 * The entry point of the bundled webhook server (`scripts/bundle-webhook.ts`), which the stack
 * ships in a ConfigMap and runs with `node` on the official Node.js image:
 *
 *   node /opt/kyma-serverless-webhook/main.js --port 8443 --metrics-port 8080 --config config.yaml
 *
 * It exits 1 with a message when the options, the configuration, the certificate or the port
 * cannot be used, and 0 after a graceful shutdown on SIGTERM.
 */
import { parseServeArgs, serve, serveUsage } from './serve';

function fail(message: string): void {
  process.stderr.write(`kyma-serverless-webhook: ${message}\n`);
  process.exitCode = 1;
}

try {
  const options = parseServeArgs(process.argv.slice(2));
  if (options) serve(options).catch((e: unknown) => fail((e as Error).message));
  else process.stdout.write(serveUsage());
} catch (e) {
  fail(`${(e as Error).message}\n\n${serveUsage()}`);
}
