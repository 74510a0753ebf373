/**
 * How `kyma-serverless diff` shows what changes: the changed fields as YAML lines, a text report for
 * a terminal or CI log, and a Markdown summary for a pull-request comment.
 */
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import { isObject } from '../../api/_json';
import { objectLabel } from '../_plan';
import { DiffOutcome, ObjectDiff } from './model';

type Json = { readonly [key: string]: unknown };

/** A list whose items all have a `name`: containers, env, ports, webhooks. Compared item by item. */
const isNamedList = (value: unknown): value is Json[] =>
  Array.isArray(value) && value.length > 0 && value.every(item => isObject(item) && typeof item.name === 'string');

/** YAML lines of a value under a key, or of a list item. */
function yamlLines(value: unknown): string[] {
  return stringify(value, { lineWidth: 0 }).replace(/\n$/, '').split('\n');
}

/** Context lines kept around each changed line of a text. */
const CONTEXT_LINES = 1;

/**
 * Two texts of several lines (a Function's source), line by line: the changed lines (`- `, `+ `)
 * with a line of context around each (`  `), and `...` for the unchanged lines between.
 */
function textDiff(before: string, after: string, indent: string): string[] {
  const [a, b] = [before.replace(/\n$/, '').split('\n'), after.replace(/\n$/, '').split('\n')];
  // The longest common subsequence of lines, from the end.
  const common: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
  }
  const ops: [string, string][] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push([' ', a[i++]]), j++;
    else if (j < b.length && (i >= a.length || common[i][j + 1] > common[i + 1][j])) ops.push(['+', b[j++]]);
    else ops.push(['-', a[i++]]);
  }
  const near = (k: number) => ops.slice(Math.max(0, k - CONTEXT_LINES), k + CONTEXT_LINES + 1).some(([op]) => op !== ' ');
  const lines: string[] = [];
  ops.forEach(([op, line], k) => {
    if (near(k)) lines.push(`${op} ${indent}  ${line}`.trimEnd());
    else if (lines[lines.length - 1] !== `  ${indent}  ...`) lines.push(`  ${indent}  ...`);
  });
  return lines;
}

/**
 * The fields in which two objects differ, as YAML: the keys above a change as context (`  `),
 * the old value (`- `) and the new one (`+ `). Lists of named items (env, containers) are compared
 * item by item, texts of several lines (a Function's source) line by line; other values whole.
 *
 * @returns the lines, joined; empty when nothing differs
 */
export function yamlFieldDiff(before: unknown, after: unknown): string {
  const lines: string[] = [];
  const walk = (b: Json, a: Json, indent: string) => {
    for (const key of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
      const [old, now] = [b[key], a[key]];
      if (isDeepStrictEqual(old, now)) continue;
      if (isObject(old) && isObject(now)) {
        lines.push(`  ${indent}${key}:`);
        walk(old, now, `${indent}  `);
      } else if (isNamedList(old) && isNamedList(now)) {
        lines.push(`  ${indent}${key}:`);
        const names = [...new Set([...old.map(i => i.name as string), ...now.map(i => i.name as string)])];
        for (const name of names) {
          const [was, is] = [old.find(i => i.name === name), now.find(i => i.name === name)];
          if (isDeepStrictEqual(was, is)) continue;
          if (was) lines.push(...yamlLines([was]).map(l => `- ${indent}${l}`));
          if (is) lines.push(...yamlLines([is]).map(l => `+ ${indent}${l}`));
        }
      } else if (typeof old === 'string' && typeof now === 'string' && old.includes('\n') && now.includes('\n')) {
        lines.push(`  ${indent}${key}: |`, ...textDiff(old, now, indent));
      } else {
        if (old !== undefined) lines.push(...yamlLines({ [key]: old }).map(l => `- ${indent}${l}`));
        if (now !== undefined) lines.push(...yamlLines({ [key]: now }).map(l => `+ ${indent}${l}`));
      }
    }
  };
  walk(isObject(before) ? before : {}, isObject(after) ? after : {}, '');
  return lines.join('\n');
}

/** `Function default-functions/hello`. */
const diffLabel = (object: ObjectDiff) => objectLabel(object.kind, object.name, object.namespace);

/** What the report counts. */
export interface DiffCounts {
  readonly [outcome: string]: number;
}

/** The counts of a report's objects, by outcome, in a fixed order, without zeros. */
export function countOutcomes(objects: readonly ObjectDiff[]): DiffCounts {
  const counts: { [outcome: string]: number } = {};
  for (const outcome of Object.values(DiffOutcome)) {
    const n = objects.filter(o => o.outcome === outcome && !(outcome === DiffOutcome.ORPHANED && o.kept)).length;
    if (n) counts[outcome] = n;
  }
  return counts;
}

/** `2 create, 1 change, 1 refused`. */
export function tally(counts: DiffCounts): string {
  return Object.entries(counts).map(([outcome, n]) => `${n} ${outcome}`).join(', ') || 'nothing';
}

const TITLE_WIDTH = 12;

/** The text report: one line per object that changes, with its meaning, its field diff, and the ways through refusals. */
export function renderText(objects: readonly ObjectDiff[]): string[] {
  const lines: string[] = [];
  const more = (text: string) => lines.push(`${' '.repeat(TITLE_WIDTH)}${text}`);
  for (const object of objects) {
    if (object.outcome === DiffOutcome.UNCHANGED || (object.outcome === DiffOutcome.ORPHANED && object.kept)) continue;
    lines.push(`${object.title.padEnd(TITLE_WIDTH)}${diffLabel(object)}: ${object.meaning}`);
    if (object.conflict) more(`conflict: ${object.conflict}`);
    if (object.refused) {
      for (const way of object.refused.wayThrough) more(`- ${way}`);
      more(`replacing it costs: ${object.refused.cost}`);
    }
    if (object.diff) for (const line of object.diff.split('\n')) more(line);
  }
  return lines;
}

const ROW_TITLES: { readonly [outcome in DiffOutcome]: string } = {
  [DiffOutcome.CREATE]: 'created',
  [DiffOutcome.CHANGE]: 'changed',
  [DiffOutcome.UNCHANGED]: 'unchanged',
  [DiffOutcome.REFUSED]: '**refused**',
  [DiffOutcome.ORPHANED]: '**orphaned**',
  [DiffOutcome.FAILED]: '**failed**',
};

/** A table cell: no line breaks, no pipes. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The Markdown summary for a pull-request comment: a table of what changes and what it means,
 * the refused changes with their ways through, and each object's field diff folded away.
 *
 * @param title the heading, such as `kyma-serverless diff: dist against prod`
 */
export function renderMarkdown(title: string, objects: readonly ObjectDiff[], footer: string): string {
  const shown = objects.filter(o => o.outcome !== DiffOutcome.UNCHANGED && !(o.outcome === DiffOutcome.ORPHANED && o.kept));
  const out = [`### ${title}`, '', `**${tally(countOutcomes(objects))}**`, ''];
  if (shown.length) {
    out.push('| | object | what it means |', '|---|---|---|');
    for (const o of shown) {
      const what = o.title === o.outcome || o.outcome === DiffOutcome.CREATE ? ROW_TITLES[o.outcome] : `${ROW_TITLES[o.outcome]}: ${o.title}`;
      out.push(`| ${what} | \`${diffLabel(o)}\` | ${cell(o.meaning)} |`);
    }
    out.push('');
  }
  for (const o of shown.filter(s => s.refused)) {
    out.push(`**Refused: \`${diffLabel(o)}\`**: ${o.refused!.refusal}. The sync fails at this object unless:`, '');
    for (const way of o.refused!.wayThrough) out.push(`- ${way}`);
    out.push(`- replacing it costs: ${o.refused!.cost}`, '');
  }
  for (const o of shown.filter(s => s.diff)) {
    out.push(`<details><summary>${diffLabel(o)}</summary>`, '', '```diff', o.diff!, '```', '', '</details>', '');
  }
  out.push(footer);
  return `${out.join('\n')}\n`;
}
