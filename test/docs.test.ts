import * as fs from 'node:fs';
import * as path from 'node:path';
import { RULES_TABLE_FILE, TABLE_BLOCK, rulesTable } from '../scripts/rules-table';

const ROOT = path.join(__dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

describe('README', () => {
  const readme = read('README.md');

  test('starts with the install-and-synth command and the test command', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toMatch(/^npm ci && npm run synth\b/m);
    expect(firstBlock).toMatch(/^npm test\b/m);
  });

  test('links every file of docs/', () => {
    const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter(f => f.endsWith('.md'));
    expect(docs.filter(f => !readme.includes(`](docs/${f}`))).toEqual([]);
  });
});

describe('docs/functions.md', () => {
  test('lists exactly the Function rules the code checks (run `scripts/rules-table.ts --write` when this fails)', () => {
    const table = TABLE_BLOCK.exec(read(RULES_TABLE_FILE))?.[2];
    expect(table).toBe(rulesTable());
  });
});

describe('docs/performance.md', () => {
  test('shows the size of the webhook program\'s ConfigMap, which dist/ keeps within half of what client-side apply can record', () => {
    const { ANNOTATIONS_LIMIT, webhookProgramSizes } = require('../bench/sizes') as typeof import('../bench/sizes');
    const { bundle, recorded } = webhookProgramSizes(path.join(ROOT, 'dist'));
    expect(bundle).toBeGreaterThan(10_000);
    expect(recorded).toBeGreaterThan(bundle);
    expect(recorded).toBeLessThanOrEqual(ANNOTATIONS_LIMIT / 2);
    for (const doc of ['docs/performance.md', 'bench/RESULTS.md']) expect(read(doc)).toMatch(/^\| ConfigMap as client-side apply records it \| +[\d,]+ \| +[\d.]+% \|$/m);
  });

  test('shows the benchmark tables bench/RESULTS.md holds, in its order (copy them when `npm run bench` changes them)', () => {
    const tablesOf = (text: string) => [...text.matchAll(/^(\| case [\s\S]*?)\n\n/gm)].map(m => m[1]);
    const results = read('bench/RESULTS.md');
    expect(tablesOf(results)).toHaveLength(2);
    expect(tablesOf(read('docs/performance.md'))).toEqual(tablesOf(results));
  });
});

describe('docs of the command line', () => {
  test('name every option of every command (docs/command-line.md, or the page its section links)', () => {
    const { program } = require('../src/cli') as typeof import('../src/cli');
    const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter(f => f.endsWith('.md')).map(f => read(`docs/${f}`)).join('\n');
    const undocumented: string[] = [];
    const walk = (command: import('commander').Command, prefix: string): void => {
      for (const option of command.options) {
        if (option.long && option.long !== '--help' && !docs.includes(option.long)) undocumented.push(`${prefix}${command.name()} ${option.long}`.trim());
      }
      for (const sub of command.commands) walk(sub, prefix === '' && command.parent === null ? '' : `${prefix}${command.name()} `);
    };
    const cli = program();
    expect(cli.commands.length).toBeGreaterThan(8);
    walk(cli, '');
    expect(undocumented).toEqual([]);
  });
});
