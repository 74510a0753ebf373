/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
};
