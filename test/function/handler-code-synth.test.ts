/**
 * The mistakes of issue 29 in function folders of an app: `kyma-serverless synth` (what `npm run
 * synth` runs) fails, names the file, the line and the fix, and leaves dist/ as it was; `validate`
 * says the same of the manifests.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart, Testing } from 'cdk8s';
import * as YAML from 'yaml';
import { ACCEPT_WARNINGS_ANNOTATION } from '../../src/api';
import { FunctionFolder, FunctionRuntime, FunctionSource, KymaFunction } from '../../src';
import { Severity, validateManifests } from '../../src/policy/manifests';
import { ProjectCopy } from '../util/project-copy';

// One synth of a copied project: cdk8s, ts-node and the checks of every object, on a shared machine.
jest.setTimeout(300_000);

const PY_MAIN = 'def main(event, context):\n    return "hi"\n';

describe('synth of an app with mistakes in its handlers', () => {
  let project: ProjectCopy;
  let before: Record<string, string>;
  let result: { status: number | null; stderr: string };
  beforeAll(() => {
    project = new ProjectCopy();
    before = project.files('dist');
    project.write('functions/no-colon/handler.py', 'import os\n\ndef main(event, context)\n    return os.environ["HOME"]\n');
    project.write('functions/no-main/handler.py', 'def handler(event, context):\n    return "hi"\n');
    project.write('functions/js-syntax/handler.js', 'const x = ;\nexports.main = () => x;\n');
    project.write('functions/requirement/handler.py', PY_MAIN);
    project.write('functions/requirement/requirement.txt', 'requests\n');
    project.write('functions/packages/handler.js', 'exports.main = () => 1;\n');
    project.write('functions/packages/packages.json', '{ "dependencies": {} }\n');
    project.write('functions/no-requirements/handler.py', `import json\nimport yaml\n\n${PY_MAIN}`);
    project.write('functions/two-handlers/handler.js', 'exports.main = () => 1;\n');
    project.write('functions/two-handlers/handler.py', PY_MAIN);
    project.write('functions/two-handlers/function.yaml', 'runtime: nodejs22\n');
    const run = project.synth();
    result = { status: run.status, stderr: run.stderr };
  });
  afterAll(() => project.remove());

  test('fails and leaves dist/ as it was', () => {
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('synth failed: dist/ was left unchanged');
    expect(project.files('dist')).toEqual(before);
  });

  test.each([
    ['a def without its colon', "functions/no-colon/handler.py:3: SyntaxError: expected ':': end line 3 with ':'"],
    ['a Python handler without main', "functions/no-main/handler.py: AttributeError: module 'handler' has no attribute 'main'"],
    ['a JavaScript syntax error', "functions/js-syntax/handler.js:1: SyntaxError: Unexpected token ';': correct the code at that line"],
    ['requirement.txt', 'functions/requirement/requirement.txt: not read: the runtime reads requirements.txt; did you mean requirements.txt? rename it to requirements.txt'],
    ['packages.json', 'functions/packages/packages.json: not read: the runtime reads package.json; did you mean package.json? rename it to package.json'],
    ['an import of a package nothing declares', "functions/no-requirements/handler.py:2: 'yaml' is imported but not declared in requirements.txt"],
    ['two handlers', 'functions/two-handlers/handler.py: the folder holds handler.js and handler.py: a Function has one handler'],
  ])('names %s with its file, line and fix', (_, message) => {
    expect(result.stderr).toContain(message);
  });
});

describe('KymaFunction and FunctionFolder', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handler-code-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const chart = () => Testing.chart();

  test('fails for an inline source, naming the prop and the line', () => {
    const c = chart();
    new KymaFunction(c, 'fn', { namespace: 'default', runtime: FunctionRuntime.PYTHON_312, source: FunctionSource.fromInline('def main(event, context)\n    pass\n') });
    expect(() => Testing.synth(c)).toThrow(/\[test\/fn\] 'source' \(spec\.source\.inline\): handler\.py:1: SyntaxError: expected ':'/);
  });

  test('accepts a warning the Function accepts, and writes what it accepts into the annotation validate reads', () => {
    const c = chart();
    new KymaFunction(c, 'fn', {
      namespace: 'default', runtime: FunctionRuntime.NODEJS_22, acceptWarnings: ['undeclaredImport:lodash'],
      source: FunctionSource.fromInline('const _ = require("lodash");\nexports.main = () => _.identity(1);\n'),
    });
    const [fn] = Testing.synth(c).filter(o => o.kind === 'Function');
    expect(fn.metadata.annotations).toEqual({ [ACCEPT_WARNINGS_ANNOTATION]: 'undeclaredImport:lodash' });
    const c2 = chart();
    new KymaFunction(c2, 'fn', {
      namespace: 'default', runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('const _ = require("lodash");\nexports.main = () => 1;\n'),
    });
    expect(() => Testing.synth(c2)).toThrow(/handler\.js:1: 'lodash' is imported but not declared in package\.json.*the prop acceptWarnings: \[undeclaredImport:lodash\]/);
  });

  test('fails for an unknown warning name', () => {
    const c = chart();
    new KymaFunction(c, 'fn', { namespace: 'default', runtime: FunctionRuntime.NODEJS_22, source: FunctionSource.fromInline('exports.main = () => 1;'), acceptWarnings: ['undeclared'] });
    expect(() => Testing.synth(c)).toThrow(/'acceptWarnings' \(undeclared\): unknown warning: give undeclaredImport, or <warning>:<module>/);
  });

  test('function.yaml accepts warnings with acceptWarnings, and refuses a key of another spelling', () => {
    const folder = path.join(dir, 'fn');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'handler.py'), `import yaml\n${PY_MAIN}`);
    fs.writeFileSync(path.join(folder, 'function.yaml'), 'acceptWarnings: [undeclaredImport:yaml]\n');
    const app = new App({ outdir: path.join(dir, 'out') });
    FunctionFolder.load(folder).addTo(new Chart(app, 'fns', { namespace: 'default' }));
    expect(() => app.synth()).not.toThrow();
    fs.writeFileSync(path.join(folder, 'function.yaml'), 'acceptWarnings: [undeclared-import]\n');
    expect(() => FunctionFolder.load(folder)).toThrow(/'acceptWarnings\.0' \("undeclared-import"\): must be undeclaredImport or undeclaredImport:<module>/);
  });

  test('a folder whose only handler is misspelt gets the name it is meant to have', () => {
    const folder = path.join(dir, 'fn');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'Handler.py'), PY_MAIN);
    expect(() => FunctionFolder.load(folder)).toThrow(/Handler\.py: not read: the runtime reads handler\.py \(the name is case-sensitive\); did you mean handler\.py\?/);
  });
});

describe('validate', () => {
  test('says the same of a Function manifest as synth, with the file, the line and the fix; accepted warnings pass', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handler-code-validate-'));
    try {
      const fn = (name: string, source: string, annotations?: object) => ({
        apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
        spec: { runtime: 'python312', source: { inline: { source } } },
      });
      fs.writeFileSync(path.join(dir, 'fns.yaml'), [
        fn('no-colon', 'def main(event, context)\n    return 1\n'),
        fn('no-main', 'def handler(event, context):\n    return 1\n'),
        fn('undeclared', `import yaml\n${PY_MAIN}`),
        fn('accepted', `import yaml\n${PY_MAIN}`, { [ACCEPT_WARNINGS_ANNOTATION]: 'undeclaredImport' }),
      ].map(o => YAML.stringify(o)).join('---\n'));
      const findings = validateManifests(dir).findings.filter(f => f.severity === Severity.ERROR).map(f => `${f.object} ${f.path}: ${f.message}`);
      expect(findings).toEqual([
        expect.stringMatching(/no-colon.* spec\.source\.inline\.source: handler\.py:1: SyntaxError: expected ':': end line 1 with ':'$/),
        expect.stringMatching(/no-main.* spec\.source\.inline\.source: handler\.py: AttributeError: module 'handler' has no attribute 'main'/),
        expect.stringMatching(new RegExp(`undeclared.* spec\\.source\\.inline\\.source: handler\\.py:1: 'yaml' is imported but not declared.*; if a declared package brings 'yaml' along, accept the warning with the annotation ${ACCEPT_WARNINGS_ANNOTATION}: undeclaredImport:yaml`)),
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
