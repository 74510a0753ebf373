/**
 * The control plane of the run: `../shared/k8s-local`'s `up.sh` and `down.sh` with its
 * kube-apiserver, kube-controller-manager and etcd, started from a folder of the run's own so that
 * the API server also writes an audit log. The folder holds links to the built programs and, for
 * kube-apiserver, a wrapper that adds the audit flags: `up.sh` starts what `$K8S_BIN` holds, so the
 * built folder is left as it is, and `down.sh` stops exactly what this folder's `pids` lists.
 *
 * The audit policy records, at the Metadata level (who, verb, resource, name, answer; no bodies),
 * every request of the stack's ServiceAccounts (group `system:serviceaccounts:kyma-system`): what
 * the controller, the webhook and the stack's Jobs really call, and whether RBAC allowed it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A control plane started by {@link ControlPlane.start}. */
export class ControlPlane {
  /**
   * Prepares the folder and runs `up.sh --clean` in it.
   *
   * @param built the folder `build.sh` built into (`$K8S_BIN`, default /tmp/k8s-bin)
   * @param dir a new folder of the run's own
   * @param auditedGroup the user group whose requests the audit log records
   */
  public static start(built: string, dir: string, auditedGroup: string): ControlPlane {
    fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
    for (const file of ['up.sh', 'down.sh', 'kube-controller-manager', 'etcd']) {
      const target = fs.realpathSync(path.join(built, file));
      fs.rmSync(path.join(dir, file), { force: true });
      fs.symlinkSync(target, path.join(dir, file));
    }
    fs.writeFileSync(path.join(dir, 'audit-policy.yaml'), [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived]',
      'rules:',
      '  - level: Metadata',
      `    userGroups: [${JSON.stringify(auditedGroup)}]`,
      '  - level: None',
      '',
    ].join('\n'));
    // `exec -a` keeps this folder in the program's command line: down.sh stops only PIDs whose command line names it.
    fs.writeFileSync(path.join(dir, 'kube-apiserver'), [
      '#!/bin/bash',
      `exec -a "$0" ${quote(fs.realpathSync(path.join(built, 'kube-apiserver')))} "$@" \\`,
      `  --audit-policy-file=${quote(path.join(dir, 'audit-policy.yaml'))} --audit-log-path=${quote(path.join(dir, 'logs', 'audit.log'))} \\`,
      '  --audit-log-format=json --audit-log-mode=batch --audit-log-batch-max-wait=1s --audit-log-maxsize=0',
      '',
    ].join('\n'), { mode: 0o755 });
    execFileSync(path.join(dir, 'up.sh'), ['--clean'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, K8S_BIN: dir } });
    return new ControlPlane(dir);
  }

  private constructor(public readonly dir: string) {}

  /** The admin kubeconfig `up.sh` wrote. */
  public get kubeconfig(): string {
    return path.join(this.dir, 'kubeconfig');
  }

  /** The CA in-cluster clients trust. */
  public get caFile(): string {
    return path.join(this.dir, 'pki', 'ca.crt');
  }

  /** The audit log (JSON lines). */
  public get auditLog(): string {
    return path.join(this.dir, 'logs', 'audit.log');
  }

  /** How to stop it by hand, for `--keep`. */
  public get stopCommand(): string {
    return `K8S_BIN=${this.dir} ${path.join(this.dir, 'down.sh')} --clean`;
  }

  /** Stops what `up.sh` started and wipes etcd's data. */
  public stop(): void {
    try {
      execFileSync(path.join(this.dir, 'down.sh'), ['--clean'], { stdio: 'ignore', env: { ...process.env, K8S_BIN: this.dir } });
    } catch {
      // Stopped already.
    }
  }
}

function quote(text: string): string {
  return `'${text.replace(/'/g, '\'\\\'\'')}'`;
}
