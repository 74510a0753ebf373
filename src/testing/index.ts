/**
 * The test kit for Function handlers (`cdk8s-kyma-serverless/testing`): start a Function folder or
 * a KymaFunction on this machine with the contract of the 1.11.1 runtime images, send it requests
 * and CloudEvents, read what it answered and published, stop it. For jest and any other runner.
 */
export * from '../runtime';
