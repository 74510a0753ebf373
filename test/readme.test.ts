import * as fs from 'node:fs';
import * as path from 'node:path';
import { TABLE_BLOCK, rulesTable } from '../scripts/rules-table';

const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');

describe('README', () => {
  test('starts with the install-and-synth command and the test command', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toMatch(/^npm ci && npm run synth\b/m);
    expect(firstBlock).toMatch(/^npm test\b/m);
  });

  test('lists exactly the Function rules the code checks (run `scripts/rules-table.ts --write` when this fails)', () => {
    const table = TABLE_BLOCK.exec(readme)?.[2];
    expect(table).toBe(rulesTable());
  });

  test('shows the benchmark tables bench/RESULTS.md holds, in its order (copy them when `npm run bench` changes them)', () => {
    const results = fs.readFileSync(path.join(__dirname, '..', 'bench', 'RESULTS.md'), 'utf8');
    const tablesOf = (text: string) => [...text.matchAll(/^(\| case [\s\S]*?)\n\n/gm)].map(m => m[1]);
    const performance = readme.slice(readme.indexOf('## Performance'), readme.indexOf('\n## ', readme.indexOf('## Performance') + 1));
    expect(tablesOf(results)).toHaveLength(2);
    expect(tablesOf(performance)).toEqual(tablesOf(results));
  });
});
