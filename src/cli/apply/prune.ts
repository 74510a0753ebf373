/**
 * The folder's ApplySet (KEP-3659, as `kubectl apply --applyset`) in one `apply` run: its parent,
 * read before anything changes and written before the first object of the folder goes out, and
 * `--prune`, which deletes the members the folder no longer holds, later sync waves first, once
 * everything was applied.
 */
import {
  APPLYSET_ID_LABEL, APPLYSET_PART_OF_LABEL, ApplySet, ApplySetScope, ApplySetState, KeptReason, Orphan, memberLabel, parentLabel,
} from '../_applyset';
import { statusOf } from '../_kube';
import { CliError } from '../errors';
import { statusBody, targetWhere } from '../_objects';
import { PlannedObject } from '../_plan';
import { ApiResource } from '../_rest';
import { RunContext } from './context';
import { ApplyOutcome, PrunedObject } from './report';
import { Interrupted, Stop } from './retries';
import { Waves, orphanPath } from './waves';

/** The resource a CRD of the folder will serve. */
function crdResource(crd: PlannedObject | undefined): ApiResource | undefined {
  const spec = crd?.object.spec;
  if (!spec?.names?.plural) return undefined;
  return {
    group: spec.group, version: spec.versions?.[0]?.name, kind: spec.names.kind, plural: spec.names.plural, namespaced: spec.scope !== 'Cluster',
  };
}

/** The ApplySet of one run, and its prune. */
export class ApplySetPrune {
  /** What prune did: deleted, failed to delete, or kept. */
  public readonly pruned: PrunedObject[] = [];
  /** Whether prune began deleting: until then, nothing was deleted. */
  public started = false;
  /** The set as its parent said before this run. */
  private setState?: ApplySetState;
  private parentWritten = false;

  constructor(private readonly run: RunContext, private readonly waves: Waves) {}

  /**
   * Reads the folder's ApplySet parent before anything changes: another tool's set, a manifest
   * that carries the set's labels already, or a parent namespace that does not exist stops the run.
   */
  public async readSet(): Promise<void> {
    const { applySet, clock, plan, states } = this.run;
    const labelled = states.filter(s => {
      const labels = (s.planned.object.metadata.labels ?? {}) as { [key: string]: string };
      return labels[APPLYSET_PART_OF_LABEL] !== undefined || labels[APPLYSET_ID_LABEL] !== undefined;
    });
    if (labelled.length) {
      throw new Stop(`Nothing was applied: ${labelled.map(targetWhere).join(', ')} carr${labelled.length === 1 ? 'ies' : 'y'} `
        + `the label ${APPLYSET_PART_OF_LABEL} or ${APPLYSET_ID_LABEL}: remove it from the manifests; apply adds it itself`);
    }
    const { parent } = applySet;
    try {
      this.setState = await applySet.read(clock.signal());
      if (!this.run.resolver.createsNamespace(parent.namespace)) {
        await this.run.client.request({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(parent.namespace)}`, signal: clock.signal() });
      }
    } catch (e) {
      clock.rethrowTimeout(e);
      if (e instanceof CliError) throw new Stop(`Nothing was applied: ${e.message}`);
      if (statusOf(e) === 404) {
        throw new Stop(`Nothing was applied: the namespace ${parent.namespace} of the ApplySet parent ${parentLabel(parent)} does not exist: `
          + `create it (kubectl create namespace ${parent.namespace}), or add a Namespace to ${plan.dir}`);
      }
      throw new Stop(`Nothing was applied: ${clock.requestError(e, `reading the ApplySet parent ${parentLabel(parent)}`).message}`);
    }
  }

  /**
   * Writes the parent, listing the kinds and namespaces of the set as it was and of the folder (as
   * kubectl does before it applies: an interrupted run leaves nothing outside the set), once its
   * namespace exists. A namespace the folder creates exists after the step that applies it.
   */
  public async writeParent(): Promise<void> {
    if (this.parentWritten) return;
    const { applySet, settings, states } = this.run;
    const { parent } = applySet;
    const namespaceState = states.find(s => s.planned.group === '' && s.planned.object.kind === 'Namespace'
      && s.planned.object.metadata.name === parent.namespace);
    if (namespaceState) {
      const applied = [ApplyOutcome.CREATED, ApplyOutcome.CONFIGURED, ApplyOutcome.UNCHANGED, ApplyOutcome.APPLIED].includes(namespaceState.outcome);
      if (!applied || (settings.dryRun && namespaceState.outcome === ApplyOutcome.CREATED)) return;
    }
    await this.writeParentScope(ApplySet.union(this.setState!, ApplySet.scopeOf(states)));
    this.parentWritten = true;
  }

  /**
   * Deletes the members of the set the folder no longer holds, later sync waves first, and then
   * writes the parent with the set as the folder has it. Only what this field manager applied and
   * nothing owns is deleted; Namespaces and CRDs are reported, not deleted.
   */
  public async prune(): Promise<void> {
    const { applySet, clock, client, plan, progress, settings, states } = this.run;
    const scope = ApplySet.union(this.setState!, ApplySet.scopeOf(states));
    let orphans: Orphan[];
    try {
      orphans = ApplySet.orphansOf(await applySet.members(this.run.discovery, scope, clock.signal()), states, settings.fieldManager);
    } catch (e) {
      clock.rethrowTimeout(e);
      throw new Stop(`Cannot prune: ${clock.requestError(e, `listing the members of the ApplySet ${parentLabel(applySet.parent)}`).message}`);
    }
    const deleting = orphans.filter(o => !o.kept);
    const theirs = orphans.filter(o => o.kept === KeptReason.OWNED || o.kept === KeptReason.NOT_APPLIED);
    progress.log(`prune (ApplySet ${parentLabel(applySet.parent)}): ${deleting.length} object${deleting.length === 1 ? '' : 's'} `
      + `no longer in ${plan.dir}${settings.dryRun ? ', dry run: nothing is deleted' : ''}`);
    const failures: string[] = [];
    if (clock.interrupted()) throw new Interrupted();
    this.started = deleting.length > 0;
    for (const wave of [...new Set(deleting.map(o => `${o.wave} ${o.phase}`))]) {
      const group = deleting.filter(o => `${o.wave} ${o.phase}` === wave);
      const deleted: Orphan[] = [];
      for (const orphan of group) {
        try {
          // The uid precondition: an object of that name made since the list (not the member) is never deleted.
          await client.request({
            method: 'DELETE', path: orphanPath(orphan), signal: clock.signal(),
            query: { propagationPolicy: 'Background', dryRun: settings.dryRun ? 'All' : undefined },
            body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: orphan.object.metadata?.uid } },
          });
          deleted.push(orphan);
        } catch (e) {
          clock.rethrowTimeout(e);
          if (statusOf(e) !== 404) {
            const message = statusOf(e) === 403
              ? `forbidden: ${statusBody(e).message}. Prune needs the verb delete on ${orphan.resource.plural}`
              : clock.requestError(e, 'deleting it').message;
            failures.push(`${memberLabel(orphan)}: ${message}`);
            this.pruned.push(this.prunedObject(orphan, 'failed', message));
            progress.line('failed', `${memberLabel(orphan)}: ${message}`);
            continue;
          }
        }
        this.pruned.push(this.prunedObject(orphan, 'pruned'));
        progress.line('pruned', `${memberLabel(orphan)}${settings.dryRun ? ' (dry run)' : ''}`);
      }
      if (settings.wait && !settings.dryRun) await this.waves.waitUntilGone(deleted);
    }
    for (const orphan of orphans) {
      if (!orphan.kept) continue;
      this.pruned.push(this.prunedObject(orphan, 'kept', orphan.keptBecause));
      if (orphan.kept === KeptReason.DELETES_MORE) progress.line('kept', `${memberLabel(orphan)}: ${orphan.keptBecause}`);
    }
    if (theirs.length) {
      const one = theirs.length === 1;
      progress.line('kept', `${theirs.length} object${one ? '' : 's'} with the set's label that ${one ? 'is' : 'are'} not its to delete `
        + '(made by a controller, which copied the label: the Function Controller copies a Function\'s labels onto its objects); -o json lists them');
    }
    if (failures.length) {
      throw new Stop(`${failures.length} of ${deleting.length} objects could not be pruned (the ApplySet keeps them, for the next --prune):\n`
        + failures.map(f => `  ${f}`).join('\n'));
    }
    const kept = orphans.filter(o => o.kept === KeptReason.DELETES_MORE);
    await this.writeParentScope(ApplySet.union(ApplySet.scopeOf(states), {
      groupKinds: kept.map(o => `${o.resource.kind}${o.resource.group ? `.${o.resource.group}` : ''}`),
      namespaces: kept.map(o => o.object.metadata.namespace ?? ''),
    }));
  }

  /** The resources of the folder's kinds, also of those a CRD of the folder defines and the API server does not serve yet. */
  private plannedResources(): ApiResource[] {
    return this.run.states.map(s => s.resource ?? crdResource(this.run.resolver.crdInPlan(s.planned.object.apiVersion, s.planned.object.kind)))
      .filter((r): r is ApiResource => r !== undefined);
  }

  private async writeParentScope(scope: ApplySetScope): Promise<void> {
    const { applySet, clock, settings } = this.run;
    const { parent } = applySet;
    try {
      await applySet.write(scope, this.run.discovery, this.plannedResources(), settings.dryRun, clock.signal());
    } catch (e) {
      clock.rethrowTimeout(e);
      const detail = statusOf(e) === 403
        ? `${statusBody(e).message}. Apply needs the verbs get, create and patch on ${parent.resource.plural} in namespace ${parent.namespace}`
        : clock.requestError(e, 'writing it').message;
      throw new Stop(`Cannot write the ApplySet parent ${parentLabel(parent)}: ${detail}`);
    }
  }

  private prunedObject(orphan: Orphan, outcome: PrunedObject['outcome'], message?: string): PrunedObject {
    const { metadata } = orphan.object;
    return {
      apiVersion: orphan.object.apiVersion, kind: orphan.resource.kind,
      ...(metadata?.namespace ? { namespace: metadata.namespace } : {}),
      name: metadata?.name, outcome, ...(message ? { message } : {}),
    };
  }
}
