export * from './api';
export * from './stack/controller';
export * from './stack/images';
export * from './stack/network-policies';
export * from './stack/registry';
export * from './stack/runtimes';
export * from './stack/serverless-stack';
export * from './namespace/function-namespace';
