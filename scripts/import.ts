/**
 * `npm run import`: writes the Function CRD from src/api/ to crds/, then regenerates imports/
 * from it with `cdk8s import` (offline: it only reads the file), and rewrites what that
 * generates where it is slow (scripts/import-rewrite.ts).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CRD_FILE, crdFileText } from './crd-file';
import { rewriteImport } from './import-rewrite';

const root = path.resolve(__dirname, '..');
fs.mkdirSync(path.join(root, path.dirname(CRD_FILE)), { recursive: true });
fs.writeFileSync(path.join(root, CRD_FILE), crdFileText());
const result = spawnSync(path.join(root, 'node_modules', '.bin', 'cdk8s'), ['import', '--no-check-upgrade', '--output', 'imports'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
});
if (result.status === 0) {
  for (const file of fs.readdirSync(path.join(root, 'imports'))) {
    const full = path.join(root, 'imports', file);
    fs.writeFileSync(full, rewriteImport(fs.readFileSync(full, 'utf8')));
  }
}
process.exitCode = result.status ?? 1;
