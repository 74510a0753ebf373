/**
 * A Function's environment on this machine: its `spec.env` with every value found (plain values
 * as declared, Secret and ConfigMap keys from env files or a cluster, fields and resources of the
 * Pod from what the cluster would give), then the variables the controller adds; and its Secret
 * mounts as local folders.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_FUNCTION_DEFAULTS, DEFAULT_FUNCTION_PRESETS, FUNCTION_CONTROLLER, FunctionChildLabel, FunctionProfile, parseQuantity } from '../api';
import { cpuMillis, sizeBytes } from '../api/quantity';
import { ContainerEnvVar, DEFAULT_BODY_SIZE_LIMIT_MB, DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../api/runtime-contract';
import { CONTROLLER_NAMES } from '../stack/controller';

/** An entry of a Function's `spec.env`, as JSON. */
export interface FunctionEnvEntry {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly secretKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean };
    readonly configMapKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean };
    readonly fieldRef?: { readonly fieldPath: string };
    readonly resourceFieldRef?: { readonly resource: string; readonly divisor?: string | number };
  };
}

/** A Secret mount of a Function's `spec.secretMounts`. */
export interface FunctionSecretMount {
  readonly secretName: string;
  readonly mountPath: string;
}

type Amounts = { readonly [resource: string]: string | number };

/** The parts of a Function (`metadata` and `spec`, as JSON) that decide its environment. */
export interface FunctionEnvSpec {
  readonly name: string;
  readonly namespace: string;
  readonly env?: readonly FunctionEnvEntry[];
  readonly secretMounts?: readonly FunctionSecretMount[];
  readonly labels?: { readonly [key: string]: string };
  readonly annotations?: { readonly [key: string]: string };
  readonly resourceConfiguration?: {
    readonly function?: {
      readonly profile?: string;
      readonly resources?: { readonly requests?: Amounts; readonly limits?: Amounts };
    };
  };
}

/**
 * Where the values of Secret and ConfigMap keys come from when no env file gives them: the
 * objects of the Function's namespace in a cluster (`kyma-serverless run --from-cluster`).
 */
export interface ClusterValues {
  /** Where the values are read, for messages, such as `the cluster of context kind-kyma`. */
  readonly where: string;
  /**
   * Reads a Secret.
   *
   * @returns its data, decoded; `undefined` when there is no such Secret
   */
  readSecret(namespace: string, name: string): Promise<{ readonly [key: string]: Buffer } | undefined>;
  /**
   * Reads a ConfigMap.
   *
   * @returns its data; `undefined` when there is no such ConfigMap
   */
  readConfigMap(namespace: string, name: string): Promise<{ readonly [key: string]: string } | undefined>;
}

/** The problems of a Function's environment on this machine, all at once, each with its fix. */
export class FunctionEnvError extends Error {
  constructor(public readonly problems: readonly string[]) {
    super(problems.length === 1 ? problems[0] : `The Function's environment is incomplete:\n  ${problems.join('\n  ')}`);
    this.name = 'FunctionEnvError';
  }
}

/**
 * Reads env files: `NAME=value` lines, as Docker and dotenv read them. Blank lines and lines
 * starting with `#` are skipped, `export ` before a name is allowed, and a value in single quotes
 * is taken as it is, one in double quotes with `\n` as a line break.
 *
 * @param files the files, later ones winning
 * @throws FunctionEnvError naming the file and line of every line that is not `NAME=value`
 */
export function readEnvFiles(files: readonly string[]): { [name: string]: string } {
  const values: { [name: string]: string } = {};
  const problems: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      problems.push(`--env-file ${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give an existing file`);
      continue;
    }
    text.split(/\r?\n/).forEach((line, i) => {
      const trimmed = line.trim();
      if (!trimmed || trimmed.startsWith('#')) return;
      const match = /^(?:export\s+)?([A-Za-z_.-][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(trimmed);
      if (!match) {
        problems.push(`--env-file ${file}:${i + 1}: '${trimmed}' is not NAME=value: write one variable per line, such as API_TOKEN=abc`);
        return;
      }
      const [, name, raw] = match;
      const quoted = /^(['"])(.*)\1$/.exec(raw);
      if (!quoted) values[name] = raw.replace(/\s+#.*$/, '');
      else values[name] = quoted[1] === '"' ? quoted[2].replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1') : quoted[2];
    });
  }
  if (problems.length) throw new FunctionEnvError(problems);
  return values;
}

/**
 * `$(NAME)` in a value, replaced by an earlier variable's value as Kubernetes does; `$$` is a
 * literal `$`, and a reference to a variable not defined before stays as it is.
 */
export function expandReferences(value: string, defined: ReadonlyMap<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_.-][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return defined.has(name!) ? defined.get(name!)! : match;
  });
}

/** The requests and limits of the Function's Pods, in base units, as the cluster gives them. */
function podResources(spec: FunctionEnvSpec): { [resource: string]: number } {
  const config = spec.resourceConfiguration?.function;
  if (config?.resources) {
    const amounts: { [resource: string]: number } = {};
    for (const kind of ['requests', 'limits'] as const) {
      for (const [resource, amount] of Object.entries(config.resources[kind] ?? {})) amounts[`${kind}.${resource}`] = parseQuantity(amount) ?? 0;
    }
    // A limit without a request is the request too.
    for (const resource of ['cpu', 'memory']) amounts[`requests.${resource}`] ??= amounts[`limits.${resource}`];
    return amounts;
  }
  const preset = DEFAULT_FUNCTION_PRESETS[(config?.profile ?? DEFAULT_FUNCTION_DEFAULTS.functionProfile) as FunctionProfile];
  if (!preset) return {};
  return {
    'requests.cpu': cpuMillis(preset.requestCpu) / 1000, 'limits.cpu': cpuMillis(preset.limitCpu) / 1000,
    'requests.memory': sizeBytes(preset.requestMemory), 'limits.memory': sizeBytes(preset.limitMemory),
  };
}

/** The value a Pod field would have: the Pod's name, namespace, labels, addresses. */
function fieldValue(spec: FunctionEnvSpec, fieldPath: string): string | undefined {
  const labels: { [key: string]: string } = {
    ...spec.labels,
    [FunctionChildLabel.FUNCTION_NAME]: spec.name,
    [FunctionChildLabel.MANAGED_BY]: FUNCTION_CONTROLLER,
    'serverless.kyma-project.io/resource': 'deployment',
  };
  const keyed = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(fieldPath);
  if (keyed) return keyed[1] === 'labels' ? labels[keyed[2]] ?? '' : spec.annotations?.[keyed[2]] ?? '';
  const values: { [path: string]: string } = {
    'metadata.name': `${spec.name}-local`,
    'metadata.namespace': spec.namespace,
    'metadata.uid': randomUUID(),
    'spec.nodeName': os.hostname(),
    'spec.serviceAccountName': CONTROLLER_NAMES.functionServiceAccount,
    'status.hostIP': '127.0.0.1',
    'status.hostIPs': '127.0.0.1',
    'status.podIP': '127.0.0.1',
    'status.podIPs': '127.0.0.1',
  };
  return values[fieldPath];
}

/** Options of {@link resolveFunctionEnv}. */
export interface ResolveEnvOptions {
  /** Values by variable name (from env files and the caller): they replace what the Function declares. */
  readonly values: { readonly [name: string]: string };
  /**
   * Where Secret and ConfigMap keys that `values` lacks are read.
   *
   * @default - nowhere: such keys must be in `values`
   */
  readonly cluster?: ClusterValues;
}

/** A Function's variables on this machine. */
export interface ResolvedEnv {
  /** The Function's variables, in `spec.env` order, then those of `values` it does not declare. */
  readonly env: ContainerEnvVar[];
  /** What differs from the cluster, for the log. */
  readonly notes: string[];
}

/**
 * Finds the value of every variable of a Function's `spec.env`.
 *
 * @throws FunctionEnvError listing every key without a value (not `optional`), each with where it can come from
 */
export async function resolveFunctionEnv(spec: FunctionEnvSpec, options: ResolveEnvOptions): Promise<ResolvedEnv> {
  const env: ContainerEnvVar[] = [];
  const defined = new Map<string, string>();
  const problems: string[] = [];
  const notes: string[] = [];
  const secrets = new Map<string, Promise<{ readonly [key: string]: Buffer } | undefined>>();
  const configMaps = new Map<string, Promise<{ readonly [key: string]: string } | undefined>>();
  const set = (name: string, value: string) => {
    env.push({ name, value });
    defined.set(name, value);
  };
  const declared = new Set((spec.env ?? []).map(e => e.name));
  for (const entry of spec.env ?? []) {
    const given = options.values[entry.name];
    if (given !== undefined) {
      set(entry.name, given);
      continue;
    }
    const from = entry.valueFrom;
    if (!from) {
      set(entry.name, expandReferences(entry.value ?? '', defined));
      continue;
    }
    const keyRef = from.secretKeyRef ?? from.configMapKeyRef;
    if (keyRef) {
      const kind = from.secretKeyRef ? 'Secret' : 'ConfigMap';
      let value: string | undefined;
      let found = 'no --env-file gives it';
      if (options.cluster) {
        const data = from.secretKeyRef
          ? await getOrRead(secrets, keyRef.name, () => options.cluster!.readSecret(spec.namespace, keyRef.name))
          : await getOrRead(configMaps, keyRef.name, () => options.cluster!.readConfigMap(spec.namespace, keyRef.name));
        const raw = data?.[keyRef.key];
        value = raw === undefined ? undefined : Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw);
        found = data === undefined ? `${options.cluster.where} has no ${kind} ${spec.namespace}/${keyRef.name}`
          : `${kind} ${spec.namespace}/${keyRef.name} in ${options.cluster.where} has no key ${keyRef.key}`;
      }
      if (value !== undefined) {
        set(entry.name, value);
      } else if (keyRef.optional) {
        notes.push(`env ${entry.name}: key ${keyRef.key} of ${kind} ${keyRef.name} is optional and has no value here (${found}): `
          + 'the variable is not set');
      } else {
        problems.push(`env ${entry.name}: needs key ${keyRef.key} of ${kind} ${keyRef.name}, and ${found}: `
          + `give it in an env file (--env-file .env with the line ${entry.name}=...)`
          + `${options.cluster ? '' : ', or read it from the cluster with --from-cluster'}`);
      }
      continue;
    }
    if (from.fieldRef) {
      const field = from.fieldRef.fieldPath;
      const value = fieldValue(spec, field);
      if (value !== undefined) set(entry.name, value);
      else problems.push(`env ${entry.name}: the Pod field ${field} has no value here: give one in an env file (${entry.name}=...)`);
      continue;
    }
    if (from.resourceFieldRef) {
      const amount = podResources(spec)[from.resourceFieldRef.resource];
      const divisor = parseQuantity(from.resourceFieldRef.divisor ?? '1') || 1;
      const resource = from.resourceFieldRef.resource;
      // Kubernetes rounds up: 50m of CPU with the divisor 1 is 1.
      if (amount !== undefined) set(entry.name, String(Math.ceil(amount / divisor - 1e-9)));
      else problems.push(`env ${entry.name}: the Pod has no ${resource}: give a value in an env file (${entry.name}=...)`);
    }
  }
  for (const [name, value] of Object.entries(options.values)) {
    if (declared.has(name)) continue;
    set(name, value);
    const runtimeDefault = RUNTIME_SETTINGS[name];
    notes.push(`env ${name}=${value}: set for this local run only (by --env, an env file or the env option): the Function's env does not declare it, `
      + `so in the cluster it is not set${runtimeDefault ? ` and the runtime uses its default, ${runtimeDefault}` : ''}; to have it there too, `
      + `add it to the Function's env (function.yaml: env: { ${name}: "${value}" })`);
  }
  if (problems.length) throw new FunctionEnvError(problems);
  return { env, notes };
}

/** The variables the runtime servers read, with the value they take when the Function's env does not set them. */
const RUNTIME_SETTINGS: { readonly [name: string]: string } = {
  FUNC_TIMEOUT: `${DEFAULT_FUNCTION_TIMEOUT_SECONDS} seconds`,
  REQ_MB_LIMIT: `${DEFAULT_BODY_SIZE_LIMIT_MB} MB`,
};

function getOrRead<T>(cache: Map<string, Promise<T>>, name: string, read: () => Promise<T>): Promise<T> {
  if (!cache.has(name)) cache.set(name, read());
  return cache.get(name)!;
}

/** Options of {@link resolveSecretMounts}. */
export interface ResolveMountsOptions {
  /** Local folders, by Secret name. */
  readonly folders: { readonly [secretName: string]: string };
  /**
   * Where Secrets without a folder are read; their keys are written as files into a private
   * temporary folder, which `dispose` removes.
   *
   * @default - nowhere: every mounted Secret needs a folder
   */
  readonly cluster?: ClusterValues;
}

/** The Secret mounts of a Function on this machine. */
export interface ResolvedMounts {
  /** The local folder of each mount path. */
  readonly folders: { [mountPath: string]: string };
  /** Removes the folders written from a cluster's Secrets. */
  dispose(): void;
}

/**
 * Finds a local folder for every Secret a Function mounts.
 *
 * @throws FunctionEnvError for a Secret without a folder, a folder that does not exist, or a folder given for a Secret the Function does not mount
 */
export async function resolveSecretMounts(
  namespace: string, mounts: readonly FunctionSecretMount[], options: ResolveMountsOptions,
): Promise<ResolvedMounts> {
  const folders: { [mountPath: string]: string } = {};
  const written: string[] = [];
  const problems: string[] = [];
  const mounted = new Set(mounts.map(m => m.secretName));
  for (const [secretName, folder] of Object.entries(options.folders)) {
    if (!mounted.has(secretName)) {
      problems.push(`--mount ${secretName}=${folder}: the Function mounts no Secret ${secretName}`
        + `${mounted.size ? ` (it mounts ${[...mounted].join(', ')})` : ' (it has no secretMounts)'}: give the name of a mounted Secret`);
    } else if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
      problems.push(`--mount ${secretName}=${folder}: ${folder} is not a folder: give a folder that holds one file per key of the Secret`);
    }
  }
  for (const mount of mounts) {
    const folder = options.folders[mount.secretName];
    if (folder !== undefined) {
      folders[mount.mountPath] = path.resolve(folder);
      continue;
    }
    const data = options.cluster ? await options.cluster.readSecret(namespace, mount.secretName) : undefined;
    if (!data) {
      problems.push(`secretMounts: Secret ${mount.secretName} (mounted at ${mount.mountPath}) `
        + `${options.cluster ? `is not in namespace ${namespace} of ${options.cluster.where}` : 'has no local folder'}: `
        + `give one with --mount ${mount.secretName}=<folder holding a file per key>`
        + `${options.cluster ? '' : ', or read it from the cluster with --from-cluster'}`);
      continue;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `kyma-serverless-secret-${mount.secretName}-`));
    fs.chmodSync(dir, 0o700);
    for (const [key, value] of Object.entries(data)) fs.writeFileSync(path.join(dir, key), value, { mode: 0o600 });
    written.push(dir);
    folders[mount.mountPath] = dir;
  }
  const dispose = () => written.forEach(dir => fs.rmSync(dir, { recursive: true, force: true }));
  if (problems.length) {
    dispose();
    throw new FunctionEnvError(problems);
  }
  return { folders, dispose };
}
