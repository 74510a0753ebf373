/**
 * Whether a Node.js handler exports `main` where the 1.11.1 runtime images look for it.
 *
 * The images' server (`server.mjs`) loads the handler with `import()` and calls `main` of the
 * module namespace it gets. For a CommonJS handler, Node.js fills that namespace with the names
 * `cjs-module-lexer` finds in the source, not with what `module.exports` holds at run time: so
 * `exports.main = ...` and `module.exports = { main }` work, while `module.exports = { main: () => ... }`
 * and `module.exports = { async main() {} }` give no `main`, and the Function answers every request
 * with 500 "User function not loaded". An ES module handler needs a named export `main`. We read the
 * source with the same lexers (Node.js's own for CommonJS, `es-module-lexer` for ES modules), so the
 * verdict is the runtime's.
 *
 * @see https://github.com/kyma-project/serverless/blob/1.11.1/components/runtimes/nodejs22/server.mjs
 */
import * as path from 'node:path';
// Types only: the lexers load on first use, so an app without inline Node.js code does not load them.
import type * as CommonJsLexer from 'cjs-module-lexer';
import type * as EsModuleLexer from 'es-module-lexer';

let esModuleLexer: typeof EsModuleLexer | undefined;

type CommonJsParse = typeof CommonJsLexer.parse;
let commonJsLexer: CommonJsParse | undefined;

/**
 * The CommonJS lexer: its WebAssembly build, the one Node.js itself runs, where it loads (a
 * quarter of the time of the JavaScript build per handler, which also allocates 48 KiB of stacks
 * for each, thousands of times in a large app); else the JavaScript build, whose verdicts are the
 * same (a bundle without the package's files, such as the webhook's program, or no WebAssembly).
 */
function lexCommonJs(source: string): ReturnType<CommonJsParse> {
  if (!commonJsLexer) {
    try {
      // The package's exports name only its JavaScript build for require(): the WebAssembly one is its dist/lexer.js.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const wasm = require(path.join(path.dirname(require.resolve('cjs-module-lexer')), 'dist', 'lexer.js')) as { initSync(): void; parse: CommonJsParse };
      wasm.initSync();
      commonJsLexer = wasm.parse;
    } catch {
      // The JavaScript build, then.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      commonJsLexer = (require('cjs-module-lexer') as typeof CommonJsLexer).parse;
    }
  }
  return commonJsLexer!(source);
}

/** What the Node.js runtime sees exported, or `undefined` when the source cannot be read that way. */
function exportsOf(source: string): { readonly names: readonly string[]; readonly esModule: boolean; readonly opaque: boolean } | undefined {
  try {
    const { exports, reexports } = lexCommonJs(source);
    // `module.exports = require(...)`: the names come from another file, which an inline source has not.
    return { names: exports, esModule: false, opaque: reexports.length > 0 };
  } catch {
    // The CommonJS lexer stops at `import` and `export` statements: an ES module, or no JavaScript.
  }
  if (!esModuleLexer) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const lexer = require('es-module-lexer') as typeof EsModuleLexer;
    lexer.initSync();
    esModuleLexer = lexer;
  }
  try {
    const [, exports, , hasModuleSyntax] = esModuleLexer.parse(source);
    // Neither lexer reads it as a module of its kind: not ours to judge (the build will say).
    if (!hasModuleSyntax) return undefined;
    return { names: exports.map(e => e.n), esModule: true, opaque: false };
  } catch {
    return undefined;
  }
}

/**
 * Why the Node.js runtime would not find `main` in a handler, if it would not.
 *
 * @param source the handler (`handler.js`)
 * @returns the problem, or `undefined` when `main` is found, or
 * the source gives no answer (it cannot be parsed, or takes its exports from another module)
 */
export function nodeHandlerProblem(source: string): string | undefined {
  const found = exportsOf(source);
  if (!found || found.opaque || found.names.includes('main')) return undefined;
  if (found.esModule) {
    return `the handler has no named export main, which the Node.js runtime calls${found.names.includes('default') ? ' (a default export is not called)' : ''}, `
      + 'and every request gets 500 "User function not loaded"';
  }
  return 'the Node.js runtime loads the handler with import(), which sees only exports written as `exports.main = ...`, `module.exports.main = ...` '
    + 'or `module.exports = { main }`: `module.exports = { main: () => ... }` or `{ async main() {} }` give it no main, and every request '
    + 'gets 500 "User function not loaded"';
}
