/**
 * The reader of Python handlers on this thread (src/api/_python-reader.ts) against tree-sitter's
 * tree: wherever it answers, neither the tree nor Python's tokenizer (as handler-code.ts words its
 * refusals) has a problem, and the tree gives the same outline (where `main` is bound, the imports
 * and their lines); where it cannot be sure, it answers nothing. On examples of
 * every fact, on generated handlers and mutations of them and of real ones (fast-check), and on a
 * sample of the standard library (every file of it: scripts/python-reader-sweep.ts).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as fc from 'fast-check';
import * as YAML from 'yaml';
import { _readPythonBothWays } from '../../src/api/handler-code';
import { askSources } from '../../src/api/_python-parser';
import { readPythonOutline } from '../../src/api/_python-reader';
import { pythonHandler, pythonMutant, pythonPieceMutant } from '../util/python-sources';
import { fixture } from '../util/fixtures';

// Each comparison parses the source in the parser's worker too; a busy machine may take seconds to start it.
jest.setTimeout(120_000);

const ROOT = path.join(__dirname, '..', '..');

/** Whether the reader's answer, if it gives one, is tree-sitter's: a tree without a problem, and the same outline. */
function agrees(source: string): { read: boolean; agrees: boolean } {
  const { here, tree } = _readPythonBothWays(source);
  if (!here) return { read: false, agrees: true };
  return { read: true, agrees: tree.syntax === undefined && isDeepStrictEqual(here.outline, tree.outline) };
}

/** Sources that are valid Python, each reading one fact, as tree-sitter's tree has it. */
const READ: [string, string][] = [
  ['main by a def', 'def main(event, context):\n    return "hi"\n'],
  ['main by an async def and a decorated one', 'async def main(e, c):\n    pass\n@dec\n@other(1)\ndef main(e, c):\n    pass\n'],
  ['main by a class', 'class main:\n    pass\n'],
  ['main by assignments of every kind', 'x = main = 1\n(main) = 2\nmain, y = 1, 2\n[main, (z, w)] = a\nmain += 1\nmain: int = 3\nmain: int\n'],
  ['main by imports', 'import main\nimport main.sub\nimport x as main\nfrom a import main\nfrom a import (b,\n    main,)\nfrom a import b as main\n'],
  ['main not bound', 'def handler(e, c):\n    return 1\nx.main = 1\nmain[0] = 1\nfor main in x: pass\nwith a as main: pass\n(main := 1)\nimport a.main\n'],
  ['main starred, which the tree does not bind', '*main, b = 1, 2\n(a, *main) = x\n'],
  ['main in a future statement, which binds nothing', 'from __future__ import annotations, main\n'],
  ['main inside a class', 'class Handler:\n    x = 1\n    @staticmethod\n    def main(event, context):\n        return 1\n'],
  ['main inside a function inside a class', 'class A:\n    def f(self):\n        def main():\n            pass\n'],
  ['main inside a function, first of two', 'def outer():\n    main = 1\n\ndef other():\n    import main\n'],
  ['main at the top level inside blocks', 'if x:\n    pass\nelif y:\n    def main(): pass\nelse:\n    pass\n'],
  ['main in try, with, for and while blocks', 'try:\n    pass\nexcept E:\n    main = 1\nwith a:\n    for x in y:\n        while 1:\n            main = 2\n'],
  ['a star import anywhere', 'def f():\n    from os.path import *\n'],
  ['imports with their lines', 'import os, json\nimport a.b.c as d\nfrom x.y import (\n    z,\n)\nfrom . import rel\nfrom .pkg import rel\n\ndef main(e, c):\n    import yaml\n'],
  ['a module named on a later line', 'import os, \\\n    sys\nfrom x import (a,\n    b)\n'],
  ['imports guarded by a try with an except', 'try:\n    import ujson as json\nexcept ImportError:\n    import json\nelse:\n    import extra\nfinally:\n    import last\n'],
  ['imports in a try without an except', 'try:\n    import a\nfinally:\n    pass\n'],
  ['imports under TYPE_CHECKING, and not under its elif or else', 'if TYPE_CHECKING:\n    import a\nelif TYPE_CHECKING:\n    import b\nelse:\n    import c\n'],
  ['TYPE_CHECKING anywhere in the condition', 'if not typing.TYPE_CHECKING and f(TYPE_CHECKING=1):\n    import a\nif f"{TYPE_CHECKING}": import b\n'],
  ['comments and blank lines at any indentation', 'def main(e, c):\n# left\n\n        # right\n    x = (1,\n         # in brackets\n         2)\n    return x\n# end\n'],
  ['a comment before else', 'if x:\n    a = 1\n# comment\nelse:\n    b = 2\n'],
  ['tabs for indentation', 'def main(e, c):\n\tif e:\n\t\treturn 1\n\treturn 2\n'],
  ['f-strings', 'x = f"{a!r:>10} {b[\'k\']} {c=} {d:{w}.{p}f} {{lit}}"\ny = rf"\\d{x}"\n'],
  ['soft keywords as names', 'match = re.match(p, s)\ntype(x)\nprint(type, match)\ncase = 1\ntype[x] = 1\n'],
  ['annotations', 'def f(a: int, b: str | None = None, *c: list[int], **d: dict[str, "X"]) -> tuple[int, ...]:\n    e: Callable[[int], str] = g\n'],
  ['parenthesized context managers', 'with (open(a) as f, open(b) as g):\n    pass\nwith (a, b):\n    pass\n'],
  ['except*', 'try:\n    pass\nexcept* ValueError as e:\n    import x\n'],
  ['an empty module', ''],
  ['a handler without a trailing newline', 'def main(e, c):\n    return 1'],
];

/** Sources the reader leaves to tree-sitter, and why. */
const LEFT: [string, string][] = [
  ['a Python 2 print statement', 'def main(event, context):\n    print "hi"\n'],
  ['print >> as Python 3 reads it, which tree-sitter reads as a print statement', 'print >> f, x\n'],
  ['a line in brackets indented less than its block, where tree-sitter ends the block', 'def f():\n    x = (1 +\n2)\n'],
  ['an annotation tree-sitter reads as a generic type', 'x: Final[str] == "final"\n'],
  ['a match statement', 'match x:\n    case 1:\n        pass\n'],
  ['a type statement', 'type X = int\n'],
  ['type parameters', 'def f[T](x: T) -> T:\n    return x\n'],
  ['a name of non-ASCII letters', 'def main(event, context):\n    grüße = 1\n    return grüße\n'],
  ['CRLF line ends', 'def main(event, context):\r\n    return 1\r\n'],
  ['a tab after spaces in an indentation', 'if x:\n  \tpass\n'],
  ['a nested f-string', 'x = f"{f\'{y}\'}"\n'],
  ['a missing colon', 'def main(event, context)\n    return 1\n'],
  ['an unclosed bracket', 'def main(event, context):\n    return dict(a=1,\n'],
  ['an unexpected indent', 'x = 1\n    y = 2\n'],
  ['an empty block', 'def main(event, context):\n'],
  ['an unterminated string', 'x = "abc\n'],
  ['a starred value outside brackets', 'x = *a, b\n'],
];

describe('the reader of this thread', () => {
  test.each(READ)('reads %s as tree-sitter does', (_, source) => {
    const { here, tree } = _readPythonBothWays(source);
    expect(tree.syntax).toBeUndefined();
    expect(here).toBeDefined();
    expect(here!.outline).toStrictEqual(tree.outline);
  });

  test('reads the facts the checks need: the first main inside a function, with its row; imports with their lines', () => {
    expect(readPythonOutline(READ.find(([what]) => what === 'main inside a class')![1])).toStrictEqual({
      mainAtTop: false, starImport: false, nestedMain: { row: 2, where: 'class Handler' }, imports: [],
    });
    expect(readPythonOutline(READ.find(([what]) => what === 'imports with their lines')![1])?.imports).toEqual([
      { module: 'os', line: 1 }, { module: 'json', line: 1 }, { module: 'a', line: 2 }, { module: 'x', line: 3 }, { module: 'yaml', line: 10 },
    ]);
  });

  test.each(LEFT)('leaves %s to tree-sitter', (_, source) => {
    expect(readPythonOutline(source)).toBeUndefined();
  });
});

describe('the reader against tree-sitter on generated sources', () => {
  test('answers as tree-sitter does on generated handlers, and answers most of them', () => {
    let read = 0;
    let runs = 0;
    fc.assert(fc.property(pythonHandler, source => {
      const result = agrees(source);
      runs++;
      if (result.read) read++;
      return result.agrees;
    }), { numRuns: 400 });
    expect(read).toBeGreaterThan(runs / 2);
  });

  test('never answers where tree-sitter finds a problem, nor otherwise, on mutations of generated handlers', () => {
    fc.assert(fc.property(pythonHandler.chain(pythonMutant), source => agrees(source).agrees), { numRuns: 400 });
  });

  test('never answers where tree-sitter finds a problem, nor otherwise, on mutations of real handlers', () => {
    const sources = [
      fs.readFileSync(path.join(ROOT, 'functions', 'hello-python', 'handler.py'), 'utf8'),
      fs.readFileSync(fixture('handlers', 'valid-python312.py'), 'utf8'),
      ...referencePythonSources(),
    ];
    fc.assert(fc.property(fc.constantFrom(...sources).chain(pythonMutant), source => agrees(source).agrees), { numRuns: 300 });
    fc.assert(fc.property(pythonPieceMutant(sources), source => agrees(source).agrees), { numRuns: 300 });
  });
});

describe('the reader against tree-sitter on real sources', () => {
  test('reads the handlers of this repository and of upstream\'s samples as tree-sitter does', () => {
    const sources = [fs.readFileSync(path.join(ROOT, 'functions', 'hello-python', 'handler.py'), 'utf8'), ...referencePythonSources()];
    for (const source of sources) expect(agrees(source)).toEqual({ read: true, agrees: true });
  });

  test('reads a sample of the standard library as tree-sitter does, and most of it', () => {
    const stdlib = spawnSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).stdout?.trim();
    if (!stdlib || !fs.existsSync(stdlib)) return; // no Python here: scripts/python-reader-sweep.ts reads it where there is
    // Every 8th module of its top level under 60,000 characters: some 20 files of every kind.
    const files = fs.readdirSync(stdlib).filter(f => f.endsWith('.py')).sort().filter((_, i) => i % 8 === 0)
      .map(f => fs.readFileSync(path.join(stdlib, f), 'utf8')).filter(s => s.length < 60_000);
    askSources(files);
    const results = files.map(agrees);
    expect(results.filter(r => !r.agrees)).toEqual([]);
    expect(results.filter(r => r.read).length).toBeGreaterThan(files.length * 0.8);
  });
});

/** The inline Python sources of upstream's samples beside the checkout, if they are there. */
function referencePythonSources(): string[] {
  const reference = [path.join(ROOT, '..', 'shared', 'reference'), path.join(ROOT, '..', '..', 'shared', 'reference')].find(d => fs.existsSync(d));
  if (!reference) return [];
  const dir = path.join(reference, 'upstream');
  return fs.readdirSync(dir).filter(f => f.startsWith('sample-function-') && f.endsWith('.yaml'))
    .flatMap(f => YAML.parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map(d => d.toJS()))
    .filter(fn => fn?.kind === 'Function' && String(fn.spec?.runtime).startsWith('python') && typeof fn.spec?.source?.inline?.source === 'string')
    .map(fn => fn.spec.source.inline.source as string);
}
