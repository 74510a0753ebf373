/**
 * src/_code-cache.ts: a bundle loaded with the code cache is the module `require` would give, the
 * cache is written from what it compiled and used by the next load, and a cache that V8 rejects,
 * that others can write to, or that is turned off only means compiling as before. In one process,
 * each load of its own file (test/gitops/synth-loading.test.ts runs the stack's synth twice).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CODE_CACHE_ENV, _codeCacheCounts, _saveCodeCaches, requireBundle } from '../src/_code-cache';

let dir: string;
let loads = 0;
const before = process.env[CODE_CACHE_ENV];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-cache-'));
  Object.assign(_codeCacheCounts, { hits: 0, misses: 0, writes: 0 });
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
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 1, writes: 0 });
  _saveCodeCaches();
  expect(_codeCacheCounts.writes).toBe(1);
  expect(fs.readdirSync(cache)).toEqual([expect.stringMatching(/^bundle-[0-9a-f]{40}\.bin$/)]);
  expect(fs.statSync(cache).mode & 0o077).toBe(0);

  const again = requireBundle(copyOf(file)) as Bundle;
  expect(_codeCacheCounts).toEqual({ hits: 1, misses: 1, writes: 1 });
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
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 2, writes: 1 });
  _saveCodeCaches();
  expect(fs.readFileSync(path.join(cache, name)).equals(Buffer.alloc(4096, 7))).toBe(false);

  // Another content has a cache of its own: the one written is not taken for it.
  const changed = copyOf(copy);
  fs.appendFileSync(changed, '\n// changed\n');
  requireBundle(changed);
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 3, writes: 2 });
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
  expect(_codeCacheCounts).toEqual({ hits: 0, misses: 2, writes: 0 });
});
