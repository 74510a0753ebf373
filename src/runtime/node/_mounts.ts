/**
 * Secret mounts without a container: the runtime process reads files under a mount path (such
 * as `/secret-data/config.json`) from a local folder instead. Node.js's `fs` functions that read
 * by path are redirected; writes and child processes are not (a Secret volume is read-only).
 */
import { syncBuiltinESMExports } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

// The module object itself: `import * as fs` gives a copy with read-only getters once compiled or bundled.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fs: typeof import('node:fs') = require('node:fs');

const READERS = [
  'access', 'accessSync', 'createReadStream', 'exists', 'existsSync', 'lstat', 'lstatSync', 'open', 'openSync', 'opendir', 'opendirSync',
  'readdir', 'readdirSync', 'readFile', 'readFileSync', 'readlink', 'readlinkSync', 'realpath', 'realpathSync', 'stat', 'statSync', 'watch',
] as const;
const PROMISE_READERS = ['access', 'lstat', 'open', 'opendir', 'readdir', 'readFile', 'readlink', 'realpath', 'stat'] as const;

/**
 * The local path of a path under a mount, or the path itself.
 *
 * @param mounts local folders by mount path
 * @param target a path, or a `file:` URL
 */
function mountedPath(mounts: { readonly [mountPath: string]: string }, target: unknown): unknown {
  const file = typeof target === 'string' ? target : target instanceof URL && target.protocol === 'file:' ? fileURLToPath(target) : undefined;
  if (file === undefined || !path.isAbsolute(file)) return target;
  const normalized = path.normalize(file);
  for (const [mountPath, folder] of Object.entries(mounts)) {
    const mount = path.normalize(mountPath).replace(/\/+$/, '');
    if (normalized === mount) return folder;
    if (normalized.startsWith(`${mount}/`)) return path.join(folder, normalized.slice(mount.length + 1));
  }
  return target;
}

/**
 * Redirects reads under the mount paths to their folders, for this process.
 *
 * @param mounts local folders by mount path
 */
export function redirectMounts(mounts: { readonly [mountPath: string]: string }): void {
  if (!Object.keys(mounts).length) return;
  const wrap = (target: any, name: string) => {
    const original = target[name];
    if (typeof original !== 'function') return;
    const wrapped = function (this: unknown, first: unknown, ...rest: unknown[]) {
      return original.call(this, mountedPath(mounts, first), ...rest);
    };
    // realpath.native and the like stay reachable.
    Object.assign(wrapped, original);
    target[name] = wrapped;
  };
  for (const name of READERS) wrap(fs, name);
  for (const name of PROMISE_READERS) wrap(fs.promises, name);
  // ES modules that import { readFileSync } from 'fs' see the wrapped functions too.
  syncBuiltinESMExports();
}
