import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Chart, Testing } from 'cdk8s';
import * as yaml from 'yaml';
import { ARGO_CD_FUNCTION_HEALTH_KEY, ARGO_CD_FUNCTION_HEALTH_LUA, ArgoCdHealthChecks, FLUX_FUNCTION_HEALTH_CHECK, argoCdHealthLua, fluxHealthChecks } from '../../src';
import { RELEASES, ServerlessRelease } from '../../src/api';
import { ArgoHealth, FluxStatus, evaluateCel, fluxHealth, runHealthLua } from '../util/gitops-engines';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'gitops-health');

function fixture(name: string): any {
  return yaml.parse(fs.readFileSync(path.join(FIXTURES, `${name}.yaml`), 'utf8'));
}

const V1_11_1 = ServerlessRelease.V1_11_1;
const V1_13_0 = ServerlessRelease.V1_13_0;

/** What each engine makes of an object: Flux's kstatus verdict, Argo CD's health and message. */
function judge(release: ServerlessRelease, object: any): { flux: FluxStatus; argo: ArgoHealth } {
  const key = `resource.customizations.health.${object.apiVersion.split('/')[0]}_${object.kind}`;
  return { flux: fluxHealth(fluxHealthChecks(release), object), argo: runHealthLua(argoCdHealthLua(release)[key], object) };
}

// Every recorded status, under the release of the stack that judges it, with what each engine must say.
const CASES: ReadonlyArray<[string, ServerlessRelease, FluxStatus, ArgoHealth]> = [
  ['function-1.11.1-none-yet', V1_11_1, 'InProgress', { status: 'Progressing', message: 'Waiting for the Function Controller' }],
  ['function-1.11.1-working', V1_11_1, 'InProgress', { status: 'Progressing', message: 'BuildReady: Job hello-build-q8zcd is still in progress' }],
  ['function-1.11.1-failed', V1_11_1, 'Failed', { status: 'Degraded', message: 'BuildReady: Job hello-build-q8zcd failed, it will be re-run' }],
  ['function-1.11.1-running', V1_11_1, 'Current', { status: 'Healthy', message: 'Function is running' }],
  // 1.11.1 writes no observedGeneration: a generation it has not processed yet cannot be told from its status.
  ['function-1.11.1-new-generation', V1_11_1, 'Current', { status: 'Healthy', message: 'Function is running' }],
  ['function-1.13.0-none-yet', V1_13_0, 'InProgress', { status: 'Progressing', message: 'Waiting for the Function Controller' }],
  ['function-1.13.0-working', V1_13_0, 'InProgress', { status: 'Progressing', message: 'Running: Deployment hello-w2x9k is not ready yet' }],
  ['function-1.13.0-failed', V1_13_0, 'Failed', {
    status: 'Degraded', message: 'ConfigurationReady: invalid spec.secretMounts: [secretMounts has duplicated mountPath values: /etc/secret]',
  }],
  ['function-1.13.0-failed-deployment', V1_13_0, 'Failed', {
    status: 'Degraded', message: 'Running: Deployment hello-w2x9k failed with condition: \n- type: Progressing\n  status: "False"\n  reason: ProgressDeadlineExceeded\n',
  }],
  ['function-1.13.0-running', V1_13_0, 'Current', { status: 'Healthy', message: 'Function is running' }],
  ['function-1.13.0-new-generation', V1_13_0, 'InProgress', { status: 'Progressing', message: 'Waiting for the Function Controller to process generation 2' }],
  ['function-1.13.0-moved-from-1.11.1', V1_13_0, 'InProgress', { status: 'Progressing', message: 'Waiting for the Function Controller to process generation 1' }],
];

const REACH_CASES: ReadonlyArray<[string, FluxStatus, ArgoHealth]> = [
  ['apirule-none-yet', 'InProgress', { status: 'Progressing', message: 'Waiting for the API Gateway controller' }],
  ['apirule-processing', 'InProgress', { status: 'Progressing', message: 'Processing' }],
  ['apirule-ready', 'Current', { status: 'Healthy', message: 'Ready: Reconciled successfully' }],
  ['apirule-error', 'Failed', {
    status: 'Degraded',
    message: 'Error: Validation errors: Attribute \'spec.service.name\': Pod default-functions/hello-w2x9k-5d8f7 does not have an injected istio sidecar',
  }],
  ['subscription-none-yet', 'InProgress', { status: 'Progressing', message: 'Waiting for the eventing manager' }],
  ['subscription-not-active', 'InProgress', {
    status: 'Progressing', message: 'Subscription active: Sink validation failed: service hello.default-functions not found in the cluster',
  }],
  ['subscription-spec-invalid', 'Failed', { status: 'Degraded', message: 'Subscription spec valid: spec.types: must have minimum 2 segments' }],
  ['subscription-ready', 'Current', { status: 'Healthy', message: 'Subscription is ready' }],
];

describe('health checks, run as the engines run them, on recorded statuses', () => {
  test.each(CASES)('%s under %s: Flux %s, Argo CD %o', (name, release, flux, argo) => {
    expect(judge(release, fixture(name))).toEqual({ flux, argo });
  });

  test.each(REACH_CASES)('%s: Flux %s, Argo CD %o (under either release)', (name, flux, argo) => {
    for (const release of RELEASES) expect(judge(release, fixture(name))).toEqual({ flux, argo });
  });

  test('every recorded status is judged by a case', () => {
    const judged = new Set([...CASES.map(c => c[0]), ...REACH_CASES.map(c => c[0])]);
    expect(fs.readdirSync(FIXTURES).filter(f => f.endsWith('.yaml')).map(f => f.replace(/\.yaml$/, '')).sort()).toEqual([...judged].sort());
  });

  test('a 1.13.0 Function is never Healthy under the 1.11.1 checks, which wait for BuildReady', () => {
    expect(judge(V1_11_1, fixture('function-1.13.0-running'))).toEqual({
      flux: 'InProgress', argo: { status: 'Progressing', message: 'BuildReady: not reported yet' },
    });
  });

  test('a leftover BuildReady does not count under 1.13.0, failed or not', () => {
    const moved = fixture('function-1.13.0-running');
    moved.status.conditions.push({ type: 'BuildReady', status: 'False', reason: 'JobFailed', message: 'Job hello-build-q8zcd failed, it will be re-run' });
    expect(judge(V1_13_0, moved)).toEqual({ flux: 'Current', argo: { status: 'Healthy', message: 'Function is running' } });
  });
});

describe('Flux health checks', () => {
  test('the expressions fail, as cel-go does, on a status not written yet, unless guarded', () => {
    const none = fixture('function-1.11.1-none-yet');
    expect(() => evaluateCel('has(status.conditions)', none)).toThrow(/no such attribute\(s\): status/);
    for (const release of RELEASES) {
      for (const check of fluxHealthChecks(release)) {
        const object = { ...none, apiVersion: check.apiVersion, kind: check.kind };
        expect(evaluateCel(check.inProgress, object)).toBe(true);
        expect(fluxHealth([check], object)).toBe('InProgress');
      }
    }
  });

  test('a status is read when the object comes without managedFields', () => {
    const running = fixture('function-1.13.0-running');
    delete running.metadata.managedFields;
    expect(fluxHealth(fluxHealthChecks(V1_13_0), running)).toBe('Current');
  });

  test('1.13.0 Functions are current only for the generation in status.observedGeneration', () => {
    const check = fluxHealthChecks(V1_13_0)[0];
    const running = fixture('function-1.13.0-running');
    expect(evaluateCel(check.current, running)).toBe(true);
    delete running.status.observedGeneration;
    expect(evaluateCel(check.current, running)).toBe(false);
  });

  test('FLUX_FUNCTION_HEALTH_CHECK is the 1.11.1 Function check', () => {
    expect(FLUX_FUNCTION_HEALTH_CHECK).toEqual(fluxHealthChecks(V1_11_1)[0]);
  });
});

describe('ArgoCdHealthChecks', () => {
  function synth(release?: ServerlessRelease, namespace: string | undefined = 'argocd'): any[] {
    const chart = new Chart(Testing.app(), 'bootstrap', { namespace });
    new ArgoCdHealthChecks(chart, 'Health', { release });
    return Testing.synth(chart);
  }

  test('writes the argocd-cm entries of the release, and only them', () => {
    const [configMap] = synth(V1_13_0);
    expect(configMap).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'argocd-cm', namespace: 'argocd', labels: { 'app.kubernetes.io/name': 'argocd-cm', 'app.kubernetes.io/part-of': 'argocd' } },
      data: argoCdHealthLua(V1_13_0),
    });
    expect(Object.keys(configMap.data)).toEqual([
      'resource.customizations.health.eventing.kyma-project.io_Subscription',
      'resource.customizations.health.gateway.kyma-project.io_APIRule',
      'resource.customizations.health.serverless.kyma-project.io_Function',
    ]);
  });

  test('defaults to release 1.11.1 and Argo CD\'s namespace', () => {
    const [configMap] = synth(undefined, undefined);
    expect(configMap.metadata.namespace).toBe('argocd');
    expect(configMap.data[ARGO_CD_FUNCTION_HEALTH_KEY]).toBe(ARGO_CD_FUNCTION_HEALTH_LUA);
    expect(ARGO_CD_FUNCTION_HEALTH_LUA).toContain('"BuildReady"');
    expect(argoCdHealthLua(V1_13_0)[ARGO_CD_FUNCTION_HEALTH_KEY]).not.toContain('BuildReady');
  });

  test('the scripts use only what Argo CD opens (base, table, package)', () => {
    for (const release of RELEASES) {
      for (const script of Object.values(argoCdHealthLua(release))) expect(script).not.toMatch(/\b(string|os|io|math)\./);
    }
  });

  test('synthesizes', () => {
    const chart = new Chart(Testing.app(), 'bootstrap', { namespace: 'argocd' });
    new ArgoCdHealthChecks(chart, 'Health', { release: V1_11_1 });
    expect(() => App.of(chart).synthYaml()).not.toThrow();
  });
});
