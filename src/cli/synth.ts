/**
 * `kyma-serverless synth`: `cdk8s synth` with the guarantees a Git workflow needs. It synthesizes
 * into a scratch folder, checks the result as `kyma-serverless validate` does, and only then puts
 * it in place of the output folder: a failed synth leaves the previous output exactly as it was
 * (`cdk8s synth` on its own empties the output folder before the app runs).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { load } from 'js-yaml';
import { CliError } from './errors';
import { OutputFormat, isStructured, print, printDocument } from './_output';
import { formatReport } from './validate';
import { RUNTIME_END_ENV, Severity, VALIDATED_FOLDERS_ENV, formatWarnings, validateManifests } from '../policy/manifests';
import { RefusedOutputChange, refusedOutputChanges } from '../policy/replacement';
import { STACK_REPLACEMENT_OPT_INS } from '../stack/serverless-stack';

/** The parts of `cdk8s.yaml` that synth reads. */
export interface Cdk8sConfig {
  /** The command that runs the app. */
  readonly app?: string;
  /** The output folder. */
  readonly output?: string;
  /** cdk8s validation plugins: with them, synth runs the app through `cdk8s synth` itself. */
  readonly validations?: unknown;
  /** cdk8s synthesis settings (Helm format): as with `validations`. */
  readonly synthConfig?: unknown;
}

/** Options of {@link synth}. */
export interface SynthOptions {
  /**
   * The command that runs the app.
   *
   * @default - `app` of cdk8s.yaml
   */
  readonly app?: string;
  /**
   * The output folder.
   *
   * @default - `output` of cdk8s.yaml, else `dist`
   */
  readonly output?: string;
  /**
   * The project folder, where cdk8s.yaml is and the app runs.
   *
   * @default - the current folder
   */
  readonly cwd?: string;
  /**
   * Let an error the app does not catch print as Node.js prints it: the source line and the stack.
   *
   * @default false - a Node.js app's uncaught error prints its message only (its name too, unless it is a plain Error)
   */
  readonly verbose?: boolean;
  /**
   * Make a Function whose runtime is past or near its end of support fail the synth, as
   * `--fail-on-runtime-end` does (the app's GitOpsApp reads it from KYMA_SERVERLESS_RUNTIME_END).
   *
   * @default - a warning (unless the environment variable KYMA_SERVERLESS_RUNTIME_END is `fail`)
   */
  readonly failOnRuntimeEnd?: boolean;
}

/**
 * What an app's Node.js processes preload (`NODE_OPTIONS=--require`) unless synth is verbose: an
 * error the app does not catch prints its message, which names what is wrong (the construct path,
 * the file, the key), rather than the lines of cdk8s source and the stack Node.js adds.
 */
export const QUIET_ERRORS_PRELOAD = `// Written by kyma-serverless synth, which deletes it after the app ran.
process.on('uncaughtException', error => {
  const isError = error instanceof Error;
  const plain = isError && error.name === 'Error';
  const text = plain ? error.message : isError ? error.name + ': ' + error.message : 'Uncaught ' + String(error);
  // A TypeError, say, is a bug: where it was thrown matters. A TSError names its file and line itself.
  const hint = plain || (isError && error.name === 'TSError') ? '' : '\\n(kyma-serverless synth --verbose shows where it was thrown)';
  process.stderr.write(text + hint + '\\n');
  process.exit(1);
});
`;

/** What a successful synth wrote. */
export interface SynthResult {
  /** The output folder. */
  readonly output: string;
  /** Its manifest files, relative to it, sorted. */
  readonly files: string[];
  /** The folders the synth checked itself (a `GitOpsApp` checks its own in the app's process). */
  readonly checkedHere: string[];
  /**
   * Objects whose change every cluster refuses to make in place and that opted in to replacement:
   * the next sync deletes and creates them again.
   */
  readonly replaced: readonly RefusedOutputChange[];
}

/**
 * The message of a synth that changes a field every cluster refuses to change: each object, the
 * field, its two values, and the ways through.
 */
export function formatRefusedChanges(changes: readonly RefusedOutputChange[], unchanged: string): string {
  const show = (value: unknown) => (value === undefined ? '(none)' : typeof value === 'string' ? value : JSON.stringify(value));
  const blocks = changes.map(c => {
    const values = c.change.before !== undefined || c.change.after !== undefined ? ` ${show(c.change.before)} -> ${show(c.change.after)}` : '';
    return [
      `${c.file}: ${c.object}: ${c.change.field}${values}: every cluster refuses this change (${c.refusal}), so a sync would fail at this object.`,
      ...c.wayThrough.map(way => `  - ${way}`),
      `  Replacing it costs: ${c.cost}.`,
    ].join('\n');
  });
  const what = changes.length === 1 ? 'a change' : `${changes.length} changes`;
  return `${blocks.join('\n\n')}\n\nsynth refused ${what} no cluster makes in place: ${unchanged}`;
}

/**
 * Reads cdk8s.yaml.
 *
 * @throws CliError when it does not parse; a missing file gives `{}`
 */
export function readCdk8sConfig(dir: string): Cdk8sConfig {
  const file = path.join(dir, 'cdk8s.yaml');
  if (!fs.existsSync(file)) return {};
  let config: unknown;
  try {
    config = load(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CliError(`${file} is not valid YAML: ${(e as Error).message}`);
  }
  if (config === null || config === undefined) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new CliError(`${file} must be a map of settings, such as "app: npx ts-node main.ts"`);
  return config as Cdk8sConfig;
}

/** The folders under `dir`, itself included, that hold manifests (YAML files), sorted. */
function manifestFolders(dir: string): string[] {
  const folders: string[] = [];
  const walk = (at: string) => {
    const entries = fs.readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    if (entries.some(e => e.isFile() && /\.ya?ml$/.test(e.name))) folders.push(path.resolve(at));
    for (const entry of entries) if (entry.isDirectory()) walk(path.join(at, entry.name));
  };
  walk(dir);
  return folders;
}

/** The manifest files under a folder, relative to it, sorted. */
function manifestFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(e => e.isFile() && /\.ya?ml$/.test(e.name))
    .map(e => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/**
 * Runs the app the way `cdk8s synth` does (its `app` command in a shell, `CDK8S_OUTDIR` set to
 * the scratch folder), or through the project's `cdk8s synth` when cdk8s.yaml asks for
 * validation plugins or a Helm chart, which only the cdk8s CLI produces.
 */
function runApp(cwd: string, app: string, scratch: string, config: Cdk8sConfig, record: string, preload: string | undefined, failOnRuntimeEnd: boolean): number {
  const env: NodeJS.ProcessEnv = { ...process.env, CDK8S_OUTDIR: scratch, CDK8S_CHECK_UPGRADE: 'false', [VALIDATED_FOLDERS_ENV]: record };
  if (failOnRuntimeEnd) env[RUNTIME_END_ENV] = 'fail';
  if (preload) env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--require ${JSON.stringify(preload)}`].filter(Boolean).join(' ');
  if (config.validations !== undefined || config.synthConfig !== undefined) {
    const cli = path.join(cwd, 'node_modules', '.bin', 'cdk8s');
    if (!fs.existsSync(cli)) {
      throw new CliError('cdk8s.yaml names validation plugins or a synthConfig, which only the cdk8s CLI runs: install it with `npm install --save-dev cdk8s-cli`');
    }
    return spawnSync(cli, ['synth', '--no-check-upgrade', '--app', app, '--output', scratch], { cwd, env, stdio: 'inherit' }).status ?? 1;
  }
  const result = spawnSync(app, { cwd, env, stdio: 'inherit', shell: true });
  if (result.error) throw new CliError(`Cannot run the app (${app}): ${result.error.message}`);
  return result.status ?? 1;
}

/**
 * Synthesizes an app into its output folder, or leaves the folder as it was.
 *
 * @returns what was written
 * @throws CliError when the app fails, writes no manifests, or writes manifests `validate` rejects;
 * the output folder is then untouched
 */
export function synth(options: SynthOptions = {}): SynthResult {
  const cwd = path.resolve(options.cwd ?? '.');
  const config = readCdk8sConfig(cwd);
  const app = options.app ?? config.app;
  if (!app) throw new CliError('No app to synthesize: give --app, or an "app" command in cdk8s.yaml (such as "app: npx ts-node main.ts")');
  const output = path.resolve(cwd, options.output ?? config.output ?? 'dist');
  const name = path.basename(output);
  // Beside the output folder, so that the final swap is a rename on one file system.
  const scratch = path.join(path.dirname(output), `.${name}.synth-${process.pid}`);
  const previous = `${scratch}-previous`;
  const record = `${scratch}-checked`;
  const preload = options.verbose ? undefined : `${scratch}-errors.js`;
  const unchanged = `${path.relative(cwd, output) || '.'}/ was left unchanged`;
  const cleanUp = () => {
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(record, { force: true });
    if (preload) fs.rmSync(preload, { force: true });
  };

  cleanUp();
  try {
    // The output folder's parent may not exist yet (--outdir build/new/dist): the preload is written there first.
    fs.mkdirSync(path.dirname(output), { recursive: true });
    if (preload) fs.writeFileSync(preload, QUIET_ERRORS_PRELOAD);
    const status = runApp(cwd, app, scratch, config, record, preload, options.failOnRuntimeEnd === true);
    if (status !== 0) throw new CliError(`synth failed: ${unchanged}`, status);
    if (!fs.existsSync(scratch) || !manifestFiles(scratch).length) {
      throw new CliError(`synth failed: the app (${app}) wrote no manifests (does it call app.synth()?); ${unchanged}`);
    }
    // A GitOpsApp checks its own output in the app's process and records the folders; the rest is checked here.
    const checked = new Set(fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : []);
    const unchecked = manifestFolders(scratch).filter(folder => !checked.has(folder));
    const reports: string[] = [];
    for (const folder of unchecked) {
      const report = validateManifests(folder, { recursive: false, runtimeEnd: { fail: options.failOnRuntimeEnd || undefined } });
      if (report.findings.some(f => f.severity === Severity.ERROR)) reports.push(formatReport(path.relative(scratch, folder) || 'synth output', report));
      else process.stderr.write(formatWarnings(report.findings, path.relative(scratch, folder) || undefined));
    }
    if (reports.length) throw new CliError(`${reports.join('\n\n')}\n\nsynth produced invalid manifests: ${unchanged}`);
    // What the clusters hold now is the previous output: a change none of them makes in place fails here, not in the middle of a sync.
    const refused = fs.existsSync(output) ? refusedOutputChanges(output, scratch, STACK_REPLACEMENT_OPT_INS) : [];
    const blocking = refused.filter(c => !c.replacementAllowed);
    if (blocking.length) throw new CliError(formatRefusedChanges(blocking, unchanged));

    if (fs.existsSync(output)) fs.renameSync(output, previous);
    fs.renameSync(scratch, output);
    fs.rmSync(previous, { recursive: true, force: true });
    return {
      output, files: manifestFiles(output), checkedHere: unchecked.map(folder => path.relative(scratch, folder) || '.'),
      replaced: refused.filter(c => c.replacementAllowed),
    };
  } finally {
    cleanUp();
  }
}

/** Adds `synth` to a program. */
export function addSynthCommand(program: Command): void {
  program.command('synth')
    .description('Synthesize the cdk8s app into its output folder, check the result as validate does, '
      + 'and keep the previous output when either fails')
    .option('-a, --app <command>', 'command that runs the app (default: "app" of cdk8s.yaml)')
    .option('--outdir <dir>', 'output folder (default: "output" of cdk8s.yaml, else dist)')
    .option('--verbose', 'when the app fails, show the stack of its error as Node.js prints it, not only the message')
    .option('--fail-on-runtime-end', 'fail when a Function\'s runtime is past or near its end of support (otherwise a warning)')
    .addHelpText('after', `
Use it instead of \`cdk8s synth\` in package.json and CI: the app runs as cdk8s synth runs it (its
"app" command, with CDK8S_OUTDIR set), but into a scratch folder beside the output folder. Only
when the app succeeds and every manifest passes the check of \`kyma-serverless validate\` does the
result replace the output folder; otherwise the output folder stays exactly as it was, and the
command exits 1 (or with the app's exit code). An error the app does not catch shows its message
(which names the construct, file or key at fault) without Node.js's stack; --verbose shows the stack.

It also compares the result with the output folder as it is, which clusters hold: a change every
cluster refuses to make in place (a smaller PersistentVolumeClaim, a new Deployment selector, a
Job's template, a CRD's scope) fails the synth, naming the prop that opts the object in to being
replaced (Registry.internal({ replaceStorage: true }), or allowReplacement()) and what that costs.

A Function whose runtime is past or near its end of support (as validate --help says) gets a
warning on standard error; --fail-on-runtime-end makes it fail the synth instead.

Examples:
  kyma-serverless synth                                   # what cdk8s.yaml says, into dist/
  kyma-serverless synth --app "npx ts-node main.ts" --outdir manifests
  # package.json: "scripts": { "synth": "kyma-serverless synth" }
`)
    .action((_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ app?: string; outdir?: string; verbose?: boolean; failOnRuntimeEnd?: boolean; output: OutputFormat }>();
      const result = synth({ app: options.app, output: options.outdir, verbose: options.verbose, failOnRuntimeEnd: options.failOnRuntimeEnd });
      if (isStructured(options.output)) printDocument(result, options.output);
      else print(`${path.relative(process.cwd(), result.output) || '.'}/: ${result.files.join(', ')}`);
      for (const change of result.replaced) {
        process.stderr.write(`note: ${change.file}: ${change.object}: ${change.change.field} changes in a way no cluster makes in place; `
          + 'it opted in to '
          + `replacement, so the next sync deletes it and creates it again. That costs: ${change.cost}.\n`);
      }
    });
}
