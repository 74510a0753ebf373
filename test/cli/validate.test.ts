import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReleaseSource, Severity, validateManifests, validateObject } from '../../src/policy/manifests';
import { RUNTIME_SUPPORT_SOURCE, ServerlessRelease } from '../../src/api';
import { program } from '../../src/cli/index';
import { OutputFormat } from '../../src/cli/_output';
import { validateCommand } from '../../src/cli/validate';

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

const FUNCTION = `apiVersion: serverless.kyma-project.io/v1alpha2
kind: Function
metadata:
  name: hello
  namespace: team-a
spec:
  runtime: nodejs22
  source:
    inline:
      source: 'exports.main = () => "hi"'
`;

/** A Function CRD as a stack writes it: the release in its annotation, or (without one) told by its short names. */
function functionCrd(options: { release?: string; shortNames?: string[] } = {}): string {
  const annotations = options.release ? `\n  annotations:\n    cdk8s-kyma-serverless/release: "${options.release}"` : '';
  const shortNames = options.shortNames ? `\n    shortNames: [${options.shortNames.join(', ')}]` : '';
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: functions.serverless.kyma-project.io${annotations}
spec:
  group: serverless.kyma-project.io
  names:
    kind: Function
    plural: functions
    singular: function${shortNames}
  scope: Namespaced
  versions:
    - name: v1alpha2
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
---
`;
}

const NODEJS24_FUNCTION = FUNCTION.replace('runtime: nodejs22', 'runtime: nodejs24');

/** Runs the real command in-process; returns what it printed and its exit code. */
async function run(...args: string[]): Promise<{ stdout: string; exitCode: number }> {
  let stdout = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => {
    stdout += String(chunk);
    return true;
  });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await program().exitOverride().parseAsync(['node', 'kyma-serverless', ...args]);
    return { stdout, exitCode: Number(process.exitCode ?? 0) };
  } finally {
    write.mockRestore();
    process.exitCode = before;
  }
}

describe('validate', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'validate-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };

  test('given function folders instead of manifests, says once what validate checks and what to run', () => {
    write('hello-node/handler.js', 'exports.main = () => 1\n');
    write('hello-node/function.yaml', 'runtime: nodejs22\n');
    write('hello-python/handler.py', 'def main(event, context):\n    return 1\n');
    write('hello-python/function.yaml', 'runtime: python312\n');
    const expected = 'holds function folders (hello-node, hello-python), not manifests: validate checks the Kubernetes manifests synth writes, '
      + 'and a function.yaml is a folder\'s settings. Run npm run synth (kyma-serverless synth), which checks the function folders and writes '
      + 'the manifests to dist/, then kyma-serverless validate dist';
    expect(() => validateCommand(dir, { output: OutputFormat.TABLE })).toThrow(`${dir} ${expected}`);
    expect(() => validateCommand(path.join(dir, 'hello-node'), { output: OutputFormat.TABLE }))
      .toThrow(`${path.join(dir, 'hello-node')} is a function folder, not manifests: `);
    // A folder with manifests beside them is checked as manifests.
    write('extra.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c, namespace: a }\n');
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(validateCommand(dir, { output: OutputFormat.TABLE })).toBe(false);
    } finally {
      out.mockRestore();
    }
  });

  test('warns of a Function too large for client-side apply, without failing', () => {
    write('functions.yaml', FUNCTION.replace('\'exports.main = () => "hi"\'', `'exports.main = () => "${'x'.repeat(300 * 1024)}"'`));
    const report = validateManifests(dir);
    expect(report.findings).toEqual([{
      file: 'functions.yaml', object: 'Function team-a/hello', path: '', rule: 'clientSideApplySize', severity: Severity.WARNING,
      message: expect.stringMatching(/^Too large for client-side apply: .*; apply it server-side \(kubectl apply --server-side, Argo CD's ServerSideApply=true\)/),
    }]);
  });

  test('finds nothing wrong in dist/ and its environments', () => {
    const report = validateManifests(DIST);
    expect(report.findings).toEqual([]);
    expect(report.files).toEqual(expect.arrayContaining(['0000-serverless.k8s.yaml', path.join('dev', '0000-serverless.k8s.yaml'), path.join('prod', '0000-serverless.k8s.yaml')]));
    expect(report.files.some(f => f.endsWith('kustomization.yaml'))).toBe(false);
    expect(report.objects).toBeGreaterThan(100);
  });

  test('reports an object that breaks the Kubernetes schema, with its file, object, field and rule', () => {
    write('apps.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web, namespace: team-a }\nspec: { replicas: two, selector: {}, template: {} }\n');
    expect(validateManifests(dir).findings).toEqual([
      { file: 'apps.yaml', object: 'Deployment team-a/web', path: 'spec.replicas', rule: 'openapi.type', message: 'must be integer', severity: Severity.ERROR },
    ]);
  });

  test('checks Functions by every rule of the Function API, with the fix', () => {
    write('functions.yaml', `${FUNCTION}  env:\n    - name: 1X\n      value: v\n  secretMounts:\n    - secretName: SECRET_NAME\n      mountPath: /secrets\n`);
    const findings = validateManifests(dir).findings;
    expect(findings.map(f => [f.object, f.path, f.rule])).toEqual([
      ['Function team-a/hello', 'spec.env[0].name', 'envName'],
      ['Function team-a/hello', 'spec.secretMounts[0].secretName', 'objectName'],
    ]);
    expect(findings[0].message).toMatch(/^Invalid value: "1X": a valid environment variable name .*; rename the variable$/);
  });

  test('names a Function the 1.11.1 controller would update for ever, with the fix', () => {
    write('functions.yaml', `${FUNCTION}  env:\n    - name: POD_NAME\n      valueFrom:\n        fieldRef:\n          fieldPath: metadata.name\n`
      + '    - name: MEMORY\n      valueFrom:\n        resourceFieldRef:\n          resource: limits.memory\n');
    const findings = validateManifests(dir).findings;
    expect(findings.map(f => [f.file, f.object, f.path, f.rule, f.severity])).toEqual([
      ['functions.yaml', 'Function team-a/hello', 'spec.env[0].valueFrom.fieldRef.apiVersion', 'envServerDefaults', Severity.ERROR],
      ['functions.yaml', 'Function team-a/hello', 'spec.env[1].valueFrom.resourceFieldRef.divisor', 'envServerDefaults', Severity.ERROR],
    ]);
    expect(findings[0].message).toMatch(/^Required value: env "POD_NAME" selects a Pod field without apiVersion; .* never creates the Service; give apiVersion: "v1"; synth, the stack's webhook and its CRD add it for you$/);
    expect(findings[1].message).toMatch(/^Required value: env "MEMORY" selects a resource without divisor; .*; give divisor: "1"; synth, the stack's webhook and its CRD add it for you$/);
  });

  test('names a Function whose Service name another Service of the folder takes, such as a traffic split named after it', () => {
    write('functions.yaml', `${FUNCTION}---\napiVersion: v1\nkind: Service\nmetadata: { name: hello, namespace: team-a }\nspec: { ports: [{ port: 80 }] }\n`);
    expect(validateManifests(dir).findings).toEqual([expect.objectContaining({
      file: 'functions.yaml', object: 'Function team-a/hello', path: 'metadata.name', rule: 'manifest.functionService', severity: Severity.ERROR,
      message: expect.stringMatching(/^Service team-a\/hello \(functions\.yaml\) has the name the controller gives the Function's Service, .*ServiceFailed/),
    })]);
    // Another namespace's Service of that name is no clash.
    write('functions.yaml', `${FUNCTION}---\napiVersion: v1\nkind: Service\nmetadata: { name: hello, namespace: team-b }\nspec: { ports: [{ port: 80 }] }\n`);
    expect(validateManifests(dir).findings).toEqual([]);
  });

  test('checks Functions against the CRD\'s CEL rules', () => {
    write('functions.yaml', `${FUNCTION}  scaleConfig: { minReplicas: 3, maxReplicas: 1 }\n`);
    expect(validateManifests(dir).findings).toEqual([expect.objectContaining({ path: 'spec.scaleConfig', message: expect.stringContaining('minReplicas should be less than or equal maxReplicas') })]);
  });

  test('checks cert-manager objects against their CRD', () => {
    write('cert.yaml', 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: web, namespace: a }\nspec: { secretName: web-tls }\n');
    expect(validateManifests(dir).findings).toEqual([expect.objectContaining({ object: 'Certificate a/web', path: 'spec', rule: 'openapi.required', message: 'must have required property issuerRef' })]);
  });

  test('checks APIRules and Subscriptions by our rules, Istio and Gateway API objects by their models', () => {
    write('reach.yaml', [
      'apiVersion: gateway.kyma-project.io/v2\nkind: APIRule\nmetadata: { name: orders, namespace: a }\n'
        + 'spec: { hosts: [orders.example.com], gateway: kyma-gateway, service: { name: orders, port: 80 }, rules: [{ path: orders, methods: [GET], noAuth: true }] }',
      'apiVersion: eventing.kyma-project.io/v1alpha2\nkind: Subscription\nmetadata: { name: invoices, namespace: a }\n'
        + 'spec: { sink: "http://invoices.b.svc.cluster.local", source: shop, types: [created] }',
      'apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata: { name: orders, namespace: a }\n'
        + 'spec: { hosts: [orders.example.com], http: [{ route: [{ destination: { host: orders }, weight: half }] }] }',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: orders, namespace: a }\n'
        + 'spec: { rules: [{ backendRefs: [{ name: orders, port: 80, weight: -1 }] }] }',
    ].join('\n---\n'));
    const findings = validateManifests(dir).findings.map(f => `${f.object} ${f.path} ${f.rule}`);
    expect(findings).toEqual(expect.arrayContaining([
      'APIRule a/orders spec.gateway gatewayFormat',
      'APIRule a/orders spec.rules[0].path openapi.pattern',
      'Subscription a/invoices spec.types[0] eventType',
      'Subscription a/invoices metadata.namespace sinkNamespace',
      'VirtualService a/orders spec.http[0].route[0].weight openapi.type',
      'HTTPRoute a/orders spec.rules[0].backendRefs[0].weight openapi.minimum',
    ]));
    expect(validateManifests(dir).findings.every(f => f.severity === Severity.ERROR)).toBe(true);
  });

  test('checks KEDA ScaledObjects against their CRD', () => {
    write('keda.yaml', 'apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: { name: hello, namespace: a }\n'
      + 'spec: { scaleTargetRef: { name: hello }, maxReplicaCount: many, triggers: [{ metadata: { value: "60" } }] }\n');
    expect(validateManifests(dir).findings.map(f => `${f.object} ${f.path} ${f.rule} ${f.message}`)).toEqual([
      'ScaledObject a/hello spec.maxReplicaCount openapi.type must be integer',
      'ScaledObject a/hello spec.triggers[0] openapi.required must have required property type',
    ]);
  });

  test('warns about kinds it knows no schema of, without failing', () => {
    write('other.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w }\nspec: { size: 3 }\n');
    expect(validateManifests(dir).findings).toEqual([
      { file: 'other.yaml', object: 'Widget w', path: '', rule: 'manifest.schema', message: 'no schema is known for example.com/v1 Widget; it was not checked', severity: Severity.WARNING },
    ]);
  });

  test('reports YAML that does not parse, documents that are no objects, and duplicates', () => {
    write('a.yaml', `${FUNCTION}---\nkey: [unclosed\n`);
    write('b.yaml', `just a string\n---\n${FUNCTION}`);
    const findings = validateManifests(dir).findings;
    expect(findings).toEqual([
      expect.objectContaining({ file: 'a.yaml', object: 'document 2', rule: 'manifest.yaml', message: expect.stringMatching(/^does not parse: /) }),
      expect.objectContaining({ file: 'b.yaml', object: 'document 1', rule: 'manifest.object', message: 'not a Kubernetes object: apiVersion and kind are required' }),
      expect.objectContaining({ file: 'b.yaml', object: 'Function team-a/hello', rule: 'manifest.unique', message: 'also defined in a.yaml; keep one' }),
    ]);
  });

  test('lets the same object stand in two environment folders', () => {
    write('dev/functions.yaml', FUNCTION);
    write('prod/functions.yaml', FUNCTION);
    expect(validateManifests(dir).findings).toEqual([]);
  });

  test('skips Kustomize files and reads subfolders', () => {
    write('kustomization.yaml', 'resources: [a.yaml]\n');
    write('nested/deeper/fn.yml', FUNCTION);
    expect(validateManifests(dir)).toEqual({
      files: [path.join('nested', 'deeper', 'fn.yml')], objects: 1, findings: [], exceptions: [],
      releases: [{ folder: path.join('nested', 'deeper'), release: ServerlessRelease.V1_11_1, source: ReleaseSource.DEFAULT }],
    });
  });

  describe('the release Functions are checked against', () => {
    test('is that of the Function CRD in their folder or a folder above, which the report names', () => {
      write('0000-serverless.yaml', functionCrd({ release: '1.11.1' }));
      write('functions.yaml', FUNCTION);
      write('prod/0000-serverless.yaml', functionCrd({ release: '1.13.0' }));
      write('prod/functions.yaml', FUNCTION);
      write('prod/team/functions.yaml', FUNCTION);
      write('dev/functions.yaml', FUNCTION);
      const report = validateManifests(dir);
      // Valid everywhere; under 1.13.0, which runs nodejs24, nodejs22 in its last 90 days gets a notice (under 1.11.1 not yet).
      expect(report.findings.map(f => [f.file, f.rule, f.severity])).toEqual([
        [path.join('prod', 'functions.yaml'), 'runtimeEnd', 'warning'],
        [path.join('prod', 'team', 'functions.yaml'), 'runtimeEnd', 'warning'],
      ]);
      expect(report.releases).toEqual([
        { folder: '.', release: ServerlessRelease.V1_11_1, source: ReleaseSource.FUNCTION_CRD, file: '0000-serverless.yaml' },
        { folder: 'dev', release: ServerlessRelease.V1_11_1, source: ReleaseSource.FUNCTION_CRD, file: '0000-serverless.yaml' },
        { folder: 'prod', release: ServerlessRelease.V1_13_0, source: ReleaseSource.FUNCTION_CRD, file: path.join('prod', '0000-serverless.yaml') },
        { folder: path.join('prod', 'team'), release: ServerlessRelease.V1_13_0, source: ReleaseSource.FUNCTION_CRD, file: path.join('prod', '0000-serverless.yaml') },
      ]);
    });

    test('is told by the CRD\'s shape when it has no annotation: 1.13.0\'s has the short name fn', () => {
      write('a/crd.yaml', functionCrd({ shortNames: ['fn', 'fns'] }));
      write('a/functions.yaml', FUNCTION);
      write('b/crd.yaml', functionCrd());
      write('b/functions.yaml', FUNCTION);
      expect(validateManifests(dir).releases.map(r => [r.folder, r.release])).toEqual([['a', '1.13.0'], ['b', '1.11.1']]);
    });

    test('is the one given where no Function CRD is, else 1.11.1; folders without Functions are not listed', () => {
      write('functions.yaml', FUNCTION);
      write('other/config.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c, namespace: a }\n');
      expect(validateManifests(dir).releases).toEqual([{ folder: '.', release: ServerlessRelease.V1_11_1, source: ReleaseSource.DEFAULT }]);
      expect(validateManifests(dir, { release: ServerlessRelease.V1_13_0 }).releases)
        .toEqual([{ folder: '.', release: ServerlessRelease.V1_13_0, source: ReleaseSource.GIVEN }]);
    });

    test('fails when the release given differs from the folder\'s Function CRD, or the annotation names no release', () => {
      write('crd.yaml', functionCrd({ release: '1.11.1' }));
      write('functions.yaml', FUNCTION);
      expect(validateManifests(dir, { release: ServerlessRelease.V1_13_0 }).findings).toEqual([{
        file: 'crd.yaml', object: 'CustomResourceDefinition functions.serverless.kyma-project.io', path: '', rule: 'manifest.release', severity: Severity.ERROR,
        message: 'this Function CRD is of release 1.11.1 (its annotation cdk8s-kyma-serverless/release), but release 1.13.0 was given: '
          + 'the folder\'s Functions run under the CRD\'s release; give 1.11.1, or none',
      }]);
      expect(validateManifests(dir, { release: ServerlessRelease.V1_11_1 }).findings).toEqual([]);
      write('crd.yaml', functionCrd({ release: '1.12.0' }));
      expect(validateManifests(dir).findings).toEqual([expect.objectContaining({
        rule: 'manifest.release', path: 'metadata.annotations.cdk8s-kyma-serverless/release',
        message: expect.stringMatching(/^The Function CRD's annotation cdk8s-kyma-serverless\/release \(1\.12\.0\) is no release this package deploys: use '1\.11\.1' or '1\.13\.0'.*, or remove the annotation/),
      })]);
    });

    test('refuses nodejs24 under 1.11.1, naming the runtimes of that release', () => {
      write('crd.yaml', functionCrd({ release: '1.11.1' }));
      write('functions.yaml', NODEJS24_FUNCTION);
      expect(validateManifests(dir).findings).toEqual([expect.objectContaining({ path: 'spec.runtime', message: expect.stringContaining('"nodejs22"') })]);
    });
    test('takes nodejs24 under 1.13.0, and refuses what the 1.13.0 CRD refuses (the Istio proxy annotation)', () => {
      write('crd.yaml', functionCrd({ release: '1.13.0' }));
      write('functions.yaml', NODEJS24_FUNCTION);
      expect(validateManifests(dir).findings).toEqual([]);
      write('functions.yaml', `${NODEJS24_FUNCTION}  annotations:\n    proxy.istio.io/config: "{}"\n`);
      expect(validateManifests(dir).findings).toEqual([expect.objectContaining({ path: expect.stringMatching(/^spec\.annotations/) })]);
      // The same Function without the CRD is checked against 1.11.1, unless --release says otherwise.
      fs.rmSync(path.join(dir, 'crd.yaml'));
      write('functions.yaml', NODEJS24_FUNCTION);
      expect(validateManifests(dir).findings).toEqual([expect.objectContaining({ path: 'spec.runtime' })]);
      expect(validateManifests(dir, { release: ServerlessRelease.V1_13_0 }).findings).toEqual([]);
    });
  });

  test('fails on a folder that does not exist', () => {
    expect(() => validateManifests(path.join(dir, 'missing'))).toThrow(`No folder ${path.join(dir, 'missing')}: give the folder synth writes to, such as dist/`);
  });

  test('validateObject tells known kinds from unknown ones', () => {
    expect(validateObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } })).toEqual({ known: true, violations: [] });
    expect(validateObject({ apiVersion: 'example.com/v1', kind: 'Widget' }).known).toBe(false);
    expect(validateObject({ apiVersion: 'v1', kind: 'NoSuchKind' }).known).toBe(false);
  });

  describe('the command', () => {
    test('prints a summary and exits 0 on dist/', async () => {
      const { stdout, exitCode } = await run('validate', DIST);
      expect(stdout.split('\n')[0]).toMatch(new RegExp(`^${DIST}: \\d+ objects in \\d+ files, 0 errors, 0 warnings, 2 documented policy exceptions \\(reasons with -o json\\):$`));
      expect(stdout.split('\n').slice(1)).toEqual([
        '  0000-serverless.k8s.yaml: Deployment kyma-system/serverless-docker-registry: policy.pss-restricted',
        `  ${path.join('dev', '0000-serverless.k8s.yaml')}: Deployment kyma-system/serverless-docker-registry: policy.pss-restricted`,
        'Functions checked against release 1.11.1 (the release of the Function CRD in 0000-serverless.k8s.yaml)',
        `Functions of dev/ checked against release 1.11.1 (the release of the Function CRD in ${path.join('dev', '0000-serverless.k8s.yaml')})`,
        `Functions of prod/ checked against release 1.11.1 (the release of the Function CRD in ${path.join('prod', '0000-serverless.k8s.yaml')})`,
        '',
      ]);
      expect(exitCode).toBe(0);
    });

    test('prints a table of findings and exits 1 when an object is invalid', async () => {
      write('apps.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web }\nspec: { replicas: two, selector: {}, template: {} }\n');
      write('other.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w }\n');
      const { stdout, exitCode } = await run('validate', dir);
      expect(stdout.split('\n').slice(0, 3)).toEqual([
        'SEVERITY  FILE        OBJECT          FIELD          PROBLEM',
        'error     apps.yaml   Deployment web  spec.replicas  must be integer',
        'warning   other.yaml  Widget w        -              no schema is known for example.com/v1 Widget; it was not checked',
      ]);
      expect(stdout).toContain(`${dir}: 2 objects in 2 files, 1 error, 1 warning`);
      expect(exitCode).toBe(1);
    });

    test('--release checks a folder without a Function CRD against that release, and says so; a release it does not know is refused', async () => {
      write('functions.yaml', FUNCTION);
      expect((await run('validate', dir)).stdout).toContain('\nFunctions checked against release 1.11.1 (the default: no Function CRD in the folder and no --release)\n');
      const given = await run('validate', dir, '--release', 'v1.13.0');
      expect(given.stdout).toContain('\nFunctions checked against release 1.13.0 (given with --release)\n');
      expect(given.exitCode).toBe(0);
      await expect(run('validate', dir, '--release', '1.12')).rejects.toThrow(/^--release \(1\.12\) is no release this package deploys: use '1\.11\.1' or '1\.13\.0'/);
    });

    test('a Function past its runtime\'s end of support gets a warning with the date, the source and the move; --fail-on-runtime-end makes it an error', async () => {
      write('functions.yaml', FUNCTION.replace('nodejs22', 'nodejs20'));
      const notice = 'nodejs20 reached the end of its support in April 2026 (upstream\'s runtime deprecation schedule, '
        + `${RUNTIME_SUPPORT_SOURCE}); release 1.11.1 still runs it; move to release 1.13.0 and nodejs24`;
      const warned = await run('validate', dir);
      expect(warned.exitCode).toBe(0);
      expect(warned.stdout.split('\n')[1]).toBe(`warning   functions.yaml  Function team-a/hello  spec.runtime  ${notice}`);
      expect(warned.stdout).toContain(`${dir}: 1 object in 1 file, 0 errors, 1 warning`);
      const failed = await run('validate', dir, '--fail-on-runtime-end');
      expect(failed.exitCode).toBe(1);
      expect(failed.stdout.split('\n')[1]).toBe(`error     functions.yaml  Function team-a/hello  spec.runtime  ${notice}`);
    });

    test('the notice is judged at the time given, or the day of KYMA_SERVERLESS_TODAY', () => {
      write('functions.yaml', FUNCTION);
      const rules = (now?: Date) => validateManifests(dir, { runtimeEnd: { now } }).findings.map(f => `${f.rule} ${f.severity}`);
      // 1.11.1 has no Node.js newer than 22: a notice once its support has ended, on 1 December 2026.
      expect(rules(new Date('2026-11-30T23:59:59Z'))).toEqual([]);
      expect(rules(new Date('2026-12-01T00:00:00Z'))).toEqual(['runtimeEnd warning']);
      expect(validateManifests(dir, { runtimeEnd: { now: new Date('2026-12-01T00:00:00Z'), fail: true } }).findings.map(f => f.severity)).toEqual(['error']);
      const today = process.env.KYMA_SERVERLESS_TODAY;
      try {
        process.env.KYMA_SERVERLESS_TODAY = '2026-12-01';
        expect(rules()).toEqual(['runtimeEnd warning']);
        process.env.KYMA_SERVERLESS_TODAY = '1 December';
        expect(() => rules()).toThrow(/^KYMA_SERVERLESS_TODAY \(1 December\) is no day: give it as YYYY-MM-DD, or unset it for today$/);
      } finally {
        process.env.KYMA_SERVERLESS_TODAY = today;
      }
      expect(rules()).toEqual([]);
    });

    test('exits 0 when there are only warnings', async () => {
      write('other.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w }\n');
      expect((await run('validate', dir)).exitCode).toBe(0);
    });

    test('prints JSON for scripts', async () => {
      write('functions.yaml', `${FUNCTION}  env: [{ name: 1X, value: v }]\n`);
      const { stdout, exitCode } = await run('validate', dir, '-o', 'json');
      expect(JSON.parse(stdout)).toEqual({
        ok: false,
        dir,
        exceptions: [],
        files: ['functions.yaml'],
        objects: 1,
        releases: [{ folder: '.', release: '1.11.1', source: 'default' }],
        findings: [expect.objectContaining({ file: 'functions.yaml', object: 'Function team-a/hello', path: 'spec.env[0].name', rule: 'envName', severity: 'error' })],
      });
      expect(exitCode).toBe(1);
    });
  });
});
