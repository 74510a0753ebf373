import { Application, ApplicationSet } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1';
import { App, Chart, Testing } from 'cdk8s';
import {
  ARGO_CD_FUNCTION_HEALTH_KEY, ARGO_CD_FUNCTION_HEALTH_LUA, ArgoCdApplication, ArgoCdApplicationProps, ArgoCdApplicationSet,
  ArgoCdApplicationSetProps, RUNTIME_IGNORE_DIFFERENCES,
} from '../../src';
import { FUNCTION_GROUP, FUNCTION_KIND } from '../../src/api';
import { IN_CLUSTER_SERVER } from '../../src/gitops/argo-cd';
import { runHealthLua } from '../util/gitops-engines';

const REPO_URL = 'https://github.com/acme/platform.git';

function bootstrap(): Chart {
  return new Chart(Testing.app(), 'bootstrap', { namespace: 'argocd' });
}

function synthApplication(props: Partial<ArgoCdApplicationProps> = {}): any {
  const chart = bootstrap();
  new ArgoCdApplication(chart, 'Serverless', { repoUrl: REPO_URL, ...props });
  const objects = Testing.synth(chart);
  expect(objects).toHaveLength(1);
  return objects[0];
}

const CLUSTERS = [
  { name: 'prod-eu', server: 'https://prod-eu.example.com:6443', path: 'dist/prod' },
  { name: 'dev', server: 'https://dev.example.com:6443', path: 'dist/dev' },
  { name: 'prod-asia', server: 'https://prod-asia.example.com:6443', path: 'dist/prod' },
];

function synthApplicationSet(props: Partial<ArgoCdApplicationSetProps> = {}): any {
  const chart = bootstrap();
  new ArgoCdApplicationSet(chart, 'Serverless', { repoUrl: REPO_URL, clusters: CLUSTERS, ...props });
  const objects = Testing.synth(chart);
  expect(objects).toHaveLength(1);
  return objects[0];
}

describe('ArgoCdApplication', () => {
  test('syncs the repository folder to the cluster', () => {
    const app = synthApplication({ path: 'dist/prod', targetRevision: 'v1.2.0', project: 'platform', server: 'https://prod.example.com:6443' });
    expect(app.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(app.kind).toBe('Application');
    expect(app.metadata).toEqual({ name: 'kyma-serverless', namespace: 'argocd' });
    expect(app.spec.project).toBe('platform');
    expect(app.spec.source).toEqual({ repoURL: REPO_URL, path: 'dist/prod', targetRevision: 'v1.2.0' });
    expect(app.spec.destination).toEqual({ server: 'https://prod.example.com:6443' });
    expect(app.spec.syncPolicy).toEqual({ automated: { prune: true, selfHeal: true }, syncOptions: ['PruneLast=true'] });
  });

  test('ignores the caBundle of both webhook configurations and the replicas of Functions', () => {
    const ignoreDifferences = synthApplication().spec.ignoreDifferences;
    expect(ignoreDifferences).toEqual(expect.arrayContaining([
      { group: 'admissionregistration.k8s.io', kind: 'MutatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] },
      { group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration', jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle'] },
      { group: FUNCTION_GROUP, kind: FUNCTION_KIND, jsonPointers: ['/spec/replicas'] },
    ]));
    expect(ignoreDifferences).toEqual(RUNTIME_IGNORE_DIFFERENCES);
    expect(FUNCTION_GROUP).toBe('serverless.kyma-project.io');
    expect(FUNCTION_KIND).toBe('Function');
  });

  test('defaults to kyma-serverless, dist at HEAD, the default project, the in-cluster server and automated sync', () => {
    const app = synthApplication();
    expect(app.metadata.name).toBe('kyma-serverless');
    expect(app.spec.source).toEqual({ repoURL: REPO_URL, path: 'dist', targetRevision: 'HEAD' });
    expect(app.spec.project).toBe('default');
    expect(app.spec.destination).toEqual({ server: IN_CLUSTER_SERVER });
    expect(IN_CLUSTER_SERVER).toBe('https://kubernetes.default.svc');
    expect(app.spec.syncPolicy.automated).toEqual({ prune: true, selfHeal: true });
  });

  test('takes the name and namespace from the props and the chart', () => {
    const chart = new Chart(Testing.app(), 'bootstrap', { namespace: 'gitops' });
    new ArgoCdApplication(chart, 'Serverless', { repoUrl: REPO_URL, name: 'serverless-prod' });
    expect(Testing.synth(chart)[0].metadata).toEqual({ name: 'serverless-prod', namespace: 'gitops' });
  });

  test('falls back to the argocd namespace when the chart has none', () => {
    const chart = new Chart(Testing.app(), 'bootstrap');
    new ArgoCdApplication(chart, 'Serverless', { repoUrl: REPO_URL });
    expect(Testing.synth(chart)[0].metadata.namespace).toBe('argocd');
  });

  test('drops automated sync when automated is false, and keeps the sync options', () => {
    const app = synthApplication({ automated: false });
    expect(app.spec.syncPolicy).toEqual({ syncOptions: ['PruneLast=true'] });
  });

  test('synthesizes an Application its model accepts', () => {
    for (const props of [{}, { automated: false }, { path: 'dist/prod', server: 'https://prod.example.com:6443' }]) {
      const obj = synthApplication(props);
      expect(() => new Application(obj).validate()).not.toThrow();
    }
  });

  test('synthesizes without errors when the props are valid', () => {
    const chart = bootstrap();
    new ArgoCdApplication(chart, 'Serverless', { repoUrl: REPO_URL });
    expect(() => App.of(chart).synthYaml()).not.toThrow();
  });

  test('throws at synth, with the construct path, when the Application fails its schema', () => {
    const chart = bootstrap();
    new ArgoCdApplication(chart, 'Serverless', { repoUrl: REPO_URL, targetRevision: 42 as any });
    expect(() => App.of(chart).synthYaml()).toThrow(/\[bootstrap\/Serverless\] data\/spec\/source\/targetRevision must be string/);
  });

  test('matches the snapshot', () => {
    const chart = bootstrap();
    new ArgoCdApplication(chart, 'Serverless', { repoUrl: REPO_URL, path: 'dist/prod' });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });
});

describe('ArgoCdApplicationSet', () => {
  test('lists the clusters, sorted by name', () => {
    const set = synthApplicationSet();
    expect(set.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(set.kind).toBe('ApplicationSet');
    expect(set.metadata).toEqual({ name: 'kyma-serverless', namespace: 'argocd' });
    expect(set.spec.goTemplate).toBe(true);
    expect(set.spec.goTemplateOptions).toEqual(['missingkey=error']);
    expect(set.spec.generators).toEqual([{
      list: {
        elements: [
          { cluster: 'dev', server: 'https://dev.example.com:6443', path: 'dist/dev' },
          { cluster: 'prod-asia', server: 'https://prod-asia.example.com:6443', path: 'dist/prod' },
          { cluster: 'prod-eu', server: 'https://prod-eu.example.com:6443', path: 'dist/prod' },
        ],
      },
    }]);
  });

  test('does not reorder the clusters it was given', () => {
    const clusters = [...CLUSTERS];
    synthApplicationSet({ clusters });
    expect(clusters).toEqual(CLUSTERS);
  });

  test('templates one Application per cluster, named after the cluster', () => {
    const set = synthApplicationSet({ targetRevision: 'main', project: 'platform' });
    expect(set.spec.template.metadata).toEqual({ name: 'kyma-serverless-{{.cluster}}' });
    const spec = set.spec.template.spec;
    expect(spec.project).toBe('platform');
    expect(spec.source).toEqual({ repoURL: REPO_URL, path: '{{.path}}', targetRevision: 'main' });
    expect(spec.destination).toEqual({ server: '{{.server}}' });
    expect(spec.syncPolicy).toEqual({ automated: { prune: true, selfHeal: true }, syncOptions: ['PruneLast=true'] });
    expect(spec.ignoreDifferences).toEqual(RUNTIME_IGNORE_DIFFERENCES);
  });

  test('prefixes the Applications with its name', () => {
    const set = synthApplicationSet({ name: 'serverless' });
    expect(set.metadata.name).toBe('serverless');
    expect(set.spec.template.metadata.name).toBe('serverless-{{.cluster}}');
  });

  test('drops automated sync when automated is false', () => {
    expect(synthApplicationSet({ automated: false }).spec.template.spec.syncPolicy).toEqual({ syncOptions: ['PruneLast=true'] });
  });

  test('synthesizes an ApplicationSet its model accepts', () => {
    for (const props of [{}, { automated: false }, { clusters: [CLUSTERS[0]] }]) {
      const obj = synthApplicationSet(props);
      expect(() => new ApplicationSet(obj).validate()).not.toThrow();
    }
  });

  test('throws when clusters is empty', () => {
    expect(() => new ArgoCdApplicationSet(bootstrap(), 'Serverless', { repoUrl: REPO_URL, clusters: [] }))
      .toThrow('\'clusters\' is empty: give at least one cluster');
  });

  test('throws at synth, with the construct path, when the ApplicationSet fails its schema', () => {
    const chart = bootstrap();
    new ArgoCdApplicationSet(chart, 'Serverless', { repoUrl: REPO_URL, clusters: CLUSTERS, targetRevision: 42 as any });
    expect(() => App.of(chart).synthYaml()).toThrow(/\[bootstrap\/Serverless\] data\/spec\/template\/spec\/source\/targetRevision must be string/);
  });

  test('matches the snapshot', () => {
    const chart = bootstrap();
    new ArgoCdApplicationSet(chart, 'Serverless', { repoUrl: REPO_URL, clusters: CLUSTERS });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });
});

const runHealthCheck = runHealthLua;

function functionWith(status?: object): object {
  return {
    apiVersion: 'serverless.kyma-project.io/v1alpha2',
    kind: 'Function',
    metadata: { name: 'hello', namespace: 'team-a' },
    spec: { runtime: 'nodejs22', source: { inline: { source: 'exports.main = () => 1' } } },
    ...(status ? { status } : {}),
  };
}

function condition(type: string, status: string, message?: string, reason?: string): object {
  return { type, status, lastTransitionTime: '2025-01-01T00:00:00Z', ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

describe('ARGO_CD_FUNCTION_HEALTH_LUA', () => {
  test('is stored under the Function health key of argocd-cm', () => {
    expect(ARGO_CD_FUNCTION_HEALTH_KEY).toBe('resource.customizations.health.serverless.kyma-project.io_Function');
  });

  test('the Lua helper converts nested objects and 1-based arrays', () => {
    const script = 'return { status = obj.a[2].b .. tostring(#obj.a), message = tostring(obj.n + 1) .. tostring(obj.t) }';
    expect(runHealthCheck(script, { a: [{ b: 'x' }, { b: 'y' }], n: 1, t: true })).toEqual({ status: 'y2', message: '2true' });
  });

  test('is Progressing when the Function has no status', () => {
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith())).toEqual({
      status: 'Progressing', message: 'Waiting for the Function Controller',
    });
  });

  test('is Progressing when the status has no conditions', () => {
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith({ runtime: 'nodejs22' })).status).toBe('Progressing');
  });

  test('is Healthy when ConfigurationReady, BuildReady and Running are all True', () => {
    const status = {
      conditions: [
        condition('ConfigurationReady', 'True', 'Updated ConfigMap'),
        condition('BuildReady', 'True', 'Job finished'),
        condition('Running', 'True', 'Deployment is ready'),
      ],
    };
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith(status))).toEqual({ status: 'Healthy', message: 'Function is running' });
  });

  test('is Degraded, naming the condition and its message, when BuildReady is False', () => {
    const status = {
      conditions: [
        condition('ConfigurationReady', 'True'),
        condition('BuildReady', 'False', 'Job failed: npm install exited with 1', 'JobFailed'),
        condition('Running', 'Unknown'),
      ],
    };
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith(status))).toEqual({
      status: 'Degraded', message: 'BuildReady: Job failed: npm install exited with 1',
    });
  });

  test('is Degraded with the reason when a False condition has no message', () => {
    const status = { conditions: [condition('Running', 'False', undefined, 'DeploymentFailed')] };
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith(status))).toEqual({ status: 'Degraded', message: 'Running: DeploymentFailed' });
  });

  test('is Progressing, naming the waiting condition, when two are True and one is Unknown', () => {
    const status = {
      conditions: [
        condition('ConfigurationReady', 'True'),
        condition('BuildReady', 'True'),
        condition('Running', 'Unknown', 'Deployment hello-abc12 is not ready', 'MinimumReplicasUnavailable'),
      ],
    };
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith(status))).toEqual({
      status: 'Progressing', message: 'Running: Deployment hello-abc12 is not ready',
    });
  });

  test('is Progressing while a condition is still missing', () => {
    const status = { conditions: [condition('ConfigurationReady', 'True'), condition('BuildReady', 'True')] };
    expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith(status)).status).toBe('Progressing');
  });

  test('reads the conditions in any order', () => {
    const all = [condition('ConfigurationReady', 'True'), condition('BuildReady', 'True'), condition('Running', 'True')];
    const orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    for (const order of orders) {
      expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith({ conditions: order.map(i => all[i]) })).status).toBe('Healthy');
    }
    const failing = [condition('Running', 'Unknown'), condition('BuildReady', 'False', 'out of memory'), condition('ConfigurationReady', 'True')];
    for (const order of orders) {
      expect(runHealthCheck(ARGO_CD_FUNCTION_HEALTH_LUA, functionWith({ conditions: order.map(i => failing[i]) }))).toEqual({
        status: 'Degraded', message: 'BuildReady: out of memory',
      });
    }
  });
});
