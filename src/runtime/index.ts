export * from './cloudevents';
export * from './dependencies';
export * from './function-env';
export * from './invoke';
export * from './local-function';
