/**
 * A new cdk8s TypeScript app in a temporary folder outside the repository, the way a user makes
 * one (`cdk8s init typescript-app`'s tsconfig.json and cdk8s.yaml), with this package installed
 * from the tarball `npm pack` makes, and cdk8s, cdk8s-plus-27, constructs, cdk8s-cli, ts-node and
 * typescript from the npm registry, at the versions of this repository's lock file.
 *
 * npm's own cache makes the second install fast (`--prefer-offline`); nothing else is kept.
 */
import { SpawnSyncReturns, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CDK8S_INIT_TSCONFIG } from '../../src/cli/init/_templates';

const ROOT = path.resolve(__dirname, '..', '..');

/** The result of a command. */
export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The command, for messages. */
  readonly command: string;
}

/** Runs a command; never throws on a non-zero exit. */
export function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Run {
  const result: SpawnSyncReturns<string> = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, command: [command, ...args].join(' ') };
}

/** Throws with the command's output unless it succeeded. */
export function check(result: Run): Run {
  if (result.status !== 0) throw new Error(`${result.command} exited ${result.status}:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
  return result;
}

/** Standard error without npm's own warnings about the machine's npm configuration: what a command itself complained of. */
export function withoutNpmWarnings(stderr: string): string {
  return stderr.split('\n').filter(line => line.trim() && !/^npm warn /.test(line)).join('\n');
}

/** The version of a package in this repository's lock file. */
export function lockedVersion(name: string): string {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: { [path: string]: { version?: string } } };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`${name} is not in package-lock.json`);
  return version;
}

/**
 * Packs this repository (`npm pack`, which builds first through `prepack`).
 *
 * @returns the tarball's path, in a new temporary folder
 */
export function packPackage(): string {
  const into = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-pack-'));
  const result = check(run('npm', ['pack', '--json', '--pack-destination', into], ROOT));
  const [{ filename }] = JSON.parse(result.stdout.slice(result.stdout.indexOf('['))) as { filename: string }[];
  return path.join(into, filename);
}

/** The tsconfig.json of `cdk8s init typescript-app` (cdk8s-cli 2.x), as a user's app has it; `kyma-serverless init` writes it too. */
export const INIT_TSCONFIG = CDK8S_INIT_TSCONFIG;

/** A scratch cdk8s app with the package installed. */
export class ScratchApp {
  /** Creates the app and installs everything; takes a minute or two. */
  public static create(tarball: string): ScratchApp {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-app-'));
    const app = new ScratchApp(dir);
    app.write('package.json', `${JSON.stringify({
      name: 'scratch-app',
      version: '1.0.0',
      private: true,
      scripts: { synth: 'kyma-serverless synth' },
    }, null, 2)}\n`);
    app.write('tsconfig.json', `${JSON.stringify(INIT_TSCONFIG, null, 2)}\n`);
    app.write('cdk8s.yaml', 'language: typescript\napp: npx ts-node main.ts\n');
    const install = (args: string[]) => check(run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...args], dir));
    install([
      tarball,
      `cdk8s@${lockedVersion('cdk8s')}`,
      `cdk8s-plus-27@${lockedVersion('cdk8s-plus-27')}`,
      `constructs@${lockedVersion('constructs')}`,
    ]);
    install([
      '--save-dev',
      `cdk8s-cli@${lockedVersion('cdk8s-cli')}`,
      `ts-node@${lockedVersion('ts-node')}`,
      `typescript@${lockedVersion('typescript')}`,
      `@types/node@${lockedVersion('@types/node')}`,
    ]);
    return app;
  }

  private constructor(public readonly dir: string) {}

  /** Writes a file of the app, creating its folder. */
  public write(file: string, content: string): void {
    fs.mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
    fs.writeFileSync(path.join(this.dir, file), content);
  }

  /** Reads a file of the app. */
  public read(file: string): string {
    return fs.readFileSync(path.join(this.dir, file), 'utf8');
  }

  /** Runs an installed command (`node_modules/.bin`). */
  public bin(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Run {
    return run(path.join(this.dir, 'node_modules', '.bin', name), args, this.dir, env);
  }

  /** Removes the app. */
  public remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
