// Jest's global teardown: deletes the run's temporary folder that jest.config.js made (TMPDIR of
// every worker and of every process a test started).
const fs = require('node:fs');

module.exports = async function removeTmpdir() {
  const dir = process.env.KYMA_SERVERLESS_TEST_TMPDIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
};
