/**
 * Makes the compiled construct entry (`lib/src/index.js`) load each module it re-exports when one
 * of that module's names is first read, instead of all of them when the entry loads.
 *
 * Why: an app reads a few of the entry's 137 names (a stack alone: `GitOpsApp`, `ServerlessStack`,
 * `FunctionNamespace`), but loading the entry loaded every module behind them, about 100 files
 * (Functions, exposure, KEDA, traffic, Argo CD, Flux, ...): in CPU time of the stack alone on a
 * user's path, 155 ms → 143 ms (median of 14 alternating runs) for the same output. TypeScript
 * compiles `export { X } from './x'` to a `require` at the top and a getter that reads the
 * module's export; this keeps the getters as they are (Node.js reads their form to give an ES
 * module's `import` the names) and makes each module's variable an object that requires the
 * module when a name is first read from it, within the code cache of src/_code-cache.ts as the
 * entry's own loading was. Names, their order and their values are the same (a test compares both
 * forms, and the names `cjs-module-lexer` finds); src/index.ts stays as it is, for jsii and the
 * type declarations.
 *
 * `npm run bundle` rewrites `lib/src/index.js` when there is one (after `tsc` in `npm run build`);
 * a rewritten file stays as it is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The compiled construct entry. */
export const ENTRY_JS = path.join(__dirname, '..', 'lib', 'src', 'index.js');

/** The line of the compiled entry that imports the code cache, which each module's loading uses. */
const CODE_CACHE_IMPORT = 'const _code_cache_1 = require("./_code-cache");\n';

/**
 * The compiled entry with each re-exported module required on first use.
 *
 * @param js the entry as TypeScript compiles it to CommonJS
 * @returns the rewritten entry; `js` itself when it requires no module at its top (rewritten already)
 */
export function lazyEntry(js: string): string {
  let modules = 0;
  const out = js.replace(/^var (\w+) = require\(("\.[^"]+")\);$/gm, (_, variable: string, module: string) => {
    modules++;
    return `var ${variable} = lazyModule(${module});`;
  });
  if (modules === 0) return js;
  if (!out.includes(CODE_CACHE_IMPORT)) throw new Error('the entry does not import the code cache (src/_code-cache.ts) as it used to: see src/index.ts');
  const loader = [
    '// Each module loads when one of its names is first read (scripts/lazy-entry.ts), compiled from the code cache.',
    '// The getters below are those TypeScript writes, which Node.js reads to give ES modules their names.',
    'function lazyModule(module) {',
    '    let loaded;',
    '    return new Proxy({}, {',
    '        get(_, name) {',
    '            if (loaded === undefined) {',
    '                const stop = (0, _code_cache_1._compileFromCodeCache)(__filename);',
    '                try {',
    '                    loaded = require(module);',
    '                }',
    '                finally {',
    '                    stop();',
    '                }',
    '            }',
    '            return loaded[name];',
    '        },',
    '    });',
    '}',
    '',
  ].join('\n');
  return out.replace(CODE_CACHE_IMPORT, `${CODE_CACHE_IMPORT}${loader}`);
}

/** Rewrites `lib/src/index.js` when it is there and not rewritten yet. */
export function main(): void {
  if (!fs.existsSync(ENTRY_JS)) return;
  const js = fs.readFileSync(ENTRY_JS, 'utf8');
  const lazy = lazyEntry(js);
  if (lazy !== js) fs.writeFileSync(ENTRY_JS, lazy);
}

if (require.main === module) main();
