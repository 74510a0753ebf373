/**
 * Flux objects that deploy the synthesized output: a GitRepository source and a Kustomization.
 */
import { ApiObject, Chart, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import type * as kustomize from '@kubernetes-models/flux-cd/kustomize.toolkit.fluxcd.io/v1';
import type * as source from '@kubernetes-models/flux-cd/source.toolkit.fluxcd.io/v1';
import { DEFAULT_RELEASE, FUNCTION_API_VERSION, FUNCTION_KIND, ServerlessRelease } from '../api';
import { addModel } from './_model';
import { FLUX_STAGES_FOLDER, FluxStage } from './flux-stages';
import { FluxHealthCheck, fluxHealthChecks } from './health';

/** The namespace Flux runs in by default. */
export const FLUX_NAMESPACE = 'flux-system';

/**
 * Flux's health check for Functions under release 1.11.1 (the default), as
 * `fluxHealthChecks(ServerlessRelease.V1_11_1)` gives it with the other kinds.
 *
 * @deprecated Use {@link fluxHealthChecks} with the stack's release (under 1.13.0 a Function never
 * has `BuildReady`), or let {@link FluxKustomization} set them from its `release`.
 */
export const FLUX_FUNCTION_HEALTH_CHECK: FluxHealthCheck = fluxHealthChecks(ServerlessRelease.V1_11_1)
  .find(check => check.apiVersion === FUNCTION_API_VERSION && check.kind === FUNCTION_KIND)!;

/** The Flux models, loaded on first use: apps that emit no Flux object do not pay for them at synth. */
function fluxModels(): typeof kustomize & typeof source {
  return {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ...require('@kubernetes-models/flux-cd/kustomize.toolkit.fluxcd.io/v1'),
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ...require('@kubernetes-models/flux-cd/source.toolkit.fluxcd.io/v1'),
  };
}

/** Props of {@link FluxGitRepository}. */
export interface FluxGitRepositoryProps {
  /**
   * Name of the GitRepository.
   *
   * @default 'kyma-serverless'
   */
  readonly name?: string;
  /** URL of the Git repository that holds the output. */
  readonly url: string;
  /**
   * The branch to follow.
   *
   * @default 'main'
   */
  readonly branch?: string;
  /**
   * How often Flux fetches the repository.
   *
   * @default Duration.minutes(1)
   */
  readonly interval?: Duration;
  /**
   * A Secret in Flux's namespace with credentials for a private repository.
   *
   * @default - a public repository
   */
  readonly secretName?: string;
}

/** Flux's duration format: `90s`, `5m`, `1h`. */
function fluxDuration(duration: Duration): string {
  const seconds = duration.toSeconds();
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** A Flux GitRepository: the Git repository that holds the synthesized output. */
export class FluxGitRepository extends Construct {
  /** Name of the GitRepository. */
  public readonly name: string;
  /** The GitRepository object. */
  public readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: FluxGitRepositoryProps) {
    super(scope, id);
    this.name = props.name ?? 'kyma-serverless';
    const model = new (fluxModels().GitRepository)({
      metadata: { name: this.name, namespace: Chart.of(this).namespace ?? FLUX_NAMESPACE },
      spec: {
        url: props.url,
        ref: { branch: props.branch ?? 'main' },
        interval: fluxDuration(props.interval ?? Duration.minutes(1)),
        ...(props.secretName ? { secretRef: { name: props.secretName } } : {}),
      },
    });
    this.apiObject = addModel(this, model);
  }
}

/** How a Flux Kustomization syncs the output: of {@link FluxKustomization} and {@link FluxKustomizationStages}. */
export interface FluxSyncOptions {
  /**
   * Name of the Kustomization.
   *
   * @default 'kyma-serverless'
   */
  readonly name?: string;
  /** The GitRepository to take the output from. */
  readonly source: FluxGitRepository;
  /**
   * Folder of the output in the repository, such as `./dist` or `./dist/prod`.
   *
   * @default './dist'
   */
  readonly path?: string;
  /**
   * How often Flux reconciles the cluster with Git, undoing changes made in the cluster.
   *
   * @default Duration.minutes(10)
   */
  readonly interval?: Duration;
  /**
   * How long Flux waits for every object, Functions included, to become healthy. A Function's
   * first build can take minutes.
   *
   * @default Duration.minutes(15)
   */
  readonly timeout?: Duration;
  /**
   * The release of the stack the output holds: it sets the health checks of Functions (see
   * {@link fluxHealthChecks}). Give the `release` of your `ServerlessStack`.
   *
   * @default ServerlessRelease.V1_11_1, the stack's default
   */
  readonly release?: ServerlessRelease;
}

/** Props of {@link FluxKustomization}. */
export interface FluxKustomizationProps extends FluxSyncOptions {
  /**
   * Kustomizations that must be ready (applied, and healthy: they wait) before this one applies.
   *
   * @default - none
   */
  readonly dependsOn?: FluxKustomization[];
}

/**
 * A Flux Kustomization that applies the synthesized output of one environment, prunes what
 * Git no longer has, and waits until every object is healthy, Functions by their conditions.
 *
 * @example
 * const source = new FluxGitRepository(bootstrap, 'Repo', { url: 'https://github.com/acme/platform.git' });
 * new FluxKustomization(bootstrap, 'Serverless', { source, path: './dist/prod' });
 */
export class FluxKustomization extends Construct {
  /** The Kustomization object. */
  public readonly apiObject: ApiObject;
  /** Name of the Kustomization. */
  public readonly name: string;
  /** Namespace of the Kustomization. */
  public readonly namespace: string;

  constructor(scope: Construct, id: string, props: FluxKustomizationProps) {
    super(scope, id);
    this.name = props.name ?? 'kyma-serverless';
    this.namespace = Chart.of(this).namespace ?? FLUX_NAMESPACE;
    const dependsOn = (props.dependsOn ?? []).map(k => ({ name: k.name, ...(k.namespace === this.namespace ? {} : { namespace: k.namespace }) }));
    const model = new (fluxModels().Kustomization)({
      metadata: { name: this.name, namespace: this.namespace },
      spec: {
        ...(dependsOn.length ? { dependsOn } : {}),
        sourceRef: { kind: 'GitRepository', name: props.source.name },
        path: props.path ?? './dist',
        interval: fluxDuration(props.interval ?? Duration.minutes(10)),
        timeout: fluxDuration(props.timeout ?? Duration.minutes(15)),
        prune: true,
        wait: true,
        // The model predates healthCheckExprs (Flux 2.5); the API has it.
        ...({ healthCheckExprs: fluxHealthChecks(props.release ?? DEFAULT_RELEASE).map(check => ({ ...check })) } as object),
      },
    });
    this.apiObject = addModel(this, model);
  }
}

/** Props of {@link FluxKustomizationStages}: `name` prefixes the three Kustomizations, `path` is the output folder. */
export interface FluxKustomizationStagesProps extends FluxSyncOptions {}

/**
 * Three Flux Kustomizations that sync an output folder in the order it needs, each waiting for the
 * one before to be ready and healthy (`dependsOn`, `wait`): `<name>-stack` (`<path>/flux/stack`:
 * the CRD, the controller and the admission webhook, ready once the webhook serves),
 * `<name>-functions` (`<path>/flux/functions`: Function namespaces and Functions, which therefore pass
 * the webhook's defaulting and validation), and `<name>-reach` (`<path>/flux/reach`: APIRules,
 * VirtualServices, HTTPRoutes, Subscriptions, KEDA ScaledObjects and HorizontalPodAutoscalers; the CRDs of most come from modules a
 * cluster may lack: a missing one stops this stage only). `GitOpsApp` writes the stage folders.
 *
 * @example
 * const source = new FluxGitRepository(bootstrap, 'Repo', { url: 'https://github.com/acme/platform.git' });
 * new FluxKustomizationStages(bootstrap, 'Serverless', { source, path: './dist/prod', release: ServerlessRelease.V1_13_0 });
 */
export class FluxKustomizationStages extends Construct {
  /** The stack's Kustomization. */
  public readonly stack: FluxKustomization;
  /** The Functions' Kustomization, after the stack's. */
  public readonly functions: FluxKustomization;
  /** The Kustomization of what reaches Functions, after the Functions'. */
  public readonly reach: FluxKustomization;

  constructor(scope: Construct, id: string, props: FluxKustomizationStagesProps) {
    super(scope, id);
    const name = props.name ?? 'kyma-serverless';
    const folder = (props.path ?? './dist').replace(/\/+$/, '');
    const stage = (stageId: string, stageName: FluxStage, dependsOn: FluxKustomization[]) => new FluxKustomization(this, stageId, {
      ...props, name: `${name}-${stageName}`, path: `${folder}/${FLUX_STAGES_FOLDER}/${stageName}`, dependsOn,
    });
    this.stack = stage('Stack', FluxStage.STACK, []);
    this.functions = stage('Functions', FluxStage.FUNCTIONS, [this.stack]);
    this.reach = stage('Reach', FluxStage.REACH, [this.functions]);
  }
}
