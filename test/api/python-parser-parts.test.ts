/**
 * The Python parser's worker answers the sources of one message in parts, and a check waits only
 * for the part that holds its source: the rest is parsed while the checks before it run (issue 35).
 * Counted, not timed.
 */
import { PythonAnswer, awaitPythonSource, parsePython, requestPythonSources } from '../../src/api/_python-parser';
import { _resetWork, _work } from '../../src/api/_work';

// The worker loads the grammar first; a busy machine may take a few seconds to start one.
jest.setTimeout(120_000);

const sources = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `def main(event, context):\n    return "${tag} ${i}"\n`);

test('one message for many sources, answered in parts of 100: waiting for a source takes the parts up to its own', () => {
  const asked = sources(250, 'parts');
  const taken: string[] = [];
  _resetWork();
  requestPythonSources([...asked, asked[0]], source => taken.push(source));
  expect(_work.pythonRoundTrips).toBe(1);
  // Each distinct source once.
  expect(_work.pythonParses).toBe(250);
  expect(taken).toEqual([]);

  expect(awaitPythonSource(asked[0])).toBe(true);
  expect(taken).toEqual(asked.slice(0, 100));
  expect(awaitPythonSource(asked[150])).toBe(true);
  expect(taken).toEqual(asked.slice(0, 200));
  expect(awaitPythonSource(asked[249])).toBe(true);
  expect(taken).toEqual(asked);
  // Taken already: nothing to wait for.
  expect(awaitPythonSource(asked[0])).toBe(false);
  expect(_work.pythonRoundTrips).toBe(1);
});

test('each answer is the tree of its own source', () => {
  const asked = sources(3, 'trees');
  const answers = new Map<string, PythonAnswer>();
  requestPythonSources(asked, (source, answer) => answers.set(source, answer));
  awaitPythonSource(asked[2]);
  for (const [i, source] of asked.entries()) {
    const tree = answers.get(source)?.tree;
    expect(tree?.type).toBe('module');
    const text = JSON.stringify(tree);
    expect(text).toContain(`"text":"trees ${i}"`);
  }
});

test('a source parsed alone while a larger message is still answered gets its tree, and the earlier taker its own', () => {
  const asked = sources(120, 'alone');
  const taken: string[] = [];
  requestPythonSources(asked, (source, answer) => {
    if (answer.tree) taken.push(source);
  });
  expect(parsePython(asked[110]).type).toBe('module');
  expect(taken).toEqual(asked.slice(0, 120));
  expect(parsePython('def main(event, context):\n    return 1\n').children[0].type).toBe('function_definition');
});
