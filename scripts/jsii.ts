/**
 * Compiles the construct entry (src/index.ts) with jsii, the compiler of cdk8s, cdk8s-plus and
 * Construct Hub libraries, as a check that its API has the shapes jsii accepts (`npm run jsii`; CI
 * runs it). Compile only: the bindings for other languages are not built here.
 *
 * jsii compiles a package folder of its own, so this lays one out in `.jsii-build/` (ignored by
 * Git): the files src/index.ts reaches through its imports, a package.json whose `jsii` section
 * names the entry, and the repository's node_modules. The command line, the webhook server, the
 * local runtime and the test kit are not reached from the construct entry, so they stay TypeScript only.
 *
 *   npx ts-node --transpile-only scripts/jsii.ts     # exits 1 on any jsii error
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importGraph } from './import-cycles';

const ROOT = path.join(__dirname, '..');
/** Where the jsii package is laid out and compiled. */
export const JSII_DIR = path.join(ROOT, '.jsii-build');
/** The construct entry. */
const ENTRY = 'src/index.ts';

/** The files of src/ and imports/ that the construct entry loads, itself included, sorted. */
export function constructEntryFiles(): string[] {
  const graph = new Map([...importGraph(path.join(ROOT, 'src'), ROOT), ...importGraph(path.join(ROOT, 'imports'), ROOT)]);
  // importGraph reads one folder; follow the imports of src/ into imports/ too.
  const reached = new Set<string>();
  const visit = (file: string): void => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const next of graph.get(file) ?? []) visit(next);
    for (const next of importsOutside(file)) visit(next);
  };
  visit(ENTRY);
  return [...reached].sort();
}

/** Imports of a src/ file that name imports/ (which importGraph of src/ alone leaves out). */
function importsOutside(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/from '((?:\.\.\/)+imports\/[^']+)'/g)]
    .map(m => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), m[1])).split(path.sep).join('/'))
    .map(f => (f.endsWith('.ts') ? f : `${f}.ts`));
}

/** The version of a package in the lock file. */
function lockedVersion(name: string): string {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  return lock.packages[`node_modules/${name}`].version;
}

/** Lays out the jsii package and runs jsii on it; returns jsii's exit code. */
export function compileWithJsii(): number {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  fs.rmSync(JSII_DIR, { recursive: true, force: true });
  fs.mkdirSync(JSII_DIR, { recursive: true });
  for (const file of constructEntryFiles()) {
    fs.mkdirSync(path.dirname(path.join(JSII_DIR, file)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, file), path.join(JSII_DIR, file));
  }
  fs.copyFileSync(path.join(ROOT, 'README.md'), path.join(JSII_DIR, 'README.md'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(JSII_DIR, 'node_modules'), 'dir');
  // jsii wants every dependency it sees in the API to be a jsii library; the others (yaml, ajv,
  // @kubernetes-models/*) are implementation details, which jsii takes as bundled.
  const jsiiPackage = {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    license: pkg.license,
    author: { name: 'cdk8s-kyma-serverless authors', organization: false },
    repository: { type: 'git', url: 'https://example.invalid/cdk8s-kyma-serverless.git' },
    main: 'src/index.js',
    types: 'src/index.d.ts',
    peerDependencies: pkg.peerDependencies,
    // The versions this repository builds with, as jsii asks of peer dependencies.
    devDependencies: Object.fromEntries(Object.keys(pkg.peerDependencies).map(name => [name, lockedVersion(name)])),
    dependencies: pkg.dependencies,
    bundledDependencies: Object.keys(pkg.dependencies),
    jsii: { outdir: 'dist', targets: {}, tsc: { rootDir: '.', outDir: '.' } },
  };
  fs.writeFileSync(path.join(JSII_DIR, 'package.json'), `${JSON.stringify(jsiiPackage, null, 2)}\n`);
  const jsii = path.join(ROOT, 'node_modules', '.bin', 'jsii');
  // jsii 5.9 runs on Node.js 20 (its engines: >= 20.16), but prints a banner that its makers no
  // longer support Node.js 20; the machines here run 20, so the banner says nothing new.
  const major = process.versions.node.split('.')[0];
  // Names that are reserved words in some target language (`default`, `function`) are warnings we do not act on: no bindings are built.
  const result = spawnSync(jsii, ['--silence-warnings', 'reserved-word'], {
    cwd: JSII_DIR,
    stdio: 'inherit',
    env: { ...process.env, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: major, JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION: '1' },
  });
  return result.status ?? 1;
}

if (require.main === module) {
  process.exitCode = compileWithJsii();
}
