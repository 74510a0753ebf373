/**
 * `kyma-serverless validate [dir]`: the offline check of synthesized manifests.
 */
import { Command } from 'commander';
import { OutputFormat, isStructured, print, printDocument, table } from './_output';
import { ManifestReport, Severity, validateManifests } from '../policy/manifests';

/** Options of `validate`. */
export interface ValidateOptions {
  readonly output: OutputFormat;
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
  if (!report.findings.length) return summary;
  const rows = report.findings.map(f => [f.severity, f.file, f.object, f.path || '-', f.message]);
  return `${table(['SEVERITY', 'FILE', 'OBJECT', 'FIELD', 'PROBLEM'], rows)}\n\n${summary}`;
}

/**
 * Checks a folder and prints the result.
 *
 * @returns whether it holds no errors (warnings do not count)
 */
export function validateCommand(dir: string, options: ValidateOptions): boolean {
  const report = validateManifests(dir);
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
    .addHelpText('after', `
Exit code 0 when nothing is wrong (warnings, such as a kind without a known schema, do not count), 1 otherwise.
npm run synth runs the same check on what it writes, and keeps the previous dist/ when it fails.

Examples:
  kyma-serverless validate                 # dist/ and its environment folders
  kyma-serverless validate dist/prod -o json
`)
    .action((dir: string, _options: unknown, command: Command) => {
      if (!validateCommand(dir, command.optsWithGlobals<ValidateOptions>())) process.exitCode = 1;
    });
}
