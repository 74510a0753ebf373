/**
 * Git repositories served over HTTP from this machine, for Functions with a Git source: `git
 * http-backend` (Git's own smart-HTTP server, a CGI program) behind a small Node.js server that asks
 * for HTTP basic auth on the repositories under `private/`, as a private Git host would.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';

/** The credentials the server asks for on `private/` repositories. */
export interface BasicAuth {
  readonly username: string;
  readonly password: string;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=real-controller-run', '-c', 'user.email=run@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });
}

/** A repository: a work tree to commit in, pushed to the bare repository the server serves. */
export class GitRepository {
  constructor(private readonly work: string, public readonly url: string) {}

  /** Writes files, commits them on a branch and pushes it; returns the commit. */
  public commit(files: { readonly [file: string]: string }, message: string, branch = 'main'): string {
    git(this.work, 'checkout', '-q', '-B', branch);
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(this.work, file)), { recursive: true });
      fs.writeFileSync(path.join(this.work, file), text);
    }
    git(this.work, 'add', '-A');
    git(this.work, 'commit', '-q', '--allow-empty', '-m', message);
    git(this.work, 'push', '-q', '--force', 'origin', branch);
    return git(this.work, 'rev-parse', 'HEAD').trim();
  }

  /** Tags the current commit and pushes the tag. */
  public tag(name: string): void {
    git(this.work, 'tag', '-f', name);
    git(this.work, 'push', '-q', '--force', 'origin', name);
  }
}

/** The server; {@link stop} ends it. */
export class GitServer {
  /**
   * Starts a server for the repositories under `root` on a free port.
   *
   * @param host the address it listens on and its URLs name (a Pod reaches the node's bridge address, not loopback)
   */
  public static async start(root: string, auth: BasicAuth, host = '127.0.0.1'): Promise<GitServer> {
    fs.mkdirSync(root, { recursive: true });
    const server = http.createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname.startsWith('/private/')) {
        const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
        if (request.headers.authorization !== expected) {
          response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('authentication required\n');
          return;
        }
      }
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: decodeURIComponent(url.pathname),
          QUERY_STRING: url.search.slice(1),
          REQUEST_METHOD: request.method ?? 'GET',
          CONTENT_TYPE: request.headers['content-type'] ?? '',
          REMOTE_USER: url.pathname.startsWith('/private/') ? auth.username : '',
          REMOTE_ADDR: request.socket.remoteAddress ?? '',
          HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
          GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
        },
      });
      request.pipe(cgi.stdin);
      // A CGI answer: headers, a blank line, the body.
      let head = Buffer.alloc(0);
      let headersDone = false;
      cgi.stdout.on('data', (chunk: Buffer) => {
        if (headersDone) {
          response.write(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        headersDone = true;
        let status = 200;
        for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
          const [name, ...rest] = line.split(':');
          const value = rest.join(':').trim();
          if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
          else response.setHeader(name, value);
        }
        response.writeHead(status);
        response.write(head.subarray(end + 4));
      });
      cgi.on('close', () => response.end());
      cgi.stderr.on('data', () => undefined);
    });
    await new Promise<void>(resolve => server.listen(0, host, resolve));
    return new GitServer(root, server, host);
  }

  private constructor(private readonly root: string, private readonly server: http.Server, private readonly host: string) {}

  /** The base URL, such as `http://127.0.0.1:41234`. */
  public get url(): string {
    return `http://${this.host}:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Creates a repository with one commit on `main`.
   *
   * @param name its path under the root, such as `functions.git` or `private/orders.git` (asks for auth)
   * @param files what its first commit holds
   */
  public create(name: string, files: { readonly [file: string]: string }): GitRepository {
    const bare = path.join(this.root, name);
    fs.mkdirSync(bare, { recursive: true });
    git(bare, 'init', '-q', '--bare');
    git(bare, 'config', 'http.receivepack', 'true');
    const work = fs.mkdtempSync(path.join(path.dirname(this.root), 'work-'));
    git(work, 'init', '-q');
    git(work, 'remote', 'add', 'origin', bare);
    const repository = new GitRepository(work, `${this.url}/${name}`);
    repository.commit(files, 'first commit');
    return repository;
  }

  /** Stops the server. */
  public async stop(): Promise<void> {
    await new Promise<void>(resolve => this.server.close(() => resolve()));
  }
}
