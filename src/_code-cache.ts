/**
 * Loads the bundles the package ships (`lib/models/kubernetes-models.js`, `lib/cel/cel.js`) with a
 * V8 code cache, as `v8-compile-cache` does for TypeScript under ts-node.
 *
 * Why: the stack's synth checks every object against its schema with the bundled classes, and most
 * of that check's cost was V8 compiling the bundle and then, at the first use of each kind, its
 * validators (about 60 ms of a 100 ms synth). The code V8 compiled is saved once, after use (when
 * the process exits), and the next process takes it from the cache instead of compiling it again.
 * The cache holds compiled code only: the same source runs, so every check gives the same answer,
 * and a missing, foreign or rejected cache only means compiling as before.
 *
 * The cache is a folder of the user's own in the temporary folder (`os.tmpdir()`), created by the
 * first run, one file per bundle content and Node.js version. {@link CODE_CACHE_ENV} turns it off
 * or puts it elsewhere.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

/**
 * The environment variable that sets where the code cache of the package's bundles is kept: `off`
 * for none, or a folder. Unset, it is a folder of the user's own in the temporary folder.
 */
export const CODE_CACHE_ENV = 'KYMA_SERVERLESS_CODE_CACHE';

/** What the loads of this process did with the cache, for tests. */
export interface CodeCacheCounts {
  /** Bundles compiled from the code cache. */
  hits: number;
  /** Bundles compiled without it (no cache yet, none wanted, or one V8 rejected). */
  misses: number;
  /** Caches written at exit. */
  writes: number;
}

/** @internal */
export const _codeCacheCounts: CodeCacheCounts = { hits: 0, misses: 0, writes: 0 };

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

/** The cache files to write when the process exits: the scripts have compiled what they ran by then. */
const pending = new Map<string, vm.Script>();

/**
 * Writes the caches of the bundles compiled without one, with the code they compiled so far; the
 * process does this when it exits.
 *
 * @internal
 */
export function _saveCodeCaches(): void {
  for (const [file, script] of pending) {
    try {
      const temporary = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(temporary, file);
      _codeCacheCounts.writes++;
    } catch {
      // A cache that cannot be written costs only compiling again next time.
    }
  }
  pending.clear();
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
    if (cacheFile) {
      if (pending.size === 0) process.once('exit', _saveCodeCaches);
      pending.set(cacheFile, script);
    }
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
