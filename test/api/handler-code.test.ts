import * as fs from 'node:fs';
import * as path from 'node:path';
import * as YAML from 'yaml';
import { ACCEPT_WARNINGS_ANNOTATION, HandlerWarning, RuntimeFamily, ServerlessRelease, handlerCodeViolations } from '../../src/api';
import {
  describeHandlerProblem, folderFileProblems, handlerCodeProblems, nodeImagePackagesImported, pythonImageRequirementsImported, requirementNames,
} from '../../src/api/handler-code';
import { fixture } from '../util/fixtures';

// The Python parser runs in a worker thread; a busy machine may take a few seconds to start one.
jest.setTimeout(120_000);

const ROOT = path.join(__dirname, '..', '..');
const py = (source: string, dependencies?: string, release?: ServerlessRelease) =>
  handlerCodeProblems({ runtime: 'python312', source, dependencies, release }).map(p => describeHandlerProblem(p));
const js = (source: string, dependencies?: string, runtime = 'nodejs22', release?: ServerlessRelease) =>
  handlerCodeProblems({ runtime, source, dependencies, release }).map(p => describeHandlerProblem(p));

/** The reference data beside this checkout (CI) or beside the worktrees of the project. */
const REFERENCE = [path.join(ROOT, '..', 'shared', 'reference'), path.join(ROOT, '..', '..', 'shared', 'reference')].find(d => fs.existsSync(d));

describe('Python handlers', () => {
  test('fails on a def without its colon, as Python 3.12 says it, with the line', () => {
    expect(py('import json\n\ndef main(event, context)\n    return "hi"\n')).toEqual([
      "handler.py:3: SyntaxError: expected ':': end line 3 with ':'",
    ]);
  });

  test.each([
    ['an unclosed bracket', 'def main(event, context):\n    return dict(a=1,\n', "handler.py:2: SyntaxError: '(' was never closed"],
    ['a closing bracket of the wrong kind', 'def main(event, context):\n    return [1, 2)\n', "handler.py:2: SyntaxError: closing parenthesis ')' does not match opening parenthesis '['"],
    ['an unterminated string', 'def main(event, context):\n    return "hi\n', 'handler.py:2: SyntaxError: unterminated string literal (detected at line 2)'],
    ['a body that is not indented', 'def main(event, context):\nreturn 1\n', 'handler.py:2: IndentationError: expected an indented block after function definition on line 1'],
    ['an unexpected indent', 'def main(event, context):\n    x = 1\n        return x\n', 'handler.py:3: IndentationError: unexpected indent'],
    ['an unindent that matches no level', 'def main(event, context):\n    if event:\n        x = 1\n      return x\n', 'handler.py:4: IndentationError: unindent does not match any outer indentation level'],
    ['a Python 2 print', 'def main(event, context):\n    print "hi"\n', "handler.py:2: SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?"],
    ['an expression missing', 'def main(event, context):\n    x = \n    return x\n', 'handler.py:2: SyntaxError: invalid syntax'],
  ])('fails on %s', (_, source, message) => {
    const problems = py(source);
    expect(problems).toHaveLength(1);
    expect(problems[0].startsWith(message)).toBe(true);
  });

  test('fails when main is not defined, as the runtime would (getattr of the module)', () => {
    expect(py('def handler(event, context):\n    return "hi"\n')).toEqual([
      "handler.py: AttributeError: module 'handler' has no attribute 'main' (the Python runtime calls main of handler.py, and the Pod fails at start): "
      + 'define def main(event, context): at the top level of handler.py',
    ]);
  });

  test('fails when main is defined only inside a class or function, naming its line', () => {
    const [problem] = py('class Handler:\n    def main(self, event, context):\n        return 1\n');
    expect(problem).toMatch(/^handler\.py:2: AttributeError: .*main is defined inside class Handler, not at the top level: define main at the top level/);
  });

  test.each([
    ['a def', 'def main(event, context):\n    return 1\n'],
    ['a decorated def', 'import functools\n@functools.lru_cache\ndef main(event, context):\n    return 1\n'],
    ['an async def', 'async def main(event, context):\n    return 1\n'],
    ['an assignment', 'def handle(event, context):\n    return 1\nmain = handle\n'],
    ['an import', 'from json import dumps as main\n'],
    ['a def inside if/else at the top level', 'import os\nif os.environ.get("X"):\n    def main(event, context):\n        return 1\nelse:\n    main = None\n'],
    ['a star import (which may define it)', 'from os.path import *\n'],
  ])('accepts main bound at the top level by %s', (_, source) => {
    expect(py(source)).toEqual([]);
  });

  test('accepts valid Python 3.12: match, type parameters, nested f-strings, except*, bare yield, trailing-dot floats', () => {
    expect(py(fs.readFileSync(fixture('handlers', 'valid-python312.py'), 'utf8'))).toEqual([]);
  });

  test('accepts the Python handlers of this repository', () => {
    const folder = path.join(ROOT, 'functions', 'hello-python');
    expect(py(fs.readFileSync(path.join(folder, 'handler.py'), 'utf8'), fs.readFileSync(path.join(folder, 'requirements.txt'), 'utf8'))).toEqual([]);
  });

  test('warns of an import that nothing declares, with the line, the module and the package to add', () => {
    expect(py('import json\nimport yaml\n\ndef main(event, context):\n    return yaml.safe_dump(json.loads(event["data"]))\n')).toEqual([
      "handler.py:2: 'yaml' is imported but not declared in requirements.txt, and the python312 image does not provide it: "
      + `the Pod fails with "ModuleNotFoundError: No module named 'yaml'": add PyYAML to requirements.txt (the package that provides the module yaml) `
      + '(or, if a declared package brings it along, accept the warning: acceptWarnings: [undeclaredImport:yaml])',
    ]);
    // A module of another name than its package, nowhere declared: sure.
    expect(py('from bs4 import BeautifulSoup\ndef main(event, context):\n    return 1\n', 'requests\n')[0]).toContain('add beautifulsoup4 to requirements.txt');
    // Inside a function too, and `from x.y import z`.
    expect(py('def main(event, context):\n    from numpy.linalg import norm\n    return 1\n')[0]).toMatch(/^handler\.py:2: 'numpy' is imported but not declared/);
  });

  test('says nothing where it cannot be sure, or where the image or the standard library provides the module', () => {
    const main = 'def main(event, context):\n    return 1\n';
    // Declared by its package name, in any spelling PEP 503 allows.
    expect(py(`import yaml\n${main}`, 'PyYAML==6.0.1\n')).toEqual([]);
    expect(py(`import charset_normalizer, google.protobuf\n${main}`, '')).toEqual([]);
    expect(py(`import opentelemetry.trace\n${main}`, 'Flask\n')).toEqual([]);
    expect(py(`import my_lib\n${main}`, 'My-Lib>=1\n')).toEqual([]);
    // Some package is declared, and any of them may provide a module of an unknown name.
    expect(py(`import foo\n${main}`, 'flask\n')).toEqual([]);
    // A requirements file that includes another cannot be read whole.
    expect(py(`import yaml\n${main}`, '-r other.txt\n')).toEqual([]);
    // Guarded imports, relative imports, the standard library, the image's packages.
    expect(py(`try:\n    import ujson as json\nexcept ImportError:\n    import json\nfrom . import x\nimport requests, bottle, asyncio, tomllib\n${main}`)).toEqual([]);
    expect(py(`import typing\nif typing.TYPE_CHECKING:\n    from mypy_boto3_s3 import S3Client\n${main}`)).toEqual([]);
  });

  test('parses upstream\'s sample Python Functions without a problem', () => {
    const sources = referenceFunctions().filter(fn => String(fn.spec.runtime).startsWith('python312'));
    if (!REFERENCE) return; // no reference data beside this checkout
    expect(sources.length).toBeGreaterThan(0);
    for (const fn of sources) {
      expect({ name: fn.metadata.name, problems: py(fn.spec.source.inline.source, fn.spec.source.inline.dependencies) }).toEqual({ name: fn.metadata.name, problems: [] });
    }
  });
});

describe('JavaScript handlers', () => {
  test('fails on a syntax error of a CommonJS handler, in Node.js\'s words, with the line', () => {
    expect(js('const x = ;\nexports.main = () => x;\n')).toEqual([
      "handler.js:1: SyntaxError: Unexpected token ';': correct the code at that line (node --check handler.js shows the same)",
    ]);
    expect(js('exports.main = async function (event, context) {\n  return {\n};\n')[0]).toMatch(/^handler\.js:\d+: SyntaxError: Unexpected end of input/);
  });

  test('fails on a syntax error of an ES module handler ("type": "module")', () => {
    expect(js('import fs from "node:fs";\n\nexport function main() {\n  return fs.;\n}\n', '{ "type": "module" }')).toEqual([
      "handler.js:4: SyntaxError: Unexpected token ';': correct the code at that line (node --check handler.js shows the same)",
    ]);
  });

  test('fails on ES module syntax without "type": "module" on Node.js 20, which loads handler.js as CommonJS; not on 22 and 24, which detect it', () => {
    const source = 'import fs from "node:fs";\nexport function main() {\n  return fs.existsSync("/");\n}\n';
    expect(js(source, '{}', 'nodejs20')).toEqual([
      'handler.js:1: SyntaxError: Cannot use import statement outside a module (Node.js 20 loads handler.js as CommonJS): '
      + 'add "type": "module" to package.json, or write CommonJS (require() and exports.main = ...)',
    ]);
    expect(js(source, '{}', 'nodejs22')).toEqual([]);
    expect(js(source, '{}', 'nodejs24', ServerlessRelease.V1_13_0)).toEqual([]);
    expect(js(source, '{ "type": "module" }', 'nodejs20')).toEqual([]);
  });

  test('accepts what is valid in the runtime and not at a script\'s top level: return, await in a module, a hashbang', () => {
    expect(js('#!/usr/bin/env node\nif (!module) return;\nexports.main = () => 1;\n')).toEqual([]);
    expect(js('const data = await Promise.resolve(1);\nexport const main = () => data;\n', '{"type":"module"}')).toEqual([]);
  });

  test('warns of a package the handler requires or imports that package.json does not declare, with the line and the runtime\'s error', () => {
    const source = 'const fs = require("node:fs");\nconst path = require("path");\nconst _ = require("lodash");\nconst axios = require("axios");\n'
      + 'const { v4 } = require(`uuid`);\nconst local = require("./local");\nexports.main = () => _.identity(1);\n';
    expect(js(source, '{ "dependencies": { "uuid": "^9.0.0" } }')).toEqual([
      `handler.js:3: 'lodash' is imported but not declared in package.json, and the nodejs22 image does not provide it: the Pod fails with "Cannot find module 'lodash'": `
      + 'add "lodash" to "dependencies" of package.json (or, if a declared package brings it along, accept the warning: acceptWarnings: [undeclaredImport:lodash])',
    ]);
    const esm = js('import get from "lodash/get.js";\nimport { x } from "@acme/tools/sub";\nexport const main = () => get({}, "a");\n', '{"type":"module"}');
    expect(esm.map(p => p.split(':').slice(0, 3).join(':'))).toEqual(['handler.js:1: \'lodash\' is imported but not declared in package.json, and the nodejs22 image does not provide it', 'handler.js:2: \'@acme/tools\' is imported but not declared in package.json, and the nodejs22 image does not provide it']);
    expect(esm[0]).toContain('Cannot find package \'lodash\' imported from /usr/src/app/function/handler.js');
  });

  test('warns of a package declared only in devDependencies under 1.11.1, which installs none; 1.13.0 installs them', () => {
    const source = 'const _ = require("lodash");\nexports.main = () => _.identity(1);\n';
    const dependencies = '{ "devDependencies": { "lodash": "^4.17.21" } }';
    expect(js(source, dependencies)[0]).toContain("'lodash' is only in devDependencies of package.json, which Serverless 1.11.1 does not install (npm install --omit=dev)");
    expect(js(source, dependencies, 'nodejs22', ServerlessRelease.V1_13_0)).toEqual([]);
  });

  test('skips a require guarded by try/catch', () => {
    expect(js('let fast;\ntry { fast = require("fast-json"); } catch { fast = JSON; }\nexports.main = () => fast.stringify({});\n')).toEqual([]);
  });

  test('accepts the Node.js handlers of this repository and upstream\'s samples', () => {
    const folder = path.join(ROOT, 'functions', 'hello-node');
    expect(js(fs.readFileSync(path.join(folder, 'handler.js'), 'utf8'), fs.readFileSync(path.join(folder, 'package.json'), 'utf8'))).toEqual([]);
    if (!REFERENCE) return;
    const samples = referenceFunctions().filter(fn => /^nodejs(20|22|24)$/.test(String(fn.spec.runtime)) && fn.spec.source?.inline);
    expect(samples.length).toBeGreaterThan(0);
    for (const fn of samples) {
      const release = fn.spec.runtime === 'nodejs24' ? ServerlessRelease.V1_13_0 : ServerlessRelease.V1_11_1;
      const problems = js(fn.spec.source.inline.source, fn.spec.source.inline.dependencies, fn.spec.runtime, release);
      expect({ name: fn.metadata.name, problems }).toEqual({ name: fn.metadata.name, problems: [] });
    }
  });
});

describe('folderFileProblems', () => {
  test.each([
    ['requirement.txt', RuntimeFamily.PYTHON, 'requirements.txt'],
    ['Requirements.txt', RuntimeFamily.PYTHON, 'requirements.txt'],
    ['requirements.text', RuntimeFamily.PYTHON, 'requirements.txt'],
    ['requirments.txt', RuntimeFamily.PYTHON, 'requirements.txt'],
    ['packages.json', RuntimeFamily.NODEJS, 'package.json'],
    ['Package.json', RuntimeFamily.NODEJS, 'package.json'],
    ['pakage.json', RuntimeFamily.NODEJS, 'package.json'],
    ['package.jsn', RuntimeFamily.NODEJS, 'package.json'],
    ['Handler.js', RuntimeFamily.NODEJS, 'handler.js'],
    ['handlers.py', RuntimeFamily.PYTHON, 'handler.py'],
  ])('fails on %s, saying what it is meant to be', (file, family, meant) => {
    const handler = family === RuntimeFamily.NODEJS ? 'handler.js' : 'handler.py';
    const problems = folderFileProblems([handler, file].filter((f, i, all) => all.indexOf(f) === i), family);
    expect(problems).toEqual([{ file, message: expect.stringContaining(`did you mean ${meant}?`) }]);
  });

  test('accepts the files a function folder usually holds besides the handler', () => {
    expect(folderFileProblems(['handler.js', 'package.json', 'package-lock.json', 'function.yaml', 'README.md', 'handler.test.js', '.env'], RuntimeFamily.NODEJS)).toEqual([]);
    expect(folderFileProblems(['handler.py', 'requirements.txt', 'test_handler.py', 'function.yaml', 'requirements-dev.txt'], RuntimeFamily.PYTHON)).toEqual([]);
  });

  test('refuses two handlers, and the dependencies file of the other runtime', () => {
    expect(folderFileProblems(['handler.js', 'handler.py', 'requirements.txt'], RuntimeFamily.PYTHON)).toEqual([
      { file: 'handler.js', message: expect.stringContaining('the folder holds handler.js and handler.py: a Function has one handler') },
    ]);
    expect(folderFileProblems(['handler.py', 'package.json'], RuntimeFamily.PYTHON)).toEqual([
      { file: 'package.json', message: expect.stringContaining('this is a python Function, whose runtime reads requirements.txt only') },
    ]);
  });
});

describe('handlerCodeViolations (validate)', () => {
  const fn = (runtime: string, source: string, dependencies?: string, annotations?: object) => ({
    apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'f', namespace: 'default', annotations },
    spec: { runtime, source: { inline: { source, ...(dependencies === undefined ? {} : { dependencies }) } } },
  });

  test('names the field, the file and the line, in the same words as synth', () => {
    expect(handlerCodeViolations(fn('python312', 'def main(event, context)\n    return 1\n'))).toEqual([
      { path: 'spec.source.inline.source', rule: 'handlerSyntax', message: "handler.py:1: SyntaxError: expected ':': end line 1 with ':'", hint: undefined },
    ]);
  });

  test('drops the warnings the Function accepts in its annotation, all of a kind or one module', () => {
    const source = 'const _ = require("lodash");\nconst m = require("moment");\nexports.main = () => 1;\n';
    expect(handlerCodeViolations(fn('nodejs22', source)).map(v => v.rule)).toEqual([HandlerWarning.UNDECLARED_IMPORT, HandlerWarning.UNDECLARED_IMPORT]);
    expect(handlerCodeViolations(fn('nodejs22', source, undefined, { [ACCEPT_WARNINGS_ANNOTATION]: 'undeclaredImport:lodash' })).map(v => v.message))
      .toEqual([expect.stringContaining("'moment' is imported but not declared")]);
    expect(handlerCodeViolations(fn('nodejs22', source, undefined, { [ACCEPT_WARNINGS_ANNOTATION]: 'undeclaredImport' }))).toEqual([]);
  });

  test('reads no Git source', () => {
    expect(handlerCodeViolations({ spec: { runtime: 'python312', source: { gitRepository: { url: 'https://example.com/r.git' } } } })).toEqual([]);
  });
});

test('requirementNames reads names, skips options, and gives up on includes', () => {
  expect(requirementNames('# c\nrequests==2.31.0\nPyYAML>=6 ; python_version>"3"\n--index-url https://x\nflask[async]\n')).toEqual(['requests', 'PyYAML', 'flask']);
  expect(requirementNames('-r base.txt\n')).toBeUndefined();
  expect(requirementNames('pkg @ https://example.com/pkg.whl\n')).toBeUndefined();
});

/** The Functions of upstream's samples: 1.11.1's sample files and the YAML blocks of 1.13.0's sample-functions.md. */
function referenceFunctions(): any[] {
  if (!REFERENCE) return [];
  const files = fs.readdirSync(path.join(REFERENCE, 'upstream')).filter(f => f.startsWith('sample-function-') && f.endsWith('.yaml'));
  const docs = files.flatMap(f => YAML.parseAllDocuments(fs.readFileSync(path.join(REFERENCE, 'upstream', f), 'utf8')).map(d => d.toJS()));
  const md = fs.readFileSync(path.join(REFERENCE, 'upstream-1.13.0', 'sample-functions.md'), 'utf8');
  for (const block of md.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    const text = block[1].replace(/^cat <<EOF \| kubectl apply -f -\n|^EOF\n?/gm, '');
    for (const d of YAML.parseAllDocuments(text)) docs.push(d.toJS());
  }
  return docs.filter(d => d?.kind === 'Function' && d.spec?.source?.inline);
}

describe('what a local run installs of the runtime image', () => {
  test('the image\'s Node.js packages the handler imports and does not declare, with the image\'s ranges', () => {
    const source = 'const axios = require("axios");\nconst express = require("express");\nconst _ = require("lodash");\nexports.main = () => 1;\n';
    expect(nodeImagePackagesImported({ runtime: 'nodejs22', source, dependencies: '{ "dependencies": { "express": "^4.0.0" } }' })).toEqual({ axios: '^1.3.3' });
    expect(nodeImagePackagesImported({ runtime: 'nodejs22', source: 'import { trace } from "@opentelemetry/api";\nexport const main = () => 1;\n', release: ServerlessRelease.V1_13_0 }))
      .toEqual({ '@opentelemetry/api': '^1.9.0' });
  });

  test('the image\'s Python requirements whose modules the handler imports and does not declare, with the image\'s versions', () => {
    expect(pythonImageRequirementsImported({ runtime: 'python312', source: 'import requests\nimport bottle\nimport yaml\n\ndef main(e, c):\n    return 1\n' }))
      .toEqual(['bottle==0.13.4', 'requests>=2.31.0']);
    expect(pythonImageRequirementsImported({ runtime: 'python312', source: 'import requests\n\ndef main(e, c):\n    return 1\n', dependencies: 'requests==2.32.0\n' })).toEqual([]);
  });
});

describe('an ES module handler using CommonJS names', () => {
  test('fails with the ReferenceError Node.js throws, the line and the fix', () => {
    expect(js('const _ = require("lodash");\nexport const main = () => _.identity(1);\n', '{ "type": "module", "dependencies": { "lodash": "4" } }')).toEqual([
      'handler.js:1: ReferenceError: require is not defined in ES module scope, you can use import instead (handler.js is an ES module: package.json says "type": "module"): '
      + 'use import (or createRequire from node:module)',
    ]);
    expect(js('exports.main = () => 1;\n', '{ "type": "module" }')[0]).toMatch(/^handler\.js:1: ReferenceError: exports is not defined in ES module scope/);
  });

  test('accepts the names where the module declares them, or uses them as properties', () => {
    expect(js('import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\nconst x = require("node:fs");\n'
      + 'export const main = () => ({ module: 1, exports: x.exports, dir: import.meta.dirname });\n', '{ "type": "module" }')).toEqual([]);
    // CommonJS has them all.
    expect(js('exports.main = () => [__dirname, __filename, module.id];\n')).toEqual([]);
  });
});
