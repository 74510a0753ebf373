/**
 * The Function folders `kyma-serverless run` serves on this machine, so that `invoke <folder>`
 * finds the URL of a running one: one small file per folder in the cache folder, removed when the
 * run ends (and ignored when its process is gone).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultCacheDirectory } from '../runtime/dependencies';

/** A running `kyma-serverless run`. */
export interface RunRecord {
  /** The Function folder, resolved. */
  readonly folder: string;
  /** Where it answers. */
  readonly url: string;
  /** The process of the run. */
  readonly pid: number;
}

function recordFile(folder: string, cacheDirectory: string): string {
  const resolved = fs.existsSync(folder) ? fs.realpathSync(folder) : path.resolve(folder);
  return path.join(cacheDirectory, 'runs', `${createHash('sha256').update(resolved).digest('hex').slice(0, 24)}.json`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Records that a folder answers at a URL.
 *
 * @returns a function that removes the record
 */
export function registerRun(folder: string, url: string, cacheDirectory = defaultCacheDirectory()): () => void {
  const file = recordFile(folder, cacheDirectory);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const record: RunRecord = { folder: fs.realpathSync(folder), url, pid: process.pid };
  fs.writeFileSync(file, `${JSON.stringify(record)}\n`);
  return () => {
    try {
      const current = JSON.parse(fs.readFileSync(file, 'utf8')) as RunRecord;
      if (current.pid === process.pid) fs.rmSync(file, { force: true });
    } catch {
      // Already gone.
    }
  };
}

/** The run of a folder, when one is running. */
export function findRun(folder: string, cacheDirectory = defaultCacheDirectory()): RunRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(recordFile(folder, cacheDirectory), 'utf8')) as RunRecord;
    return isAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}
