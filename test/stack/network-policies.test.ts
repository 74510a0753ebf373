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

  test('the controller may reach anything, the API server, DNS, and be scraped', () => {
    expect(applying(podLabels('serverless-ctrl-mngr'))).toEqual([
      'kyma-project.io--serverless-allow-egress',
      'kyma-project.io--serverless-allow-metrics',
      'kyma-project.io--serverless-allow-to-apiserver',
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
