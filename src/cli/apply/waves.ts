/**
 * The steps of an `apply` run, wave by wave: each object of a step sent with server-side apply
 * (deleted and created again when the API server refuses to change it in place and it opted in),
 * then, with `--wait`, read again until what the step applied is ready (`readiness.ts`).
 */
import { RefusedChange, refusedChangeOfAnswer } from '../../policy/replacement';
import { STACK_REPLACEMENT_OPT_INS } from '../../stack/serverless-stack';
import { Orphan, memberLabel } from '../_applyset';
import { statusOf } from '../_kube';
import { describeObjectError, statusBody, targetBody, targetLabel, targetWhere, transient } from '../_objects';
import { ApplyStep, Manifest, stepTitle } from '../_plan';
import { APPLY_PATCH, ApiResource, resourcePath } from '../_rest';
import { RunContext } from './context';
import { took } from './output';
import { ObjectState, notApplied } from './plan';
import { ReadinessState, failed, readinessOf } from './readiness';
import { ApplyOutcome } from './report';
import { Stop } from './retries';

/** Canonical JSON without what changes on every write, to tell an unchanged object from a changed one. */
function content(object: any): string {
  const { status: _status, metadata, ...rest } = object ?? {};
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = metadata ?? {};
  const sorted = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.keys(value).sort().map(k => [k, sorted((value as Record<string, unknown>)[k])]));
    }
    return value;
  };
  return JSON.stringify(sorted({ ...rest, metadata: meta }));
}

/** The path of a member of the ApplySet, to read or delete it. */
export function orphanPath(orphan: Orphan): string {
  return resourcePath(orphan.resource, orphan.object.metadata.namespace, orphan.object.metadata.name);
}

/** Applies the steps of one run and waits for what they applied. */
export class Waves {
  /** The kind a custom resource waits to be served, for the timeout's message. */
  public unserved?: string;

  constructor(private readonly run: RunContext) {}

  /** Applies the objects of one step in order; the first object failed by the API server's faults ends the step. */
  public async applyStep(step: ApplyStep, states: ObjectState[]): Promise<void> {
    for (const state of states) {
      await this.applyOne(state);
      // The API server stayed away for a whole --retry-timeout: the rest of the step would only wait as long again, each.
      if (state.fault) break;
    }
    const failures = states.filter(s => s.outcome === ApplyOutcome.FAILED);
    if (failures.length) {
      throw new Stop(`${failures.length} of ${states.length} object${states.length === 1 ? '' : 's'} of ${stepTitle(step)} failed:\n`
        + failures.map(s => `  ${targetWhere(s)}: ${s.message}`).join('\n'));
    }
  }

  /**
   * Reads what a step applied until it is ready; a failed object ends the run.
   *
   * @param more whether later steps wait to be applied, for the message of a failure
   */
  public async waitFor(states: readonly ObjectState[], more: boolean): Promise<void> {
    const { clock, io, progress } = this.run;
    const watched = states.filter(s => s.live !== undefined && readinessOf(s.live) !== undefined);
    if (!watched.length) return;
    const since = io.now();
    const said = new Map<ObjectState, string>();
    const judge = (state: ObjectState) => {
      state.readiness = readinessOf(state.live)!;
      if (state.readiness.state === ReadinessState.READY) {
        const ms = io.now() - since;
        progress.line('ready', `${targetLabel(state)}: ${state.readiness.message}${ms >= 1000 ? ` (${took(ms)})` : ''}`);
      } else if (said.get(state) !== state.readiness.message) {
        said.set(state, state.readiness.message);
        progress.line(state.readiness.state, `${targetLabel(state)}: ${state.readiness.message}`);
      }
    };
    let pending = [...watched];
    for (const state of pending) judge(state);
    for (;;) {
      const failures = pending.filter(s => s.readiness?.state === ReadinessState.FAILED);
      if (failures.length) {
        throw new Stop(`${failures.map(s => `${targetWhere(s)} failed: ${s.readiness!.message}`).join('\n')}`
          + `${more ? `\n${notApplied(this.run.states)}` : ''}`);
      }
      pending = pending.filter(s => s.readiness?.state !== ReadinessState.READY);
      if (!pending.length) return;
      await clock.sleep();
      for (const state of pending) {
        const resource = state.resource!;
        try {
          state.live = (await this.run.client.request({
            method: 'GET', path: resourcePath(resource, state.namespace, state.planned.object.metadata.name), signal: clock.signal(),
          })).body;
        } catch (e) {
          clock.rethrowTimeout(e);
          if (statusOf(e) === 404) {
            state.readiness = failed('it was deleted while apply waited for it');
            progress.line('failed', `${targetLabel(state)}: ${state.readiness.message}`);
            continue;
          }
          if (statusOf(e) === 403) {
            throw new Stop(`Cannot read ${targetWhere(state)} to wait for it: ${statusBody(e).message}. `
              + 'Waiting needs the verb get on what apply waits for; or pass --no-wait');
          }
          if (transient(e) || statusOf(e) === undefined) continue;
          throw new Stop(clock.requestError(e, `reading ${targetLabel(state)}`).message);
        }
        judge(state);
      }
    }
  }

  /** Waits until deleted objects are gone: finalizers (a PersistentVolumeClaim in use, a Function's) may hold them. */
  public async waitUntilGone(deleted: readonly Orphan[]): Promise<void> {
    const { clock, progress } = this.run;
    let pending = [...deleted];
    const said = new Set<Orphan>();
    while (pending.length) {
      const still: Orphan[] = [];
      for (const orphan of pending) {
        try {
          const { body } = await this.run.client.request({
            method: 'GET', path: orphanPath(orphan), signal: clock.signal(),
          });
          if (body?.metadata?.uid !== orphan.object.metadata?.uid) continue;
          still.push(orphan);
          if (!said.has(orphan)) {
            said.add(orphan);
            const finalizers: string[] = body?.metadata?.finalizers ?? [];
            const inUse = finalizers.includes('kubernetes.io/pvc-protection')
              ? '; while a Pod mounts it, it stays: scale down what runs that Pod '
                + `(kubectl scale deployment/<name> --replicas 0 -n ${orphan.object.metadata.namespace})`
              : '';
            const held = finalizers.length ? ` (finalizers: ${finalizers.join(', ')})` : '';
            progress.line('waiting', `${memberLabel(orphan)}: being deleted${held}${inUse}`);
          }
        } catch (e) {
          clock.rethrowTimeout(e);
          if (statusOf(e) !== 404) throw new Stop(clock.requestError(e, `reading ${memberLabel(orphan)}`).message);
        }
      }
      pending = still;
      if (pending.length) await clock.sleep();
    }
  }

  /**
   * The resource of a kind a CRD of the folder defines, once the API server serves it: discovery
   * lags the CRD's Established condition a little, so it is read again until the deadline.
   */
  private async servedResource(state: ObjectState): Promise<ApiResource> {
    const { object } = state.planned;
    const crd = this.run.resolver.crdInPlan(object.apiVersion, object.kind)!;
    const what = `${object.kind} ${object.apiVersion} to be served (CustomResourceDefinition ${crd.object.metadata.name})`;
    for (;;) {
      const resource = await this.run.resolver.discover(object.apiVersion, object.kind);
      if (resource) {
        this.unserved = undefined;
        return resource;
      }
      if (this.unserved !== what) this.run.progress.line('waiting', what);
      this.unserved = what;
      await this.run.clock.sleep();
    }
  }

  private async applyOne(state: ObjectState): Promise<void> {
    const { clock, client, settings } = this.run;
    const { object } = state.planned;
    if (!state.resource) {
      if (settings.dryRun) {
        const crd = this.run.resolver.crdInPlan(object.apiVersion, object.kind)!;
        return this.skip(state, `its CustomResourceDefinition ${crd.object.metadata.name} is not installed yet, and a dry run does not install it`);
      }
      state.resource = await this.servedResource(state);
    }
    const resource = state.resource;
    const path = resourcePath(resource, state.namespace, object.metadata.name);
    const body = this.run.applySet.labelled(targetBody(state));

    let before: any;
    let known = true;
    try {
      before = (await client.request({ method: 'GET', path, signal: clock.signal() })).body;
    } catch (e) {
      clock.rethrowTimeout(e);
      if (statusOf(e) === 404) before = undefined;
      else if (statusOf(e) === 403) known = false;
      else return this.fail(state, this.applyError(e, state, 'reading'), transient(e));
    }

    {
      try {
        const response = await client.request({
          method: 'PATCH', path, body, contentType: APPLY_PATCH, signal: clock.signal(),
          query: {
            fieldManager: settings.fieldManager,
            force: settings.forceConflicts ? 'true' : undefined,
            dryRun: settings.dryRun ? 'All' : undefined,
          },
        });
        state.live = response.body;
        state.outcome = response.status === 201 ? ApplyOutcome.CREATED
          : !known ? ApplyOutcome.APPLIED
            : before === undefined ? ApplyOutcome.CREATED
              : content(before) === content(response.body) ? ApplyOutcome.UNCHANGED : ApplyOutcome.CONFIGURED;
        this.run.progress.line(state.outcome, `${targetLabel(state)}${settings.dryRun ? ' (dry run)' : ''}`);
        return undefined;
      } catch (e) {
        clock.rethrowTimeout(e);
        if (settings.dryRun && this.namespaceMissing(e, state)) {
          return this.skip(state, `its namespace ${state.namespace} is created by this apply, and a dry run does not create it`);
        }
        const refusal = refusedChangeOfAnswer(body, statusOf(e), statusBody(e), STACK_REPLACEMENT_OPT_INS);
        if (refusal?.replacementAllowed) return this.replace(state, path, body, refusal);
        if (refusal) {
          return this.fail(state, `refused: ${refusal.refusal}. The API server never changes this in place; `
            + `ways through: ${refusal.wayThrough.join('; ')}. `
            + `Replacing it costs: ${refusal.cost}`);
        }
        return this.fail(state, this.applyError(e, state, 'applying'), transient(e));
      }
    }
  }

  /**
   * Deletes an object the API server refuses to change in place and creates it again, as Argo CD's
   * `Replace=true,Force=true` and Flux's `force` do: only for objects that opted in.
   */
  private async replace(state: ObjectState, path: string, body: Manifest, refusal: RefusedChange): Promise<void> {
    const { clock, client, progress, settings } = this.run;
    state.message = `${refusal.refusal}: deleted and created again (it opted in to replacement); ${refusal.cost}`;
    if (settings.dryRun) {
      state.outcome = ApplyOutcome.REPLACED;
      progress.line(state.outcome, `${targetLabel(state)} (dry run): would be deleted and created again: ${refusal.refusal}`);
      return;
    }
    progress.line('replacing', `${targetLabel(state)}: ${refusal.refusal}: deleting it to create it again (${refusal.cost})`);
    try {
      const { body: live } = await client.request({ method: 'GET', path, signal: clock.signal() });
      await client.request({ method: 'DELETE', path, query: { propagationPolicy: 'Background' }, signal: clock.signal() });
      await this.waitUntilGone([{ resource: state.resource!, object: live, wave: state.planned.wave, phase: state.planned.phase }]);
      state.live = (await client.request({
        method: 'PATCH', path, body, contentType: APPLY_PATCH, signal: clock.signal(), query: { fieldManager: settings.fieldManager },
      })).body;
    } catch (e) {
      clock.rethrowTimeout(e);
      if (e instanceof Stop) throw e;
      return this.fail(state, `replacing it failed: ${this.applyError(e, state, 'applying')}`);
    }
    state.outcome = ApplyOutcome.REPLACED;
    progress.line(state.outcome, targetLabel(state));
    return undefined;
  }

  private skip(state: ObjectState, message: string): void {
    state.outcome = ApplyOutcome.SKIPPED;
    state.message = message;
    this.run.progress.line(state.outcome, `${targetLabel(state)}: ${message}`);
  }

  private fail(state: ObjectState, message: string, fault = false): void {
    state.outcome = ApplyOutcome.FAILED;
    state.message = message;
    state.fault = fault;
    this.run.progress.line(state.outcome, `${targetLabel(state)}: ${message}`);
  }

  /** A 404 because the object's namespace (one the folder creates) does not exist. */
  private namespaceMissing(e: unknown, state: ObjectState): boolean {
    if (statusOf(e) !== 404 || state.namespace === undefined) return false;
    const { details } = statusBody(e);
    return this.run.resolver.createsNamespace(state.namespace) && details?.kind === 'namespaces' && details?.name === state.namespace;
  }

  /** What went wrong with one object, and what to do about it. */
  private applyError(e: unknown, state: ObjectState, doing: 'reading' | 'applying'): string {
    return describeObjectError(e, state, this.run.cluster, this.run.plan.dir, doing,
      this.run.settings.wait ? '' : ' (without --no-wait, apply waits for the stack\'s webhook first)');
  }
}
