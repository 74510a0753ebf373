import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { nodeHandlerProblem } from '../../src/api/node-handler';

describe('nodeHandlerProblem', () => {
  test.each([
    ['exports.main', 'exports.main = (event) => "hi";'],
    ['module.exports.main', 'module.exports.main = async function (event, context) { return 1; };'],
    ['module.exports = { main } after a declaration', 'function main(event, context) { return 1; }\nmodule.exports = { main };'],
    ['module.exports = { main: function }', 'module.exports = { main: function (event) { return 1; } };'],
    ['an ES module with export function main', 'export async function main(event, context) { return 1; }'],
    ['an ES module with export { main }', 'const main = () => 1;\nexport { main };'],
    ['a re-export, which one file cannot show', 'module.exports = require("./lib");'],
    ['text that is no JavaScript module', 'exports.main = () => 1; //\n\'unterminated'],
  ])('finds main in %s, or leaves it to the build', (_what, source) => {
    expect(nodeHandlerProblem(source)).toBeUndefined();
  });

  test.each([
    ['an arrow function as a property', 'module.exports = { main: () => "hi" };'],
    ['a method', 'module.exports = { async main(event) { return 1; } };'],
    ['no export at all', 'function main() { return 1; }'],
  ])('names a CommonJS handler whose main import() cannot see: %s', (_what, source) => {
    expect(nodeHandlerProblem(source)).toMatch(/^the Node\.js runtime loads the handler with import\(\), which sees only exports written as .* every request gets 500 "User function not loaded"$/);
  });

  test('names an ES module without a named export main, and says a default export is not called', () => {
    expect(nodeHandlerProblem('export const handler = () => 1;')).toMatch(/^the handler has no named export main, which the Node\.js runtime calls, and every request/);
    expect(nodeHandlerProblem('export default { main() { return 1; } };')).toMatch(/calls \(a default export is not called\)/);
  });

  test('agrees with what Node.js itself gives import() (as the runtime loads the handler)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-handler-'));
    try {
      const sources = [
        'module.exports = { main: () => "hi" };', 'module.exports = { async main() {} };', 'exports.main = () => 1;',
        'function main() {}\nmodule.exports = { main };', 'module.exports = { main: function () {} };', 'module.exports.main = () => 1;',
      ];
      const files = sources.map((source, i) => {
        const file = path.join(dir, `handler-${i}.cjs`);
        fs.writeFileSync(file, source);
        return pathToFileURL(file).href;
      });
      // What the runtime's server.mjs does: import() the handler and read `main` of the namespace.
      const script = `const urls = ${JSON.stringify(files)}; const out = [];
        for (const url of urls) out.push(typeof (await import(url)).main === 'function');
        console.log(JSON.stringify(out));`;
      const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      const loads: boolean[] = JSON.parse(result.stdout);
      expect(sources.map((source, i) => ({ source, loads: loads[i] }))).toEqual(sources.map(source => ({ source, loads: nodeHandlerProblem(source) === undefined })));
      expect(loads).toContain(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
