/**
 * The `kyma-serverless` command.
 */
import { Command } from 'commander';
import { addWebhookCommand } from './webhook-serve';

/** Builds the program with every command. */
export function program(): Command {
  const cli = new Command('kyma-serverless')
    .description('Cluster-side tools of cdk8s-kyma-serverless')
    .showHelpAfterError()
    .configureOutput({ outputError: (message, write) => write(message) });
  addWebhookCommand(cli);
  return cli;
}

/**
 * Runs the command line.
 *
 * @param argv the process's arguments, `node` and the script first
 */
export async function main(argv: readonly string[]): Promise<void> {
  try {
    await program().parseAsync([...argv]);
  } catch (e) {
    process.stderr.write(`kyma-serverless: ${(e as Error).message}\n`);
    process.exitCode = 1;
  }
}
