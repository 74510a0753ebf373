import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionRuntime, FunctionSource, GitAuthType } from '../../src';

function folder(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fn-'));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

describe('FunctionSource.fromInline', () => {
  test('carries the source, and the dependencies when given', () => {
    expect(FunctionSource.fromInline('x').bind(FunctionRuntime.NODEJS_22)).toEqual({ inline: { source: 'x' } });
    expect(FunctionSource.fromInline('x', '{}').bind(FunctionRuntime.NODEJS_22)).toEqual({ inline: { source: 'x', dependencies: '{}' } });
  });
});

describe('FunctionSource.fromGitRepository', () => {
  test('defaults baseDir to the repository root', () => {
    expect(FunctionSource.fromGitRepository({ url: 'https://github.com/acme/fn.git', reference: 'main' }).bind(FunctionRuntime.NODEJS_22))
      .toEqual({ gitRepository: { url: 'https://github.com/acme/fn.git', baseDir: '/', reference: 'main' } });
  });

  test('carries auth', () => {
    const config = FunctionSource.fromGitRepository({
      url: 'https://github.com/acme/fn.git', baseDir: 'fn', reference: 'v1', auth: { type: GitAuthType.BASIC, secretName: 'git-creds' },
    }).bind(FunctionRuntime.PYTHON_312);
    expect(config.gitRepository?.auth).toEqual({ type: 'basic', secretName: 'git-creds' });
  });
});

describe('FunctionSource.fromDirectory', () => {
  test('reads handler.js and package.json for Node.js', () => {
    const dir = folder({ 'handler.js': 'module.exports = {}', 'package.json': '{}', 'function.yaml': 'runtime: nodejs22', 'README.md': '# fn' });
    const config = FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_22);
    expect(config.inline).toEqual({ source: 'module.exports = {}', dependencies: '{}' });
    expect(config.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  test('reads handler.py and requirements.txt for Python', () => {
    const dir = folder({ 'handler.py': 'def main(e, c):\n    return 1\n', 'requirements.txt': 'requests\n' });
    expect(FunctionSource.fromDirectory(dir).bind(FunctionRuntime.PYTHON_312).inline)
      .toEqual({ source: 'def main(e, c):\n    return 1\n', dependencies: 'requests\n' });
  });

  test('the dependencies file is optional', () => {
    const dir = folder({ 'handler.py': 'x' });
    expect(FunctionSource.fromDirectory(dir).bind(FunctionRuntime.PYTHON_312).inline).toEqual({ source: 'x' });
  });

  test('the hash follows the content, and only the content', () => {
    const a = folder({ 'handler.js': 'a', 'package.json': '{}' });
    const b = folder({ 'handler.js': 'a', 'package.json': '{}' });
    const c = folder({ 'handler.js': 'b', 'package.json': '{}' });
    const d = folder({ 'handler.js': 'a' });
    const hash = (dir: string) => FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_20).sha256;
    expect(hash(a)).toBe(hash(b));
    expect(hash(a)).not.toBe(hash(c));
    expect(hash(a)).not.toBe(hash(d));
  });

  test('reads the same text on every machine: no BOM, \\n line ends', () => {
    const crlf = folder({ 'handler.js': '\uFEFFline1\r\nline2\r\n' });
    const lf = folder({ 'handler.js': 'line1\nline2\n' });
    // Apart from the folder each was read from.
    const bind = (dir: string) => ({ ...FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_22), directory: undefined });
    expect(bind(crlf)).toEqual(bind(lf));
  });

  test('ignores tests, hidden files and subfolders', () => {
    const dir = folder({
      'handler.js': 'x', 'handler.test.js': 'test', '.eslintrc.js': 'x', 'node_modules/lodash/index.js': 'x', 'lib/util.js': 'x',
    });
    expect(FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_22).inline).toEqual({ source: 'x' });
  });

  test('throws when the folder does not exist', () => {
    expect(() => FunctionSource.fromDirectory('no/such/folder').bind(FunctionRuntime.NODEJS_22))
      .toThrow('folder \'no/such/folder\' does not exist');
  });

  test('throws when the path is a file', () => {
    const dir = folder({ 'handler.js': 'x' });
    expect(() => FunctionSource.fromDirectory(path.join(dir, 'handler.js')).bind(FunctionRuntime.NODEJS_22)).toThrow(/is not a folder/);
  });

  test('throws when the handler is missing', () => {
    const dir = folder({ 'index.txt': 'x' });
    expect(() => FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_22))
      .toThrow(/has no handler\.js: a nodejs22 Function needs handler\.js \(found index\.txt\)/);
    expect(() => FunctionSource.fromDirectory(folder({})).bind(FunctionRuntime.PYTHON_312)).toThrow(/has no handler\.py.*the folder is empty/);
  });

  test('throws when the handler does not fit the runtime', () => {
    const dir = folder({ 'handler.py': 'x', 'requirements.txt': '' });
    expect(() => FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_22))
      .toThrow(/holds handler\.py, a python handler, but the runtime is nodejs22, which needs handler\.js: use a python runtime such as FunctionRuntime\.PYTHON_312/);
    const node = folder({ 'handler.js': 'x' });
    expect(() => FunctionSource.fromDirectory(node).bind(FunctionRuntime.PYTHON_312)).toThrow(/FunctionRuntime\.NODEJS_22/);
  });

  test('throws when other source files would be left out', () => {
    const dir = folder({ 'handler.js': 'require("./util")', 'util.js': 'x', 'types.ts': 'x' });
    expect(() => FunctionSource.fromDirectory(dir).bind(FunctionRuntime.NODEJS_22))
      .toThrow(/holds types\.ts, util\.js besides handler\.js: an inline source carries only handler\.js and package\.json/);
  });
});
