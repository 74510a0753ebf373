/**
 * Prints the table of Function rules of docs/functions.md from `FUNCTION_RULES`, so that the docs
 * list exactly the rules the code checks (a test compares docs/functions.md with this output). `rulesTable()`
 * prints any other rules table too (`APIRULE_RULES`, `SUBSCRIPTION_RULES`).
 *
 *   npx ts-node --transpile-only scripts/rules-table.ts            # print it
 *   npx ts-node --transpile-only scripts/rules-table.ts --write    # put it into docs/functions.md
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FUNCTION_RULES, RuleInfo } from '../src/api';

/** The file that shows the table, from the repository's root. */
export const RULES_TABLE_FILE = path.join('docs', 'functions.md');

/** The markers around the table in RULES_TABLE_FILE. */
export const TABLE_BLOCK = /(<!-- rules-table:start[^>]*-->\n)([\s\S]*?)(\n<!-- rules-table:end -->)/;

/** The markdown table of every rule of a rules table: by default, of the Function API. */
export function rulesTable(rules: readonly RuleInfo[] = FUNCTION_RULES): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = rules.map(r => `| \`${r.id}\` | ${cell(r.field)} | ${cell(r.requires)} | ${r.upstream} | ${cell(r.hint)} |`);
  return ['| rule | field | requires | without our checks, rejected by | fix |', '|---|---|---|---|---|', ...rows].join('\n');
}

if (require.main === module) {
  if (process.argv.includes('--write')) {
    const file = path.join(__dirname, '..', RULES_TABLE_FILE);
    const text = fs.readFileSync(file, 'utf8');
    if (!TABLE_BLOCK.test(text)) throw new Error(`${RULES_TABLE_FILE} has no rules-table markers`);
    fs.writeFileSync(file, text.replace(TABLE_BLOCK, (_all, start, _table, end) => `${start}${rulesTable()}${end}`));
  } else {
    process.stdout.write(`${rulesTable()}\n`);
  }
}
