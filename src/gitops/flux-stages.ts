/**
 * The Flux stages of an output folder: the stack, the Functions, and what reaches them, each a
 * folder under `flux/` that one Flux Kustomization syncs, after the one before is healthy.
 *
 * Flux applies a Kustomization's objects in one stage (after its CRDs and Namespaces) and dry-runs
 * that stage whole first. In one Kustomization, Functions reach the API server before the stack's
 * admission webhook serves, and a missing APIRule or Subscription CRD stops everything. The stage
 * folders hold no manifests of their own: each `kustomization.yaml` takes the output's files
 * (`../../0000-….k8s.yaml`, which Flux's kustomize build allows) and drops the kinds of other stages,
 * so Argo CD, `kubectl apply -k` and `kyma-serverless apply` keep reading the files as they are.
 */
import { stringifyYaml } from '../_yaml';
import { reachesFunctions } from './sync-waves';

/** The folder, in an output folder, that holds the Flux stages. */
export const FLUX_STAGES_FOLDER = 'flux';

/** A Flux stage of the output, in apply order. */
export enum FluxStage {
  /** The ServerlessStack: CRD, controller, webhook (healthy once the webhook serves). */
  STACK = 'stack',
  /** Function namespaces and their Functions, once the stack's webhook serves. */
  FUNCTIONS = 'functions',
  /**
   * What reaches or scales Functions (APIRules, VirtualServices, HTTPRoutes, Subscriptions, KEDA
   * ScaledObjects, HorizontalPodAutoscalers), once the Functions run: most of their CRDs come from modules a cluster may lack.
   */
  REACH = 'reach',
}

/** Every stage, in apply order. */
export const FLUX_STAGES: readonly FluxStage[] = [FluxStage.STACK, FluxStage.FUNCTIONS, FluxStage.REACH];

/** The objects of one file of the output. */
export interface StagedFile {
  readonly file: string;
  readonly objects: ReadonlyArray<{ readonly apiVersion: string; readonly kind: string }>;
  /** Whether the file holds a ServerlessStack: all of it is the stack stage. */
  readonly stack: boolean;
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

/** The stage of an object of a file. */
function stageOf(file: StagedFile, object: StagedFile['objects'][number]): FluxStage {
  if (file.stack) return FluxStage.STACK;
  return reachesFunctions(object) ? FluxStage.REACH : FluxStage.FUNCTIONS;
}

/**
 * The `kustomization.yaml` of each stage folder (`flux/<stage>/`): the files that hold objects of
 * the stage, and a delete patch for each kind of those files that is another stage's.
 *
 * @param files the output's files, with their objects
 * @returns the text of each stage's kustomization.yaml
 */
export function fluxStageKustomizations(files: readonly StagedFile[]): Map<FluxStage, string> {
  const sorted = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  // The stage of each object, found once (every stage below looks at every object).
  const stages = new Map(sorted.map(f => [f, f.objects.map(o => stageOf(f, o))]));
  const result = new Map<FluxStage, string>();
  for (const stage of FLUX_STAGES) {
    const taken = sorted.filter(f => stages.get(f)!.includes(stage));
    const dropped = new Map<string, { apiVersion: string; kind: string }>();
    for (const file of taken) {
      const ofObjects = stages.get(file)!;
      file.objects.forEach((object, i) => {
        if (ofObjects[i] !== stage) dropped.set(`${groupOf(object.apiVersion)}/${object.kind}`, { apiVersion: object.apiVersion, kind: object.kind });
      });
    }
    const patches = [...dropped.keys()].sort().map(key => {
      const { apiVersion, kind } = dropped.get(key)!;
      const group = groupOf(apiVersion);
      return {
        target: { ...(group ? { group } : {}), kind },
        // A strategic merge patch that deletes every object the target selects (its name is the target's).
        patch: `$patch: delete\napiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: any\n`,
      };
    });
    result.set(stage, stringifyYaml({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: taken.map(f => `../../${f.file}`),
      ...(patches.length ? { patches } : {}),
    }));
  }
  return result;
}
