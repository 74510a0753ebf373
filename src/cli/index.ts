/**
 * The `kyma-serverless` command.
 */
import { Command, Option } from 'commander';
import { packageVersion } from '../_package-root';
import { CliError } from './errors';
import { OutputFormat } from './_output';
import { addApplyCommand } from './apply';
import { addDiffCommand } from './diff';
import { addInitCommand } from './init';
import { addInvokeCommand } from './invoke';
import { addPreflightCommand } from './preflight';
import { addRunCommand } from './run';
import { addStatusCommand } from './status';
import { addSynthCommand } from './synth';
import { addValidateCommand } from './validate';
import { addWebhookCommand } from './webhook-serve';

/** Builds the program with every command. */
export function program(): Command {
  const cli = new Command('kyma-serverless')
    .description('Tools of cdk8s-kyma-serverless: start an app, synthesize and check manifests, check a cluster before you deploy, '
      + 'see what a sync will change, apply in order, follow Functions after, run and invoke Functions on this machine')
    .version(packageVersion(), '-V, --version', 'print the version of cdk8s-kyma-serverless')
    .option('--kubeconfig <file>', 'kubeconfig file, for the commands that reach a cluster (default: KUBECONFIG, then ~/.kube/config, '
      + 'then the Pod\'s ServiceAccount)')
    .option('--context <name>', 'kubeconfig context (default: the current context)')
    .option('-n, --namespace <namespace>', 'namespace (default: the context\'s, then "default")')
    .addOption(new Option('-o, --output <format>', 'output format: table for people; json or yaml, the same data, for scripts')
      .choices(Object.values(OutputFormat)).default(OutputFormat.TABLE))
    // Every command's --help lists these options, which it takes before or after its name.
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError()
    .configureOutput({ outputError: (message, write) => write(message) });
  addInitCommand(cli);
  addSynthCommand(cli);
  addValidateCommand(cli);
  addPreflightCommand(cli);
  addApplyCommand(cli);
  addDiffCommand(cli);
  addStatusCommand(cli);
  addRunCommand(cli);
  addInvokeCommand(cli);
  addWebhookCommand(cli);
  return cli;
}

/**
 * Runs the command line. The exit code is 0 only when everything is well: a failed check, a
 * failed Function or an error gives 1 (or the command's own code).
 *
 * @param argv the process's arguments, `node` and the script first
 */
export async function main(argv: readonly string[]): Promise<void> {
  try {
    await program().parseAsync([...argv]);
  } catch (e) {
    process.stderr.write(`kyma-serverless: ${(e as Error).message}\n`);
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  }
}
