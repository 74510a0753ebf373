/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // Jest's default leaves one of two cores idle; the suites are independent and CPU-bound.
  maxWorkers: 2,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  moduleNameMapper: { '^@kubernetes/client-node$': '<rootDir>/test/util/client-node.js' },
};
