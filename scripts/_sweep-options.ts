/**
 * The options of the reader sweeps (scripts/python-reader-sweep.ts, scripts/javascript-reader-sweep.ts):
 * `--mutations N` (mutants of the files' pieces to compare too) and `--seed N` (their generator's
 * seed, 1 unless given); what is left of the arguments are the folders or files to read.
 */
export interface SweepOptions {
  readonly mutations?: number;
  readonly seed: number;
  readonly paths: readonly string[];
}

export function sweepOptions(argv: readonly string[]): SweepOptions {
  const args = [...argv];
  const option = (name: string): number | undefined => {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const [, value] = args.splice(at, 2);
    const number = Number(value);
    if (value === undefined || !Number.isInteger(number) || number < 0) throw new Error(`${name} takes a whole number, such as ${name} 1000; got ${value ?? 'nothing'}`);
    return number;
  };
  const mutations = option('--mutations');
  const seed = option('--seed') ?? 1;
  return { mutations, seed, paths: args };
}
