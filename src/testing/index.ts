/**
 * The test kit for Function handlers (`cdk8s-kyma-serverless/testing`): start a Function folder or
 * a KymaFunction on this machine with the contract of a Serverless release's runtime images
 * (`release`: 1.11.1, the default, or 1.13.0), send it requests and CloudEvents, read what it
 * answered and published, stop it. For jest and any other runner.
 */
export * from '../runtime';
export { DEFAULT_RELEASE, ServerlessRelease } from '../api/release';
