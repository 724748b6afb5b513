import { MessageFlags, Routes, type REST, type RawFile } from 'discord.js';
import type { LoggerLike, OutputFormat } from 'pictor';
import { attachmentLimitOf, DISCORD_ERRORS, DISCORD_LIMITS, discordErrorCode, discordErrorStatus } from './discord-facts.js';
import { loggableError } from './loggable-error.js';
import { fitImage, type OutgoingFile } from './fit-images.js';
import type { OutgoingMessage } from './render-job.js';
import { isDmScope, say } from '../runner/index.js';

export interface ReplyTargetOptions {
  /** REST client for the interaction webhook (replies, follow-ups): queues by Discord's per-token rate-limit headers and retries 429s. */
  webhookRest: REST;
  /** REST client with the bot token, for channel messages (the fallback). */
  botRest: REST;
  applicationId: string;
  /** The interaction token: edits the reply for 15 minutes. */
  token: string;
  /** When the interaction was created (its token's age counts from here). */
  issuedAt: number;
  channelId: string;
  /** Who asked: mentioned when the result has to go to the channel instead. */
  userId: string;
  /** The language of the job's messages (its notes about uploads). */
  locale: string;
  /**
   * The interaction's `attachment_size_limit` (bytes): files Discord refused together are packed into follow-ups of at
   * most this many bytes (and 10 files) each. Default Discord's for a bot (`attachmentLimitOf`).
   */
  attachmentSizeLimit?: number | undefined;
  /**
   * `channel` (a server the bot is in): once the token is unusable, final messages go to the channel. `dm` (DMs and
   * user installs, where the bot may not post in the channel at all): they go to a DM the bot opens with the user.
   */
  fallback?: 'channel' | 'dm' | undefined;
  /**
   * A private job: its reply is ephemeral, and so is every follow-up (more images, an image sent alone); past the
   * token its results go by DM (`fallback: 'dm'`), never to the channel.
   */
  ephemeral?: boolean | undefined;
  logger: LoggerLike;
  /** Tries of a final message before falling back to the channel. Default 3. */
  finalAttempts?: number | undefined;
  /** Waits between those tries. Default 1 s, then 3 s. */
  retryDelaysMs?: readonly number[] | undefined;
  now?: (() => number) | undefined;
}

/**
 * How private a job's messages are, from its scope and its choice — the live job's and the one a sweep or a Cancel shows
 * later alike: a private job's reply and follow-ups are ephemeral; past the token, a job in its member's own scope (a
 * DM, a user install: the bot may not post in that channel) or a private one (not for the channel) goes by DM, any other
 * to the channel.
 */
export function privacyOf(job: { scopeId: string; private?: boolean | undefined }): Pick<ReplyTargetOptions, 'fallback' | 'ephemeral'> {
  const ephemeral = job.private === true;
  return { fallback: isDmScope(job.scopeId) || ephemeral ? 'dm' : 'channel', ephemeral };
}

/** What reached the user of a final message: its first message (the end itself), and every one (its follow-ups, files sent alone). */
export interface FinalDelivery {
  first: boolean;
  all: boolean;
}

/** Halvings of one image's bytes tried when Discord refuses it alone as too large. */
const MAX_SHRINKS = 3;

/** Stop using the token a little before Discord does, so a result is not lost to a last-second expiry. */
const TOKEN_SAFETY_MS = 30_000;

/**
 * Where a job's reply goes: the interaction's response (edited in place with
 * the interaction token), or, once the token is expired (older than 15
 * minutes, 50027) or the reply is gone, a message in the channel sent with
 * the bot token that mentions the requester. Progress is only ever an edit of
 * the reply; the final result always reaches the user.
 */
export class ReplyTarget {
  readonly #o: ReplyTargetOptions;
  readonly #now: () => number;
  #mode: 'webhook' | 'channel' = 'webhook';
  /** `@original`, or the follow-up that replaced a deleted reply. */
  #webhookMessage = '@original';
  #replyGone = false;
  /** Files of the final message that Discord refused together (413): packed into as few messages as fit after it. */
  #oversized: OutgoingFile[] = [];
  /** The fallback's channel: the interaction's, or the DM opened with the user (once). */
  #fallbackChannel: Promise<string> | undefined;

  constructor(options: ReplyTargetOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** `webhook` while the interaction token works, `channel` after falling back. */
  get mode(): 'webhook' | 'channel' {
    return this.#mode;
  }

  /**
   * Whether the reply is still reached through the interaction token: it lives (the rule above, with its margin) and no
   * failure made the target fall back to the channel. What may ask Discord for the reply (its link) asks this first.
   */
  replyReachable(): boolean {
    return this.#tokenUsable();
  }

  /** The interaction whose token it edits the reply with (what asks Discord for the reply's link asks with it too); none without a token. */
  get interaction(): { applicationId: string; token: string } | undefined {
    return this.#o.token ? { applicationId: this.#o.applicationId, token: this.#o.token } : undefined;
  }

  /** Shows progress in the reply. Dropped (returns false) when only the channel is left or Discord refuses. */
  async progress(message: OutgoingMessage): Promise<boolean> {
    if (!this.#tokenUsable() || this.#replyGone) return false;
    try {
      await this.#patchReply(message);
      return true;
    } catch (error) {
      this.#noteFailure(error, 'progress');
      return false;
    }
  }

  /**
   * Shows a final message (result, failure, cancellation): edits the reply,
   * retrying what may pass on a second try, and otherwise posts it in the
   * channel. Extra messages (files beyond Discord's 10 per message) follow. Files Discord refuses with the end as too
   * large together (413) follow it packed into as few messages as Discord's per-message limits take (10 files, the
   * interaction's `attachmentSizeLimit` in bytes), and one per message only when a pack is refused too: an app only the
   * user installed has 5 follow-ups per interaction, so 7 images of a group DM stay in the group. A follow-up Discord
   * refuses (such as the sixth there, 40094) sends it and every one after it to the fallback — the member's DM there,
   * which Discord refuses too (50007) when the member shares no server with the bot and did not install the app.
   * Resolves whether the user got the first message (`first`: the end itself, with its buttons) and every one (`all`).
   */
  async final(messages: readonly OutgoingMessage[]): Promise<FinalDelivery> {
    const [first, ...more] = messages;
    if (!first) return { first: true, all: true };
    this.#oversized = [];
    const firstDelivered = await this.#deliverFirst(first);
    let all = firstDelivered;
    for (const extra of more) all = (await this.#followUp(extra)) && all;
    // Files Discord refused as too large together (413) follow in as few messages as fit, one per message (shrunk if
    // one alone is still too large) only when Discord refuses a pack as well.
    for (const pack of packFiles(this.#oversized.splice(0), attachmentLimitOf(this.#o))) {
      all = (await this.#sendPack(pack)) && all;
    }
    return { first: firstDelivered, all };
  }

  /** Files in one message (follow-up, or channel message); each alone if Discord refuses them together (413). */
  async #sendPack(files: readonly OutgoingFile[]): Promise<boolean> {
    if (files.length === 1) return this.#sendAlone(files[0]!);
    const message: OutgoingMessage = { content: '', components: [], files: [...files] };
    for (;;) {
      try {
        await this.#postFiles(message);
        return true;
      } catch (error) {
        this.#noteFailure(error, 'files');
        if (discordErrorCode(error) === DISCORD_ERRORS.requestEntityTooLarge) break;
        if (this.#mode !== 'webhook') return false;
        // Refused with the token (40094, 50027 …): this pack and what follows go to the fallback.
        this.#mode = 'channel';
      }
    }
    let all = true;
    for (const file of files) all = (await this.#sendAlone(file)) && all;
    return all;
  }

  /** A message of files alone: a follow-up while the token works, else in the fallback's channel. */
  async #postFiles(message: OutgoingMessage): Promise<void> {
    if (this.#mode === 'webhook' && this.#tokenUsable()) {
      await this.#o.webhookRest.post(Routes.webhook(this.#o.applicationId, this.#o.token), {
        body: this.#followUpBody(message),
        files: filesOf(message),
        auth: false,
        query: new URLSearchParams({ wait: 'true' }),
      });
    } else {
      await this.#o.botRest.post(Routes.channelMessages(await this.#fallbackChannelId()), { body: bodyOf(message, this.#o.userId), files: filesOf(message) });
    }
  }

  /** One file in its own message (follow-up, or channel message), re-encoded smaller while Discord answers 413. */
  async #sendAlone(file: OutgoingFile): Promise<boolean> {
    let current: OutgoingFile | undefined = file;
    for (let shrink = 0; current && shrink <= MAX_SHRINKS; shrink++) {
      const message: OutgoingMessage = { content: '', components: [], files: [current] };
      try {
        await this.#postFiles(message);
        return true;
      } catch (error) {
        this.#noteFailure(error, 'file');
        if (discordErrorCode(error) !== DISCORD_ERRORS.requestEntityTooLarge) {
          if (this.#mode === 'webhook') {
            this.#mode = 'channel';
            shrink--;
            continue;
          }
          return false;
        }
        current = (await fitImage(current.data, formatOf(current), current.name.replace(/\.[^.]+$/, ''), Math.floor(current.data.length / 2))).file;
      }
    }
    this.#o.logger.error({ file: file.name }, 'Discord refused an image as too large even shrunk');
    return false;
  }

  async #deliverFirst(message: OutgoingMessage): Promise<boolean> {
    const attempts = this.#o.finalAttempts ?? 3;
    const delays = this.#o.retryDelaysMs ?? [1000, 3000];
    let current = message;
    for (let attempt = 0; attempt < attempts && this.#tokenUsable(); attempt++) {
      try {
        if (this.#replyGone) await this.#replaceReply(current);
        else await this.#patchReply(current);
        return true;
      } catch (error) {
        const code = discordErrorCode(error);
        this.#noteFailure(error, 'final');
        if (code === DISCORD_ERRORS.requestEntityTooLarge && current.files.length) {
          // Paid images are not dropped: the message goes without them, and they follow one by one.
          this.#oversized.push(...current.files);
          current = withoutFiles(current, say(this.#o.locale, 'discord.job.upload_separately'));
          attempt--;
          continue;
        }
        if (this.#mode === 'channel') break;
        if (code === DISCORD_ERRORS.unknownMessage) continue;
        const status = discordErrorStatus(error);
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) break;
        await sleep(delays[Math.min(attempt, delays.length - 1)] ?? 1000);
      }
    }
    return this.#postInChannel(current);
  }

  async #followUp(message: OutgoingMessage): Promise<boolean> {
    if (this.#mode === 'webhook' && this.#tokenUsable()) {
      try {
        await this.#o.webhookRest.post(Routes.webhook(this.#o.applicationId, this.#o.token), {
          body: this.#followUpBody(message),
          files: filesOf(message),
          auth: false,
          query: new URLSearchParams({ wait: 'true' }),
        });
        return true;
      } catch (error) {
        this.#noteFailure(error, 'follow-up');
      }
    }
    return this.#postInChannel(message);
  }

  async #patchReply(message: OutgoingMessage): Promise<void> {
    await this.#o.webhookRest.patch(Routes.webhookMessage(this.#o.applicationId, this.#o.token, this.#webhookMessage), {
      body: bodyOf(message),
      files: filesOf(message),
      auth: false,
    });
  }

  /** The reply was deleted: a follow-up takes its place (and later edits go to it). */
  async #replaceReply(message: OutgoingMessage): Promise<void> {
    const sent = (await this.#o.webhookRest.post(Routes.webhook(this.#o.applicationId, this.#o.token), {
      body: this.#followUpBody(message),
      files: filesOf(message),
      auth: false,
      query: new URLSearchParams({ wait: 'true' }),
    })) as { id: string };
    this.#webhookMessage = sent.id;
    this.#replyGone = false;
  }

  async #postInChannel(message: OutgoingMessage): Promise<boolean> {
    this.#mode = 'channel';
    const where = this.#o.fallback === 'dm' ? 'dm' : 'channel';
    try {
      const channelId = await this.#fallbackChannelId();
      await this.#o.botRest.post(Routes.channelMessages(channelId), { body: bodyOf(message, this.#o.userId), files: filesOf(message) });
      this.#o.logger.info({ channelId, where }, `delivered a job result as a ${where === 'dm' ? 'direct' : 'channel'} message (the interaction token could not be used)`);
      return true;
    } catch (error) {
      this.#o.logger.error(
        { channelId: this.#o.channelId, where, code: discordErrorCode(error), status: discordErrorStatus(error) },
        `could not deliver a job result to Discord (no usable interaction token, and ${where === 'dm' ? 'no DM could be sent to the user' : 'the channel refused the message'})`,
      );
      return false;
    }
  }

  /** The interaction's channel, or for `fallback: 'dm'` the DM channel with the user (opened once; a failure is tried again next time). */
  #fallbackChannelId(): Promise<string> {
    if (this.#o.fallback !== 'dm') return Promise.resolve(this.#o.channelId);
    this.#fallbackChannel ??= (this.#o.botRest.post(Routes.userChannels(), { body: { recipient_id: this.#o.userId } }) as Promise<{ id: string }>).then((dm) => dm.id);
    const opened = this.#fallbackChannel;
    opened.catch(() => {
      if (this.#fallbackChannel === opened) this.#fallbackChannel = undefined;
    });
    return opened;
  }

  /** A follow-up's body: ephemeral for a private job, as its reply. */
  #followUpBody(message: OutgoingMessage): Record<string, unknown> {
    return this.#o.ephemeral ? { ...bodyOf(message), flags: MessageFlags.Ephemeral } : bodyOf(message);
  }

  #tokenUsable(): boolean {
    if (this.#mode === 'channel') return false;
    if (this.#now() - this.#o.issuedAt >= DISCORD_LIMITS.interactionTokenMs - TOKEN_SAFETY_MS) this.#mode = 'channel';
    return this.#mode === 'webhook';
  }

  #noteFailure(error: unknown, what: string): void {
    const code = discordErrorCode(error);
    if (code === DISCORD_ERRORS.invalidWebhookToken || code === DISCORD_ERRORS.unknownWebhook) this.#mode = 'channel';
    else if (code === DISCORD_ERRORS.unknownMessage && this.#webhookMessage === '@original') this.#replyGone = true;
    this.#o.logger.warn({ what, code, status: discordErrorStatus(error), mode: this.#mode, err: code === undefined ? loggableError(error) : undefined }, 'Discord refused an update of a job reply');
  }
}

function bodyOf(message: OutgoingMessage, mentionUserId?: string): Record<string, unknown> {
  const content = mentionUserId ? `<@${mentionUserId}> ${message.content}` : message.content;
  return {
    content: content.length <= DISCORD_LIMITS.contentChars ? content : `${content.slice(0, DISCORD_LIMITS.contentChars - 1)}…`,
    components: message.components,
    attachments: message.files.map((file, i) => ({ id: i, filename: file.name })),
    allowed_mentions: mentionUserId ? { parse: [], users: [mentionUserId] } : { parse: [] },
  };
}

function filesOf(message: OutgoingMessage): RawFile[] {
  return message.files.map((file) => ({ name: file.name, data: file.data, contentType: file.contentType }));
}

/**
 * Files in order, packed into as few messages as Discord takes: at most 10 files (`DISCORD_LIMITS.filesPerMessage`) and
 * `limitBytes` together each; a file larger than that alone is a pack of its own.
 */
function packFiles(files: readonly OutgoingFile[], limitBytes: number): OutgoingFile[][] {
  const packs: OutgoingFile[][] = [];
  let bytes = 0;
  for (const file of files) {
    const last = packs.at(-1);
    if (last && last.length < DISCORD_LIMITS.filesPerMessage && bytes + file.data.length <= limitBytes) {
      last.push(file);
      bytes += file.data.length;
    } else {
      packs.push([file]);
      bytes = file.data.length;
    }
  }
  return packs;
}

function withoutFiles(message: OutgoingMessage, note: string): OutgoingMessage {
  return { ...message, files: [], content: `${message.content}\n⚠️ ${note}` };
}

function formatOf(file: OutgoingFile): OutputFormat {
  return file.contentType === 'image/jpeg' ? 'jpeg' : file.contentType === 'image/webp' ? 'webp' : 'png';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
