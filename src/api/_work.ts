/**
 * What synth and `validate` spend their time on, counted rather than timed: parses of handler
 * sources (each distinct source once), round trips to the Python parser's worker, renders and
 * validations of Functions. The tests of test/gitops/synth-work.test.ts and test/gitops/gitops-app.test.ts
 * fail when the work per Function grows, whatever the machine's speed. Not exported by the package.
 *
 * Also the memo every parser keeps, by the whole text it was given: a parse is a pure function of
 * its source, so a memo holds no state that matters, only work not done twice.
 */

/** The counts since the last {@link _resetWork}. */
export interface WorkCounts {
  /** JavaScript handlers parsed with acorn (syntax, imports), here or in the parsers' worker, one per distinct source and kind (script, module). */
  nodeParses: number;
  /** JavaScript handlers read on this thread without acorn (`_javascript-reader.ts`), one per distinct source and kind (script, module). */
  nodeReads: number;
  /** Python handlers read on this thread without tree-sitter (`_python-reader.ts`), one per distinct source. */
  pythonReads: number;
  /** Python handlers parsed by tree-sitter in the worker: those the reader of this thread leaves to it. */
  pythonParses: number;
  /**
   * Round trips to the parsers' worker: the handlers of a synth or a `validate` asked for at once (most are sent ahead, as their Functions
   * are built), Python ones and Node.js ones sent to acorn there, each answer then taken as its handler is checked.
   */
  pythonRoundTrips: number;
  /** Functions rendered by their KymaFunction (the spec built from the props). */
  functionRenders: number;
  /**
   * Function specs written as JSON from their render (`toJson_FunctionSpec`): for validation, and for the output when the
   * spec's JSON cannot be the one validation checked.
   */
  functionJsons: number;
  /** Functions of an output compared field by field with the Function their KymaFunction validated, to find them unchanged. */
  functionComparisons: number;
  /** Function objects checked by `validateFunction` (schema, CEL and the controller's rules) at synth: by their KymaFunction, or in the output. */
  functionValidations: number;
  /** Walks of a whole app's construct tree by GitOpsApp's synth (one, whatever the number of Functions). */
  treeWalks: number;
}

const counts: WorkCounts = {
  nodeParses: 0, nodeReads: 0, pythonReads: 0, pythonParses: 0, pythonRoundTrips: 0, functionRenders: 0, functionJsons: 0, functionComparisons: 0,
  functionValidations: 0, treeWalks: 0,
};

/**
 * The counts, live: the modules of `src/api` and `src/function` add to them.
 *
 * @internal
 */
export const _work: WorkCounts = counts;

const memos = new Set<ContentMemo<unknown>>();

/**
 * Sets the counts to zero and forgets every memo, so that a test counts the parses of its own app.
 *
 * @internal
 */
export function _resetWork(): void {
  for (const key of Object.keys(counts) as (keyof WorkCounts)[]) counts[key] = 0;
  for (const memo of memos) memo.clear();
}

/**
 * Results by the text they were computed from. Bounded by the characters of its keys (a handler
 * may take 900 KiB): past the bound it starts again empty, which costs only parses done again.
 */
export class ContentMemo<T> {
  private readonly entries = new Map<string, T>();
  private chars = 0;

  /** @param maxChars the most characters of keys kept */
  public constructor(private readonly maxChars: number) {
    memos.add(this as ContentMemo<unknown>);
  }

  public get(key: string): T | undefined {
    return this.entries.get(key);
  }

  public has(key: string): boolean {
    return this.entries.has(key);
  }

  public set(key: string, value: T): void {
    if (this.entries.has(key)) return;
    if (this.chars + key.length > this.maxChars) this.clear();
    this.entries.set(key, value);
    this.chars += key.length;
  }

  public clear(): void {
    this.entries.clear();
    this.chars = 0;
  }
}
