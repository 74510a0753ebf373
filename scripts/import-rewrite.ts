/**
 * What `npm run import` changes in the code `cdk8s import` generates, and why.
 *
 * Each generated `toJson_*` function drops undefined values with
 * `Object.entries(o).reduce((r, i) => (i[1] === undefined) ? r : ({ ...r, [i[0]]: i[1] }), {})`,
 * which copies the object once per key: a Function's spec, its source, env and resources become
 * dozens of short-lived objects, about 0.6 s (and 50 MiB of garbage) of a synth of 10,000
 * Functions. The rewrite calls one helper that builds the same object, the same keys in the same
 * order, in one pass. test/api/crd.test.ts checks that imports/ is the rewritten import and that
 * both give equal results on generated Functions.
 */

/** The expression `cdk8s import` writes to drop undefined values, around any object expression. */
const DROP_UNDEFINED = /Object\.entries\(([^()]*(?:\([^()]*\))?[^()]*)\)\.reduce\(\(r, i\) => \(i\[1\] === undefined\) \? r : \(\{ \.\.\.r, \[i\[0\]\]: i\[1\] \}\), \{\}\)/g;

const HELPER = `
/**
 * The object without its undefined values, its other keys in their order: what the reduce that
 * \`cdk8s import\` writes gives, without a copy of the object per key. Added by scripts/import.ts.
 */
function withoutUndefined(object: { [key: string]: any }): Record<string, any> {
  const result: Record<string, any> = {};
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined) continue;
    // A computed key in an object literal defines "__proto__" as an own property; so does this.
    if (key === '__proto__') Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
    else result[key] = value;
  }
  return result;
}
`;

/**
 * Rewrites one file of `cdk8s import`'s output.
 *
 * @throws when the file has none of the expressions: `cdk8s import` changed, and this needs a look
 */
export function rewriteImport(text: string): string {
  let count = 0;
  const rewritten = text.replace(DROP_UNDEFINED, (_, object: string) => {
    count++;
    return `withoutUndefined(${object})`;
  });
  if (count === 0) throw new Error('The import holds no reduce that drops undefined values: cdk8s import writes other code now; see scripts/import-rewrite.ts');
  return `${rewritten.trimEnd()}\n${HELPER}`;
}
