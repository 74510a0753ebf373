import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

/** An object of a `@kubernetes-models/*` class. */
export interface Model {
  validate(): void;
  toJSON(): any;
}

/**
 * Adds a model's JSON to a scope as its `Resource`, and checks it against the model's schema
 * at synth (so a bad object fails synth with the construct path, like every other problem).
 */
export function addModel(scope: Construct, model: Model): ApiObject {
  const object = new ApiObject(scope, 'Resource', model.toJSON());
  scope.node.addValidation({
    validate: () => {
      try {
        model.validate();
        return [];
      } catch (e) {
        return [(e as Error).message];
      }
    },
  });
  return object;
}
