/** Levenshtein distance, for "did you mean": the words compared are short, so the plain table is fine. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/** A prefix either way counts as one edit; at most max(2, a third of the typo's length) edits. */
export function nearest(typo: string, candidates: readonly string[]): string | null {
  let best: { word: string; d: number } | null = null;
  const lower = typo.toLowerCase();
  for (const word of candidates) {
    const d = word.startsWith(lower) || (lower.startsWith(word) && word.length > 1) ? 1 : editDistance(lower, word);
    if (!best || d < best.d) best = { word, d };
  }
  // Never "the typo rewritten whole": one letter against another is no hint.
  return best && best.d < typo.length && best.d <= Math.max(2, Math.floor(typo.length / 3)) ? best.word : null;
}
