import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  FUNCTION_CRD_NAME, RELEASES, ServerlessRelease, functionCrdSpec, functionSchema, functionSchemaValidator, JsonSchemaProps, releaseFacts,
} from '../../src/api';
import { FIELD_REF_API_VERSION, RESOURCE_FIELD_REF_DIVISOR } from '../../src/api/controller-fixed-point';
import { FUNCTION_CATEGORY } from '../../src/api/crd';
import { FunctionRules, FunctionRulesV1_13_0, functionCelRules } from '../../src/api/function-schema';
import { compileSchemaValidator } from '../../src/api/schema-compiler';
import {
  HAS_UPSTREAM_REFERENCE_1_13_0, UPSTREAM_REFERENCE_1_13_0, upstreamFunctionCrdFacts, upstreamFunctionValidator,
} from '../util/upstream-crds';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, fixture, loadYamlDocuments } from '../util/fixtures';
import { flattenSchema } from '../util/schema-facts';
import { parse } from 'yaml';

const upstream = upstreamFunctionCrdFacts();
const upstreamValidator = upstreamFunctionValidator();
const validFunctions = loadYamlDocuments(fixture('functions', 'valid.yaml'));

function baseFunction(spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'serverless.kyma-project.io/v1alpha2',
    kind: 'Function',
    metadata: { name: 'fn', namespace: 'default' },
    spec: { runtime: 'nodejs22', source: { inline: { source: 'exports.main = () => 1' } }, ...spec },
  };
}

function messages(fn: unknown, validator = functionSchemaValidator()): string[] {
  return validator.validate(fn).map(v => `${v.path}: ${v.message}`);
}

/**
 * Where our schema differs from upstream's on purpose, by field path: the facts we add.
 * `fieldRef.apiVersion` defaults to v1 and `resourceFieldRef.divisor` to 1, so that the API server
 * stores Functions as the 1.11.1 controller needs them even without the webhook
 * (src/api/controller-fixed-point.ts).
 */
const OUR_ADDITIONS: { readonly [fieldPath: string]: { readonly [fact: string]: unknown } } = {
  'spec.env[].valueFrom.fieldRef.apiVersion': { default: FIELD_REF_API_VERSION },
  'spec.env[].valueFrom.resourceFieldRef.divisor': { default: RESOURCE_FIELD_REF_DIVISOR },
};

describe('the Function schema against upstream 1.11.1', () => {
  test('has every field path, type, enum, bound, default and CEL rule of upstream, and nothing else but our additions', () => {
    const ours = flattenSchema(functionSchema());
    expect(Object.keys(ours).sort()).toEqual(Object.keys(upstream.schema).sort());
    for (const [fieldPath, facts] of Object.entries(upstream.schema)) {
      expect({ path: fieldPath, facts: ours[fieldPath] }).toEqual({ path: fieldPath, facts: { ...(facts as object), ...(OUR_ADDITIONS[fieldPath] ?? {}) } });
    }
  });

  test('defaults fieldRef.apiVersion and resourceFieldRef.divisor, where upstream has no default', () => {
    for (const [field, value] of [['fieldRef.apiVersion', 'v1'], ['resourceFieldRef.divisor', '1']]) {
      expect(upstream.schema[`spec.env[].valueFrom.${field}`]).not.toHaveProperty('default');
      expect(flattenSchema(functionSchema())[`spec.env[].valueFrom.${field}`]).toMatchObject({ default: value });
    }
  });

  test('has the 14 CEL rules of upstream', () => {
    const rules = Object.values(flattenSchema(functionSchema()))
      .flatMap(facts => (facts['x-kubernetes-validations'] as any[] | undefined) ?? []);
    expect(rules).toHaveLength(14);
    expect(rules).toContainEqual(FunctionRules.reservedEnvs);
  });

  test('has upstream\'s names, scope, version, printer columns and subresources', () => {
    const spec = functionCrdSpec();
    expect(FUNCTION_CRD_NAME).toBe(upstream.name);
    expect(spec.group).toBe(upstream.group);
    expect(spec.names).toEqual(upstream.names);
    expect(spec.scope).toBe(upstream.scope);
    const [version] = spec.versions;
    expect(version.name).toBe(upstream.version.name);
    expect(version.served && version.storage).toBe(true);
    expect(version.additionalPrinterColumns).toEqual(upstream.version.additionalPrinterColumns);
    expect(version.subresources).toEqual(upstream.version.subresources);
  });

  (HAS_UPSTREAM_REFERENCE ? test : test.skip)('facts fixture matches the upstream CRD in shared/reference', () => {
    const crd = loadYamlDocuments(path.join(UPSTREAM_REFERENCE, 'serverless-1.11.1-function-crd.yaml'))[0];
    expect(flattenSchema(crd.spec.versions[0].schema.openAPIV3Schema)).toEqual(upstream.schema);
  });
});

const V1_13_0 = ServerlessRelease.V1_13_0;

describe('the 1.13.0 Function schema against upstream 1.13.0', () => {
  const upstream113 = upstreamFunctionCrdFacts(V1_13_0);
  const ours = flattenSchema(functionSchema(V1_13_0));

  test('has every field path, type, enum, bound, default and CEL rule of upstream, and nothing else but our additions', () => {
    expect(Object.keys(ours).sort()).toEqual(Object.keys(upstream113.schema).sort());
    for (const [fieldPath, facts] of Object.entries(upstream113.schema)) {
      expect({ path: fieldPath, facts: ours[fieldPath] }).toEqual({ path: fieldPath, facts: { ...(facts as object), ...(OUR_ADDITIONS[fieldPath] ?? {}) } });
    }
  });

  test('has every field of Kubernetes\' container and Pod security contexts that upstream embeds, in spec and status', () => {
    for (const at of ['spec', 'status']) {
      for (const which of ['containerSecurityContext', 'podSecurityContext']) {
        const theirs = Object.keys(upstream113.schema).filter(p => p.startsWith(`${at}.${which}`)).sort();
        expect(theirs.length).toBeGreaterThan(20);
        expect(Object.keys(ours).filter(p => p.startsWith(`${at}.${which}`)).sort()).toEqual(theirs);
      }
    }
  });

  test('has upstream\'s 14 CEL rules: reserved env names in upstream\'s order, the Istio annotation, no minReplicas <= maxReplicas', () => {
    const rules = Object.values(ours).flatMap(facts => (facts['x-kubernetes-validations'] as any[] | undefined) ?? []);
    expect(rules).toHaveLength(14);
    expect(rules).toContainEqual(FunctionRulesV1_13_0.reservedEnvs);
    expect(FunctionRulesV1_13_0.reservedEnvs.message).toBe(
      'Following envs are reserved and cannot be used: [\'FUNC_RUNTIME\',\'FUNC_HANDLER\',\'FUNC_PORT\',\'FUNC_HANDLER_SOURCE\',\'FUNC_HANDLER_DEPENDENCIES\',\'MOD_NAME\',\'NODE_PATH\',\'PYTHONPATH\']');
    expect(ours['spec.annotations']['x-kubernetes-validations']).toEqual([FunctionRulesV1_13_0.annotationsPrefix, FunctionRulesV1_13_0.annotationsReservedKey]);
    expect(ours['spec.scaleConfig']).not.toHaveProperty('x-kubernetes-validations');
    expect(rules).not.toContainEqual(FunctionRules.minLessOrEqualMax);
  });

  test('writes each rule both releases share once: the same object in both', () => {
    const [a, b] = RELEASES.map(functionCelRules);
    const shared = Object.keys(a).filter(id => id in b && id !== 'reservedEnvs');
    expect(shared).toHaveLength(11);
    for (const id of shared) expect((a as any)[id]).toBe((b as any)[id]);
  });

  test('has the runtimes of the release, nodejs24 among them', () => {
    expect(ours['spec.runtime'].enum).toEqual(releaseFacts(V1_13_0).runtimes);
    expect(ours['spec.runtime'].enum).toContain('nodejs24');
  });

  test('has no build profile or image override in its status', () => {
    expect(ours).not.toHaveProperty(['status.buildResourceProfile']);
    expect(ours).not.toHaveProperty(['status.runtimeImageOverride']);
    expect(ours['status.conditions[]'].required).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
  });

  test('has upstream\'s names plus our category, its printer columns (no Built) and subresources', () => {
    const spec = functionCrdSpec(V1_13_0);
    expect(spec.group).toBe(upstream113.group);
    expect(spec.names).toEqual({ ...upstream113.names, categories: ['all', FUNCTION_CATEGORY] });
    expect(spec.names.shortNames).toEqual(['fn', 'fns']);
    const [version] = spec.versions;
    expect(version.name).toBe(upstream113.version.name);
    expect(version.additionalPrinterColumns).toEqual(upstream113.version.additionalPrinterColumns);
    expect(version.additionalPrinterColumns.map(c => c.name)).not.toContain('Built');
    expect(version.subresources).toEqual(upstream113.version.subresources);
  });

  test('leaves 1.11.1\'s CRD spec as it was: no short names, no category all', () => {
    expect(functionCrdSpec().names).toEqual(upstream.names);
    expect(functionCrdSpec(ServerlessRelease.V1_11_1)).toEqual(functionCrdSpec());
  });

  (HAS_UPSTREAM_REFERENCE_1_13_0 ? test : test.skip)('facts fixture matches the upstream 1.13.0 CRD in shared/reference', () => {
    const crd = loadYamlDocuments(path.join(UPSTREAM_REFERENCE_1_13_0, 'function-crd.yaml'))[0];
    expect(flattenSchema(crd.spec.versions[0].schema.openAPIV3Schema)).toEqual(upstream113.schema);
  });
});

describe('the Function schema is a valid structural schema', () => {
  const problems: string[] = [];
  const visit = (node: JsonSchemaProps, at: string) => {
    if (!node.type && !node['x-kubernetes-int-or-string']) problems.push(`${at}: no type`);
    if (node.properties && node.additionalProperties) problems.push(`${at}: both properties and additionalProperties`);
    for (const key of node.required ?? []) if (!node.properties?.[key]) problems.push(`${at}: required ${key} is not a property`);
    if (node.anyOf && !node['x-kubernetes-int-or-string']) problems.push(`${at}: anyOf outside int-or-string`);
    if (node.default !== undefined && node.type === 'string' && typeof node.default !== 'string') problems.push(`${at}: default type`);
    for (const [name, child] of Object.entries(node.properties ?? {})) visit(child, `${at}.${name}`);
    if (node.items) visit(node.items, `${at}[]`);
    if (node.additionalProperties) visit(node.additionalProperties, `${at}{}`);
  };
  visit(functionSchema(), '');

  test('every node has a type, and no node mixes properties with additionalProperties', () => {
    expect(problems).toEqual([]);
  });

  test('metadata is left to the API server', () => {
    expect(functionSchema().properties!.metadata).toEqual({ type: 'object' });
  });

  test('every CEL rule compiles', () => {
    expect(() => compileSchemaValidator(functionSchema())).not.toThrow();
  });

  test('so is 1.13.0\'s, whose CEL rules compile too', () => {
    const problems113: string[] = [];
    const walk = (node: JsonSchemaProps, at: string) => {
      if (!node.type && !node['x-kubernetes-int-or-string']) problems113.push(`${at}: no type`);
      for (const key of node.required ?? []) if (!node.properties?.[key]) problems113.push(`${at}: required ${key} is not a property`);
      for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${at}.${name}`);
      if (node.items) walk(node.items, `${at}[]`);
      if (node.additionalProperties) walk(node.additionalProperties, `${at}{}`);
    };
    walk(functionSchema(V1_13_0), '');
    expect(problems113).toEqual([]);
    expect(() => compileSchemaValidator(functionSchema(V1_13_0))).not.toThrow();
  });
});

describe('the compiled 1.13.0 check, whose repeated subschemas are shared', () => {
  test('reports exactly what the schema compiled plainly reports', () => {
    const plain = compileSchemaValidator(functionSchema(V1_13_0));
    const shared = functionSchemaValidator(V1_13_0);
    const base = loadYamlDocuments(fixture('functions', 'valid-1.13.0.yaml')).find(f => f.metadata.name === 'hello24');
    const broken = [
      base,
      { ...base, spec: { ...base.spec, containerSecurityContext: { capabilities: { add: 'NET_ADMIN', drop: [1] }, seccompProfile: {}, runAsUser: 1.5 } } },
      { ...base, spec: { ...base.spec, podSecurityContext: { sysctls: [{ name: 'a' }], seLinuxOptions: { level: 3 }, windowsOptions: { hostProcess: 'yes' } } } },
      { ...base, status: { containerSecurityContext: { privileged: 'no' }, conditions: [{ type: 'Running', status: 'Maybe' }], gitRepository: {} } },
      { ...base, spec: { ...base.spec, resourceConfiguration: { function: { resources: { limits: { cpu: 0.5 } } }, build: { resources: { requests: { memory: 'lots' } } } } } },
    ];
    for (const fn of broken) expect(messages(fn, shared)).toEqual(messages(fn, plain));
    expect(messages(broken[1], shared).length).toBeGreaterThanOrEqual(4);
  });
});

/** The Functions of upstream's 1.13.0 sample-functions.md: the YAML of each `kubectl apply` heredoc. */
function upstreamSamples113(): any[] {
  const text = fs.readFileSync(path.join(UPSTREAM_REFERENCE_1_13_0, 'sample-functions.md'), 'utf8');
  return [...text.matchAll(/kubectl apply -f -\n([\s\S]*?)\nEOF\n/g)].map(m => parse(m[1]));
}

describe('valid 1.13.0 Functions', () => {
  const valid113 = loadYamlDocuments(fixture('functions', 'valid-1.13.0.yaml'));
  const ours113 = functionSchemaValidator(V1_13_0);
  const upstream113 = upstreamFunctionValidator(V1_13_0);

  test.each(valid113.map(f => [f.metadata.name, f]))('%s is accepted by our 1.13.0 CRD and upstream\'s', (_name, fn) => {
    expect(messages(fn, ours113)).toEqual([]);
    expect(messages(fn, upstream113)).toEqual([]);
  });

  test('a security context is refused by our 1.11.1 CRD and upstream\'s', () => {
    const fn = valid113.find(f => f.metadata.name === 'hello24');
    const withoutRuntime = { ...fn, spec: { ...fn.spec, runtime: 'nodejs22' } };
    expect(messages(withoutRuntime)).toEqual(['spec: unknown field "containerSecurityContext"', 'spec: unknown field "podSecurityContext"']);
    expect(messages(withoutRuntime, upstreamValidator)).toEqual(messages(withoutRuntime));
  });

  (HAS_UPSTREAM_REFERENCE_1_13_0 ? test : test.skip)('every upstream 1.13.0 sample Function with a runtime of the CRD is accepted; the others are refused as upstream\'s CRD refuses them', () => {
    const samples = upstreamSamples113();
    expect(samples.length).toBeGreaterThanOrEqual(5);
    for (const sample of samples) {
      const name = sample.metadata.name;
      if (releaseFacts(V1_13_0).runtimes.includes(sample.spec.runtime)) {
        expect({ name, errors: messages(sample, ours113) }).toEqual({ name, errors: [] });
      } else {
        // nodejs26 and python314 exist in upstream's code only, not in its CRD.
        expect({ name, errors: messages(sample, ours113) }).toEqual({ name, errors: messages(sample, upstream113) });
        expect(messages(sample, ours113)).toEqual([expect.stringMatching(/^spec\.runtime: Unsupported value/)]);
      }
    }
  });
});

describe('valid Functions', () => {
  test.each(validFunctions.map(f => [f.metadata.name, f]))('%s is accepted by our CRD and upstream\'s', (_name, fn) => {
    expect(messages(fn)).toEqual([]);
    expect(messages(fn, upstreamValidator)).toEqual([]);
  });

  (HAS_UPSTREAM_REFERENCE ? test : test.skip)('every upstream sample Function is accepted', () => {
    const samples = fs.readdirSync(UPSTREAM_REFERENCE).filter(f => f.startsWith('sample-function-'))
      .flatMap(f => loadYamlDocuments(path.join(UPSTREAM_REFERENCE, f)));
    expect(samples.length).toBeGreaterThanOrEqual(8);
    for (const sample of samples) expect({ name: sample.metadata.name, errors: messages(sample) }).toEqual({ name: sample.metadata.name, errors: [] });
  });
});

describe('invalid Functions are rejected with the API server\'s message', () => {
  const gitSource = (git: Record<string, unknown>) => ({ source: { gitRepository: { url: 'https://git.example.com/r.git', ...git } } });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['both sources', { source: { inline: { source: 'x' }, gitRepository: { url: 'u', baseDir: '/', reference: 'main' } } },
      'spec.source: Invalid value: "object": Use GitRepository or Inline source'],
    ['no source at all', { source: {} }, 'spec.source: Invalid value: "object": Use GitRepository or Inline source'],
    ['blank baseDir', gitSource({ baseDir: '  ', reference: 'main' }), 'BaseDir is required and cannot be empty'],
    ['missing reference', gitSource({ baseDir: '/' }), 'Reference is required and cannot be empty'],
    ['blank auth secret', gitSource({ baseDir: '/', reference: 'main', auth: { type: 'basic', secretName: ' ' } }),
      'spec.source.gitRepository.auth.secretName: Invalid value: " ": SecretName is required and cannot be empty'],
    ['reserved env', { env: [{ name: 'FUNC_PORT', value: '1' }] }, 'Following envs are reserved and cannot be used'],
    ['profile and resources', { resourceConfiguration: { function: { profile: 'M', resources: { limits: { cpu: '1' } } } } },
      'spec.resourceConfiguration.function: Invalid value: "object": Use profile or resources'],
    ['unknown function profile', { resourceConfiguration: { function: { profile: 'XXL' } } },
      'Invalid profile, please use one of: [\'XS\',\'S\',\'M\',\'L\',\'XL\']'],
    ['unknown build profile', { resourceConfiguration: { build: { profile: 'turbo' } } },
      'Invalid profile, please use one of: [\'local-dev\',\'slow\',\'normal\',\'fast\']'],
    ['empty build block', { resourceConfiguration: { build: {} } }, 'spec.resourceConfiguration.build: Invalid value: "object": Use profile or resources'],
    ['min above max', { scaleConfig: { minReplicas: 3, maxReplicas: 1 } }, 'minReplicas should be less than or equal maxReplicas'],
    ['template labels', { template: { labels: { a: 'b' } } }, 'Not supported: Use spec.labels and spec.annotations'],
    ['reserved label', { labels: { 'serverless.kyma-project.io/x': 'y' } }, 'Labels has key starting with serverless.kyma-project.io/'],
    ['long label key', { labels: { ['k'.repeat(64)]: 'v' } }, 'Label value cannot be longer than 63'],
    ['reserved annotation', { annotations: { 'serverless.kyma-project.io/x': 'y' } }, 'Annotations has key starting with serverless.kyma-project.io/'],
    ['unknown runtime', { runtime: 'nodejs18' }, 'spec.runtime: Unsupported value: "nodejs18": supported values: "nodejs20", "nodejs22", "python312"'],
    ['negative replicas', { replicas: -1 }, 'spec.replicas: Invalid value: -1: should be greater than or equal to 0'],
    ['zero minReplicas', { scaleConfig: { minReplicas: 0, maxReplicas: 1 } }, 'spec.scaleConfig.minReplicas: Invalid value: 0'],
    ['long secret name', { secretMounts: [{ secretName: 's'.repeat(254), mountPath: '/s' }] }, 'spec.secretMounts[0].secretName: Too long'],
    ['empty mount path', { secretMounts: [{ secretName: 's', mountPath: '' }] }, 'spec.secretMounts[0].mountPath: Invalid value: ""'],
    ['bad quantity', { resourceConfiguration: { function: { resources: { limits: { cpu: 'lots' } } } } }, 'spec.resourceConfiguration.function.resources.limits.cpu'],
    ['unknown field', { replica: 2 }, 'spec: unknown field "replica"'],
    ['env without name', { env: [{ value: 'x' }] }, 'spec.env[0].name: Required value'],
    ['bad auth type', gitSource({ baseDir: '/', reference: 'main', auth: { type: 'token', secretName: 's' } }), 'spec.source.gitRepository.auth.type: Unsupported value'],
  ];

  test.each(cases)('fails when %s', (_name, spec, expected) => {
    const found = messages(baseFunction(spec));
    expect(found.join('\n')).toContain(expected);
    expect(messages(baseFunction(spec), upstreamValidator).join('\n')).toContain(expected);
  });

  test('fails when spec is missing', () => {
    expect(messages({ apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'x' } })).toEqual(['spec: Required value']);
  });

  test('reports every violation of an object together', () => {
    const found = messages(baseFunction({ replicas: -1, runtime: 'go', labels: { 'serverless.kyma-project.io/a': 'b' } }));
    expect(found).toHaveLength(3);
  });
});
