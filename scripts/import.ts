/**
 * `npm run import`: writes the Function CRD from src/api/ to crds/, then regenerates imports/
 * from it with `cdk8s import` (offline: it only reads the file).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CRD_FILE, crdFileText } from './crd-file';

const root = path.resolve(__dirname, '..');
fs.mkdirSync(path.join(root, path.dirname(CRD_FILE)), { recursive: true });
fs.writeFileSync(path.join(root, CRD_FILE), crdFileText());
const result = spawnSync(path.join(root, 'node_modules', '.bin', 'cdk8s'), ['import', '--no-check-upgrade', '--output', 'imports'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
});
process.exitCode = result.status ?? 1;
