import * as fc from 'fast-check';
import { FIELD_REF_API_VERSION, serverDefaultedFields, withFieldRefDefaults, withServerDefaults } from '../../src/api';

const fieldRef = (extra: object = {}) => ({ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name', ...extra } } });

describe('serverDefaultedFields', () => {
  test('names each fieldRef without apiVersion, with its path, its variable and what the API server writes', () => {
    const env = [{ name: 'PLAIN', value: 'x' }, fieldRef(), { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }, fieldRef({ apiVersion: '' })];
    expect(serverDefaultedFields(env)).toEqual([
      { path: 'spec.env[1].valueFrom.fieldRef.apiVersion', env: 'POD', value: 'v1' },
      { path: 'spec.env[3].valueFrom.fieldRef.apiVersion', env: 'POD', value: 'v1' },
    ]);
  });

  test('finds nothing in env that gives every apiVersion, or in no env at all', () => {
    expect(serverDefaultedFields([fieldRef({ apiVersion: 'v1' })])).toEqual([]);
    for (const env of [undefined, null, 'env', {}, [null, 1, { name: 'A', valueFrom: 'x' }]]) expect(serverDefaultedFields(env)).toEqual([]);
  });
});

describe('withServerDefaults', () => {
  test('adds apiVersion v1 where it is missing and leaves the rest as it is', () => {
    const env = [{ name: 'PLAIN', value: 'x' }, fieldRef(), fieldRef({ apiVersion: 'v2' })];
    expect(withServerDefaults(env)).toEqual([env[0], fieldRef({ apiVersion: FIELD_REF_API_VERSION }), env[2]]);
    expect(env[1]).toEqual(fieldRef());
  });

  test('returns env itself when nothing is missing', () => {
    const env = [fieldRef({ apiVersion: 'v1' })];
    expect(withServerDefaults(env)).toBe(env);
    expect(withFieldRefDefaults(env[0].valueFrom.fieldRef)).toBe(env[0].valueFrom.fieldRef);
  });

  test('gives env that is a fixed point, whatever it held', () => {
    const entry = fc.oneof(
      fc.record({ name: fc.string(), value: fc.string() }),
      fc.record({ name: fc.string(), valueFrom: fc.record({ fieldRef: fc.record({ fieldPath: fc.string(), apiVersion: fc.option(fc.constantFrom('', 'v1', 'v2'), { nil: undefined }) }, { requiredKeys: ['fieldPath'] }) }) }),
      fc.anything(),
    );
    fc.assert(fc.property(fc.array(entry), env => {
      const defaulted = withServerDefaults(env);
      return serverDefaultedFields(defaulted).length === 0 && withServerDefaults(defaulted) === defaulted;
    }));
  });
});
