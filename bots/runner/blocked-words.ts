import { createRequire } from 'node:module';

/**
 * Blocked words and phrases, matched the way a person reads them: case- and
 * accent-insensitive (Unicode NFKD, combining marks dropped, so "Café",
 * "CAFE" and "ｃａｆｅ" are one word); characters that show nothing do not
 * split one (every Unicode Default_Ignorable_Code_Point — zero-width space,
 * soft hyphen, the Hangul fillers, variation selectors, tags — and the
 * braille blank); letters of another script that look like a Latin one are
 * read as it ("gоre" with a Cyrillic о is "gore"); and whole words only ("ass"
 * does not block "class"; "red fox" blocks "a RED, fox" but not "redfox").
 * Scripts written without spaces between words (Chinese, Japanese, Thai, Lao,
 * Khmer, Myanmar …) have no whole words to find: each of their characters is a
 * word of its own, so "殺す" blocks "猫を殺す絵". So is each emoji and symbol:
 * "🍆" blocks "a🍆" and "👍" blocks "👍🏽". An entry of letters and digits only
 * does not see emoji and symbols in a prompt, as it does not see punctuation:
 * "kill him" blocks "kill 🔪 him", "kill + him" and "kill=him"; an entry with an
 * emoji or symbol in it matches them as written. An entry with none of these — no
 * letter, digit, emoji or symbol — could never match and is refused
 * (`unmatchableEntries`), never kept as if it blocked something.
 *
 * The look-alikes are Unicode's own (UTS #39 `confusables.txt`, as the
 * `unhomoglyph` package ships it), one letter for one letter: a mapping to
 * several letters (the skeleton of "m" is "rn") is not taken, so a blocked
 * "bum" never refuses "burn", nor a blocked "modem" "modern".
 */

/** The most words or phrases one list holds, and the longest one (characters). */
export const BLOCKED_WORDS_LIMITS = { entries: 200, length: 100 } as const;

/**
 * What shows nothing and is dropped: combining marks (after NFKD, the accents), every default-ignorable code point
 * (format characters, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, variation selectors, tags …), and
 * characters that are not default-ignorable but are drawn blank: U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL
 * SYMBOL NULL NOTEHEAD.
 */
const SHOWS_NOTHING = /[\p{M}\p{Default_Ignorable_Code_Point}\u{2800}\u{1D159}]+/gu;

const LETTER = /^\p{L}$/u;

/**
 * One letter for one letter, from `confusables.txt`: what each lower-case letter reads as, already folded. Taken
 * after lower-casing, so a capital and its small letter always read alike (case stays irrelevant in every script);
 * a capital of another script is read through its small letter (a Greek "Ο" is "ο", which reads as "o").
 */
const LOOK_ALIKES = buildLookAlikes(createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>);

function buildLookAlikes(confusables: Record<string, string>): Map<string, string> {
  const single = new Map<string, string>();
  for (const [source, target] of Object.entries(confusables)) {
    const plain = stripMarks(target);
    if (LETTER.test(source) && source === source.toLowerCase() && LETTER.test(plain) && plain !== source) single.set(source, plain);
  }
  // Follows a letter's mappings to their end (a prototype lower-cased may itself be a look-alike), a few steps at most.
  const settle = (letter: string): string => {
    let current = letter;
    for (let step = 0; step < 4; step++) {
      const next = single.get(current);
      const lowered = (next ?? current).toLowerCase();
      if (lowered === current) break;
      current = lowered;
    }
    return current;
  };
  const folded = new Map<string, string>();
  for (const source of single.keys()) folded.set(source, settle(source));
  return folded;
}

function stripMarks(text: string): string {
  return text.normalize('NFKD').replace(SHOWS_NOTHING, '');
}

/**
 * How prompts and entries are compared: compatibility forms folded (NFKD), what shows nothing dropped, lower case,
 * and each letter read as the Latin letter (or Unicode's prototype) it looks like.
 */
export function foldText(text: string): string {
  let out = '';
  for (const letter of stripMarks(text).toLowerCase()) out += LOOK_ALIKES.get(letter) ?? letter;
  return out;
}

/**
 * The scripts written without spaces between words (by Unicode's Script_Extensions, so the marks they share, such as
 * the Japanese long-vowel mark ー, count too): every letter or digit of theirs is a word of its own.
 */
const UNSPACED =
  '\\p{scx=Han}\\p{scx=Hiragana}\\p{scx=Katakana}\\p{scx=Bopomofo}\\p{scx=Yi}\\p{scx=Thai}\\p{scx=Lao}\\p{scx=Khmer}\\p{scx=Myanmar}\\p{scx=Tibetan}' +
  '\\p{scx=Tai_Le}\\p{scx=New_Tai_Lue}\\p{scx=Tai_Tham}\\p{scx=Tai_Viet}\\p{scx=Balinese}\\p{scx=Javanese}';

/**
 * A text's words: one letter or digit of an unspaced script; one emoji or symbol (a flag's two regional indicators,
 * a skin tone, each one: the joiners and variation selectors between them show nothing and are dropped before); or a
 * run of other letters and digits.
 */
const WORD = new RegExp(`(?=[\\p{L}\\p{N}])[${UNSPACED}]|[\\p{S}\\p{Extended_Pictographic}]|(?:(?![${UNSPACED}])[\\p{L}\\p{N}])+`, 'gu');

/** The words of a text after folding (`WORD`). */
export function wordsOf(text: string): string[] {
  return foldText(text).match(WORD) ?? [];
}

/** A word that is one emoji or symbol (`WORD`'s second kind). */
const SYMBOL_WORD = /^[\p{S}\p{Extended_Pictographic}]$/u;

function isSymbolWord(word: string): boolean {
  return SYMBOL_WORD.test(word);
}

/**
 * The entries of a list that can never match — nothing in them is a letter, a digit, an emoji or a symbol (".", "—")
 * — as written; empty when every one can. What the settings and `PICTOR_BLOCKED_WORDS` refuse.
 */
export function unmatchableEntries(entries: readonly string[]): string[] {
  return entries.filter((entry) => wordsOf(entry).length === 0);
}

/**
 * The first entry of `blocked` found in `prompt` as whole words (`wordsOf`: in an unspaced script, as the characters
 * in a row; an emoji wherever it stands), as the entry was written; undefined when none is. An entry of letters and
 * digits only is looked for among the prompt's letter and digit words, the emoji and symbols between them passed
 * over like punctuation ("kill him" blocks "kill 🔪 him"); an entry holding an emoji or symbol, among all its words.
 */
export function findBlockedWord(prompt: string, blocked: readonly string[]): string | undefined {
  if (blocked.length === 0) return undefined;
  const allWords = wordsOf(prompt);
  const plainWords = allWords.filter((word) => !isSymbolWord(word));
  for (const entry of blocked) {
    const phrase = wordsOf(entry);
    const words = phrase.some(isSymbolWord) ? allWords : plainWords;
    if (phrase.length === 0 || phrase.length > words.length) continue;
    for (let i = 0; i + phrase.length <= words.length; i++) {
      if (phrase.every((word, j) => words[i + j] === word)) return entry;
    }
  }
  return undefined;
}

/**
 * A list as people type it — comma- or newline-separated — trimmed, without blanks or repeats (by folded form). An
 * entry that can never match is kept, as typed, for the reader to refuse (`unmatchableEntries`), never dropped.
 */
export function parseWordList(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of text.split(/[,\n]/)) {
    const entry = raw.trim().replace(/\s+/g, ' ');
    const words = wordsOf(entry);
    const key = words.length > 0 ? words.join(' ') : `\u0000${entry}`;
    if (entry === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out;
}
