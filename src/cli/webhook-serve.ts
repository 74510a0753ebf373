/**
 * `kyma-serverless webhook serve`: runs the admission webhook server, in the cluster (as the
 * stack's Deployment does) or on a workstation.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { WebhookConfig, loadWebhookConfig, resolveWebhookConfig } from '../webhook/config';
import { KubeClient, defaultConnection } from '../webhook/kube-client';
import { LogLevel, createLogger } from '../webhook/log';
import { WebhookServer } from '../webhook/server';
import { CertificateSource, FileCertificates, SelfManagedCertificates } from '../webhook/tls';

/** Options of `webhook serve`. */
export interface ServeOptions {
  readonly port: number;
  readonly metricsPort?: number;
  readonly host?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly config?: string;
  /** For self-managed TLS; else `KUBECONFIG`, `~/.kube/config`, or the Pod's ServiceAccount. */
  readonly kubeconfig?: string;
  readonly logLevel: LogLevel;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

/** Where the certificate comes from: files win over the configuration's self-managed TLS. */
async function certificateSource(options: ServeOptions, config: WebhookConfig, logger: ReturnType<typeof createLogger>): Promise<CertificateSource> {
  if (options.tlsCert || options.tlsKey) {
    if (!options.tlsCert || !options.tlsKey) throw new Error('Give both --tls-cert and --tls-key, or neither');
    return new FileCertificates(options.tlsCert, options.tlsKey, logger);
  }
  if (!config.selfManagedTls) {
    throw new Error('No certificate: give --tls-cert and --tls-key, or a --config file with selfManagedTls');
  }
  const client = new KubeClient(defaultConnection({ kubeconfig: options.kubeconfig }));
  return new SelfManagedCertificates(client, config.selfManagedTls, logger);
}

/**
 * Runs the server until SIGTERM or SIGINT, then shuts it down gracefully.
 *
 * @returns once the server listens; the process stays up while it does
 * @throws when the configuration, the certificate or the port cannot be used
 */
export async function serve(options: ServeOptions): Promise<WebhookServer> {
  const logger = createLogger(options.logLevel);
  const config = options.config ? loadWebhookConfig(options.config) : resolveWebhookConfig();
  const source = await certificateSource(options, config, logger);
  let server: WebhookServer | undefined;
  const certificate = await source.start(pair => server?.setCertificate(pair));
  server = new WebhookServer({ config, certificate, port: options.port, metricsPort: options.metricsPort, host: options.host, logger });
  await server.start();
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'received signal');
    source.stop();
    server!.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return server;
}

/** Adds `webhook serve` to a program. */
export function addWebhookCommand(program: Command): void {
  const webhook = program.command('webhook').description('The admission webhook that defaults and validates Functions');
  webhook.command('serve')
    .description('Serve the defaulting and validating webhook over HTTPS')
    .addOption(new Option('--port <n>', 'HTTPS port').argParser(port).default(8443))
    .addOption(new Option('--metrics-port <n>', 'also serve /metrics, /healthz and /readyz over plain HTTP on this port').argParser(port))
    .option('--host <address>', 'address to listen on (default: every address)')
    .option('--tls-cert <file>', 'PEM certificate (chain); reloaded when the file changes')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--config <file>', 'configuration file (defaults, timeouts, self-managed TLS), as the stack mounts it')
    .addOption(new Option('--log-level <level>', 'lowest level logged').choices(Object.values(LogLevel)).default(LogLevel.INFO))
    .addHelpText('after', `
Examples:
  # Locally, with a self-signed certificate (openssl or any other tool):
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \\
    -addext subjectAltName=DNS:localhost -keyout key.pem -out cert.pem
  kyma-serverless webhook serve --port 8443 --tls-cert cert.pem --tls-key key.pem

  # In the cluster (what the stack's Deployment runs): certificate kept in a Secret
  kyma-serverless webhook serve --port 8443 --metrics-port 8080 --config /etc/kyma-serverless-webhook/config.yaml
`)
    .action(async (_options: ServeOptions, command: Command) => {
      // --kubeconfig (for self-managed TLS) is the program's global option.
      await serve(command.optsWithGlobals<ServeOptions>());
    });
}
