/**
 * `kyma-serverless diff [dir]`: what applying a folder of manifests will do, before it happens.
 *
 * Every object is sent as `apply` sends it (server-side apply, the same field manager, the
 * ApplySet label), with `dryRun=All`: the API server and its admission webhooks judge it and store
 * nothing. The answer is compared with the object in the cluster, and each change is said in the
 * words of what it does ({@link changeMeaning}): a Function's new build, rollout or rescale, the
 * Pods a workload restarts, the access a Service, webhook or role gives. A change the API server
 * refuses for an immutable field comes back from the dry run itself and is shown with the way
 * through. Members of the folder's ApplySet that the folder no longer holds are orphans:
 * `apply --prune` deletes them. Exit codes are those of `kubectl diff`.
 */
import * as fs from 'node:fs';
import { Duration } from 'cdk8s';
import { Command, Option } from 'commander';
import { refusedChangeOfAnswer } from '../../policy/replacement';
import { STACK_REPLACEMENT_OPT_INS } from '../../stack/serverless-stack';
import { APPLYSET_PART_OF_LABEL, ApplySet, ApplySetState, DEFAULT_APPLYSET_NAME, KeptReason, applySetParentOf, parentLabel } from '../_applyset';
import { Cluster, ClusterOptions, connect, describeApiError, statusOf } from '../_kube';
import { CliError } from '../errors';
import { ObjectTarget, PlanResolver, describeObjectError, statusBody, targetBody } from '../_objects';
import { OutputFormat, isStructured, printDocument } from '../_output';
import { ApplyPlan, DEFAULT_FIELD_MANAGER, planApply } from '../_plan';
import { APPLY_PATCH, Discovery, RestClient, resourcePath } from '../_rest';
import { parseDuration } from '../status';
import { DiffOutcome, ObjectDiff, changeMeaning, changedFields, comparable, createMeaning, orphanMeaning } from './model';
import { ReleaseMove, releaseMoveOf, renderMove, renderMoveMarkdown } from './move';
import { DiffCounts, countOutcomes, renderMarkdown, renderText, tally, yamlFieldDiff } from './render';

export { DiffOutcome } from './model';
export type { ObjectDiff } from './model';
export { LeftoverRemoval } from './move';
export type { FunctionMove, Leftover, ReleaseMove } from './move';

/** Options of {@link runDiff}: the cluster options and the command's own. */
export interface DiffOptions extends ClusterOptions {
  /**
   * The field manager apply uses: the dry run takes the fields it owns as apply would.
   *
   * @default 'kyma-serverless'
   */
  readonly fieldManager?: string;
  /**
   * The ApplySet parent, as for `apply`.
   *
   * @default 'kyma-serverless-applyset'
   */
  readonly applyset?: string;
  /**
   * Where to write the Markdown summary (a pull-request comment); `-` for standard output.
   *
   * @default - none
   */
  readonly markdown?: string;
  /**
   * The output format: with JSON, standard output gets the report.
   *
   * @default OutputFormat.TABLE
   */
  readonly output?: OutputFormat;
  /**
   * How long one request may go unanswered before it is abandoned and tried again.
   *
   * @default Duration.seconds(30)
   */
  readonly requestTimeout?: Duration;
  /**
   * How long one request is tried again while the API server is unreachable, does not answer, or
   * answers 429, 502, 503 or 504 (as for `apply`); after that, the diff fails (exit code 2).
   *
   * @default Duration.minutes(2)
   */
  readonly retryTimeout?: Duration;
}

/** What {@link runDiff} found. */
export interface DiffReport {
  /** The exit code, as `kubectl diff`'s: 0 nothing changes, 1 something changes, 2 the diff failed. */
  readonly exitCode: number;
  readonly dir: string;
  /** The API server's URL. */
  readonly server: string;
  readonly fieldManager: string;
  /** The folder's ApplySet: its parent, its id, and whether the parent exists in the cluster. */
  readonly applySet: { readonly parent: string; readonly id: string; readonly exists: boolean };
  /** How many objects had each outcome (orphans apply --prune leaves are not counted). */
  readonly counts: DiffCounts;
  /** Every object of the folder in apply order, then the orphans in the order prune deletes them. */
  readonly objects: readonly ObjectDiff[];
  /**
   * When the folder moves the cluster to another release (its Function CRD names another one): what
   * happens to every Function of the cluster, and what build mode left behind, with who removes it.
   */
  readonly move?: ReleaseMove;
  /** Why the diff failed, when it did. */
  readonly error?: string;
}

/** One run of the command. */
class DiffRun {
  private readonly fieldManager: string;
  private readonly resolver: PlanResolver;
  private readonly applySet: ApplySet;
  private readonly targets: ObjectTarget[];

  constructor(
    private readonly plan: ApplyPlan,
    private readonly cluster: Cluster,
    private readonly client: RestClient,
    private readonly discovery: Discovery,
    options: DiffOptions,
  ) {
    this.fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
    this.resolver = new PlanResolver(plan, cluster, discovery, {
      namespace: options.namespace, signal: () => undefined, requestError: (e, what) => describeApiError(e, what, cluster),
    });
    this.applySet = new ApplySet(client, applySetParentOf(plan, options.applyset, cluster.namespace));
    this.targets = plan.steps.flatMap(step => step.objects.map(planned => ({ planned })));
  }

  public async run(): Promise<DiffReport> {
    const objects: ObjectDiff[] = [];
    let state: ApplySetState = { exists: false, groupKinds: [], namespaces: [] };
    let error: string | undefined;
    let move: ReleaseMove | undefined;
    try {
      const problems = await this.resolver.resolveAll(this.targets);
      if (problems.length) throw new CliError(`Cannot diff ${this.plan.dir}:\n${problems.map(p => `  ${p}`).join('\n')}`);
      try {
        state = await this.applySet.read();
      } catch (e) {
        if (e instanceof CliError) throw e;
        throw describeApiError(e, `reading the ApplySet parent ${parentLabel(this.applySet.parent)}`, this.cluster);
      }
      for (const target of this.targets) objects.push(await this.diffOne(target));
      objects.push(...await this.orphans(state));
      move = await releaseMoveOf(this.plan, this.client);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      error = e.message;
    }
    const counts = countOutcomes(objects);
    const changes = objects.some(o => o.outcome !== DiffOutcome.UNCHANGED && o.outcome !== DiffOutcome.FAILED && !o.kept);
    const failed = error !== undefined || objects.some(o => o.outcome === DiffOutcome.FAILED);
    return {
      exitCode: failed ? 2 : changes ? 1 : 0,
      dir: this.plan.dir,
      server: this.cluster.server,
      fieldManager: this.fieldManager,
      applySet: { parent: parentLabel(this.applySet.parent), id: this.applySet.parent.id, exists: state.exists },
      counts,
      objects,
      ...(move ? { move } : {}),
      ...(error ? { error } : {}),
    };
  }

  /** Dry-runs one object as apply would send it, and compares the answer with the object in the cluster. */
  private async diffOne(target: ObjectTarget): Promise<ObjectDiff> {
    const { object, file } = target.planned;
    const base = {
      file, apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name,
      ...(target.namespace ?? object.metadata.namespace ? { namespace: target.namespace ?? object.metadata.namespace } : {}),
    };
    const failed = (message: string): ObjectDiff => ({ ...base, outcome: DiffOutcome.FAILED, title: 'failed', meaning: message, message });
    const created = (why: string): ObjectDiff => {
      const meaning = createMeaning(object);
      return { ...base, outcome: DiffOutcome.CREATE, ...meaning, meaning: `${meaning.meaning} (${why}, so the dry run cannot check it)` };
    };
    const createdWithNamespace = () => created(`its namespace ${target.namespace} is created by the same apply`);
    // A kind its CRD in the folder defines, or a namespace the folder creates: the dry run cannot check it, and it is new.
    if (!target.resource) {
      const crd = this.resolver.crdInPlan(object.apiVersion, object.kind)!;
      return created(`its CustomResourceDefinition ${crd.object.metadata.name} is created by the same apply`);
    }
    const path = resourcePath(target.resource, target.namespace, object.metadata.name);
    const body = this.applySet.labelled(targetBody(target));
    let live: any;
    try {
      live = (await this.client.request({ method: 'GET', path })).body;
    } catch (e) {
      if (statusOf(e) === 404 && this.resolver.createsNamespace(target.namespace) && statusBody(e).details?.kind === 'namespaces') {
        return createdWithNamespace();
      }
      if (statusOf(e) !== 404) return failed(describeObjectError(e, target, this.cluster, this.plan.dir, 'reading'));
    }
    let conflict: string | undefined;
    let after: any;
    for (const force of [false, true]) {
      try {
        after = (await this.client.request({
          method: 'PATCH', path, body, contentType: APPLY_PATCH,
          query: { fieldManager: this.fieldManager, dryRun: 'All', force: force ? 'true' : undefined },
        })).body;
        break;
      } catch (e) {
        if (statusOf(e) === 409 && !force) {
          conflict = `${statusBody(e).message}: apply fails here without --force-conflicts (Argo CD and Flux take the fields over)`;
          continue;
        }
        if (statusOf(e) === 404 && this.resolver.createsNamespace(target.namespace)) return createdWithNamespace();
        const refused = refusedChangeOfAnswer(body, statusOf(e), statusBody(e), STACK_REPLACEMENT_OPT_INS);
        if (refused) {
          const meaning = refused.replacementAllowed
            ? `${refused.refusal}: it opted in to replacement, so the sync deletes it and creates it again; ${refused.cost}`
            : `${refused.refusal}: the API server refuses this change, and the sync fails here`;
          return { ...base, outcome: DiffOutcome.REFUSED, title: refused.replacementAllowed ? 'replace' : 'refused', meaning, refused };
        }
        return failed(describeObjectError(e, target, this.cluster, this.plan.dir, 'dry-running'));
      }
    }
    const joinsApplySet = live?.metadata?.labels?.[APPLYSET_PART_OF_LABEL] !== this.applySet.parent.id;
    if (live === undefined) {
      return { ...base, outcome: DiffOutcome.CREATE, ...createMeaning(after), ...(conflict ? { conflict } : {}) };
    }
    const [before, now] = [comparable(live), comparable(after)];
    const fields = changedFields(before, now);
    const joins = joinsApplySet ? { joinsApplySet } : {};
    if (!fields.length) return { ...base, outcome: DiffOutcome.UNCHANGED, title: 'unchanged', meaning: 'unchanged', ...joins };
    return {
      ...base, outcome: DiffOutcome.CHANGE, ...changeMeaning(live, after, fields), fields, diff: yamlFieldDiff(before, now),
      ...(conflict ? { conflict } : {}), ...joins,
    };
  }

  /** The members of the ApplySet the folder no longer holds. */
  private async orphans(state: ApplySetState): Promise<ObjectDiff[]> {
    if (!state.exists) return [];
    const scope = ApplySet.union(state, ApplySet.scopeOf(this.targets));
    let members;
    try {
      members = await this.applySet.members(this.discovery, scope);
    } catch (e) {
      throw describeApiError(e, `listing the members of the ApplySet ${parentLabel(this.applySet.parent)}`, this.cluster);
    }
    return ApplySet.orphansOf(members, this.targets, this.fieldManager).map(orphan => {
      const { metadata } = orphan.object;
      const pruned = !orphan.kept;
      return {
        apiVersion: orphan.object.apiVersion, kind: orphan.resource.kind,
        ...(metadata?.namespace ? { namespace: metadata.namespace } : {}), name: metadata?.name,
        outcome: DiffOutcome.ORPHANED,
        title: 'orphaned',
        meaning: pruned ? `no longer in ${this.plan.dir}: apply --prune deletes it, and ${orphanMeaning(orphan.object)}`
          : `no longer in ${this.plan.dir}, and apply --prune leaves it: ${orphan.keptBecause}`,
        // Objects a controller labelled are not the set's: listed in JSON only.
        ...(orphan.kept && orphan.kept !== KeptReason.DELETES_MORE ? { kept: orphan.keptBecause } : {}),
      };
    });
  }
}

/**
 * Diffs one folder of manifests against the cluster: a server-side dry run of every object, in
 * apply order, and the members of its ApplySet it no longer holds.
 *
 * @param dir the folder, such as `dist`
 * @returns the report; `exitCode` says whether anything changes (1) or the diff failed (2)
 * @throws CliError when the folder cannot be read or the kubeconfig cannot be used
 */
export async function runDiff(dir: string, options: DiffOptions = {}): Promise<DiffReport> {
  const plan = planApply(dir);
  const cluster = await connect(options);
  const client = await RestClient.create(cluster.kubeConfig, {
    requestTimeoutMs: options.requestTimeout?.toMilliseconds(),
    retryTimeoutMs: options.retryTimeout?.toMilliseconds(),
    onRetry: notice => process.stderr.write(`kyma-serverless: ${notice.method} ${notice.path}: ${notice.reason.split('\n')[0]}; `
      + `try ${notice.attempt + 1} in ${(notice.delayMs / 1000).toFixed(1)}s\n`),
  });
  return new DiffRun(plan, cluster, client, new Discovery(client), options).run();
}

/** The text report: the changes, then a summary line. */
export function formatDiffReport(report: DiffReport): string {
  const header = `Diff of ${report.dir} against ${report.server} (server-side dry run, field manager ${report.fieldManager}; `
    + `ApplySet ${report.applySet.parent}${report.applySet.exists ? '' : ', not in the cluster yet: no orphans known'})`;
  const joining = report.objects.filter(o => o.joinsApplySet).length;
  const summary = `${tally(report.counts)}${joining ? `; ${joining} object${joining === 1 ? '' : 's'} join${joining === 1 ? 's' : ''} the ApplySet `
    + '(kyma-serverless apply labels them; Argo CD and Flux do not)' : ''}`;
  // A diff that failed before any object was compared has nothing to report: its error says it all (on standard error).
  if (report.error && !report.objects.length && !report.move) return '';
  const lines = [header, ...renderText(report.objects), ...(report.move ? renderMove(report.move, 12) : []), `${report.dir}: ${summary}`];
  if (report.error) lines.push(`kyma-serverless: the diff stopped here: ${report.error.split('\n')[0]}`);
  return `${lines.join('\n')}\n`;
}

/** Adds `diff` to a program whose global options are those of `kyma-serverless`. */
export function addDiffCommand(program: Command): void {
  program.command('diff')
    .description('What applying a folder of manifests will change in the cluster, and what each change means, before anything changes')
    .argument('[dir]', 'folder of manifests (not its subfolders)', 'dist')
    .option('--field-manager <name>', 'the field manager apply uses', DEFAULT_FIELD_MANAGER)
    .option('--applyset <[secrets/|configmaps/]name>', `the ApplySet parent, as for apply (default: ${DEFAULT_APPLYSET_NAME})`)
    .option('--markdown <file>', 'also write a Markdown summary for a pull-request comment (- for standard output)')
    .addOption(new Option('--request-timeout <duration>', 'abandon a request the API server does not answer within this, and try it again')
      .argParser(parseDuration).default(Duration.seconds(30), '30s'))
    .addOption(new Option('--retry-timeout <duration>', 'try a request again for this long while the API server is unreachable, '
      + 'does not answer, or answers 429, 502, 503 or 504').argParser(parseDuration).default(Duration.minutes(2), '2m'))
    .addHelpText('after', `
Each object is sent as apply sends it (server-side apply, the same field manager, the ApplySet
label) with dryRun=All: the API server and its admission webhooks judge it and store nothing. What
changes is shown as YAML of the changed fields, with what it means:
  Function                new build (source, dependencies, runtime, base image, Git reference),
                          rollout (env, resources, Pod labels, secretMounts), rescale, next build
                          (build resources), relabel, or nothing
  Deployment, StatefulSet Pods restarted (the Pod template changes), rescale
  Service, webhooks, RBAC what changes in access
  refused                 a change the API server will refuse (a smaller PVC, a selector, a Job's
                          template, an immutable ConfigMap), with the way through and what it costs
  orphaned                in the folder's ApplySet, no longer in the folder: apply --prune deletes it
  move, leftover          when the folder's Function CRD names another release than the cluster's
                          (1.11.1 to 1.13.0): what happens to every Function of the cluster and what
                          it now needs, and each object build mode left, with who removes it (the
                          clean-up Job of the 1.13.0 stack, or the sync's prune)

Faults: requests are tried again as apply tries them (--request-timeout, --retry-timeout); a diff
stores nothing, so one cut short by a fault or Ctrl-C leaves the cluster as it was.

Exit code, as kubectl diff: 0 nothing changes, 1 something changes, 2 the diff failed (also when
the API server could not be asked), 130 on Ctrl-C.

Examples:
  # What a sync of dist/ will do to the current context's cluster
  kyma-serverless diff

  # In CI, for a pull-request comment; exit code 1 is not a failure
  kyma-serverless diff dist/prod --context prod --markdown diff.md || [ $? -eq 1 ]

  # For scripts
  kyma-serverless diff -o json | jq '.objects[] | select(.outcome == "refused")'
`)
    .action(async (dir: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<DiffOptions>();
      let report: DiffReport;
      try {
        report = await runDiff(dir, options);
      } catch (e) {
        // As kubectl diff: 1 means something changes, so a diff that could not run (no folder, no kubeconfig) exits 2.
        throw new CliError((e as Error).message, 2);
      }
      const text = formatDiffReport(report);
      if (isStructured(options.output)) {
        process.stderr.write(text);
        printDocument(report, options.output!);
      } else {
        process.stdout.write(text);
      }
      if (options.markdown) {
        const markdown = renderMarkdown(`kyma-serverless diff: ${report.dir} against ${report.server}`, report.objects,
          `${report.move ? `${renderMoveMarkdown(report.move).join('\n')}\n` : ''}<sub>Exit code ${report.exitCode}. Server-side dry run as field manager ${report.fieldManager}; `
          + `ApplySet ${report.applySet.parent}.</sub>`);
        if (options.markdown === '-') process.stdout.write(markdown);
        else fs.writeFileSync(options.markdown, markdown);
      }
      if (report.exitCode === 2) {
        const failed = report.objects.filter(o => o.outcome === DiffOutcome.FAILED).length;
        throw new CliError(report.error ?? `${failed} object${failed === 1 ? '' : 's'} could not be dry-run: see above`, 2);
      }
      process.exitCode = report.exitCode;
    });
}
