/**
 * The check of synthesized manifests (src/policy/manifests.ts): what it leaves out for objects it
 * does not hold, so that checking the stack alone loads none of the rules of Functions.
 */
import * as fc from 'fast-check';
import { functionServiceClashes } from '../../src/api/function-rules';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../../src/api/function-schema';

describe('the check of a folder without Functions', () => {
  test('finds no clash of a Function\'s Service, which it then does not look for', () => {
    const kinds = fc.constantFrom<readonly [string, string]>(['v1', 'Service'], ['v1', 'ConfigMap'], ['apps/v1', 'Deployment'],
      [FUNCTION_API_VERSION, 'Other'], ['other/v1', FUNCTION_KIND], [FUNCTION_API_VERSION.toUpperCase(), FUNCTION_KIND]);
    const object = fc.record({
      kind: kinds,
      metadata: fc.option(fc.record({ name: fc.constantFrom('a', 'b'), namespace: fc.option(fc.constantFrom('x', 'y')) }), { nil: undefined }),
    }).map(({ kind, metadata }) => ({ apiVersion: kind[0], kind: kind[1], metadata }));
    fc.assert(fc.property(fc.array(fc.oneof(object, fc.anything()), { maxLength: 12 }), objects => {
      const functions = objects.filter(o => (o as { apiVersion?: unknown })?.apiVersion === FUNCTION_API_VERSION
        && (o as { kind?: unknown })?.kind === FUNCTION_KIND);
      if (functions.length === 0) expect(functionServiceClashes(objects)).toEqual([]);
    }), { numRuns: 500 });
  });
});
