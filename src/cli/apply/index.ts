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
 *
 * This file holds the command and the run, step after step, and re-exports the rest: `options.ts`
 * (what the command takes), `plan.ts` (the objects in apply order, and what the options ask),
 * `waves.ts` (applying each step, and waiting for it), `prune.ts` (the folder's ApplySet and
 * `--prune`), `retries.ts` (the deadline, Ctrl-C and the API server's faults), `output.ts` (the
 * lines of progress and the messages), `readiness.ts` and `report.ts` (what `-o json` prints), with
 * what they share in `context.ts`.
 */
import { Duration } from 'cdk8s';
import { Command, Option } from 'commander';
import { ApplySet, DEFAULT_APPLYSET_NAME, applySetParentOf } from '../_applyset';
import { Cluster, connect } from '../_kube';
import { CliError } from '../errors';
import { PlanResolver } from '../_objects';
import { isStructured, printDocument } from '../_output';
import { ApplyPlan, DEFAULT_FIELD_MANAGER, planApply, stepTitle } from '../_plan';
import { Discovery, RestClient, RetryNotice } from '../_rest';
import { parseDuration, processIo } from '../status';
import { RunContext } from './context';
import { ApplyIo, ApplyOptions } from './options';
import { Progress, PruneProgress, applyReport, interruptedMessage, timedOutMessage, withNotDone } from './output';
import { objectStates, requireApplySetForPrune, runSettings } from './plan';
import { ApplySetPrune } from './prune';
import { ApplyReport } from './report';
import { Interrupted, RunClock, Stop, TimedOut } from './retries';
import { Waves } from './waves';

export { ApplyIo, ApplyOptions } from './options';
export { requireApplySetForPrune } from './plan';
export { Readiness, ReadinessState, readinessOf } from './readiness';
export { AppliedObject, ApplyOutcome, ApplyReport, PrunedObject } from './report';

/** One run of the command: the plan's steps in order, then the prune; the report says how far it got. */
class ApplyRun {
  private readonly context: RunContext;
  private readonly waves: Waves;
  private readonly applySetPrune: ApplySetPrune;

  constructor(plan: ApplyPlan, cluster: Cluster, client: RestClient, discovery: Discovery, options: ApplyOptions, io: ApplyIo) {
    const states = objectStates(plan);
    const progress = new Progress(io, isStructured(options.output));
    const clock = new RunClock(io, options, cluster, progress);
    const resolver = new PlanResolver(plan, cluster, discovery, {
      namespace: options.namespace, signal: () => clock.signal(), requestError: (e, what) => clock.requestError(e, what),
    });
    const applySet = new ApplySet(client, applySetParentOf(plan, options.applyset, cluster.namespace));
    this.context = { plan, settings: runSettings(options), states, cluster, client, discovery, resolver, applySet, io, clock, progress };
    this.waves = new Waves(this.context);
    this.applySetPrune = new ApplySetPrune(this.context, this.waves);
  }

  public async run(): Promise<ApplyReport> {
    const { plan, states, settings, cluster, clock, progress } = this.context;
    let error: string | undefined;
    try {
      const steps = plan.steps.length;
      const objects = states.length;
      progress.log(`Applying ${objects} object${objects === 1 ? '' : 's'} from ${plan.dir} in ${steps} step${steps === 1 ? '' : 's'} `
        + `to ${cluster.server} (server-side apply, field manager ${settings.fieldManager}`
        + `${settings.dryRun ? ', dry run: nothing is stored' : settings.wait ? '' : ', not waiting'})`);
      await this.resolveAll();
      await this.applySetPrune.readSet();
      let done = 0;
      for (const step of plan.steps) {
        await this.applySetPrune.writeParent();
        const ofStep = states.slice(done, done + step.objects.length);
        done += step.objects.length;
        progress.log(`${stepTitle(step)}: ${ofStep.length} object${ofStep.length === 1 ? '' : 's'}`);
        await this.waves.applyStep(step, ofStep);
        if (settings.wait) await this.waves.waitFor(ofStep, done < states.length);
      }
      await this.applySetPrune.writeParent();
      if (settings.prune) await this.applySetPrune.prune();
    } catch (e) {
      if (e instanceof Interrupted || clock.interrupted()) return this.report(interruptedMessage(states, this.pruneProgress()), true);
      if (e instanceof Stop) error = e.message;
      else if (e instanceof TimedOut) error = timedOutMessage(clock.timeoutMs, states, this.waves.unserved, clock.failing());
      else if (e instanceof CliError) error = e.message;
      else throw e;
      error = withNotDone(error, states, this.pruneProgress(), clock.retried);
    }
    return this.report(error);
  }

  /** Tells the run of a request the client tries again (called by the client). */
  public retrying(notice: RetryNotice): void {
    this.context.clock.retrying(notice);
  }

  /**
   * Finds every kind's resource before anything is applied, so that a typo or a missing CRD stops
   * the run before it changes the cluster. Kinds a CRD of the folder defines are found at their step.
   */
  private async resolveAll(): Promise<void> {
    const problems = await this.context.resolver.resolveAll(this.context.states);
    if (problems.length) throw new Stop(`Nothing was applied:\n${problems.map(p => `  ${p}`).join('\n')}`);
  }

  private pruneProgress(): PruneProgress {
    return { asked: this.context.settings.prune, started: this.applySetPrune.started, pruned: this.applySetPrune.pruned };
  }

  private report(error: string | undefined, interrupted = false): ApplyReport {
    const { plan, settings, states, applySet, clock, io, progress } = this.context;
    const record = { dir: plan.dir, settings, states, pruned: this.applySetPrune.pruned, applySet: applySet.parent, startedAt: clock.startedAt, io };
    return applyReport(record, progress, error, interrupted);
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
