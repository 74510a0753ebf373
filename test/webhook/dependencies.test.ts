/**
 * The webhook server is bundled into one file that ships in a ConfigMap and runs on plain
 * Node.js: its module graph must stay free of the big packages the command line uses.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SRC = path.join(__dirname, '..', '..', 'src');

/** Packages the webhook's modules must not import, not even for types. */
const FORBIDDEN = ['@kubernetes/client-node', 'node-forge'];

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|\brequire\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module reachable from `entries` through relative imports, with the packages each imports. */
function moduleGraph(entries: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (file: string) => {
    if (graph.has(file)) return;
    const packages: string[] = [];
    graph.set(file, packages);
    for (const match of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match.slice(1).find(Boolean)!;
      if (!specifier.startsWith('.')) {
        packages.push(specifier);
        continue;
      }
      const base = path.resolve(path.dirname(file), specifier);
      const target = [`${base}.ts`, path.join(base, 'index.ts')].find(candidate => fs.existsSync(candidate));
      if (!target) throw new Error(`${path.relative(SRC, file)} imports ${specifier}, which does not resolve`);
      visit(target);
    }
  };
  entries.forEach(visit);
  return graph;
}

test('the webhook\'s modules import neither @kubernetes/client-node nor node-forge, directly or through other modules', () => {
  const webhook = path.join(SRC, 'webhook');
  const entries = fs.readdirSync(webhook).filter(f => f.endsWith('.ts')).map(f => path.join(webhook, f));
  const graph = moduleGraph(entries);
  expect(graph.size).toBeGreaterThan(entries.length);

  const offending = [...graph].flatMap(([file, packages]) =>
    packages.filter(p => FORBIDDEN.some(f => p === f || p.startsWith(`${f}/`))).map(p => `${path.relative(SRC, file)} imports ${p}`));
  expect(offending).toEqual([]);
});

test('the check finds a type-only import too', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'module-graph-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
    fs.writeFileSync(path.join(dir, 'b.ts'), "import type { KubeConfig } from '@kubernetes/client-node';\nexport const b: KubeConfig | 1 = 1;\n");
    const graph = moduleGraph([path.join(dir, 'a.ts')]);
    expect(graph.get(path.join(dir, 'b.ts'))).toEqual(['@kubernetes/client-node']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
