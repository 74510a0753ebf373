import { RUNTIMES, ServerlessRelease, releaseFacts, runtimeFamily, RuntimeFamily } from '../../src/api';
import { RESERVED_ENV_NAMES } from '../../src/api/runtimes';

describe('the runtime constants', () => {
  test('are 1.11.1\'s facts, not a second spelling of them', () => {
    expect([...RUNTIMES]).toEqual(releaseFacts(ServerlessRelease.V1_11_1).runtimes);
    expect(RESERVED_ENV_NAMES).toBe(releaseFacts(ServerlessRelease.V1_11_1).reservedEnvNames);
  });

  test('know the family of every runtime of every release', () => {
    expect(releaseFacts(ServerlessRelease.V1_13_0).runtimes.map(runtimeFamily))
      .toEqual([RuntimeFamily.NODEJS, RuntimeFamily.NODEJS, RuntimeFamily.NODEJS, RuntimeFamily.PYTHON]);
  });
});
