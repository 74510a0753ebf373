/**
 * The `kyma-serverless` command.
 */
import { Command, Option } from 'commander';
import { packageVersion } from '../_package-root';
import { CliError } from './errors';
import { OutputFormat } from './_output';
// Types only: a command's module loads when the program gets that command (see COMMANDS).
import type * as Apply from './apply';
import type * as Diff from './diff';
import type * as Init from './init';
import type * as Invoke from './invoke';
import type * as Preflight from './preflight';
import type * as Run from './run';
import type * as Status from './status';
import type * as Synth from './synth';
import type * as Validate from './validate';
import type * as WebhookServe from './webhook-serve';

/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The commands in the order --help lists them, each by its name and the function that adds it to
 * a program, which loads its module: a program of one command (`kyma-serverless validate`, run in CI
 * after every synth) does not load what the others need (cdk8s, the stack, a YAML writer).
 */
const COMMANDS: readonly (readonly [string, () => (program: Command) => void])[] = [
  ['init', () => (require('./init') as typeof Init).addInitCommand],
  ['synth', () => (require('./synth') as typeof Synth).addSynthCommand],
  ['validate', () => (require('./validate') as typeof Validate).addValidateCommand],
  ['preflight', () => (require('./preflight') as typeof Preflight).addPreflightCommand],
  ['apply', () => (require('./apply') as typeof Apply).addApplyCommand],
  ['diff', () => (require('./diff') as typeof Diff).addDiffCommand],
  ['status', () => (require('./status') as typeof Status).addStatusCommand],
  ['run', () => (require('./run') as typeof Run).addRunCommand],
  ['invoke', () => (require('./invoke') as typeof Invoke).addInvokeCommand],
  ['webhook', () => (require('./webhook-serve') as typeof WebhookServe).addWebhookCommand],
];
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Builds the program.
 *
 * @param command the one command to give it, by name; every command when none is named
 */
export function program(command?: string): Command {
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
  for (const [name, add] of COMMANDS) if (command === undefined || name === command) add()(cli);
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
    // A command line that starts with a command's name runs a program of that command only, as it
    // would run in the program of all: what follows the name is the command's to parse.
    const first = argv[2];
    await program(COMMANDS.some(([name]) => name === first) ? first : undefined).parseAsync([...argv]);
  } catch (e) {
    process.stderr.write(`kyma-serverless: ${(e as Error).message}\n`);
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
  }
}
