/**
 * What both tables of `npm run bench` share: running a command under GNU time, medians, and the
 * Markdown table.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

const GNU_TIME = ['/usr/bin/time', '/bin/time'].find(f => fs.existsSync(f));

/** A command to measure. */
export interface Command {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env?: { readonly [key: string]: string };
}

/** One timed run. */
export interface Timing {
  readonly seconds: number;
  /** Peak RSS of the largest process in KiB; undefined without GNU time. */
  readonly peakKiB?: number;
}

/** Runs a command once, timing its wall clock; throws with its output when it fails. */
export function timed(name: string, command: Command): Timing {
  const argv = GNU_TIME ? [GNU_TIME, '-f', 'BENCH_RSS_KIB=%M', ...command.argv] : [...command.argv];
  const started = process.hrtime.bigint();
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd: command.cwd,
    encoding: 'utf8',
    env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false', ...command.env },
    maxBuffer: 256 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${name} failed (exit ${result.status}): ${command.argv.join(' ')}\n${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`);
  }
  const rss = /BENCH_RSS_KIB=(\d+)/.exec(result.stderr);
  return { seconds, peakKiB: rss ? Number(rss[1]) : undefined };
}

/** The runs of one case. */
export class Runs {
  public readonly seconds: number[] = [];
  private peak?: number;

  public constructor(public readonly name: string) {}

  public add(timing: Timing): void {
    this.seconds.push(timing.seconds);
    if (timing.peakKiB !== undefined) this.peak = Math.max(this.peak ?? 0, timing.peakKiB);
  }

  public get median(): number {
    return median(this.seconds);
  }

  /** The largest peak RSS over the runs, in MiB. */
  public get peakMiB(): number | undefined {
    return this.peak === undefined ? undefined : this.peak / 1024;
  }

  /** The cells of the table: case, median, min, max, peak RSS. */
  public cells(): string[] {
    return [
      this.name,
      this.median.toFixed(2),
      Math.min(...this.seconds).toFixed(2),
      Math.max(...this.seconds).toFixed(2),
      this.peakMiB === undefined ? 'n/a' : this.peakMiB.toFixed(0),
    ];
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A Markdown table, the first column left-aligned and the others right-aligned. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i].length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? ` ${'-'.repeat(w)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A target of an issue, checked against a measurement. */
export interface Target {
  readonly what: string;
  readonly holds: boolean;
  readonly measured: string;
}

export function targetLines(targets: readonly Target[]): string {
  return targets.map(t => `- ${t.holds ? 'met' : 'MISSED'}: ${t.what} (${t.measured})`).join('\n');
}

/** Writes a line of progress to standard error. */
export function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}
