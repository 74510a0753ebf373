/**
 * Python source read by tree-sitter's Python grammar (`tree-sitter-python`, its WebAssembly build,
 * run by `web-tree-sitter`): no Python installation is needed, and the grammar reads every file of
 * CPython's standard library without an error, so valid code is not refused.
 *
 * `web-tree-sitter` only loads asynchronously, and synth is synchronous: the parse runs in a worker
 * thread, started on first use and kept (unreferenced, so it never keeps the process alive), while
 * this thread waits on a shared flag (`Atomics.wait`), then takes the worker's answer from its
 * port. The answer is a plain tree of the nodes (type, position, text of names). Each round trip
 * carries every source asked for at once ({@link requestPythonSources}): synth and `validate` send
 * all the Python handlers they will check in one message, not one each. The worker answers it in
 * parts, as it goes, and this thread waits only for the part that holds the source it needs next
 * ({@link awaitPythonSource}): the parse runs beside the checks of the Functions before it.
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

/** How many sources one part of an answer holds: small enough that the first comes soon, large enough that parts are few. */
const PART_SIZE = 100;

interface Parser {
  readonly worker: Worker;
  readonly port: MessagePort;
  /** The number of answers (parts) the worker has posted, ever. */
  readonly flag: Int32Array;
  /** The number of answers this thread has taken from the port. */
  taken: number;
}

let parser: Parser | undefined;

/** The worker's answer for one source: its tree, or why the parser failed on it. */
export interface PythonAnswer {
  readonly tree?: PyNode;
  readonly error?: string;
}

/** The sources asked for and not answered yet, each with what takes its answer. */
const pending = new Map<string, (answer: PythonAnswer) => void>();
/** Per part still to come, in order: the sources it answers. */
const parts: string[][] = [];

// Runs in the worker: loads the grammar once, then parses each source it is sent and answers with a plain copy of the tree.
function workerMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-var-requires */
  const { workerData } = require('node:worker_threads');
  const { runtime, wasm, port, flag, partSize } = workerData;
  const answer = (message: unknown) => {
    port.postMessage(message);
    Atomics.add(flag, 0, 1);
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
  const parseOne = (p: any, source: string) => {
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
  };
  // Each message is answered in parts of `partSize` sources, always: a tree or an error for each,
  // in order, as JSON (a string crosses to the other thread far faster than the objects would).
  port.on('message', (sources: string[]) => {
    ready.then(p => {
      for (let i = 0; i < sources.length; i += partSize) answer(JSON.stringify(sources.slice(i, i + partSize).map(source => parseOne(p, source))));
    }).catch((e: Error) => {
      for (let i = 0; i < sources.length; i += partSize) answer(JSON.stringify(sources.slice(i, i + partSize).map(() => ({ error: e.message }))));
    });
  });
}

function start(): Parser {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(`(${workerMain.toString()})()`, {
    eval: true,
    workerData: {
      runtime: require.resolve('web-tree-sitter'),
      wasm: require.resolve('tree-sitter-python/tree-sitter-python.wasm'),
      port: port2, flag, partSize: PART_SIZE,
    },
    transferList: [port2],
  });
  worker.unref();
  port1.unref();
  worker.on('error', () => {
    parser = undefined;
  });
  return { worker, port: port1, flag, taken: 0 };
}

/** Starts the worker, if it is not running, so that it loads the grammar while this thread goes on. */
export function startPythonParser(): void {
  parser ??= start();
}

/**
 * Sends Python sources to the worker in one message, each distinct one once (and none already
 * asked for), and returns at once: the worker parses them while this thread goes on. Each answer
 * is given to `take` when its part is received, by {@link awaitPythonSource} (of this source or of
 * a later one).
 */
export function requestPythonSources(sources: Iterable<string>, take: (source: string, answer: PythonAnswer) => void): void {
  const wanted = [...new Set(sources)].filter(source => !pending.has(source));
  if (!wanted.length) return;
  const p = parser ??= start();
  _work.pythonRoundTrips++;
  _work.pythonParses += wanted.length;
  for (const source of wanted) pending.set(source, answer => take(source, answer));
  for (let i = 0; i < wanted.length; i += PART_SIZE) parts.push(wanted.slice(i, i + PART_SIZE));
  p.port.postMessage(wanted);
}

/**
 * Waits until the tree of a source asked for with {@link requestPythonSources} has been taken.
 *
 * @returns whether the source had been asked for and not taken yet
 * @throws when the worker does not answer in time (every source asked for is then forgotten)
 */
export function awaitPythonSource(source: string): boolean {
  if (!pending.has(source)) return false;
  const p = parser;
  while (pending.has(source) && p) {
    if (Atomics.load(p.flag, 0) === p.taken && Atomics.wait(p.flag, 0, p.taken, PARSE_TIMEOUT_MS) === 'timed-out') {
      abandon(p);
      throw new Error(`the Python parser gave no answer in ${PARSE_TIMEOUT_MS / 1000} s`);
    }
    const answers = receiveMessageOnPort(p.port)?.message as string | undefined;
    if (answers === undefined) continue;
    p.taken++;
    const part = parts.shift() ?? [];
    const given = JSON.parse(answers) as PythonAnswer[];
    part.forEach((asked, i) => {
      const take = pending.get(asked);
      pending.delete(asked);
      take?.(given[i] ?? {});
    });
  }
  return true;
}

/** Stops a worker that does not answer, and forgets what was asked of it. */
function abandon(p: Parser): void {
  void p.worker.terminate();
  if (parser === p) parser = undefined;
  pending.clear();
  parts.length = 0;
}

/**
 * Parses Python source.
 *
 * @throws when the parser cannot be loaded or does not answer in time
 */
export function parsePython(source: string): PyNode {
  let answer: PythonAnswer | undefined;
  const earlier = pending.get(source);
  if (earlier) {
    pending.set(source, given => {
      earlier(given);
      answer = given;
    });
  } else {
    requestPythonSources([source], (_, given) => {
      answer = given;
    });
  }
  awaitPythonSource(source);
  if (!answer?.tree) throw new Error(`the Python parser failed: ${answer?.error ?? 'no answer'}`);
  return answer.tree;
}


