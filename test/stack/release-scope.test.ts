import { App, Chart, Testing } from 'cdk8s';
import { FunctionNamespace, ServerlessRelease, ServerlessStack } from '../../src';
import { releaseOf } from '../../src/stack/release-scope';

describe('releaseOf', () => {
  test('is the default release in an app without a stack or namespace', () => {
    const chart = Testing.chart();
    expect(releaseOf(chart)).toBe(ServerlessRelease.V1_11_1);
  });

  test('is the stack\'s release for what the stack holds', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
    expect(stack.release).toBe(ServerlessRelease.V1_13_0);
    expect(releaseOf(stack.controller)).toBe(ServerlessRelease.V1_13_0);
  });

  test('is the release of the enclosing FunctionNamespace, which takes its stack\'s', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
    const team = new FunctionNamespace(app, 'team-a', { stack });
    expect(team.release).toBe(ServerlessRelease.V1_13_0);
    expect(releaseOf(new Chart(team, 'inner'))).toBe(ServerlessRelease.V1_13_0);
  });

  test('a FunctionNamespace without a stack has its own release, whatever the app\'s stacks deploy', () => {
    const app = Testing.app();
    new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
    const old = new FunctionNamespace(app, 'old', { release: ServerlessRelease.V1_11_1 });
    expect(releaseOf(old)).toBe(ServerlessRelease.V1_11_1);
  });

  test('outside a namespace, is the release the app\'s stacks agree on, even a stack created later', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'functions', { namespace: 'team-b' });
    new ServerlessStack(app, 'serverless', { release: ServerlessRelease.V1_13_0 });
    expect(releaseOf(chart)).toBe(ServerlessRelease.V1_13_0);
  });

  test('outside a namespace, is the default when the app\'s stacks deploy different releases', () => {
    const app = new App();
    const chart = new Chart(app, 'functions', { namespace: 'team-b' });
    new ServerlessStack(app, 'old', { release: ServerlessRelease.V1_11_1, namespace: 'old-system' });
    new ServerlessStack(app, 'new', { release: ServerlessRelease.V1_13_0, namespace: 'new-system' });
    expect(releaseOf(chart)).toBe(ServerlessRelease.V1_11_1);
  });

  test('throws when a FunctionNamespace names a release other than its stack\'s', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless');
    expect(() => new FunctionNamespace(app, 'team-a', { stack, release: ServerlessRelease.V1_13_0 }))
      .toThrow(/'release' \(1.13.0\) differs from the release of 'stack' \(1.11.1\)/);
  });

  test('the stack names its release on the Function CRD', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless');
    const crd = Testing.synth(stack).find(o => o.kind === 'CustomResourceDefinition');
    expect(crd.metadata.annotations['cdk8s-kyma-serverless/release']).toBe('1.11.1');
  });
});
