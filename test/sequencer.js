// The order jest runs the suites in. With timings of an earlier run in its cache, jest runs the
// slowest first, so that the two workers finish together; without them (a fresh checkout, CI) it
// runs the largest files first, and some of the slowest suites are small files that start
// processes (synth-script.test.ts is 5 KB and takes 12 s): run last, one worker waits for them
// alone. Without timings, these run first, in this order (slowest first, as measured on a
// 2-core machine), then the rest by size as jest does. The list only orders: a suite missing from
// it still runs, and a stale one costs seconds, not correctness.
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const SLOWEST_FIRST = [
  'test/synth-script.test.ts',
  'test/cli/faults.test.ts',
  'test/cli/apply.test.ts',
  'test/cli/preflight.test.ts',
  'test/runtime/releases.test.ts',
  'test/webhook/siege.test.ts',
  'test/runtime/python-runtime.test.ts',
  'test/cli/synth.test.ts',
  'test/cli/diff.test.ts',
  'test/cli/diff/move.test.ts',
  'test/runtime/node-runtime.test.ts',
  'test/api-report.test.ts',
  'test/construct-entry.test.ts',
  'test/cli/status/index.test.ts',
  'test/main.test.ts',
  'test/gitops/synth-loading.test.ts',
  'test/fuzz/bad-input.test.ts',
  'test/webhook/server.test.ts',
  'test/runtime/strict-run.test.ts',
  'test/cli/run.test.ts',
];

class SlowestFirstSequencer extends Sequencer {
  sort(tests) {
    if (tests.some(test => this.time(test) !== undefined)) return super.sort(tests);
    const rank = test => {
      const index = SLOWEST_FIRST.indexOf(path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/'));
      return index < 0 ? SLOWEST_FIRST.length : index;
    };
    const bySize = super.sort([...tests]);
    return bySize.map((test, i) => ({ test, i })).sort((a, b) => rank(a.test) - rank(b.test) || a.i - b.i).map(({ test }) => test);
  }
}

module.exports = SlowestFirstSequencer;
