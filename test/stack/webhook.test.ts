import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { Duration, Size, Testing } from 'cdk8s';
import { Cpu } from 'cdk8s-plus-27';
import { BuildProfile, CertManagerIssuerKind, FunctionProfile, LogLevel, ServerlessRelease, ServerlessStack, WebhookCertificates } from '../../src';
import { NODEJS_IMAGE } from '../../src/stack/images';
import { WEBHOOK_NAMES, WEBHOOK_PATHS, parseWebhookConfig } from '../../src/webhook/config';
import { expectValidKubernetesObjects } from '../util/kubernetes-schema';
import { find, synthStack } from '../util/synth';

const WEBHOOK_KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

function webhookObjects(objects: readonly any[]): any[] {
  return objects.filter(o => o.metadata.labels?.['app.kubernetes.io/component'] === 'webhook' || WEBHOOK_KINDS.includes(o.kind));
}

function deploymentOf(objects: readonly any[]): any {
  return find(objects, 'Deployment', WEBHOOK_NAMES.workload);
}

function configurations(objects: readonly any[]): any[] {
  return WEBHOOK_KINDS.map(kind => find(objects, kind));
}

describe('the admission webhook with defaults', () => {
  const objects = synthStack();
  const deployment = deploymentOf(objects);
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];

  test('every object is valid against the Kubernetes 1.27 schema', () => {
    expectValidKubernetesObjects(webhookObjects(objects));
  });

  test('runs 2 replicas, spread across nodes and zones, one down at most', () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(pod.topologySpreadConstraints.map((c: any) => c.topologyKey)).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
    for (const constraint of pod.topologySpreadConstraints) expect(constraint.labelSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    const pdb = find(objects, 'PodDisruptionBudget', WEBHOOK_NAMES.workload);
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: deployment.spec.selector.matchLabels } });
  });

  test('runs restricted: non-root, no capabilities, read-only root, RuntimeDefault seccomp', () => {
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, runAsNonRoot: true,
    });
    expect(pod.priorityClassName).toBe('serverless-priority');
    expect(deployment.spec.template.metadata.annotations['sidecar.istio.io/inject']).toBe('false');
  });

  test('runs the bundled server from its ConfigMap with node, on the official Node.js image', () => {
    expect(container.image).toBe(NODEJS_IMAGE);
    expect(NODEJS_IMAGE).toMatch(/^docker\.io\/library\/node:\d+\.\d+\.\d+-alpine\d+\.\d+$/);
    expect(container.command).toEqual(['node', '/opt/kyma-serverless-webhook/main.js']);
    expect(container.args).toEqual([
      '--port', '8443', '--metrics-port', '8080', '--config', '/etc/kyma-serverless-webhook/config.yaml', '--log-level', 'info',
    ]);
    expect(container.volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/kyma-serverless-webhook', readOnly: true },
      { name: 'program', mountPath: '/opt/kyma-serverless-webhook', readOnly: true },
    ]);
    expect(pod.volumes).toEqual([{ name: 'config', configMap: { name: WEBHOOK_NAMES.config } }, { name: 'program', configMap: { name: WEBHOOK_NAMES.program } }]);
  });

  test('ships the server as a loader and the Brotli-compressed bundle the package holds, small enough for client-side apply', () => {
    const program = find(objects, 'ConfigMap', WEBHOOK_NAMES.program);
    expect(Object.keys(program.data)).toEqual(['main.js']);
    expect(program.data['main.js']).toContain("brotliDecompressSync(readFileSync(join(__dirname, 'server.js.br')))");
    const bundle = Buffer.from(program.binaryData['server.js.br'], 'base64');
    expect(bundle.equals(fs.readFileSync(path.join(__dirname, '..', '..', 'lib', 'webhook', 'server.js.br')))).toBe(true);
    expect(brotliDecompressSync(bundle).toString('utf8')).toMatch(/^\/\*! cdk8s-kyma-serverless \d+\.\d+\.\d+: the admission webhook server/);
    // kubectl's (and Argo CD's) client-side apply records the whole object in the annotation
    // kubectl.kubernetes.io/last-applied-configuration, and the API server allows 256 KiB of
    // annotations in all (the object's own ones count twice): 8 KiB stay free for the labels and
    // annotations that kustomize, Argo CD or Flux add.
    const annotations = Object.entries(program.metadata.annotations as { [key: string]: string }).reduce((n, [k, v]) => n + k.length + v.length, 0);
    const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration'.length + JSON.stringify(program).length;
    expect(lastApplied + annotations).toBeLessThan(256 * 1024 - 8 * 1024);
    // A new program rolls the Pods.
    const sha256 = createHash('sha256').update(bundle).update(program.data['main.js']).digest('hex');
    expect(program.metadata.annotations['cdk8s-kyma-serverless/program-sha256']).toBe(sha256);
    expect(deployment.spec.template.metadata.annotations['checksum/program']).toBe(sha256);
  });

  test('runs a prebuilt image instead when images.webhook names one', () => {
    const prebuilt = synthStack({ images: { webhook: 'registry.example.com/platform/kyma-serverless-webhook:0.1.0' } });
    const c = deploymentOf(prebuilt).spec.template.spec.containers[0];
    expect(c.image).toBe('registry.example.com/platform/kyma-serverless-webhook:0.1.0');
    expect(c.command).toBeUndefined();
    expect(c.args).toEqual([
      'webhook', 'serve', '--port', '8443', '--metrics-port', '8080', '--config', '/etc/kyma-serverless-webhook/config.yaml', '--log-level', 'info',
    ]);
    expect(c.volumeMounts).toEqual([{ name: 'config', mountPath: '/etc/kyma-serverless-webhook', readOnly: true }]);
    expect(prebuilt.filter(o => o.kind === 'ConfigMap' && o.metadata.name === WEBHOOK_NAMES.program)).toEqual([]);
    expect(deploymentOf(prebuilt).spec.template.metadata.annotations['checksum/program']).toBeUndefined();
  });

  test('runs on another Node.js image, such as one pinned by digest, with images.nodejs', () => {
    const image = `docker.io/library/node:22.12.0-alpine3.20@sha256:${'a'.repeat(64)}`;
    const objects2 = synthStack({ images: { nodejs: image } });
    expect(deploymentOf(objects2).spec.template.spec.containers[0].image).toBe(image);
    expect(find(objects2, 'Job').spec.template.spec.containers[0].image).toBe(image);
  });

  test('is ready through its HTTPS listener and alive through the metrics port', () => {
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 8443, scheme: 'HTTPS' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 8080, scheme: 'HTTP' });
    expect(container.resources).toEqual({ requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
  });

  test('the configuration file holds the stack\'s default presets and self-managed TLS', () => {
    const text = find(objects, 'ConfigMap', WEBHOOK_NAMES.config).data['config.yaml'];
    expect(parseWebhookConfig(text)).toEqual({
      defaults: { replicas: 1, functionProfile: 'L', buildProfile: 'normal' },
      requestTimeoutSeconds: 9,
      shutdownDelaySeconds: 5,
      selfManagedTls: {
        namespace: 'kyma-system',
        secretName: 'serverless-webhook',
        serviceName: 'serverless-webhook',
        mutatingWebhookConfiguration: 'defaulting.webhook.serverless.kyma-project.io',
        validatingWebhookConfiguration: 'validation.webhook.serverless.kyma-project.io',
        renewBeforeDays: 30,
        checkIntervalSeconds: 300,
      },
    });
  });

  test('a changed configuration rolls the Pods', () => {
    const other = deploymentOf(synthStack({ defaultFunctionPreset: FunctionProfile.S }));
    expect(other.spec.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    expect(other.spec.template.metadata.annotations['checksum/config']).not.toBe(deployment.spec.template.metadata.annotations['checksum/config']);
  });

  test('the Service maps 443 to the HTTPS port and exposes metrics', () => {
    const service = find(objects, 'Service', WEBHOOK_NAMES.service);
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([
      { name: 'https-webhook', port: 443, targetPort: 8443, protocol: 'TCP' },
      { name: 'http-metrics', port: 8080, targetPort: 8080, protocol: 'TCP' },
    ]);
  });

  test('the selector matches no other Deployment\'s Pods', () => {
    const selector = Object.entries(deployment.spec.selector.matchLabels);
    for (const other of objects.filter(o => o.kind === 'Deployment' && o !== deployment)) {
      const labels = other.spec.template.metadata.labels;
      expect(selector.every(([k, v]) => labels[k] === v)).toBe(false);
    }
  });

  test('both configurations call the Service on their paths, fail closed, exclude kube-system', () => {
    const [mutating, validating] = configurations(objects);
    expect(mutating.metadata.name).toBe('defaulting.webhook.serverless.kyma-project.io');
    expect(validating.metadata.name).toBe('validation.webhook.serverless.kyma-project.io');
    expect(mutating.metadata.namespace).toBeUndefined();
    for (const [configuration, path] of [[mutating, WEBHOOK_PATHS.defaulting], [validating, WEBHOOK_PATHS.validation]]) {
      expect(configuration.webhooks).toHaveLength(1);
      const webhook = configuration.webhooks[0];
      expect(webhook.name).toBe(configuration.metadata.name);
      expect(webhook.clientConfig).toEqual({ service: { name: 'serverless-webhook', namespace: 'kyma-system', path, port: 443 } });
      expect(webhook.clientConfig.caBundle).toBeUndefined();
      expect(webhook).toMatchObject({ failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 10, admissionReviewVersions: ['v1'] });
      expect(webhook.rules).toEqual([{
        apiGroups: ['serverless.kyma-project.io'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['functions'], scope: 'Namespaced',
      }]);
      expect(webhook.namespaceSelector.matchExpressions).toContainEqual({ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] });
      expect(webhook.namespaceSelector.matchExpressions).toContainEqual({ key: 'gardener.cloud/purpose', operator: 'NotIn', values: ['kube-system'] });
    }
    expect(mutating.webhooks[0].reinvocationPolicy).toBe('Never');
  });

  test('RBAC reaches only its Secret and its two configurations, by name', () => {
    const role = find(objects, 'Role', WEBHOOK_NAMES.workload);
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['serverless-webhook'], verbs: ['get', 'update'] },
    ]);
    const clusterRole = find(objects, 'ClusterRole', WEBHOOK_NAMES.workload);
    expect(clusterRole.rules).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['defaulting.webhook.serverless.kyma-project.io'], verbs: ['get', 'update'],
      },
      {
        apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'],
        resourceNames: ['validation.webhook.serverless.kyma-project.io'], verbs: ['get', 'update'],
      },
    ]);
    for (const binding of [find(objects, 'RoleBinding', WEBHOOK_NAMES.workload), find(objects, 'ClusterRoleBinding', WEBHOOK_NAMES.workload)]) {
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'serverless-webhook', namespace: 'kyma-system' }]);
    }
    expect(pod.serviceAccountName).toBe('serverless-webhook');
  });

  test('a NetworkPolicy opens the HTTPS port to the API server, and the Pods may reach it', () => {
    const policy = find(objects, 'NetworkPolicy', 'kyma-project.io--serverless-allow-webhook');
    expect(policy.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(policy.spec.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: 8443 }] }]);
    const labels = deployment.spec.template.metadata.labels;
    expect(labels['networking.serverless.kyma-project.io/to-apiserver']).toBe('allowed');
    expect(labels['kyma-project.io/module']).toBe('serverless');
  });

  test('holds no Secret: the certificate is made in the cluster', () => {
    expect(objects.filter(o => o.kind === 'Secret')).toEqual([]);
  });
});

describe('webhook options', () => {
  test('the stack\'s default presets become the defaults', () => {
    const text = find(synthStack({ defaultFunctionPreset: FunctionProfile.XS, defaultBuildPreset: BuildProfile.FAST }), 'ConfigMap', WEBHOOK_NAMES.config).data['config.yaml'];
    expect(parseWebhookConfig(text).defaults).toEqual({ replicas: 1, functionProfile: 'XS', buildProfile: 'fast' });
  });

  test('image, replicas, timeout and resources are configurable', () => {
    const objects = synthStack({
      images: { webhook: 'registry.example.com/platform/webhook:1.2.3' },
      webhook: {
        replicas: 3,
        timeout: Duration.seconds(5),
        resources: { requestCpu: Cpu.millis(100), requestMemory: Size.mebibytes(128), limitCpu: Cpu.units(1), limitMemory: Size.mebibytes(512) },
      },
    });
    const deployment = deploymentOf(objects);
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.template.spec.containers[0].image).toBe('registry.example.com/platform/webhook:1.2.3');
    expect(deployment.spec.template.spec.containers[0].resources.limits).toEqual({ cpu: '1', memory: '512Mi' });
    // The heap follows the memory limit: three quarters of it.
    expect(deployment.spec.template.spec.containers[0].env).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }]);
    for (const configuration of configurations(objects)) expect(configuration.webhooks[0].timeoutSeconds).toBe(5);
    expect(parseWebhookConfig(find(objects, 'ConfigMap', WEBHOOK_NAMES.config).data['config.yaml']).requestTimeoutSeconds).toBe(4);
  });

  test('caps the server\'s heap at three quarters of the default 256Mi limit', () => {
    const container = deploymentOf(synthStack({})).spec.template.spec.containers[0];
    expect(container.resources.limits.memory).toBe('256Mi');
    expect(container.env).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=192' }]);
  });

  test('the stack\'s log level reaches the server', () => {
    const args = deploymentOf(synthStack({ logLevel: LogLevel.DEBUG })).spec.template.spec.containers[0].args;
    expect(args.slice(args.indexOf('--log-level'), args.indexOf('--log-level') + 2)).toEqual(['--log-level', 'debug']);
  });

  test('self-managed renewal settings reach the configuration', () => {
    const objects = synthStack({ webhook: { certificates: WebhookCertificates.selfManaged({ renewBefore: Duration.days(60), checkInterval: Duration.minutes(1) }) } });
    const config = parseWebhookConfig(find(objects, 'ConfigMap', WEBHOOK_NAMES.config).data['config.yaml']);
    expect(config.selfManagedTls).toMatchObject({ renewBeforeDays: 60, checkIntervalSeconds: 60 });
  });

  test('enabled: false renders no webhook objects', () => {
    const objects = synthStack({ webhook: { enabled: false } });
    expect(webhookObjects(objects)).toEqual([]);
    expect(objects.filter(o => o.metadata.name === 'kyma-project.io--serverless-allow-webhook')).toEqual([]);
    expect(new ServerlessStack(Testing.app(), 'serverless', { webhook: { enabled: false } }).webhook).toBeUndefined();
  });

  test.each([
    [{ replicas: 0 }, /'webhook.replicas' \(0\) must be a whole number of at least 1/],
    [{ timeout: Duration.seconds(31) }, /'webhook.timeout \(seconds\)' \(31\) must be a whole number from 2 to 30/],
    [{ timeout: Duration.seconds(1) }, /'webhook.timeout \(seconds\)' \(1\) must be a whole number from 2 to 30/],
    [{ certificates: WebhookCertificates.selfManaged({ renewBefore: Duration.days(400) }) }, /'renewBefore' \(400 days\) must be shorter than the certificate's 365 days/],
    [{ certificates: WebhookCertificates.selfManaged({ renewBefore: Duration.hours(36) }) }, /'webhook.certificates.renewBefore \(days\)' \(1.5\) must be a whole number/],
    [{ certificates: WebhookCertificates.selfManaged({ checkInterval: Duration.seconds(5) }) }, /'webhook.certificates.checkInterval \(seconds\)' \(5\) must be a whole number of at least 10/],
  ])('throws when the options are out of range: %p', (webhook, message) => {
    expect(() => synthStack({ webhook })).toThrow(message);
  });
});

describe('webhook with cert-manager', () => {
  const objects = synthStack({ webhook: { certificates: WebhookCertificates.certManager() } });
  const deployment = deploymentOf(objects);
  const container = deployment.spec.template.spec.containers[0];

  test('every object is valid, cert-manager\'s against its CRDs', () => {
    expectValidKubernetesObjects(webhookObjects(objects));
    expectValidKubernetesObjects(objects.filter(o => o.apiVersion === 'cert-manager.io/v1'));
  });

  test('a self-signed Issuer signs a Certificate for the Service, renewed 30 days ahead', () => {
    const issuer = find(objects, 'Issuer');
    expect(issuer.metadata).toMatchObject({ name: 'serverless-webhook-selfsigned', namespace: 'kyma-system' });
    expect(issuer.spec).toEqual({ selfSigned: {} });
    const certificate = find(objects, 'Certificate');
    expect(certificate.metadata).toMatchObject({ name: 'serverless-webhook', namespace: 'kyma-system' });
    expect(certificate.spec).toMatchObject({
      secretName: 'serverless-webhook-tls',
      dnsNames: ['serverless-webhook', 'serverless-webhook.kyma-system', 'serverless-webhook.kyma-system.svc', 'serverless-webhook.kyma-system.svc.cluster.local'],
      duration: '8760h',
      renewBefore: '720h',
      issuerRef: { group: 'cert-manager.io', kind: 'Issuer', name: 'serverless-webhook-selfsigned' },
    });
  });

  test('cert-manager injects the CA into both configurations', () => {
    for (const configuration of configurations(objects)) {
      expect(configuration.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('kyma-system/serverless-webhook');
    }
  });

  test('the server reads the mounted Secret and needs no API access', () => {
    expect(container.args.slice(-4)).toEqual(['--tls-cert', '/etc/kyma-serverless-webhook/tls/tls.crt', '--tls-key', '/etc/kyma-serverless-webhook/tls/tls.key']);
    expect(deployment.spec.template.spec.volumes).toContainEqual({ name: 'tls', secret: { secretName: 'serverless-webhook-tls' } });
    expect(deployment.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(objects.filter(o => ['Role', 'ClusterRole'].includes(o.kind) && o.metadata.name === WEBHOOK_NAMES.workload)).toEqual([]);
    expect(deployment.spec.template.metadata.labels['networking.serverless.kyma-project.io/to-apiserver']).toBeUndefined();
    const config = parseWebhookConfig(find(objects, 'ConfigMap', WEBHOOK_NAMES.config).data['config.yaml']);
    expect(config.selfManagedTls).toBeUndefined();
  });

  test('an existing ClusterIssuer replaces the self-signed Issuer', () => {
    const others = synthStack({
      webhook: { certificates: WebhookCertificates.certManager({ issuer: { name: 'internal-ca', kind: CertManagerIssuerKind.CLUSTER_ISSUER }, renewBefore: Duration.days(10) }) },
    });
    expect(others.filter(o => o.kind === 'Issuer')).toEqual([]);
    expect(find(others, 'Certificate').spec).toMatchObject({
      issuerRef: { group: 'cert-manager.io', kind: 'ClusterIssuer', name: 'internal-ca' },
      renewBefore: '240h',
    });
  });
});

describe('the admission webhook of a 1.13.0 stack', () => {
  test('knows the stack\'s release (the default stack\'s is 1.11.1)', () => {
    expect(new ServerlessStack(Testing.app(), 'serverless', { release: ServerlessRelease.V1_13_0 }).webhook?.release).toBe(ServerlessRelease.V1_13_0);
    expect(new ServerlessStack(Testing.app(), 'serverless').webhook?.release).toBe(ServerlessRelease.V1_11_1);
  });

  test('runs the same workload, with the same permissions, as under 1.11.1; only its configuration names the release', () => {
    const config = (o: any) => o.kind === 'ConfigMap' && o.metadata.name === 'serverless-webhook-config';
    // The configuration's checksum on the Pod template changes with it.
    const strip = (objects: any[]) => webhookObjects(objects).filter(o => !config(o)).map(o => ({
      ...o,
      metadata: { ...o.metadata, labels: { ...o.metadata.labels, 'app.kubernetes.io/version': '' } },
      ...(o.kind === 'Deployment' ? { spec: { ...o.spec, template: { ...o.spec.template, metadata: { ...o.spec.template.metadata, annotations: {} } } } } : {}),
    }));
    const buildless = synthStack({ release: ServerlessRelease.V1_13_0 });
    expect(strip(buildless)).toEqual(strip(synthStack()));
    const files = (objects: any[]) => Object.values(webhookObjects(objects).find(config).data as Record<string, string>).join('\n');
    expect(files(buildless)).toMatch(/^release: "?1\.13\.0"?$/m);
    expect(files(synthStack())).not.toMatch(/release/);
  });
});
