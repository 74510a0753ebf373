/**
 * `npm run synth`: runs `cdk8s synth` into a scratch folder and replaces dist/ only when it
 * succeeds, so a failed synth leaves the previous dist/ exactly as it was (`cdk8s synth` on
 * its own empties the output folder before it runs the app). Before the swap it checks the
 * output as `kyma-serverless validate` does, so invalid manifests never reach dist/.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..');
// SYNTH_DIST writes elsewhere than dist/ (the benchmark does), with the same steps.
const dist = path.resolve(root, process.env.SYNTH_DIST ?? 'dist');
const scratch = path.join(root, `.synth-${process.pid}`);
const previous = path.join(root, `.synth-${process.pid}-previous`);
const record = path.join(root, `.synth-${process.pid}-validated`);

/** The folders under `dir`, itself included, that hold manifests. */
function manifestFolders(dir: string): string[] {
  const folders: string[] = [];
  const walk = (at: string) => {
    const entries = fs.readdirSync(at, { withFileTypes: true });
    if (entries.some(e => e.isFile() && /\.ya?ml$/.test(e.name))) folders.push(path.resolve(at));
    for (const entry of entries) if (entry.isDirectory()) walk(path.join(at, entry.name));
  };
  walk(dir);
  return folders;
}

/** Checks folders of the scratch output; prints what is wrong. Loaded only when needed. */
function valid(folders: readonly string[]): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Severity, validateManifests } = require('../src/policy/manifests') as typeof import('../src/policy/manifests');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { formatReport } = require('../src/cli/validate') as typeof import('../src/cli/validate');
  let ok = true;
  for (const folder of folders) {
    const report = validateManifests(folder, { recursive: false });
    if (report.findings.some(f => f.severity === Severity.ERROR)) {
      process.stderr.write(`${formatReport(path.relative(scratch, folder) || 'synth output', report)}\n`);
      ok = false;
    }
  }
  return ok;
}

function main(): number {
  fs.rmSync(scratch, { recursive: true, force: true });
  const cli = path.join(root, 'node_modules', '.bin', 'cdk8s');
  const result = spawnSync(cli, ['synth', '--no-check-upgrade', '--output', scratch, ...process.argv.slice(2)], {
    cwd: root,
    stdio: 'inherit',
    // The name of VALIDATED_FOLDERS_ENV (src/policy/manifests.ts), not imported to keep this script light.
    env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false', KYMA_SERVERLESS_VALIDATED_FOLDERS: record },
  });
  if (result.status !== 0) {
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(record, { force: true });
    process.stderr.write('synth failed: dist/ was left unchanged\n');
    return result.status ?? 1;
  }
  // The same check as `kyma-serverless validate`: a manifest the cluster would reject never reaches
  // dist/. A GitOpsApp checks its own output in its process (it records the folders); any other
  // app's output is checked here.
  const checked = fs.existsSync(record) ? new Set(fs.readFileSync(record, 'utf8').split('\n').filter(Boolean)) : new Set<string>();
  fs.rmSync(record, { force: true });
  const unchecked = manifestFolders(scratch).filter(folder => !checked.has(folder));
  if (unchecked.length && !valid(unchecked)) {
    fs.rmSync(scratch, { recursive: true, force: true });
    process.stderr.write('synth produced invalid manifests: dist/ was left unchanged\n');
    return 1;
  }
  fs.mkdirSync(path.dirname(dist), { recursive: true });
  if (fs.existsSync(dist)) fs.renameSync(dist, previous);
  fs.renameSync(scratch, dist);
  fs.rmSync(previous, { recursive: true, force: true });
  const files = fs.readdirSync(dist).sort();
  process.stdout.write(`${path.relative(root, dist) || '.'}/: ${files.join(', ')}\n`);
  return 0;
}

process.exitCode = main();
