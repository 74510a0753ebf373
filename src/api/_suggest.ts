/**
 * "Did you mean": the known name closest to a misspelt one.
 */

/**
 * The edit distance of two strings: insertions, deletions, substitutions and swaps of two
 * neighbours (`replcia` → `replica` is one edit), each costing 1.
 */
export function editDistance(a: string, b: string): number {
  // d[i][j]: the distance of the first i characters of a and the first j of b.
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate a misspelt word most likely means: the closest one, ignoring case, when at most
 * three edits and less than 60% of the longer word away (as git and commander suggest commands).
 *
 * @param word what was given
 * @param candidates the known names, in the order to prefer among equally close ones
 * @returns the candidate, or undefined when none is close, or the word is one of them
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.includes(word)) return undefined;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    const length = Math.max(word.length, candidate.length);
    if (distance > 3 || (length - distance) / length <= 0.4) continue;
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}
