/**
 * What dist/ ships that has a size limit: the webhook program's ConfigMap, which client-side
 * `kubectl apply` (Argo CD's default) records whole in the annotation
 * `kubectl.kubernetes.io/last-applied-configuration`, where the API server allows 256 KiB of
 * annotations in all. Read from the committed dist/, so `npm run bench` shows it beside the timings.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as YAML from 'yaml';

/** The API server's limit on an object's annotations, in bytes. */
export const ANNOTATIONS_LIMIT = 256 * 1024;

/** The sizes of the webhook program in a dist/ folder: its bundle's line and its ConfigMap as client-side apply records it, in bytes. */
export function webhookProgramSizes(dist: string): { readonly bundle: number; readonly recorded: number } {
  const objects = YAML.parseAllDocuments(fs.readFileSync(path.join(dist, '0000-serverless.k8s.yaml'), 'utf8')).map(d => d.toJSON());
  const program = objects.find(o => o?.kind === 'ConfigMap' && o.metadata?.name === 'serverless-webhook-server');
  if (!program) throw new Error(`${dist}/0000-serverless.k8s.yaml has no ConfigMap serverless-webhook-server`);
  const own = Object.entries(program.metadata.annotations ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  const recorded = 'kubectl.kubernetes.io/last-applied-configuration'.length + JSON.stringify(program).length + own;
  return { bundle: program.binaryData['server.js.br'].length, recorded };
}

/** The table of sizes, in Markdown. */
export function sizesTable(dist: string): string {
  const { bundle, recorded } = webhookProgramSizes(dist);
  const percent = (n: number) => `${(100 * n / ANNOTATIONS_LIMIT).toFixed(1)}%`;
  const rows: [string, number][] = [
    ['`server.js.br` (base64), one line', bundle],
    ['ConfigMap as client-side apply records it', recorded],
  ];
  const number = (n: number) => n.toLocaleString('en-US');
  return [
    '| object                                    |   bytes | of 262,144 |',
    '| ----------------------------------------- | ------: | ---------: |',
    ...rows.map(([name, n]) => `| ${name.padEnd(41)} | ${number(n).padStart(7)} | ${percent(n).padStart(10)} |`),
  ].join('\n');
}
