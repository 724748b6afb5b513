import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { CATALOGS, type MessageKey } from '../../bots/runner/index.js';

/**
 * Which catalog message a sentence the bots wrote is (English), for tests outside the describe-* ones: they assert a
 * message by its key, and each sentence's words are checked once, where it is written (test/README.md).
 */

/** A pattern matching every sentence an ICU message can say, whatever its values. */
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
          return '[\\d.,]+';
        case TYPE.tag:
          // Rendered as the platform marks it up (Slack's `*bold*`, Discord's `**bold**`), or plain.
          return `[*_~]*${patternOf(element.children)}[*_~]*`;
        default:
          return '.+?';
      }
    })
    .join('');
}

/** Lines no message says in words of its own. */
const ANY_LINES = ['zq', 'zq xv: wk (jh) “yb”.'];

/** Each English message's pattern, the most words first: a line is named by the message that says the most of it. */
const englishPatterns = Object.entries(CATALOGS.en)
  .map(([key, message]) => ({ key: key as MessageKey, pattern: new RegExp(`^${patternOf(parse(message))}$`, 'u') }))
  // A message that can be values alone (`{text}`, or a select with such an option) names nothing: it says any line.
  .filter(({ pattern }) => !ANY_LINES.some((line) => pattern.test(line)))
  .sort((a, b) => b.pattern.source.length - a.pattern.source.length);

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
 * The catalog key of a line the bot wrote (English, a whole message): which message it is, asserted by key — its words
 * are checked once, where it is written.
 */
export function keyOf(line: string): MessageKey {
  return englishPatterns.find(({ pattern }) => pattern.test(line))?.key ?? (`unknown: ${line}` as MessageKey);
}

/** The English messages Slack can send (none of Discord's own), the most literal words first. */
const slackPatterns = englishPatterns
  .filter(({ key }) => !key.startsWith('discord.'))
  .map((entry) => ({ ...entry, words: entry.pattern.source.replaceAll('.+?', '').replaceAll('[*_~]*', '').length }))
  .sort((a, b) => b.words - a.words);

/**
 * The catalog key of a whole message the Slack bot wrote (English), or of one line of it, with or without the emoji
 * Slack's surface puts before it (`:information_source: `): asserted by key, its words checked in the describe-* tests.
 */
export function slackKeyOf(text: string): MessageKey {
  const bare = text.replace(/^:[a-z0-9_+-]+: /u, '');
  return slackPatterns.find(({ pattern }) => pattern.test(text) || pattern.test(bare))?.key ?? (`unknown: ${text}` as MessageKey);
}
