/**
 * What the package needs at run time is declared: every module the library imports is a Node.js
 * built-in, a dependency or a peer dependency (never a dev dependency, which users do not get),
 * and the files its package.json names are the ones the build writes. The packed package itself
 * is tried in a user's app by test/e2e/package.e2e.ts.
 */
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** The package each non-relative import of a source file names. */
function importedPackages(file: string, resolved = false): string[] {
  const text = fs.readFileSync(file, 'utf8');
  // A package whose files are found with require.resolve() (loaded by path, in a worker or a child process) is used too.
  if (resolved) return [...importedPackages(file), ...[...text.matchAll(/\brequire\.resolve\(\s*'([^'.][^']*)'/g)].map(m => m[1].split('/')[0])];
  const specifiers = [...text.matchAll(/(?:^import[^'"]*?from\s+|^export[^'"]*?from\s+|\brequire\(|\bimport\()\s*'([^'.][^']*)'/gm)]
    .filter(m => !/^import type /.test(m[0]) && !/^export type /.test(m[0]))
    .map(m => m[1]);
  return specifiers.map(s => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
}

describe('package.json', () => {
  const sources = fs.readdirSync(path.join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter(e => e.isFile() && e.name.endsWith('.ts'))
    .map(e => path.join(e.parentPath, e.name));
  const runtime = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);

  test('declares every package the library imports as a dependency or peer dependency', () => {
    const undeclared = sources.flatMap(file => importedPackages(file)
      .filter(name => !name.startsWith('node:') && !builtinModules.includes(name) && !runtime.has(name))
      .map(name => `${path.relative(ROOT, file)}: ${name}`));
    expect(undeclared).toEqual([]);
    expect(sources.length).toBeGreaterThan(50);
  });

  test('keeps cdk8s, cdk8s-plus-27 and constructs as peer dependencies: one copy in a user\'s app', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['cdk8s', 'cdk8s-plus-27', 'constructs']);
    for (const name of Object.keys(pkg.peerDependencies)) expect(pkg.dependencies[name]).toBeUndefined();
  });

  test('declares no dependency the library does not import', () => {
    const used = new Set(sources.flatMap(file => importedPackages(file, true)));
    // kubernetes-models is loaded by path, one module per kind (src/policy/manifests.ts).
    used.add('kubernetes-models');
    expect(Object.keys(pkg.dependencies).filter(name => !used.has(name))).toEqual([]);
  });

  test('packs the compiled library, its types, the webhook and model bundles, the command, the sub-path entries, the CRD and the docs, built before packing', () => {
    // docs/: every install holds the documentation the alerts and the command line name (the runbooks: docs/monitoring.md).
    expect(pkg.files).toEqual(['bin', 'api', 'testing', 'lib/src', 'lib/imports', 'lib/webhook/server.js.br', 'lib/models', 'lib/cel', 'crds', 'docs']);
    expect(pkg.main).toBe('lib/src/index.js');
    expect(pkg.types).toBe('lib/src/index.d.ts');
    expect(pkg.bin).toEqual({ 'kyma-serverless': 'bin/kyma-serverless.js' });
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.scripts.build).toMatch(/tsc -p tsconfig\.build\.json && npm run bundle/);
  });

  test('the tarball npm pack writes into the checkout (as the README starts an app) is no untracked file', () => {
    const tarball = `${pkg.name}-${pkg.version}.tgz`;
    const ignored = spawnSync('git', ['check-ignore', tarball], { cwd: ROOT, encoding: 'utf8' });
    expect(`${ignored.status} ${ignored.stdout}`).toBe(`0 ${tarball}\n`);
  });

  test('exports exactly the entries of the API report, each to its compiled module and its types', () => {
    const { ENTRIES } = require('../scripts/api-report') as typeof import('../scripts/api-report');
    const compiled = (source: string) => `./lib/${source.replace(/\.ts$/, '')}`;
    expect(pkg.exports).toEqual({
      ...Object.fromEntries(ENTRIES.map(e => [e.subpath, { types: `${compiled(e.source)}.d.ts`, default: `${compiled(e.source)}.js` }])),
      './package.json': './package.json',
    });
    for (const entry of ENTRIES) expect(fs.existsSync(path.join(ROOT, entry.source))).toBe(true);
  });

  test('resolves each sub-path for TypeScript\'s classic node resolution too (cdk8s init\'s tsconfig), which reads no `exports`', () => {
    const { ENTRIES } = require('../scripts/api-report') as typeof import('../scripts/api-report');
    for (const entry of ENTRIES.filter(e => e.subpath !== '.')) {
      const folder = entry.subpath.slice(2);
      const compiled = `../lib/${entry.source.replace(/\.ts$/, '')}`;
      expect(JSON.parse(fs.readFileSync(path.join(ROOT, folder, 'package.json'), 'utf8'))).toEqual({ private: true, main: `${compiled}.js`, types: `${compiled}.d.ts` });
      expect(pkg.files).toContain(folder);
    }
  });
});
