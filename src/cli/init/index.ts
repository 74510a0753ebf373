/**
 * `kyma-serverless init [dir]`: a new cdk8s TypeScript app with the stack, two function folders
 * and a jest test of one through the testing kit, which installs, synthesizes and tests offline
 * (nothing but npm packages is downloaded; no `cdk8s import`), and whose `.gitignore` keeps
 * `dist/`, which the GitOps flow commits, and leaves out `.env`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Argument, Command } from 'commander';
import { packageRoot, packageVersion } from '../../_package-root';
import { DEFAULT_RELEASE, RELEASES, ServerlessRelease, parseRelease } from '../../api';
import { CliError } from '../errors';
import { OutputFormat, isStructured, print, printDocument } from '../_output';
import { INIT_RELEASE, NEXT_COMMANDS, PACKAGE_NAME, appFiles } from './_templates';

/** Options of {@link init}. */
export interface InitOptions {
  /**
   * Write into a folder that is not empty, replacing the files the app has.
   *
   * @default false
   */
  readonly force?: boolean;
  /**
   * How the app's package.json names cdk8s-kyma-serverless: a version range, or the path of a
   * tarball `npm pack` made (written as `file:` and the path from the app).
   *
   * @default - the tarball this command was installed from, when it was; else `^` and this package's version
   */
  readonly package?: string;
  /**
   * The Serverless release the app's stack deploys, as `--release` gives it (`1.11.1`): main.ts
   * names it unless it is the construct's default (1.11.1), and the Node.js example runs on the
   * newest Node.js runtime of that release.
   *
   * @default '1.13.0', upstream's current release (INIT_RELEASE)
   */
  readonly release?: string;
}

/** What {@link init} wrote. */
export interface InitResult {
  /** The app's folder. */
  readonly dir: string;
  /** The files written, relative to it, with `/`. */
  readonly files: string[];
  /** The files that were there and were replaced (with `force`). */
  readonly replaced: string[];
  /** How package.json names cdk8s-kyma-serverless. */
  readonly packageSpec: string;
  /** The Serverless release the app's stack deploys. */
  readonly release: ServerlessRelease;
  /** The commands that install, synthesize and deploy the app, run in its folder. */
  readonly next: string[];
}

/** An npm package name from a folder's name: lower case, and only the characters npm allows. */
export function appPackageName(dir: string): string {
  const name = path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9._~-]+/g, '-').replace(/^[._-]+|[._-]+$/g, '').slice(0, 214);
  return name || 'cdk8s-app';
}

/**
 * The tarball the running command was installed from: the `file:` spec under which the project
 * around `node_modules/cdk8s-kyma-serverless` (`npx --package <tarball>`'s too) depends on it.
 *
 * @returns its absolute path, or undefined when it was not installed from a tarball that is still there
 */
function installedFromTarball(): string | undefined {
  const root = packageRoot();
  if (path.basename(path.dirname(root)) !== 'node_modules') return undefined;
  const project = path.dirname(path.dirname(root));
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as { [key: string]: { [name: string]: string } | undefined };
    const spec = manifest.dependencies?.[PACKAGE_NAME] ?? manifest.devDependencies?.[PACKAGE_NAME];
    if (!spec?.startsWith('file:') || !/\.tgz$/.test(spec)) return undefined;
    const tarball = path.resolve(project, spec.slice('file:'.length));
    return fs.existsSync(tarball) ? tarball : undefined;
  } catch {
    return undefined;
  }
}

/** The spec package.json gives: a range as it is; a tarball (or `file:` spec) as `file:` and its path from the app. */
function packageSpec(dir: string, given: string | undefined): string {
  const tarball = given === undefined ? installedFromTarball()
    : /\.tgz$/.test(given) ? path.resolve(given.replace(/^file:/, '')) : undefined;
  if (given !== undefined && tarball === undefined) return given;
  if (tarball === undefined) return `^${packageVersion()}`;
  if (!fs.existsSync(tarball)) throw new CliError(`--package ${given}: no such file ${tarball}: give the tarball npm pack wrote, or a version range such as ^${packageVersion()}`);
  return `file:${path.relative(dir, tarball).split(path.sep).join('/')}`;
}

/**
 * Writes a new app into a folder, creating it.
 *
 * @param dir the app's folder
 * @returns what was written
 * @throws CliError when the folder holds anything (a `.git` folder aside) and `force` is not given,
 * naming the files that would be replaced; or when it is a file
 */
export function init(dir: string, options: InitOptions = {}): InitResult {
  const target = path.resolve(dir);
  if (fs.existsSync(target) && !fs.statSync(target).isDirectory()) throw new CliError(`${dir} is a file: give a new folder for the app`);
  let release: ServerlessRelease;
  try {
    release = options.release === undefined ? INIT_RELEASE : parseRelease(options.release, '--release');
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const spec = packageSpec(target, options.package);
  const files = appFiles({ name: appPackageName(target), packageSpec: spec, release });
  const names = Object.keys(files);
  const replaced = names.filter(f => fs.existsSync(path.join(target, f)));
  const present = fs.existsSync(target) ? fs.readdirSync(target).filter(f => f !== '.git').sort() : [];
  if (present.length && !options.force) {
    const shown = dir === '.' ? 'The current folder' : dir;
    throw new CliError(replaced.length
      ? `${shown} is not empty, and init would replace ${replaced.join(', ')}: give a new folder, or --force to replace them`
      : `${shown} is not empty (it holds ${present.slice(0, 5).join(', ')}${present.length > 5 ? ', ...' : ''}): `
        + 'give a new folder, or --force to write the app beside what is there');
  }
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    fs.writeFileSync(path.join(target, file), text);
  }
  return { dir: target, files: names, replaced, packageSpec: spec, release, next: [...NEXT_COMMANDS] };
}

/** Adds `init` to a program. */
export function addInitCommand(program: Command): void {
  program.command('init')
    .description('Write a new cdk8s app with the Kyma Serverless stack and a Function per runtime family; it installs and synthesizes '
      + 'without downloading anything but npm packages')
    .addArgument(new Argument('[dir]', 'folder of the new app, created if needed').default('.', 'the current folder'))
    .option('--force', 'write into a folder that is not empty, replacing the files the app has')
    .option('--package <spec>', 'how package.json names cdk8s-kyma-serverless: a version range, or the path of the tarball npm pack '
      + `wrote (default: the tarball this command was installed from, else ^${packageVersion()})`)
    .option('--release <version>', `the Kyma Serverless release the app's stack deploys: ${RELEASES.join(' or ')} (default: ${INIT_RELEASE}, `
      + `upstream's current, buildless release; ${DEFAULT_RELEASE} is the last build-based one)`)
    .addHelpText('after', `
It writes package.json (cdk8s, cdk8s-plus-27 and constructs at the versions this package is tested
with; "synth": "kyma-serverless synth"; "test": "jest", with jest and ts-jest), cdk8s.yaml (output
dist, no imports), tsconfig.json (as cdk8s init writes it), main.ts (the stack, the Function
namespace "functions", and a Function per folder of functions/), functions/hello-node/ and
functions/hello-python/, jest.config.js and test/hello-node.test.ts (the testing kit), a .gitignore
that keeps dist/ and leaves out .env, and a README. A folder that holds anything but .git is
refused unless --force is given.

The stack deploys Kyma Serverless ${INIT_RELEASE}, upstream's current release (buildless: no build Job
or registry; dependencies install at every Pod start): main.ts gives the stack release:
ServerlessRelease.V1_13_0, hello-node runs on nodejs24 and hello-python on python312, runtimes with
support left. --release ${DEFAULT_RELEASE} picks the last build-based release (images built once by a
Job, Pods that install nothing at start; no more fixes, and nodejs22 as its newest Node.js): main.ts
then gives the stack no release, ${DEFAULT_RELEASE} being ServerlessStack's default. The app's README
says how to change the release later.

Then, in the app's folder:
  ${NEXT_COMMANDS.join('\n  ')}

Examples:
  npx --package ./${PACKAGE_NAME}-${packageVersion()}.tgz kyma-serverless init my-app
  kyma-serverless init my-app --release 1.11.1   # the build-based release, with a nodejs22 Function
  kyma-serverless init my-app -o json         # the files written, for scripts
`)
    .action((dir: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<InitOptions & { output: OutputFormat }>();
      const result = init(dir, options);
      if (isStructured(options.output)) {
        printDocument(result, options.output);
        return;
      }
      const relative = path.relative(process.cwd(), result.dir);
      const where = !relative ? '.' : relative.startsWith('..') || path.isAbsolute(relative) ? result.dir : relative;
      print(`Wrote a cdk8s app to ${where}/ (${PACKAGE_NAME} ${result.packageSpec}, Kyma Serverless ${result.release}):`);
      for (const file of result.files) print(`  ${file}${result.replaced.includes(file) ? '  (replaced)' : ''}`);
      print('\nNext:');
      if (where !== '.') print(`  cd ${where}`);
      for (const next of result.next) print(`  ${next}`);
    });
}
