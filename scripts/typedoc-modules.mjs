// A TypeDoc plugin for docs/api/: names the entry points as users import them,
// `cdk8s-kyma-serverless`, `cdk8s-kyma-serverless/api` and `cdk8s-kyma-serverless/testing`, instead
// of by their files (src/index.ts, src/api/index.ts, src/testing/index.ts), which carry no @module tag.
import { Converter } from 'typedoc';

const NAMES = { index: 'cdk8s-kyma-serverless', api: 'cdk8s-kyma-serverless/api', testing: 'cdk8s-kyma-serverless/testing' };

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, context => {
    for (const module of context.project.children ?? []) module.name = NAMES[module.name] ?? module.name;
  });
}
