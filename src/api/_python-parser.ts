/**
 * Python source read by tree-sitter's Python grammar (`tree-sitter-python`, its WebAssembly build,
 * run by `web-tree-sitter`): no Python installation is needed, and the grammar reads every file of
 * CPython's standard library without an error, so valid code is not refused.
 *
 * `web-tree-sitter` only loads asynchronously, and synth is synchronous: the parse runs in a worker
 * thread, started on first use and kept (unreferenced, so it never keeps the process alive), while
 * this thread waits on a shared flag (`Atomics.wait`), then takes the worker's answer from its
 * port. The answer is a plain tree of the nodes (type, position, text of names). Each round trip
 * carries every source asked for at once ({@link parsePythonSources}): synth and `validate` send
 * all the Python handlers they will check in one message, not one each.
 */
import { MessageChannel, MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { _work } from './_work';

/** One node of the parse tree. */
export interface PyNode {
  /** The node's type, such as `function_definition`, `ERROR`. */
  readonly type: string;
  /** The field name under which the parent holds it, such as `name`, `body`. */
  readonly field?: string;
  /** Zero-based row and column of its start and end. */
  readonly row: number;
  readonly column: number;
  readonly endRow: number;
  readonly endColumn: number;
  /** A node the grammar expected and did not find. */
  readonly missing?: boolean;
  /** The text of names and short leaves (identifiers, dotted names, keywords). */
  readonly text?: string;
  readonly children: readonly PyNode[];
}

/** How long one round trip may take: a handler of 900 KiB parses in well under a second even on a busy machine. */
const PARSE_TIMEOUT_MS = 60_000;

interface Parser {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly flag: Int32Array;
}

let parser: Parser | undefined;

// Runs in the worker: loads the grammar once, then parses each source it is sent and answers with a plain copy of the tree.
function workerMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-var-requires */
  const { workerData } = require('node:worker_threads');
  const { runtime, wasm, port, flag } = workerData;
  const answer = (message: unknown) => {
    port.postMessage(message);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  };
  const ready = (async () => {
    const { Parser: TreeSitter, Language } = require(runtime);
    await TreeSitter.init();
    const p = new TreeSitter();
    p.setLanguage(await Language.load(wasm));
    return p;
  })();
  // A plain copy of the tree, walked with a cursor (far fewer calls into WebAssembly than node by node).
  const copy = (cursor: any): unknown => {
    const type = cursor.nodeType;
    const field = cursor.currentFieldName;
    const start = cursor.startPosition;
    const end = cursor.endPosition;
    const node: any = {
      type, field: field ?? undefined, row: start.row, column: start.column, endRow: end.row, endColumn: end.column,
      missing: cursor.nodeIsMissing || undefined, text: undefined, children: [] as unknown[],
    };
    const short = cursor.endIndex - cursor.startIndex <= 200;
    if (cursor.gotoFirstChild()) {
      do node.children.push(copy(cursor)); while (cursor.gotoNextSibling());
      cursor.gotoParent();
    }
    const leafy = node.children.length === 0 || type === 'identifier' || type === 'dotted_name';
    if (leafy && short) node.text = cursor.nodeText;
    return node;
  };
  // One answer per message, always: a tree or an error for each of its sources, in order, as JSON
  // (a string crosses to the other thread far faster than the objects would).
  port.on('message', (sources: string[]) => {
    ready.then(p => JSON.stringify(sources.map(source => {
      try {
        const tree = p.parse(source);
        const cursor = tree.walk();
        try {
          return { tree: copy(cursor) };
        } finally {
          cursor.delete();
          tree.delete();
        }
      } catch (e) {
        return { error: (e as Error).message };
      }
    }))).catch((e: Error) => JSON.stringify(sources.map(() => ({ error: e.message })))).then(answer);
  });
}

function start(): Parser {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(`(${workerMain.toString()})()`, {
    eval: true,
    // Not the parent's options: with `node -r ts-node/register main.ts` the worker would load
    // ts-node and TypeScript again before its first parse (about 250 ms and 45 MiB).
    execArgv: [],
    workerData: {
      runtime: require.resolve('web-tree-sitter'),
      wasm: require.resolve('tree-sitter-python/tree-sitter-python.wasm'),
      port: port2, flag,
    },
    transferList: [port2],
  });
  worker.unref();
  port1.unref();
  worker.on('error', () => {
    parser = undefined;
  });
  return { worker, port: port1, flag };
}

/** Starts the worker, if it is not running, so that it loads the grammar while this thread goes on. */
export function startPythonParser(): void {
  parser ??= start();
}

/**
 * Parses Python sources in one round trip to the worker, each distinct one once.
 *
 * @returns the tree of each source, by source; a source the parser failed on has none
 * @throws when the parser cannot be loaded or does not answer in time
 */
export function parsePythonSources(sources: Iterable<string>): Map<string, PyNode> {
  const wanted = [...new Set(sources)];
  const trees = new Map<string, PyNode>();
  if (!wanted.length) return trees;
  roundTrip(wanted).forEach((answer, i) => {
    if (answer.tree) trees.set(wanted[i], answer.tree);
  });
  return trees;
}

/**
 * Parses Python source.
 *
 * @throws when the parser cannot be loaded or does not answer in time
 */
export function parsePython(source: string): PyNode {
  const [answer] = roundTrip([source]);
  if (!answer?.tree) throw new Error(`the Python parser failed: ${answer?.error ?? 'no answer'}`);
  return answer.tree;
}

/** Sends sources to the worker and waits for its answer: one per source, in order. */
function roundTrip(sources: readonly string[]): readonly { readonly tree?: PyNode; readonly error?: string }[] {
  const p = parser ??= start();
  _work.pythonRoundTrips++;
  _work.pythonParses += sources.length;
  Atomics.store(p.flag, 0, 0);
  p.port.postMessage(sources);
  if (Atomics.wait(p.flag, 0, 0, PARSE_TIMEOUT_MS) === 'timed-out') {
    void p.worker.terminate();
    parser = undefined;
    throw new Error(`the Python parser gave no answer in ${PARSE_TIMEOUT_MS / 1000} s`);
  }
  const answers = receiveMessageOnPort(p.port)?.message as string | undefined;
  return answers === undefined ? [] : JSON.parse(answers) as { tree?: PyNode; error?: string }[];
}
