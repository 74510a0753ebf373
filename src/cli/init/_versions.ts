/**
 * The versions a new app's package.json names: those of this repository's package-lock.json, the
 * ones the test suites run with (test/cli/init.test.ts fails when they differ; copy the lock file's).
 */

/** cdk8s and the packages next to it, within the peerDependencies of this package; pinned. */
export const APP_DEPENDENCIES: { readonly [name: string]: string } = {
  'cdk8s': '2.70.106',
  'cdk8s-plus-27': '2.9.5',
  'constructs': '10.8.1',
};

/**
 * What runs the app (`npx ts-node main.ts`), the cdk8s command, and the tests of its Functions
 * (`npm test`: jest with ts-jest, and the testing kit); TypeScript takes patch releases.
 */
export const APP_DEV_DEPENDENCIES: { readonly [name: string]: string } = {
  '@types/jest': '29.5.14',
  '@types/node': '20.19.43',
  'cdk8s-cli': '2.207.60',
  'jest': '29.7.0',
  'ts-jest': '29.4.15',
  'ts-node': '10.9.2',
  'typescript': '~5.9.3',
};
