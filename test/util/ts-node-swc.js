// Preloaded (`node -r`) by the processes the tests start to load the TypeScript sources: ts-node
// with SWC, as bin/kyma-serverless.js and `ts-node --swc` load them. ts-node reads no TS_NODE_SWC
// variable, so `-r ts-node/register/transpile-only` with it set still compiles with TypeScript
// itself, about 4 s of CPU for the sources a synth loads where SWC takes under one.
require('ts-node').register({ swc: true, project: require('node:path').join(__dirname, '..', '..', 'tsconfig.json') });
