import * as fs from 'node:fs';
import * as path from 'node:path';

let root: string | undefined;

/**
 * The folder of this package's package.json: above `src/…` in a checkout, above `lib/src/…` when
 * installed. Found once per process.
 *
 * @throws when no package.json of cdk8s-kyma-serverless is above this module
 */
export function packageRoot(): string {
  if (root) return root;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === 'cdk8s-kyma-serverless') return (root = dir);
    if (path.dirname(dir) === dir) throw new Error(`Cannot find the package.json of cdk8s-kyma-serverless above ${__dirname}`);
  }
}

/** The version of this package, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
