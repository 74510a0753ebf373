/**
 * `kyma-serverless apply [dir]`: server-side apply of one folder of manifests in the order a GitOps
 * engine would use, waiting between steps until what a step applied is ready.
 *
 * `kubectl apply -f dist/` sends everything at once: Functions reach the stack's admission webhook
 * (failurePolicy Fail) before its Pods run, and custom resources reach the API server before their
 * CRD is Established. This command applies by Argo CD sync wave and, inside a wave, in three
 * phases (cluster prerequisites, other built-in kinds, custom resources), and waits after each
 * step: CRDs Established, Namespaces Active, workloads rolled out, Jobs complete, webhook
 * configurations given their CA bundle.
 *
 * The order is planned from the manifests alone ({@link planApply}), readiness is judged from one
 * object at a time ({@link readinessOf}), and {@link runApply} talks to the cluster.
 */
import { Duration } from 'cdk8s';
import { Command, Option } from 'commander';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../../api';
import { RefusedChange, refusedChangeOfAnswer } from '../../policy/replacement';
import { STACK_REPLACEMENT_OPT_INS } from '../../stack/serverless-stack';
import {
  APPLYSET_ID_LABEL, APPLYSET_PART_OF_LABEL, ApplySet, ApplySetScope, ApplySetState, DEFAULT_APPLYSET_NAME, KeptReason, Orphan, applySetParentOf,
  memberLabel, parentLabel,
} from '../_applyset';
import { Cluster, ClusterOptions, connect, describeApiError, statusOf } from '../_kube';
import { CliError } from '../errors';
import { ObjectTarget, PlanResolver, describeObjectError, statusBody, targetBody, targetLabel, targetWhere, transient } from '../_objects';
import { OutputFormat, isStructured, printDocument } from '../_output';
import { ApplyPlan, ApplyStep, DEFAULT_FIELD_MANAGER, Manifest, PlannedObject, planApply, stepTitle } from '../_plan';
import { APPLY_PATCH, ApiResource, Discovery, RestClient, RetryNotice, resourcePath } from '../_rest';
import { OutputStream, humanDuration, parseDuration, processIo } from '../status';
import { Readiness, ReadinessState, failed, readinessOf } from './readiness';
import { AppliedObject, ApplyOutcome, ApplyReport, PrunedObject } from './report';

export { Readiness, ReadinessState, readinessOf } from './readiness';
export { AppliedObject, ApplyOutcome, ApplyReport, PrunedObject } from './report';

// ---------------------------------------------------------------------------------------------
// Applying

/** Options of {@link runApply}: the cluster options and the command's own. */
export interface ApplyOptions extends ClusterOptions {
  /**
   * Wait after each step until what it applied is ready.
   *
   * @default true
   */
  readonly wait?: boolean;
  /**
   * How long the whole apply may take, waits included.
   *
   * @default Duration.minutes(10)
   */
  readonly timeout?: Duration;
  /**
   * How often to read the objects waited for.
   *
   * @default Duration.seconds(2)
   */
  readonly pollInterval?: Duration;
  /**
   * How long one request may go unanswered before it is abandoned and tried again (an API server
   * or a proxy that accepts the connection and never answers).
   *
   * @default Duration.seconds(30)
   */
  readonly requestTimeout?: Duration;
  /**
   * How long one request is tried again while the API server fails in a way that passes: it is
   * unreachable (restarting), drops the connection, does not answer, or answers 429, 502, 503,
   * 504, or 500 from a webhook it cannot call. Pauses double from 250 ms up to 8 s, or follow the
   * answer's `Retry-After`. `timeout` bounds it too.
   *
   * @default Duration.minutes(2)
   */
  readonly retryTimeout?: Duration;
  /**
   * Send every object with `dryRun=All`: the API server validates and admits it, and stores nothing.
   *
   * @default false
   */
  readonly dryRun?: boolean;
  /**
   * Take over fields another field manager owns (`force=true`), rather than fail on the conflict.
   *
   * @default false
   */
  readonly forceConflicts?: boolean;
  /**
   * The field manager the cluster records as owner of the applied fields.
   *
   * @default 'kyma-serverless'
   */
  readonly fieldManager?: string;
  /**
   * After a successful apply, delete the members of the folder's ApplySet that the folder no
   * longer holds (and that this field manager applied and nothing owns), in reverse apply order.
   *
   * @default false
   */
  readonly prune?: boolean;
  /**
   * The ApplySet parent: `[secrets/|configmaps/]name`, in the namespace of the folder's first
   * Namespace (else `-n`'s, or the context's).
   *
   * @default 'kyma-serverless-applyset'
   */
  readonly applyset?: string;
  /**
   * The output format: with JSON or YAML, the lines of progress go to standard error, and standard
   * output gets the report.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
}

/** Where {@link runApply} writes, and its clock. */
export interface ApplyIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** The time in milliseconds since the epoch. */
  readonly now: () => number;
  /**
   * Aborted on Ctrl-C: the request under way is abandoned, nothing more is applied or pruned, and
   * the report says what was and was not done (the command exits 130).
   *
   * @default - never interrupted
   */
  readonly interrupt?: AbortSignal;
}

/** Ends the run: the deadline passed. */
class TimedOut extends Error {}

/** Ends the run: Ctrl-C. */
class Interrupted extends Error {}

/** Ends the run: the message says why. */
class Stop extends Error {}

/** The live state of one planned object. */
interface ObjectState extends ObjectTarget {
  outcome: ApplyOutcome;
  message?: string;
  readiness?: Readiness;
  /** The object as the API server last returned it. */
  live?: any;
  /** Whether it failed because the API server failed (unreachable, overloaded) after every retry, not because of the object. */
  fault?: boolean;
}

/** The width of the first column: outcomes (`configured`), `waiting`, `ready`. */
const OUTCOME_WIDTH = ApplyOutcome.CONFIGURED.length + 2;

/** `0.4s`, `12.5s`, then as the status command writes durations: `1m05s`. */
const took = (ms: number) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : humanDuration(ms));

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

/** One run of the command. */
class ApplyRun {
  private readonly states: ObjectState[];
  private readonly startedAt: number;
  private readonly deadline: number;
  private readonly json: boolean;
  private readonly fieldManager: string;
  private readonly wait: boolean;
  private readonly dryRun: boolean;
  private readonly pollMs: number;
  private readonly timeout: Duration;
  private readonly requestTimeoutMs: number;
  /** The kind a custom resource waits to be served, for the timeout's message. */
  private unserved?: string;
  private readonly resolver: PlanResolver;
  private readonly applySet: ApplySet;
  /** The set as its parent said before this run. */
  private setState?: ApplySetState;
  private parentWritten = false;
  private readonly pruned: PrunedObject[] = [];
  /** Whether prune began deleting: until then, nothing was deleted. */
  private pruneStarted = false;
  /** The last request tried again, and when: for the message of a timeout during its pauses. */
  private lastRetry?: RetryNotice & { readonly at: number };

  constructor(
    private readonly plan: ApplyPlan,
    private readonly cluster: Cluster,
    private readonly client: RestClient,
    private readonly discovery: Discovery,
    private readonly options: ApplyOptions,
    private readonly io: ApplyIo,
  ) {
    this.states = plan.steps.flatMap(step => step.objects.map(planned => ({ planned, outcome: ApplyOutcome.NOT_APPLIED })));
    this.startedAt = io.now();
    this.timeout = options.timeout ?? Duration.minutes(10);
    this.deadline = this.startedAt + this.timeout.toMilliseconds();
    this.json = isStructured(options.output);
    this.fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.dryRun = options.dryRun ?? false;
    this.wait = (options.wait ?? true) && !this.dryRun;
    this.pollMs = Math.max(1, (options.pollInterval ?? Duration.seconds(2)).toMilliseconds());
    this.requestTimeoutMs = (options.requestTimeout ?? Duration.seconds(30)).toMilliseconds();
    this.resolver = new PlanResolver(plan, cluster, discovery, {
      namespace: options.namespace, signal: () => this.signal(), requestError: (e, what) => this.requestError(e, what),
    });
    this.applySet = new ApplySet(client, applySetParentOf(plan, options.applyset, cluster.namespace));
  }

  public async run(): Promise<ApplyReport> {
    let error: string | undefined;
    try {
      const steps = this.plan.steps.length;
      const objects = this.states.length;
      this.log(`Applying ${objects} object${objects === 1 ? '' : 's'} from ${this.plan.dir} in ${steps} step${steps === 1 ? '' : 's'} `
        + `to ${this.cluster.server} (server-side apply, field manager ${this.fieldManager}`
        + `${this.dryRun ? ', dry run: nothing is stored' : this.wait ? '' : ', not waiting'})`);
      await this.resolveAll();
      await this.readApplySet();
      let done = 0;
      for (const step of this.plan.steps) {
        await this.writeParent();
        const states = this.states.slice(done, done + step.objects.length);
        done += step.objects.length;
        this.log(`${stepTitle(step)}: ${states.length} object${states.length === 1 ? '' : 's'}`);
        await this.applyStep(step, states);
        if (this.wait) await this.waitFor(states, done < this.states.length);
      }
      await this.writeParent();
      if (this.options.prune) await this.prune();
    } catch (e) {
      if (e instanceof Interrupted || this.interrupted()) return this.report(this.interruptedMessage(), true);
      if (e instanceof Stop) error = e.message;
      else if (e instanceof TimedOut) error = this.timedOut();
      else if (e instanceof CliError) error = e.message;
      else throw e;
      error = this.withNotDone(error);
    }
    return this.report(error);
  }

  /** Tells the run of a request the client tries again (called by the client). */
  public retrying(notice: RetryNotice): void {
    this.lastRetry = { ...notice, at: this.io.now() };
    const seconds = notice.delayMs < 1000 ? `${notice.delayMs}ms` : `${(notice.delayMs / 1000).toFixed(1)}s`;
    this.line('retrying', `${notice.method} ${notice.path}: ${notice.reason.split('\n')[0]}; try ${notice.attempt + 1} in ${seconds}`
      + `${notice.retryAfter ? ' (the server\'s Retry-After)' : ''}`);
  }

  private interrupted(): boolean {
    return this.io.interrupt?.aborted === true;
  }

  /** What an error leaves undone, added to its message: what was not applied, and that prune deleted nothing. */
  private withNotDone(error: string): string {
    const parts = [error];
    const rest = this.notApplied();
    if (rest && !error.includes(rest) && !error.startsWith('Nothing was applied')) parts.push(rest);
    if (this.options.prune && !this.pruneStarted) parts.push('--prune did not run: nothing was deleted');
    // After a fault (the API server unreachable, overloaded, not answering), the way on is the same command.
    if (this.lastRetry) parts.push('The API server was failing: apply again once it answers, to go on from here (what is applied stays applied)');
    return parts.join('\n');
  }

  /** Ctrl-C: what was applied, what was not, and that nothing more will be deleted. */
  private interruptedMessage(): string {
    const done = this.states.filter(s => s.outcome !== ApplyOutcome.NOT_APPLIED && s.outcome !== ApplyOutcome.FAILED).length;
    const parts = [`Interrupted: ${done} of ${this.states.length} object${this.states.length === 1 ? '' : 's'} applied`];
    const rest = this.notApplied();
    if (rest) parts.push(rest);
    if (this.options.prune) {
      parts.push(this.pruneStarted
        ? `--prune was stopped: ${this.pruned.filter(p => p.outcome === 'pruned').length} object(s) deleted; the ApplySet keeps the rest for the next --prune`
        : '--prune did not run: nothing was deleted');
    }
    parts.push('Apply again to go on from here: what is applied stays applied');
    return parts.join('\n');
  }

  // ----- Discovery

  /**
   * Finds every kind's resource before anything is applied, so that a typo or a missing CRD stops
   * the run before it changes the cluster. Kinds a CRD of the folder defines are found at their step.
   */
  private async resolveAll(): Promise<void> {
    const problems = await this.resolver.resolveAll(this.states);
    if (problems.length) throw new Stop(`Nothing was applied:\n${problems.map(p => `  ${p}`).join('\n')}`);
  }

  /**
   * The resource of a kind a CRD of the folder defines, once the API server serves it: discovery
   * lags the CRD's Established condition a little, so it is read again until the deadline.
   */
  private async servedResource(state: ObjectState): Promise<ApiResource> {
    const { object } = state.planned;
    const crd = this.resolver.crdInPlan(object.apiVersion, object.kind)!;
    const what = `${object.kind} ${object.apiVersion} to be served (CustomResourceDefinition ${crd.object.metadata.name})`;
    for (;;) {
      const resource = await this.resolver.discover(object.apiVersion, object.kind);
      if (resource) {
        this.unserved = undefined;
        return resource;
      }
      if (this.unserved !== what) this.line('waiting', what);
      this.unserved = what;
      await this.sleep();
    }
  }

  // ----- The ApplySet

  /**
   * Reads the folder's ApplySet parent before anything changes: another tool's set, a manifest
   * that carries the set's labels already, or a parent namespace that does not exist stops the run.
   */
  private async readApplySet(): Promise<void> {
    const labelled = this.states.filter(s => {
      const labels = (s.planned.object.metadata.labels ?? {}) as { [key: string]: string };
      return labels[APPLYSET_PART_OF_LABEL] !== undefined || labels[APPLYSET_ID_LABEL] !== undefined;
    });
    if (labelled.length) {
      throw new Stop(`Nothing was applied: ${labelled.map(targetWhere).join(', ')} carr${labelled.length === 1 ? 'ies' : 'y'} `
        + `the label ${APPLYSET_PART_OF_LABEL} or ${APPLYSET_ID_LABEL}: remove it from the manifests; apply adds it itself`);
    }
    const { parent } = this.applySet;
    try {
      this.setState = await this.applySet.read(this.signal());
      if (!this.resolver.createsNamespace(parent.namespace)) {
        await this.client.request({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(parent.namespace)}`, signal: this.signal() });
      }
    } catch (e) {
      this.rethrowTimeout(e);
      if (e instanceof CliError) throw new Stop(`Nothing was applied: ${e.message}`);
      if (statusOf(e) === 404) {
        throw new Stop(`Nothing was applied: the namespace ${parent.namespace} of the ApplySet parent ${parentLabel(parent)} does not exist: `
          + `create it (kubectl create namespace ${parent.namespace}), or add a Namespace to ${this.plan.dir}`);
      }
      throw new Stop(`Nothing was applied: ${this.requestError(e, `reading the ApplySet parent ${parentLabel(parent)}`).message}`);
    }
  }

  /**
   * Writes the parent, listing the kinds and namespaces of the set as it was and of the folder (as
   * kubectl does before it applies: an interrupted run leaves nothing outside the set), once its
   * namespace exists. A namespace the folder creates exists after the step that applies it.
   */
  private async writeParent(): Promise<void> {
    if (this.parentWritten) return;
    const { parent } = this.applySet;
    const namespaceState = this.states.find(s => s.planned.group === '' && s.planned.object.kind === 'Namespace'
      && s.planned.object.metadata.name === parent.namespace);
    if (namespaceState) {
      const applied = [ApplyOutcome.CREATED, ApplyOutcome.CONFIGURED, ApplyOutcome.UNCHANGED, ApplyOutcome.APPLIED].includes(namespaceState.outcome);
      if (!applied || (this.dryRun && namespaceState.outcome === ApplyOutcome.CREATED)) return;
    }
    await this.writeParentScope(ApplySet.union(this.setState!, ApplySet.scopeOf(this.states)));
    this.parentWritten = true;
  }

  /** The resources of the folder's kinds, also of those a CRD of the folder defines and the API server does not serve yet. */
  private plannedResources(): ApiResource[] {
    return this.states.map(s => s.resource ?? crdResource(this.resolver.crdInPlan(s.planned.object.apiVersion, s.planned.object.kind)))
      .filter((r): r is ApiResource => r !== undefined);
  }

  private async writeParentScope(scope: ApplySetScope): Promise<void> {
    const { parent } = this.applySet;
    try {
      await this.applySet.write(scope, this.discovery, this.plannedResources(), this.dryRun, this.signal());
    } catch (e) {
      this.rethrowTimeout(e);
      const detail = statusOf(e) === 403
        ? `${statusBody(e).message}. Apply needs the verbs get, create and patch on ${parent.resource.plural} in namespace ${parent.namespace}`
        : this.requestError(e, 'writing it').message;
      throw new Stop(`Cannot write the ApplySet parent ${parentLabel(parent)}: ${detail}`);
    }
  }

  /**
   * Deletes the members of the set the folder no longer holds, later sync waves first, and then
   * writes the parent with the set as the folder has it. Only what this field manager applied and
   * nothing owns is deleted; Namespaces and CRDs are reported, not deleted.
   */
  private async prune(): Promise<void> {
    const scope = ApplySet.union(this.setState!, ApplySet.scopeOf(this.states));
    let orphans: Orphan[];
    try {
      orphans = ApplySet.orphansOf(await this.applySet.members(this.discovery, scope, this.signal()), this.states, this.fieldManager);
    } catch (e) {
      this.rethrowTimeout(e);
      throw new Stop(`Cannot prune: ${this.requestError(e, `listing the members of the ApplySet ${parentLabel(this.applySet.parent)}`).message}`);
    }
    const deleting = orphans.filter(o => !o.kept);
    const theirs = orphans.filter(o => o.kept === KeptReason.OWNED || o.kept === KeptReason.NOT_APPLIED);
    this.log(`prune (ApplySet ${parentLabel(this.applySet.parent)}): ${deleting.length} object${deleting.length === 1 ? '' : 's'} `
      + `no longer in ${this.plan.dir}${this.dryRun ? ', dry run: nothing is deleted' : ''}`);
    const failures: string[] = [];
    if (this.interrupted()) throw new Interrupted();
    this.pruneStarted = deleting.length > 0;
    for (const wave of [...new Set(deleting.map(o => `${o.wave} ${o.phase}`))]) {
      const group = deleting.filter(o => `${o.wave} ${o.phase}` === wave);
      const deleted: Orphan[] = [];
      for (const orphan of group) {
        try {
          // The uid precondition: an object of that name made since the list (not the member) is never deleted.
          await this.client.request({
            method: 'DELETE', path: this.orphanPath(orphan), signal: this.signal(),
            query: { propagationPolicy: 'Background', dryRun: this.dryRun ? 'All' : undefined },
            body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: orphan.object.metadata?.uid } },
          });
          deleted.push(orphan);
        } catch (e) {
          this.rethrowTimeout(e);
          if (statusOf(e) !== 404) {
            const message = statusOf(e) === 403
              ? `forbidden: ${statusBody(e).message}. Prune needs the verb delete on ${orphan.resource.plural}`
              : this.requestError(e, 'deleting it').message;
            failures.push(`${memberLabel(orphan)}: ${message}`);
            this.pruned.push(this.prunedObject(orphan, 'failed', message));
            this.line('failed', `${memberLabel(orphan)}: ${message}`);
            continue;
          }
        }
        this.pruned.push(this.prunedObject(orphan, 'pruned'));
        this.line('pruned', `${memberLabel(orphan)}${this.dryRun ? ' (dry run)' : ''}`);
      }
      if (this.wait && !this.dryRun) await this.waitUntilGone(deleted);
    }
    for (const orphan of orphans) {
      if (!orphan.kept) continue;
      this.pruned.push(this.prunedObject(orphan, 'kept', orphan.keptBecause));
      if (orphan.kept === KeptReason.DELETES_MORE) this.line('kept', `${memberLabel(orphan)}: ${orphan.keptBecause}`);
    }
    if (theirs.length) {
      const one = theirs.length === 1;
      this.line('kept', `${theirs.length} object${one ? '' : 's'} with the set's label that ${one ? 'is' : 'are'} not its to delete `
        + '(made by a controller, which copied the label: the Function Controller copies a Function\'s labels onto its objects); -o json lists them');
    }
    if (failures.length) {
      throw new Stop(`${failures.length} of ${deleting.length} objects could not be pruned (the ApplySet keeps them, for the next --prune):\n`
        + failures.map(f => `  ${f}`).join('\n'));
    }
    const kept = orphans.filter(o => o.kept === KeptReason.DELETES_MORE);
    await this.writeParentScope(ApplySet.union(ApplySet.scopeOf(this.states), {
      groupKinds: kept.map(o => `${o.resource.kind}${o.resource.group ? `.${o.resource.group}` : ''}`),
      namespaces: kept.map(o => o.object.metadata.namespace ?? ''),
    }));
  }

  /** Waits until deleted objects are gone: finalizers (a PersistentVolumeClaim in use, a Function's) may hold them. */
  private async waitUntilGone(deleted: readonly Orphan[]): Promise<void> {
    let pending = [...deleted];
    const said = new Set<Orphan>();
    while (pending.length) {
      const still: Orphan[] = [];
      for (const orphan of pending) {
        try {
          const { body } = await this.client.request({
            method: 'GET', path: this.orphanPath(orphan), signal: this.signal(),
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
            this.line('waiting', `${memberLabel(orphan)}: being deleted${held}${inUse}`);
          }
        } catch (e) {
          this.rethrowTimeout(e);
          if (statusOf(e) !== 404) throw new Stop(this.requestError(e, `reading ${memberLabel(orphan)}`).message);
        }
      }
      pending = still;
      if (pending.length) await this.sleep();
    }
  }

  private orphanPath(orphan: Orphan): string {
    return resourcePath(orphan.resource, orphan.object.metadata.namespace, orphan.object.metadata.name);
  }

  private prunedObject(orphan: Orphan, outcome: PrunedObject['outcome'], message?: string): PrunedObject {
    const { metadata } = orphan.object;
    return {
      apiVersion: orphan.object.apiVersion, kind: orphan.resource.kind,
      ...(metadata?.namespace ? { namespace: metadata.namespace } : {}),
      name: metadata?.name, outcome, ...(message ? { message } : {}),
    };
  }

  // ----- Applying

  private async applyStep(step: ApplyStep, states: ObjectState[]): Promise<void> {
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

  private async applyOne(state: ObjectState): Promise<void> {
    const { object } = state.planned;
    if (!state.resource) {
      if (this.dryRun) {
        const crd = this.resolver.crdInPlan(object.apiVersion, object.kind)!;
        return this.skip(state, `its CustomResourceDefinition ${crd.object.metadata.name} is not installed yet, and a dry run does not install it`);
      }
      state.resource = await this.servedResource(state);
    }
    const resource = state.resource;
    const path = resourcePath(resource, state.namespace, object.metadata.name);
    const body = this.applySet.labelled(targetBody(state));

    let before: any;
    let known = true;
    try {
      before = (await this.client.request({ method: 'GET', path, signal: this.signal() })).body;
    } catch (e) {
      this.rethrowTimeout(e);
      if (statusOf(e) === 404) before = undefined;
      else if (statusOf(e) === 403) known = false;
      else return this.fail(state, this.applyError(e, state, 'reading'), transient(e));
    }

    {
      try {
        const response = await this.client.request({
          method: 'PATCH', path, body, contentType: APPLY_PATCH, signal: this.signal(),
          query: {
            fieldManager: this.fieldManager,
            force: this.options.forceConflicts ? 'true' : undefined,
            dryRun: this.dryRun ? 'All' : undefined,
          },
        });
        state.live = response.body;
        state.outcome = response.status === 201 ? ApplyOutcome.CREATED
          : !known ? ApplyOutcome.APPLIED
            : before === undefined ? ApplyOutcome.CREATED
              : content(before) === content(response.body) ? ApplyOutcome.UNCHANGED : ApplyOutcome.CONFIGURED;
        this.line(state.outcome, `${targetLabel(state)}${this.dryRun ? ' (dry run)' : ''}`);
        return undefined;
      } catch (e) {
        this.rethrowTimeout(e);
        if (this.dryRun && this.namespaceMissing(e, state)) {
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
    state.message = `${refusal.refusal}: deleted and created again (it opted in to replacement); ${refusal.cost}`;
    if (this.dryRun) {
      state.outcome = ApplyOutcome.REPLACED;
      this.line(state.outcome, `${targetLabel(state)} (dry run): would be deleted and created again: ${refusal.refusal}`);
      return;
    }
    this.line('replacing', `${targetLabel(state)}: ${refusal.refusal}: deleting it to create it again (${refusal.cost})`);
    try {
      const { body: live } = await this.client.request({ method: 'GET', path, signal: this.signal() });
      await this.client.request({ method: 'DELETE', path, query: { propagationPolicy: 'Background' }, signal: this.signal() });
      await this.waitUntilGone([{ resource: state.resource!, object: live, wave: state.planned.wave, phase: state.planned.phase }]);
      state.live = (await this.client.request({
        method: 'PATCH', path, body, contentType: APPLY_PATCH, signal: this.signal(), query: { fieldManager: this.fieldManager },
      })).body;
    } catch (e) {
      this.rethrowTimeout(e);
      if (e instanceof Stop) throw e;
      return this.fail(state, `replacing it failed: ${this.applyError(e, state, 'applying')}`);
    }
    state.outcome = ApplyOutcome.REPLACED;
    this.line(state.outcome, targetLabel(state));
    return undefined;
  }

  private skip(state: ObjectState, message: string): void {
    state.outcome = ApplyOutcome.SKIPPED;
    state.message = message;
    this.line(state.outcome, `${targetLabel(state)}: ${message}`);
  }

  private fail(state: ObjectState, message: string, fault = false): void {
    state.outcome = ApplyOutcome.FAILED;
    state.message = message;
    state.fault = fault;
    this.line(state.outcome, `${targetLabel(state)}: ${message}`);
  }

  /** A 404 because the object's namespace (one the folder creates) does not exist. */
  private namespaceMissing(e: unknown, state: ObjectState): boolean {
    if (statusOf(e) !== 404 || state.namespace === undefined) return false;
    const { details } = statusBody(e);
    return this.resolver.createsNamespace(state.namespace) && details?.kind === 'namespaces' && details?.name === state.namespace;
  }

  /** What went wrong with one object, and what to do about it. */
  private applyError(e: unknown, state: ObjectState, doing: 'reading' | 'applying'): string {
    return describeObjectError(e, state, this.cluster, this.plan.dir, doing,
      this.wait ? '' : ' (without --no-wait, apply waits for the stack\'s webhook first)');
  }

  // ----- Waiting

  private async waitFor(states: readonly ObjectState[], more: boolean): Promise<void> {
    const watched = states.filter(s => s.live !== undefined && readinessOf(s.live) !== undefined);
    if (!watched.length) return;
    const since = this.io.now();
    const said = new Map<ObjectState, string>();
    const judge = (state: ObjectState) => {
      state.readiness = readinessOf(state.live)!;
      if (state.readiness.state === ReadinessState.READY) {
        const ms = this.io.now() - since;
        this.line('ready', `${targetLabel(state)}: ${state.readiness.message}${ms >= 1000 ? ` (${took(ms)})` : ''}`);
      } else if (said.get(state) !== state.readiness.message) {
        said.set(state, state.readiness.message);
        this.line(state.readiness.state, `${targetLabel(state)}: ${state.readiness.message}`);
      }
    };
    let pending = [...watched];
    for (const state of pending) judge(state);
    for (;;) {
      const failures = pending.filter(s => s.readiness?.state === ReadinessState.FAILED);
      if (failures.length) {
        throw new Stop(`${failures.map(s => `${targetWhere(s)} failed: ${s.readiness!.message}`).join('\n')}`
          + `${more ? `\n${this.notApplied()}` : ''}`);
      }
      pending = pending.filter(s => s.readiness?.state !== ReadinessState.READY);
      if (!pending.length) return;
      await this.sleep();
      for (const state of pending) {
        const resource = state.resource!;
        try {
          state.live = (await this.client.request({
            method: 'GET', path: resourcePath(resource, state.namespace, state.planned.object.metadata.name), signal: this.signal(),
          })).body;
        } catch (e) {
          this.rethrowTimeout(e);
          if (statusOf(e) === 404) {
            state.readiness = failed('it was deleted while apply waited for it');
            this.line('failed', `${targetLabel(state)}: ${state.readiness.message}`);
            continue;
          }
          if (statusOf(e) === 403) {
            throw new Stop(`Cannot read ${targetWhere(state)} to wait for it: ${statusBody(e).message}. `
              + 'Waiting needs the verb get on what apply waits for; or pass --no-wait');
          }
          if (transient(e) || statusOf(e) === undefined) continue;
          throw new Stop(this.requestError(e, `reading ${targetLabel(state)}`).message);
        }
        judge(state);
      }
    }
  }

  // ----- Time

  private remaining(): number {
    return this.deadline - this.io.now();
  }

  /** Aborts a request at the deadline, or on Ctrl-C. */
  private signal(): AbortSignal {
    if (this.interrupted()) throw new Interrupted();
    const remaining = this.remaining();
    if (remaining <= 0) throw new TimedOut();
    const deadline = AbortSignal.timeout(remaining);
    return this.io.interrupt ? AbortSignal.any([deadline, this.io.interrupt]) : deadline;
  }

  private rethrowTimeout(e: unknown): void {
    if (e instanceof Interrupted || this.interrupted()) throw new Interrupted();
    const name = (e as { name?: string; type?: string }).name;
    if (name === 'AbortError' || name === 'TimeoutError' || (e as { type?: string }).type === 'aborted' || this.remaining() <= 0) throw new TimedOut();
  }

  private async sleep(): Promise<void> {
    if (this.interrupted()) throw new Interrupted();
    const remaining = this.remaining();
    if (remaining <= 0) throw new TimedOut();
    await new Promise<void>(resolve => {
      const done = () => {
        clearTimeout(timer);
        this.io.interrupt?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(this.pollMs, remaining));
      this.io.interrupt?.addEventListener('abort', done, { once: true });
    });
    if (this.interrupted()) throw new Interrupted();
    if (this.remaining() <= 0) throw new TimedOut();
  }

  /** The timeout's message: what is not ready and why, what was not applied, and where to look. */
  private timedOut(): string {
    const ms = this.timeout.toMilliseconds();
    const notReady = this.states.filter(s => s.readiness && s.readiness.state !== ReadinessState.READY);
    const parts: string[] = [];
    if (notReady.length) parts.push(`not ready:\n${notReady.map(s => `  ${targetLabel(s)}: ${s.readiness!.message}`).join('\n')}`);
    if (this.unserved) parts.push(`still waiting for ${this.unserved}`);
    const retry = this.lastRetry;
    if (retry && this.io.now() <= retry.at + retry.delayMs + this.requestTimeoutMs) {
      parts.push(`the API server was failing: ${retry.method} ${retry.path}: ${retry.reason.split('\n')[0]} (${retry.attempt} tries)`);
    }
    const rest = this.notApplied();
    if (rest) parts.push(rest);
    if (notReady.length) {
      // The objects of one namespace (or cluster-scoped ones), for one kubectl command.
      const namespace = notReady[0].namespace;
      const names = notReady.filter(s => s.namespace === namespace).slice(0, 3)
        .map(s => `${s.planned.object.kind.toLowerCase()}/${s.planned.object.metadata.name}`);
      parts.push(`Find out why: kubectl describe${namespace ? ` -n ${namespace}` : ''} ${names.join(' ')}`
        + `${namespace ? `, kubectl get events -n ${namespace}` : ''}`);
    }
    return `Timed out after ${ms < 1000 ? `${ms}ms` : humanDuration(ms)}${parts.length ? `; ${parts.join('\n')}` : ''}`;
  }

  /** `not applied: 2 objects of wave 0, custom resources`. */
  private notApplied(): string {
    const rest = this.states.filter(s => s.outcome === ApplyOutcome.NOT_APPLIED);
    if (!rest.length) return '';
    const steps = [...new Set(rest.map(s => stepTitle(s.planned)))];
    return `not applied: ${rest.length} object${rest.length === 1 ? '' : 's'} of ${steps.join('; ')}`;
  }

  // ----- Output

  private requestError(e: unknown, what: string): Error {
    if (this.interrupted()) return new Interrupted();
    if ((e as { name?: string }).name === 'AbortError' || this.remaining() <= 0) return new TimedOut();
    return describeApiError(e, what, this.cluster);
  }

  private log(text: string): void {
    (this.json ? this.io.stderr : this.io.stdout).write(`${text}\n`);
  }

  private line(what: string, text: string): void {
    this.log(`  ${what.padEnd(OUTCOME_WIDTH)}${text}`);
  }

  private report(error: string | undefined, interrupted = false): ApplyReport {
    const objects: AppliedObject[] = this.states.map(s => ({
      file: s.planned.file,
      apiVersion: s.planned.object.apiVersion,
      kind: s.planned.object.kind,
      ...(s.namespace ?? s.planned.object.metadata.namespace ? { namespace: s.namespace ?? s.planned.object.metadata.namespace } : {}),
      name: s.planned.object.metadata.name,
      wave: s.planned.wave,
      phase: s.planned.phase,
      outcome: s.outcome,
      ...(s.message ? { message: s.message } : {}),
      ...(s.readiness ? { readiness: s.readiness } : {}),
    }));
    const counts: { [outcome: string]: number } = {};
    for (const outcome of Object.values(ApplyOutcome)) {
      const n = objects.filter(o => o.outcome === outcome).length;
      if (n) counts[outcome] = n;
    }
    const seconds = Math.round((this.io.now() - this.startedAt) / 100) / 10;
    if (!error) {
      const pruned = this.pruned.filter(p => p.outcome === 'pruned').length;
      const tally = [...Object.entries(counts).map(([outcome, n]) => `${n} ${outcome}`), ...(this.options.prune ? [`${pruned} pruned`] : [])]
        .join(', ');
      this.log(`${this.dryRun ? 'Dry run of' : 'Applied'} ${objects.length} object${objects.length === 1 ? '' : 's'} in ${took(this.io.now() - this.startedAt)}: ${tally}.`);
      this.hint();
    }
    return {
      ok: !error, dir: this.plan.dir, dryRun: this.dryRun, wait: this.wait, fieldManager: this.fieldManager, seconds, counts, objects,
      applySet: { parent: parentLabel(this.applySet.parent), id: this.applySet.parent.id },
      ...(this.options.prune ? { pruned: this.pruned } : {}),
      ...(error ? { error } : {}),
      ...(interrupted ? { interrupted } : {}),
    };
  }

  /** Points to `status --watch` for the Functions applied: apply does not wait for their builds. */
  private hint(): void {
    if (this.dryRun) return;
    const functions = this.states.filter(s => s.planned.object.apiVersion === FUNCTION_API_VERSION && s.planned.object.kind === FUNCTION_KIND
      && s.outcome !== ApplyOutcome.UNCHANGED && s.outcome !== ApplyOutcome.SKIPPED);
    if (!functions.length) return;
    const namespaces = [...new Set(functions.map(s => s.namespace))];
    const where = namespaces.length === 1 ? `-n ${namespaces[0]}` : '-A';
    this.log(`The Function Controller rolls the Functions out now (under 1.11.1 it builds them first); apply does not wait for them. Follow them with: kyma-serverless status ${where} --watch`);
  }
}

/**
 * Applies one folder of manifests: plans the order ({@link planApply}), finds every kind through
 * discovery, then applies step by step with server-side apply and, with `wait`, waits after each
 * step until what it applied is ready ({@link readinessOf}). A step with a failed object, a failed
 * wait or the timeout ends the run; later steps are not applied.
 *
 * @param dir the folder, such as `dist`
 * @param options the cluster and the command's options
 * @param io where the lines of progress go, and the clock
 * @returns the report; `ok` is false (with `error`) when something failed or timed out
 * @throws CliError when the folder cannot be planned or the kubeconfig cannot be used
 */
export async function runApply(dir: string, options: ApplyOptions = {}, io: ApplyIo = processIo()): Promise<ApplyReport> {
  const plan = planApply(dir);
  requireApplySetForPrune(plan, options);
  const cluster = await connect(options);
  let run: ApplyRun | undefined;
  const client = await RestClient.create(cluster.kubeConfig, {
    requestTimeoutMs: (options.requestTimeout ?? Duration.seconds(30)).toMilliseconds(),
    retryTimeoutMs: (options.retryTimeout ?? Duration.minutes(2)).toMilliseconds(),
    onRetry: notice => run?.retrying(notice),
  });
  run = new ApplyRun(plan, cluster, client, new Discovery(client), options, io);
  return run.run();
}

/**
 * A folder without a Namespace names no ApplySet of its own: the default parent would be in the
 * context's namespace, shared by every such folder, and pruning one would delete the other's objects.
 *
 * @throws CliError when `prune` is asked for such a folder without `applyset`
 */
export function requireApplySetForPrune(plan: ApplyPlan, options: Pick<ApplyOptions, 'prune' | 'applyset'>): void {
  if (!options.prune || options.applyset || plan.steps.some(s => s.objects.some(p => p.group === '' && p.object.kind === 'Namespace'))) return;
  throw new CliError(`${plan.dir} holds no Namespace to keep its ApplySet parent in: name the parent with --applyset (such as `
    + '--applyset my-app), one for each folder you apply into the cluster, so that pruning one folder never deletes another\'s objects');
}

/** The resource a CRD of the folder will serve. */
function crdResource(crd: PlannedObject | undefined): ApiResource | undefined {
  const spec = crd?.object.spec;
  if (!spec?.names?.plural) return undefined;
  return {
    group: spec.group, version: spec.versions?.[0]?.name, kind: spec.names.kind, plural: spec.names.plural, namespaced: spec.scope !== 'Cluster',
  };
}

/** Adds `apply` to a program whose global options are those of `kyma-serverless`. */
export function addApplyCommand(program: Command): void {
  program.command('apply')
    .description('Server-side apply one folder of manifests in sync-wave order, waiting after each step until what it applied is ready')
    .argument('[dir]', 'folder of manifests (not its subfolders)', 'dist')
    .addOption(new Option('--wait', 'after each step, wait until what it applied is ready').default(true))
    .option('--no-wait', 'apply step after step without waiting (custom resources still wait for their CRD to be served)')
    .addOption(new Option('--timeout <duration>', 'give up after this long, waits included (exit 1), e.g. 90s, 10m')
      .argParser(parseDuration).default(Duration.minutes(10), '10m'))
    .addOption(new Option('--poll-interval <duration>', 'how often to read what apply waits for').argParser(parseDuration).default(Duration.seconds(2), '2s'))
    .addOption(new Option('--request-timeout <duration>', 'abandon a request the API server does not answer within this, and try it again')
      .argParser(parseDuration).default(Duration.seconds(30), '30s'))
    .addOption(new Option('--retry-timeout <duration>', 'try a request again for this long while the API server is unreachable, '
      + 'does not answer, or answers 429, 502, 503 or 504 (pauses double from 250ms to 8s, or follow Retry-After)')
      .argParser(parseDuration).default(Duration.minutes(2), '2m'))
    .option('--dry-run', 'send every object with dryRun=All: the API server validates and admits it, and stores nothing')
    .option('--force-conflicts', 'take over fields another field manager owns, rather than fail')
    .option('--field-manager <name>', 'the field manager that owns the applied fields', DEFAULT_FIELD_MANAGER)
    .option('--prune', 'after a successful apply, delete what the folder no longer holds: the members of its ApplySet this field manager applied')
    .option('--applyset <[secrets/|configmaps/]name>',
      `the ApplySet parent, in the namespace of the folder's first Namespace (default: ${DEFAULT_APPLYSET_NAME})`)
    .addHelpText('after', `
Order: by the sync wave annotation argocd.argoproj.io/sync-wave (an integer; 0 without it), and in
each wave: Namespaces, CRDs, PriorityClasses and StorageClasses first, then other built-in kinds,
then custom resources. Files in name order, documents in file order; kustomization.yaml and
subfolders (other environments) are left out. Everything is sent with server-side apply.

Waiting (the default): CRDs Established, Namespaces Active, Deployments, StatefulSets and DaemonSets
rolled out, Jobs complete (a failed Job fails the apply), webhook configurations that call a Service
given their caBundle. PersistentVolumeClaims and custom resources are not waited for: follow
Functions with kyma-serverless status --watch. Without waiting, the stack's admission webhook
(failurePolicy Fail) refuses Functions until its Pods are ready.

ApplySet (KEP-3659, as kubectl apply --applyset): every object is labelled
applyset.kubernetes.io/part-of=<id>, and a parent Secret (${DEFAULT_APPLYSET_NAME}, in the
namespace of the folder's first Namespace) lists the kinds and namespaces of the set. With --prune,
after everything was applied, the members the folder no longer holds are deleted, later sync waves
first (a Function after its APIRules, Subscriptions and ScaledObjects): only what this field
manager applied and nothing owns; Namespaces and CRDs are reported, not deleted.

Replacement: an object the API server refuses to change in place (a smaller PVC, a new selector)
is deleted and created again when it opted in (the Argo CD sync options Replace=true,Force=true and
the Flux annotation kustomize.toolkit.fluxcd.io/force: enabled); otherwise apply fails, saying how.

Faults: a request the API server does not answer (--request-timeout), or answers with 429, 502,
503, 504 (or 500 from an admission webhook it cannot call), or that cannot reach it (restarting),
is tried again, with pauses that double from 250ms to 8s or follow the answer's Retry-After, for
--retry-timeout, within --timeout. Other answers (403, 409 conflicts, 422, other 500s) fail the
object at once. A run that fails or is interrupted (Ctrl-C) says what was applied and what was
not, and never prunes: apply again, and it goes on from there (server-side apply is idempotent).

Exit code: 0 when everything was applied (and is ready), 1 when an object is refused, a wait fails,
or --timeout passes; later steps are then not applied; 130 on Ctrl-C (a second Ctrl-C ends at once).

Examples:
  # The stack and the Functions of dist/, in order, waiting for the stack to be ready
  kyma-serverless apply

  # One environment, in another context; give up after 15 minutes
  kyma-serverless apply dist/prod --context prod --timeout 15m

  # What would change, checked by the API server and its admission webhooks, nothing stored
  kyma-serverless apply --dry-run

  # Delete what was removed from dist/ (first see what: --dry-run, or kyma-serverless diff)
  kyma-serverless apply --prune

  # A CI deployment gate: apply, then wait for the Functions' builds
  kyma-serverless apply -o json > apply.json && kyma-serverless status -A --watch --timeout 15m
`)
    .action(async (dir: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ApplyOptions>();
      const interrupt = new AbortController();
      const onSigint = () => interrupt.abort(new Error('Interrupted (Ctrl-C)'));
      // The first Ctrl-C stops the run where it is, to report; a second one ends the process (the handler is gone by then).
      process.once('SIGINT', onSigint);
      let report: ApplyReport;
      try {
        report = await runApply(dir, options, processIo(interrupt.signal));
      } finally {
        process.off('SIGINT', onSigint);
      }
      if (isStructured(options.output)) printDocument(report, options.output!);
      if (!report.ok) throw new CliError(report.error!, report.interrupted ? 130 : 1);
    });
}
