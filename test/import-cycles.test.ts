/**
 * Imports run downward only (DESIGN.md, "Layers and layout"): no file of src/ or scripts/ reaches
 * itself through its imports, type-only imports included, and no import of src/ runs up the floors
 * of LAYERS. scripts/import-cycles.ts prints the tangles and the upward imports when this fails.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LAYERS, cycles, importGraph, importedPaths, layerOf, layerViolations } from '../scripts/import-cycles';

const ROOT = path.resolve(__dirname, '..');

describe('imports of src/ and scripts/', () => {
  const graph = importGraph([path.join(ROOT, 'src'), path.join(ROOT, 'scripts')], ROOT);

  test('form no cycle, type-only imports counted (run scripts/import-cycles.ts for the tangles)', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('src/function/endpoint.ts')!.length).toBeGreaterThan(0);
    expect(graph.get('scripts/real-controller/move.ts')).toContain('scripts/real-controller/run.ts');
    expect(cycles(graph)).toEqual([]);
  });

  test('of src/ run down the floors of DESIGN.md, and every file of src/ is on one', () => {
    expect(layerOf('src/cli/status/model.ts')).toBeLessThan(layerOf('src/function/kyma-function.ts')!);
    expect(layerOf('src/namespace/function-namespace.ts')).toBeGreaterThan(layerOf('src/gitops/gitops-app.ts')!);
    expect(layerOf('src/api/_generated/function-schema-check.ts')).toBe(layerOf('src/api/validator.ts'));
    expect(LAYERS.flat().filter(place => !fs.existsSync(path.join(ROOT, place)))).toEqual([]);
    expect(layerViolations(graph)).toEqual({ upward: [], unplaced: [] });
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

  test('names an import that runs up the floors, and a file of src/ on none; imports within a floor go either way', () => {
    write('src/top/a.ts', "import { b } from '../low/b';\nexport const a = b;\n");
    write('src/low/b.ts', "import type { A } from '../top/a';\nexport const b = 1;\nexport type B = A;\n");
    write('src/low/c.ts', "import { d } from '../side/d';\nexport const c = d;\n");
    write('src/side/d.ts', "import { b } from '../low/b';\nexport const d = b;\n");
    write('src/stray.ts', 'export const stray = 1;\n');
    write('scripts/tool.ts', "import { a } from '../src/top/a';\nexport const tool = a;\n");
    const graph = importGraph([path.join(dir, 'src'), path.join(dir, 'scripts')], dir);
    expect(layerViolations(graph, [['src/top/'], ['src/low/', 'src/side/']])).toEqual({
      upward: [{ from: 'src/low/b.ts', to: 'src/top/a.ts' }],
      unplaced: ['src/stray.ts'],
    });
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
