/**
 * `npm run bench`: how long synth and validate take, measured the way users run them.
 *
 * Every synth case runs what `npm run synth` runs (`kyma-serverless synth`: the app, the manifest check,
 * the swap into an output folder), only with another app or output folder:
 * - floor: the smallest cdk8s-plus-27 app, one Deployment (bench/floor/main.ts);
 * - default: this repository's app (cdk8s.yaml), which `npm run synth` runs;
 * - functions N: the stack plus N generated Functions (bench/functions/main.ts);
 * - validate N: `kyma-serverless validate` on the output of functions N.
 *
 * Each case runs BENCH_RUNS times (default 5); the table shows the median wall time, the
 * fastest and slowest run, the peak RSS of the largest process (GNU time), and the ratio to the
 * floor. The targets of issue 8 are checked; the table goes to stdout and bench/RESULTS.md.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join('bench', '.out');
const RUNS = Number(process.env.BENCH_RUNS ?? '5');
const SIZES = (process.env.BENCH_SIZES ?? '100,1000,10000').split(',').map(Number);
const GNU_TIME = ['/usr/bin/time', '/bin/time'].find(f => fs.existsSync(f));

interface Case {
  readonly name: string;
  readonly command: readonly string[];
  readonly env?: { readonly [key: string]: string };
}

interface Measured {
  readonly name: string;
  readonly seconds: readonly number[];
  readonly median: number;
  /** Peak RSS in MiB, the largest over the runs; undefined without GNU time. */
  readonly peakMiB?: number;
}

function synthCase(name: string, dist: string, app?: string, env: { [key: string]: string } = {}): Case {
  return {
    name,
    command: [process.execPath, path.join(ROOT, 'bin', 'kyma-serverless.js'), 'synth', '--outdir', dist, ...(app ? ['--app', app] : [])],
    env,
  };
}

function run(c: Case): { seconds: number; peakKiB?: number } {
  const argv = GNU_TIME ? [GNU_TIME, '-f', 'BENCH_RSS_KIB=%M', ...c.command] : [...c.command];
  const started = process.hrtime.bigint();
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false', ...c.env },
    maxBuffer: 256 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) {
    throw new Error(`${c.name} failed (exit ${result.status}):\n${result.stderr.slice(-2000)}`);
  }
  const rss = /BENCH_RSS_KIB=(\d+)/.exec(result.stderr);
  return { seconds, peakKiB: rss ? Number(rss[1]) : undefined };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function measure(c: Case): Measured {
  const seconds: number[] = [];
  let peak: number | undefined;
  // One untimed run first: it fills the OS file cache, as a CI runner's second build would.
  run(c);
  for (let i = 0; i < RUNS; i++) {
    const { seconds: s, peakKiB } = run(c);
    seconds.push(s);
    if (peakKiB !== undefined) peak = Math.max(peak ?? 0, peakKiB);
    process.stderr.write(`  ${c.name}: run ${i + 1}/${RUNS} ${s.toFixed(2)} s\n`);
  }
  return { name: c.name, seconds, median: median(seconds), peakMiB: peak === undefined ? undefined : peak / 1024 };
}

interface Target {
  readonly what: string;
  readonly holds: boolean;
  readonly measured: string;
}

function main(): number {
  if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`BENCH_RUNS (${process.env.BENCH_RUNS}) must be a whole number of at least 1`);
  const cases: Case[] = [
    synthCase('floor', path.join(OUT, 'floor'), 'npx ts-node --swc bench/floor/main.ts'),
    synthCase('default app', path.join(OUT, 'default')),
    ...SIZES.map(n => synthCase(`${n} Functions`, path.join(OUT, `functions-${n}`), 'npx ts-node --swc bench/functions/main.ts', { BENCH_FUNCTIONS: String(n) })),
    ...SIZES.map(n => ({ name: `validate ${n}`, command: [process.execPath, 'bin/kyma-serverless.js', 'validate', path.join(OUT, `functions-${n}`)] })),
  ];
  process.stderr.write(`bench: ${cases.length} cases, ${RUNS} runs each (plus one warm-up)\n`);
  const results = cases.map(measure);
  const byName = new Map(results.map(r => [r.name, r]));
  const floor = byName.get('floor')!.median;

  const rows = results.map(r => [
    r.name,
    r.median.toFixed(2),
    Math.min(...r.seconds).toFixed(2),
    Math.max(...r.seconds).toFixed(2),
    r.peakMiB === undefined ? 'n/a' : r.peakMiB.toFixed(0),
    (r.median / floor).toFixed(2),
  ]);
  const header = ['case', 'median s', 'min s', 'max s', 'peak RSS MiB', 'x floor'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i].length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const table = [line(header), `|${widths.map((w, i) => (i === 0 ? ` ${'-'.repeat(w)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`, ...rows.map(line)].join('\n');

  const targets: Target[] = [];
  const at = (name: string) => byName.get(name);
  const ratio = (name: string) => at(name)!.median / floor;
  targets.push({ what: 'default app within 1.3x the floor', holds: ratio('default app') <= 1.3, measured: `${ratio('default app').toFixed(2)}x` });
  if (at('1000 Functions')) targets.push({ what: '1,000 Functions within 2x the floor', holds: ratio('1000 Functions') <= 2, measured: `${ratio('1000 Functions').toFixed(2)}x` });
  const big = at('10000 Functions');
  if (big) {
    targets.push({ what: '10,000 Functions within 15 s', holds: big.median <= 15, measured: `${big.median.toFixed(2)} s` });
    if (big.peakMiB !== undefined) targets.push({ what: '10,000 Functions within 1 GiB peak RSS', holds: big.peakMiB <= 1024, measured: `${big.peakMiB.toFixed(0)} MiB` });
    const validateBig = at('validate 10000')!;
    targets.push({ what: 'validate of 10,000 Functions within 10 s', holds: validateBig.median <= 10, measured: `${validateBig.median.toFixed(2)} s` });
    if (at('1000 Functions')) {
      const growth = big.median / at('1000 Functions')!.median;
      targets.push({ what: 'time(10,000) / time(1,000) at most 12', holds: growth <= 12, measured: growth.toFixed(2) });
    }
  }
  const targetLines = targets.map(t => `- ${t.holds ? 'met' : 'MISSED'}: ${t.what} (${t.measured})`).join('\n');

  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}, ${os.platform()}`;
  const report = `# Benchmark results

Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${machine}.
Median of ${RUNS} runs after one warm-up run; peak RSS is the largest process of the run.

${table}

Targets:
${targetLines}
`;
  process.stdout.write(`\n${table}\n\n${targetLines}\n`);
  fs.writeFileSync(path.join(ROOT, 'bench', 'RESULTS.md'), report);
  process.stdout.write('\nwritten to bench/RESULTS.md\n');
  return targets.every(t => t.holds) ? 0 : 1;
}

process.exitCode = main();
