import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

describe("the Python parser's worker", () => {
  // A user's `node -r ts-node/register main.ts` (and the bench's user path) passes `-r` to the
  // process; a worker inherits its options unless told otherwise, and would load ts-node and
  // TypeScript again before its first parse.
  test("runs none of the process's preloads", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-parser-'));
    try {
      const probe = path.join(dir, 'probe.js');
      const ranIn = path.join(dir, 'ran-in');
      fs.writeFileSync(probe, `require('node:fs').appendFileSync(${JSON.stringify(ranIn)}, require('node:worker_threads').isMainThread ? 'main\\n' : 'worker\\n');\n`);
      const script = "const { parsePython } = require('./src/api/_python-parser'); console.log(parsePython('x = 1\\n').type);";
      const result = spawnSync(process.execPath, ['-r', probe, '-r', 'ts-node/register/transpile-only', '-e', script], { cwd: ROOT, encoding: 'utf8' });
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('module\n');
      expect(fs.readFileSync(ranIn, 'utf8')).toBe('main\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
