import * as fc from 'fast-check';
import {
  FIELD_REF_API_VERSION, RESOURCE_FIELD_REF_DIVISOR, serverDefaultedFields, withServerDefaults, withValueFromDefaults,
} from '../../src/api/controller-fixed-point';

const fieldRef = (extra: object = {}) => ({ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name', ...extra } } });
const resourceRef = (extra: object = {}) => ({ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', ...extra } } });

describe('serverDefaultedFields', () => {
  test('names each fieldRef without apiVersion and each resourceFieldRef without divisor, with its path, variable, value and cause', () => {
    const env = [{ name: 'PLAIN', value: 'x' }, fieldRef(), resourceRef({ divisor: '1m' }), fieldRef({ apiVersion: '' }), resourceRef()];
    expect(serverDefaultedFields(env)).toEqual([
      { path: 'spec.env[1].valueFrom.fieldRef.apiVersion', env: 'POD', value: 'v1', cause: 'env "POD" selects a Pod field without apiVersion; the API server stores apiVersion "v1" in the Function\'s Deployment' },
      { path: 'spec.env[3].valueFrom.fieldRef.apiVersion', env: 'POD', value: 'v1', cause: expect.stringContaining('without apiVersion') },
      { path: 'spec.env[4].valueFrom.resourceFieldRef.divisor', env: 'CPU', value: '1', cause: 'env "CPU" selects a resource without divisor; the Function\'s Deployment holds divisor "0" where the Function has none' },
    ]);
  });

  test('shows a name that is no string as JSON, even one without a string form', () => {
    const name = Object.create(null);
    expect(serverDefaultedFields([{ name, valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }]).map(f => f.env)).toEqual(['{}']);
  });

  test('finds nothing in env that gives every field, or in no env at all', () => {
    expect(serverDefaultedFields([fieldRef({ apiVersion: 'v1' }), resourceRef({ divisor: '1Mi' })])).toEqual([]);
    for (const env of [undefined, null, 'env', {}, [null, 1, { name: 'A', valueFrom: 'x' }]]) expect(serverDefaultedFields(env)).toEqual([]);
  });
});

describe('withServerDefaults', () => {
  test('adds apiVersion v1 and divisor 1 where they are missing and leaves the rest as it is', () => {
    const env = [{ name: 'PLAIN', value: 'x' }, fieldRef(), fieldRef({ apiVersion: 'v2' }), resourceRef(), resourceRef({ divisor: '1m' })];
    expect(withServerDefaults(env)).toEqual([
      env[0], fieldRef({ apiVersion: FIELD_REF_API_VERSION }), env[2], resourceRef({ divisor: RESOURCE_FIELD_REF_DIVISOR }), env[4],
    ]);
    expect(env[1]).toEqual(fieldRef());
  });

  test('returns env itself when nothing is missing', () => {
    const env = [fieldRef({ apiVersion: 'v1' }), resourceRef({ divisor: '1' })];
    expect(withServerDefaults(env)).toBe(env);
    expect(withValueFromDefaults(env[0].valueFrom)).toBe(env[0].valueFrom);
  });

  test('gives env that is a fixed point, whatever it held', () => {
    const optional = (values: string[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
    const entry = fc.oneof(
      fc.record({ name: fc.string(), value: fc.string() }),
      fc.record({ name: fc.string(), valueFrom: fc.record({ fieldRef: fc.record({ fieldPath: fc.string(), apiVersion: optional(['', 'v1', 'v2']) }, { requiredKeys: ['fieldPath'] }) }) }),
      fc.record({ name: fc.string(), valueFrom: fc.record({ resourceFieldRef: fc.record({ resource: fc.string(), divisor: optional(['', '1', '1m', '1Mi']) }, { requiredKeys: ['resource'] }) }) }),
      fc.anything(),
    );
    fc.assert(fc.property(fc.array(entry), env => {
      const defaulted = withServerDefaults(env);
      return serverDefaultedFields(defaulted).length === 0 && withServerDefaults(defaulted) === defaulted;
    }));
  });
});
