/**
 * The end-to-end tests: the packed package in a new cdk8s app outside the repository
 * (`npm run test:e2e`; CI runs it after `npm test`). Slow, so apart from the main suite.
 */
// Runtime support is judged at one fixed day (src/api/runtime-support.ts), in the tests and in every
// process they start: 2026-11-28, when nodejs20 is past its end, nodejs22 in its last month and
// python312 ends in March 2027. No test changes with the date it runs on.
process.env.KYMA_SERVERLESS_TODAY = '2026-11-28';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/*.e2e.ts'],
  testTimeout: 5 * 60 * 1000,
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  // test/e2e/day2.e2e.ts serves the fake API server (test/util/), which loads client-node: see jest.config.js.
  moduleNameMapper: { '^@kubernetes/client-node$': '<rootDir>/test/util/client-node.js' },
};
