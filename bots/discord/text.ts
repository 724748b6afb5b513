import { escapeMarkdown } from 'discord.js';

/** Text of a user's (a file name, a prompt) shown safely: no markdown, no mentions, bounded. */
export function codeSpan(text: string, max = 60): string {
  const clean = text.replace(/[`\n\r]/g, ' ').trim() || 'unnamed';
  return `\`${clean.length > max ? `${clean.slice(0, max - 1)}…` : clean}\``;
}

/**
 * A prompt as one quoted line: markdown escaped, masked links (`[text](url)`,
 * which Discord renders clickable in a bot's message) and link brackets
 * defused, mentions defused, cut at `max` characters.
 */
export function promptExcerpt(prompt: string, max = 180): string {
  const oneLine = prompt.replace(/\s+/g, ' ').trim();
  const cut = oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
  return escapeMarkdown(cut)
    .replace(/[[\]<>]/g, (c) => `\\${c}`)
    .replace(/@/g, '@\u200b');
}
