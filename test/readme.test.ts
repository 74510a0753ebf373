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

  test('shows the benchmark table bench/RESULTS.md holds (copy it when `npm run bench` changes it)', () => {
    const results = fs.readFileSync(path.join(__dirname, '..', 'bench', 'RESULTS.md'), 'utf8');
    const tableOf = (text: string) => /(\| case [\s\S]*?)\n\n/.exec(text)?.[1];
    const performance = readme.slice(readme.indexOf('## Performance'));
    expect(tableOf(performance)).toBeDefined();
    expect(tableOf(performance)).toBe(tableOf(results));
  });
});
