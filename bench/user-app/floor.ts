/**
 * The floor of the user-path table: the smallest cdk8s-plus-27 app, one Deployment, as a user's
 * `main.ts` would have it. It runs in the scratch app the bench installs, with nothing of this
 * package loaded.
 */
import { App, Chart, Size } from 'cdk8s';
import { Cpu, Deployment, Probe } from 'cdk8s-plus-27';

const app = new App();
const chart = new Chart(app, 'floor');
new Deployment(chart, 'Web', {
  replicas: 1,
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
