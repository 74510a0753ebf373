/**
 * `kyma-serverless validate [dir]`: the offline check of synthesized manifests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { CliError } from './errors';
import { OutputFormat, isStructured, print, printDocument, table } from './_output';
import { RELEASES, ServerlessRelease, parseRelease } from '../api/release';
import { RUNTIME_FILES } from '../api/runtimes';
import { FUNCTION_FILE } from '../function/_declared';
import { manifestFiles } from '../policy/_manifest-files';
import { FolderRelease, ManifestReport, ReleaseSource, Severity, validateManifests } from '../policy/manifests';

/** Options of `validate`. */
export interface ValidateOptions {
  readonly output: OutputFormat;
  /**
   * The release to check Functions against where no Function CRD of this package is in the folder
   * (or above it), as `--release` gives it.
   *
   * @default - the release of the folder's Function CRD, else 1.11.1
   */
  readonly release?: string;
  /**
   * Make a Function whose runtime is past or near its end of support an error, as
   * `--fail-on-runtime-end` does.
   *
   * @default - a warning (unless the environment variable KYMA_SERVERLESS_RUNTIME_END is `fail`)
   */
  readonly failOnRuntimeEnd?: boolean;
  /**
   * The time to judge runtime support at.
   *
   * @default - now
   */
  readonly now?: Date;
}

/** Says which release a folder's Functions were checked against, and why that one. */
export function describeRelease(release: FolderRelease): string {
  const of = release.folder === '.' ? 'Functions' : `Functions of ${release.folder}/`;
  const why = release.source === ReleaseSource.FUNCTION_CRD ? `the release of the Function CRD in ${release.file}`
    : release.source === ReleaseSource.GIVEN ? 'given with --release'
      : 'the default: no Function CRD in the folder and no --release';
  return `${of} checked against release ${release.release} (${why})`;
}

/** Renders a report for people: a table of findings, then a summary line. */
export function formatReport(dir: string, report: ManifestReport): string {
  const errors = report.findings.filter(f => f.severity === Severity.ERROR).length;
  const warnings = report.findings.length - errors;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  // One line per object and rule excepted, however many fields the exception covers.
  const excepted = [...new Set(report.exceptions.map(e => `  ${e.file}: ${e.object}: ${e.rule}`))];
  const summary = `${dir}: ${count(report.objects, 'object')} in ${count(report.files.length, 'file')}, ${count(errors, 'error')}, ${count(warnings, 'warning')}`
    + (excepted.length ? `, ${count(excepted.length, 'documented policy exception')} (reasons with -o json):\n${excepted.join('\n')}` : '');
  const releases = report.releases.map(describeRelease);
  const closing = [summary, ...releases].join('\n');
  if (!report.findings.length) return closing;
  const rows = report.findings.map(f => [f.severity, f.file, f.object, f.path || '-', f.message]);
  return `${table(['SEVERITY', 'FILE', 'OBJECT', 'FIELD', 'PROBLEM'], rows)}\n\n${closing}`;
}

/**
 * The function folders a folder is, or holds (the folder itself, or its subfolders with a handler),
 * when it holds no manifest but their `function.yaml` files: what `validate` is given by mistake
 * for the folders synth reads.
 */
function functionFoldersIn(dir: string): string[] {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return [];
  const handlers = Object.values(RUNTIME_FILES).map(f => f.handler);
  const isFunctionFolder = (folder: string) => handlers.some(h => fs.existsSync(path.join(folder, h)));
  if (isFunctionFolder(dir)) return manifestFiles(dir, true).every(f => path.basename(f) === FUNCTION_FILE) ? [dir] : [];
  const folders = fs.readdirSync(dir, { withFileTypes: true })
    .filter(e => e.isDirectory() && !e.name.startsWith('.') && isFunctionFolder(path.join(dir, e.name)))
    .map(e => path.join(dir, e.name));
  const manifests = manifestFiles(dir, true).filter(f => !(path.basename(f) === FUNCTION_FILE && folders.includes(path.dirname(f))));
  return folders.length && !manifests.length ? folders : [];
}

/**
 * Checks a folder and prints the result.
 *
 * @returns whether it holds no errors (warnings do not count)
 */
export function validateCommand(dir: string, options: ValidateOptions): boolean {
  let release: ServerlessRelease | undefined;
  try {
    release = options.release === undefined ? undefined : parseRelease(options.release, '--release');
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const folders = functionFoldersIn(dir);
  if (folders.length) {
    const names = folders.map(f => path.basename(f)).join(', ');
    throw new CliError(`${dir} ${folders.length === 1 && folders[0] === dir ? 'is a function folder' : `holds function folders (${names})`}, not manifests: `
      + `validate checks the Kubernetes manifests synth writes, and a ${FUNCTION_FILE} is a folder's settings. Run npm run synth (kyma-serverless synth), `
      + 'which checks the function folders and writes the manifests to dist/, then kyma-serverless validate dist');
  }
  const report = validateManifests(dir, { release, runtimeEnd: { fail: options.failOnRuntimeEnd || undefined, now: options.now } });
  const ok = !report.findings.some(f => f.severity === Severity.ERROR);
  if (isStructured(options.output)) printDocument({ ok, dir, ...report }, options.output);
  else print(formatReport(dir, report));
  return ok;
}

/** Adds `validate` to a program. */
export function addValidateCommand(program: Command): void {
  program.command('validate')
    .description('Check synthesized manifests offline: every object against its schema (Kubernetes 1.27, cert-manager, Argo CD, Flux), '
      + 'every Function against our CRD, its CEL rules and the rules of the Function API')
    .argument('[dir]', 'folder of manifests, searched recursively', 'dist')
    .option('--release <version>', `the Serverless release to check Functions against where the folder holds no Function CRD: ${RELEASES.join(' or ')} `
      + '(default: the release of the folder\'s Function CRD, else 1.11.1)')
    .option('--fail-on-runtime-end', 'make a Function whose runtime is past or near its end of support an error, not a warning')
    .addHelpText('after', `
Exit code 0 when nothing is wrong (warnings, such as a kind without a known schema, do not count), 1 otherwise.
npm run synth runs the same check on what it writes, and keeps the previous dist/ when it fails.

Functions are checked against the Function API of one release: that of the Function CRD the stack
wrote into the same folder (or a folder above it; its annotation cdk8s-kyma-serverless/release
names it), else --release, else 1.11.1. A --release that differs from the folder's CRD is an error.
The summary names the release used for each folder.

A Function whose runtime is past its end of support in upstream's runtime deprecation schedule, or
within 90 days of it while its release has a newer runtime of the same language, gets a warning
with the date, the source and what to move to (rule runtimeEnd). A date never fails the check unless
--fail-on-runtime-end (or KYMA_SERVERLESS_RUNTIME_END=fail) asks for it.

Examples:
  kyma-serverless validate                 # dist/ and its environment folders
  kyma-serverless validate dist/prod -o json
  kyma-serverless validate functions-only/ --release 1.13.0   # Functions of a 1.13.0 stack synthesized apart
`)
    .action((dir: string, _options: unknown, command: Command) => {
      if (!validateCommand(dir, command.optsWithGlobals<ValidateOptions>())) process.exitCode = 1;
    });
}
