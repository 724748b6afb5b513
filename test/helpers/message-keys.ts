import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { CATALOGS, type MessageKey } from '../../bots/runner/index.js';

/**
 * Which catalog message a sentence the bots wrote is (English), for tests outside the describe-* ones: they assert a
 * message by its key, and each sentence's words are checked once, where it is written (test/README.md).
 */

/**
 * A pattern matching every sentence an ICU message can say, whatever its values: each value (and each markup around a
 * tag) is a capturing group, so what is left of a matched line is the message's own words.
 */
function patternOf(elements: MessageFormatElement[]): string {
  return elements
    .map((element) => {
      switch (element.type) {
        case TYPE.literal:
          return element.value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        case TYPE.plural:
        case TYPE.select:
          return `(?:${Object.values(element.options)
            .map((option) => patternOf(option.value))
            .join('|')})`;
        case TYPE.pound:
          return '([\\d.,]+)';
        case TYPE.tag:
          // Rendered as the platform marks it up (Slack's `*bold*`, Discord's `**bold**`), or plain.
          return `([*_~]*)${patternOf(element.children)}([*_~]*)`;
        default:
          return '(.+?)';
      }
    })
    .join('');
}

/** Lines no message says in words of its own. */
const ANY_LINES = ['zq', 'zq xv: wk (jh) “yb”.'];

interface KeyPattern {
  key: MessageKey;
  pattern: RegExp;
}

/** Each English message's pattern. */
const englishPatterns: KeyPattern[] = Object.entries(CATALOGS.en)
  .map(([key, message]) => ({ key: key as MessageKey, pattern: new RegExp(`^${patternOf(parse(message))}$`, 'u') }))
  // A message that can be values alone (`{text}`, or a select with such an option) names nothing: it says any line.
  .filter(({ pattern }) => !ANY_LINES.some((line) => pattern.test(line)));

/** The English messages Discord (and the runner, for any surface) can send: none of Slack's own. */
const discordPatterns = englishPatterns.filter(({ key }) => !key.startsWith('slack.'));

/** How many characters of `line` are the message's own words (not its values), or -1 when it cannot say the line. */
function ownWords(pattern: RegExp, line: string): number {
  const match = pattern.exec(line);
  if (!match) return -1;
  return match.slice(1).reduce((left, value) => left - (value?.length ?? 0), line.length);
}

/**
 * The one message that says the line (any of `lines`: the same line as written and without what the surface put
 * before it). The rule, when several can: the one saying the most of it in its own words, characters that are none of
 * its values, wins (`• neon: “neon {prompt}”` is a style's line, whose quotes are its own, not a member default's
 * `• {name}: {value}`); when two or more say as many, the line is ambiguous, and this throws naming them, rather than
 * pick one by the catalog's order — a test asserting such a line asserts more than a key (its values, its words).
 */
function keyAmong(patterns: readonly KeyPattern[], lines: readonly string[]): MessageKey {
  let best: MessageKey[] = [];
  let most = -1;
  for (const { key, pattern } of patterns) {
    const said = Math.max(...lines.map((line) => ownWords(pattern, line)));
    if (said < 0 || said < most) continue;
    if (said > most) [best, most] = [[], said];
    best.push(key);
  }
  if (best.length > 1) throw new Error(`ambiguous: ${JSON.stringify(lines[0])} is said in as many words of their own by ${best.join(', ')}`);
  return best[0] ?? (`unknown: ${lines[0]}` as MessageKey);
}

/**
 * The catalog keys of the `⚠️` lines in a message (English): which notes it carries, asserted by key — each sentence's
 * words are checked once, where it is written, not in every test that shows it.
 */
export function notesOf(content: string): MessageKey[] {
  return content
    .split('\n')
    .map((line) => /⚠️ (.+)$/u.exec(line)?.[1])
    .filter((note) => note !== undefined)
    .map(keyOf);
}

/**
 * The catalog key of a line the Discord bot or the runner wrote (English, a whole message; none of Slack's own
 * messages): which message it is, asserted by key — its words are checked once, where it is written. Throws for a line
 * two messages say alike (`keyAmong`).
 */
export function keyOf(line: string): MessageKey {
  return keyAmong(discordPatterns, [line]);
}

/** The English messages Slack can send (none of Discord's own). */
const slackPatterns = englishPatterns.filter(({ key }) => !key.startsWith('discord.'));

/**
 * The catalog key of a whole message the Slack bot wrote (English), or of one line of it, with or without the emoji
 * Slack's surface puts before it (`:information_source: `): asserted by key, its words checked in the describe-* tests.
 */
export function slackKeyOf(text: string): MessageKey {
  return keyAmong(slackPatterns, [text, text.replace(/^:[a-z0-9_+-]+: /u, '')]);
}
