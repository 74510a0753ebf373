import { array, integer, mapOf, object, string } from '../../src/api/schema';
import { compileSchemaValidator } from '../../src/api/schema-compiler';

describe('bounds and item counts', () => {
  const schema = object({
    hosts: array(string({ pattern: '^[a-z]+$' }), { minItems: 1, maxItems: 2 }),
    port: integer({ minimum: 1, maximum: 65535 }),
    config: mapOf(string(), { default: { size: '10' } }),
  });
  const validator = compileSchemaValidator(schema);

  test('the builders write the keywords', () => {
    const facts = schema.properties!;
    expect(facts.hosts).toMatchObject({ minItems: 1, maxItems: 2, items: { pattern: '^[a-z]+$' } });
    expect(facts.port).toMatchObject({ minimum: 1, maximum: 65535 });
    expect(facts.config).toMatchObject({ default: { size: '10' }, additionalProperties: { type: 'string' } });
  });

  test('accepts values at the bounds', () => {
    expect(validator.validate({ hosts: ['a', 'b'], port: 65535 })).toEqual([]);
    expect(validator.validate({ hosts: ['a'], port: 1 })).toEqual([]);
  });

  test('reports a number above its maximum in the API server\'s words', () => {
    expect(validator.validate({ port: 65536 })).toEqual([{ path: 'port', message: 'Invalid value: 65536: should be less than or equal to 65535', rule: 'openapi.maximum' }]);
  });

  test('reports too few items with their count', () => {
    expect(validator.validate({ hosts: [] })).toEqual([{ path: 'hosts', message: 'Invalid value: 0: should have at least 1 items', rule: 'openapi.minItems' }]);
  });

  test('reports too many items as the API server does', () => {
    expect(validator.validate({ hosts: ['a', 'b', 'c'] })).toEqual([{ path: 'hosts', message: 'Too many: 3: must have at most 2 items', rule: 'openapi.maxItems' }]);
  });

  test('reports a string that does not match its pattern', () => {
    expect(validator.validate({ hosts: ['A'] })).toEqual([{ path: 'hosts[0]', message: 'Invalid value: "A": should match \'^[a-z]+$\'', rule: 'openapi.pattern' }]);
  });
});
