import { Kustomization } from '@kubernetes-models/flux-cd/kustomize.toolkit.fluxcd.io/v1';
import { GitRepository } from '@kubernetes-models/flux-cd/source.toolkit.fluxcd.io/v1';
import { App, Chart, Duration, Testing } from 'cdk8s';
import {
  FLUX_FUNCTION_HEALTH_CHECK, FluxGitRepository, FluxGitRepositoryProps, FluxKustomization, FluxKustomizationProps, FluxKustomizationStages, fluxHealthChecks,
} from '../../src';
import { FUNCTION_API_VERSION, FUNCTION_KIND, ServerlessRelease } from '../../src/api';
import { fluxHealth } from '../util/gitops-engines';

const REPO_URL = 'https://github.com/acme/platform.git';

function bootstrap(namespace: string | undefined = 'flux-system'): Chart {
  return new Chart(Testing.app(), 'bootstrap', { namespace });
}

/** Synthesizes a GitRepository and a Kustomization that reads from it. */
function synthFlux(
  repoProps: Partial<FluxGitRepositoryProps> = {},
  kustomizationProps: Partial<Omit<FluxKustomizationProps, 'source'>> = {},
): { repo: any; kustomization: any } {
  const chart = bootstrap();
  const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL, ...repoProps });
  new FluxKustomization(chart, 'Serverless', { source, ...kustomizationProps });
  const objects = Testing.synth(chart);
  expect(objects.map(o => o.kind)).toEqual(['GitRepository', 'Kustomization']);
  return { repo: objects[0], kustomization: objects[1] };
}

describe('FluxGitRepository', () => {
  test('points at the repository, following main every minute', () => {
    const { repo } = synthFlux();
    expect(repo.apiVersion).toBe('source.toolkit.fluxcd.io/v1');
    expect(repo.metadata).toEqual({ name: 'kyma-serverless', namespace: 'flux-system' });
    expect(repo.spec).toEqual({ url: REPO_URL, ref: { branch: 'main' }, interval: '1m' });
  });

  test('takes the branch, interval and name from the props', () => {
    const chart = bootstrap();
    const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL, name: 'platform', branch: 'release', interval: Duration.seconds(90) });
    expect(source.name).toBe('platform');
    const [repo] = Testing.synth(chart);
    expect(repo.metadata.name).toBe('platform');
    expect(repo.spec.ref).toEqual({ branch: 'release' });
    expect(repo.spec.interval).toBe('90s');
  });

  test('references the credentials Secret when secretName is given', () => {
    expect(synthFlux({ secretName: 'github-token' }).repo.spec.secretRef).toEqual({ name: 'github-token' });
    expect(synthFlux().repo.spec).not.toHaveProperty('secretRef');
  });

  test('falls back to the flux-system namespace when the chart has none', () => {
    const chart = bootstrap(undefined);
    new FluxGitRepository(chart, 'Repo', { url: REPO_URL });
    expect(Testing.synth(chart)[0].metadata.namespace).toBe('flux-system');
  });

  test('synthesizes a GitRepository its model accepts', () => {
    for (const props of [{}, { secretName: 'github-token', branch: 'release', interval: Duration.hours(1) }]) {
      const { repo } = synthFlux(props);
      expect(() => new GitRepository(repo).validate()).not.toThrow();
    }
  });

  test('throws at synth, with the construct path, when the GitRepository fails its schema', () => {
    const chart = bootstrap();
    new FluxGitRepository(chart, 'Repo', { url: REPO_URL, branch: 42 as any });
    expect(() => App.of(chart).synthYaml()).toThrow(/\[bootstrap\/Repo\] data\/spec\/ref\/branch must be string/);
  });
});

describe('FluxKustomization', () => {
  test('applies ./dist of the GitRepository, pruning and waiting', () => {
    const { kustomization } = synthFlux();
    expect(kustomization.apiVersion).toBe('kustomize.toolkit.fluxcd.io/v1');
    expect(kustomization.metadata).toEqual({ name: 'kyma-serverless', namespace: 'flux-system' });
    expect(kustomization.spec).toEqual({
      sourceRef: { kind: 'GitRepository', name: 'kyma-serverless' },
      path: './dist',
      interval: '10m',
      timeout: '15m',
      prune: true,
      wait: true,
      healthCheckExprs: fluxHealthChecks(ServerlessRelease.V1_11_1),
    });
  });

  test('checks the health of Functions, APIRules and Subscriptions, Functions by the conditions of the release', () => {
    const { kustomization } = synthFlux();
    expect(kustomization.spec.healthCheckExprs.map((c: any) => `${c.apiVersion} ${c.kind}`)).toEqual([
      'serverless.kyma-project.io/v1alpha2 Function', 'gateway.kyma-project.io/v2 APIRule', 'eventing.kyma-project.io/v1alpha2 Subscription',
    ]);
    expect(kustomization.spec.healthCheckExprs[0]).toEqual(FLUX_FUNCTION_HEALTH_CHECK);
    expect(kustomization.spec.healthCheckExprs[0].current).toContain('\'BuildReady\'');
    const buildless = synthFlux({}, { release: ServerlessRelease.V1_13_0 }).kustomization.spec.healthCheckExprs;
    expect(buildless).toEqual(fluxHealthChecks(ServerlessRelease.V1_13_0));
    expect(buildless[0].current).not.toContain('BuildReady');
    expect(buildless[0].current).toContain('status.observedGeneration == metadata.generation');
  });

  test('takes the source name from the GitRepository', () => {
    const { kustomization } = synthFlux({ name: 'platform' });
    expect(kustomization.spec.sourceRef).toEqual({ kind: 'GitRepository', name: 'platform' });
  });

  test('takes the name, path, interval and timeout from the props', () => {
    const { kustomization } = synthFlux({}, {
      name: 'serverless-prod', path: './dist/prod', interval: Duration.seconds(90), timeout: Duration.hours(1),
    });
    expect(kustomization.metadata.name).toBe('serverless-prod');
    expect(kustomization.spec.path).toBe('./dist/prod');
    expect(kustomization.spec.interval).toBe('90s');
    expect(kustomization.spec.timeout).toBe('1h');
  });

  test('writes durations in Flux format', () => {
    const cases: Array<[Duration, string]> = [
      [Duration.seconds(90), '90s'],
      [Duration.seconds(120), '2m'],
      [Duration.minutes(5), '5m'],
      [Duration.minutes(90), '90m'],
      [Duration.hours(1), '1h'],
      [Duration.hours(24), '24h'],
    ];
    for (const [interval, expected] of cases) {
      expect(synthFlux({}, { interval }).kustomization.spec.interval).toBe(expected);
    }
  });

  test('synthesizes a Kustomization its model accepts', () => {
    for (const props of [{}, { path: './dist/prod', interval: Duration.seconds(90), timeout: Duration.hours(1) }]) {
      const { kustomization } = synthFlux({}, props);
      expect(() => new Kustomization(kustomization).validate()).not.toThrow();
    }
  });

  test('synthesizes without errors when the props are valid', () => {
    const chart = bootstrap();
    const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL });
    new FluxKustomization(chart, 'Serverless', { source });
    expect(() => App.of(chart).synthYaml()).not.toThrow();
  });

  test('throws at synth, with the construct path, when the Kustomization fails its schema', () => {
    const chart = bootstrap();
    const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL });
    new FluxKustomization(chart, 'Serverless', { source, path: 42 as any });
    expect(() => App.of(chart).synthYaml()).toThrow(/\[bootstrap\/Serverless\] data\/spec\/path must be string/);
  });

  test('matches the snapshot', () => {
    const chart = bootstrap();
    const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL, secretName: 'github-token' });
    new FluxKustomization(chart, 'Serverless', { source, path: './dist/prod' });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });
});

describe('FluxKustomizationStages', () => {
  test('syncs the stack, then the Functions, then what reaches them, each waiting for the one before', () => {
    const chart = bootstrap();
    const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL });
    const stages = new FluxKustomizationStages(chart, 'Serverless', { source, path: './dist/prod/', release: ServerlessRelease.V1_13_0 });
    const objects = Testing.synth(chart).filter(o => o.kind === 'Kustomization');
    expect(objects.map(o => [o.metadata.name, o.spec.path, o.spec.dependsOn, o.spec.wait])).toEqual([
      ['kyma-serverless-stack', './dist/prod/flux/stack', undefined, true],
      ['kyma-serverless-functions', './dist/prod/flux/functions', [{ name: 'kyma-serverless-stack' }], true],
      ['kyma-serverless-reach', './dist/prod/flux/reach', [{ name: 'kyma-serverless-functions' }], true],
    ]);
    for (const o of objects) {
      expect(o.spec.healthCheckExprs).toEqual(fluxHealthChecks(ServerlessRelease.V1_13_0));
      expect(() => new Kustomization(o).validate()).not.toThrow();
    }
    expect([stages.stack.name, stages.functions.name, stages.reach.name]).toEqual(objects.map(o => o.metadata.name));
  });

  test('names a dependency in another namespace with its namespace', () => {
    const app = Testing.app();
    const other = new Chart(app, 'other', { namespace: 'platform' });
    const chart = new Chart(app, 'flux', { namespace: 'flux-system' });
    const source = new FluxGitRepository(chart, 'Repo', { url: REPO_URL });
    const base = new FluxKustomization(other, 'Base', { source, name: 'base' });
    new FluxKustomization(chart, 'App', { source, name: 'app', dependsOn: [base] });
    expect(Testing.synth(chart).find(o => o.kind === 'Kustomization').spec.dependsOn).toEqual([{ name: 'base', namespace: 'platform' }]);
  });
});

/** A Function with a status, as Flux reads it: its controller has written the status subresource. */
function functionWith(status: object): object {
  return {
    apiVersion: FUNCTION_API_VERSION,
    kind: FUNCTION_KIND,
    metadata: { name: 'hello', namespace: 'team-a', generation: 1, managedFields: [{ manager: 'manager', operation: 'Update', subresource: 'status' }] },
    spec: { runtime: 'nodejs22' },
    status,
  };
}

function health(status: object): string {
  return fluxHealth([FLUX_FUNCTION_HEALTH_CHECK], functionWith(status));
}

function condition(type: string, status: string, message?: string): object {
  return { type, status, reason: `${type}${status}`, lastTransitionTime: '2025-01-01T00:00:00Z', ...(message ? { message } : {}) };
}

describe('FLUX_FUNCTION_HEALTH_CHECK', () => {
  test('applies to Functions', () => {
    expect(FLUX_FUNCTION_HEALTH_CHECK.apiVersion).toBe('serverless.kyma-project.io/v1alpha2');
    expect(FLUX_FUNCTION_HEALTH_CHECK.kind).toBe('Function');
  });

  test('is current when ConfigurationReady, BuildReady and Running are all True', () => {
    const status = { conditions: [condition('ConfigurationReady', 'True'), condition('BuildReady', 'True'), condition('Running', 'True')] };
    expect(health(status)).toBe('Current');
  });

  test('is current whatever the order of the conditions', () => {
    const status = { conditions: [condition('Running', 'True'), condition('ConfigurationReady', 'True'), condition('BuildReady', 'True')] };
    expect(health(status)).toBe('Current');
  });

  test('is failed when a condition is False', () => {
    const status = {
      conditions: [condition('ConfigurationReady', 'True'), condition('BuildReady', 'False', 'Job failed'), condition('Running', 'True')],
    };
    expect(health(status)).toBe('Failed');
  });

  test('is neither current nor failed when a condition is Unknown', () => {
    const status = { conditions: [condition('ConfigurationReady', 'True'), condition('BuildReady', 'True'), condition('Running', 'Unknown')] };
    expect(health(status)).toBe('InProgress');
  });

  test('is neither current nor failed while a condition is missing', () => {
    const status = { conditions: [condition('ConfigurationReady', 'True'), condition('BuildReady', 'True')] };
    expect(health(status)).toBe('InProgress');
  });

  test('does not count other True conditions', () => {
    const status = { conditions: [condition('ConfigurationReady', 'True'), condition('BuildReady', 'True'), condition('Ready', 'True')] };
    expect(health(status)).toBe('InProgress');
  });

  test('is neither current nor failed, without an error, when the status has no conditions', () => {
    expect(health({})).toBe('InProgress');
    expect(health({ observedGeneration: 1 })).toBe('InProgress');
  });
});
