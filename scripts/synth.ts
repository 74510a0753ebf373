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
const dist = path.join(root, 'dist');
const scratch = path.join(root, `.synth-${process.pid}`);
const previous = path.join(root, `.synth-${process.pid}-previous`);

function main(): number {
  fs.rmSync(scratch, { recursive: true, force: true });
  const cli = path.join(root, 'node_modules', '.bin', 'cdk8s');
  const result = spawnSync(cli, ['synth', '--no-check-upgrade', '--output', scratch, ...process.argv.slice(2)], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
  });
  if (result.status !== 0) {
    fs.rmSync(scratch, { recursive: true, force: true });
    process.stderr.write('synth failed: dist/ was left unchanged\n');
    return result.status ?? 1;
  }
  // The same check as `kyma-serverless validate`: a manifest the cluster would reject never reaches dist/.
  // Loaded only now: a synth that failed above need not pay for the schemas.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Severity, validateManifests } = require('../src/cli/manifests') as typeof import('../src/cli/manifests');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { formatReport } = require('../src/cli/validate') as typeof import('../src/cli/validate');
  const report = validateManifests(scratch);
  if (report.findings.some(f => f.severity === Severity.ERROR)) {
    process.stderr.write(`${formatReport('synth output', report)}\n`);
    fs.rmSync(scratch, { recursive: true, force: true });
    process.stderr.write('synth produced invalid manifests: dist/ was left unchanged\n');
    return 1;
  }
  if (fs.existsSync(dist)) fs.renameSync(dist, previous);
  fs.renameSync(scratch, dist);
  fs.rmSync(previous, { recursive: true, force: true });
  const files = fs.readdirSync(dist).sort();
  process.stdout.write(`dist/: ${files.join(', ')}\n`);
  return 0;
}

process.exitCode = main();
