/**
 * Running the webhook server as a program: its command line options, where its certificate comes
 * from, and its life from start-up to SIGTERM. The stack's bundle (`main.ts`) and the command
 * `kyma-serverless webhook serve` both run {@link serve}, with the options declared once here.
 */
import { parseArgs } from 'node:util';
import { WebhookConfig, loadWebhookConfig, resolveWebhookConfig } from './config';
import { KubeClient, defaultConnection } from './kube-client';
import { LogLevel } from '../log-level';
import { Logger, createLogger } from './log';
import { WebhookServer } from './server';
import { CertificateSource, FileCertificates, SelfManagedCertificates } from './tls';

/** Options of the server program. */
export interface ServeOptions {
  /** The HTTPS port. */
  readonly port: number;
  /** A plain-HTTP port for `/metrics`, `/healthz` and `/readyz`. */
  readonly metricsPort?: number;
  /** The address to listen on; else every address. */
  readonly host?: string;
  /** A PEM certificate (chain) file, reloaded when it changes. */
  readonly tlsCert?: string;
  /** The PEM key of {@link tlsCert}. */
  readonly tlsKey?: string;
  /** The configuration file, as the stack mounts it. */
  readonly config?: string;
  /** For self-managed TLS; else `KUBECONFIG`, `~/.kube/config`, or the Pod's ServiceAccount. */
  readonly kubeconfig?: string;
  /** The kubeconfig context for self-managed TLS; else its current context. */
  readonly context?: string;
  /** The lowest level logged. */
  readonly logLevel: LogLevel;
}

/** One command line option of the server. */
export interface ServeOptionSpec {
  /** The long flag without dashes, such as `metrics-port`. */
  readonly flag: string;
  /** The key of {@link ServeOptions} it sets. */
  readonly key: keyof ServeOptions;
  /** The placeholder of its value, such as `<n>`. */
  readonly value: string;
  /** What it does. */
  readonly description: string;
  /** Its default, as text. */
  readonly default?: string;
  /** The values it allows. */
  readonly choices?: readonly string[];
  /** Whether its value is a port number. */
  readonly port?: boolean;
}

/** The server's options, declared once for both command lines. */
export const SERVE_OPTIONS: readonly ServeOptionSpec[] = [
  { flag: 'port', key: 'port', value: '<n>', description: 'HTTPS port', default: '8443', port: true },
  { flag: 'metrics-port', key: 'metricsPort', value: '<n>', description: 'also serve /metrics, /healthz and /readyz over plain HTTP on this port', port: true },
  { flag: 'host', key: 'host', value: '<address>', description: 'address to listen on (default: every address)' },
  { flag: 'tls-cert', key: 'tlsCert', value: '<file>', description: 'PEM certificate (chain); reloaded when the file changes' },
  { flag: 'tls-key', key: 'tlsKey', value: '<file>', description: 'PEM private key of --tls-cert' },
  { flag: 'config', key: 'config', value: '<file>', description: 'configuration file (defaults, timeouts, self-managed TLS), as the stack mounts it' },
  { flag: 'kubeconfig', key: 'kubeconfig', value: '<file>', description: 'kubeconfig for self-managed TLS (default: KUBECONFIG, then ~/.kube/config, then the Pod\'s ServiceAccount)' },
  { flag: 'context', key: 'context', value: '<name>', description: 'kubeconfig context for self-managed TLS (default: the current context)' },
  { flag: 'log-level', key: 'logLevel', value: '<level>', description: 'lowest level logged', default: LogLevel.INFO, choices: Object.values(LogLevel) },
];

/**
 * Checks one option's value.
 *
 * @returns the value to use: a number for ports
 * @throws with the reason, when it is not a port number or not one of the choices
 */
export function parseServeOption(spec: ServeOptionSpec, value: string): string | number {
  if (spec.port) {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535) throw new Error('must be a port number from 0 to 65535');
    return n;
  }
  if (spec.choices && !spec.choices.includes(value)) throw new Error(`must be one of ${spec.choices.join(', ')}`);
  return value;
}

/** The usage text of the bundled server. */
export function serveUsage(): string {
  const lines = SERVE_OPTIONS.map(o => {
    const extra = [o.choices ? `one of ${o.choices.join(', ')}` : '', o.default ? `default ${o.default}` : ''].filter(Boolean).join('; ');
    return `  --${o.flag} ${o.value}`.padEnd(28) + `${o.description}${extra ? ` (${extra})` : ''}`;
  });
  return `Usage: node main.js [options]\n\nThe admission webhook server of cdk8s-kyma-serverless.\n\nOptions:\n${lines.join('\n')}\n  --help                    show this text\n`;
}

/**
 * Parses the server's command line (without `node` and the script).
 *
 * @returns the options, or `undefined` for `--help`
 * @throws naming the option, when one is unknown, lacks its value or has a wrong one
 */
export function parseServeArgs(args: readonly string[]): ServeOptions | undefined {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      ...Object.fromEntries(SERVE_OPTIONS.map(o => [o.flag, { type: 'string' as const }])),
      help: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) return undefined;
  if (positionals.length) throw new Error(`Unexpected argument '${positionals[0]}'`);
  const options: { [key: string]: string | number | undefined } = {};
  for (const spec of SERVE_OPTIONS) {
    const value = (values as { [flag: string]: string | undefined })[spec.flag] ?? spec.default;
    if (value === undefined) continue;
    try {
      options[spec.key] = parseServeOption(spec, value);
    } catch (e) {
      throw new Error(`Option '--${spec.flag} ${spec.value}' argument '${value}' is invalid: ${(e as Error).message}`);
    }
  }
  return options as unknown as ServeOptions;
}

/** Where the certificate comes from: files win over the configuration's self-managed TLS. */
async function certificateSource(options: ServeOptions, config: WebhookConfig, logger: Logger): Promise<CertificateSource> {
  if (options.tlsCert || options.tlsKey) {
    if (!options.tlsCert || !options.tlsKey) throw new Error('Give both --tls-cert and --tls-key, or neither');
    return new FileCertificates(options.tlsCert, options.tlsKey, logger);
  }
  if (!config.selfManagedTls) {
    throw new Error('No certificate: give --tls-cert and --tls-key, or a --config file with selfManagedTls');
  }
  const client = new KubeClient(defaultConnection({ kubeconfig: options.kubeconfig, context: options.context }));
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
