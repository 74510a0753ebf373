import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { PackageIndex } from '../../scripts/real-node/package-index';

describe('the Python package index of npm run e2e:node', () => {
  let root: string;
  let index: PackageIndex;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'package-index-'));
    fs.mkdirSync(path.join(root, 'simple', 'requests'), { recursive: true });
    fs.writeFileSync(path.join(root, 'simple', 'index.html'), '<a href="requests/">requests</a>');
    fs.writeFileSync(path.join(root, 'simple', 'requests', 'index.html'), '<a href="requests-2.32.3-py3-none-any.whl">requests-2.32.3-py3-none-any.whl</a>');
    fs.writeFileSync(path.join(root, 'simple', 'requests', 'requests-2.32.3-py3-none-any.whl'), 'wheel bytes');
    fs.writeFileSync(path.join(os.tmpdir(), 'outside-the-index.txt'), 'secret');
    index = await PackageIndex.start(root, '127.0.0.1');
  });

  afterAll(async () => {
    await index.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('pip.conf names the index and trusts its host (plain HTTP on the node)', () => {
    expect(index.pipConf()).toBe(`[global]\nindex-url = ${index.url}\ntrusted-host = 127.0.0.1\n`);
    expect(index.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/simple\/$/);
  });

  test('a project folder answers with its index page, a wheel with its bytes, and downloads are counted', async () => {
    const page = await fetch(`${index.url}requests/`);
    expect(page.headers.get('content-type')).toBe('text/html');
    expect(await page.text()).toContain('requests-2.32.3-py3-none-any.whl');
    const wheel = await fetch(`${index.url}requests/requests-2.32.3-py3-none-any.whl`);
    expect(await wheel.text()).toBe('wheel bytes');
    expect(index.downloaded()).toEqual(['requests-2.32.3-py3-none-any.whl']);
  });

  test('what is not in the index is not found, and nothing outside its folder is served', async () => {
    expect((await fetch(`${index.url}numpy/`)).status).toBe(404);
    const url = new URL(index.url);
    const outside = await new Promise<number>((resolve, reject) => {
      // A raw request: fetch would normalize the dots away before sending.
      http.get({ host: url.hostname, port: url.port, path: '/../../outside-the-index.txt' }, r => resolve(r.statusCode ?? 0)).on('error', reject);
    });
    expect(outside).toBe(404);
  });

  test('a folder without an index is refused at start', async () => {
    await expect(PackageIndex.start(path.join(root, 'simple', 'requests'), '127.0.0.1')).rejects.toThrow(/no package index/);
  });
});
