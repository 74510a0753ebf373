/**
 * Loads the package's code with a V8 code cache, as `v8-compile-cache` does for TypeScript under
 * ts-node: the bundle of schema classes (`lib/models/kubernetes-models.js`), and the modules of
 * `lib/` that the construct entry loads.
 *
 * Why: the stack's synth checks every object against its schema with the bundled classes, and most
 * of that check's cost was V8 compiling the bundle and then, at the first use of each kind, its
 * validators (about 60 ms of a 100 ms synth); loading the entry's 120 modules was half compiling.
 * The code V8 compiled is saved once, after use (when the process exits), and the next process
 * takes it from the cache instead of compiling it again. The cache holds compiled code only: the
 * same source runs, so every check gives the same answer, and a missing, foreign or rejected cache
 * only means compiling as before.
 *
 * The cache is a folder of the user's own in the temporary folder (`os.tmpdir()`), created by the
 * first run: one file per bundle content and Node.js version, and one per installed `lib/` folder
 * and Node.js version that holds each module's code by its content. {@link CODE_CACHE_ENV} turns
 * it off or puts it elsewhere.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { Module } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

/**
 * The environment variable that sets where the code cache of the package's code is kept: `off`
 * for none, or a folder. Unset, it is a folder of the user's own in the temporary folder.
 */
export const CODE_CACHE_ENV = 'KYMA_SERVERLESS_CODE_CACHE';

/** What the loads of this process did with the cache, for tests. */
export interface CodeCacheCounts {
  /** Bundles compiled from the code cache. */
  hits: number;
  /** Bundles compiled without it (no cache yet, none wanted, or one V8 rejected). */
  misses: number;
  /** Modules of `lib/` compiled from the code cache while the entry loaded. */
  moduleHits: number;
  /** Modules of `lib/` compiled without it while the entry loaded. */
  moduleMisses: number;
  /** Cache files written at exit. */
  writes: number;
}

/** @internal */
export const _codeCacheCounts: CodeCacheCounts = { hits: 0, misses: 0, moduleHits: 0, moduleMisses: 0, writes: 0 };

/** The folder of the cache; undefined when there is none to use. */
function cacheFolder(): string | undefined {
  const setting = process.env[CODE_CACHE_ENV];
  if (setting === 'off') return undefined;
  const folder = setting || path.join(os.tmpdir(), `cdk8s-kyma-serverless-code-cache-${process.getuid?.() ?? 'user'}`);
  try {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    // Compiled code from a folder another user can write to would run as ours: use only our own.
    const stat = fs.statSync(folder);
    if (!stat.isDirectory() || (process.getuid && (stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0))) return undefined;
    return folder;
  } catch {
    return undefined;
  }
}

/** The modules loaded by {@link requireBundle}, by file (also in `require.cache`, unless a test runner keeps its own). */
const loaded = new Map<string, Module>();

/** The cache files to write when the process exits, each with what makes its content: the scripts have compiled what they ran by then. */
const pending = new Map<string, () => Buffer>();

/** Adds a cache file to write at exit. */
function writeAtExit(file: string, content: () => Buffer): void {
  if (pending.size === 0) process.once('exit', _saveCodeCaches);
  pending.set(file, content);
}

/**
 * Writes the caches of the bundles compiled without one, with the code they compiled so far; the
 * process does this when it exits.
 *
 * @internal
 */
export function _saveCodeCaches(): void {
  for (const [file, content] of pending) {
    try {
      const temporary = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, content(), { mode: 0o600 });
      fs.renameSync(temporary, file);
      _codeCacheCounts.writes++;
    } catch {
      // A cache that cannot be written costs only compiling again next time.
    }
  }
  pending.clear();
  // What was read of the files is older than what was just written: the next load reads them again.
  libCaches.clear();
}

/**
 * Requires a CommonJS file of the package, as `require` would, but compiled with the code cache
 * when there is one. The module goes into `require.cache`, so a later `require` of the file gets
 * it, and a file that `require` loaded before is not loaded again.
 *
 * @param file the file's absolute path
 */
export function requireBundle(file: string): unknown {
  const cached = loaded.get(file) ?? require.cache[file];
  if (cached?.loaded) return cached.exports;
  const source = fs.readFileSync(file, 'utf8');
  const folder = cacheFolder();
  const key = crypto.createHash('sha1').update(source).update(`\0${process.version}\0${process.arch}`).digest('hex');
  const cacheFile = folder && path.join(folder, `${path.basename(file, '.js')}-${key}.bin`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = cacheFile ? fs.readFileSync(cacheFile) : undefined;
  } catch {
    // None yet.
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  if (cachedData && !script.cachedDataRejected) {
    _codeCacheCounts.hits++;
  } else {
    _codeCacheCounts.misses++;
    if (cacheFile) writeAtExit(cacheFile, () => script.createCachedData());
  }
  const module = new Module(file);
  module.filename = file;
  module.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
  const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file));
  module.loaded = true;
  loaded.set(file, module);
  require.cache[file] = module;
  return module.exports;
}

/** The code of modules in one cache file: a JSON index of `[file, content hash, start, end]`, its length before it (4 bytes), the code after it. */
function readModuleCache(file: string): Map<string, { key: string; data: Buffer }> {
  const modules = new Map<string, { key: string; data: Buffer }>();
  try {
    const content = fs.readFileSync(file);
    const length = content.readUInt32LE(0);
    const index = JSON.parse(content.subarray(4, 4 + length).toString('utf8')) as [string, string, number, number][];
    const code = content.subarray(4 + length);
    for (const [name, key, start, end] of index) modules.set(name, { key, data: code.subarray(start, end) });
  } catch {
    // None yet, or not one of ours: the modules compile as without a cache.
  }
  return modules;
}

/**
 * The content of a cache file: the code of the modules this process compiled, and that read from
 * the file of those it did not load (the construct entry and the command line load different
 * modules of one `lib/` folder, and each keeps the other's).
 */
function writeModuleCache(cached: ReadonlyMap<string, { key: string; data: Buffer }>, scripts: ReadonlyMap<string, { key: string; script: vm.Script }>): Buffer {
  const index: [string, string, number, number][] = [];
  const code: Buffer[] = [];
  let offset = 0;
  const add = (name: string, key: string, data: Buffer) => {
    index.push([name, key, offset, offset + data.length]);
    code.push(data);
    offset += data.length;
  };
  for (const [name, { key, script }] of scripts) add(name, key, script.createCachedData());
  for (const [name, { key, data }] of cached) if (!scripts.has(name)) add(name, key, data);
  const json = Buffer.from(JSON.stringify(index), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  return Buffer.concat([length, json, ...code]);
}

/**
 * `Module.prototype._compile`. Node.js 20.19 and later pass a third argument, the format it found
 * for the file (`'module'` for an ES module that `require` loads, such as a `.js` file of a
 * package of `"type": "module"`), and compile such a file as an ES module.
 */
type Compile = (this: Module, content: string, filename: string, format?: string) => unknown;

/** What the path of a package's file holds. */
const NODE_MODULES = `${path.sep}node_modules${path.sep}`;

/** Options of {@link _compileFromCodeCache}. */
export interface CompileFromCodeCacheOptions {
  /**
   * Compile the `.js` files of packages (in a `node_modules` folder) from the cache too, by their
   * path: for the command line, whose process is its own, and which loads commander and the parsers of handlers.
   *
   * @default false
   */
  readonly dependencies?: boolean;
}

/**
 * Compiles the modules of this package's `lib/` folder that load from now until the returned
 * function is called with the code cache, as `v8-compile-cache` does: `Module.prototype._compile`
 * is replaced for that time, for the `.js` files of that folder only (and with `dependencies`,
 * those of packages). The construct entry calls it around each module it loads (see
 * scripts/lazy-entry.ts), the command line once for its whole process (bin/kyma-serverless.js);
 * the cache file is read once per process. A module compiled so that loads another later, on first
 * use (synth's checks of a Function: the compiled schema check, the CEL rules), compiles that one
 * from the cache too. Outside an installed or built package (`entry` not in `lib/src/`), it does nothing.
 *
 * @param entry the entry module's file (`__filename`)
 * @returns what stops it; a compile step that someone replaced meanwhile is left in place
 * @internal
 */
export function _compileFromCodeCache(entry: string, options: CompileFromCodeCacheOptions = {}): () => void {
  const lib = path.dirname(path.dirname(entry));
  const folder = path.basename(lib) === 'lib' && path.basename(path.dirname(entry)) === 'src' ? cacheFolder() : undefined;
  if (!folder) return () => undefined;
  return compileFromLibCache(lib, libCache(folder, lib), options);
}

/** {@link _compileFromCodeCache} of a `lib/` folder whose cache is read. */
function compileFromLibCache(lib: string, cache: LibCache, options: CompileFromCodeCacheOptions): () => void {
  const { cacheFile, cached, compiled } = cache;
  const prototype = Module.prototype as unknown as { _compile: Compile };
  const original = prototype._compile;
  const within = lib + path.sep;
  const compile: Compile = function (this: Module, content, filename, format) {
    const own = filename.startsWith(within);
    // A package's file by its path; one that starts with `#!` (a program's) compiles as Node.js compiles it.
    const dependency = !own && options.dependencies === true && filename.includes(NODE_MODULES) && !content.startsWith('#!');
    // Only CommonJS is compiled here: an ES module that `require` loads goes to Node.js with its format.
    const commonJs = format === undefined || format === 'commonjs';
    if ((!own && !dependency) || !filename.endsWith('.js') || !commonJs) return original.call(this, content, filename, format);
    const name = own ? filename.slice(within.length) : filename;
    const key = crypto.createHash('sha1').update(content).digest('hex');
    const previous = cached.get(name);
    const cachedData = previous?.key === key ? previous.data : undefined;
    let script: vm.Script;
    try {
      script = new vm.Script(Module.wrap(content), { filename, cachedData });
    } catch (e) {
      // A package's file that is not CommonJS after all (ES module syntax Node.js tells apart from
      // the file itself): compiled as Node.js compiles it, which says what is wrong if anything is.
      if (dependency && e instanceof SyntaxError) return original.call(this, content, filename, format);
      throw e;
    }
    if (cachedData && !script.cachedDataRejected) {
      _codeCacheCounts.moduleHits++;
    } else {
      _codeCacheCounts.moduleMisses++;
      writeAtExit(cacheFile, () => writeModuleCache(cached, compiled));
    }
    compiled.set(name, { key, script });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireOf(this, load), this, filename, path.dirname(filename));
  };
  // What a module compiled here loads once this compile step is gone (on first use) compiles from the cache too.
  const load = (module: Module, id: string): unknown => {
    if (prototype._compile === compile) return module.require(id);
    const stop = compileFromLibCache(lib, cache, options);
    try {
      return module.require(id);
    } finally {
      stop();
    }
  };
  prototype._compile = compile;
  return () => {
    if (prototype._compile === compile) prototype._compile = original;
  };
}

/** The cache of one `lib/` folder: its file, the code read from it, and the modules compiled since. */
interface LibCache {
  readonly cacheFile: string;
  readonly cached: Map<string, { key: string; data: Buffer }>;
  readonly compiled: Map<string, { key: string; script: vm.Script }>;
}

/** The caches of the `lib/` folders loaded so far, by cache file: read once, though the entry loads its modules in several steps. */
const libCaches = new Map<string, LibCache>();

function libCache(folder: string, lib: string): LibCache {
  const cacheFile = path.join(folder, `lib-${crypto.createHash('sha1').update(`${lib}\0${process.version}\0${process.arch}`).digest('hex')}.bin`);
  let cache = libCaches.get(cacheFile);
  if (!cache) libCaches.set(cacheFile, cache = { cacheFile, cached: readModuleCache(cacheFile), compiled: new Map() });
  return cache;
}

/** What `require` is inside a module, as Node.js makes it, loading with `load`. */
function requireOf(module: Module, load: (module: Module, id: string) => unknown): NodeJS.Require {
  const internals = Module as unknown as {
    _resolveFilename(request: string, parent: Module, isMain: boolean, options?: { paths?: string[] }): string;
    _resolveLookupPaths(request: string, parent: Module): string[] | null;
    _extensions: NodeJS.RequireExtensions;
    _cache: NodeJS.Dict<NodeJS.Module>;
  };
  const require = ((id: string) => load(module, id)) as NodeJS.Require;
  const resolve = ((request: string, options?: { paths?: string[] }) => internals._resolveFilename(request, module, false, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => internals._resolveLookupPaths(request, module);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = internals._extensions;
  require.cache = internals._cache;
  return require;
}
