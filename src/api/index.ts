export * from './crd';
export * from './function-schema';
export * from './function-validator';
export * from './presets';
export * from './quantity';
export * from './runtimes';
export * from './schema';
export * from './validator';
