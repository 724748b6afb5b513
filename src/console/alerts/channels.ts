import { setTimeout as sleep } from 'node:timers/promises';
import { describeDuration } from '../../core/describe-duration.js';
import { signWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './webhook-signature.js';
import type { AlertConfig } from './config.js';

/** One alert as it is sent: a sentence for people, and the facts for machines (the webhook's JSON). */
export interface Alert {
  /**
   * Stable: the same alert is sent once (per cap, amount, period and threshold; per pause). Only a send a stop cut after a
   * second, which the destination may have taken, is sent again once its claim lapses (see `AlertWatcher.stop`).
   */
  id: string;
  kind: 'cap' | 'breaker' | 'role-budgets' | 'members';
  text: string;
  /** When it was decided (ms). */
  at: number;
  ledger: 'account' | 'emulator';
  cap?: CapAlert | undefined;
  breaker?: { scopeKey: string; name?: string | undefined; pausedAt: number; pausedUsd: number; limitUsd: number } | undefined;
  /** A server/workspace whose role budgets cannot be read: its members may spend nothing until an admin sets them again. */
  roleBudgets?: { scopeKey: string; name?: string | undefined } | undefined;
  /** Many members' caps passed a threshold (or cannot take one more image) in one check: one message for them all. */
  members?: MembersAlert | undefined;
}

/** The members' caps of one summary: how many, how many per threshold, and the ones used the most. */
export interface MembersAlert {
  count: number;
  /** How many passed each threshold (the highest each passed; `full`: cannot take one more image). */
  byThreshold: Record<string, number>;
  /** The ones used the most, highest share first (at most `MEMBERS_LISTED`). */
  top: CapAlert[];
}

/** A cap's alert: its share passed a threshold, or the cap cannot take one more image. */
export interface CapAlert {
  owner: 'account' | 'scope' | 'dm' | 'user';
  key: string;
  name?: string | undefined;
  /** A user's cap set in one server/workspace (a chat admin's, a role budget's): where. */
  scopeKey?: string | undefined;
  scopeName?: string | undefined;
  period: 'day' | 'month';
  periodKey: string;
  limitUsd: number;
  /** Settled plus reserved by running jobs: what the cap counts (the ledger's figure). */
  usedUsd: number;
  /** What a job's reservation must fit in. */
  leftUsd: number;
  percent: number;
  /** The highest threshold passed (0: none). */
  threshold: number;
  /**
   * `threshold`: the share passed `threshold` (used up, the alert says the cap refuses its jobs too); `full`: less is
   * left than a job of one image reserves (sent instead of any threshold's alert of the cap and period); `refused`: not
   * even the cheapest image fits, told on its own when no new threshold's alert says it.
   */
  trigger: 'threshold' | 'full' | 'refused';
  /** A member's cap where the member's roles are not known here: the least it can be (see `CapUse.bound`). */
  bound?: 'lower' | undefined;
  resetsAt: number;
}

/** A place alerts go to. `send` throws when the place did not take it (it is tried again at the next check). */
export interface AlertChannel {
  /** For the log and the alerts page: "discord:<channel id>", "slack:<channel>", "webhook:<origin>". Never a secret. */
  readonly id: string;
  /** A name someone chose (a member's, a server's) as this place's messages must write it to show it as it is; default as is. */
  readonly quote?: ((name: string) => string) | undefined;
  /** Whether a sentence fits in one message of this place (Discord's 2,000 characters, Slack's 40,000); default any. */
  readonly fits?: ((text: string) => boolean) | undefined;
  /** `signal` aborts it (the console stops). */
  send(alert: Alert, signal?: AbortSignal): Promise<void>;
}

/** Discord takes at most this many characters in a message's content. */
export const DISCORD_MESSAGE_CHARS = 2000;
/** Slack truncates a message's text past this many characters (as escaped). */
export const SLACK_MESSAGE_CHARS = 40_000;

const TIMEOUT_MS = 10_000;
/** A 429 asking to wait longer than this is not waited for: the alert is tried again at the next check. */
const MAX_RETRY_WAIT_MS = 10_000;

/** The channels of a config; Slack's token is looked up for a workspace installed through OAuth. */
export function alertChannels(config: AlertConfig, options: { slackToken?: ((teamId: string) => Promise<string | undefined>) | undefined } = {}): AlertChannel[] {
  const channels: AlertChannel[] = [];
  if (config.discord) channels.push(discordChannel(config.discord));
  if (config.slack) channels.push(slackChannel(config.slack, options.slackToken));
  if (config.webhook) channels.push(webhookChannel(config.webhook));
  return channels;
}

/**
 * A Discord channel, through the REST API with the bot token: mentions are never parsed (an alert pings nobody), names
 * are written with Discord's markdown escaped, and links show no preview.
 */
export function discordChannel(config: NonNullable<AlertConfig['discord']>): AlertChannel {
  return {
    id: `discord:${config.channelId}`,
    quote: escapeDiscord,
    fits: (text) => text.length <= DISCORD_MESSAGE_CHARS,
    send: (alert, signal) =>
      post(
        `${config.apiBaseUrl}/v10/channels/${config.channelId}/messages`,
        { authorization: `Bot ${config.token}` },
        JSON.stringify({ content: alert.text.slice(0, DISCORD_MESSAGE_CHARS), allowed_mentions: { parse: [] }, flags: SUPPRESS_EMBEDS }),
        async (res) => {
          if (!res.ok) throw new Error(`Discord answered ${res.status} to the alert`);
        },
        signal,
      ),
  };
}

/** A Slack channel, through chat.postMessage with the bot token (or the token of the workspace's installation). */
export function slackChannel(config: NonNullable<AlertConfig['slack']>, tokenOf?: (teamId: string) => Promise<string | undefined>): AlertChannel {
  return {
    id: `slack:${config.teamId ? `${config.teamId}/` : ''}${config.channel}`,
    fits: (text) => escapeSlack(text).length <= SLACK_MESSAGE_CHARS,
    async send(alert, signal) {
      const token = config.token ?? (config.teamId && tokenOf ? await tokenOf(config.teamId) : undefined);
      if (!token) throw new Error(`no Slack token for the workspace ${config.teamId ?? '(none)'}: is the app installed there?`);
      // Plain text: Slack's escapes over all of it (no mention, no link), and its formatting off (a name shows as it is).
      const body = JSON.stringify({ channel: config.channel, text: escapeSlack(alert.text), mrkdwn: false, unfurl_links: false, unfurl_media: false });
      await post(
        `${config.apiUrl}chat.postMessage`,
        { authorization: `Bearer ${token}` },
        body,
        async (res) => {
          const answer = (await res.json().catch(() => undefined)) as { ok?: boolean; error?: string } | undefined;
          if (!res.ok || answer?.ok !== true) throw new Error(`Slack answered ${res.status} ${answer?.error ?? ''} to the alert`.trim());
        },
        signal,
      );
    },
  };
}

/** A webhook: the alert as JSON, signed (see `webhook-signature.ts`). */
export function webhookChannel(config: NonNullable<AlertConfig['webhook']>): AlertChannel {
  return {
    id: `webhook:${new URL(config.url).origin}`,
    async send(alert, signal) {
      const body = JSON.stringify(alert);
      const timestamp = Math.floor(Date.now() / 1000);
      await post(
        config.url,
        { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: signWebhook(config.secret, timestamp, body) },
        body,
        async (res) => {
          if (res.status < 200 || res.status >= 300) throw new Error(`the webhook answered ${res.status} to the alert`);
        },
        signal,
      );
    },
  };
}

/**
 * A name in a Discord message as it is: one line, every markdown character escaped (Discord takes a backslash before
 * any punctuation), so it makes no link (`[text](url)`), no mention (`@everyone`, `<@&role>`), no formatting, no
 * autolink (`https\://`).
 */
export function escapeDiscord(name: string): string {
  return name.replace(/\s+/g, ' ').replace(/[\\*_~`|>#\-[\]()<:@]/g, (c) => `\\${c}`);
}

/** Discord's message flag: no embeds (link previews). */
const SUPPRESS_EMBEDS = 1 << 2;

/** Slack's three escapes, so a name cannot mention a channel or make a link. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * POSTs JSON; a 429 is waited out once when it asks for 10 s or less. A request that fails says the destination by its
 * origin only, and why by a code: a webhook's path or query may be its secret (Slack's and Discord's are), and the
 * errors of fetch quote the whole URL.
 */
async function post(url: string, headers: Record<string, string>, body: string, check: (res: Response) => Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Pictor alerts', ...headers },
        body,
        redirect: 'error',
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new Error(`the alert could not be sent to ${originOf(url)} (${whyNotSent(error)})`);
    }
    if (res.status === 429 && attempt === 1) {
      const waitMs = retryAfterMs(res.headers.get('retry-after'), (await res.json().catch(() => undefined)) as { retry_after?: number } | undefined);
      if (waitMs !== undefined && waitMs <= MAX_RETRY_WAIT_MS) {
        await sleep(waitMs, undefined, { signal });
        continue;
      }
    }
    await check(res);
    await res.body?.cancel().catch(() => undefined);
    return;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'its destination';
  }
}

/** Why a request was not sent, as a code or a name: never a message (they may quote the URL). */
function whyNotSent(error: unknown): string {
  if ((error as Error | undefined)?.name === 'TimeoutError') return `no answer within ${describeDuration(TIMEOUT_MS)}`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause?.message === 'unexpected redirect') return 'it answered with a redirect, which alerts do not follow';
  if (typeof cause?.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(cause.code)) return cause.code;
  return 'the request could not be made';
}

function retryAfterMs(header: string | null, json: { retry_after?: number } | undefined): number | undefined {
  if (typeof json?.retry_after === 'number') return Math.ceil(json.retry_after * 1000);
  const seconds = Number(header);
  return header !== null && Number.isFinite(seconds) ? Math.ceil(seconds * 1000) : undefined;
}
