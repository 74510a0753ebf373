/**
 * Runs one container of a Pod template on this machine the way a kubelet would run it: the
 * volumes of its ConfigMaps, Secrets and emptyDirs mounted where the container mounts them, its
 * ServiceAccount's token at `/var/run/secrets/kubernetes.io/serviceaccount` (so clients find the
 * API server "in-cluster"), its env with Pod fields and keys resolved, its user and group, and a
 * read-only root file system when its securityContext asks for one. Each process gets a mount
 * namespace of its own (`unshare -m`), so nothing it mounts is seen outside; it shares this
 * machine's network. Needs root (for the mounts).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kubectl } from './kubectl';

/** What a container runs, by its command's first word: the program on this machine to run for it. */
export type Executables = { readonly [command: string]: string };

/** Options of {@link PodProcess.start}. */
export interface PodRunOptions {
  /** A short name, for the log. */
  readonly name: string;
  /** The Pod's namespace: its ServiceAccount's and the one `metadata.namespace` gives. */
  readonly namespace: string;
  /** The Pod template's `spec`, as the cluster stores it. */
  readonly spec: any;
  /** Programs to run instead of the container's command, such as `/app/manager` → the controller built from source. */
  readonly executables: Executables;
  /** The environment the image sets (the Dockerfile's `ENV`), under the container's own. */
  readonly imageEnv?: { readonly [name: string]: string };
  /** Changes to the container's args, such as a port two "Pods" on one network would share. */
  readonly args?: (args: readonly string[]) => string[];
  /** The API server, as in-cluster clients reach it, and the CA they trust. */
  readonly apiServer: { readonly host: string; readonly port: number; readonly caFile: string };
  /** A folder of its own for the volumes and the log. */
  readonly workDir: string;
}

/** A container running on this machine; {@link stop} ends it and removes what it left. */
export class PodProcess {
  /** Starts the container: reads its volumes from the cluster, then spawns it. */
  public static start(kubectl: Kubectl, options: PodRunOptions): PodProcess {
    if (process.getuid?.() !== 0) throw new Error(`running ${options.name} as a Pod would needs root (for its mounts); run this script as root`);
    const spec = options.spec;
    const container = spec.containers[0];
    fs.mkdirSync(options.workDir, { recursive: true, mode: 0o755 });
    const volumes = new Map<string, string | 'tmpfs'>();
    for (const volume of spec.volumes ?? []) volumes.set(volume.name, materialize(kubectl, options, volume));

    const mounts: { source: string | 'tmpfs'; target: string; subPath?: string; readOnly?: boolean }[] = [];
    for (const mount of container.volumeMounts ?? []) {
      const source = volumes.get(mount.name);
      if (source === undefined) throw new Error(`${options.name}: volume ${mount.name} is mounted but not declared`);
      mounts.push({ source, target: mount.mountPath, subPath: mount.subPath, readOnly: mount.readOnly });
    }
    if (spec.automountServiceAccountToken !== false) {
      const account = spec.serviceAccountName ?? 'default';
      const dir = path.join(options.workDir, 'serviceaccount');
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      fs.writeFileSync(path.join(dir, 'token'), kubectl.run(['-n', options.namespace, 'create', 'token', account, '--duration=12h']).trim(), { mode: 0o644 });
      fs.copyFileSync(options.apiServer.caFile, path.join(dir, 'ca.crt'));
      fs.chmodSync(path.join(dir, 'ca.crt'), 0o644);
      fs.writeFileSync(path.join(dir, 'namespace'), options.namespace, { mode: 0o644 });
      mounts.push({ source: dir, target: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true });
    }
    const [command, ...commandArgs] = [...(container.command ?? []), ...(options.args ? options.args(container.args ?? []) : container.args ?? [])];
    const executable = options.executables[command];
    if (executable) mounts.push({ source: executable, target: command, readOnly: true });

    // Mount points must exist before the mounts; create the missing ones and remove them at the end.
    const created: string[] = [];
    for (const mount of mounts) {
      const isFile = mount.subPath !== undefined || (mount.source !== 'tmpfs' && fs.statSync(mount.source).isFile());
      for (const made of ensureMountPoint(mount.target, isFile)) MOUNT_POINT_USERS.set(made, 0);
      // Every mount point this run made that the container needs, also one another container made:
      // it is removed only when no container needs it any more (two Pods often start at once).
      for (let d = mount.target; d !== path.dirname(d); d = path.dirname(d)) {
        if (MOUNT_POINT_USERS.has(d) && !created.includes(d)) created.push(d);
      }
    }
    created.sort((a, b) => a.length - b.length);
    for (const d of created) MOUNT_POINT_USERS.set(d, MOUNT_POINT_USERS.get(d)! + 1);

    const user = { ...spec.securityContext, ...container.securityContext };
    // Bind mounts first: their sources live under /tmp, which an emptyDir may cover.
    const ordered = [...mounts.filter(m => m.source !== 'tmpfs'), ...mounts.filter(m => m.source === 'tmpfs')];
    const script = [
      'set -e',
      ...ordered.map(m => (m.source === 'tmpfs'
        ? `mount -t tmpfs -o size=256m,mode=1777 tmpfs ${quote(m.target)}`
        : `mount --bind ${quote(m.subPath ? path.join(m.source, m.subPath) : m.source)} ${quote(m.target)}`)),
      ...(user.readOnlyRootFilesystem ? ['mount -o remount,bind,ro /'] : []),
      `exec setpriv --reuid=${user.runAsUser ?? 0} --regid=${user.runAsGroup ?? user.runAsUser ?? 0} --clear-groups -- ${[command, ...commandArgs].map(quote).join(' ')}`,
    ].join('\n');

    const env: { [name: string]: string } = {
      PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: '/tmp',
      KUBERNETES_SERVICE_HOST: options.apiServer.host,
      KUBERNETES_SERVICE_PORT: String(options.apiServer.port),
      ...options.imageEnv,
    };
    for (const variable of container.env ?? []) env[variable.name] = envValue(kubectl, options.namespace, options.name, variable);
    const log = fs.openSync(path.join(options.workDir, 'log'), 'w');
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { env, stdio: ['ignore', log, log], detached: true });
    fs.closeSync(log);
    return new PodProcess(options.name, child, path.join(options.workDir, 'log'), created);
  }

  /** Settles with the exit code when the process ends. */
  public readonly exited: Promise<number>;
  private ended = false;

  private constructor(public readonly name: string, private readonly child: ChildProcess, public readonly logFile: string, private readonly created: string[]) {
    this.exited = new Promise(resolve => child.on('exit', code => {
      this.ended = true;
      resolve(code ?? 1);
    }));
  }

  /** The process (and process group) id. */
  public get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process still runs. */
  public get running(): boolean {
    return !this.ended;
  }

  /** What the container wrote so far. */
  public log(): string {
    return fs.readFileSync(this.logFile, 'utf8');
  }

  /** Ends the container (SIGTERM, then SIGKILL after 10 s) and removes the mount points it needed. */
  public async stop(): Promise<void> {
    if (!this.ended && this.child.pid) {
      try {
        process.kill(-this.child.pid, 'SIGTERM');
      } catch {
        // Gone already.
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-this.child.pid!, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }, 10_000);
      await this.exited;
      clearTimeout(timer);
    }
    for (const dir of [...this.created].reverse()) {
      const users = (MOUNT_POINT_USERS.get(dir) ?? 1) - 1;
      MOUNT_POINT_USERS.set(dir, users);
      if (users > 0) continue;
      MOUNT_POINT_USERS.delete(dir);
      try {
        if (fs.statSync(dir).isDirectory()) fs.rmdirSync(dir);
        else if (fs.statSync(dir).size === 0) fs.rmSync(dir);
      } catch {
        // Not empty, or gone: leave it.
      }
    }
  }
}

/** Mount points this run made, and how many running containers need each. */
const MOUNT_POINT_USERS = new Map<string, number>();

function quote(text: string): string {
  return `'${text.replace(/'/g, '\'\\\'\'')}'`;
}

/** Creates a missing mount point and its missing parents; returns what it created, outermost first. */
function ensureMountPoint(target: string, isFile: boolean): string[] {
  const created: string[] = [];
  const dir = isFile ? path.dirname(target) : target;
  const missing: string[] = [];
  for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    fs.mkdirSync(d, { mode: 0o755 });
    created.push(d);
  }
  if (isFile && !fs.existsSync(target)) {
    fs.writeFileSync(target, '');
    created.push(target);
  }
  return created;
}

/** Writes a volume's files into the work folder; `tmpfs` for an emptyDir. */
function materialize(kubectl: Kubectl, options: PodRunOptions, volume: any): string | 'tmpfs' {
  if (volume.emptyDir) return 'tmpfs';
  const dir = path.join(options.workDir, 'volumes', volume.name);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const source = volume.configMap ?? volume.secret;
  if (!source) throw new Error(`${options.name}: volume ${volume.name} is neither a ConfigMap, a Secret nor an emptyDir`);
  const kind = volume.configMap ? 'configmap' : 'secret';
  const name = volume.configMap ? source.name : source.secretName;
  const object = kubectl.json(['-n', options.namespace, 'get', kind, name]);
  const files: { [key: string]: Buffer } = {};
  for (const [key, value] of Object.entries<string>(object.data ?? {})) files[key] = kind === 'secret' ? Buffer.from(value, 'base64') : Buffer.from(value);
  for (const [key, value] of Object.entries<string>(object.binaryData ?? {})) files[key] = Buffer.from(value, 'base64');
  const items: { key: string; path: string }[] = source.items ?? Object.keys(files).map(key => ({ key, path: key }));
  for (const item of items) {
    const file = path.join(dir, item.path);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    fs.writeFileSync(file, files[item.key], { mode: 0o644 });
  }
  return dir;
}

/** The value of an env var, as the kubelet resolves it. */
function envValue(kubectl: Kubectl, namespace: string, pod: string, variable: any): string {
  if (variable.value !== undefined || !variable.valueFrom) return variable.value ?? '';
  const { fieldRef, secretKeyRef, configMapKeyRef } = variable.valueFrom;
  if (fieldRef?.fieldPath === 'metadata.namespace') return namespace;
  if (fieldRef?.fieldPath === 'metadata.name') return pod;
  const ref = secretKeyRef ?? configMapKeyRef;
  if (ref) {
    const object = kubectl.json(['-n', namespace, 'get', secretKeyRef ? 'secret' : 'configmap', ref.name]);
    const value = object.data?.[ref.key];
    return secretKeyRef ? Buffer.from(value ?? '', 'base64').toString('utf8') : value ?? '';
  }
  throw new Error(`${pod}: env ${variable.name} needs ${JSON.stringify(variable.valueFrom)}, which this runner does not resolve`);
}

/** Whether the tools this runner needs are on the machine. */
export function podRunnerProblems(): string[] {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push('this script runs the stack\'s programs as Pods would (mounts, users): run it as root');
  for (const tool of ['unshare', 'setpriv', 'mount']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      problems.push(`${tool} is missing (Debian package util-linux)`);
    }
  }
  return problems;
}
