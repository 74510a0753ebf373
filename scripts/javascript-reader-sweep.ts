/**
 * Compares the JavaScript reader of the handler checks (src/api/_javascript-reader.ts) with acorn
 * on every `.js`, `.cjs` and `.mjs` file under the folders given (by default this checkout's
 * `node_modules`), each read as a script and as a module: wherever the reader answers, acorn must
 * parse the source as that kind and give the same facts (the modules loaded and their lines, the
 * CommonJS names a module uses and their lines). Prints how many of each the reader reads, and
 * every difference; exits 1 on one. With `--mutations N`, it compares them instead on N pieces of
 * those files, each a few lines cut out and changed by a few mutations (test/util/javascript-sources.ts),
 * reproducibly (`--seed S`): most of them do not parse, which the reader must leave to acorn.
 *
 *   npx ts-node --swc scripts/javascript-reader-sweep.ts [--mutations N] [--seed S] [folder or file ...]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as fc from 'fast-check';
import { _readJavaScriptBothWays } from '../src/api/handler-code';
import { javaScriptPieceMutant } from '../test/util/javascript-sources';
import { sweepOptions } from './_sweep-options';

const ROOT = path.resolve(__dirname, '..');

function javaScriptFiles(from: string): string[] {
  if (fs.statSync(from).isFile()) return [from];
  const out: string[] = [];
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const full = path.join(from, entry.name);
    if (entry.isDirectory()) out.push(...javaScriptFiles(full));
    else if (entry.isFile() && /\.[cm]?js$/.test(entry.name)) out.push(full);
  }
  return out;
}

function main(): void {
  const { mutations, seed, paths: args } = sweepOptions(process.argv.slice(2));
  const folders = args.length ? args : [path.join(ROOT, 'node_modules')];
  let inputs: [string, string][] = folders.flatMap(javaScriptFiles).map(f => [f, fs.readFileSync(f, 'utf8')]);
  if (mutations) {
    const pieces = fc.sample(javaScriptPieceMutant(inputs.map(([, source]) => source)), { seed, numRuns: mutations });
    inputs = pieces.map((piece, i) => [`mutant ${i} of seed ${seed}`, piece]);
  }
  const counts = { script: { parsed: 0, read: 0 }, module: { parsed: 0, read: 0 } };
  let differ = 0;
  for (const [name, source] of inputs) {
    for (const kind of ['script', 'module'] as const) {
      const { here, tree } = _readJavaScriptBothWays(source, kind);
      if (!tree.error) counts[kind].parsed++;
      if (!here) continue;
      counts[kind].read++;
      if (tree.error || !isDeepStrictEqual(here, { imports: tree.imports, commonJsNames: tree.commonJsNames })) {
        differ++;
        console.log(`DIFFERS ${name} as a ${kind}${mutations ? `\n  source: ${JSON.stringify(source)}` : ''}\n  here: ${JSON.stringify(here)}\n`
          + `  acorn: ${tree.error ? `error ${tree.error.message}` : JSON.stringify({ imports: tree.imports, commonJsNames: tree.commonJsNames })}`);
      }
    }
  }
  const share = (n: number) => `${(100 * n / inputs.length).toFixed(1)}%`;
  console.log(`${inputs.length} ${mutations ? 'mutants' : 'files'}: as scripts acorn parses ${counts.script.parsed}, the reader reads ${counts.script.read} `
    + `(${share(counts.script.read)}); as modules acorn parses ${counts.module.parsed}, the reader reads ${counts.module.read} (${share(counts.module.read)}); `
    + `${differ} read differently`);
  process.exitCode = differ ? 1 : 0;
}

main();
