/**
 * A Function's dependencies on this machine, installed from its `package.json` (npm) or
 * `requirements.txt` (pip) when the release installs them:
 *
 * - 1.11.1 installs them once, when it builds the Function's image: here, into a cache folder
 *   named by the hash of what is installed, so that a second start, another Function with the same
 *   dependencies, or a reload that did not change them installs nothing.
 * - 1.13.0 installs them at every Pod start, with the container's own command line
 *   (`npm install --prefer-offline`, devDependencies included; `pip install --target`): here, into
 *   a fresh folder at every start, removed when the Function stops or reloads.
 *
 * npm and pip use the machine's own registry settings (`.npmrc`, `pip.conf`, `PIP_INDEX_URL`),
 * where the cluster uses the stack's registry configuration.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_RELEASE, RuntimeFamily, ServerlessRelease } from '../api';
import { nodeImagePackagesImported, pythonImageRequirementsImported } from '../api/handler-code';
import { DependencyInstallTime, runtimeContract } from '../api/runtime-contract';
import { FunctionRuntime } from '../function/runtime';

/** The web framework of the python312 image, which handlers may import without declaring it. */
export const PYTHON_IMAGE_BOTTLE = 'bottle==0.13.4';

/** A package.json with packages of the runtime image added to its dependencies (as the image has them beside it). */
function withImagePackages(dependencies: string, packages: { readonly [name: string]: string }): string {
  let parsed: { dependencies?: { [name: string]: string } };
  try {
    parsed = dependencies.trim() === '' ? {} : JSON.parse(dependencies);
  } catch {
    return dependencies;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return dependencies;
  return JSON.stringify({ ...parsed, dependencies: { ...parsed.dependencies, ...packages } }, null, 2);
}

/** The cache folder when none is given: `KYMA_SERVERLESS_CACHE`, else `cdk8s-kyma-serverless` in the user's cache folder. */
export function defaultCacheDirectory(): string {
  return process.env.KYMA_SERVERLESS_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'cdk8s-kyma-serverless');
}

/** A dependency installation that failed: the tool's words, and what to check. */
export class DependencyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DependencyError';
  }
}

/** What a Function needs installed. */
export interface DependencyRequest {
  readonly runtime: FunctionRuntime;
  /** The text of `package.json` or `requirements.txt`, when the Function has one. */
  readonly dependencies?: string;
  /** The handler's code: a Python handler that imports bottle gets the image's bottle. */
  readonly handler: string;
  /** The cache folder. */
  readonly cacheDirectory: string;
  /** The Python interpreter, for pip. */
  readonly python: string;
  /** Receives the installers' output, line by line. */
  readonly log: (line: string) => void;
  /**
   * A folder with the package registry configuration to install with: `.npmrc` for npm,
   * `pip.conf` for pip (what the Secret `serverless-package-registry-config` holds).
   *
   * @default - this machine's own npm and pip settings
   */
  readonly registryConfig?: string;
  /**
   * The release whose way of installing is followed.
   *
   * @default DEFAULT_RELEASE
   */
  readonly release?: ServerlessRelease;
}

/** Where installed dependencies are. */
export interface InstalledDependencies {
  /** The folder to resolve packages from (`node_modules` or pip's target), when anything was installed. */
  readonly path?: string;
  /** Whether the cache already held them. */
  readonly cached: boolean;
  /** Seconds the installation took (0 when nothing was installed). */
  readonly seconds: number;
  /** Removes what this start installed (a release that installs at every start); does nothing otherwise. */
  readonly dispose: () => void;
}

const KEEP = () => undefined;

/** The packages a `package.json` names in `dependencies`, and in `devDependencies` when they are installed too. */
function npmPackages(text: string, file: string, installTime: DependencyInstallTime, devDependencies: boolean): { [name: string]: string } {
  // What the build accepts; the Pod of a release that installs at start writes even blank lines as they are.
  if (installTime === DependencyInstallTime.BUILD && !text.trim()) return {};
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (e) {
    const where = installTime === DependencyInstallTime.BUILD
      ? 'the build in the cluster fails on it too'
      : 'npm install fails on it at every start of the Function\'s Pods, which never become ready';
    throw new DependencyError(`${file} is not valid JSON (${(e as Error).message}): ${where}; fix the file, or leave the dependencies empty`);
  }
  const packages = (key: string) => {
    const named = (manifest as { [key: string]: unknown } | null)?.[key];
    return typeof named === 'object' && named !== null ? named as { [name: string]: string } : {};
  };
  return { ...packages('dependencies'), ...(devDependencies ? packages('devDependencies') : {}) };
}

/** The requirement lines of a `requirements.txt`, without comments and blank lines. */
function pipRequirements(text: string): string[] {
  return text.split(/\r?\n/).map(l => l.replace(/(^|\s)#.*$/, '').trim()).filter(Boolean);
}

/** What an installer did: its exit code and last lines. */
interface Outcome {
  readonly code: number;
  /** The last lines of its output. */
  readonly tail: string[];
  /** Why it did not start. */
  readonly error?: Error;
}

function install(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise(resolve => {
    // Kept, not logged: a failure shows the last lines once, in its error; a success needs none of them.
    const tail: string[] = [];
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split(/\r?\n/).filter(Boolean)) {
        tail.push(line);
        if (tail.length > 15) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', error => resolve({ code: -1, tail, error }));
    child.on('close', code => resolve({ code: code ?? 1, tail }));
  });
}

/**
 * Installs a Function's dependencies as its release does: into the cache unless they are there
 * already (a release that builds images), or into a fresh folder (a release that installs at
 * every Pod start).
 *
 * @returns where they are; nothing is installed for a Function without dependencies
 * @throws DependencyError when the file does not parse or the installer fails, with its output and what to check
 */
export async function installDependencies(request: DependencyRequest): Promise<InstalledDependencies> {
  const { runtime } = request;
  let dependencies = request.dependencies ?? '';
  const contract = runtimeContract(request.release ?? DEFAULT_RELEASE);
  const atStart = contract.installTime === DependencyInstallTime.POD_START;
  const file = runtime.files.dependencies;
  let lines: string[];
  let kind: string;
  if (runtime.family === RuntimeFamily.NODEJS) {
    // The image's own packages the handler imports: the Pod finds them in /usr/src/app/node_modules.
    const fromImage = nodeImagePackagesImported({ runtime: runtime.name, source: request.handler, dependencies, release: contract.release });
    if (Object.keys(fromImage).length) dependencies = withImagePackages(dependencies, fromImage);
    const packages = npmPackages(dependencies, file, contract.installTime, contract.npmInstallsDevDependencies);
    if (!Object.keys(packages).length) return { cached: false, seconds: 0, dispose: KEEP };
    kind = `node${process.versions.node.split('.')[0]}`;
    lines = [dependencies];
  } else {
    // The image's own packages the handler imports (its web framework, requests, ...): the Pod finds them in the image.
    lines = [...pipRequirements(dependencies), ...pythonImageRequirementsImported({ runtime: runtime.name, source: request.handler, dependencies, release: contract.release })];
    if (!lines.length) return { cached: false, seconds: 0, dispose: KEEP };
    kind = `python-${await pythonVersion(request.python)}`;
  }
  const registry = ['.npmrc', 'pip.conf'].map(f => request.registryConfig && fs.existsSync(path.join(request.registryConfig, f))
    ? fs.readFileSync(path.join(request.registryConfig, f), 'utf8') : '').join('\0');
  const hash = createHash('sha256').update(`${kind}\0${lines.join('\n')}${registry ? `\0${registry}` : ''}`).digest('hex').slice(0, 32);
  const root = path.join(request.cacheDirectory, atStart ? 'starts' : 'dependencies');
  const target = path.join(root, `${kind}-${hash}`);
  const installed = (folder: string) => path.join(folder, runtime.family === RuntimeFamily.NODEJS ? 'node_modules' : 'site-packages');
  if (!atStart && fs.existsSync(path.join(target, '.complete'))) return { path: installed(target), cached: true, seconds: 0, dispose: KEEP };

  fs.mkdirSync(root, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(root, `.${kind}-${hash}-`));
  const started = Date.now();
  let keep = false;
  try {
    let outcome: Outcome;
    let command: string;
    const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: 'false', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
    const npmrc = request.registryConfig && path.join(request.registryConfig, '.npmrc');
    const pipConf = request.registryConfig && path.join(request.registryConfig, 'pip.conf');
    // As the Pod does: npm and pip read the Secret's files instead of the user's own.
    if (npmrc && fs.existsSync(npmrc)) env.NPM_CONFIG_USERCONFIG = npmrc;
    if (pipConf && fs.existsSync(pipConf)) env.PIP_CONFIG_FILE = pipConf;
    if (runtime.family === RuntimeFamily.NODEJS) {
      fs.writeFileSync(path.join(scratch, 'package.json'), dependencies);
      // The images set no NODE_ENV: with production here, npm would leave out the devDependencies the Pod installs.
      if (contract.npmInstallsDevDependencies) delete env.NODE_ENV;
      command = `npm ${contract.npmInstall.join(' ')}`;
      request.log(atStart
        ? `installing the dependencies of ${file} at start, as every Pod of Serverless ${contract.release} does (${command})`
        : `installing the dependencies of ${file} (${command}), once, as the image build of Serverless ${contract.release} does`);
      outcome = await install('npm', [...contract.npmInstall, '--no-audit', '--no-fund', '--no-package-lock'], scratch, env);
    } else {
      fs.writeFileSync(path.join(scratch, 'requirements.txt'), `${lines.join('\n')}\n`);
      // Into a folder of its own (--target), in both releases: this machine's Python stays as it is.
      // pip's cache is kept (the Pods use --no-cache-dir and download every package at every start).
      command = `${request.python} -m pip install --target site-packages -r requirements.txt`;
      request.log(atStart
        ? `installing the requirements of ${file} at start, as every Pod of Serverless ${contract.release} does `
          + `(pip ${contract.pipInstall.join(' ')}; here: ${command})`
        : `installing the requirements of ${file} (${command})`);
      const pip = ['-m', 'pip', 'install', '--no-input', '--target', 'site-packages', '-r', 'requirements.txt'];
      outcome = await install(request.python, pip, scratch, env);
    }
    if (outcome.error || outcome.code !== 0) {
      const what = runtime.family === RuntimeFamily.NODEJS
        ? `check the packages and versions in ${file}, and that npm reaches its registry (.npmrc, npm config get registry)`
        : `check the names and versions in ${file}, and that pip reaches its index (pip.conf, PIP_INDEX_URL)`;
      const cause = outcome.error ? `could not start: ${outcome.error.message}` : `exited ${outcome.code}`;
      const pod = atStart ? '; in the cluster the Pod fails at every start the same way' : '';
      throw new DependencyError(`${command} ${cause}: ${what}${pod}${outcome.tail.length ? `\n    ${outcome.tail.join('\n    ')}` : ''}`);
    }
    const seconds = (Date.now() - started) / 1000;
    if (atStart) {
      keep = true;
      return { path: installed(scratch), cached: false, seconds, dispose: () => fs.rmSync(scratch, { recursive: true, force: true }) };
    }
    fs.writeFileSync(path.join(scratch, '.complete'), '');
    try {
      fs.renameSync(scratch, target);
    } catch {
      // Another start installed the same dependencies meanwhile: theirs are as good.
      if (!fs.existsSync(path.join(target, '.complete'))) {
        throw new DependencyError(`Cannot move the dependencies into ${target}: check that the folder is writable`);
      }
    }
    return { path: installed(target), cached: false, seconds, dispose: KEEP };
  } finally {
    if (!keep) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

const pythonVersions = new Map<string, Promise<string>>();

/**
 * The version of a Python interpreter, `major.minor`.
 *
 * @throws DependencyError when it does not run, or is older than 3.11
 */
export function pythonVersion(python: string): Promise<string> {
  if (!pythonVersions.has(python)) {
    pythonVersions.set(python, new Promise((resolve, reject) => {
      const child = spawn(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => out += c.toString());
      child.on('error', e => reject(new DependencyError(`Cannot run ${python} (${e.message}): `
        + 'install Python 3.11 or newer, or name the interpreter with --python')));
      child.on('close', () => {
        const version = out.trim();
        const [major, minor] = version.split('.').map(Number);
        if (!(major === 3 && minor >= 11)) {
          reject(new DependencyError(`${python} is Python ${version || 'of an unknown version'}, and the python312 runtime needs 3.11 or newer here: `
            + 'install a newer Python, or name one with --python'));
        } else {
          resolve(version);
        }
      });
    }));
    // A failure is not remembered: the user may install Python and try again in the same process.
    pythonVersions.get(python)!.catch(() => pythonVersions.delete(python));
  }
  return pythonVersions.get(python)!;
}
