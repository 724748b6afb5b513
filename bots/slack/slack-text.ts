import type { MessageSeenBy } from '../runner/index.js';

/**
 * Slack sends message and command text with `&`, `<` and `>` escaped and with
 * links, mentions and channels in angle brackets. A prompt wants plain words.
 */
export function plainTextOf(slackText: string): string {
  return slackText
    .replace(/<([@#!])([^>|]+)(?:\|([^>]*))?>/g, (_m, sigil: string, id: string, label: string | undefined) => {
      // `<!here>` is `@here`; a user group without its handle (`<!subteam^S0123>`) shows its id.
      if (sigil === '!') return label ? label : `@${id.startsWith('subteam^') ? id.slice('subteam^'.length) : id.split('^')[0]}`;
      // Slack may leave the name out (`<#C0123|>`, `<@U0123>`): the id is what is left to show.
      return `${sigil}${label || id}`;
    })
    .replace(/<([^>|]+)(?:\|([^>]*))?>/g, (_m, url: string, label: string | undefined) => label ?? url)
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Removes every mention of one user (the bot) from message text. */
export function withoutMention(slackText: string, userId: string): string {
  return slackText.replace(new RegExp(`<@${escapeRegExp(userId)}(?:\\|[^>]*)?>`, 'g'), ' ');
}

export function mentions(slackText: string, userId: string): boolean {
  return new RegExp(`<@${escapeRegExp(userId)}(?:\\|[^>]*)?>`).test(slackText);
}

/** Escapes text for mrkdwn, so a prompt cannot mention @channel or fake a link. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Escapes text for mrkdwn, then keeps at most `max` UTF-16 units of the escaped text (an `&lt;` is 4 of them, never cut
 * in two), with an ellipsis: what fits a block whose limit counts the escaped text.
 */
export function escapedExcerpt(text: string, max: number): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  let excerpt = '';
  let length = 0;
  for (const char of text) {
    const written = escapeMrkdwn(char);
    if (length + written.length > max - 1) break;
    excerpt += written;
    length += written.length;
  }
  return `${excerpt}…`;
}

/** A link to a message (`chat.getPermalink`'s form without asking Slack: Slack opens it in the reader's workspace). */
export function messageLinkOf(channelId: string, ts: string): string {
  return `https://slack.com/archives/${channelId}/p${ts.replace('.', '')}`;
}

/** The link a job's history and audit entries give to its message (`historyLink`, the sweep's alike): none until it is posted. */
export function jobMessageLinkOf(request: { channelId: string; messageTs?: string | undefined }): string | undefined {
  return request.messageTs ? messageLinkOf(request.channelId, request.messageTs) : undefined;
}

/**
 * Who can open a job's message: only the member in a direct message with the app (a `D…` conversation: a private
 * job's, or one asked there), everyone in the channel otherwise. `recordEnded` keeps the link of the former in the
 * member's own history only, not in the audit channel nor the workspace's history, whose readers it would lead nowhere.
 */
export function jobMessageSeenBy(request: { channelId: string }): MessageSeenBy {
  return request.channelId.startsWith('D') ? 'member' : 'everyone';
}

/**
 * Whether a job was asked in its member's own direct messages with the app — the one rule for it: a saved request (a
 * private job's keeps the channel it was asked in as `askedIn`) or a history entry (its `channelId` is where it was
 * asked). Such a job is the member's alone there: anyone else's Reroll or Edit of it runs in their own direct messages,
 * and a history line names no conversation for it ("in a direct message": a `<#D…>` shows badly in Slack).
 */
export function askedInDirectMessages(job: { channelId: string; askedIn?: string | undefined }): boolean {
  return jobMessageSeenBy({ channelId: job.askedIn ?? job.channelId }) === 'member';
}

/**
 * Where a history line (`slack.history.line`, in `/imagine history` and the Home tab) says a job was asked: `dm` ("in
 * a direct message") for one asked in a direct message with the app (`askedInDirectMessages`: a `<#D…>` shows badly in
 * Slack, and names a conversation only its member can open) — and in the workspace's view (`scope`) for any whose
 * message only its member can open (`memberLink`, recorded as it ended) —, else its channel.
 */
export function historyChannelOf(entry: { channelId: string; memberLink?: boolean | undefined }, whose: 'mine' | 'scope'): string {
  return askedInDirectMessages(entry) || (whose === 'scope' && entry.memberLink === true) ? 'dm' : `<#${entry.channelId}>`;
}

/** Shortens text to `max` characters (code points), with an ellipsis. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
