/**
 * A local run (and the testing kit, which is the same LocalFunction) is as strict as the Pod: the
 * handler finds what it declares, what the runtime image provides and the standard library, and
 * nothing else installed on this machine: not the app's node_modules, not the machine's site-packages.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalFunction } from '../../src/testing';

// Each test starts a Node.js or Python process, and one installs a package with npm: seconds each on a busy machine.
jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..');

/** A function folder inside this checkout, as an app's functions/ are: node_modules of the project is above it. */
function folderInProject(files: { readonly [name: string]: string }): string {
  const dir = fs.mkdtempSync(path.join(ROOT, '.strict-run-'));
  const folder = path.join(dir, 'fn');
  fs.mkdirSync(folder);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(folder, name), text);
  return folder;
}

/** Why the Function does not start, or `started` (and it is stopped again). */
async function failureOf(folder: string): Promise<string> {
  try {
    const fn = await LocalFunction.startFolder(folder);
    await fn.stop();
    return 'started';
  } catch (e) {
    return (e as Error).message;
  }
}

afterAll(() => {
  for (const d of fs.readdirSync(ROOT).filter(d => d.startsWith('.strict-run-'))) fs.rmSync(path.join(ROOT, d), { recursive: true, force: true });
});

describe('a Node.js handler', () => {
  test('does not find a package the app has installed but the Function does not declare (lodash)', async () => {
    // The premise: lodash is in the project's node_modules, above the folder.
    expect(fs.existsSync(path.join(ROOT, 'node_modules', 'lodash', 'package.json'))).toBe(true);
    const commonjs = folderInProject({ 'handler.js': 'const _ = require("lodash");\nexports.main = () => _.kebabCase("Hello World");\n' });
    expect(await failureOf(commonjs)).toContain(
      'handler.js requires \'lodash\', which is not installed: declare it in the dependencies of package.json (the cluster installs only those)');
    const esm = folderInProject({
      'handler.js': 'import _ from "lodash";\nexport const main = () => _.kebabCase("Hello World");\n', 'package.json': '{ "type": "module" }',
    });
    expect(await failureOf(esm)).toContain('handler.js requires \'lodash\', which is not installed');
  });

  test('still finds the Node.js standard library and its declared packages', async () => {
    const root = fs.mkdtempSync(path.join(ROOT, '.strict-run-'));
    const dependency = path.join(root, 'greeter');
    fs.mkdirSync(dependency);
    fs.writeFileSync(path.join(dependency, 'package.json'), '{ "name": "greeter", "version": "1.0.0", "main": "index.js" }');
    fs.writeFileSync(path.join(dependency, 'index.js'), 'exports.greet = (name) => `Hello, ${name}`;\n');
    const folder = folderInProject({
      'handler.js': 'const os = require("node:os");\nconst { greet } = require("greeter");\nexports.main = () => greet(typeof os.hostname());\n',
      'package.json': JSON.stringify({ dependencies: { greeter: `file:${dependency}` } }),
    });
    const fn = await LocalFunction.startFolder(folder, { cacheDirectory: path.join(root, 'cache') });
    try {
      expect((await fn.get('/')).text()).toBe('Hello, string');
    } finally {
      await fn.stop();
    }
  });
});

/** A module this machine's Python has in its site-packages that no Python runtime image provides, if any. */
function machinePythonPackage(): string | undefined {
  const probe = spawnSync('python3', ['-c', [
    'import importlib.util, sys',
    'for name in ["click", "attr", "yaml", "six", "boto3", "numpy", "jinja2", "markupsafe"]:',
    '    spec = importlib.util.find_spec(name)',
    '    if spec and spec.origin and ("site-packages" in spec.origin or "dist-packages" in spec.origin):',
    '        print(name); break',
  ].join('\n')], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() || undefined : undefined;
}

describe('a Python handler', () => {
  const module = machinePythonPackage();
  // Without python3, or without a package in its site-packages, there is nothing to hide: said, not silently passed.
  const maybe = module ? test : test.skip;
  if (!module) console.log('strict-run.test.ts: no python3 with a package in its site-packages on this machine: the Python case is skipped');

  maybe(`does not find a package of this machine's site-packages that the Function does not declare (${module})`, async () => {
    const folder = folderInProject({ 'handler.py': `import ${module}\n\ndef main(event, context):\n    return "loaded"\n` });
    expect(await failureOf(folder)).toContain(
      `handler.py imports '${module}', which is not installed: add it to requirements.txt (the cluster installs only those)`);
  });

  maybe('still finds the standard library', async () => {
    const folder = folderInProject({ 'handler.py': 'import json, sqlite3\n\ndef main(event, context):\n    return json.dumps({"ok": sqlite3.sqlite_version != ""})\n' });
    const fn = await LocalFunction.startFolder(folder);
    try {
      expect((await fn.get('/')).text()).toBe('{"ok": true}');
    } finally {
      await fn.stop();
    }
  });
});
