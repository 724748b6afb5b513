import { MessageFlags, Routes, type REST, type RawFile } from 'discord.js';
import type { LoggerLike, OutputFormat } from 'pictor';
import { DISCORD_ERRORS, DISCORD_LIMITS, discordErrorCode, discordErrorStatus, uploadLimitOf } from './discord-facts.js';
import { loggableError } from './loggable-error.js';
import { madeNothing, NonceWindow, postWithNonce } from './nonce-window.js';
import { fitImage, type OutgoingFile } from './fit-images.js';
import type { OutgoingMessage } from './render-job.js';
import { isDmScope, say, type MessageKey } from '../runner/index.js';

export interface ReplyTargetOptions {
  /**
   * REST client for the interaction webhook (replies, follow-ups): queues by Discord's per-token rate-limit headers and
   * retries 429s; sends a follow-up once whatever Discord answers (`withPostsSentOnce`): this decides what is tried again.
   */
  webhookRest: REST;
  /** REST client with the bot token, for channel messages (the fallback): each with its nonce, which discord.js's own tries keep (`withPostsSentOnce`). */
  botRest: REST;
  applicationId: string;
  /** The interaction token: edits the reply for 15 minutes. */
  token: string;
  /** When the interaction was created (its token's age counts from here). */
  issuedAt: number;
  channelId: string;
  /** Who asked: mentioned when the result has to go to the channel instead. */
  userId: string;
  /**
   * Whose interaction `token` is: by default `userId`'s. Another member's (a Cancel someone else pressed on a job its
   * process left) is not told privately of the job's end with it, and the reply, which everyone in the channel sees, says
   * only that the end could not be delivered — never that `userId`'s DMs refused it.
   */
  tokenUserId?: string | undefined;
  /** The language of the job's messages (its notes about uploads). */
  locale: string;
  /**
   * The interaction's `attachment_size_limit`: the most bytes of one file Discord takes. A file over `uploadLimitOf` it
   * (within what one request takes) goes in a message of its own (and is shrunk there), never in a pack. Default
   * Discord's for a bot (`attachmentLimitOf`).
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
  /** Aborted once the bot's stop waits no longer for the replies being shown: a wait between two tries ends there, and the message is not tried again. */
  stop?: AbortSignal | undefined;
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

/** What the edit that clears a reply's progress says of its end (`#clearProgress`). */
type ClearingLine = Extract<MessageKey, 'discord.job.end_posted_elsewhere' | 'discord.job.end_may_be_posted_elsewhere' | 'discord.job.end_not_delivered' | 'discord.job.end_not_sent_by_dm'>;

/** Halvings of one image's bytes tried when Discord refuses it alone as too large. */
const MAX_SHRINKS = 3;

/** Stop using the token a little before Discord does, so a result is not lost to a last-second expiry. */
const TOKEN_SAFETY_MS = 30_000;

/**
 * Where a job's reply goes: the interaction's response (edited in place with
 * the interaction token), or, once the token is expired (older than 15
 * minutes, 50027) or the reply is gone, a message in the fallback (the
 * channel, or a DM with the requester) sent with the bot token that mentions
 * the requester. Progress is only ever an edit of the reply; each message of
 * the final result is posted in one place only: the target leaves the token
 * for the fallback once, when Discord says the token can post no more, and
 * never goes back.
 */
export class ReplyTarget {
  readonly #o: ReplyTargetOptions;
  readonly #now: () => number;
  #mode: 'webhook' | 'channel' = 'webhook';
  /** `@original`, or the follow-up that replaced a deleted reply. */
  #webhookMessage = '@original';
  #replyGone = false;
  /** The fallback's channel: the interaction's, or the DM opened with the user (once). */
  #fallbackChannel: Promise<string> | undefined;
  /** The end as the reply shows it, once it is there: what a later note about missing images is added to. */
  #shownEnd: string | undefined;
  /** The files of follow-ups Discord failed on or did not answer: perhaps made, perhaps not, and not sent again. */
  #unconfirmed: string[] = [];
  /** The end, words only, Discord failed on or did not answer: perhaps made, perhaps not, and not sent again. */
  #endUnconfirmed = false;
  /** Discord said the token can post no more (`spendsToken`): not even an edit of the reply would pass. */
  #tokenSpent = false;
  /** The end's files, once the DM it was meant for did not open (`DmNotOpened`): the end is certainly missing there. */
  #endNotOpened: string[] | undefined;
  /** A message of the final reached the fallback: the DM opened after all, where the member can be told the end is missing. */
  #fallbackReached = false;
  /**
   * The end went neither to the reply (known not to show it) nor to the member's DM (Discord refused it there, or did not
   * open the DM): the member is to be told privately, and the reply's progress cleared (`#sayNotSentByDm`).
   */
  #endNotSentByDm = false;

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
   * Shows a final message (result, failure, cancellation): edits the reply, retrying what may pass on a second try, and
   * otherwise posts it as a new message in the fallback. Files Discord refuses with it as too large together (413) follow
   * it, then the extra messages. Each message comes packed — its files one pack, as `packFiles` makes them (the caller's:
   * `JobView` packs a job's images once, the end carrying the first pack) — and is sent as it comes, never packed again.
   * Every message after the end goes one way (`#sendPack`): one message, one file per message only when Discord refuses
   * a pack, a file refused alone re-encoded smaller (and if even that is refused, its words go without it, saying so). An app only the user installed has 5 follow-ups per interaction, so 7 images of
   * a group DM stay in the group. A follow-up Discord refuses because the token or its follow-ups are spent (the sixth
   * there, 40094; the token expired, 50027; the webhook gone, 10015) leaves the token once: it and every one after it go
   * to the fallback, packed the same way — the member's DM there, which Discord refuses too (50007) when the member
   * shares no server with the bot and did not install the app. Any other failure of a follow-up sends it nowhere else
   * (`#post`).
   * An end whose DM did not open (`DmNotOpened`) is certainly missing: when a later message does reach that DM, the
   * member is told there (`#sayMayBeMissing`). An end the DM refused or did not open for, the reply known not to show it,
   * is told of privately unless that line reached the DM, and the reply's progress is cleared (`#sayNotSentByDm`).
   * Resolves whether the user got the first message (`first`: the end itself, with its buttons) and every one (`all`).
   */
  async final(messages: readonly OutgoingMessage[]): Promise<FinalDelivery> {
    const [first, ...more] = messages;
    if (!first) return { first: true, all: true };
    const { delivered, refusedFiles } = await this.#deliverFirst(first);
    let all = delivered;
    // The end's own images first, in their order, then the messages after it.
    if (refusedFiles.length > 0) all = (await this.#sendPack({ content: '', components: [], files: refusedFiles })) && all;
    for (const extra of more) all = (await this.#sendPack(extra)) && all;
    // The DM may be told the end was not delivered (`#sayMayBeMissing`): the member is told no more when that line reached it.
    let toldInDm = false;
    if (this.#unconfirmed.length > 0 || this.#endUnconfirmed || (this.#endNotOpened && this.#fallbackReached)) toldInDm = await this.#sayMayBeMissing();
    if (this.#endNotSentByDm) await this.#sayNotSentByDm(toldInDm);
    return { first: delivered, all };
  }

  /**
   * The member is told which images of follow-ups Discord failed on or did not answer may be missing — or, for an end of
   * words only Discord failed on or did not answer (in a follow-up or the fallback), that the reply may be missing (a follow-up has no
   * nonce, so it is not sent again: it could show twice): in the end's own reply while the token can edit it — an edit
   * shows once however often it is made, so one Discord failed on or did not answer is made again (`finalAttempts` in
   * all); once one is not answered, the line may be there, and it is posted nowhere else, however the tries end (each
   * failed, a later one refused, the token spent or run out before the next) —, else, when Discord refuses the edit (4xx:
   * no edit was made) or the token is spent before any edit failed so, in a message of its own where the next message
   * goes. An end the member's DM did not open for (`DmNotOpened`) is missing for certain when the reply is known not to
   * show it: the same message says so, with its images, in that DM once a later message reached it; when the reply could
   * not be read after an edit Discord failed on (it may show the end), it says the end may be missing. Resolves whether
   * the line saying the end was not delivered reached the DM (Discord took the message there) or may have (Discord failed
   * on it there or did not answer each try, with its nonce) — not when Discord refused it or the DM did not open: either
   * tells the member of it once (`#sayNotSentByDm`).
   */
  async #sayMayBeMissing(): Promise<boolean> {
    const files = this.#unconfirmed.splice(0);
    const lines: string[] = [];
    const endNotOpened = this.#endNotOpened;
    this.#endNotOpened = undefined;
    if (endNotOpened) lines.push(say(this.#o.locale, 'discord.job.reply_not_delivered', { count: endNotOpened.length, files: endNotOpened.join(', ') }));
    // An end with images is named by them; one of words only, by itself.
    if (this.#endUnconfirmed) lines.push(say(this.#o.locale, 'discord.job.reply_may_be_missing'));
    if (files.length > 0) lines.push(say(this.#o.locale, 'discord.job.files_may_be_missing', { count: files.length, files: files.join(', ') }));
    this.#endUnconfirmed = false;
    const note = lines.map((line) => `⚠️ ${line}`).join('\n');
    // Set once Discord failed on or did not answer an edit with the line: it may be there, so it is posted nowhere else,
    // however the tries end (the last one unanswered, the token spent or run out before the next).
    let mayBeThere = false;
    for (let attempt = 1; this.#shownEnd !== undefined && this.#tokenUsable(); attempt++) {
      try {
        await this.#o.webhookRest.patch(Routes.webhookMessage(this.#o.applicationId, this.#o.token, this.#webhookMessage), {
          body: { content: fitContent(`${this.#shownEnd}\n${note}`) },
          auth: false,
        });
        return false;
      } catch (error) {
        this.#noteFailure(error, 'note');
        if (!mayHaveMade(error)) break;
        mayBeThere = true;
        if (!(await this.#tryAgain(attempt))) break;
      }
    }
    if (mayBeThere) {
      this.#o.logger.error({ channelId: this.#o.channelId, files }, 'could not add to a job reply that some of its images may be missing (Discord failed on or did not answer a try: the line may be there, so it is not posted elsewhere)');
      return false;
    }
    const message: OutgoingMessage = { content: note, components: [], files: [] };
    try {
      await this.#post(message, 'note');
      return endNotOpened !== undefined;
    } catch (error) {
      this.#undelivered(error, 'note', message);
      // Discord failed on it or did not answer each try (with its nonce): it may have been made, which counts as told,
      // as the follow-up saying it does (`#sayNotSentByDm`).
      return endNotOpened !== undefined && mayHaveMade(error);
    }
  }

  /**
   * The end itself: the reply edited (tried again while Discord may take it), else a new message in the fallback. Files
   * Discord refuses with it as too large together (413), in either place, are left out of it (it says they follow) and
   * answered as `refusedFiles`.
   */
  async #deliverFirst(message: OutgoingMessage): Promise<{ delivered: boolean; refusedFiles: OutgoingFile[] }> {
    const refusedFiles: OutgoingFile[] = [];
    let current = message;
    const leaveOutFiles = (error: unknown): boolean => {
      if (!isTooLarge(error) || current.files.length === 0) return false;
      // Paid images are not dropped: the message goes without them, and they follow it.
      refusedFiles.push(...current.files);
      current = withoutFiles(current, say(this.#o.locale, 'discord.job.upload_separately'));
      return true;
    };
    let unanswered = false;
    for (let attempt = 1; this.#tokenUsable(); attempt++) {
      const replacing = this.#replyGone;
      try {
        if (replacing) await this.#replaceReply(current);
        else await this.#patchReply(current);
        this.#shownEnd = current.content;
        return { delivered: true, refusedFiles };
      } catch (error) {
        unanswered = mayHaveMade(error) && !this.#replyGone;
        this.#noteFailure(error, 'final');
        if (leaveOutFiles(error)) {
          attempt--;
          continue;
        }
        if (replacing && mayHaveMade(error)) {
          // The follow-up taking the deleted reply's place may have been made (no nonce there): as any follow-up, it is
          // not posted again, here or in the fallback, and the member is told its images may be missing.
          this.#unconfirmed.push(...current.files.map((file) => file.name));
          if (current.files.length === 0) this.#endUnconfirmed = true;
          this.#undelivered(error, 'final', current);
          return { delivered: false, refusedFiles };
        }
        if (this.#mode === 'channel') break;
        // The reply was deleted: a follow-up takes its place at once.
        if (discordErrorCode(error) === DISCORD_ERRORS.unknownMessage && this.#mayTryAgain(attempt)) continue;
        const status = discordErrorStatus(error);
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) break;
        if (!(await this.#tryAgain(attempt))) break;
      }
    }
    // An edit Discord failed on or did not answer may have been made: the reply showing the end already, it is not
    // posted again in the fallback (where it would show twice).
    // Undefined when the reply could not be read: the edit may have landed, so the end is not known to be missing.
    const shows = unanswered ? await this.#replyShows(current) : false;
    if (shows) {
      this.#shownEnd = current.content;
      return { delivered: true, refusedFiles };
    }
    // The reply could not be edited: the end is a new message in the fallback, and so is everything after it.
    this.#leaveToken();
    for (;;) {
      try {
        await this.#post(current, 'final');
        await this.#clearProgress('discord.job.end_posted_elsewhere');
        return { delivered: true, refusedFiles };
      } catch (error) {
        if (!leaveOutFiles(error)) {
          // The DM did not open: nothing was posted there, and the member is told so there if a later message gets in —
          // that the end was not delivered when the reply is known not to show it, else that it may be missing.
          // (A post Discord failed on or did not answer in the fallback has its images counted unconfirmed already.)
          if (error instanceof DmNotOpened) {
            if (shows === false) this.#endNotOpened = current.files.map((file) => file.name);
            else this.#unconfirmed.push(...current.files.map((file) => file.name));
          }
          if ((mayHaveMade(error) || (error instanceof DmNotOpened && shows === undefined)) && current.files.length === 0) this.#endUnconfirmed = true;
          this.#undelivered(error, 'final', current);
          // Discord failed on it or did not answer: it may be in the fallback, so the reply says it may be there, not that it is.
          if (mayHaveMade(error)) await this.#clearProgress('discord.job.end_may_be_posted_elsewhere');
          // Refused in the member's DM, or the DM did not open: the end is nowhere the member sees, and the reply (known not
          // to show it) still shows progress. Told once the messages after it went, or did not (`final`).
          // (Refused in a server channel, the reply keeps its progress and Cancel: the job is marked ended all the same,
          // in its member's history and with what it shows (`unshown`): a Cancel pressed by its member shows that end privately.)
          else if (shows === false && this.#fallbackPlace() === 'dm') this.#endNotSentByDm = true;
          return { delivered: false, refusedFiles };
        }
      }
    }
  }

  /**
   * The end was sent neither in the reply (known not to show it) nor to the member's DM: Discord refused it there (such
   * as 50007, the member takes no DMs from the app) or did not open the DM, whatever it answered. Unless the line saying
   * so reached the DM (`toldInDm`), the member is told privately: an ephemeral follow-up while the token lives and is
   * the member's own (`tokenUserId`), else — the token says it can post no follow-up, or Discord refused that one — the
   * reply itself says it. With another member's token (their Cancel) nothing is posted, and the reply, seen by everyone in
   * a group DM or a channel, says only that the result could not be delivered: not why. A line Discord failed on or did
   * not answer — this follow-up, or the one in the DM — may have been made: it counts as told (the reply does not say it
   * again). The reply then no longer shows progress (`#clearProgress`): it says the result could not be delivered, or
   * that line.
   */
  async #sayNotSentByDm(toldInDm: boolean): Promise<void> {
    this.#endNotSentByDm = false;
    const line = 'discord.job.end_not_sent_by_dm';
    let told = toldInDm;
    const membersToken = (this.#o.tokenUserId ?? this.#o.userId) === this.#o.userId;
    if (!told && membersToken && !this.#tokenSpent && !this.#tokenRunOut()) {
      const message: OutgoingMessage = { content: say(this.#o.locale, line), components: [], files: [] };
      try {
        await this.#postFollowUp(message, { ...bodyOf(message), flags: MessageFlags.Ephemeral });
        told = true;
      } catch (error) {
        // Its follow-ups spent (40094), the token still edits the reply: that one says it.
        if (discordErrorCode(error) === DISCORD_ERRORS.maxFollowUps) this.#o.logger.warn({ what: 'note', code: DISCORD_ERRORS.maxFollowUps, status: discordErrorStatus(error) }, 'Discord refused an update of a job reply');
        else this.#noteFailure(error, 'note');
        told = mayHaveMade(error);
      }
    }
    // With another member's token (their Cancel), the reply, seen by everyone in a group DM or a channel, says only that
    // the result could not be delivered: not that the member's DMs refused the bot.
    await this.#clearProgress(told || !membersToken ? 'discord.job.end_not_delivered' : line);
  }

  /**
   * After the end went to the fallback instead of the reply (Discord refused its edit, or failed on every try and the
   * reply does not show it), or may have (Discord failed on it there, or did not answer, each try), or went nowhere (the
   * member's DM refused it or did not open, `#sayNotSentByDm`): one more edit of the reply, with no files and no buttons,
   * saying where the end went, where it may be, Discord not having confirmed it, or that it could not be delivered (`line`)
   * — so the reply shows no progress and no Cancel that would do nothing. Not tried when the reply is gone, or the token
   * is spent (Discord said so, or its 15 minutes are over): it could not pass. One try (discord.js's own tries aside): a
   * failure is logged and left as it is; nothing else is posted.
   */
  async #clearProgress(line: ClearingLine): Promise<void> {
    if (this.#replyGone || this.#tokenSpent || this.#tokenRunOut()) return;
    const where = this.#fallbackPlace();
    const message: OutgoingMessage = { content: say(this.#o.locale, line, { where }), components: [], files: [] };
    try {
      await this.#o.webhookRest.patch(Routes.webhookMessage(this.#o.applicationId, this.#o.token, this.#webhookMessage), { body: bodyOf(message), auth: false });
    } catch (error) {
      this.#noteFailure(error, 'clear');
      this.#o.logger.warn(
        { channelId: this.#o.channelId, where, code: discordErrorCode(error), status: discordErrorStatus(error) },
        'could not clear the progress of a job reply whose end went elsewhere or nowhere (it is left as it is; nothing else is posted)',
      );
    }
  }

  /** One message of files; each in a message of its own if Discord refuses them together (413), the words with the first. */
  async #sendPack(message: OutgoingMessage): Promise<boolean> {
    if (message.files.length === 1) return this.#sendAlone(message);
    try {
      await this.#post(message, 'files');
      return true;
    } catch (error) {
      if (!isTooLarge(error) || message.files.length === 0) {
        this.#undelivered(error, 'files', message);
        return false;
      }
    }
    let all = true;
    for (const [i, file] of message.files.entries()) all = (await this.#sendAlone(i === 0 ? { ...message, files: [file] } : { content: '', components: [], files: [file] })) && all;
    return all;
  }

  /**
   * A message of one file, re-encoded smaller while Discord refuses it as too large (413). When even that is refused
   * (or it cannot be made smaller), the message goes without it — its words and buttons are not lost with it — saying
   * that this file could not be sent. Whether the file reached Discord.
   */
  async #sendAlone(message: OutgoingMessage): Promise<boolean> {
    const file = message.files[0]!;
    let current: OutgoingFile | undefined = file;
    for (let shrink = 0; current && shrink <= MAX_SHRINKS; shrink++) {
      try {
        await this.#post({ ...message, files: [current] }, 'file');
        return true;
      } catch (error) {
        if (!isTooLarge(error)) {
          this.#undelivered(error, 'file', message);
          return false;
        }
        const target = Math.min(Math.floor(current.data.length / 2), uploadLimitOf(this.#o));
        current = (await fitImage(current.data, formatOf(current), current.name.replace(/\.[^.]+$/, ''), target)).file;
      }
    }
    this.#o.logger.error({ file: file.name }, 'Discord refused an image as too large even shrunk; its message goes without it');
    const without = withoutFiles(message, say(this.#o.locale, 'discord.job.file_not_sent', { file: file.name }));
    try {
      await this.#post(without, 'file');
    } catch (error) {
      this.#undelivered(error, 'file', without);
    }
    return false;
  }

  /**
   * Posts a new message — with the interaction token while it is usable (a follow-up), else in the fallback's channel.
   * Every new message of a final goes through here, and only here does a follow-up's refusal leave the token: when
   * Discord says the token or its follow-ups are spent (`spendsToken`: the token expired, 50027; the webhook gone,
   * 10015; the follow-up limit, 40094), it made no message, and this one goes to the fallback at once, as every later
   * one. Any other failure throws, and the token stays in use for the next message: too large (413), for the caller to
   * split what it sent; another refusal (such as an invalid body, 50035) made no message either, but the fallback would
   * not take it better — a public job's would be a mention in the channel for nothing; and a failure of Discord's (5xx)
   * or no answer may have made it — posted again, it could be there twice (nor does the REST client send a follow-up
   * again: `withPostsSentOnce`). So each message is posted in one place only. Throws the failure of the place that refused it.
   */
  async #post(message: OutgoingMessage, what: string): Promise<void> {
    if (this.#tokenUsable()) {
      try {
        await this.#postFollowUp(message);
        return;
      } catch (error) {
        // `#noteFailure` left the token if Discord says it can post no more (`spendsToken`).
        this.#noteFailure(error, what);
        if (mayHaveMade(error)) this.#unconfirmed.push(...message.files.map((file) => file.name));
        if (!spendsToken(error)) throw error;
      }
    }
    const channelId = await this.#fallbackChannelId();
    await this.#postInChannel(channelId, message, what);
    this.#fallbackReached = true;
    const where = this.#where();
    this.#o.logger.info({ channelId, where, what }, `delivered a job result as a ${where === 'dm' ? 'direct' : 'channel'} message (the interaction token could not be used)`);
  }

  /**
   * A new message in the fallback's channel, with Discord's guard against duplicates (Create Message's `nonce` with
   * `enforce_nonce`: a message with the nonce of one the bot made in the past few minutes is answered with that one, and
   * none is made). So one Discord failed on (5xx) or did not answer, after discord.js's own tries of it (which the REST
   * client keeps for a post with an enforced nonce: `withPostsSentOnce`), is sent again with the same nonce —
   * `finalAttempts` tries at most — and shows once whether or not Discord made it. No request of that nonce, discord.js's
   * own tries included, leaves after `DISCORD_LIMITS.nonceKeptMs` from the first that left (`NonceWindow`; one on its way
   * then is not cut off), nor does a try start once `stop` is aborted. A try none of whose requests left before the
   * window ended (discord.js waited out a rate limit past it) made nothing: the next goes with a new nonce. Throws the
   * last failure.
   */
  async #postInChannel(channelId: string, message: OutgoingMessage, what: string): Promise<void> {
    const body = bodyOf(message, this.#o.userId);
    let window = new NonceWindow({ now: this.#now });
    for (let attempt = 1; ; attempt++) {
      try {
        await postWithNonce(this.#o.botRest, channelId, { body, files: filesOf(message) }, window);
        return;
      } catch (error) {
        this.#noteFailure(error, what);
        // Nothing of it made, and no answer of Discord's says why (its window ended before a request left, or the
        // request was given up on unwritten): tried again, as one that may have been made is. Discord's refusal is not.
        const notSent = !mayHaveMade(error) && discordErrorStatus(error) === undefined;
        if (!notSent && !mayHaveMade(error)) throw error;
        if (!(await this.#tryAgain(attempt)) || (!notSent && !window.open)) {
          if (!notSent) this.#unconfirmed.push(...message.files.map((file) => file.name));
          throw error;
        }
        if (notSent && !window.open) window = new NonceWindow({ now: this.#now });
      }
    }
  }

  /**
   * Whether a write Discord failed on or did not answer `tries` times is tried once more: not once `finalAttempts` (default
   * 3) tries are made; else after the wait before that try (`retryDelaysMs`, default 1 s then 3 s, the last one for every
   * later try) — and not if `stop` ends the wait. The one rule of how long and how often the end, the line about what may
   * be missing, and a channel message are tried.
   */
  async #tryAgain(tries: number): Promise<boolean> {
    if (!this.#mayTryAgain(tries)) return false;
    const delays = this.#o.retryDelaysMs ?? [1000, 3000];
    return this.#wait(delays[Math.min(tries - 1, delays.length - 1)] ?? 1000);
  }

  /** Whether a write tried `tries` times may be tried again: fewer than `finalAttempts` (default 3) tries. */
  #mayTryAgain(tries: number): boolean {
    return tries < (this.#o.finalAttempts ?? 3);
  }

  /** Waits `ms` before another try: true, or false as soon as `stop` is aborted (at once if it is). */
  #wait(ms: number): Promise<boolean> {
    const stop = this.#o.stop;
    if (stop?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const stopped = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        stop?.removeEventListener('abort', stopped);
        resolve(true);
      }, ms);
      stop?.addEventListener('abort', stopped, { once: true });
    });
  }

  /** Whether the reply shows `message` (its words): asked after an edit Discord failed on or did not answer. Undefined when it cannot be read. */
  async #replyShows(message: OutgoingMessage): Promise<boolean | undefined> {
    try {
      const reply = (await this.#o.webhookRest.get(Routes.webhookMessage(this.#o.applicationId, this.#o.token, this.#webhookMessage), { auth: false })) as { content?: string };
      return reply.content === bodyOf(message).content;
    } catch (error) {
      this.#noteFailure(error, 'final');
      return undefined;
    }
  }

  /** A follow-up of `message`, with its body as the job's follow-ups have it (`#followUpBody`) unless `body` says otherwise. */
  async #postFollowUp(message: OutgoingMessage, body: Record<string, unknown> = this.#followUpBody(message)): Promise<{ id: string }> {
    return (await this.#o.webhookRest.post(Routes.webhook(this.#o.applicationId, this.#o.token), {
      body,
      files: filesOf(message),
      auth: false,
      query: new URLSearchParams({ wait: 'true' }),
    })) as { id: string };
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
    this.#webhookMessage = (await this.#postFollowUp(message)).id;
    this.#replyGone = false;
  }

  /**
   * A message of the final that did not reach Discord, or may not have: refused with the token (and not sent elsewhere,
   * `#post`), refused in the fallback, or failed on or not answered (perhaps posted: a follow-up is not sent again, a
   * channel message was, with its nonce, as long as that is safe; the member is told its images may be missing). Logged
   * with its files' names.
   */
  #undelivered(error: unknown, what: string, message: OutgoingMessage): void {
    const where = this.#where();
    const fields = { channelId: this.#o.channelId, where, what, code: discordErrorCode(error), status: discordErrorStatus(error), files: message.files.map((file) => file.name) };
    if (mayHaveMade(error)) {
      // Its files are among those the member is told may be missing (`#sayMayBeMissing`), or, an end of words only, it is.
      const told = { toldMayBeMissing: message.files.length > 0 || (what === 'final' && this.#endUnconfirmed) };
      if (where === 'follow-up') this.#o.logger.error({ ...fields, ...told }, 'could not deliver a job result to Discord (Discord failed or did not answer: the message may have been posted, so it is not sent again)');
      else this.#o.logger.error({ ...fields, ...told }, 'could not deliver a job result to Discord (Discord failed or did not answer each try with its nonce: the message may have been posted)');
    } else if (where === 'follow-up') {
      this.#o.logger.error(fields, 'could not deliver a job result to Discord (refused with the interaction token, for a reason another place would not take it better: it is not sent elsewhere)');
    } else {
      this.#o.logger.error(fields, `could not deliver a job result to Discord (no usable interaction token, and ${where === 'dm' ? 'no DM could be sent to the user' : 'the channel refused the message'})`);
    }
  }

  /** Where a new message goes now, as the log names it: a follow-up while the token is in use, else the fallback's place. */
  #where(): 'follow-up' | 'dm' | 'channel' {
    return this.#mode === 'webhook' ? 'follow-up' : this.#fallbackPlace();
  }

  /** Where a message goes once it is not a follow-up: the user's DM for `fallback: 'dm'`, else the interaction's channel. */
  #fallbackPlace(): 'dm' | 'channel' {
    return this.#o.fallback === 'dm' ? 'dm' : 'channel';
  }

  /**
   * The interaction's channel, or for `fallback: 'dm'` the DM channel with the user (opened once; a failure is tried
   * again next time). A failure to open it, whatever Discord answered, throws `DmNotOpened`: nothing was posted.
   */
  #fallbackChannelId(): Promise<string> {
    if (this.#o.fallback !== 'dm') return Promise.resolve(this.#o.channelId);
    this.#fallbackChannel ??= (this.#o.botRest.post(Routes.userChannels(), { body: { recipient_id: this.#o.userId } }) as Promise<{ id: string }>).then(
      (dm) => dm.id,
      (error: unknown) => {
        throw new DmNotOpened(error);
      },
    );
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
    if (this.#tokenRunOut()) this.#leaveToken();
    return this.#mode === 'webhook';
  }

  /** The token's 15 minutes are over, or all but `TOKEN_SAFETY_MS` of them: it is not used from here on. */
  #tokenRunOut(): boolean {
    return this.#now() - this.#o.issuedAt >= DISCORD_LIMITS.interactionTokenMs - TOKEN_SAFETY_MS;
  }

  /** From now on, only the fallback: the one switch away from the interaction token, never undone. */
  #leaveToken(): void {
    this.#mode = 'channel';
  }

  /**
   * Logs a refusal, and acts on what it says: the token can post no more (`spendsToken`, the one rule of which refusals
   * leave it), or the reply was deleted.
   */
  #noteFailure(error: unknown, what: string): void {
    const code = discordErrorCode(error);
    // Logged with the mode the refused call was made in, before the refusal switches it.
    this.#o.logger.warn({ what, code, status: discordErrorStatus(error), mode: this.#mode, err: code === undefined ? loggableError(error) : undefined }, 'Discord refused an update of a job reply');
    if (spendsToken(error)) {
      this.#tokenSpent = true;
      this.#leaveToken();
    } else if (code === DISCORD_ERRORS.unknownMessage && this.#webhookMessage === '@original') this.#replyGone = true;
  }
}

function bodyOf(message: OutgoingMessage, mentionUserId?: string): Record<string, unknown> & { content: string } {
  const content = mentionUserId ? `<@${mentionUserId}> ${message.content}` : message.content;
  return {
    content: fitContent(content),
    components: message.components,
    attachments: message.files.map((file, i) => ({ id: i, filename: file.name })),
    allowed_mentions: mentionUserId ? { parse: [], users: [mentionUserId] } : { parse: [] },
  };
}

/** A message's words within Discord's most characters, cut with an ellipsis. */
function fitContent(content: string): string {
  return content.length <= DISCORD_LIMITS.contentChars ? content : `${content.slice(0, DISCORD_LIMITS.contentChars - 1)}…`;
}

/**
 * Discord did not open the member's DM (`POST /users/@me/channels`), so the message meant for it was posted nowhere —
 * whether Discord refused (4xx), failed (5xx) or did not answer. Its `status` and `code` are the failure's, for the log.
 */
class DmNotOpened extends Error {
  readonly status: number | undefined;
  readonly code: number | undefined;
  constructor(failure: unknown) {
    super('Discord did not open a DM with the user', { cause: failure });
    this.status = discordErrorStatus(failure);
    this.code = discordErrorCode(failure);
  }
}

/**
 * A failure after which Discord may have made the message all the same: Discord failed on it (5xx) or did not answer
 * (no status) — a follow-up sent once (`withPostsSentOnce`), a channel message after discord.js's own tries of it with
 * its nonce — not a DM that did not open (`DmNotOpened`), nor one Discord refused or none of whose requests was written
 * (`madeNothing`, the one rule of it: a channel message's window says): nothing was posted.
 */
function mayHaveMade(error: unknown): boolean {
  return !(error instanceof DmNotOpened) && !madeNothing(error);
}

function filesOf(message: OutgoingMessage): RawFile[] {
  return message.files.map((file) => ({ name: file.name, data: file.data, contentType: file.contentType }));
}

/** A refusal as too large (413, 40005): a file over the upload limit, or a request over Discord's size. */
function isTooLarge(error: unknown): boolean {
  return discordErrorCode(error) === DISCORD_ERRORS.requestEntityTooLarge;
}

/**
 * A refusal of a follow-up that says the interaction token can post no more (no message was made): the token expired
 * (50027), its webhook is gone (10015), or an interaction only the user's install authorized sent its 5 follow-ups
 * (40094).
 */
function spendsToken(error: unknown): boolean {
  const code = discordErrorCode(error);
  return code === DISCORD_ERRORS.invalidWebhookToken || code === DISCORD_ERRORS.unknownWebhook || code === DISCORD_ERRORS.maxFollowUps;
}

/** The message without its files, `note` saying why after its words (alone, if it had none). */
function withoutFiles(message: OutgoingMessage, note: string): OutgoingMessage {
  return { ...message, files: [], content: message.content ? `${message.content}\n⚠️ ${note}` : `⚠️ ${note}` };
}

function formatOf(file: OutgoingFile): OutputFormat {
  return file.contentType === 'image/jpeg' ? 'jpeg' : file.contentType === 'image/webp' ? 'webp' : 'png';
}

