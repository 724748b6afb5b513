import { Routes, type REST } from 'discord.js';
import { auditGreeting, auditLinesOf, auditSkippedNote, AuditChannelError, AuditPostLost, type AuditEntry, type AuditPost, type AuditPoster } from '../runner/index.js';
import { DISCORD_ERRORS, DISCORD_LIMITS, discordErrorCode } from './discord-facts.js';
import { madeNothing, NonceWindow, postWithNonce } from './nonce-window.js';
import { promptExcerpt } from './text.js';

/** An entry's colour: green done, amber failed or cancelled, red refused. */
const COLOURS = { done: 0x2e7d32, ended: 0xf9a825, refused: 0xc62828 } as const;
/** Characters of a prompt an entry shows at first; less when ten entries would pass Discord's 6,000 characters. */
const PROMPT_CHARS = 300;

/**
 * The audit channel on Discord: each batch is one message of up to 10 embeds (one per entry), posted with the
 * bot's REST client — discord.js waits out 429s and keeps each route's bucket — mentioning nobody. The runner
 * decides what is posted and when (`AuditLog`); this only lays it out. `now`: the clock its nonces' windows are
 * measured on from the moment of a post (`NonceWindow`).
 */
export function discordAuditPoster(rest: REST, options: { now?: (() => number) | undefined } = {}): AuditPoster {
  return {
    maxEntries: DISCORD_LIMITS.embedsPerMessage,
    // Each message carries its nonce, enforced: Discord answers the message it already made of it (a few minutes). No
    // request of it leaves after that (`NonceWindow`, from the post's first send): discord.js's own tries included. A
    // replay refused so (`NonceWindowOver` with `mayHaveMade`) is lost, not refused: its first send may have made it.
    replayMs: DISCORD_LIMITS.nonceKeptMs,
    async post(post) {
      const body = bodyOf(post);
      let message: { id: string; embeds?: unknown[] };
      try {
        const sent = post.nonce === undefined ? rest.post(Routes.channelMessages(post.channelId), { body }) : postWithNonce(rest, post.channelId, { body }, new NonceWindow({ nonce: post.nonce, sentMsAgo: post.sentMsAgo, now: options.now }));
        message = (await sent) as { id: string; embeds?: unknown[] };
      } catch (error) {
        // A channel deleted: no post there ever succeeds (the runner drops its entries rather than trying again). One
        // the bot can no longer see (50001) or post in (50013) may come back: thrown as it is, tried again later.
        const code = discordErrorCode(error);
        if (code === DISCORD_ERRORS.unknownChannel) throw new AuditChannelError('not_found', code);
        // Discord refused it, or no request of it was written (`madeNothing`, the one rule of it): nothing was made.
        if (madeNothing(error)) throw error;
        // The answer was lost (a timeout, an abort, a connection cut of a request written, a 5xx): the message may be there.
        throw AuditPostLost.of(error);
      }
      // Without Embed Links Discord drops a bot's embeds and keeps the rest: the entries were not shown; the skipped note was.
      if (lostEmbeds(message, body.embeds.length)) throw new AuditChannelError('no_permission', EMBEDS_DROPPED, 'content' in body);
      return { messageId: message.id };
    },
    async edit(post) {
      try {
        await rest.patch(Routes.channelMessage(post.channelId, post.messageId), { body: bodyOf(post) });
      } catch (error) {
        // A message or channel deleted: no edit there ever succeeds. One the bot can no longer see (50001) is still
        // there, its prompt shown: it stays to edit (its access may come back).
        const code = discordErrorCode(error);
        if (code === DISCORD_ERRORS.unknownMessage || code === DISCORD_ERRORS.unknownChannel) throw new AuditChannelError('not_found', code);
        throw error;
      }
    },
    async greet({ channelId, locale }) {
      // The greeting is an embed, as the entries are: a channel without Embed Links is found now, not after the first posts.
      // Its nonce, enforced, lets discord.js try it again (a 5xx, no answer) without a second greeting: each try within
      // the minutes Discord keeps the nonce (`NonceWindow`).
      const body = { content: '🧾', embeds: [{ description: auditGreeting('discord', locale), color: COLOURS.done }], allowed_mentions: { parse: [] } };
      let message: { embeds?: unknown[] };
      try {
        message = (await postWithNonce(rest, channelId, { body }, new NonceWindow())) as { embeds?: unknown[] };
      } catch (error) {
        const code = discordErrorCode(error);
        if (code === DISCORD_ERRORS.missingAccess || code === DISCORD_ERRORS.missingPermissions) throw new AuditChannelError('no_permission', code);
        if (code === DISCORD_ERRORS.unknownChannel) throw new AuditChannelError('not_found', code);
        throw AuditChannelError.failedOf(error);
      }
      if (lostEmbeds(message, 1)) throw new AuditChannelError('no_permission', EMBEDS_DROPPED);
    },
  };
}

/** The code logged (and shown to admins) when Discord dropped a message's embeds: the bot lacks Embed Links there. */
const EMBEDS_DROPPED = 'embed_links';

/** Whether Discord's answer kept fewer embeds than were sent (an answer without the field is taken as kept). */
function lostEmbeds(message: { embeds?: unknown[] }, sent: number): boolean {
  return Array.isArray(message.embeds) && message.embeds.length < sent;
}

/** The message of a batch: the skipped note (if any) as its content, an embed per entry, within Discord's limits. */
function bodyOf(post: AuditPost): { embeds: unknown[] } & Record<string, unknown> {
  const note = auditSkippedNote(post.skipped, post.locale);
  let chars = PROMPT_CHARS;
  let embeds = post.entries.map((e) => embedOf(e, post.locale, chars));
  // Ten long prompts (each escaped) could pass the 6,000 characters of a message's embeds: shorter excerpts then.
  while (textOf(embeds) > DISCORD_LIMITS.embedChars && chars > 20) {
    chars = Math.floor(chars / 2);
    embeds = post.entries.map((e) => embedOf(e, post.locale, chars));
  }
  return { ...(note && { content: `⚠️ ${note}` }), embeds, allowed_mentions: { parse: [] } };
}

function embedOf(entry: AuditEntry, locale: string | undefined, promptChars: number): { description: string; color: number; timestamp: string } {
  const lines = auditLinesOf(entry, locale);
  const prompt = lines.erased !== undefined ? `*${lines.erased}*` : lines.prompt !== undefined ? `> ${promptExcerpt(lines.prompt, promptChars)}` : undefined;
  const description = [lines.head, lines.details, prompt, lines.notes.join(' · ') || undefined].filter((l) => l !== undefined).join('\n');
  const colour = entry.type === 'refusal' ? COLOURS.refused : entry.status === 'completed' ? COLOURS.done : COLOURS.ended;
  return { description, color: colour, timestamp: new Date(entry.at).toISOString() };
}

function textOf(embeds: { description: string }[]): number {
  return embeds.reduce((n, e) => n + e.description.length, 0);
}
