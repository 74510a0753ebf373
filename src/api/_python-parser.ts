/**
 * Python source read by tree-sitter's Python grammar (`tree-sitter-python`, its WebAssembly build,
 * run by `web-tree-sitter`): no Python installation is needed, and the grammar reads every file of
 * CPython's standard library without an error, so valid code is not refused.
 *
 * `web-tree-sitter` only loads asynchronously, and synth is synchronous: the parse runs in a worker
 * thread, started on first use and kept (unreferenced, so it never keeps the process alive), while
 * this thread waits on a shared count of answers (`Atomics.wait`), then takes the worker's answers
 * from its port. An answer is a plain tree of the nodes (type, position, text of names) for each
 * source of a message. Sources can be sent ahead ({@link sendPythonSources}: a Function sends its
 * handler when it is built), so the worker parses while this thread builds the app; a wait
 * ({@link parsePythonSources}) sends what is left in one message and takes every tree asked for
 * at once: synth and `validate` wait once for all the Python handlers they will check.
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

/** The worker's answer for one source. */
interface Answer {
  readonly tree?: PyNode;
  readonly error?: string;
}

/** How many sources sent ahead go in one message. */
const SEND_AHEAD_BATCH = 32;

interface Parser {
  readonly worker: Worker;
  readonly port: MessagePort;
  /** How many messages the worker has answered, counted by the worker. */
  readonly answered: Int32Array;
  /** The sources of each message posted and not yet answered, oldest first. */
  readonly inFlight: string[][];
  /** Sources in a message not yet answered, or queued for the next one. */
  readonly pending: Set<string>;
  /** Sources for the next message. */
  queued: string[];
  /** Answers taken from the port and not yet asked for, by source. */
  readonly answers: Map<string, Answer>;
}

let parser: Parser | undefined;

// Runs in the worker: loads the grammar once, then parses each source it is sent and answers with a plain copy of the tree.
function workerMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-var-requires */
  const { workerData } = require('node:worker_threads');
  const { runtime, wasm, port, answered } = workerData;
  const answer = (message: unknown) => {
    port.postMessage(message);
    Atomics.add(answered, 0, 1);
    Atomics.notify(answered, 0);
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
  const answered = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(`(${workerMain.toString()})()`, {
    eval: true,
    // Not the parent's options: with `node -r ts-node/register main.ts` the worker would load
    // ts-node and TypeScript again before its first parse (about 250 ms and 45 MiB).
    execArgv: [],
    workerData: {
      runtime: require.resolve('web-tree-sitter'),
      wasm: require.resolve('tree-sitter-python/tree-sitter-python.wasm'),
      port: port2, answered,
    },
    transferList: [port2],
  });
  worker.unref();
  port1.unref();
  const started: Parser = { worker, port: port1, answered, inFlight: [], pending: new Set(), queued: [], answers: new Map() };
  worker.on('error', () => {
    if (parser === started) parser = undefined;
  });
  return started;
}

/** Starts the worker, if it is not running, so that it loads the grammar while this thread goes on. */
export function startPythonParser(): void {
  parser ??= start();
}

/**
 * Sends sources to the worker to parse while this thread goes on, without waiting: a later
 * {@link parsePythonSources} of them finds their trees parsed. Sources go in messages of
 * {@link SEND_AHEAD_BATCH}; a source sent before and not asked for yet is not sent again.
 */
export function sendPythonSources(sources: Iterable<string>): void {
  const p = parser ??= start();
  for (const source of sources) if (queue(p, source) && p.queued.length >= SEND_AHEAD_BATCH) post(p);
}

/** Queues a source for the next message unless the worker has it already; whether it was queued. */
function queue(p: Parser, source: string): boolean {
  if (p.pending.has(source) || p.answers.has(source)) return false;
  p.pending.add(source);
  p.queued.push(source);
  return true;
}

function post(p: Parser): void {
  if (!p.queued.length) return;
  p.inFlight.push(p.queued);
  p.port.postMessage(p.queued);
  p.queued = [];
}

/**
 * Parses Python sources, each distinct one once: sends those the worker does not have yet in one
 * message, then waits for every answer it owes.
 *
 * @returns the tree of each source, by source; a source the parser failed on has none
 * @throws when the parser cannot be loaded or does not answer in time
 */
export function parsePythonSources(sources: Iterable<string>): Map<string, PyNode> {
  const wanted = [...new Set(sources)];
  const trees = new Map<string, PyNode>();
  if (!wanted.length) return trees;
  take(wanted).forEach((answer, i) => {
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
  const [answer] = take([source]);
  if (!answer?.tree) throw new Error(`the Python parser failed: ${answer?.error ?? 'no answer'}`);
  return answer.tree;
}

/** Sends the sources the worker lacks and waits for the answers: one per source, in order. */
function take(sources: readonly string[]): readonly Answer[] {
  const p = parser ??= start();
  for (const source of sources) queue(p, source);
  post(p);
  _work.pythonRoundTrips++;
  _work.pythonParses += sources.length;
  while (p.inFlight.length) {
    const seen = Atomics.load(p.answered, 0);
    const message = receiveMessageOnPort(p.port)?.message as string | undefined;
    if (message === undefined) {
      if (Atomics.wait(p.answered, 0, seen, PARSE_TIMEOUT_MS) === 'timed-out') {
        void p.worker.terminate();
        if (parser === p) parser = undefined;
        throw new Error(`the Python parser gave no answer in ${PARSE_TIMEOUT_MS / 1000} s`);
      }
      continue;
    }
    const asked = p.inFlight.shift()!;
    const answers = JSON.parse(message) as Answer[];
    asked.forEach((source, i) => {
      p.pending.delete(source);
      p.answers.set(source, answers[i] ?? {});
    });
  }
  return sources.map(source => {
    const answer = p.answers.get(source) ?? {};
    p.answers.delete(source);
    return answer;
  });
}
