/**
 * Blocked words and phrases, matched the way a person reads them: case- and
 * accent-insensitive (Unicode NFKD, combining marks dropped, so "Café",
 * "CAFE" and "ｃａｆｅ" are one word; invisible format characters such as a
 * zero-width space or a soft hyphen do not split one) and whole words only
 * ("ass" does not block "class"; "red fox" blocks "a RED, fox" but not "redfox").
 */

/** The most words or phrases one list holds, and the longest one (characters). */
export const BLOCKED_WORDS_LIMITS = { entries: 200, length: 100 } as const;

/** Lower case, no accents, compatibility forms folded, invisible format characters (Unicode Cf) dropped: how prompts and entries are compared. */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(/[\p{M}\p{Cf}]+/gu, '').toLowerCase();
}

/** The words of a text after folding: runs of letters and digits. */
export function wordsOf(text: string): string[] {
  return foldText(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The first entry of `blocked` found in `prompt` as whole words, as the entry
 * was written; undefined when none is.
 */
export function findBlockedWord(prompt: string, blocked: readonly string[]): string | undefined {
  if (blocked.length === 0) return undefined;
  const words = wordsOf(prompt);
  for (const entry of blocked) {
    const phrase = wordsOf(entry);
    if (phrase.length === 0 || phrase.length > words.length) continue;
    for (let i = 0; i + phrase.length <= words.length; i++) {
      if (phrase.every((word, j) => words[i + j] === word)) return entry;
    }
  }
  return undefined;
}

/** A list as people type it — comma- or newline-separated — trimmed, without blanks or repeats (by folded form). */
export function parseWordList(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of text.split(/[,\n]/)) {
    const entry = raw.trim().replace(/\s+/g, ' ');
    const key = wordsOf(entry).join(' ');
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out;
}
