import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  FIELD_REF_API_VERSION, FUNCTION_CRD_NAME, RESOURCE_FIELD_REF_DIVISOR, FunctionRules, functionCrdSpec, functionSchema, functionSchemaValidator, JsonSchemaProps,
} from '../../src/api';
import { compileSchemaValidator } from '../../src/api/schema-compiler';
import { upstreamFunctionCrdFacts, upstreamFunctionValidator } from '../util/upstream-crds';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, fixture, loadYamlDocuments } from '../util/fixtures';
import { flattenSchema } from '../util/schema-facts';

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
