/**
 * Argo CD objects that deploy the synthesized output: an Application for one cluster, an
 * ApplicationSet for several.
 */
import { ApiObject, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import type * as argo from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1';
import { k8s } from 'cdk8s-plus-27';
import { DEFAULT_RELEASE, FUNCTION_GROUP, FUNCTION_KIND, ServerlessRelease } from '../api';
import { addModel } from './_model';
import { argoCdHealthLua } from './health';

/** The namespace Argo CD runs in by default. */
export const ARGO_CD_NAMESPACE = 'argocd';

/** The in-cluster API server address, as Argo CD names the cluster it runs in. */
export const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

type ApplicationSpec = argo.IApplication['spec'];

/** The Argo CD models, loaded on first use: apps that emit no Argo CD object do not pay for them at synth. */
function argoModels(): typeof argo {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@kubernetes-models/argo-cd/argoproj.io/v1alpha1');
}
type IgnoreDifference = NonNullable<ApplicationSpec['ignoreDifferences']>[number];

/**
 * Fields written at run time, which a sync must not count as drift: the `caBundle` the webhook
 * patches into its configurations, `spec.replicas` of Functions an autoscaler (the
 * controller's HPA, KEDA) scales through the scale subresource, and the finalizer the
 * controller adds to the runtimes' `dockerfile-*` ConfigMaps.
 */
export const RUNTIME_IGNORE_DIFFERENCES: readonly IgnoreDifference[] = [
  { group: '', kind: 'ConfigMap', jsonPointers: ['/metadata/finalizers'] },
  { group: 'admissionregistration.k8s.io', kind: 'MutatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] },
  { group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] },
  { group: FUNCTION_GROUP, kind: FUNCTION_KIND, jsonPointers: ['/spec/replicas'] },
];

/** The `argocd-cm` key that holds the Function health check. */
export const ARGO_CD_FUNCTION_HEALTH_KEY = `resource.customizations.health.${FUNCTION_GROUP}_${FUNCTION_KIND}`;

/**
 * Argo CD's health check for Functions under release 1.11.1 (the default), in Lua, for the
 * `argocd-cm` key {@link ARGO_CD_FUNCTION_HEALTH_KEY}: Healthy when `ConfigurationReady`,
 * `BuildReady` and `Running` are all True, Degraded when one of them is False, Progressing otherwise.
 *
 * @deprecated Apply {@link ArgoCdHealthChecks} for the stack's release (under 1.13.0 a Function
 * never has `BuildReady`), which also judges APIRules and Subscriptions; or read
 * {@link argoCdHealthLua}.
 */
export const ARGO_CD_FUNCTION_HEALTH_LUA: string = argoCdHealthLua(ServerlessRelease.V1_11_1)[ARGO_CD_FUNCTION_HEALTH_KEY];

/** The ConfigMap Argo CD reads its settings from. */
export const ARGO_CD_CONFIG_MAP = 'argocd-cm';

/** Props of {@link ArgoCdHealthChecks}. */
export interface ArgoCdHealthChecksProps {
  /**
   * The release of the stack the Applications sync: it sets the health check of Functions.
   * Give the `release` of your `ServerlessStack`.
   *
   * @default ServerlessRelease.V1_11_1, the stack's default
   */
  readonly release?: ServerlessRelease;
}

/**
 * Teaches Argo CD when a Function, an APIRule and a Subscription are healthy: the `argocd-cm`
 * ConfigMap with only the health entries of {@link argoCdHealthLua} for the stack's release. Argo CD
 * reads `argocd-cm` from its own namespace (the chart's, else `argocd`). Apply it server-side
 * (`kubectl apply --server-side --field-manager=kyma-serverless -f`), which adds these keys and
 * keeps the others; or list the file under `patches:` of the kustomization that installs Argo CD.
 *
 * @example
 * new ArgoCdHealthChecks(bootstrap, 'Health', { release: ServerlessRelease.V1_13_0 });
 */
export class ArgoCdHealthChecks extends Construct {
  /** The ConfigMap object. */
  public readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: ArgoCdHealthChecksProps = {}) {
    super(scope, id);
    this.apiObject = new k8s.KubeConfigMap(this, 'Resource', {
      metadata: {
        name: ARGO_CD_CONFIG_MAP,
        namespace: Chart.of(this).namespace ?? ARGO_CD_NAMESPACE,
        // The labels of Argo CD's own install manifests.
        labels: { 'app.kubernetes.io/name': ARGO_CD_CONFIG_MAP, 'app.kubernetes.io/part-of': 'argocd' },
      },
      data: argoCdHealthLua(props.release ?? DEFAULT_RELEASE),
    });
  }
}

/** The Git repository and revision that hold the output. */
export interface GitRevisionOptions {
  /** URL of the Git repository that holds the output. */
  readonly repoUrl: string;
  /**
   * Branch, tag or commit.
   *
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
}

/** Where the synthesized output lives in Git. */
export interface GitSourceOptions extends GitRevisionOptions {
  /**
   * Folder of the output in the repository, such as `dist` or `dist/prod`.
   *
   * @default 'dist'
   */
  readonly path?: string;
}

/** How Argo CD syncs: the Application's and the ApplicationSet's. */
export interface ArgoCdSyncPolicyOptions {
  /**
   * The Argo CD project.
   *
   * @default 'default'
   */
  readonly project?: string;
  /**
   * Sync automatically when Git changes, prune objects removed from Git, and undo changes
   * made in the cluster.
   *
   * @default true
   */
  readonly automated?: boolean;
}

/** Sync settings of an Application: its source in Git and how it syncs. */
export interface ArgoCdSyncOptions extends GitSourceOptions, ArgoCdSyncPolicyOptions {}

/** Props of {@link ArgoCdApplication}. */
export interface ArgoCdApplicationProps extends ArgoCdSyncOptions {
  /**
   * Name of the Application.
   *
   * @default 'kyma-serverless'
   */
  readonly name?: string;
  /**
   * The cluster to deploy to.
   *
   * @default IN_CLUSTER_SERVER, the cluster Argo CD runs in
   */
  readonly server?: string;
}

function applicationSpec(options: ArgoCdSyncOptions, server: string, path: string): ApplicationSpec {
  return {
    project: options.project ?? 'default',
    source: { repoURL: options.repoUrl, path, targetRevision: options.targetRevision ?? 'HEAD' },
    // Every object names its namespace; the destination namespace is only a fallback.
    destination: { server },
    syncPolicy: {
      ...(options.automated ?? true ? { automated: { prune: true, selfHeal: true } } : {}),
      // Objects carry their own options (ServerSideApply on the CRD, SkipDryRunOnMissingResource
      // on Functions); removing objects waits until everything else is synced.
      syncOptions: ['PruneLast=true'],
    },
    ignoreDifferences: RUNTIME_IGNORE_DIFFERENCES.map(d => ({ ...d })),
  };
}

/**
 * An Argo CD Application that syncs the synthesized output of one environment to one cluster,
 * with the ignore rules for fields written at run time. Put it in a chart of its own (in
 * Argo CD's namespace), outside the folder it points at.
 *
 * @example
 * new ArgoCdApplication(bootstrap, 'Serverless', { repoUrl: 'https://github.com/acme/platform.git', path: 'dist/prod' });
 */
export class ArgoCdApplication extends Construct {
  /** The Application object. */
  public readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: ArgoCdApplicationProps) {
    super(scope, id);
    const model = new (argoModels().Application)({
      metadata: { name: props.name ?? 'kyma-serverless', namespace: Chart.of(this).namespace ?? ARGO_CD_NAMESPACE },
      spec: applicationSpec(props, props.server ?? IN_CLUSTER_SERVER, props.path ?? 'dist'),
    });
    this.apiObject = addModel(this, model);
  }
}

/** One cluster of an {@link ArgoCdApplicationSet}. */
export interface ArgoCdCluster {
  /** Name of the cluster: it names the generated Application (`kyma-serverless-<name>`). */
  readonly name: string;
  /** API server address of the cluster, as registered in Argo CD. */
  readonly server: string;
  /** Folder of the cluster's output, such as `dist/prod`. */
  readonly path: string;
}

/** Props of {@link ArgoCdApplicationSet}. */
export interface ArgoCdApplicationSetProps extends GitRevisionOptions, ArgoCdSyncPolicyOptions {
  /**
   * Name of the ApplicationSet, and prefix of its Applications.
   *
   * @default 'kyma-serverless'
   */
  readonly name?: string;
  /** The clusters, each with the output folder of its environment. */
  readonly clusters: ArgoCdCluster[];
}

/**
 * An Argo CD ApplicationSet that syncs each environment's output to its clusters: one
 * Application per cluster, from a list generator.
 *
 * @example
 * new ArgoCdApplicationSet(bootstrap, 'Serverless', {
 *   repoUrl: 'https://github.com/acme/platform.git',
 *   clusters: [
 *     { name: 'dev', server: 'https://dev.example.com:6443', path: 'dist/dev' },
 *     { name: 'prod-eu', server: 'https://prod-eu.example.com:6443', path: 'dist/prod' },
 *   ],
 * });
 */
export class ArgoCdApplicationSet extends Construct {
  /** The ApplicationSet object. */
  public readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: ArgoCdApplicationSetProps) {
    super(scope, id);
    if (props.clusters.length === 0) throw new Error('\'clusters\' is empty: give at least one cluster');
    const name = props.name ?? 'kyma-serverless';
    const sorted = [...props.clusters].sort((a, b) => a.name.localeCompare(b.name));
    const model = new (argoModels().ApplicationSet)({
      metadata: { name, namespace: Chart.of(this).namespace ?? ARGO_CD_NAMESPACE },
      spec: {
        goTemplate: true,
        goTemplateOptions: ['missingkey=error'],
        generators: [{ list: { elements: sorted.map(c => ({ cluster: c.name, server: c.server, path: c.path })) } }],
        template: {
          metadata: { name: `${name}-{{.cluster}}` },
          spec: applicationSpec({ ...props, path: undefined }, '{{.server}}', '{{.path}}') as any,
        },
      },
    });
    this.apiObject = addModel(this, model);
  }
}
