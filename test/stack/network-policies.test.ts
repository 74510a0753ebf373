import { ServerlessRelease } from '../../src';
import { find, synthStack } from '../util/synth';

/** Whether a podSelector's matchLabels select a Pod with these labels. */
function selects(policy: any, labels: Record<string, string>): boolean {
  return Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

describe('NetworkPolicies', () => {
  const objects = synthStack();
  const policies = objects.filter(o => o.kind === 'NetworkPolicy');
  const podLabels = (name: string) => find(objects, 'Deployment', name).spec.template.metadata.labels;
  const jobLabels = find(objects, 'Job').spec.template.metadata.labels;
  const applying = (labels: Record<string, string>) => policies.filter(p => selects(p, labels)).map(p => p.metadata.name).sort();

  test('denies everything, in and out, to every Pod of the namespace unless allowed', () => {
    const deny = find(objects, 'NetworkPolicy', 'kyma-project.io--serverless-default-deny');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    expect(deny.metadata.namespace).toBe('kyma-system');
  });

  /** The policies that allow something: ingress rules for Ingress policies, egress rules for Egress ones. */
  const allowing = (labels: Record<string, string>, type: 'Ingress' | 'Egress') => policies
    .filter(p => p.spec.policyTypes.includes(type) && (p.spec[type.toLowerCase()] ?? []).length && selects(p, labels));
  const ports = (list: any[], type: 'Ingress' | 'Egress') => list.flatMap(p => p.spec[type.toLowerCase()].flatMap((r: any) => (r.ports ?? [{ port: 'any' }]).map((x: any) => x.port)));

  test('what each Pod may receive and send, and nothing else', () => {
    const webhook = podLabels('serverless-webhook');
    expect({
      controllerIn: ports(allowing(podLabels('serverless-ctrl-mngr'), 'Ingress'), 'Ingress'),
      controllerOut: ports(allowing(podLabels('serverless-ctrl-mngr'), 'Egress'), 'Egress'),
      registryIn: ports(allowing(podLabels('serverless-docker-registry'), 'Ingress'), 'Ingress').sort(),
      registryOut: ports(allowing(podLabels('serverless-docker-registry'), 'Egress'), 'Egress'),
      webhookIn: ports(allowing(webhook, 'Ingress'), 'Ingress').sort(),
      webhookOut: ports(allowing(webhook, 'Egress'), 'Egress'),
      jobIn: ports(allowing(jobLabels, 'Ingress'), 'Ingress'),
      jobOut: ports(allowing(jobLabels, 'Egress'), 'Egress'),
    }).toEqual({
      // Git servers, registries and the API server: anywhere.
      controllerIn: [8080],
      controllerOut: ['any', 443, 6443, 53, 53, 8053, 8053, 53, 53],
      // Pushes from build Jobs, pulls by kubelets through the NodePort, metrics.
      registryIn: [5000, 8080],
      registryOut: [53, 53, 8053, 8053, 53, 53],
      // The API server calls 8443; metrics and the liveness probe on 8080.
      webhookIn: [8080, 8443],
      webhookOut: [443, 6443, 53, 53, 8053, 8053, 53, 53],
      jobIn: [8080],
      jobOut: [443, 6443, 53, 53, 8053, 8053, 53, 53],
    });
  });

  test('the controller may reach anything, the API server, DNS, and be scraped', () => {
    expect(applying(podLabels('serverless-ctrl-mngr'))).toEqual([
      'kyma-project.io--serverless-allow-egress',
      'kyma-project.io--serverless-allow-metrics',
      'kyma-project.io--serverless-allow-to-apiserver',
      'kyma-project.io--serverless-default-deny',
      'kyma-project.io--serverless-to-dns',
    ]);
  });

  test('the registry takes pushes and pulls on 5000 from anywhere', () => {
    expect(applying(podLabels('serverless-docker-registry'))).toContain('kyma-project.io--serverless-allow-registry');
    const registry = find(objects, 'NetworkPolicy', 'kyma-project.io--serverless-allow-registry');
    expect(registry.spec.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: 5000 }] }]);
  });

  test('the credentials Job may reach the API server, on 443 and 6443', () => {
    expect(applying(jobLabels)).toContain('kyma-project.io--serverless-allow-to-apiserver');
    const ports = find(objects, 'NetworkPolicy', 'kyma-project.io--serverless-allow-to-apiserver').spec.egress[0].ports.map((p: any) => p.port);
    expect(ports).toEqual([443, 6443]);
  });

  test('every stack Pod may resolve names', () => {
    for (const labels of [podLabels('serverless-ctrl-mngr'), podLabels('serverless-docker-registry'), jobLabels]) {
      expect(applying(labels)).toContain('kyma-project.io--serverless-to-dns');
    }
  });
});

describe('NetworkPolicies of a 1.13.0 stack', () => {
  const objects = synthStack({ release: ServerlessRelease.V1_13_0 });
  const policies = objects.filter(o => o.kind === 'NetworkPolicy');
  const controller = find(objects, 'Deployment', 'serverless-ctrl-mngr').spec.template.metadata.labels;

  test('have no registry policy: nothing is pushed or pulled in the namespace', () => {
    expect(policies.map(p => p.metadata.name)).not.toContain('kyma-project.io--serverless-allow-registry');
    expect(policies.filter(p => JSON.stringify(p.spec).includes('5000'))).toEqual([]);
  });

  test('the controller still reaches anything (Git servers: it resolves commits itself), the API server and DNS, and is scraped', () => {
    expect(policies.filter(p => selects(p, controller)).map(p => p.metadata.name).sort()).toEqual([
      'kyma-project.io--serverless-allow-egress',
      'kyma-project.io--serverless-allow-metrics',
      'kyma-project.io--serverless-allow-to-apiserver',
      'kyma-project.io--serverless-default-deny',
      'kyma-project.io--serverless-to-dns',
    ]);
    expect(find(objects, 'NetworkPolicy', 'kyma-project.io--serverless-allow-egress').spec.egress).toEqual([{}]);
  });

  test('the other policies are those of 1.11.1, unchanged', () => {
    const specs = (list: any[]) => list.filter(o => o.kind === 'NetworkPolicy' && o.metadata.name !== 'kyma-project.io--serverless-allow-registry')
      .map(o => ({ name: o.metadata.name, purpose: o.metadata.labels.purpose, spec: o.spec }));
    expect(specs(policies)).toEqual(specs(synthStack()));
  });
});
