/**
 * The second table of `npm run bench`: synth the way this repository runs it, `npm run synth`'s
 * script (`kyma-serverless synth`: ts-node, the app, the manifest check, the swap into an output
 * folder), only with another app or output folder:
 * - floor: the smallest cdk8s-plus-27 app, one Deployment (bench/floor/main.ts);
 * - default app: this repository's app (cdk8s.yaml), which `npm run synth` runs;
 * - N Functions: the stack plus N generated Functions (bench/functions/main.ts);
 * - validate N: `kyma-serverless validate` on the output of N Functions.
 */
import * as path from 'node:path';
import { Command, Runs, Target, markdownTable, progress, timed } from './measure';
import { Section } from './user-path';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join('bench', '.out');

function synth(dist: string, app?: string, env: { [key: string]: string } = {}): Command {
  return {
    argv: [process.execPath, path.join(ROOT, 'bin', 'kyma-serverless.js'), 'synth', '--outdir', dist, ...(app ? ['--app', app] : [])],
    cwd: ROOT,
    env,
  };
}

export function benchNpmSynth(runs: number, sizes: readonly number[]): Section {
  const cases: [string, Command][] = [
    ['floor', synth(path.join(OUT, 'floor'), 'npx ts-node --swc bench/floor/main.ts')],
    ['default app', synth(path.join(OUT, 'default'))],
    ...sizes.map((n): [string, Command] => [`${n} Functions`, synth(path.join(OUT, `functions-${n}`), 'npx ts-node --swc bench/functions/main.ts', { BENCH_FUNCTIONS: String(n) })]),
    ...sizes.map((n): [string, Command] => [`validate ${n}`, { argv: [process.execPath, 'bin/kyma-serverless.js', 'validate', path.join(OUT, `functions-${n}`)], cwd: ROOT }]),
  ];
  const results = cases.map(([name, command]) => {
    const measured = new Runs(name);
    timed(name, command); // warm-up: fills the OS file cache
    for (let i = 0; i < runs; i++) {
      measured.add(timed(name, command));
      progress(`  ${name}: run ${i + 1}/${runs} ${measured.seconds[i].toFixed(2)} s`);
    }
    return measured;
  });
  const floor = results[0].median;
  const table = markdownTable(['case', 'median s', 'min s', 'max s', 'peak RSS MiB', 'x floor'], results.map(r => [...r.cells(), (r.median / floor).toFixed(2)]));

  // The targets of issue 8, for this path.
  const at = (name: string) => results.find(r => r.name === name);
  const ratio = (name: string) => at(name)!.median / floor;
  const targets: Target[] = [{ what: 'default app within 1.3x the floor', holds: ratio('default app') <= 1.3, measured: `${ratio('default app').toFixed(2)}x` }];
  if (at('1000 Functions')) targets.push({ what: '1,000 Functions within 2x the floor', holds: ratio('1000 Functions') <= 2, measured: `${ratio('1000 Functions').toFixed(2)}x` });
  const big = at('10000 Functions');
  if (big) {
    targets.push({ what: '10,000 Functions within 15 s', holds: big.median <= 15, measured: `${big.median.toFixed(2)} s` });
    if (big.peakMiB !== undefined) targets.push({ what: '10,000 Functions within 1 GiB peak RSS', holds: big.peakMiB <= 1024, measured: `${big.peakMiB.toFixed(0)} MiB` });
    targets.push({ what: 'validate of 10,000 Functions within 10 s', holds: at('validate 10000')!.median <= 10, measured: `${at('validate 10000')!.median.toFixed(2)} s` });
  }
  return { table, targets };
}
