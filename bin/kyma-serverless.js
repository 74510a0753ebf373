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
  // The command's modules, this package's and its dependencies' (commander, the parsers of
  // handlers), compile from the code cache once a first run wrote it (src/_code-cache.ts), for the
  // whole process: a command loads its modules when it first needs them.
  require(path.join(root, 'lib', 'src', '_code-cache.js'))._compileFromCodeCache(path.join(root, 'lib', 'src', 'index.js'), { dependencies: true });
  cli = require(path.join(root, 'lib', 'src', 'cli', 'index.js'));
}
cli.main(process.argv);
