/**
 * Helpers of the tests that run Functions on this machine: function folders written for the
 * test, upstream's sample Functions, and waiting for a line of a Function's log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionObject, LogLine } from '../../src/runtime/local-function';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from './fixtures';

/** Writes a Function folder (file name → content), named as the Function, in a new temporary folder. */
export function functionFolder(files: { readonly [name: string]: string }, name = 'fn'): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'local-function-test-')), name);
  fs.mkdirSync(dir);
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

/** A Function of one of upstream's sample files (shared/reference), or undefined when the reference data is not there. */
export function upstreamSample(file: string, name: string): FunctionObject | undefined {
  if (!HAS_UPSTREAM_REFERENCE) return undefined;
  const fn = loadYamlDocuments(path.join(UPSTREAM_REFERENCE, file)).find(d => d.kind === 'Function' && d.metadata.name === name);
  if (!fn) throw new Error(`${file} has no Function ${name}`);
  return fn as FunctionObject;
}

/** A source of one Function object, for LocalFunction.startFrom. */
export function objectSource(object: FunctionObject) {
  return { description: `Function ${object.metadata.name}`, watched: [], read: async () => object };
}

/**
 * A log receiver, and a way to wait for a line: the promise settles when a line matching the
 * pattern arrives.
 */
export function logWaiter(): { readonly log: (line: LogLine) => void; next(pattern: RegExp): Promise<LogLine> } {
  const waiting: Array<{ pattern: RegExp; resolve: (line: LogLine) => void }> = [];
  return {
    log: line => {
      for (const w of waiting.filter(x => x.pattern.test(line.text))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(line);
      }
    },
    next: pattern => new Promise(resolve => {
      waiting.push({ pattern, resolve });
    }),
  };
}
