/**
 * Output of the commands: aligned tables for people, JSON for scripts.
 */

/** How a command prints its result. */
export enum OutputFormat {
  /** Aligned columns. */
  TABLE = 'table',
  /** One JSON document. */
  JSON = 'json',
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

/** Writes a value as indented JSON to standard output. */
export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
}
