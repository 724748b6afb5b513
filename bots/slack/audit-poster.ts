import type { types, webApi } from '@slack/bolt';
import { AuditChannelError, AuditPostLost, auditGreeting, auditLinesOf, auditSkippedNote, auditSummary, type AuditPost, type AuditPoster } from '../runner/index.js';
import type { ChannelWriter } from './ChannelWriter.js';
import { slackErrorCode } from './slack-error-code.js';
import type { SentOnceClient } from './sent-once-client.js';
import { lostAnswerCode } from './slack-faults.js';
import { escapedExcerpt, escapeMrkdwn } from './slack-text.js';

/** Entries in one message: a section block each, and the skipped note, well within Slack's 50 blocks. */
const ENTRIES_PER_MESSAGE = 20;
/** Characters of a prompt a section shows, as escaped (Slack's section text takes 3,000 with the rest of the entry). */
const PROMPT_CHARS = 1000;

/**
 * The audit channel on Slack: each batch is one `chat.postMessage` of a section block per entry, written through
 * the bot's `ChannelWriter` (one write a second per channel, shared with the jobs of that channel, which go first).
 * The runner decides what is posted and when, and what is tried again (`AuditLog`); this only lays it out.
 * `clientFor` finds the workspace's client for posts and edits (its installation with OAuth): one that sends each call
 * once. `greetClientFor`, when given, the one for the greeting an admin's choice of channel posts — the bot's usual
 * client, which waits out a 429 and tries again, as a second greeting holds no prompt (default: `clientFor`).
 */
export function slackAuditPoster(options: {
  clientFor: (teamId: string) => Promise<SentOnceClient | undefined>;
  greetClientFor?: ((teamId: string) => Promise<webApi.WebClient | undefined>) | undefined;
  writer: ChannelWriter;
}): AuditPoster {
  const clientOf = async <Client extends webApi.WebClient>(teamId: string, clientFor: (teamId: string) => Promise<Client | undefined>): Promise<Client> => {
    const client = await clientFor(teamId);
    if (!client) throw new AuditChannelError('failed', 'not_installed');
    return client;
  };
  return {
    maxEntries: ENTRIES_PER_MESSAGE,
    async post(post) {
      const client = await clientOf(post.scopeId, options.clientFor);
      let answer: { ts?: string | undefined } | undefined;
      try {
        answer = await options.writer.write(post.channelId, { run: () => client.chat.postMessage({ channel: post.channelId, ...messageOf(post), unfurl_links: false, unfurl_media: false }) });
      } catch (error) {
        // Slack's answer lost (`lostAnswerCode`): the message may be there, and Slack makes a new one of each try —
        // never sent again. Slack's refusal (`ok: false`, a rate limit) posted nothing.
        const lost = lostAnswerCode(error, client);
        if (lost !== undefined) throw new AuditPostLost(lost);
        throw error;
      }
      // An answer without its `ts`: the message was made, but cannot be kept for forget.
      if (!answer?.ts) throw new AuditPostLost('no_ts');
      return { messageId: answer.ts };
    },
    async edit(post) {
      const client = await clientOf(post.scopeId, options.clientFor);
      // `chat.update` counts against the workspace's Tier 3 budget, like a job's updates.
      try {
        await options.writer.write(post.channelId, { budgeted: true, workspace: post.scopeId, urgent: true, run: () => client.chat.update({ channel: post.channelId, ts: post.messageId, ...messageOf(post) }) });
      } catch (error) {
        // A message deleted: no edit there ever succeeds. `channel_not_found` is also what a channel the bot was
        // removed from answers (the message, its prompt shown, still there): it stays to edit.
        const code = slackErrorCode(error);
        if (code === 'message_not_found') throw new AuditChannelError('not_found', code);
        throw error;
      }
    },
    async greet({ scopeId, channelId, locale }) {
      const client = await clientOf(scopeId, options.greetClientFor ?? options.clientFor);
      try {
        await options.writer.write(channelId, { urgent: true, run: () => client.chat.postMessage({ channel: channelId, text: `:receipt: ${auditGreeting('slack', locale)}` }) });
      } catch (error) {
        const code = slackErrorCode(error);
        // A private channel the bot was not invited to is `channel_not_found` to it.
        if (code === 'not_in_channel' || code === 'channel_not_found') throw new AuditChannelError('not_in_channel', code);
        throw AuditChannelError.failedOf(error);
      }
    },
  };
}

/** A batch as Slack blocks: the skipped note first (if any), then a section per entry, mentions written as Slack reads them. */
function messageOf(post: AuditPost): { text: string; blocks: types.KnownBlock[] } {
  const note = auditSkippedNote(post.skipped, post.locale);
  const blocks: types.KnownBlock[] = note ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: `:warning: ${note}` }] }] : [];
  for (const entry of post.entries) {
    const lines = auditLinesOf(entry, post.locale);
    const prompt = lines.erased !== undefined ? `_${lines.erased}_` : lines.prompt !== undefined ? `> ${escapedExcerpt(lines.prompt.replace(/\s+/g, ' '), PROMPT_CHARS)}` : undefined;
    // The notes hold an admin's blocked word as written (`<!here>` is how Slack writes `@here`): shown, never a ping.
    const text = [`*${lines.head}*`, lines.details, prompt, escapeMrkdwn(lines.notes.join(' · ')) || undefined].filter((l) => l !== undefined).join('\n');
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
  }
  return { text: auditSummary(post.entries.length, post.locale), blocks };
}
