/**
 * The conventions of the `kyma-serverless` program: --version, the global options in every
 * command's help, -o yaml beside -o json, and help texts that say what the commands do.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { parse } from 'yaml';
import { program } from '../../src/cli/index';

const ROOT = path.resolve(__dirname, '..', '..');
const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

/** Every command of the program, subcommands (webhook serve) included. */
function commands(parent: Command): Command[] {
  return parent.commands.flatMap(c => [c, ...commands(c)]);
}

/** A command's whole help (its text after the options too), with each run of white space as one space: the columns wrap. */
function helpOf(command: Command): string {
  let help = '';
  command.configureOutput({ writeOut: text => { help += text; } }).outputHelp();
  return help.replace(/\s+/g, ' ');
}

/** Runs the program with its output captured; returns what it printed and the exit it asked for. */
async function run(...args: string[]): Promise<{ stdout: string; exit?: string }> {
  let stdout = '';
  const cli = program().exitOverride().configureOutput({ writeOut: text => { stdout += text; } });
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  });
  const before = process.exitCode;
  try {
    await cli.parseAsync(['node', 'kyma-serverless', ...args]);
    return { stdout };
  } catch (e) {
    return { stdout, exit: (e as { code?: string }).code };
  } finally {
    write.mockRestore();
    process.exitCode = before;
  }
}

describe('kyma-serverless', () => {
  test.each(['--version', '-V'])('%s prints the version of the package', async flag => {
    expect(await run(flag)).toEqual({ stdout: `${VERSION}\n`, exit: 'commander.version' });
  });

  test('lists the global options in the help of every command', () => {
    const all = commands(program());
    expect(all.map(c => c.name())).toEqual(['init', 'synth', 'validate', 'preflight', 'apply', 'diff', 'status', 'run', 'invoke', 'webhook', 'serve']);
    for (const command of all) {
      const help = helpOf(command);
      for (const option of ['--kubeconfig <file>', '--context <name>', '-n, --namespace <namespace>', '-o, --output <format>']) {
        expect(`${command.name()}: ${help.slice(help.indexOf('Global Options:')).includes(option)}`).toBe(`${command.name()}: true`);
      }
    }
    expect(helpOf(program())).toContain('-o, --output <format> output format: table for people; json or yaml, the same data, for scripts '
      + '(choices: "table", "json", "yaml", default: "table")');
  });

  test('prints the same data with -o yaml as with -o json', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'output-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.k8s.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: settings, namespace: shop }\ndata: { replicas: 2 }\n');
      const json = await run('validate', dir, '-o', 'json');
      const yaml = await run('-o', 'yaml', 'validate', dir);
      expect(yaml.stdout).toMatch(/^ok: false\n/);
      expect(parse(yaml.stdout)).toEqual(JSON.parse(json.stdout));
      expect(JSON.parse(json.stdout).findings).toHaveLength(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('says each default once, and shows how to apply before following the Functions', () => {
    for (const command of commands(program())) expect(`${command.name()}: ${helpOf(command)}`).not.toMatch(/default[^()]*\) \(default: /);
    const help = (name: string) => helpOf(program().commands.find(c => c.name() === name)!);
    expect(help('apply')).toContain(' --wait after each step, wait until what it applied is ready (default: true) --no-wait ');
    expect(help('status')).toContain('kyma-serverless apply dist/ --wait && kyma-serverless status -n shop --watch --timeout 15m');
    expect(help('status')).not.toContain('kubectl apply');
    expect(help('init')).toContain(' dir folder of the new app, created if needed (default: the current folder) Options:');
    expect(help('synth')).toContain('--verbose when the app fails, show the stack of its error as Node.js prints it, not only the message');
  });
});
