/**
 * How the validator evaluates CEL rules with the interpreter (src/api/_cel.ts): on the part of `self` a rule
 * reads, remembered by that part, with the same answers as on all of `self`; the package's own rules
 * parsed when it is built, any other rule parsed at run time, once.
 */
import { ServerlessRelease, functionSchema } from '../../src/api';
import { JsonSchemaProps, array, object, string } from '../../src/api/schema';
import { compileSchemaValidator } from '../../src/api/schema-compiler';
import { _celWork, compileRule } from '../../src/api/_cel';
import { SchemaValidator } from '../../src/api/validator';
import { cel, celEnvironment as env, toCel } from '../util/cel';

/** Every schema node of a Function CRD that has CEL rules, with its path. */
function ruleNodes(schema: JsonSchemaProps, at = ''): { at: string; schema: JsonSchemaProps }[] {
  return [
    ...(schema['x-kubernetes-validations']?.length ? [{ at, schema }] : []),
    ...Object.entries(schema.properties ?? {}).flatMap(([key, child]) => ruleNodes(child, `${at}.${key}`)),
    ...(schema.items ? ruleNodes(schema.items, `${at}[]`) : []),
    ...(typeof schema.additionalProperties === 'object' ? ruleNodes(schema.additionalProperties, `${at}{}`) : []),
  ];
}

/** Values for every rule node, of every shape the rules tell apart: present, absent, unset, wrong types, extra fields. */
const VALUES: unknown[] = [
  {}, { inline: { source: 'x' } }, { gitRepository: { url: 'u' }, inline: { source: 'x' } }, { gitRepository: { url: 'u' } },
  { inline: undefined }, { gitRepository: null, inline: { source: 'y' } },
  { baseDir: ' ', reference: 'main' }, { baseDir: '/x', reference: '' }, { baseDir: '/x', reference: 'main', url: 'u' }, { baseDir: 3, reference: 'main' },
  { profile: 'M' }, { profile: 'XXL' }, { profile: 'fast', resources: {} }, { resources: { limits: { cpu: '1' } } }, { profile: null }, { profile: ['M'] },
  { minReplicas: 1, maxReplicas: 3 }, { minReplicas: 4, maxReplicas: 3 }, { minReplicas: 1 }, { minReplicas: -0, maxReplicas: 0 }, { minReplicas: 1.5, maxReplicas: 1 },
  { labels: { a: 'b' } }, { annotations: {} }, { labels: undefined },
  { 'serverless.kyma-project.io/x': '1' }, { 'serverless.kyma-project.io/y': undefined }, { 'serverless.kyma-project.io/z': null }, { a: null, b: undefined }, { ['x'.repeat(64)]: 'v' }, { 'proxy.istio.io/config': 'x' }, { app: 'a', tier: 'b' },
  [], [{ name: 'FUNC_PORT', value: '1' }], [{ name: 'GREETING', value: 'a' }, { name: 'INDEX', value: '1' }], [{ name: 'GREETING', value: 'b' }, { name: 'INDEX', value: '2' }],
  [{ value: 'no name' }], [{ name: 3 }], [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }], ['FUNC_PORT'], [{ name: undefined }], [{ name: null }], [null], [{ name: 'FUNC_PORT' }, 'x'],
  '', '  ', 'secret', 3, true, null,
];

function matchesType(value: unknown, schema: JsonSchemaProps): boolean {
  if (schema.type === 'object') return value !== null && typeof value === 'object' && !Array.isArray(value);
  if (schema.type === 'array') return Array.isArray(value);
  return schema.type === undefined || typeof value === schema.type;
}

/** The violations of a node's own rules that @bufbuild/cel gives on all of `self`, as the validator words them. */
function expected(schema: JsonSchemaProps, value: unknown): { message: string; rule: string }[] {
  return (schema['x-kubernetes-validations'] ?? []).flatMap(rule => {
    const program = cel.plan(env, cel.parse(rule.rule)) as unknown as (bindings: { self: unknown }) => unknown;
    const result = program({ self: toCel(value, schema) });
    if (cel.isCelError(result)) return [{ rule: rule.rule, message: `Invalid value: rule ${JSON.stringify(rule.rule)} could not be evaluated: ${result.message}` }];
    return result === true ? [] : [{ rule: rule.rule, message: `Invalid value: ${JSON.stringify(typeof value === 'object' ? schema.type : value)}: ${rule.message}` }];
  });
}

describe.each(Object.values(ServerlessRelease))('the Function CRD of %s', release => {
  const nodes = ruleNodes(functionSchema(release));

  test.each(nodes.map(n => [n.at, n.schema] as const))('%s: each rule answers on what it reads as on all of self, and again from memory', (_at, schema) => {
    // Its OpenAPI part is not under test: an object of any shape reaches the rules.
    const validator = new SchemaValidator(schema, () => true);
    const values = VALUES.filter(v => matchesType(v, schema));
    expect(values.length).toBeGreaterThan(2);
    const own = (value: unknown) => validator.validate(value).filter(v => v.path === '').map(({ message, rule }) => ({ message, rule }));
    for (const value of values) expect(own(value)).toEqual(expected(schema, value));
    // The second time from remembered answers, in the other order.
    for (const value of [...values].reverse()) expect(own(value)).toEqual(expected(schema, value));
  });
});

describe('evaluation', () => {
  const schema = object({
    a: string(),
    b: string(),
    c: string(),
    env: array(object({ name: string(), value: string() }), { validations: [{ rule: 'self.all(e, e.name != \'x\')', message: 'no x' }] }),
    tags: array(string(), { validations: [{ rule: 'size(self) < 3', message: 'at most two' }] }),
  }, { validations: [{ rule: 'has(self.a) && self.b != \'x\'', message: 'a and not x' }] });
  const validator = compileSchemaValidator(schema);

  const evaluations = (values: unknown[]) => {
    const before = _celWork.evaluations;
    for (const value of values) validator.validate(value);
    return _celWork.evaluations - before;
  };

  test('happens once per distinct part of self a rule reads: presence of a, value of b, names of env, all of tags', () => {
    // Each of the three rules once: c, env values and a's value are not read.
    expect(evaluations(Array.from({ length: 20 }, (_, i) => ({ a: `${i}`, b: 'y', c: `${i}`, env: [{ name: 'n', value: `${i}` }], tags: ['t'] })))).toBe(3);
    // The root rule for each new presence of a and value of b (3), env for a new name (1), tags for new tags (1).
    expect(evaluations([{ a: '1', b: 'z', env: [{ name: 'm' }], tags: ['t'] }, { b: 'z' }, { tags: ['u'] }, { tags: ['u'] }, { a: '2', b: 'z' }])).toBe(5);
    // Tags too long to remember by: the tags rule each time (the root rule's answer is remembered).
    const long = 'x'.repeat(5000);
    expect(evaluations([{ tags: [long] }, { tags: [long] }])).toBe(2);
  });

  test('reads a list with a hole, and a field that holds no JSON value, as @bufbuild/cel does, and remembers neither', () => {
    // A hole is no item to cut down: the rule sees the list whole, and @bufbuild/cel fails on it.
    const failed = (rule: string, what: string) => `Invalid value: rule ${JSON.stringify(rule)} could not be evaluated: unsupported input ${what}`;
    const cel = (value: unknown) => validator.validate(value).filter(v => !v.rule?.startsWith('openapi.')).map(v => v.message);
    // eslint-disable-next-line no-sparse-arrays
    expect(cel({ a: 'a', b: 'b', env: [{ name: 'n' }, , { name: 'm' }] })).toEqual([failed('self.all(e, e.name != \'x\')', 'undefined')]);
    // A function where the rule only asks whether a is there: not the answer of a string there.
    expect(cel({ a: 'present', b: 'y' })).toEqual([]);
    expect(cel({ a: () => 'present', b: 'y' })).toEqual([failed('has(self.a) && self.b != \'x\'', 'function')]);
    expect(cel({ a: Symbol('present'), b: 'y' })).toEqual([failed('has(self.a) && self.b != \'x\'', 'symbol')]);
  });

  test('gives the same violations from memory', () => {
    const value = { b: 'x', env: [{ name: 'x', value: '1' }], tags: ['1', '2', '3'] };
    const first = validator.validate(value);
    expect(first.map(v => v.message)).toEqual(['Invalid value: "object": a and not x', 'Invalid value: "array": no x', 'Invalid value: "array": at most two']);
    expect(validator.validate({ ...value, c: 'other' })).toEqual(first);
  });
});

describe('parsing', () => {
  test('the package\'s own rules are parsed when it is built, another rule once at run time', () => {
    const before = _celWork.parses;
    for (const release of Object.values(ServerlessRelease)) {
      for (const node of ruleNodes(functionSchema(release))) for (const rule of node.schema['x-kubernetes-validations']!) compileRule(rule.rule);
    }
    expect(_celWork.parses).toBe(before);
    const rule = 'self.startsWith(\'parsed-at-run-time\')';
    compileRule(rule);
    compileRule(rule);
    expect(_celWork.parses).toBe(before + 1);
  });

  test('throws when a rule does not parse, with the rule\'s text', () => {
    const broken = object({ a: string() }, { validations: [{ rule: 'self.a ==', message: 'broken' }] });
    expect(() => compileSchemaValidator(broken)).toThrow(/^CEL rule does not compile: self\.a ==: /);
  });
});
