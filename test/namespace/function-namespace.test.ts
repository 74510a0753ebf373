import { Size, Testing } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { BuildProfile, FunctionNamespace, ServerlessStack } from '../../src';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { find } from '../util/synth';

const synth = (props: any = {}) => Testing.synth(new FunctionNamespace(Testing.app(), 'team-a', props));

describe('FunctionNamespace', () => {
  const objects = synth();

  test('every object is valid against the Kubernetes 1.27 schema', () => {
    expectValidKubernetesObjects(objects);
  });

  test('the namespace has Istio sidecar injection and PodSecurity labels, and no namespace of its own', () => {
    const namespace = find(objects, 'Namespace');
    expect(namespace.metadata.name).toBe('team-a');
    expect(namespace.metadata.namespace).toBeUndefined();
    expect(namespace.metadata.labels).toMatchObject({ 'istio-injection': 'enabled', 'pod-security.kubernetes.io/enforce': 'baseline' });
  });

  test('the LimitRange lets the largest build Job and Function preset in', () => {
    const limits = find(objects, 'LimitRange').spec.limits;
    expect(limits).toEqual([{
      type: 'Container',
      // fast build: 1700m; XL Function: 2048Mi.
      max: { cpu: '1700m', memory: '2048Mi' },
      default: { cpu: '800m', memory: '1024Mi' },
      defaultRequest: { cpu: '400m', memory: '512Mi' },
    }]);
    expect(find(objects, 'LimitRange').metadata.namespace).toBe('team-a');
  });

  test('the LimitRange follows the stack\'s presets, never going below what builds need', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', {
      buildPresets: { [BuildProfile.FAST]: { requestCpu: Cpu.units(1), requestMemory: Size.gibibytes(2), limitCpu: Cpu.units(3), limitMemory: Size.gibibytes(4) } },
    });
    const ns = new FunctionNamespace(app, 'team-b', { stack });
    expect(find(Testing.synth(ns), 'LimitRange').spec.limits[0].max).toEqual({ cpu: '3', memory: '4Gi' });
    expect(ns.maxContainerResources.cpu.amount).toBe('3');
  });

  test('name overrides the id', () => {
    expect(find(synth({ name: 'payments' }), 'Namespace').metadata.name).toBe('payments');
  });

  test('a quota that fits a build Job is rendered', () => {
    const quota = find(synth({ quota: { requestsCpu: Cpu.units(4), limitsMemory: Size.gibibytes(8), pods: 20 } }), 'ResourceQuota');
    expect(quota.spec.hard).toEqual({ 'requests.cpu': '4', 'limits.memory': '8Gi', 'pods': 20 });
    expect(quota.metadata.namespace).toBe('team-a');
  });

  test('no quota by default', () => {
    expect(objects.filter(o => o.kind === 'ResourceQuota')).toEqual([]);
  });

  test.each([
    [{ limitsCpu: Cpu.millis(1000) }, '\'quota.limitsCpu\' (1000m) leaves no room for one build Job of the largest build preset: raise it to at least 1700m'],
    [{ requestsMemory: Size.mebibytes(512) }, '\'quota.requestsMemory\' (512Mi) leaves no room for one build Job of the largest build preset: raise it to at least 1100Mi'],
    [{ pods: 1 }, '\'quota.pods\' (1) must be a whole number of at least 2'],
    [{}, '\'quota\' sets no limit'],
  ])('throws when the quota is %p', (quota, message) => {
    expect(() => synth({ quota })).toThrow(message);
  });

  test('throws when the name is not a DNS-1123 label', () => {
    expect(() => synth({ name: 'Team_A' })).toThrow('\'name\' (Team_A) must be a DNS-1123 label');
  });

  test.each(['kube-system', 'kyma-system'])('throws when the stack\'s controller copies nothing into the namespace (%s)', name => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless');
    expect(() => new FunctionNamespace(app, name, { stack })).toThrow(`'name' (${name}) is a namespace the stack's controller copies no registry credentials and Dockerfiles into`);
  });

  test('follows the stack\'s own controller.excludedNamespaces, not the default list', () => {
    const app = Testing.app();
    const stack = new ServerlessStack(app, 'serverless', { controller: { excludedNamespaces: ['istio-system'] } });
    expect(() => new FunctionNamespace(app, 'istio-system', { stack })).toThrow('(\'controller.excludedNamespaces\'), so its Functions could never be built');
    expect(new FunctionNamespace(app, 'kube-public', { stack }).name).toBe('kube-public');
  });

  test('matches the snapshot', () => {
    expect(objects).toMatchSnapshot();
  });
});
