// `npm test` after the bundle: the type check of sources and tests (`tsc --noEmit`) and jest, side
// by side rather than one after the other. On a fresh checkout the type check takes about 20 s of
// one core, and jest's workers leave a core idle for part of the run (suites waiting on processes,
// retry pauses): run together, the type check fills those gaps instead of adding its 20 s before
// jest starts. jest's output streams as it runs; the type check's is printed after jest's, and
// `npm test` fails when either fails. Arguments go to jest (`npm test -- test/gitops`).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const typeCheck = spawn(process.execPath, [
  require.resolve('typescript/bin/tsc'), '--noEmit', '--incremental', '--tsBuildInfoFile', 'node_modules/.cache/tsc/test.tsbuildinfo',
], { stdio: ['ignore', 'pipe', 'pipe'] });
let typeCheckOutput = '';
typeCheck.stdout.on('data', (chunk) => { typeCheckOutput += chunk; });
typeCheck.stderr.on('data', (chunk) => { typeCheckOutput += chunk; });
const typeChecked = new Promise((resolve) => typeCheck.on('close', (code, signal) => resolve(code ?? signal)));

const jest = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...process.argv.slice(2)], { stdio: 'inherit' });
const tested = new Promise((resolve) => jest.on('close', (code, signal) => resolve(code ?? signal)));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    typeCheck.kill(signal);
    jest.kill(signal);
  });
}

const [jestResult, typeCheckResult] = await Promise.all([tested, typeChecked]);
if (typeCheckResult !== 0) {
  process.stderr.write(`\nThe type check (tsc --noEmit) failed (${typeCheckResult}):\n${typeCheckOutput}`);
} else if (typeCheckOutput.trim()) {
  process.stdout.write(typeCheckOutput);
}
process.exitCode = jestResult === 0 && typeCheckResult === 0 ? 0 : 1;
