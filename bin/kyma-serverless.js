#!/usr/bin/env node
// The `kyma-serverless` command. A published package runs its compiled code (lib/); a checkout
// of the repository runs the TypeScript sources through ts-node, so no build step is needed.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const sources = path.join(root, 'src', 'cli', 'index.ts');
let cli;
if (fs.existsSync(sources)) {
  require('ts-node').register({ swc: true, project: path.join(root, 'tsconfig.json') });
  cli = require(sources);
} else {
  cli = require(path.join(root, 'lib', 'src', 'cli', 'index.js'));
}
cli.main(process.argv);
