/**
 * The floor of the benchmark: the smallest cdk8s-plus-27 app, one Deployment, synthesized
 * exactly the way `npm run synth` runs an app (ts-node, `cdk8s synth`, the manifest check).
 *
 * The Deployment keeps the security baseline the check enforces, so the floor passes it too;
 * cdk8s-plus cannot set seccomp or drop capabilities, which a recorded exception covers.
 */
import { App, Chart, Size } from 'cdk8s';
import { Cpu, Deployment, Probe } from 'cdk8s-plus-27';
import { PolicyRuleId, policyExceptions } from '../../src/policy/policy';

const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'dist' });
const chart = new Chart(app, 'floor');
new Deployment(chart, 'Web', {
  replicas: 1,
  metadata: {
    annotations: policyExceptions([{ rule: PolicyRuleId.PSS_RESTRICTED, reason: 'cdk8s-plus-27 sets neither seccomp nor dropped capabilities' }]),
  },
  containers: [{
    image: 'registry.example.com/web:1.0.0',
    portNumber: 8080,
    liveness: Probe.fromHttpGet('/healthz'),
    readiness: Probe.fromHttpGet('/readyz'),
    resources: {
      cpu: { request: Cpu.millis(10), limit: Cpu.millis(100) },
      memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) },
    },
  }],
});
app.synth();
