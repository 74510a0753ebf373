/**
 * FunctionSource: where a Function's code comes from.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RUNTIME_FILES, RuntimeFamily } from '../api/runtimes';
import { folderFileProblems } from '../api/handler-code';
import { displayPath } from './_paths';
import { FunctionRuntime } from './runtime';

/** How the controller authenticates to a Git repository (`spec.source.gitRepository.auth.type`). */
export enum GitAuthType {
  /** A user name and a password or token: the Secret has the keys `username` and `password`. */
  BASIC = 'basic',
  /** An SSH private key: the Secret has the key `key` (and `password` for an encrypted key). */
  KEY = 'key',
}

/** Credentials for a private Git repository. */
export interface GitRepositoryAuth {
  /** The kind of credentials. */
  readonly type: GitAuthType;
  /** The Secret, in the Function's namespace, that holds them. */
  readonly secretName: string;
}

/** Options of {@link FunctionSource.fromGitRepository}. */
export interface GitRepositorySourceOptions {
  /**
   * The URL to clone: `https://`, `http://`, `ssh://`, `git://`, or `git@host:path`.
   *
   * @see https://kyma-project.io/#/serverless-manager/user/resources/06-10-function-cr
   */
  readonly url: string;
  /**
   * The folder of the repository that holds the handler and its dependencies file.
   *
   * @default '/'
   */
  readonly baseDir?: string;
  /** The branch, tag or commit to build. The controller rebuilds when a branch moves. */
  readonly reference: string;
  /**
   * Credentials for a private repository.
   *
   * @default - a public repository
   */
  readonly auth?: GitRepositoryAuth;
}

/** `spec.source.inline` of a Function. */
export interface InlineSourceConfig {
  /** The handler's code. */
  readonly source: string;
  /**
   * The dependencies file's content (`package.json` or `requirements.txt`).
   *
   * @default - none
   */
  readonly dependencies?: string;
}

/** `spec.source.gitRepository` of a Function. */
export interface GitRepositorySourceConfig {
  /** The repository's URL. */
  readonly url: string;
  /** The folder of the handler in the repository. */
  readonly baseDir: string;
  /** The branch, tag or commit. */
  readonly reference: string;
  /**
   * The credentials of a private repository.
   *
   * @default - a public repository
   */
  readonly auth?: GitRepositoryAuthConfig;
}

/** `spec.source.gitRepository.auth` of a Function. */
export interface GitRepositoryAuthConfig {
  /** `basic` or `key`. */
  readonly type: string;
  /** The Secret holding the credentials. */
  readonly secretName: string;
}

/** What a source renders into a Function: exactly one of `inline` and `gitRepository`. */
export interface FunctionSourceConfig {
  /** Code and dependencies carried in the Function (`spec.source.inline`). */
  readonly inline?: InlineSourceConfig;
  /** A Git repository the controller clones (`spec.source.gitRepository`). */
  readonly gitRepository?: GitRepositorySourceConfig;
  /** SHA-256 of the files a source read from disk, in hex. */
  readonly sha256?: string;
  /**
   * The folder the handler and its dependencies file were read from, as problems of the code name it.
   *
   * @default - the code was not read from a folder
   */
  readonly directory?: string;
}

/**
 * The source of a Function's code: given inline, read from a folder at synth, or cloned by the
 * controller from a Git repository.
 *
 * @see https://kyma-project.io/#/serverless-manager/user/resources/06-10-function-cr
 */
export abstract class FunctionSource {
  /**
   * Code given as text, with its dependencies file.
   *
   * @param source the handler: `handler.js` for Node.js (exporting `main(event, context)`), `handler.py` for Python
   * @param dependencies the dependencies file: `package.json` text for Node.js, `requirements.txt` text for Python
   * (@default - none: Node.js gets an empty `package.json`)
   */
  public static fromInline(source: string, dependencies?: string): FunctionSource {
    return new InlineSource(source, dependencies);
  }

  /**
   * Code read at synth from a folder: `handler.js` and `package.json` for Node.js, `handler.py`
   * and `requirements.txt` for Python. The dependencies file is optional. The files are put
   * into the Function inline, so the folder may hold no other source files of the language
   * (tests, `node_modules` and subfolders are ignored).
   *
   * @param directory the folder, relative to the working directory of synth or absolute
   */
  public static fromDirectory(directory: string): FunctionSource {
    return new DirectorySource(directory);
  }

  /**
   * Code the controller clones from a Git repository and rebuilds when the reference moves.
   *
   * @param options the repository, folder and reference
   */
  public static fromGitRepository(options: GitRepositorySourceOptions): FunctionSource {
    return new GitRepositorySource(options);
  }

  /**
   * Renders the source for a Function of a runtime.
   *
   * @param runtime the Function's runtime
   * @throws when the source does not fit the runtime, or its folder cannot be read
   */
  public abstract bind(runtime: FunctionRuntime): FunctionSourceConfig;
}

class InlineSource extends FunctionSource {
  constructor(private readonly source: string, private readonly dependencies: string | undefined) {
    super();
  }

  public bind(): FunctionSourceConfig {
    return { inline: { source: this.source, ...(this.dependencies !== undefined ? { dependencies: this.dependencies } : {}) } };
  }
}

function isTestFile(file: string): boolean {
  return /\.(test|spec)\.[^.]+$/.test(file) || /^test_.*\.py$/.test(file) || /_test\.py$/.test(file);
}

/** Reads a text file the same way on every machine: no byte-order mark, `\n` line ends. */
function readText(file: string): string {
  return fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
}

class DirectorySource extends FunctionSource {
  constructor(private readonly directory: string) {
    super();
  }

  public bind(runtime: FunctionRuntime): FunctionSourceConfig {
    const dir = displayPath(this.directory);
    if (!fs.existsSync(dir)) throw new Error(`folder '${dir}' does not exist`);
    if (!fs.statSync(dir).isDirectory()) throw new Error(`'${dir}' is not a folder`);
    const files = fs.readdirSync(dir, { withFileTypes: true })
      .filter(e => e.isFile() && !e.name.startsWith('.'))
      .map(e => e.name)
      .sort();
    const { handler, dependencies, sourceExtensions } = runtime.files;
    const misnamed = folderFileProblems(files, runtime.family);
    if (misnamed.length) throw new Error(misnamed.map(p => `${path.join(dir, p.file)}: ${p.message}`).join('\n  '));
    if (!files.includes(handler)) {
      const other = Object.entries(RUNTIME_FILES).find(([family, f]) => family !== runtime.family && files.includes(f.handler));
      if (other) {
        const [family, f] = other;
        const suggestion = family === RuntimeFamily.PYTHON ? 'FunctionRuntime.PYTHON_312' : 'FunctionRuntime.NODEJS_22';
        throw new Error(`folder '${dir}' holds ${f.handler}, a ${family} handler, but the runtime is ${runtime.name}, which needs ${handler}: use a ${family} runtime such as ${suggestion}, or write ${handler}`);
      }
      throw new Error(`folder '${dir}' has no ${handler}: a ${runtime.name} Function needs ${handler}${files.length ? ` (found ${files.join(', ')})` : ' (the folder is empty)'}`);
    }
    const strays = files.filter(f => f !== handler && sourceExtensions.includes(path.extname(f)) && !isTestFile(f));
    if (strays.length) {
      throw new Error(`folder '${dir}' holds ${strays.join(', ')} besides ${handler}: an inline source carries only ${handler} and ${dependencies}, `
        + 'so the Function could not load them. Move their code into the handler, or use FunctionSource.fromGitRepository()');
    }
    const source = readText(path.join(dir, handler));
    const deps = files.includes(dependencies) ? readText(path.join(dir, dependencies)) : undefined;
    const hash = createHash('sha256');
    hash.update(`${handler}\0${source}\0`);
    if (deps !== undefined) hash.update(`${dependencies}\0${deps}\0`);
    return {
      inline: { source, ...(deps !== undefined ? { dependencies: deps } : {}) },
      sha256: hash.digest('hex'),
      directory: dir,
    };
  }
}

class GitRepositorySource extends FunctionSource {
  constructor(private readonly options: GitRepositorySourceOptions) {
    super();
  }

  public bind(): FunctionSourceConfig {
    const { url, baseDir = '/', reference, auth } = this.options;
    return {
      gitRepository: {
        url,
        baseDir,
        reference,
        ...(auth ? { auth: { type: auth.type, secretName: auth.secretName } } : {}),
      },
    };
  }
}
