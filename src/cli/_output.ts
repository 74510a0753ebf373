/**
 * Output of the commands: aligned tables for people, JSON or YAML (the same data) for scripts.
 */
// Types only: the YAML writer loads when a command prints YAML, not for every table.
import type * as Yaml from 'yaml';

/** How a command prints its result. */
export enum OutputFormat {
  /** Aligned columns. */
  TABLE = 'table',
  /** One JSON document. */
  JSON = 'json',
  /** One YAML document: the data of JSON, as YAML. */
  YAML = 'yaml',
}

/** Whether a format is for scripts (JSON or YAML) rather than for people. */
export function isStructured(format: OutputFormat | undefined): boolean {
  return format === OutputFormat.JSON || format === OutputFormat.YAML;
}

/**
 * Renders rows as columns separated by two spaces, each as wide as its widest cell; the last
 * column is not padded.
 *
 * @param header the column titles
 * @param rows the cells, as text
 * @returns the lines, without a trailing newline
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map(r => (r[i] ?? '').length)));
  return all.map(r => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd()).join('\n');
}

/** Writes a line to standard output. */
export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/**
 * Renders a value as one document of a structured format: indented JSON, or YAML of the same
 * data (what JSON keeps: no undefined values, dates as their JSON strings), without a trailing newline.
 *
 * @param value the value
 * @param format JSON or YAML; the table format renders JSON
 * @param stream whether the document is one of several on the same output (a watch, a log): YAML
 * then starts with a `---` line, so that the output is one YAML stream
 */
export function formatDocument(value: unknown, format: OutputFormat, stream = false): string {
  const json = JSON.stringify(value, null, 2);
  if (format !== OutputFormat.YAML) return json;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const yaml = (require('yaml') as typeof Yaml).stringify(JSON.parse(json), { lineWidth: 0 }).trimEnd();
  return stream ? `---\n${yaml}` : yaml;
}

/**
 * Writes a value to standard output as one document of a structured format.
 *
 * @param value the value
 * @param format JSON or YAML; the table format prints JSON
 * @param stream whether the document is one of several on the output (see {@link formatDocument})
 */
export function printDocument(value: unknown, format: OutputFormat, stream = false): void {
  print(formatDocument(value, format, stream));
}
