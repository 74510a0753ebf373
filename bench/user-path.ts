/**
 * The main table of `npm run bench`: synth measured where users stand.
 *
 * The package is packed (`npm pack`) and installed into a new cdk8s app in a temporary folder
 * outside the repository, the install of the package test (test/e2e/scratch-app.ts). There, each
 * case is one `node -r ts-node/register/transpile-only <file>.ts`, the way a user's `main.ts`
 * runs under `cdk8s synth` without the CLI around it:
 * - floor: the smallest cdk8s-plus-27 app, one Deployment (bench/user-app/floor.ts);
 * - stack + N Functions: bench/functions/main.ts importing 'cdk8s-kyma-serverless', the public
 *   API only (N = 0 is the stack alone);
 * - validate N: the installed `kyma-serverless validate` on the output of the largest N.
 *
 * Each synth case alternates with the floor, run for run, so both see the same machine; its ratio
 * is to the median of the floor runs next to it. BENCH_APP names an installed scratch app to reuse.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Runs, Target, markdownTable, progress, timed } from './measure';
import { ScratchApp, packPackage } from '../test/e2e/scratch-app';

const BENCH = __dirname;

/** The measured table and its targets. */
export interface Section {
  readonly table: string;
  readonly targets: readonly Target[];
}

/** The generator of bench/functions/main.ts, importing the package as a user's app does. */
function functionsApp(): string {
  const source = fs.readFileSync(path.join(BENCH, 'functions', 'main.ts'), 'utf8');
  const local = /from '\.\.\/\.\.\/src'/g;
  if ((source.match(local) ?? []).length !== 1) throw new Error("bench/functions/main.ts must import the public API from '../../src', once");
  return source.replace(local, "from 'cdk8s-kyma-serverless'");
}

function prepareApp(): { dir: string; dispose: () => void } {
  const reuse = process.env.BENCH_APP;
  let app: ScratchApp | undefined;
  let dir: string;
  if (reuse) {
    dir = path.resolve(reuse);
    if (!fs.existsSync(path.join(dir, 'node_modules', 'cdk8s-kyma-serverless'))) throw new Error(`BENCH_APP (${reuse}) has no cdk8s-kyma-serverless installed`);
  } else {
    progress('user path: npm pack, then installing into a scratch app');
    const tarball = packPackage();
    app = ScratchApp.create(tarball);
    fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
    dir = app.dir;
  }
  fs.copyFileSync(path.join(BENCH, 'user-app', 'floor.ts'), path.join(dir, 'floor.ts'));
  fs.writeFileSync(path.join(dir, 'functions.ts'), functionsApp());
  return { dir, dispose: () => app?.remove() };
}

export function benchUserPath(runs: number, sizes: readonly number[]): Section {
  const { dir, dispose } = prepareApp();
  try {
    const synth = (file: string, outdir: string, env: { [key: string]: string } = {}) => ({
      argv: [process.execPath, '-r', 'ts-node/register/transpile-only', file],
      cwd: dir,
      env: { CDK8S_OUTDIR: path.join(dir, 'out', outdir), ...env },
    });
    const floorCommand = synth('floor.ts', 'floor');
    const floor = new Runs('floor (one cdk8s-plus Deployment)');
    const cases: { runs: Runs; floor: Runs; n: number }[] = [];
    for (const n of [0, ...sizes.filter(s => s > 0)]) {
      const name = n === 0 ? 'stack alone (N = 0)' : `stack + ${n.toLocaleString('en-US')} Functions`;
      const command = synth('functions.ts', `functions-${n}`, { BENCH_FUNCTIONS: String(n) });
      // One untimed run of each first: it fills the OS file cache, as a CI runner's second build would.
      timed('floor', floorCommand);
      timed(name, command);
      const pairedFloor = new Runs('floor');
      const measured = new Runs(name);
      for (let i = 0; i < runs; i++) {
        const f = timed('floor', floorCommand);
        const c = timed(name, command);
        floor.add(f);
        pairedFloor.add(f);
        measured.add(c);
        progress(`  ${name}: run ${i + 1}/${runs} ${c.seconds.toFixed(2)} s (floor ${f.seconds.toFixed(2)} s)`);
      }
      cases.push({ runs: measured, floor: pairedFloor, n });
    }
    const largest = cases[cases.length - 1];
    const validate = new Runs(`validate ${largest.n.toLocaleString('en-US')} Functions`);
    const validateCommand = {
      argv: [path.join(dir, 'node_modules', '.bin', 'kyma-serverless'), 'validate', path.join(dir, 'out', `functions-${largest.n}`)],
      cwd: dir,
    };
    timed(validate.name, validateCommand);
    for (let i = 0; i < runs; i++) {
      validate.add(timed(validate.name, validateCommand));
      progress(`  ${validate.name}: run ${i + 1}/${runs} ${validate.seconds[i].toFixed(2)} s`);
    }

    const rows = [
      [...floor.cells(), '1.00'],
      ...cases.map(c => [...c.runs.cells(), (c.runs.median / c.floor.median).toFixed(2)]),
      [...validate.cells(), (validate.median / floor.median).toFixed(2)],
    ];
    const table = markdownTable(['case', 'median s', 'min s', 'max s', 'peak RSS MiB', 'x floor'], rows);
    return { table, targets: userPathTargets(cases, validate) };
  } finally {
    dispose();
  }
}

/** The goals of issue 35: synth at the cost of bare cdk8s, with every check on. */
function userPathTargets(cases: readonly { runs: Runs; floor: Runs; n: number }[], validate: Runs): Target[] {
  const targets: Target[] = [];
  const at = (n: number) => cases.find(c => c.n === n);
  const ratio = (n: number) => at(n)!.runs.median / at(n)!.floor.median;
  targets.push({ what: 'the stack alone within 1.1x the floor', holds: ratio(0) <= 1.1, measured: `${ratio(0).toFixed(2)}x` });
  if (at(1000)) targets.push({ what: 'stack + 1,000 Functions (half Node.js, half Python) within 1.5x the floor', holds: ratio(1000) <= 1.5, measured: `${ratio(1000).toFixed(2)}x` });
  const big = at(10000);
  if (big) {
    targets.push({ what: 'stack + 10,000 Functions within 3 s', holds: big.runs.median <= 3, measured: `${big.runs.median.toFixed(2)} s` });
    const peak = big.runs.peakMiB;
    if (peak !== undefined) targets.push({ what: 'stack + 10,000 Functions within 256 MiB peak RSS', holds: peak <= 256, measured: `${peak.toFixed(0)} MiB` });
    targets.push({ what: 'validate of 10,000 Functions within 1 s', holds: validate.median <= 1, measured: `${validate.median.toFixed(2)} s` });
    const small = at(1000);
    if (small) {
      const zero = at(0)!.runs.median;
      const growth = (big.runs.median - small.runs.median) / (small.runs.median - zero);
      targets.push({ what: 'linear growth: time(10,000) - time(1,000) at most 9x (time(1,000) - time(0))', holds: growth <= 9, measured: `${growth.toFixed(2)}x` });
    }
  }
  return targets;
}
