/**
 * Compares the Python reader of the handler checks (src/api/_python-reader.ts) with tree-sitter on
 * every `.py` file under the folders given (by default the standard library of `python3`, and the
 * Python handlers of functions/ and of the reference samples beside the checkout): wherever the
 * reader answers, tree-sitter's tree must have no problem and give the same outline (where `main`
 * is bound, the imports and their lines). Prints how many files each reads, and every difference;
 * exits 1 on one. With `--mutations N`, it compares them instead on N pieces of those files, each
 * a few lines cut out and changed by a few mutations (test/util/python-sources.ts: a token deleted,
 * doubled, swapped or inserted, a line indented otherwise, deleted or doubled, a call of `print`
 * made a statement), reproducibly (`--seed S`): most of them have a problem, which the reader must
 * leave to tree-sitter.
 *
 *   npx ts-node --swc scripts/python-reader-sweep.ts [--mutations N] [--seed S] [folder or file ...]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as fc from 'fast-check';
import * as YAML from 'yaml';
import { _readPythonBothWays } from '../src/api/handler-code';
import { askSources, stopParser } from '../src/api/_python-parser';
import { pythonPieceMutant } from '../test/util/python-sources';
import { sweepOptions } from './_sweep-options';

const ROOT = path.resolve(__dirname, '..');

function pythonFiles(from: string): string[] {
  if (fs.statSync(from).isFile()) return [from];
  const out: string[] = [];
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const full = path.join(from, entry.name);
    if (entry.isDirectory() && entry.name !== 'site-packages' && entry.name !== '__pycache__') out.push(...pythonFiles(full));
    else if (entry.isFile() && entry.name.endsWith('.py')) out.push(full);
  }
  return out;
}

/** The inline Python sources of the reference samples, by a name for each. */
function referenceSources(): [string, string][] {
  const reference = [path.join(ROOT, '..', 'shared', 'reference'), path.join(ROOT, '..', '..', 'shared', 'reference')].find(d => fs.existsSync(d));
  if (!reference) return [];
  const out: [string, string][] = [];
  for (const folder of ['upstream', 'upstream-1.13.0']) {
    const dir = path.join(reference, folder);
    if (!fs.existsSync(dir)) continue;
    for (const file of fs.readdirSync(dir).filter(f => /\.(ya?ml|md)$/.test(f))) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      const yamls = file.endsWith('.md') ? [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map(m => m[1].replace(/^cat <<EOF \| kubectl apply -f -\n|^EOF\n?/gm, '')) : [text];
      for (const y of yamls) {
        for (const doc of YAML.parseAllDocuments(y)) {
          const fn = doc.toJS();
          const source = fn?.spec?.source?.inline?.source;
          if (fn?.kind === 'Function' && String(fn.spec.runtime).startsWith('python') && typeof source === 'string') {
            out.push([`${folder}/${file}#${fn.metadata?.name}`, source]);
          }
        }
      }
    }
  }
  return out;
}

function main(): void {
  const { mutations, seed, paths: args } = sweepOptions(process.argv.slice(2));
  const given = args;
  let inputs: [string, string][];
  if (given.length) {
    inputs = given.flatMap(pythonFiles).map(f => [f, fs.readFileSync(f, 'utf8')]);
  } else {
    const stdlib = spawnSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).stdout.trim();
    inputs = [...pythonFiles(stdlib), ...pythonFiles(path.join(ROOT, 'functions'))].map(f => [f, fs.readFileSync(f, 'utf8')] as [string, string]);
    inputs.push(...referenceSources());
  }
  if (mutations) {
    const pieces = fc.sample(pythonPieceMutant(inputs.map(([, source]) => source)), { seed, numRuns: mutations });
    inputs = pieces.map((piece, i) => [`mutant ${i} of seed ${seed}`, piece]);
  }
  let read = 0;
  let clean = 0;
  let differ = 0;
  for (let at = 0; at < inputs.length; at += 100) {
    const batch = inputs.slice(at, at + 100);
    askSources(batch.map(([, source]) => source));
    for (const [name, source] of batch) {
      const { here, tree } = _readPythonBothWays(source);
      if (!tree.syntax) clean++;
      if (!here) continue;
      read++;
      if (tree.syntax || !isDeepStrictEqual(here.outline, tree.outline)) {
        differ++;
        console.log(`DIFFERS ${name}${mutations ? `\n  source: ${JSON.stringify(source)}` : ''}\n  here: ${JSON.stringify(here.outline)}\n  tree: ${JSON.stringify(tree.outline)}${tree.syntax ? `\n  tree's problem: ${JSON.stringify(tree.syntax)}` : ''}`);
      }
    }
  }
  stopParser();
  console.log(`${inputs.length} ${mutations ? 'mutants' : 'files'}: tree-sitter reads ${clean} without a problem; this thread's reader reads ${read} (${(100 * read / inputs.length).toFixed(1)}%), `
    + `of them ${differ} differently`);
  process.exitCode = differ ? 1 : 0;
}

main();
