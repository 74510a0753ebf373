/**
 * kubectl against the local API server, for the run with the real controller: plain calls that
 * throw with kubectl's own message.
 */
import { execFileSync } from 'node:child_process';

/** kubectl with one kubeconfig. */
export class Kubectl {
  constructor(public readonly kubeconfig: string) {}

  /** Runs kubectl; returns its output, or throws with its error output. */
  public run(args: readonly string[], input?: string): string {
    try {
      return execFileSync('kubectl', [`--kubeconfig=${this.kubeconfig}`, ...args], {
        encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024,
      });
    } catch (e) {
      const error = e as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')}: ${(error.stderr || error.message).trim()}`);
    }
  }

  /** Runs kubectl with `-o json` and parses what it prints. */
  public json(args: readonly string[]): any {
    return JSON.parse(this.run([...args, '-o', 'json']));
  }

  /** The items of a list, or none when the kind is not served. */
  public list(args: readonly string[]): any[] {
    try {
      return this.json(['get', ...args]).items ?? [];
    } catch (e) {
      if (/the server doesn't have a resource type|no matches for kind/.test((e as Error).message)) return [];
      throw e;
    }
  }

  /** Server-side applies objects with a field manager of their own. */
  public apply(objects: readonly object[], fieldManager = 'real-controller-run'): string {
    return this.run(['apply', '--server-side', '--force-conflicts', `--field-manager=${fieldManager}`, '-f', '-'], objects.map(o => JSON.stringify(o)).join('\n'));
  }
}
