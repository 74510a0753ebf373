import * as fs from 'node:fs';
import * as path from 'node:path';
import { Registry, WebhookCertificates } from '../../src';
import { validateManifests } from '../../src/policy/manifests';
import { POLICY_EXCEPTIONS_ANNOTATION, POLICY_RULES, PolicyRuleId, checkPolicies, isPinnedImage, policyExceptions } from '../../src/policy/policy';
import { loadYamlDocuments } from '../util/fixtures';
import { synthStack } from '../util/synth';

const DIST = path.join(__dirname, '..', '..', 'dist');

/** A Deployment that keeps every rule: the base each seeded violation changes one thing of. */
function compliant(): any {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team-a', labels: { 'app.kubernetes.io/part-of': 'serverless' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          priorityClassName: 'serverless-priority',
          securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{
            name: 'web',
            image: 'registry.example.com/web:1.0.0',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true },
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
            livenessProbe: { httpGet: { path: '/healthz', port: 8080 } },
            readinessProbe: { httpGet: { path: '/readyz', port: 8080 } },
          }],
          volumes: [{ name: 'config', configMap: { name: 'web' } }],
        },
      },
    },
  };
}

const container = (d: any) => d.spec.template.spec.containers[0];
const pod = (d: any) => d.spec.template.spec;

/** One seeded violation per rule: the objects to check, the path and the words expected. */
const SEEDED: Record<PolicyRuleId, { objects: () => any[]; path: string; message: RegExp }> = {
  [PolicyRuleId.PSS_RESTRICTED]: {
    objects: () => { const d = compliant(); container(d).securityContext.allowPrivilegeEscalation = true; return [d]; },
    path: 'spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation',
    message: /container web: allowPrivilegeEscalation is not false/,
  },
  [PolicyRuleId.READ_ONLY_ROOT_FILESYSTEM]: {
    objects: () => { const d = compliant(); delete container(d).securityContext.readOnlyRootFilesystem; return [d]; },
    path: 'spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem',
    message: /the root file system is writable/,
  },
  [PolicyRuleId.CONTAINER_RESOURCES]: {
    objects: () => { const d = compliant(); delete container(d).resources.limits.memory; return [d]; },
    path: 'spec.template.spec.containers[0].resources',
    message: /no limits\.memory/,
  },
  [PolicyRuleId.PROBES]: {
    objects: () => { const d = compliant(); delete container(d).readinessProbe; return [d]; },
    path: 'spec.template.spec.containers[0].readinessProbe',
    message: /no readinessProbe/,
  },
  [PolicyRuleId.PRIORITY_CLASS]: {
    objects: () => { const d = compliant(); delete pod(d).priorityClassName; return [d]; },
    path: 'spec.template.spec.priorityClassName',
    message: /without the stack's PriorityClass/,
  },
  [PolicyRuleId.DISRUPTION_BUDGET]: {
    objects: () => { const d = compliant(); d.spec.replicas = 2; return [d]; },
    path: 'spec.replicas',
    message: /2 replicas and no PodDisruptionBudget selects their Pods/,
  },
  [PolicyRuleId.RBAC_WILDCARD]: {
    objects: () => [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['*'], verbs: ['get'] }] }],
    path: 'rules[0].resources',
    message: /resources holds a wildcard/,
  },
  [PolicyRuleId.RBAC_ESCALATION]: {
    objects: () => [{
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [],
    }],
    path: 'roleRef.name',
    message: /binds the built-in ClusterRole cluster-admin/,
  },
  [PolicyRuleId.SECRET_DATA_IN_GIT]: {
    objects: () => [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { password: 'hunter2' } }],
    path: 'stringData',
    message: /holds password/,
  },
  [PolicyRuleId.IMAGE_PINNED]: {
    objects: () => { const d = compliant(); container(d).image = 'registry.example.com/web:latest'; return [d]; },
    path: 'spec.template.spec.containers[0].image',
    message: /image registry\.example\.com\/web:latest is not pinned/,
  },
  [PolicyRuleId.NO_HOST_PATH]: {
    objects: () => { const d = compliant(); pod(d).volumes.push({ name: 'docker', hostPath: { path: '/var/run/docker.sock' } }); return [d]; },
    path: 'spec.template.spec.volumes[1].hostPath',
    message: /volume docker mounts a path of the node/,
  },
  [PolicyRuleId.NO_HOST_NAMESPACES]: {
    objects: () => { const d = compliant(); pod(d).hostNetwork = true; return [d]; },
    path: 'spec.template.spec.hostNetwork',
    message: /hostNetwork is true/,
  },
  [PolicyRuleId.NO_PRIVILEGED]: {
    objects: () => { const d = compliant(); container(d).securityContext.privileged = true; return [d]; },
    path: 'spec.template.spec.containers[0].securityContext.privileged',
    message: /container web: runs privileged/,
  },
  [PolicyRuleId.NAMESPACE_POD_SECURITY]: {
    objects: () => [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } }],
    path: 'metadata.labels',
    message: /enforces Pod Security level privileged/,
  },
};

describe('the security baseline', () => {
  test('every rule has a seeded violation below', () => {
    expect(Object.keys(SEEDED).sort()).toEqual(POLICY_RULES.map(r => r.id).sort());
  });

  test('docs/security.md lists every rule', () => {
    const security = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
    for (const rule of POLICY_RULES) expect(`${rule.id}: ${security.includes(`\`${rule.id}\``)}`).toBe(`${rule.id}: true`);
  });

  test('the compliant base keeps every rule', () => {
    expect(checkPolicies([compliant()])).toEqual([]);
  });

  test.each(POLICY_RULES.map(r => r.id))('catches a violation of %s, with the path and the fix', id => {
    const seeded = SEEDED[id];
    const violations = checkPolicies(seeded.objects());
    expect(violations).toEqual([expect.objectContaining({ index: 0, rule: id, path: seeded.path, message: expect.stringMatching(seeded.message) })]);
    expect(violations[0].fix).toBe(POLICY_RULES.find(r => r.id === id)!.fix);
    expect(violations[0].excepted).toBeUndefined();
  });

  test.each(POLICY_RULES.map(r => r.id))('validate fails on a manifest breaking %s, naming the object and the rule', id => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'policy-'));
    try {
      const { stringify } = require('yaml');
      fs.writeFileSync(path.join(dir, 'objects.yaml'), SEEDED[id].objects().map(o => stringify(o)).join('---\n'));
      const findings = validateManifests(dir).findings.filter(f => f.rule.startsWith('policy.'));
      expect(findings).toEqual([expect.objectContaining({ file: 'objects.yaml', rule: `policy.${id}`, path: SEEDED[id].path, severity: 'error' })]);
      expect(findings[0].message).toContain(POLICY_RULES.find(r => r.id === id)!.fix);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a PodDisruptionBudget selecting the Pods satisfies a replicated workload', () => {
    const d = compliant();
    d.spec.replicas = 3;
    const budget = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'team-a' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } };
    expect(checkPolicies([d, budget])).toEqual([]);
    expect(checkPolicies([d, { ...budget, metadata: { name: 'web', namespace: 'team-b' } }]).map(v => v.rule)).toEqual([PolicyRuleId.DISRUPTION_BUDGET]);
  });

  test('an exception covers its rule on its container only, and keeps the reason', () => {
    const d = compliant();
    pod(d).initContainers = [{ ...structuredClone(container(d)), name: 'chown', securityContext: { ...container(d).securityContext, runAsUser: 0, runAsNonRoot: false } }];
    container(d).securityContext.runAsUser = 0;
    d.metadata.annotations = policyExceptions([{ rule: PolicyRuleId.PSS_RESTRICTED, container: 'chown', reason: 'the volume comes up owned by root' }]);
    const violations = checkPolicies([d]);
    expect(violations.filter(v => v.container === 'chown').map(v => v.excepted)).toEqual(['the volume comes up owned by root', 'the volume comes up owned by root']);
    expect(violations.filter(v => v.container === 'web')).toEqual([expect.objectContaining({ rule: PolicyRuleId.PSS_RESTRICTED, excepted: undefined })]);
  });

  test('an exception for another rule does not cover this one, and a malformed annotation covers nothing', () => {
    const d = compliant();
    container(d).securityContext.privileged = true;
    d.metadata.annotations = policyExceptions([{ rule: PolicyRuleId.PSS_RESTRICTED, reason: 'x' }]);
    expect(checkPolicies([d]).map(v => v.excepted)).toEqual([undefined]);
    d.metadata.annotations = { [POLICY_EXCEPTIONS_ANNOTATION]: '{not json' };
    expect(checkPolicies([d]).map(v => v.excepted)).toEqual([undefined]);
  });

  test('checks Jobs, CronJobs and bare Pods, but asks probes only of long-running workloads', () => {
    const spec = pod(compliant());
    delete spec.containers[0].livenessProbe;
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec } } };
    const cron = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { jobTemplate: { spec: { template: { spec: { ...spec, hostPID: true } } } } } };
    expect(checkPolicies([job])).toEqual([]);
    expect(checkPolicies([cron]).map(v => [v.rule, v.path])).toEqual([[PolicyRuleId.NO_HOST_NAMESPACES, 'spec.jobTemplate.spec.template.spec.hostPID']]);
  });

  test('checks the runtime image override of Functions', () => {
    const fn = (image: string) => ({ apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'f' }, spec: { runtimeImageOverride: image } });
    expect(checkPolicies([fn('registry.example.com/node:latest')]).map(v => v.rule)).toEqual([PolicyRuleId.IMAGE_PINNED]);
    expect(checkPolicies([fn('registry.example.com/node:22.1')])).toEqual([]);
  });

  test.each([
    ['registry.example.com/team/app:1.2.3', true],
    ['localhost:5000/app:v1', true],
    [`app@sha256:${'a'.repeat(64)}`, true],
    ['localhost:5000/app', false],
    ['app', false],
    ['app:latest', false],
  ])('isPinnedImage(%p) is %p', (image, pinned) => {
    expect(isPinnedImage(image)).toBe(pinned);
  });
});

describe('the stack keeps the baseline', () => {
  test('dist/ has no violation; its only exception is the registry\'s storage-ownership init container', () => {
    const report = validateManifests(DIST);
    expect(report.findings).toEqual([]);
    const excepted = [...new Set(report.exceptions.map(e => `${e.object} ${e.rule} ${e.path.replace(/\.securityContext.*$/, '')}`))];
    expect(excepted).toEqual(['Deployment kyma-system/serverless-docker-registry policy.pss-restricted spec.template.spec.initContainers[0]']);
  });

  test('every Pod template in dist/ is restricted but for that one container', () => {
    const files = ['0000-serverless.k8s.yaml', '0001-default-functions.k8s.yaml'].flatMap(f => ['', 'dev', 'prod'].map(env => path.join(DIST, env, f)));
    const objects = files.flatMap(f => loadYamlDocuments(f)).filter(o => o.spec?.template?.spec);
    expect(objects.length).toBeGreaterThanOrEqual(10);
    const restricted = checkPolicies(objects).filter(v => v.rule === PolicyRuleId.PSS_RESTRICTED);
    expect(new Set(restricted.map(v => v.container))).toEqual(new Set(['fix-storage-ownership']));
    expect(restricted.every(v => v.excepted?.startsWith('volumes that ignore fsGroup'))).toBe(true);
  });

  test('without the storage fix, the registry needs no exception at all', () => {
    const objects = synthStack({ registry: Registry.internal({ fixStorageOwnership: false }) });
    expect(checkPolicies(objects)).toEqual([]);
  });

  test('with an external registry, a cert-manager webhook and two controllers, nothing is excepted', () => {
    const objects = synthStack({
      registry: Registry.external({ secretName: 'r' }), controller: { replicas: 2 }, webhook: { certificates: WebhookCertificates.certManager() },
    });
    expect(checkPolicies(objects)).toEqual([]);
  });
});
