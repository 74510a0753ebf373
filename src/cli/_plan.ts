/**
 * The plan of an apply: which objects one folder of manifests holds, and in which order a GitOps
 * engine would apply them (sync waves, then phases). `apply` applies by it, `diff` dry-runs by it,
 * and pruning deletes in its reverse.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SYNC_WAVE_ANNOTATION } from '../gitops/sync-waves';
import { manifestFiles, parseManifests } from '../policy/_manifest-files';
import { CliError } from './errors';
import { parseApiVersion } from './_rest';

/** The field manager of the apply, unless `--field-manager` says otherwise. */
export const DEFAULT_FIELD_MANAGER = 'kyma-serverless';

/** The phases of a sync wave, in apply order. */
export enum ApplyPhase {
  /** Namespaces, CustomResourceDefinitions, PriorityClasses and StorageClasses: what other objects need. */
  PREREQUISITES = 'prerequisites',
  /** Every other kind of a built-in Kubernetes API group. */
  BUILT_IN = 'built-in',
  /** Kinds of other groups: custom resources, whose CRD an earlier step may install. */
  CUSTOM_RESOURCES = 'custom-resources',
}

const PHASE_TITLES: { readonly [phase in ApplyPhase]: string } = {
  [ApplyPhase.PREREQUISITES]: 'cluster prerequisites',
  [ApplyPhase.BUILT_IN]: 'built-in kinds',
  [ApplyPhase.CUSTOM_RESOURCES]: 'custom resources',
};

const PHASE_ORDER: readonly ApplyPhase[] = [ApplyPhase.PREREQUISITES, ApplyPhase.BUILT_IN, ApplyPhase.CUSTOM_RESOURCES];

/**
 * The API groups Kubernetes itself serves. Other groups are custom resources (or aggregated APIs),
 * also those under `k8s.io` that CRDs define, such as `gateway.networking.k8s.io`.
 */
export const BUILT_IN_GROUPS: ReadonlySet<string> = new Set([
  '', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io', 'apps', 'authentication.k8s.io',
  'authorization.k8s.io', 'autoscaling', 'batch', 'certificates.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io', 'events.k8s.io',
  'flowcontrol.apiserver.k8s.io', 'internal.apiserver.k8s.io', 'networking.k8s.io', 'node.k8s.io', 'policy', 'rbac.authorization.k8s.io',
  'resource.k8s.io', 'scheduling.k8s.io', 'storage.k8s.io', 'storagemigration.k8s.io',
]);

/** Kinds applied first in their wave, as `group/Kind`. */
const PREREQUISITE_KINDS: ReadonlySet<string> = new Set([
  '/Namespace', 'apiextensions.k8s.io/CustomResourceDefinition', 'scheduling.k8s.io/PriorityClass', 'storage.k8s.io/StorageClass',
]);

/** The phase of a kind in its wave. */
export function phaseOf(apiVersion: string, kind: string): ApplyPhase {
  const { group } = parseApiVersion(apiVersion);
  if (PREREQUISITE_KINDS.has(`${group}/${kind}`)) return ApplyPhase.PREREQUISITES;
  return BUILT_IN_GROUPS.has(group) ? ApplyPhase.BUILT_IN : ApplyPhase.CUSTOM_RESOURCES;
}

/** A Kubernetes object as read from a manifest. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly annotations?: { readonly [key: string]: string };
    readonly [key: string]: unknown;
  };
  readonly [key: string]: any;
}

/** One object of the folder, where it comes from, and when it is applied. */
export interface PlannedObject {
  /** The file, relative to the folder. */
  readonly file: string;
  /** The document's number in its file, from 1. */
  readonly document: number;
  readonly object: Manifest;
  /** The API group; `''` for the core group. */
  readonly group: string;
  /** The sync wave: the `argocd.argoproj.io/sync-wave` annotation, else 0. */
  readonly wave: number;
  readonly phase: ApplyPhase;
}

/** Objects applied together, then waited for. */
export interface ApplyStep {
  readonly wave: number;
  readonly phase: ApplyPhase;
  /** In file order, then document order. */
  readonly objects: readonly PlannedObject[];
}

/** What {@link planApply} read and the order it chose. */
export interface ApplyPlan {
  /** The folder. */
  readonly dir: string;
  /** The files read, relative to the folder, in name order. */
  readonly files: readonly string[];
  /** The steps, by wave, then phase; steps without objects are left out. */
  readonly steps: readonly ApplyStep[];
}

/** `Deployment kyma-system/x`, or `Namespace x` for cluster-scoped objects. */
export function objectLabel(kind: string, name: string, namespace: string | undefined): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** `wave -1, built-in kinds`. */
export function stepTitle(step: Pick<ApplyStep, 'wave' | 'phase'>): string {
  return `wave ${step.wave}, ${PHASE_TITLES[step.phase]}`;
}

/**
 * Reads the manifests of one folder (not its subfolders, which hold other environments) and orders
 * them: by sync wave (the integer annotation `argocd.argoproj.io/sync-wave`, 0 without it), then
 * by {@link ApplyPhase}, then in file and document order. `kustomization.yaml` is not a manifest.
 *
 * @param dir the folder, such as `dist`
 * @throws CliError when the folder is missing or empty, or a document does not parse, is not an
 * object with apiVersion, kind and metadata.name, has a sync wave that is not an integer, or
 * repeats another object: every problem is listed, and nothing is applied
 */
export function planApply(dir: string): ApplyPlan {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new CliError(`No folder ${dir}: give the folder synth writes to, such as dist`);
  }
  const files = manifestFiles(dir, false).map(f => path.relative(dir, f));
  if (!files.length) throw new CliError(`${dir} holds no manifests (*.yaml or *.yml files beside kustomization.yaml)`);
  const problems: string[] = [];
  const objects: PlannedObject[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    parseManifests(fs.readFileSync(path.join(dir, file), 'utf8')).forEach(({ object, error }, index) => {
      const where = `${file}: document ${index + 1}`;
      if (error !== undefined) return problems.push(`${where} does not parse: ${error.split('\n')[0]}`);
      if (object === null || object === undefined) return;
      const o = object as Manifest;
      if (typeof o !== 'object' || Array.isArray(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') {
        return problems.push(`${where} is not a Kubernetes object: apiVersion and kind are required`);
      }
      if (typeof o.metadata?.name !== 'string' || !o.metadata.name) {
        return problems.push(`${where} (${o.kind}) has no metadata.name: server-side apply needs one (generateName is not enough)`);
      }
      const entryWhere = `${file}: ${objectLabel(o.kind, o.metadata.name, o.metadata.namespace)}`;
      const annotation = o.metadata.annotations?.[SYNC_WAVE_ANNOTATION];
      if (annotation !== undefined && !/^\s*[-+]?\d+\s*$/.test(String(annotation))) {
        return problems.push(`${entryWhere}: the ${SYNC_WAVE_ANNOTATION} annotation "${annotation}" is not an integer`);
      }
      const group = parseApiVersion(o.apiVersion).group;
      const identity = `${group}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;
      const first = seen.get(identity);
      if (first) return problems.push(`${entryWhere} is also defined in ${first}: keep one`);
      seen.set(identity, file);
      objects.push({
        file, document: index + 1, object: o, group,
        wave: annotation === undefined ? 0 : Number(annotation),
        phase: phaseOf(o.apiVersion, o.kind),
      });
      return undefined;
    });
  }
  if (problems.length) {
    throw new CliError(`Nothing was applied: ${dir} has ${problems.length} problem${problems.length === 1 ? '' : 's'} `
      + `(kyma-serverless validate ${dir} checks more):\n${problems.map(p => `  ${p}`).join('\n')}`);
  }
  const steps: ApplyStep[] = [];
  for (const wave of [...new Set(objects.map(o => o.wave))].sort((a, b) => a - b)) {
    for (const phase of PHASE_ORDER) {
      const inStep = objects.filter(o => o.wave === wave && o.phase === phase);
      if (inStep.length) steps.push({ wave, phase, objects: inStep });
    }
  }
  return { dir, files, steps };
}
