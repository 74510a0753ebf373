/**
 * `kyma-serverless webhook serve`: runs the admission webhook server on a workstation or in a
 * prebuilt image; the same program and options as the bundle the stack runs (`src/webhook/serve.ts`).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { SERVE_OPTIONS, ServeOptions, parseServeOption, serve } from '../webhook/serve';

export type { ServeOptions };
export { serve };

/** Adds `webhook serve` to a program. */
export function addWebhookCommand(program: Command): void {
  const webhook = program.command('webhook').description('The admission webhook that defaults and validates Functions');
  const serveCommand = webhook.command('serve').description('Serve the defaulting and validating webhook over HTTPS');
  // --kubeconfig and --context are the program's global options.
  for (const spec of SERVE_OPTIONS.filter(o => o.key !== 'kubeconfig' && o.key !== 'context')) {
    const option = new Option(`--${spec.flag} ${spec.value}`, spec.description);
    if (spec.choices) option.choices(spec.choices);
    else option.argParser(value => {
      try {
        return parseServeOption(spec, value);
      } catch (e) {
        throw new InvalidArgumentError((e as Error).message);
      }
    });
    if (spec.default !== undefined) option.default(spec.port ? Number(spec.default) : spec.default);
    serveCommand.addOption(option);
  }
  serveCommand
    .addHelpText('after', `
Of the global options, --kubeconfig and --context choose the cluster that holds the certificate
Secret (self-managed TLS); -n and -o do not apply: the server logs one JSON object per line.

Functions are defaulted and validated by the rules of the Serverless release the config file's
release names (the stack writes its own release there; 1.11.1 when the file names none).

Examples:
  # Locally, with a self-signed certificate (openssl or any other tool):
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \\
    -addext subjectAltName=DNS:localhost -keyout key.pem -out cert.pem
  kyma-serverless webhook serve --port 8443 --tls-cert cert.pem --tls-key key.pem

  # In the cluster (what the stack's Deployment runs): certificate kept in a Secret
  kyma-serverless webhook serve --port 8443 --metrics-port 8080 --config /etc/kyma-serverless-webhook/config.yaml
`)
    .action(async (_options: ServeOptions, command: Command) => {
      // --kubeconfig and --context (for self-managed TLS) are the program's global options.
      await serve(command.optsWithGlobals<ServeOptions>());
    });
}
