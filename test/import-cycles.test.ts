/**
 * Imports run downward only (DESIGN.md, "Layout"): no file of src/ reaches itself through its
 * imports, type-only imports included. scripts/import-cycles.ts prints the tangles when this fails.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cycles, importGraph, importedPaths } from '../scripts/import-cycles';

const ROOT = path.resolve(__dirname, '..');

describe('imports of src/', () => {
  test('form no cycle, type-only imports counted (run scripts/import-cycles.ts for the tangles)', () => {
    const graph = importGraph(path.join(ROOT, 'src'), ROOT);
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/function/endpoint.ts')!.length).toBeGreaterThan(0);
    expect(cycles(graph)).toEqual([]);
  });
});

describe('the cycle finder', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cycles-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };

  test('reads every form of import: value, type-only, re-export, import-equals, import() and require() with a literal', () => {
    const text = [
      "import { a } from './a';",
      "import type { B } from '../b';",
      "export * from './c';",
      "import d = require('./d');",
      "type E = import('./e').E;",
      "const f = () => require('./f');",
      "const g = import('./g');",
      "import { h } from 'some-package';",
    ].join('\n');
    expect(importedPaths('x.ts', text)).toEqual(['./a', '../b', './c', './d', './e', './f', './g']);
  });

  test('finds a circle of three files tied by a type-only import, and names all of them', () => {
    write('low/a.ts', "import { b } from '../mid/b';\nexport const a = b;\n");
    write('mid/b.ts', "import { c } from '../top/c';\nexport const b = c;\n");
    write('top/c.ts', "import type { A } from '../low/index';\nexport const c = 1;\nexport type C = A;\n");
    write('low/index.ts', "export * from './a';\n");
    write('alone.ts', "import { a } from './low';\nexport const x = a;\n");
    expect(cycles(importGraph(dir))).toEqual([{
      files: ['low/a.ts', 'low/index.ts', 'mid/b.ts', 'top/c.ts'],
      example: ['low/a.ts', 'mid/b.ts', 'top/c.ts', 'low/index.ts', 'low/a.ts'],
    }]);
  });

  test('finds a file that imports itself, and nothing in a tree that only imports downward', () => {
    write('self.ts', "export type X = import('./self').Y;\nexport type Y = string;\n");
    expect(cycles(importGraph(dir)).map(c => c.files)).toEqual([['self.ts']]);
    fs.rmSync(path.join(dir, 'self.ts'));
    write('top.ts', "import { low } from './low';\nexport const top = low;\n");
    write('low.ts', 'export const low = 1;\n');
    expect(cycles(importGraph(dir))).toEqual([]);
  });
});
