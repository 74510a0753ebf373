/**
 * The CEL work of a synth, counted rather than timed (issue 35): the Function CRD's rules run as the
 * JavaScript they were compiled to when the package was built, each once per Function, so a synth of
 * Functions they are sure of never loads the interpreter nor plans a rule. Interpreted (when a
 * compiled rule is not sure, or as the test suite compares them), the rules are parsed when the
 * package is built, planned once per process, and each evaluated once per distinct part of a
 * Function it reads, so that a synth of more Functions of the same shapes evaluates nothing more.
 * (That an app without Functions loads no CEL at all: synth-loading.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EnvValue } from 'cdk8s-plus-27';
import {
  FunctionNamespace, FunctionProfile, FunctionResources, FunctionRuntime, FunctionSource, GitOpsApp, KymaFunction, ServerlessStack,
} from '../../src';
import { _resetWork } from '../../src/api/_work';
import { CelMode, _celWork, _setCelMode } from '../../src/api/_cel';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-cel-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The CEL work of a synth of `count` Functions as the benchmark makes them (bench/functions/main.ts): each its own source and env values. */
function synth(count: number, mode: CelMode): typeof _celWork {
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
  const previous = _setCelMode(mode);
  const before = { ..._celWork };
  try {
    app.synth();
  } finally {
    _setCelMode(previous);
  }
  const work = { ..._celWork };
  for (const key of Object.keys(work) as (keyof typeof work)[]) work[key] -= before[key];
  return work;
}

/**
 * The rules of a Function of the benchmark, each on its node: spec.source, spec.env, spec.resourceConfiguration.function
 * (two rules) and, for one Function in four, spec.scaleConfig.
 */
const RULES_PER_FUNCTION = 1 + 1 + 2;

test('a synth of Functions the compiled rules are sure of evaluates each rule once per Function, and never loads the interpreter', () => {
  const few = synth(4, 'compiled');
  const many = synth(16, 'compiled');
  expect(few).toEqual({ interpreterLoads: 0, parses: 0, plans: 0, evaluations: 0, compiledEvaluations: 4 * RULES_PER_FUNCTION + 1 });
  expect(many).toEqual({ interpreterLoads: 0, parses: 0, plans: 0, evaluations: 0, compiledEvaluations: 16 * RULES_PER_FUNCTION + 4 });
}, 60_000);

test('interpreted, a synth parses no rule, plans each once per process, and evaluates no more for more Functions of the same shapes', () => {
  const few = synth(4, 'interpret');
  const many = synth(16, 'interpret');
  expect(few).toMatchObject({ interpreterLoads: 1, parses: 0, compiledEvaluations: 0 });
  expect(few.plans).toBeGreaterThan(0);
  expect(many).toEqual({ interpreterLoads: 0, parses: 0, plans: 0, compiledEvaluations: 0, evaluations: few.evaluations });
  // On spec.source, spec.env, spec.scaleConfig and spec.resourceConfiguration.function (two rules, two profiles):
  // each rule once per distinct part it reads.
  expect(few.evaluations).toBe(1 + 1 + 1 + 1 + 2);
}, 60_000);
