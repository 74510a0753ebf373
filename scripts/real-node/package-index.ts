/**
 * The Python package index of build-images.sh (package-index.py wrote it) served over HTTP from this
 * machine: PyPI is unreachable here, so the python312 Pods' pip reads this one, named by the
 * `pip.conf` of the package registry Secret (upstream's own hook for a private index).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';

/** The server; {@link stop} ends it. */
export class PackageIndex {
  /**
   * Serves the files under `root` (its `simple/` folder is the index) on a free port.
   *
   * @param host the address it listens on and its URL names (a Pod reaches the node's bridge address, not loopback)
   */
  public static async start(root: string, host: string): Promise<PackageIndex> {
    if (!fs.existsSync(path.join(root, 'simple', 'index.html'))) throw new Error(`no package index in ${root}: run scripts/real-node/build-images.sh python312`);
    const downloads: string[] = [];
    const server = http.createServer((request, response) => {
      const wanted = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
      let file = path.join(root, path.normalize(wanted));
      if (!file.startsWith(`${root}${path.sep}`)) {
        response.writeHead(404).end();
        return;
      }
      if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
      if (!fs.existsSync(file)) {
        response.writeHead(404).end('not found\n');
        return;
      }
      if (file.endsWith('.whl')) downloads.push(path.basename(file));
      response.writeHead(200, { 'Content-Type': file.endsWith('.html') ? 'text/html' : 'application/octet-stream' });
      fs.createReadStream(file).pipe(response);
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
    return new PackageIndex(server, `http://${host}:${(server.address() as AddressInfo).port}/simple/`, downloads);
  }

  private constructor(private readonly server: http.Server, public readonly url: string, private readonly downloads: string[]) {}

  /** pip's configuration for this index (the `pip.conf` key of the package registry Secret). */
  public pipConf(): string {
    return `[global]\nindex-url = ${this.url}\ntrusted-host = ${new URL(this.url).hostname}\n`;
  }

  /** The wheels downloaded so far, each once per download. */
  public downloaded(): readonly string[] {
    return [...this.downloads];
  }

  public async stop(): Promise<void> {
    await new Promise<void>(resolve => this.server.close(() => resolve()));
  }
}
