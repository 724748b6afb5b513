/**
 * Suggestions for a mistyped word, the one implementation behind the CLI's and
 * Slack's "Did you mean …?" (flags and commands).
 *
 * The known word closest to a mistyped one, if one is close: a prefix of at least two letters ("gen" → "generate"),
 * or at most two letters away (a third of the word for short words) — "--qualty" → "--quality".
 */
export function closestWord(word: string, known: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  if (typed.length >= 2) {
    const prefixed = known.filter((k) => k.startsWith(typed));
    if (prefixed.length === 1) return prefixed[0];
  }
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate);
    if (distance <= Math.min(2, Math.max(1, Math.floor(candidate.length / 3))) && (!best || distance < best.distance)) best = { word: candidate, distance };
  }
  return best?.word;
}

/** Levenshtein distance, with a swap of two neighbours counting one. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}
