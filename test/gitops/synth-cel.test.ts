/**
 * The CEL work of a synth, counted rather than timed (issue 35): the Function CRD's rules are
 * parsed when the package is built, planned once per process, and each evaluated once per distinct
 * part of a Function it reads, so that a synth of more Functions of the same shapes evaluates
 * nothing more. (That an app without Functions loads no CEL at all: synth-loading.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EnvValue } from 'cdk8s-plus-27';
import {
  FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack,
} from '../../src';
import { _resetWork } from '../../src/api/_work';
import { _celWork } from '../../src/api/validator';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-cel-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The CEL work of a synth of `count` Functions as the benchmark makes them (bench/functions/main.ts): each its own source and env values. */
function synth(count: number): typeof _celWork {
  const app = new GitOpsApp({ outdir: dir });
  const team = new FunctionNamespace(app, 'team', { stack: new ServerlessStack(app, 'serverless') });
  for (let i = 0; i < count; i++) {
    const python = i % 2 === 1;
    new KymaFunction(team, `fn-${i}`, {
      runtime: python ? FunctionRuntime.PYTHON_312 : FunctionRuntime.NODEJS_22,
      source: python
        ? FunctionSource.fromInline(`def main(event, context):\n    return "function ${i}"\n`)
        : FunctionSource.fromInline(`exports.main = () => 'function ${i}';\n`),
      env: { GREETING: EnvValue.fromValue(`hello from ${i}`) },
      resources: FunctionResources.preset(python ? FunctionProfile.S : FunctionProfile.M),
      ...(i % 4 === 0 ? { scale: { minReplicas: 1, maxReplicas: 3 } } : {}),
    });
  }
  // Forgets the remembered answers, not the planned rules.
  _resetWork();
  const before = { ..._celWork };
  app.synth();
  return { parses: _celWork.parses - before.parses, plans: _celWork.plans - before.plans, evaluations: _celWork.evaluations - before.evaluations };
}

test('a synth parses no rule, plans each once per process, and evaluates no more for more Functions of the same shapes', () => {
  const few = synth(4);
  const many = synth(16);
  expect(few.parses).toBe(0);
  expect(few.plans).toBeGreaterThan(0);
  expect(many).toEqual({ parses: 0, plans: 0, evaluations: few.evaluations });
  // On spec.source, spec.env, spec.scaleConfig and spec.resourceConfiguration.function (two rules, two profiles):
  // each rule once per distinct part it reads.
  expect(few.evaluations).toBe(1 + 1 + 1 + 1 + 2);
}, 60_000);
