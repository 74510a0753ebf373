import * as path from 'node:path';

/** A path as messages show it: relative to the working directory when it is below it. */
export function displayPath(p: string): string {
  const relative = path.relative(process.cwd(), p);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : p;
}
