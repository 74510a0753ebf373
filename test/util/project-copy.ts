/**
 * A copy of the project in a scratch folder, to run `npm run synth` where a test may break
 * things (bad function folders) or to prove that output does not depend on the checkout path.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const COPIED = ['package.json', 'cdk8s.yaml', 'tsconfig.json', 'bin', 'src', 'imports', 'scripts', 'functions', 'dist', 'lib/webhook'];

/** The result of a command run in a copy. */
export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A scratch copy of the project; node_modules is linked, not copied. */
export class ProjectCopy {
  public readonly dir: string;

  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'project-'));
    for (const entry of COPIED) fs.cpSync(path.join(ROOT, entry), path.join(this.dir, entry), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(this.dir, 'node_modules'), 'dir');
  }

  /**
   * Runs what `npm run synth` runs, `kyma-serverless synth`, from the copy's sources (without npm,
   * which adds nothing but start-up time; the webhook bundle is copied from this checkout).
   *
   * @param args passed on to `kyma-serverless synth`, such as `['--app', '...']`
   */
  public synth(args: readonly string[] = []): RunResult {
    const result = spawnSync(process.execPath, [path.join(this.dir, 'bin', 'kyma-serverless.js'), 'synth', ...args], {
      cwd: this.dir,
      env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
      encoding: 'utf8',
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /** Every file of a folder of the copy, subfolders included, by relative path. */
  public files(folder: string): Record<string, string> {
    return readTree(path.join(this.dir, folder));
  }

  /** Writes a file of the copy, creating its folder. */
  public write(file: string, content: string): void {
    fs.mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
    fs.writeFileSync(path.join(this.dir, file), content);
  }

  /** Removes the copy. */
  public remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Every file under a folder, by path relative to it, sorted. */
export function readTree(dir: string): Record<string, string> {
  const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(e => e.isFile())
    .map(e => path.relative(dir, path.join(e.parentPath ?? (e as any).path, e.name)))
    .sort();
  return Object.fromEntries(files.map(f => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
}
