/**
 * Finds the import cycles among the TypeScript files of folders (src/ and scripts/), read with the
 * TypeScript compiler's parser: `import`, `import type`, `export ... from`, `import x = require()`,
 * `import('...')` types and calls, and `require('...')` calls with a literal path all count. A
 * type-only import ties two concepts together just as a value import does, so it counts too.
 *
 * Imports run downward only (DESIGN.md, "Layers and layout"): besides cycles, it finds every
 * import of src/ that runs up the floors of {@link LAYERS}. A test fails on either.
 *
 *   npx ts-node --transpile-only scripts/import-cycles.ts         # prints each cycle and upward import, exits 1 if any
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

/** The relative module paths a source text imports, in order of appearance. */
export function importedPaths(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const literal = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) literal(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword
      || ts.isIdentifier(node.expression) && node.expression.text === 'require')) literal(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter(p => p.startsWith('.'));
}

/** The file a relative import of `from` names: `x.ts`, `x.d.ts` or `x/index.ts`; undefined for others (JSON, generated bundles). */
function resolve(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, `${base}.d.ts`, path.join(base, 'index.ts')].find(f => fs.existsSync(f));
}

/** Every `.ts` file under a folder. */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(e => e.isFile() && e.name.endsWith('.ts'))
    .map(e => path.join(e.parentPath, e.name))
    .sort();
}

/** The import graph of folders: each file, relative to `root`, with the files of the folders it imports. */
export function importGraph(dirs: string | readonly string[], root: string = typeof dirs === 'string' ? dirs : '.'): Map<string, string[]> {
  const files = (typeof dirs === 'string' ? [dirs] : dirs).flatMap(sourceFiles);
  const inside = new Set(files);
  const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importedPaths(file, fs.readFileSync(file, 'utf8'))
      .map(s => resolve(file, s))
      .filter((f): f is string => f !== undefined && inside.has(f));
    graph.set(rel(file), [...new Set(targets.map(rel))].sort());
  }
  return graph;
}

/** Files that import each other, directly or through one another. */
export interface ImportCycle {
  /** Every file of the tangle (a strongly connected component of the graph), sorted. */
  readonly files: string[];
  /** One shortest circle through its first file, ending where it starts. */
  readonly example: string[];
}

/** The cycles of a graph: each tangle of more than one file, or a file that imports itself. */
export function cycles(graph: Map<string, string[]>): ImportCycle[] {
  // Tarjan's algorithm, iterative enough for a source tree.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strongConnect = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
      }
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) strongConnect(v);
  // One readable cycle per component: the shortest path back to its first file.
  return components.map(component => ({ files: component, example: circleThrough(graph, component) }))
    .sort((a, b) => a.files[0].localeCompare(b.files[0]));
}

/** A shortest path from a component's first file back to it, inside the component. */
function circleThrough(graph: Map<string, string[]>, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const cycle = [v];
        for (let at = v; at !== start; at = previous.get(at)!) cycle.unshift(previous.get(at)!);
        return [...new Set(cycle), start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component, start];
}

/**
 * The floors of src/, top first, as DESIGN.md orders them ("Imports run downward only"): a file
 * may import files of its own floor and of the floors below it. Each floor lists its folders
 * (ending in `/`) and single files, relative to the project.
 */
export const LAYERS: readonly (readonly string[])[] = [
  // The app and the package's entries.
  ['src/main.ts', 'src/index.ts', 'src/environments.ts', 'src/testing/'],
  ['src/cli/', 'src/runtime/'],
  ['src/function/', 'src/gitops/'],
  ['src/namespace/'],
  ['src/stack/'],
  ['src/webhook/', 'src/exposure/', 'src/policy/'],
  // The Function API, with the validators it generates (src/api/_generated/).
  ['src/api/'],
  // Leaves every floor may use.
  ['src/log-level.ts', 'src/_package-root.ts', 'src/_api-errors.ts', 'src/_code-cache.ts', 'src/_yaml.ts'],
];

/** The floor of a file in {@link LAYERS} (0 is the top); undefined for a file of no floor. */
export function layerOf(file: string, layers: readonly (readonly string[])[] = LAYERS): number | undefined {
  const index = layers.findIndex(floor => floor.some(place => (place.endsWith('/') ? file.startsWith(place) : file === place)));
  return index < 0 ? undefined : index;
}

/** An import that runs up the floors. */
export interface UpwardImport {
  /** The importing file. */
  readonly from: string;
  /** The file it imports, on a higher floor. */
  readonly to: string;
}

/**
 * The imports of a graph that run up the floors, and the files of a folder of the layers that no floor holds.
 *
 * @param graph the import graph
 * @param layers the floors, top first
 * @param within the folder whose files must each have a floor, such as `src/`
 */
export function layerViolations(graph: Map<string, string[]>, layers: readonly (readonly string[])[] = LAYERS, within = 'src/'): {
  readonly upward: UpwardImport[];
  readonly unplaced: string[];
} {
  const upward: UpwardImport[] = [];
  const unplaced: string[] = [];
  for (const [from, targets] of graph) {
    const floor = layerOf(from, layers);
    if (floor === undefined) {
      if (from.startsWith(within)) unplaced.push(from);
      continue;
    }
    for (const to of targets) {
      const target = layerOf(to, layers);
      if (target !== undefined && target < floor) upward.push({ from, to });
    }
  }
  return { upward, unplaced: unplaced.sort() };
}

if (require.main === module) {
  const root = path.join(__dirname, '..');
  const graph = importGraph([path.join(root, 'src'), path.join(root, 'scripts')], root);
  const found = cycles(graph);
  for (const cycle of found) process.stdout.write(`${cycle.files.length} files import each other: ${cycle.files.join(', ')}\n  such as ${cycle.example.join(' -> ')}\n`);
  const { upward, unplaced } = layerViolations(graph);
  for (const { from, to } of upward) process.stdout.write(`${from} imports ${to}, a floor above it\n`);
  for (const file of unplaced) process.stdout.write(`${file} is on no floor of LAYERS: add its folder to the floor it belongs to\n`);
  process.stdout.write(`${found.length} import cycle(s) in src/ and scripts/, ${upward.length} upward import(s) and ${unplaced.length} file(s) on no floor in src/\n`);
  process.exitCode = found.length || upward.length || unplaced.length ? 1 : 0;
}
