/**
 * src/_code-cache.ts: a bundle loaded with the code cache is the module `require` would give, the
 * cache is written from what it compiled and used by the next load, and a cache that V8 rejects,
 * that others can write to, or that is turned off only means compiling as before. In one process,
 * each load of its own file (test/gitops/synth-loading.test.ts runs the stack's synth twice). The
 * modules of a `lib/` folder compile from one cache file while an entry loads them.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CODE_CACHE_ENV, _codeCacheCounts, _compileFromCodeCache, _saveCodeCaches, requireBundle } from '../src/_code-cache';

/** Loads the sources with ts-node and SWC, as bin/kyma-serverless.js does. */
const SWC = path.join(__dirname, 'util', 'ts-node-swc.js');

let dir: string;
let loads = 0;
const before = process.env[CODE_CACHE_ENV];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-cache-'));
  Object.assign(_codeCacheCounts, { hits: 0, misses: 0, moduleHits: 0, moduleMisses: 0, writes: 0 });
});
afterEach(() => {
  if (before === undefined) delete process.env[CODE_CACHE_ENV];
  else process.env[CODE_CACHE_ENV] = before;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A path `bundle.js` in a new folder each time (a loaded module is taken from `require.cache`). */
function newPath(): string {
  const folder = path.join(dir, String(loads++));
  fs.mkdirSync(folder);
  return path.join(folder, 'bundle.js');
}

/** A small CommonJS module. */
function bundleFile(): string {
  const file = newPath();
  fs.writeFileSync(file, [
    "const path = require('node:path');",
    'exports.name = path.basename(__filename);',
    'exports.kinds = () => [1, 2, 3].map(n => ({ n, square: n * n }));',
    'exports.self = () => module.exports === exports;',
  ].join('\n'));
  return file;
}

/** The same module in another folder: a new module for `require.cache`, the same for the code cache (by name and content). */
function copyOf(file: string): string {
  const copy = newPath();
  fs.copyFileSync(file, copy);
  return copy;
}

type Bundle = { name: string; kinds(): unknown; self(): boolean };

test('loads a module as require does, once', () => {
  process.env[CODE_CACHE_ENV] = 'off';
  const file = bundleFile();
  const loaded = requireBundle(file) as Bundle;
  expect(loaded.name).toBe(path.basename(file));
  expect(loaded.kinds()).toEqual([{ n: 1, square: 1 }, { n: 2, square: 4 }, { n: 3, square: 9 }]);
  expect(loaded.self()).toBe(true);
  expect(requireBundle(file)).toBe(loaded);
});

test('writes the cache after use, and the next load compiles from it', () => {
  const cache = path.join(dir, 'cache');
  process.env[CODE_CACHE_ENV] = cache;
  const file = bundleFile();
  (requireBundle(file) as Bundle).kinds();
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 1, moduleHits: 0, moduleMisses: 0, writes: 0 });
  _saveCodeCaches();
  expect(_codeCacheCounts.writes).toBe(1);
  expect(fs.readdirSync(cache)).toEqual([expect.stringMatching(/^bundle-[0-9a-f]{40}\.bin$/)]);
  expect(fs.statSync(cache).mode & 0o077).toBe(0);

  const again = requireBundle(copyOf(file)) as Bundle;
  expect(_codeCacheCounts).toEqual({ hits: 1, misses: 1, moduleHits: 0, moduleMisses: 0, writes: 1 });
  expect(again.kinds()).toEqual([{ n: 1, square: 1 }, { n: 2, square: 4 }, { n: 3, square: 9 }]);
});

test('a cache of another content is not taken; a rejected one is compiled around and written again', () => {
  const cache = path.join(dir, 'cache');
  process.env[CODE_CACHE_ENV] = cache;
  const file = bundleFile();
  requireBundle(file);
  _saveCodeCaches();
  const [name] = fs.readdirSync(cache);
  fs.writeFileSync(path.join(cache, name), Buffer.alloc(4096, 7));
  const copy = copyOf(file);
  // The copy finds the garbage under its name and content, which V8 rejects.
  const loaded = requireBundle(copy) as Bundle;
  expect(loaded.kinds()).toEqual([{ n: 1, square: 1 }, { n: 2, square: 4 }, { n: 3, square: 9 }]);
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 2, moduleHits: 0, moduleMisses: 0, writes: 1 });
  _saveCodeCaches();
  expect(fs.readFileSync(path.join(cache, name)).equals(Buffer.alloc(4096, 7))).toBe(false);

  // Another content has a cache of its own: the one written is not taken for it.
  const changed = copyOf(copy);
  fs.appendFileSync(changed, '\n// changed\n');
  requireBundle(changed);
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 3, moduleHits: 0, moduleMisses: 0, writes: 2 });
  _saveCodeCaches();
  expect(fs.readdirSync(cache)).toHaveLength(2);
});

test('a cache folder others can write to is not used, nor one turned off', () => {
  const cache = path.join(dir, 'cache');
  fs.mkdirSync(cache, { mode: 0o700 });
  fs.chmodSync(cache, 0o777);
  process.env[CODE_CACHE_ENV] = cache;
  requireBundle(bundleFile());
  _saveCodeCaches();
  expect(fs.readdirSync(cache)).toEqual([]);

  process.env[CODE_CACHE_ENV] = 'off';
  requireBundle(bundleFile());
  _saveCodeCaches();
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 2, moduleHits: 0, moduleMisses: 0, writes: 0 });
});

describe('the modules of lib/ while the entry loads', () => {
  /**
   * A package with `lib/src/index.js`, a module of `lib/src/` that needs one of `lib/imports/`, and
   * a file outside `lib/`, loaded in a new process by Node.js's own loader (a test runner's does
   * not compile through `Module.prototype._compile`): each step's result and the counts after it.
   */
  function run(steps: string): unknown[] {
    const root = path.join(dir, 'package');
    fs.mkdirSync(path.join(root, 'lib', 'src'), { recursive: true });
    fs.mkdirSync(path.join(root, 'lib', 'imports'), { recursive: true });
    fs.writeFileSync(path.join(root, 'lib', 'src', 'index.js'), '');
    fs.writeFileSync(path.join(root, 'lib', 'src', 'a.js'), [
      "const b = require('../imports/b');",
      'exports.answer = () => b.value * 2;',
      "exports.file = require('node:path').relative(" + JSON.stringify(root) + ", __filename);",
      "exports.resolved = require('node:path').relative(" + JSON.stringify(root) + ", require.resolve('../imports/b'));",
      "exports.outside = require('../../outside').name;",
      "exports.later = () => require('./later').value;",
    ].join('\n'));
    fs.writeFileSync(path.join(root, 'lib', 'src', 'later.js'), 'exports.value = "later";');
    fs.writeFileSync(path.join(root, 'lib', 'imports', 'b.js'), 'exports.value = 21;');
    fs.writeFileSync(path.join(root, 'outside.js'), 'exports.name = "outside";');
    fs.mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
    fs.writeFileSync(path.join(root, 'node_modules', 'dep', 'index.js'), "exports.value = require('./more').value + 1;");
    fs.writeFileSync(path.join(root, 'node_modules', 'dep', 'more.js'), 'exports.value = 41;');
    fs.writeFileSync(path.join(root, 'node_modules', 'dep', 'cli.js'), '#!/usr/bin/env node\nexports.value = "cli";');
    const script = `
      const Module = require('node:module');
      const path = require('node:path');
      const { _codeCacheCounts, _compileFromCodeCache, _saveCodeCaches } = require('./src/_code-cache');
      const root = ${JSON.stringify(root)};
      const entry = path.join(root, 'lib', 'src', 'index.js');
      const files = [path.join(root, 'lib', 'src', 'a.js'), path.join(root, 'lib', 'imports', 'b.js'), path.join(root, 'outside.js')];
      const dependency = ['index.js', 'more.js', 'cli.js'].map(file => path.join(root, 'node_modules', 'dep', file));
      const loadDependency = () => {
        for (const file of dependency) delete require.cache[file];
        return [require(dependency[0]).value, require(dependency[2]).value];
      };
      const load = () => {
        for (const file of files) delete require.cache[file];
        const { answer, ...rest } = require(files[0]);
        return { answer: answer(), ...rest };
      };
      const results = [];
      const step = result => results.push({ result, counts: { ..._codeCacheCounts } });
      ${steps}
      console.log(JSON.stringify(results));`;
    const result = spawnSync(process.execPath, ['-r', SWC, '-e', script], {
      cwd: path.resolve(__dirname, '..'), encoding: 'utf8', env: { ...process.env, [CODE_CACHE_ENV]: path.join(dir, 'cache') },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    return JSON.parse(result.stdout) as unknown[];
  }
  const counts = (moduleHits: number, moduleMisses: number, writes: number) => ({ hits: 0, misses: 0, moduleHits, moduleMisses, writes });
  const loaded = (value: number) => ({ answer: value * 2, file: path.join('lib', 'src', 'a.js'), resolved: path.join('lib', 'imports', 'b.js'), outside: 'outside' });

  test('compile from the cache the first load wrote, and run as without it', () => {
    const results = run(`
      const compile = Module.prototype._compile;
      let stop = _compileFromCodeCache(entry);
      const replaced = Module.prototype._compile !== compile;
      step({ loaded: load(), replaced });
      stop();
      step(Module.prototype._compile === compile);
      _saveCodeCaches();
      step(require('node:fs').readdirSync(process.env.${CODE_CACHE_ENV}));
      stop = _compileFromCodeCache(entry);
      step(load());
      stop();
      require('node:fs').writeFileSync(files[1], 'exports.value = 20;');
      stop = _compileFromCodeCache(entry);
      step(load());
      stop();
      _saveCodeCaches();
      step(null);`);
    expect(results).toEqual([
      // The file outside lib/ compiles as usual, uncounted.
      { result: { loaded: loaded(21), replaced: true }, counts: counts(0, 2, 0) },
      { result: true, counts: counts(0, 2, 0) },
      { result: [expect.stringMatching(/^lib-[0-9a-f]{40}\.bin$/)], counts: counts(0, 2, 1) },
      { result: loaded(21), counts: counts(2, 2, 1) },
      // A module whose content changed compiles anew, and the cache is written again.
      { result: loaded(20), counts: counts(3, 3, 1) },
      { result: null, counts: counts(3, 3, 2) },
    ]);
  }, 60_000);

  test('compiles what a module of lib/ loads later, on first use, from the cache too', () => {
    const results = run(`
      const compile = Module.prototype._compile;
      const later = path.join(root, 'lib', 'src', 'later.js');
      for (let i = 0; i < 2; i++) {
        for (const file of [...files, later]) delete require.cache[file];
        const stop = _compileFromCodeCache(entry);
        const a = require(files[0]);
        stop();
        step([a.later(), Module.prototype._compile === compile]);
        _saveCodeCaches();
      }`);
    // The compile step is in place for that load only; the next process takes all three modules from the cache.
    expect(results).toEqual([
      { result: ['later', true], counts: counts(0, 3, 0) },
      { result: ['later', true], counts: counts(3, 3, 1) },
    ]);
  }, 60_000);

  test('compiles the files of packages from the cache too when asked, and keeps what another entry\'s load wrote', () => {
    const results = run(`
      let stop = _compileFromCodeCache(entry);
      step(loadDependency());
      stop();
      stop = _compileFromCodeCache(entry, { dependencies: true });
      step(loadDependency());
      stop();
      _saveCodeCaches();
      // The construct entry loads the package's modules only: the cache it writes keeps the packages' files.
      stop = _compileFromCodeCache(entry);
      step(load());
      stop();
      _saveCodeCaches();
      stop = _compileFromCodeCache(entry, { dependencies: true });
      step([loadDependency(), load()]);
      stop();
      _saveCodeCaches();
      step(null);`);
    expect(results).toEqual([
      // Without the option a package's files compile as usual, uncounted; with it, but for a program's file (\`#!\`).
      { result: [42, 'cli'], counts: counts(0, 0, 0) },
      { result: [42, 'cli'], counts: counts(0, 2, 0) },
      { result: loaded(21), counts: counts(0, 4, 1) },
      // Both from the cache: nothing missed, nothing written.
      { result: [[42, 'cli'], loaded(21)], counts: counts(4, 4, 2) },
      { result: null, counts: counts(4, 4, 2) },
    ]);
  }, 60_000);

  test('leaves an ES module of a package that require loads to Node.js, which compiles it with its format', () => {
    // @kubernetes/client-node's files are ES modules (its package is of "type": "module"), which
    // Node.js 20.19 and later load with require: compiled as CommonJS, `export` is a syntax error.
    const root = path.join(dir, 'package');
    fs.mkdirSync(path.join(root, 'node_modules', 'esm'), { recursive: true });
    fs.writeFileSync(path.join(root, 'node_modules', 'esm', 'package.json'), '{ "name": "esm", "type": "module" }');
    fs.writeFileSync(path.join(root, 'node_modules', 'esm', 'index.js'), 'export const value = 7;\n');
    const results = run(`
      const file = path.join(root, 'node_modules', 'esm', 'index.js');
      const stop = _compileFromCodeCache(entry, { dependencies: true });
      step([require(file).value, loadDependency()]);
      stop();`);
    // The package's CommonJS files compile from the cache as before; the ES module is not counted.
    expect(results).toEqual([{ result: [7, [42, 'cli']], counts: counts(0, 2, 0) }]);
  }, 60_000);

  test('leaves a compile step someone replaced meanwhile, and does nothing outside lib/src/ or when off', () => {
    const results = run(`
      const compile = Module.prototype._compile;
      const stop = _compileFromCodeCache(entry);
      const theirs = function (...args) { return compile.apply(this, args); };
      Module.prototype._compile = theirs;
      stop();
      step(Module.prototype._compile === theirs);
      Module.prototype._compile = compile;
      _compileFromCodeCache(path.join(root, 'src', 'index.js'));
      _compileFromCodeCache(path.join(root, 'lib', 'index.js'));
      process.env.${CODE_CACHE_ENV} = 'off';
      _compileFromCodeCache(entry);
      step(Module.prototype._compile === compile);
      step(load());`);
    expect(results).toEqual([
      { result: true, counts: counts(0, 0, 0) },
      { result: true, counts: counts(0, 0, 0) },
      { result: loaded(21), counts: counts(0, 0, 0) },
    ]);
  }, 60_000);
});
