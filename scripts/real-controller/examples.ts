/**
 * The documentation's examples as the run applies them: every ```ts block of README.md and of
 * docs/*.md, synthesized in a user's cdk8s app with the packed package installed (the e2e suite's
 * scratch app), and their Functions' Git sources served from this machine.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ScratchApp, check, packPackage } from '../../test/e2e/scratch-app';
import { DEFAULT_RELEASE, ServerlessRelease } from '../../src/api';
import { parseManifests } from '../../src/policy/_manifest-files';
import { GitServer } from './git-server';

const ROOT = path.resolve(__dirname, '..', '..');

/** A TypeScript example of the docs and the objects it synthesizes. */
export interface Example {
  /** Where it is, such as `README.md:293`. */
  readonly where: string;
  readonly code: string;
  /** What `cdk8s synth` wrote, every file. */
  objects: any[];
  /** Why synth refused the example under the run's release (an example of what that release lacks), if it did. */
  refused?: string;
}

/**
 * Every ```ts block of README.md and docs/*.md that is a whole app (it synthesizes), in order.
 * Not docs/api/, which TypeDoc generates from the TSDoc, and not the test files that
 * docs/develop-locally.md shows.
 */
export function docExamples(): Example[] {
  const docs = fs.existsSync(path.join(ROOT, 'docs')) ? fs.readdirSync(path.join(ROOT, 'docs'), { withFileTypes: true }) : [];
  const files = ['README.md', ...docs.filter(f => f.isFile() && f.name.endsWith('.md')).map(f => path.join('docs', f.name)).sort()];
  const examples: Example[] = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)) {
      const indent = match[1].length;
      const code = match[2].split('\n').map(l => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n');
      // Only apps: a test file or a fragment synthesizes nothing.
      if (!/\.synth\(\)/.test(code)) continue;
      examples.push({ where: `${file}:${text.slice(0, match.index).split('\n').length}`, code, objects: [] });
    }
  }
  return examples;
}

/**
 * The example as a user writes it to run `release` (docs/moving-to-1.13.0.md): its stacks get
 * `release`, and so do its FunctionNamespaces when it has no stack. An example that names a
 * release itself, or the default release, is left as it is.
 *
 * @param code the example
 * @param release the release to run
 * @returns the code
 */
export function withRelease(code: string, release: ServerlessRelease): string {
  if (release === DEFAULT_RELEASE || /\bServerlessRelease\./.test(code)) return code;
  const value = `__KymaServerless.ServerlessRelease.V${release.replace(/\./g, '_')}`;
  const owner = /new ServerlessStack\(/.test(code) ? 'ServerlessStack' : 'FunctionNamespace';
  let out = '';
  let at = 0;
  for (const match of code.matchAll(new RegExp(`new ${owner}\\(`, 'g'))) {
    const open = match.index! + match[0].length;
    // The call's top-level arguments: commas and the closing parenthesis at depth 0.
    const commas: number[] = [];
    let depth = 0;
    let close = open;
    for (let i = open; i < code.length; i++) {
      const c = code[i];
      if ('([{'.includes(c)) depth++;
      else if (')]}'.includes(c)) {
        if (depth === 0) { close = i; break; }
        depth--;
      } else if (c === ',' && depth === 0) commas.push(i);
    }
    const args = [open, ...commas.map(c => c + 1)].map((start, i) => code.slice(start, i < commas.length ? commas[i] : close));
    const props = args[2]?.trim();
    out += code.slice(at, open);
    if (props === undefined || props === '') {
      out += `${code.slice(open, close).replace(/,\s*$/, '')}, { release: ${value} })`;
    } else if (props.startsWith('{')) {
      const brace = code.indexOf('{', commas[1]);
      out += `${code.slice(open, brace + 1)} release: ${value},${code.slice(brace + 1, close)})`;
    } else {
      out += `${code.slice(open, commas[1] + 1)} { ...${props}, release: ${value} }${args.length > 3 ? code.slice(commas[2], close) : ''})`;
    }
    at = close + 1;
  }
  if (at === 0) return code;
  out += code.slice(at);
  return `import * as __KymaServerless from 'cdk8s-kyma-serverless';\n${out}`;
}

/**
 * Packs the package, installs it into a scratch app and synthesizes each example there, for
 * `release` ({@link withRelease}). Under a release other than the default, an example that synth
 * refuses for what that release lacks (build resources, the registry) is kept with the reason.
 *
 * @returns the examples with their objects; the scratch app is removed
 */
export function synthExamples(log: (line: string) => void, release: ServerlessRelease = DEFAULT_RELEASE): Example[] {
  const examples = docExamples();
  log(`packing the package and installing it into a scratch cdk8s app for ${examples.length} examples`);
  const tarball = packPackage();
  const app = ScratchApp.create(tarball);
  try {
    app.write('functions/orders/handler.py', 'def main(event, context):\n    return "orders"\n');
    app.write('functions/orders/requirements.txt', '# none\n');
    examples.forEach((example, i) => {
      const file = `examples/example-${i + 1}.ts`;
      const out = path.join(app.dir, `out/example-${i + 1}`);
      app.write(file, withRelease(example.code, release));
      fs.rmSync(path.join(app.dir, 'bootstrap'), { recursive: true, force: true });
      const synth = app.bin('cdk8s', ['synth', '--app', `npx ts-node ${file}`, '--output', out]);
      if (synth.status !== 0 && release !== DEFAULT_RELEASE && synth.stderr.includes(release)) {
        example.refused = synth.stderr.split('\n').find(line => line.includes(release))!.trim();
        log(`example ${example.where} refused at synth under ${release}: ${example.refused}`);
        return;
      }
      check(synth);
      for (const dir of [out, path.join(app.dir, 'bootstrap')]) {
        if (!fs.existsSync(dir)) continue;
        for (const manifest of fs.readdirSync(dir, { recursive: true }).map(String).filter(f => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'))) {
          example.objects.push(...parseManifests(fs.readFileSync(path.join(dir, manifest), 'utf8')).flatMap(d => (d.object ? [d.object] : [])));
        }
      }
    });
  } finally {
    app.remove();
    fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
  }
  return examples;
}

const NODE_HANDLER = 'exports.main = () => "Hello from Git";\n';
const PYTHON_HANDLER = 'def main(event, context):\n    return "Hello from Git"\n';

/**
 * Serves every Git source of these Functions from this machine: a repository per URL holding a
 * handler of the Function's runtime in its baseDir on its reference, and the Function's URL
 * pointed at it (under `private/` when the Function gives credentials).
 *
 * @returns the Secrets of credentials the Functions name, to create in their namespaces
 */
export function mirrorGitSources(functions: readonly any[], server: GitServer, credentials: { username: string; password: string }): any[] {
  const repositories = new Map<string, ReturnType<GitServer['create']>>();
  const secrets: any[] = [];
  for (const fn of functions) {
    const git = fn.spec?.source?.gitRepository;
    if (!git) continue;
    const remote = new URL(git.url.replace(/^git@([^:]+):/, 'ssh://git@$1/'));
    const name = `${git.auth ? 'private/' : ''}${remote.hostname}${remote.pathname.replace(/(\.git)?$/, '.git')}`;
    const handler = String(fn.spec.runtime).startsWith('python') ? { 'handler.py': PYTHON_HANDLER } : { 'handler.js': NODE_HANDLER };
    const files = Object.fromEntries(Object.entries(handler).map(([f, t]) => [path.posix.join(String(git.baseDir ?? '/').replace(/^\//, ''), f), t]));
    let repository = repositories.get(name);
    if (!repository) {
      repository = server.create(name, files);
      repositories.set(name, repository);
    }
    repository.commit(files, `${fn.metadata.name} on ${git.reference}`, git.reference);
    git.url = repository.url;
    // Served over HTTP: SSH keys become a user name and password.
    if (git.auth) git.auth.type = 'basic';
    if (git.auth) {
      secrets.push({
        apiVersion: 'v1', kind: 'Secret', metadata: { name: git.auth.secretName, namespace: fn.metadata.namespace },
        stringData: credentials,
      });
    }
  }
  return secrets;
}
