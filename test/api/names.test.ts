import * as fc from 'fast-check';
import { isDns1123Label, isDns1123Subdomain } from '../../src/api';

describe('name rules', () => {
  test.each(['a', 'kyma-system', 'a1', '0'.repeat(63)])('%p is a DNS-1123 label', name => {
    expect(isDns1123Label(name)).toBe(true);
  });

  test.each(['', 'Kyma', 'a_b', '-a', 'a-', 'a.b', 'a'.repeat(64)])('%p is not a DNS-1123 label', name => {
    expect(isDns1123Label(name)).toBe(false);
  });

  test.each(['a.b', 'registry.example.com', 'x'])('%p is a DNS-1123 subdomain', name => {
    expect(isDns1123Subdomain(name)).toBe(true);
  });

  test.each(['', 'a..b', '.a', 'A.b', 'a'.repeat(254)])('%p is not a DNS-1123 subdomain', name => {
    expect(isDns1123Subdomain(name)).toBe(false);
  });

  test('every label is a subdomain', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/), name => isDns1123Label(name) && isDns1123Subdomain(name)));
  });
});
