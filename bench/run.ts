/**
 * `npm run bench`: how long synth and validate take, in two tables.
 *
 * 1. The user's path (bench/user-path.ts): the packed package installed into a scratch cdk8s app
 *    outside the repository, each case one `node -r ts-node/register/transpile-only` run,
 *    alternating with the floor (the smallest cdk8s-plus-27 app). The goals of issue 35.
 * 2. This repository's `npm run synth` script (bench/npm-synth.ts), the CLI and the check
 *    included. The targets of issue 8.
 *
 * Each case runs BENCH_RUNS times (default 5) after one warm-up run; the tables show the median
 * wall time, the fastest and slowest run, the peak RSS of the largest process (GNU time), and the
 * ratio to the floor. BENCH_SIZES (default 1000,10000 for the user's path; the npm run synth
 * table adds 100) and BENCH_TABLES (user,synth) change what is measured. The report goes to
 * stdout and bench/RESULTS.md; the exit code is 1 when a target is missed. docs/performance.md shows
 * the same tables (a test compares them): copy them there when they change. A last table, not
 * timed, gives the size of the webhook program's ConfigMap in dist/ (bench/sizes.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { targetLines } from './measure';
import { benchNpmSynth } from './npm-synth';
import { sizesTable } from './sizes';
import { Section, benchUserPath } from './user-path';

const RUNS = Number(process.env.BENCH_RUNS ?? '5');
const sizesOf = (value: string) => value.split(',').map(Number);
const TABLES = new Set((process.env.BENCH_TABLES ?? 'user,synth').split(','));

function main(): number {
  if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`BENCH_RUNS (${process.env.BENCH_RUNS}) must be a whole number of at least 1`);
  const sizes = process.env.BENCH_SIZES;
  for (const n of sizesOf(sizes ?? '0')) {
    if (!Number.isInteger(n) || n < 0) throw new Error(`BENCH_SIZES (${sizes}) must list whole numbers`);
  }
  for (const table of TABLES) {
    if (table !== 'user' && table !== 'synth') throw new Error(`BENCH_TABLES (${process.env.BENCH_TABLES}) lists "${table}"; the tables are user and synth`);
  }
  const sections: { title: string; about: string; section: Section }[] = [];
  if (TABLES.has('user')) {
    sections.push({
      title: "The user's path",
      about: '`npm pack`, installed into a scratch cdk8s app outside the repository; each case one `node -r ts-node/register/transpile-only` run, alternating with the floor; x floor is the ratio to the floor runs next to it.',
      section: benchUserPath(RUNS, sizesOf(sizes ?? '1000,10000')),
    });
  }
  if (TABLES.has('synth')) {
    sections.push({
      title: '`npm run synth`',
      about: "This repository's script: `kyma-serverless synth` with ts-node (SWC), `cdk8s synth`, the check of the output and the swap into a folder.",
      section: benchNpmSynth(RUNS, sizesOf(sizes ?? '100,1000,10000')),
    });
  }

  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}, ${os.platform()}`;
  const body = sections.map(s => `## ${s.title}

${s.about}

${s.section.table}

Targets:
${targetLines(s.section.targets)}
`).join('\n') + `
## What dist/ ships

The webhook program's ConfigMap (\`serverless-webhook-server\`) against the 256 KiB of annotations the
API server allows an object, which client-side \`kubectl apply\` (Argo CD's default) fills with the
whole object: target at most half.

${sizesTable(path.join(__dirname, '..', 'dist'))}
`;
  const report = `# Benchmark results

Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${machine}.
Median of ${RUNS} runs after one warm-up run; peak RSS is the largest process of the runs.

${body}`;
  process.stdout.write(`\n${body}`);
  fs.writeFileSync(path.join(__dirname, 'RESULTS.md'), report);
  process.stdout.write('\nwritten to bench/RESULTS.md: copy its tables into docs/performance.md\n');
  return sections.every(s => s.section.targets.every(t => t.holds)) ? 0 : 1;
}

process.exitCode = main();
