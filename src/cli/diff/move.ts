/**
 * What `kyma-serverless diff` says when a folder moves the cluster to another release (the Function
 * CRD's release annotation changes): per Function of the cluster what happens and what it needs
 * ({@link functionReleaseMoveOf}), and every object build mode left behind, read from the cluster by
 * the clean-up's own rules ({@link buildModeRules}), with who removes it: the clean-up Job the
 * 1.13.0 stack runs, or the sync's prune (the 1.11.1 stack's own objects, no longer in the folder).
 */
import {
  DEFAULT_RELEASE, FUNCTION_CRD_NAME, FUNCTION_GROUP, FUNCTION_VERSION, FunctionConditionType, ServerlessRelease, functionReleaseMoveOf,
  isServerlessRelease, releaseFacts,
} from '../../api';
import { PACKAGE_REGISTRY_SECRET } from '../../api/function-changes';
import { LeftoverAction, LeftoverRule, buildModeRules, BUILD_MODE_STACK_OBJECTS } from '../../stack/build-mode-cleanup';
import { CONTROLLER_NAMES } from '../../stack/controller';
import { RELEASE_ANNOTATION } from '../../api/crd-release';
import { DEFAULT_SYSTEM_NAMESPACE } from '../../stack/serverless-stack';
import { statusOf } from '../_kube';
import { ApplyPlan, Manifest } from '../_plan';
import { RestClient } from '../_rest';

type Json = { readonly [key: string]: any };

/** Who removes a leftover of build mode. */
export enum LeftoverRemoval {
  /** The clean-up Job of the 1.13.0 stack deletes it. */
  CLEANUP = 'cleanup',
  /** The sync's prune deletes it (it is in the 1.11.1 manifests only); the clean-up removes the finalizer that would hold it. */
  PRUNE = 'prune',
  /** Nobody: it is yours. */
  KEPT = 'kept',
}

/** What happens to one Function when the controller under it changes release. */
export interface FunctionMove {
  readonly namespace: string;
  readonly name: string;
  readonly restarts: boolean;
  readonly happens: readonly string[];
  readonly needs: readonly string[];
  /** One line: what happens, then what it needs. */
  readonly meaning: string;
}

/** One object build mode left in the cluster. */
export interface Leftover {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** `build Job`, `copy of the registry Secret`. */
  readonly what: string;
  readonly removal: LeftoverRemoval;
  /** Who removes it, and how, in a sentence. */
  readonly meaning: string;
}

/** The move of a cluster from one release to another, as diff reports it. */
export interface ReleaseMove {
  readonly from: ServerlessRelease;
  readonly to: ServerlessRelease;
  /** Every Function of the cluster: each runs under the new controller. */
  readonly functions: readonly FunctionMove[];
  /** What build mode left behind (moving to a buildless release only). */
  readonly leftovers: readonly Leftover[];
  /** What could not be read, such as a kind the user may not list. */
  readonly unread: readonly string[];
}

/** The release a Function CRD names in its annotation; the default release when it names none. */
function releaseOfCrd(crd: Json | undefined): ServerlessRelease {
  const value = crd?.metadata?.annotations?.[RELEASE_ANNOTATION];
  return isServerlessRelease(value) ? value : DEFAULT_RELEASE;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The API path of a collection across namespaces, or in one. */
function collection(apiVersion: string, resource: string, namespace?: string): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}${namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`}/${resource}`;
}

/** Reads the cluster for what a folder's change of release does. */
class MoveReader {
  private readonly unread: string[] = [];

  constructor(private readonly client: RestClient, private readonly plan: ApplyPlan) {}

  private get objects(): Manifest[] {
    return this.plan.steps.flatMap(step => step.objects.map(planned => planned.object));
  }

  /** Lists a collection; an answer other than 200 is noted, and gives nothing. */
  private async list(path: string, query: { [key: string]: string | undefined } = {}, what = path): Promise<Json[]> {
    try {
      return (await this.client.request({ method: 'GET', path, query })).body?.items ?? [];
    } catch (e) {
      if (statusOf(e) !== 404) this.unread.push(`${what}: ${(e as Error).message.split('\n')[0]}`);
      return [];
    }
  }

  private async get(path: string): Promise<Json | undefined> {
    try {
      return (await this.client.request({ method: 'GET', path })).body;
    } catch (e) {
      if (statusOf(e) !== 404) this.unread.push(`${path}: ${(e as Error).message.split('\n')[0]}`);
      return undefined;
    }
  }

  public async read(): Promise<ReleaseMove | undefined> {
    const crd = this.objects.find(o => o.kind === 'CustomResourceDefinition' && o.metadata.name === FUNCTION_CRD_NAME);
    if (!crd) return undefined;
    const live = await this.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${FUNCTION_CRD_NAME}`);
    if (!live) return undefined;
    const [from, to] = [releaseOfCrd(live), releaseOfCrd(crd)];
    if (from === to) return undefined;
    const controller = this.objects.find(o => o.kind === 'Deployment' && o.metadata.name === CONTROLLER_NAMES.deployment);
    const namespace = controller?.metadata.namespace ?? DEFAULT_SYSTEM_NAMESPACE;
    const functions = await this.functions(from, to);
    const leftovers = releaseFacts(from).buildsImages && !releaseFacts(to).buildsImages ? await this.leftovers(namespace) : [];
    return { from, to, functions, leftovers, unread: this.unread };
  }

  private async functions(from: ServerlessRelease, to: ServerlessRelease): Promise<FunctionMove[]> {
    const items = await this.list(collection(`${FUNCTION_GROUP}/${FUNCTION_VERSION}`, 'functions'), {}, 'Functions');
    const mirrors = new Map<string, boolean | undefined>();
    const moves: FunctionMove[] = [];
    for (const fn of items) {
      const { namespace, name } = fn.metadata ?? {};
      const move = functionReleaseMoveOf(fn, from, to);
      const happens = [...move.happens];
      const needs = [...move.needs];
      if ((fn.status?.conditions ?? []).some((c: Json) => c.type === FunctionConditionType.BUILD_READY) && !releaseFacts(to).buildsImages) {
        happens.push('the clean-up drops its BuildReady condition, which no 1.13.0 controller writes');
      }
      if (needs.some(n => n.includes(PACKAGE_REGISTRY_SECRET))) {
        if (!mirrors.has(namespace)) mirrors.set(namespace, await this.mirrorIn(namespace));
        const mirror = mirrors.get(namespace);
        const fact = mirror === undefined ? `(whether ${namespace} has it could not be read)`
          : mirror ? `(${namespace} has it)` : `(${namespace} has none: the public registry must be reachable)`;
        const i = needs.findIndex(n => n.includes(PACKAGE_REGISTRY_SECRET));
        needs[i] = `${needs[i]} ${fact}`;
      }
      const meaning = `${happens.join('; ')}${needs.length ? `. Needs: ${needs.join('; ')}` : ''}`;
      moves.push({ namespace, name, restarts: move.restarts, happens, needs, meaning });
    }
    return moves.sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  }

  /** Whether a namespace holds the package registry Secret; undefined when it cannot be read. */
  private async mirrorIn(namespace: string): Promise<boolean | undefined> {
    try {
      await this.client.request({ method: 'GET', path: `${collection('v1', 'secrets', namespace)}/${PACKAGE_REGISTRY_SECRET}` });
      return true;
    } catch (e) {
      return statusOf(e) === 404 ? false : undefined;
    }
  }

  private async leftovers(namespace: string): Promise<Leftover[]> {
    const rules = buildModeRules({ namespace });
    const inFolder = (kind: string, ns: string | undefined, name: string) =>
      this.objects.some(o => o.kind === kind && o.metadata.name === name && (o.metadata.namespace ?? undefined) === ns);
    const found: Leftover[] = [];
    for (const rule of rules.leftovers) {
      const labels = Object.entries(rule.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
      const query = rule.name === undefined
        ? { labelSelector: rule.labelSelector }
        : { labelSelector: labels || undefined, fieldSelector: `metadata.name=${rule.name}` };
      const items = await this.list(collection(rule.apiVersion, rule.plural), query, `${rule.what}s`);
      for (const object of items.filter(o => selects(rule, o, namespace))) {
        const { removal, meaning } = verdict(rule, object, rules.userLabels);
        found.push({
          apiVersion: rule.apiVersion, kind: rule.kind, namespace: object.metadata.namespace, name: object.metadata.name, what: rule.what, removal, meaning,
        });
      }
    }
    for (const stackObject of BUILD_MODE_STACK_OBJECTS) {
      const items = stackObject.name !== undefined
        ? [await this.get(`${collection(stackObject.apiVersion, stackObject.plural, namespace)}/${stackObject.name}`)].filter(Boolean) as Json[]
        : await this.list(collection(stackObject.apiVersion, stackObject.plural, namespace), { labelSelector: stackObject.labelSelector });
      for (const object of items) {
        if (inFolder(stackObject.kind, namespace, object.metadata.name)) continue;
        found.push({
          apiVersion: stackObject.apiVersion, kind: stackObject.kind, namespace, name: object.metadata.name, what: stackObject.what,
          removal: LeftoverRemoval.PRUNE,
          meaning: `${stackObject.what}, in the ${ServerlessRelease.V1_11_1} manifests only: the sync's prune deletes it `
            + '(Argo CD and Flux with prune on, kyma-serverless apply --prune)',
        });
      }
    }
    return found;
  }
}

/** Whether a rule selects an object listed for it (as the clean-up's program selects). */
function selects(rule: LeftoverRule, object: Json, namespace: string): boolean {
  const m = object.metadata ?? {};
  if (rule.names && !rule.names.includes(m.name)) return false;
  if (rule.where === 'copies' && m.namespace === namespace) return false;
  if (rule.where === 'stack' && m.namespace !== namespace) return false;
  if (!Object.entries(rule.labels ?? {}).every(([k, v]) => m.labels?.[k] === v)) return false;
  if (rule.ownedByFunction && !(m.ownerReferences ?? []).some((r: Json) => r.kind === 'Function' && String(r.apiVersion).startsWith(`${FUNCTION_GROUP}/`))) {
    return false;
  }
  return true;
}

/** Who removes an object a rule selects, in words. */
function verdict(rule: LeftoverRule, object: Json, userLabels: { readonly [key: string]: string }): { removal: LeftoverRemoval; meaning: string } {
  const labels = object.metadata?.labels ?? {};
  const has = (wanted: { readonly [key: string]: string }) => Object.entries(wanted).every(([k, v]) => labels[k] === v);
  const finalizer = rule.finalizer && (object.metadata?.finalizers ?? []).includes(rule.finalizer) ? rule.finalizer : undefined;
  if (has(userLabels)) return { removal: LeftoverRemoval.KEPT, meaning: `${rule.what}, labelled as yours (${Object.keys(userLabels)[0]}: user): kept` };
  if (rule.action === LeftoverAction.UNFINALIZE) {
    return {
      removal: LeftoverRemoval.PRUNE,
      meaning: `${rule.what}: ${rule.keptBecause}${finalizer ? `; the clean-up removes its finalizer ${finalizer} first` : ''}`,
    };
  }
  if (rule.oursIf && !has(rule.oursIf)) {
    return {
      removal: LeftoverRemoval.KEPT,
      meaning: `${rule.what}: kept: ${rule.keptBecause}${finalizer ? `; the clean-up removes its finalizer ${finalizer}` : ''}`,
    };
  }
  return { removal: LeftoverRemoval.CLEANUP, meaning: `${rule.what}: the clean-up Job deletes it once the ${ServerlessRelease.V1_13_0} controller runs` };
}

/**
 * What moving the cluster to the folder's release does, when the folder's Function CRD names
 * another release than the cluster's; undefined when it names the same, or either has no Function CRD.
 */
export async function releaseMoveOf(plan: ApplyPlan, client: RestClient): Promise<ReleaseMove | undefined> {
  return new MoveReader(client, plan).read();
}

/** The text lines of a move: a heading, a line per Function, a line per leftover. */
export function renderMove(move: ReleaseMove, width: number): string[] {
  const restarts = move.functions.filter(f => f.restarts).length;
  const cleanup = move.leftovers.filter(l => l.removal === LeftoverRemoval.CLEANUP).length;
  const pruned = move.leftovers.filter(l => l.removal === LeftoverRemoval.PRUNE).length;
  const label = (kind: string, namespace: string | undefined, name: string) => `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
  const lines = [`Moving from ${move.from} to ${move.to}: ${plural(restarts, 'Function')} restart${restarts === 1 ? 's' : ''}`
    + (move.leftovers.length ? `; build mode left ${plural(move.leftovers.length, 'object')}: ${cleanup} for the clean-up Job, `
      + `${pruned} for the sync's prune, ${move.leftovers.length - cleanup - pruned} kept` : '')];
  for (const fn of move.functions) lines.push(`${'move'.padEnd(width)}${label('Function', fn.namespace, fn.name)}: ${fn.meaning}`);
  for (const left of move.leftovers) lines.push(`${'leftover'.padEnd(width)}${label(left.kind, left.namespace, left.name)}: ${left.meaning}`);
  for (const unread of move.unread) lines.push(`${'unread'.padEnd(width)}${unread}`);
  return lines;
}

/** The Markdown of a move, for the pull-request comment. */
export function renderMoveMarkdown(move: ReleaseMove): string[] {
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const out = [`**Moving from ${move.from} to ${move.to}**`, '', '| | object | what happens |', '|---|---|---|'];
  for (const fn of move.functions) out.push(`| move | \`Function ${fn.namespace}/${fn.name}\` | ${cell(fn.meaning)} |`);
  for (const left of move.leftovers) {
    out.push(`| leftover: ${left.removal} | \`${left.kind} ${left.namespace ? `${left.namespace}/` : ''}${left.name}\` | ${cell(left.meaning)} |`);
  }
  out.push('');
  return out;
}
