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
 * - cdk8s alone, no check, N Functions (N = 0 and 1,000): the same app and constructs, synthesized by
 *   cdk8s's own `App` with every construct's validation turned off (bench/user-path.ts writes it
 *   from bench/functions/main.ts): what the title calls bare cdk8s, for these objects. Not
 *   a goal of the issue; the table shows it so that the goals can be read against it, and a target
 *   holds synth with every check within its time;
 * - synth, every check off, N Functions (N = 0 and 1,000): the same app and GitOpsApp, with no
 *   construct validated and the output not checked (bench/user-path.ts writes it from
 *   bench/functions/main.ts): what making, rendering and writing these objects costs with no check
 *   at all, so that the goals can be read against the part of synth that is not checking;
 * - validate N: the installed `kyma-serverless validate` on the output of the largest N.
 *
 * Each synth case alternates with the floor, run for run, so both see the same machine; its ratio
 * is to the median of the floor runs next to it. BENCH_APP names an installed scratch app to reuse.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Runs, Target, markdownTable, progress, timed } from './measure';
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

/** The sizes the apps of cdk8s alone and of synth with every check off run at: neither is a goal, and 10,000 Functions would add a minute to the bench. */
const BARE_SIZES: readonly number[] = [0, 1000];

/**
 * The app of bench/functions/main.ts as cdk8s alone synthesizes it: a cdk8s `App` instead of the
 * GitOpsApp (no check of the output, cdk8s's own YAML writer), and no construct's validation (no
 * check of a Function's spec or handler). Construction is the same, with what constructs check as
 * they are made.
 */
export function bareApp(functionsApp: string): string {
  return replacingApp(functionsApp, ["import { App } from 'cdk8s';", "import { Node } from 'constructs';"], [
    '// cdk8s alone: its App, and no construct validated when it synthesizes.',
    '(Node.prototype as unknown as { validate(): string[] }).validate = () => [];',
    'const app = new App();',
  ]);
}

/** The line of bench/functions/main.ts that makes its app, which the apps beside it replace. */
const APP_LINE = 'const app = new GitOpsApp();';

/** bench/functions/main.ts with imports before it and its app's line replaced by others. */
function replacingApp(functionsApp: string, imports: readonly string[], lines: readonly string[]): string {
  if (functionsApp.split(APP_LINE).length !== 2) throw new Error(`bench/functions/main.ts must make its app once, as "${APP_LINE}"`);
  return [...imports, ''].join('\n') + functionsApp.replace(APP_LINE, lines.join('\n'));
}

/**
 * The app of bench/functions/main.ts with every check of synth off: the same GitOpsApp and writer,
 * but no construct validated (no check of a Function's spec or handler) and the written objects not
 * checked (no schema, rule or baseline check of the output). What is left is what synth costs
 * without checking: the modules, making the constructs, rendering and writing.
 */
export function uncheckedApp(functionsApp: string): string {
  return replacingApp(functionsApp, ["import { Node } from 'constructs';"], [
    '// Every check off: no construct validated, and the output of synth not checked.',
    '(Node.prototype as unknown as { validate(): string[] }).validate = () => [];',
    '(GitOpsApp.prototype as unknown as { validateOutput(): void }).validateOutput = () => {};',
    APP_LINE,
  ]);
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
  const functions = functionsApp();
  fs.writeFileSync(path.join(dir, 'functions.ts'), functions);
  fs.writeFileSync(path.join(dir, 'bare.ts'), bareApp(functions));
  fs.writeFileSync(path.join(dir, 'unchecked.ts'), uncheckedApp(functions));
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
    /** A case measured alternating with the floor, run for run. */
    const paired = (name: string, command: Command) => {
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
      return { runs: measured, floor: pairedFloor };
    };
    const cases: Case[] = [];
    for (const n of [0, ...sizes.filter(s => s > 0)]) {
      const name = n === 0 ? 'stack alone (N = 0)' : `stack + ${n.toLocaleString('en-US')} Functions`;
      cases.push({ ...paired(name, synth('functions.ts', `functions-${n}`, { BENCH_FUNCTIONS: String(n) })), n });
    }
    /** An app beside the goals, at the sizes of BARE_SIZES that this bench runs. */
    const beside = (label: string, file: string) => BARE_SIZES.filter(s => s === 0 || sizes.includes(s)).map((n): Case => {
      const name = `${label} (N = ${n.toLocaleString('en-US')})`;
      return { ...paired(name, synth(`${file}.ts`, `${file}-${n}`, { BENCH_FUNCTIONS: String(n) })), n };
    });
    const bare = beside('cdk8s alone, no check', 'bare');
    const unchecked = beside('synth, every check off', 'unchecked');
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
      ...[...cases, ...bare, ...unchecked].map(c => [...c.runs.cells(), toFloor(c).toFixed(2)]),
      [...validate.cells(), (validate.median / floor.median).toFixed(2)],
    ];
    const table = markdownTable(['case', 'median s', 'min s', 'max s', 'peak RSS MiB', 'x floor'], rows);
    return { table, targets: [...userPathTargets(cases, validate), ...bareTargets(cases, bare)] };
  } finally {
    dispose();
  }
}

/** A case of the table: its runs, the floor runs next to them, and its number of Functions. */
interface Case {
  readonly runs: Runs;
  readonly floor: Runs;
  readonly n: number;
}

/** The ratio of a case to the floor runs next to it. */
const toFloor = (c: Case) => c.runs.median / c.floor.median;

/**
 * Synth with every check on against cdk8s alone with none, for the same app: each as a ratio to the
 * floor runs next to it, so that a machine that slows between the two cases does not move the answer.
 */
function bareTargets(cases: readonly Case[], bare: readonly Case[]): Target[] {
  return bare.flatMap(b => {
    const synth = cases.find(c => c.n === b.n);
    if (!synth) return [];
    const ratio = toFloor(synth) / toFloor(b);
    const what = b.n === 0 ? 'the stack alone' : `stack + ${b.n.toLocaleString('en-US')} Functions`;
    return [{ what: `${what} with every check within the time of cdk8s alone with no check`, holds: ratio <= 1, measured: `${ratio.toFixed(2)}x` }];
  });
}

/** The goals of issue 35: synth at the cost of bare cdk8s, with every check on. */
function userPathTargets(cases: readonly Case[], validate: Runs): Target[] {
  const targets: Target[] = [];
  const at = (n: number) => cases.find(c => c.n === n);
  const ratio = (n: number) => toFloor(at(n)!);
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
