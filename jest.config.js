// Runtime support is judged at one fixed day (src/api/runtime-support.ts), in the tests and in every
// process they start: 2026-11-28, when nodejs20 is past its end, nodejs22 in its last month and
// python312 ends in March 2027. No test changes with the date it runs on.
process.env.KYMA_SERVERLESS_TODAY = '2026-11-28';

// Every CEL rule the tests evaluate goes through both the rules compiled to JavaScript and the
// interpreter, @bufbuild/cel, and a test fails where a compiled rule is sure of another answer
// (src/api/_cel.ts): every object the suite synthesizes or validates is checked by the real
// interpreter, in the tests and in the processes they start. The tests that count the work of each
// way set their own.
if (!process.env.KYMA_SERVERLESS_CEL) process.env.KYMA_SERVERLESS_CEL = 'compare';

// Every temporary folder of a run goes in one folder that test/remove-tmpdir.js deletes when the run
// ends: cdk8s's Testing.app() and the tests' own mkdtempSync() leave theirs behind otherwise, some
// thousands per run. The workers and the processes the tests start inherit TMPDIR, so os.tmpdir()
// is that folder everywhere.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
if (!process.env.KYMA_SERVERLESS_TEST_TMPDIR) {
  process.env.KYMA_SERVERLESS_TEST_TMPDIR = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-serverless-jest-'));
  process.env.TMPDIR = process.env.KYMA_SERVERLESS_TEST_TMPDIR;
}

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // Three workers on the two cores of the machines this runs on: most suites are CPU-bound, but
  // some spend most of their time waiting (faults.test.ts 10 of its 15 s on retry pauses and
  // Retry-After, siege.test.ts on connection timeouts, the runtime tests on npm, pip and the
  // processes they start), and with two workers a core idles through each of those waits. The
  // third runs a suite meanwhile. (Jest's default, cores - 1, would leave a core idle throughout.)
  maxWorkers: 3,
  // Jest's default of 5 s per test is a wall-clock budget, and this suite runs on shared 2-core
  // machines where a load of 6 (a build beside it) makes the same work take 3-4 times as long. No
  // async test that has no budget of its own takes 2.5 s on an idle machine (the longest: runApply's
  // timeouts, ~2 s), so 30 s leaves ten times that. Tests known to be slow carry their own budget,
  // derived from what they do: spawning node, npm, kubectl or ts-node (60 s), bundling, synth of
  // dist/ in a child process. A test that hangs still fails, after 30 s rather than 5.
  testTimeout: 30_000,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
  // The slowest suites first when jest has no timings of an earlier run (CI): see the file.
  testSequencer: '<rootDir>/test/sequencer.js',
  globalTeardown: '<rootDir>/test/remove-tmpdir.js',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  moduleNameMapper: { '^@kubernetes/client-node$': '<rootDir>/test/util/client-node.js' },
};
