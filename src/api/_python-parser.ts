/**
 * The Python parser's worker thread. Python source read by tree-sitter's Python grammar (`tree-sitter-python`, its WebAssembly build,
 * run by `web-tree-sitter`): no Python installation is needed, and the grammar reads every file of
 * CPython's standard library without an error, so valid code is not refused. The handler checks
 * send it only what the reader of `_python-reader.ts` leaves to it: most handlers are read on the
 * main thread without it, and then no worker is started.
 *
 * `web-tree-sitter` only loads asynchronously, and synth is synchronous: the parse runs in a worker
 * thread, started on first use and kept (unreferenced, so it never keeps the process alive), while
 * this thread waits on a shared count of answers (`Atomics.wait`), then takes the worker's answers
 * from its port. An answer holds the nodes of each source of a message as numbers, in one buffer
 * moved to this thread (not a copy of objects, nor JSON), which reads positions and names from
 * the sources it has. Sources can be sent ahead ({@link sendPythonSources}: a Function sends its
 * handler when it is built), so the worker parses while this thread builds the app. Synth and
 * `validate` send what is left in one message ({@link askSources}) and take each tree as its
 * handler is checked ({@link takeSentPythonTree}), waiting only until the message that holds it is
 * answered: this thread checks the first Functions while the worker parses the others.
 * ({@link parsePython} sends one source and waits for its tree.)
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

/**
 * The worker's answer to one message: the trees of its sources, flat, in one buffer that is moved
 * to this thread rather than copied. For each source, the count of its nodes (0 when it failed, its
 * error then in `errors`), then each node in document order as {@link NODE_INTS} numbers: type id,
 * field id, start and end index (UTF-16 code units, as JavaScript strings count), flags, count of
 * children. Positions and texts are the source's own: this thread has the source, and reads them
 * from it. The worker's first answer also names the language's types and fields.
 */
interface Reply {
  readonly nodes: Int32Array;
  readonly errors: readonly (string | null)[];
  readonly names?: Names;
}

/** The names of the grammar's type ids and field ids, as web-tree-sitter's `Language` lists them. */
interface Names {
  readonly types: readonly (string | null)[];
  readonly fields: readonly (string | null)[];
}

/** The numbers of one node in a {@link Reply}. */
const NODE_INTS = 6;
/** A flag of a node: one the grammar expected and did not find. */
const MISSING = 1;
/** A flag of a node: it has children in the tree, kept or not. */
const PARENT = 2;

/** How many sources sent ahead go in one message. */
const SEND_AHEAD_BATCH = 32;

/** A message posted to the worker and not yet answered: its sources. */
interface InFlight {
  readonly python: string[];
}

interface Parser {
  readonly worker: Worker;
  readonly port: MessagePort;
  /** How many messages the worker has answered, counted by the worker. */
  readonly answered: Int32Array;
  /** The sources of each message posted and not yet answered, oldest first. */
  readonly inFlight: InFlight[];
  /** Sources in a message not yet answered, or queued for the next one. */
  readonly pending: Set<string>;
  /** Sources for the next message. */
  queued: string[];
  /** Answers taken from the port and not yet asked for, by source. */
  readonly answers: Map<string, Answer>;
  /** The grammar's names, from the worker's first answer. */
  names?: Names;
}

let parser: Parser | undefined;

// Runs in the worker: loads the grammar once, then parses each source it is sent and answers with
// its nodes as numbers. Calls into WebAssembly are what a tree costs here, so it makes as few as it
// can: a tree without errors keeps only its named nodes (the checks read no keyword or punctuation),
// each with its type, field, start and end index, and whether it has children; a tree with errors
// keeps every node, and whether each is missing.
function workerMain(): void {
  /* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-var-requires */
  const { workerData } = require('node:worker_threads');
  const { runtime, wasm, port, answered } = workerData;
  const answer = (message: unknown, transfer: any[]) => {
    port.postMessage(message, transfer);
    Atomics.add(answered, 0, 1);
    Atomics.notify(answered, 0);
  };
  let names: unknown;
  let named: boolean[] = [];
  let ready: Promise<any> | undefined;
  // The grammar, loaded at the start.
  const grammar = () => ready ??= (async () => {
    const { Parser: TreeSitter, Language } = require(runtime);
    await TreeSitter.init();
    const p = new TreeSitter();
    const language = await Language.load(wasm);
    p.setLanguage(language);
    names = { types: language.types, fields: language.fields };
    named = language.types.map((_: unknown, id: number) => language.nodeTypeIsNamed(id));
    return p;
  })();
  void grammar().catch(() => undefined);
  // Each node before its children; the count of its children kept is written once they are.
  const copy = (cursor: any, all: boolean, out: number[]): number => {
    const type = cursor.nodeTypeId;
    // An id the language does not list (ERROR's) is named.
    if (!all && named[type] === false) {
      if (!cursor.gotoFirstChild()) return 0;
      cursor.gotoParent();
    }
    const at = out.length;
    out.push(type, cursor.currentFieldId, cursor.startIndex, cursor.endIndex, all && cursor.nodeIsMissing ? 1 : 0, 0);
    let count = 1;
    if (cursor.gotoFirstChild()) {
      out[at + 4] |= 2;
      let children = 0;
      do {
        const n = copy(cursor, all, out);
        if (n) children++;
        count += n;
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
      out[at + 5] = children;
    }
    return count;
  };
  // The nodes or an error for each Python source.
  const trees = (p: any, sources: string[]) => {
    const out: number[] = [];
    const errors = sources.map(source => {
      const head = out.length;
      out.push(0);
      try {
        const tree = p.parse(source);
        const cursor = tree.walk();
        try {
          out[head] = copy(cursor, tree.rootNode.hasError, out);
          return null;
        } finally {
          cursor.delete();
          tree.delete();
        }
      } catch (e) {
        out.length = head + 1;
        return (e as Error).message;
      }
    });
    const nodes = Int32Array.from(out);
    answer({ nodes, errors, names }, [nodes.buffer]);
    names = undefined;
  };
  // One answer per message, always, in the order of the messages, each waiting for the grammar.
  let turn: Promise<unknown> = Promise.resolve();
  port.on('message', (message: string[]) => {
    turn = turn.then(() => grammar().then(p => trees(p, message))
      .catch((e: Error) => answer({ nodes: new Int32Array(message.length), errors: message.map(() => e.message) }, [])));
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

/**
 * Ends the worker when it owes no answer and nothing waits to be sent to it, so that its memory
 * (its own heap and the grammar) is not held while the rest of a synth runs. A later parse starts another.
 *
 * @returns whether a worker was ended
 */
export function stopParserWhenIdle(): boolean {
  const p = parser;
  if (!p || p.inFlight.length > 0 || p.queued.length > 0) return false;
  parser = undefined;
  void p.worker.terminate();
  return true;
}

/** Whether the parser's worker is running. */
export function parserRunning(): boolean {
  return parser !== undefined;
}

/**
 * Sends sources to the worker to parse while this thread goes on, without waiting: a later
 * {@link askSources} and {@link takeSentPythonTree} of them find their trees parsed. Sources go in messages of
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
  p.inFlight.push({ python: p.queued });
  p.port.postMessage(p.queued);
  p.queued = [];
}

/**
 * Sends the worker every source it is to parse for the checks that follow, without waiting: the
 * sources not sent yet, in one message. Their trees are taken as each handler is checked
 * ({@link takeSentPythonTree}), each wait only for the messages up to the one that holds it: this
 * thread checks the first handlers while the worker parses the rest. Counted as one round trip,
 * and a parse of each distinct source; none when there is none.
 */
export function askSources(python: Iterable<string>): void {
  const wanted = [...new Set(python)];
  if (!wanted.length) return;
  const p = parser ??= start();
  for (const source of wanted) queue(p, source);
  post(p);
  _work.pythonParses += wanted.length;
  _work.pythonRoundTrips++;
}

/**
 * The tree of a Python source sent to the worker before, waiting only until its answer has come.
 *
 * @returns the tree, taken once; undefined when the source was not sent, or the worker failed on it
 */
export function takeSentPythonTree(source: string): PyNode | undefined {
  const p = parser;
  if (!p || !(p.pending.has(source) || p.answers.has(source))) return undefined;
  try {
    settle(p, () => !p.pending.has(source));
  } catch {
    // No answer in time: the worker is ended, and the source is parsed again where it is checked.
    return undefined;
  }
  const answer = p.answers.get(source);
  p.answers.delete(source);
  return answer?.tree;
}

/**
 * Ends the worker once it has answered what it owes (answers no check took: the handlers of
 * Functions whose check stopped before their code), and what is queued for it is dropped.
 *
 * @returns whether a worker was ended
 */
export function stopParser(): boolean {
  const p = parser;
  if (!p) return false;
  p.queued = [];
  try {
    settle(p);
  } catch {
    // Ended by the wait.
  }
  return stopParserWhenIdle();
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

/** Sends the sources the worker lacks and waits for their answers: one per source, in order. */
function take(sources: readonly string[]): readonly Answer[] {
  const p = parser ??= start();
  for (const source of sources) queue(p, source);
  post(p);
  _work.pythonRoundTrips++;
  _work.pythonParses += sources.length;
  // Answers only go (no source becomes pending again in a wait): the sources answered stay answered.
  let answered = 0;
  settle(p, () => {
    while (answered < sources.length && !p.pending.has(sources[answered])) answered++;
    return answered === sources.length;
  });
  return sources.map(source => {
    const answer = p.answers.get(source) ?? {};
    p.answers.delete(source);
    return answer;
  });
}

/**
 * Waits for the answers the worker owes, in order, and keeps them by source: every one, or those up
 * to when `done` says so.
 *
 * @param done whether the answers wanted have come
 * @throws when the worker does not answer in time
 */
function settle(p: Parser, done: () => boolean = () => false): void {
  while (p.inFlight.length && !done()) {
    const seen = Atomics.load(p.answered, 0);
    const message = receiveMessageOnPort(p.port)?.message as unknown;
    if (message === undefined) {
      if (Atomics.wait(p.answered, 0, seen, PARSE_TIMEOUT_MS) === 'timed-out') {
        void p.worker.terminate();
        if (parser === p) parser = undefined;
        throw new Error(`the Python parser gave no answer in ${PARSE_TIMEOUT_MS / 1000} s`);
      }
      continue;
    }
    const asked = p.inFlight.shift()!;
    const reply = message as Reply;
    p.names ??= reply.names;
    let at = 0;
    asked.python.forEach((source, i) => {
      const count = reply.nodes[at++];
      p.pending.delete(source);
      const error = reply.errors[i];
      if (count > 0 && p.names) p.answers.set(source, { tree: treeOf(source, reply.nodes, at, p.names) });
      else p.answers.set(source, { error: error ?? 'no tree' });
      at += count * NODE_INTS;
    });
  }
}

/**
 * A source's tree from its nodes in a {@link Reply}, from `at` on: rows and columns counted in the
 * source as tree-sitter counts them (a row ends at each `\n`; a column counts UTF-16 code units, as
 * web-tree-sitter gives them), and the text of names and short leaves cut from the source.
 */
function treeOf(source: string, nodes: Int32Array, at: number, names: Names): PyNode {
  const newlines: number[] = [];
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) newlines.push(i);
  // The row of an index: how many line ends come before it.
  const rowOf = (index: number): number => {
    let low = 0;
    let high = newlines.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (newlines[middle] < index) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const node = (): PyNode => {
    const base = at;
    at += NODE_INTS;
    const type = names.types[nodes[base]] || 'ERROR';
    const start = nodes[base + 2];
    const end = nodes[base + 3];
    const flags = nodes[base + 4];
    const row = rowOf(start);
    const endRow = rowOf(end);
    const children: PyNode[] = [];
    for (let i = nodes[base + 5]; i > 0; i--) children.push(node());
    const leafy = !(flags & PARENT) || type === 'identifier' || type === 'dotted_name';
    return {
      type, field: names.fields[nodes[base + 1]] ?? undefined,
      row, column: start - (row ? newlines[row - 1] + 1 : 0), endRow, endColumn: end - (endRow ? newlines[endRow - 1] + 1 : 0),
      missing: flags & MISSING ? true : undefined,
      text: leafy && end - start <= 200 ? source.slice(start, end) : undefined,
      children,
    };
  };
  return node();
}
