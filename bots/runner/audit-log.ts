import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DEFAULTS, type LoggerLike } from 'pictor';
import { CLAIM_WAIT_MS, isSpendRefusalCode, waitAtMost } from 'pictor/internal';
import { digestKeyOf, type Space } from '../state/index.js';
import { StateRecordsUnreadableError } from '../state/FileStateStore.js';
import { JobRefusedError } from './JobRefusedError.js';
import { endFactsOf, linkSeenBy } from './end-facts.js';
import type { JobEnd, JobHistory } from './job-history.js';
import { scopeKeyOf } from './member-keys.js';
import { isDmScope, POLICY_REFUSAL_CODES, type JobOptions, type JobSpec, type MessageSeenBy, type Platform, type Requester } from './types.js';

/**
 * The audit channel: a server's/workspace's admins choose a channel where every job that ended (who, where, the
 * prompt as sent, options, cost, a link to a public result) and every refusal by a rule or a budget is posted. This
 * module is platform-neutral: the runner hands it entries as jobs end and refusals are decided, it batches them per
 * audit channel, and a surface's `AuditPoster` renders and posts each batch. A post that fails is logged and counted,
 * never shown to the member nor changing the job.
 */

/** Characters of a prompt an entry keeps (a longer prompt is cut, with "…"): what a post can show, and what is kept for `forget`. */
export const AUDIT_PROMPT_MAX = 1000;

const id = z.string().min(1).max(100);
export const AuditEntrySchema = z.object({
  /** `job`: a job that ended; `refusal`: a job a rule or a budget refused. */
  type: z.enum(['job', 'refusal']),
  userId: id,
  channelId: z.string().max(100),
  kind: z.enum(['generate', 'edit']),
  /** The prompt as sent (a refusal: as asked; empty before a form), cut at `AUDIT_PROMPT_MAX`; empty once erased. */
  prompt: z.string().max(AUDIT_PROMPT_MAX + 1),
  /** The member asked `forget`: the post shows the erased marker instead of the prompt. */
  erased: z.boolean().optional(),
  n: z.number().int().optional(),
  size: z.string().max(20).optional(),
  quality: z.string().max(20).optional(),
  /** A job: how it ended; a refusal: its code (`blocked_word`, `budget_user_daily` …). */
  status: z.string().max(64),
  costUsd: z.number().nonnegative().optional(),
  /** What the job may cost at most, when its charge was pending as its end was recorded (`JobEnd`'s `mayCost`). */
  mayCostUsd: z.number().nonnegative().optional(),
  /** Shown only to the member: the audit channel records it, without a link. */
  private: z.boolean().optional(),
  link: z.string().max(500).optional(),
  /** The word a `blocked_word` refusal named. */
  word: z.string().max(200).optional(),
  at: z.number(),
});
export type AuditEntry = z.output<typeof AuditEntrySchema>;

/** One message of an audit channel: its entries, and how many entries before them were dropped (the queue was full). */
export interface AuditPost {
  platform: Platform;
  scopeId: string;
  channelId: string;
  /** The language the admin who chose the channel reads. */
  locale: string | undefined;
  entries: AuditEntry[];
  skipped: number;
  /**
   * The same for every try of one message and no other (24 characters): a platform that can take it (Discord's message
   * `nonce`, enforced) creates the message once however often it is sent within a few minutes.
   */
  nonce?: string | undefined;
  /**
   * For a post sent again as it was: how long ago it was first sent (ms, by the audit log's clock, so that one clock
   * measures it; its poster counts on from now by its own). The platform keeps its nonce for `AuditPoster.replayMs` from
   * then, and its poster lets no send of it leave after that — one could make a second message. That first send may have
   * made it: a replay the platform no longer takes is lost (`AuditPostLost`), not refused.
   */
  sentMsAgo?: number | undefined;
}

/**
 * A surface's way to post audit messages: it renders entries in its platform's words and posts them, within its
 * platform's limits (`maxEntries` per message). Every method throws when the platform refused (the error's `code`
 * is logged, nothing else of it).
 */
export interface AuditPoster {
  /** Most entries in one message (Discord: 10 embeds; Slack: what its blocks hold). */
  readonly maxEntries: number;
  /**
   * The platform creates a message once for its `nonce` sent within this long of its first send (Discord:
   * `DISCORD_LIMITS.nonceKeptMs`): a post whose answer was lost (`AuditPostLost`) is sent again as it was then, within
   * it, and the platform answers the message it made, if it made one. No send of a post starts after it (counted from
   * its `sentMsAgo`). Unset: the platform has no such guard, and a lost post is never sent again.
   */
  readonly replayMs?: number | undefined;
  /**
   * Posts one message; answers its id (Discord's message id, Slack's `ts`). Throws what the platform refused (nothing
   * was posted: tried again later), or `AuditPostLost` when the answer was lost after sending (the message may be there).
   */
  post(post: AuditPost): Promise<{ messageId: string }>;
  /** Writes a posted message again (after a member's `forget`). */
  edit(post: AuditPost & { messageId: string }): Promise<void>;
  /** The first post when an admin chooses the channel: proves the bot can post there (throws `AuditChannelError` when not). */
  greet(where: { scopeId: string; channelId: string; locale: string | undefined }): Promise<void>;
}

/** Why the bot cannot post in a chosen audit channel. `not_in_channel`: Slack, the bot must be invited; `no_permission`: Discord permissions, or a channel it cannot see. */
export type AuditChannelProblem = 'not_in_channel' | 'no_permission' | 'not_found' | 'failed';

export class AuditChannelError extends Error {
  override readonly name = 'AuditChannelError';
  constructor(
    readonly problem: AuditChannelProblem,
    /** The platform's own code (Discord's 50013, Slack's `not_in_channel`), for the log. */
    readonly platformCode: string | number | undefined,
    /** A post refused though its message was made with the skipped note (Discord without Embed Links): that note was said. */
    readonly noteShown = false,
  ) {
    // The problem's code is the message: what the log shows beside the platform's code.
    super(problem);
  }

  /** A greeting that failed for no reason of the channel's, named as the log names any error (`codeOf`): `timeout`, `ECONNRESET`, an HTTP status. */
  static failedOf(error: unknown): AuditChannelError {
    return new AuditChannelError('failed', codeOf(error));
  }
}

/**
 * A post whose answer was lost after it was sent (a timeout, an abort, a connection cut, a 5xx without a platform's
 * answer): the message may be in the channel. Never sent again blindly: only as it was, where the platform makes one
 * message of its `nonce` (`AuditPoster.replayMs`); otherwise its entries are let go of, as maybe posted.
 */
export class AuditPostLost extends Error {
  override readonly name = 'AuditPostLost';
  constructor(
    /** What the log shows (`timeout`, `ECONNRESET`, an HTTP status), never the request. */
    readonly code: string | number,
  ) {
    super('the platform’s answer to an audit post was lost');
  }

  /** The lost answer whose error was `error`, named as the log names any error (`codeOf`): `failed` when it has no code. */
  static of(error: unknown): AuditPostLost {
    return new AuditPostLost(codeOf(error) ?? 'failed');
  }
}

/** What an audit channel's posts have done lately in this process, for the admins' settings view. */
export interface AuditTrouble {
  channelId: string;
  /** Posts that failed in a row. */
  failures: number;
  /** The last failure's code (a platform's code, or `failed`). */
  code: string;
  at: number;
}

/** A posted message as kept for `forget` (the `audit-posts` space): where it is and what it shows, to write it again. */
export interface AuditRecord {
  platform: Platform;
  scopeId: string;
  channelId: string;
  messageId: string;
  locale?: string | undefined;
  skipped: number;
  entries: AuditEntry[];
  /**
   * A `forget` erased prompts from `entries` that the platform did not take yet (its edit failed): the message may
   * still show them. Kept past the usual rule (a record with no prompt goes) until an edit from `entries` succeeds.
   */
  pending?: true | undefined;
}

/** What a member's `forget` did to the audit posts holding their entries: edited, or still to edit (retried later). */
export interface AuditForgotten {
  edited: number;
  pending: number;
}

/** A post still to edit, known here: its platform, how long it waits between tries now, and when it is tried next. */
interface StillToEdit {
  platform: Platform;
  waitMs: number;
  nextAt: number;
}

/** What one attempt to write a post again came to (`pending`: the platform refused; kept as still to edit; `gone`: no record, or no message left to edit). */
type EraseOutcome = 'edited' | 'pending' | 'failed' | 'unchanged' | 'gone';

/** The audit channel of a scope (`auditChannel` of its settings), or undefined. */
export type AuditChannelOf = (requester: Pick<Requester, 'platform' | 'scopeId'>) => Promise<{ channelId: string; locale?: string | undefined } | undefined>;

export interface AuditLogOptions {
  channelOf: AuditChannelOf;
  /** Where posted messages are kept for `forget` (the bots' state: its `audit-posts` space). Without it, `forget` cannot reach the posts. */
  posts?: Pick<Space<AuditRecord>, 'get' | 'put' | 'update' | 'delete' | 'entries'> | undefined;
  /**
   * Where the ends of jobs posted are kept (the bots' state: its `audit-ended` space), by the job's key: a job's end
   * recorded again once it was posted is not posted again. Without it, only this process's repeats are told.
   */
  ended?: Pick<Space<true>, 'get' | 'put'> | undefined;
  /**
   * Whether a member erased their prompts (`JobHistory.forgotten`) since an entry of theirs was made (a job's end: when
   * the job was accepted; a refusal: when it was decided). Asked for each entry still carrying a prompt just before its
   * post, and again once it was posted and kept: a `forget` asked on another replica erases the posts kept and the
   * entries waiting there, never those waiting here. Without it, only this process's `forget` reaches its entries.
   * The history's own rule, which never rejects: a mark that cannot be read counts as erased there (logged), its one place.
   */
  forgotten?: Pick<JobHistory, 'forgotten'> | undefined;
  /** How long entries are collected before a post, and the least time between two posts to one channel. Default 2 s. */
  batchMs?: number | undefined;
  /** Entries waiting per channel; past it the oldest are dropped and the next post says how many. Default 200. */
  maxQueued?: number | undefined;
  /** How long a channel waits after a failed post before trying again; twice as long after each failure, up to an hour. Default a minute (`AUDIT_LIMITS.retryMs`). */
  postRetryMs?: number | undefined;
  /** How long a member's `forget` waits for a post of theirs under way before answering it as still to edit (edited once it lands). Default `CLAIM_WAIT_MS`. */
  forgetWaitMs?: number | undefined;
  logger?: LoggerLike | undefined;
  now?: (() => number) | undefined;
}

/**
 * `retryMs`/`retryMaxMs`: posts whose edit failed at a forget are edited again after `retryMs`, then after twice as
 * long each time some still fail, up to `retryMaxMs` between two tries (one try a post each time); so is a channel's
 * post that failed tried again, its entries waiting in its queue meanwhile.
 */
export const AUDIT_LIMITS = { batchMs: 2_000, maxQueued: 200, troubleAfter: 3, retryMs: 60_000, retryMaxMs: 3_600_000 } as const;

/**
 * The audit log's wait before trying again after one more failed try: `first` (`retryMs` unless given) the first time,
 * then twice the last one (`last`), up to `retryMaxMs`. Its posts and their edits wait by it; so does a forget's Home
 * tab that Slack did not take, on the same schedule.
 */
export function auditRetryWaitMs(last: number | undefined, first: number = AUDIT_LIMITS.retryMs): number {
  return last === undefined ? first : Math.min(last * 2, AUDIT_LIMITS.retryMaxMs);
}

/** The refusals the audit channel records: a rule of the server/workspace or the operator, a budget, a cap, a cooldown, the breaker. Not typos, a restart or a full queue. */
export function isAuditedRefusal(code: string): boolean {
  return ((POLICY_REFUSAL_CODES as readonly string[]).includes(code) && code !== 'dms_not_enabled') || isSpendRefusalCode(code);
}

/**
 * An entry waiting for its post: a job's end with its key (`once`), and what tells its `jobEnded` it was posted or
 * dropped; whose it is and when it was made, for `forgotten`.
 */
interface Queued {
  entry: AuditEntry;
  once: string | undefined;
  settle: () => void;
  requester: Requester;
  madeAt: number;
}

/** An audit channel's entries waiting for their post (`skipped`: dropped since the last post, the queue being full). */
interface ChannelQueue extends Omit<AuditPost, 'entries'> {
  items: Queued[];
  timer: ReturnType<typeof setTimeout> | undefined;
  posting: Promise<void> | undefined;
  /** The post on its way to the platform, if any (its entries are in neither `items` nor a record yet). */
  sending: Sending | undefined;
  /** Its last post failed: how long the next try waits (`retryMs`, twice as long after each failure, up to `retryMaxMs`). */
  failWaitMs: number | undefined;
  /** A post whose answer was lost, to send again as it was (same entries, note and nonce) at the next try, within its poster's `replayMs`. */
  lost: Lost | undefined;
}

/** A post whose answer was lost: its entries, what it showed, its nonce, and when it was first sent. */
interface Lost {
  items: Queued[];
  entries: AuditEntry[];
  skipped: number;
  nonce: string;
  at: number;
}

/**
 * A post under way: its entries, whether it has landed (kept, or failed), and the members (`<platform>:<user>`) whose
 * `forget` here stopped waiting for it — it erases their entries itself once it lands, as those forgets counted it.
 */
interface Sending {
  items: Queued[];
  landed: boolean;
  /** Resolves once it landed. */
  landing: Promise<void>;
  land: () => void;
  handedOver: Set<string>;
  /** How it landed: posted and kept (its record's key), or not posted (nothing to edit); undefined until then. */
  outcome: { kept: string } | 'unposted' | 'unkept' | undefined;
  /** What its own erase of late entries came to, once done (a forget that handed it over counts that). */
  erased: EraseOutcome | undefined;
}

const noopLogger: LoggerLike = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Collects audit entries per audit channel and posts them in batches: the first entry waits `batchMs` for others,
 * then one message takes up to the poster's `maxEntries`; the next post of that channel comes `batchMs` after the
 * last ended, so a busy server gets one message every couple of seconds, never a message per job. At most
 * `maxQueued` entries wait per channel (the oldest go first, counted and said in the next post). A failed post is
 * logged and its entries wait again, first in line, for the channel's next try (`retryMs`, then twice as long after
 * each failure, up to `retryMaxMs`); after `troubleAfter` failures in a row the admins' settings view says so.
 */
export class AuditLog {
  readonly #channelOf: AuditChannelOf;
  readonly #posts: AuditLogOptions['posts'];
  readonly #ended: AuditLogOptions['ended'];
  readonly #forgotten: AuditLogOptions['forgotten'];
  readonly #batchMs: number;
  readonly #maxQueued: number;
  readonly #postRetryMs: number;
  readonly #forgetWaitMs: number;
  readonly #logger: LoggerLike;
  readonly #now: () => number;
  readonly #posters = new Map<Platform, AuditPoster>();
  readonly #queues = new Map<string, ChannelQueue>();
  readonly #trouble = new Map<string, AuditTrouble>();
  /** Entries on their way to a queue (their channel being looked up): `flush` waits for them. */
  readonly #arriving = new Set<Promise<void>>();
  /**
   * The job ends queued or being posted here, by key, each with what resolves once it was posted or will not be: a
   * repeat meanwhile is not entered again, and resolves as that first entry does (never before it was posted).
   */
  readonly #entering = new Map<string, Promise<void>>();
  /** Members (`<platform>:<user>`) whose `forget` is under way here, with how many: it erases the posts this process makes meanwhile, and counts them. */
  readonly #forgetting = new Map<string, number>();
  /** Set by `flush` (the bot stops): what arrives later is posted at once, not after a batch. */
  #closing = false;
  /** Records (`audit-posts` keys) of posts still to edit, known here (from a failed edit, a forget's list, or the start's scan), each with its own wait. */
  readonly #pending = new Map<string, StillToEdit>();
  /** Platforms whose records were scanned for posts left to edit by an earlier run (the first round after `setPoster`). */
  readonly #scanned = new Set<Platform>();
  /** Posts being written again here, by record: one edit at a time a post, so a later edit never shows an older record. */
  readonly #editing = new Map<string, Promise<unknown>>();
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The round of retries under way: `flush` waits for it. */
  #round: Promise<void> | undefined;
  /** When the posts an earlier run left to edit are looked for (a platform's poster came and was not scanned for yet). */
  #scanAt: number | undefined;

  constructor(options: AuditLogOptions) {
    this.#channelOf = options.channelOf;
    this.#posts = options.posts;
    this.#ended = options.ended;
    this.#forgotten = options.forgotten;
    this.#batchMs = options.batchMs ?? AUDIT_LIMITS.batchMs;
    this.#maxQueued = options.maxQueued ?? AUDIT_LIMITS.maxQueued;
    this.#postRetryMs = options.postRetryMs ?? AUDIT_LIMITS.retryMs;
    this.#forgetWaitMs = options.forgetWaitMs ?? CLAIM_WAIT_MS;
    this.#logger = options.logger ?? noopLogger;
    this.#now = options.now ?? Date.now;
  }

  /**
   * A surface says how it posts (once, as it starts); without a poster its platform's entries are dropped, and so are
   * its posts still to edit known here (they stay so in `audit-posts`: a poster that comes back has them looked for again).
   */
  setPoster(platform: Platform, poster: AuditPoster | undefined): void {
    if (poster) this.#posters.set(platform, poster);
    else {
      this.#posters.delete(platform);
      for (const [key, still] of this.#pending) if (still.platform === platform) this.#pending.delete(key);
      this.#scanned.delete(platform);
    }
    // As the surface starts: posts an earlier run left to edit are looked for a retryMs later, and edited then.
    if (poster && !this.#scanned.has(platform) && this.#scanAt === undefined) this.#scanAt = this.#now() + AUDIT_LIMITS.retryMs;
    this.#scheduleRetry();
  }

  /**
   * A job that ended: recorded once its final update was shown, with `link` only when everyone can open its message
   * (`linkSeenBy` of its `private` and `seenBy`). Given its `key`, posted
   * once: a job whose end was posted before (a sweep recording again an end whose mark a crash cut off) or is waiting
   * for its post here is not entered again. Its key is kept once its post succeeded, never before: a stop or a crash
   * that drops a waiting entry leaves the end to be entered again. Resolves once the entry was posted, or will not be
   * (no audit channel, entered before, dropped as the queue was full or the channel changed); a post that failed leaves
   * it waiting for the next try, and one that failed at a stop leaves it unresolved (not posted: the sweep enters it
   * again at the next start). A repeat while its first entry waits here resolves as
   * that one does. Never rejects. `acceptedAt`: when the job was accepted, for `forgotten` (without it, the end's time).
   */
  jobEnded(
    requester: Requester,
    job: { key?: string | undefined; kind: JobSpec['kind']; prompt: string; options: JobOptions; private: boolean; seenBy?: MessageSeenBy | undefined; acceptedAt?: number | undefined },
    final: JobEnd,
    link?: string,
  ): Promise<void> {
    const once = job.key === undefined ? undefined : digestKeyOf(`ended:${scopeKeyOf(requester)}:${job.key}`);
    const entry: AuditEntry = {
      type: 'job',
      userId: requester.userId,
      channelId: requester.channelId,
      kind: job.kind,
      prompt: cut(job.prompt),
      n: job.options.n ?? DEFAULTS.n,
      ...endFactsOf(final, job.options),
      status: final.type === 'failed' ? `failed:${final.code}` : final.type,
      ...(job.private && { private: true }),
      // The admins read it: a link only their member can open (a private job's, one in a DM) leads them nowhere (`linkSeenBy`).
      ...(link && linkSeenBy(job) === 'everyone' && { link }),
      at: this.#now(),
    };
    // Whether its member erased their prompts while it ran is asked as it is posted (`forgotten`), not here.
    return this.#add(requester, entry, job.acceptedAt ?? entry.at, once);
  }

  /** A refusal the intake decided; only those by a rule or a budget are recorded (`isAuditedRefusal`). Never throws. */
  refused(requester: Requester, job: { kind: JobSpec['kind']; prompt: string; options?: JobOptions | undefined; private?: boolean | undefined }, error: unknown): void {
    if (!(error instanceof JobRefusedError) || !isAuditedRefusal(error.code)) return;
    const { word } = error;
    const at = this.#now();
    void this.#add(requester, {
      type: 'refusal',
      userId: requester.userId,
      channelId: requester.channelId,
      kind: job.kind,
      prompt: cut(job.prompt),
      ...(job.options?.n !== undefined && { n: job.options.n }),
      ...(job.options?.size !== undefined && { size: job.options.size }),
      ...(job.options?.quality !== undefined && { quality: job.options.quality }),
      status: error.code,
      ...(job.private && { private: true }),
      ...(word !== undefined && { word: word.slice(0, 200) }),
      at,
    }, at);
  }

  /** What the admins' settings view says of the scope's audit posts: undefined while they succeed. */
  trouble(requester: Pick<Requester, 'platform' | 'scopeId'>): AuditTrouble | undefined {
    const trouble = this.#trouble.get(scopeKeyOf(requester));
    return trouble && trouble.failures >= AUDIT_LIMITS.troubleAfter ? { ...trouble } : undefined;
  }

  /** The first post in a channel an admin chooses (throws `AuditChannelError` when the bot cannot post there). */
  async greet(requester: Requester, channelId: string): Promise<void> {
    const poster = this.#posters.get(requester.platform);
    if (!poster) throw new AuditChannelError('failed', 'no_poster');
    await poster.greet({ scopeId: requester.scopeId, channelId, locale: requester.locale });
    this.#trouble.delete(scopeKeyOf(requester));
  }

  /**
   * Erases a member's prompts from the audit posts kept (`audit-posts`, as long as its TTL): each record first keeps no
   * prompt of theirs, then its message is written again from it with the erased marker (a record left with no prompt
   * then goes). Entries still waiting to be posted here lose their prompt too; those waiting on another replica ask
   * `forgotten` there. A message the platform did not let us edit (logged) stays known as still to edit, without the
   * prompt, and is edited again: at the next forget of a member with an entry in it, and by the retries (`AUDIT_LIMITS`).
   * Answers how many posts holding their entries were edited, and how many are still to edit.
   */
  async forget(userKey: string): Promise<AuditForgotten> {
    this.#forgetting.set(userKey, (this.#forgetting.get(userKey) ?? 0) + 1);
    try {
      return await this.#forget(userKey);
    } finally {
      const left = this.#forgetting.get(userKey)! - 1;
      if (left > 0) this.#forgetting.set(userKey, left);
      else this.#forgetting.delete(userKey);
    }
  }

  async #forget(userKey: string): Promise<AuditForgotten> {
    const [platform, userId] = [userKey.slice(0, userKey.indexOf(':')), userKey.slice(userKey.indexOf(':') + 1)];
    const theirs = (e: AuditEntry) => e.userId === userId;
    // Entries whose audit channel is still being read join their queue first, then lose their prompt with the rest.
    await Promise.allSettled([...this.#arriving]);
    // Posts on their way holding an entry of theirs: their entries lose the prompt too (a post that fails is tried
    // again without it). Only those are waited for, and only a while: another server's slow post never holds this answer.
    const sending: Sending[] = [];
    for (const queue of this.#queues.values()) {
      if (queue.platform !== platform) continue;
      // A post whose answer was lost is sent again as it was, then edited without their prompt once it landed.
      for (const item of [...queue.items, ...(queue.lost?.items ?? [])]) if (theirs(item.entry)) item.entry = erase(item.entry);
      const post = queue.sending;
      if (post && !post.landed && post.items.some((i) => theirs(i.entry))) {
        for (const item of post.items) if (theirs(item.entry)) item.entry = erase(item.entry);
        sending.push(post);
      }
    }
    if (!this.#posts) {
      // No record is kept: each post erases their entries itself once it lands.
      for (const post of sending) post.handedOver.add(userKey);
      return { edited: 0, pending: 0 };
    }
    const done: AuditForgotten = { edited: 0, pending: 0 };
    // One that landed meanwhile is kept, found below and written again; one still on its way is handed over: it erases
    // their entries once it lands, counted now as still to edit (a failed edit there leaves it to the retries).
    if (sending.length > 0) await waitAtMost(Promise.all(sending.map((post) => post.landing)), this.#forgetWaitMs);
    const handed = sending.filter((post) => !post.landed);
    for (const post of handed) post.handedOver.add(userKey);
    // Theirs: a post showing a prompt of theirs, or one still to edit holding an entry of theirs. Another's post still
    // to edit is left to the retries (known here from now on), not edited before this member's answer.
    const records: string[] = [];
    // Records that failed to read (the data folder's: EACCES, EISDIR) end the listing with an error naming how many,
    // once the others were gone through: the posts found are erased all the same, then the forget fails with it.
    let unread: unknown;
    try {
      for await (const { key, value } of this.#posts.entries()) {
        if (value.platform !== platform) continue;
        if (value.entries.some((e) => theirs(e) && (e.prompt !== '' || value.pending === true))) records.push(key);
        else if (value.pending && !this.#pending.has(key)) this.#stillToEdit(key, platform, undefined);
      }
    } catch (error) {
      if (!(error instanceof StateRecordsUnreadableError)) throw error;
      unread = error;
    }
    // A post handed over counts once: not when it failed (nothing was posted, its entries wait erased), nor when it
    // landed before the listing (listed, it is edited and counted below); edited when its own erase was done by then.
    for (const post of handed) {
      const { outcome } = post;
      if (outcome === 'unposted' || (typeof outcome === 'object' && records.includes(outcome.kept))) continue;
      if (post.erased === 'edited') done.edited++;
      else done.pending++;
    }
    for (const key of records) {
      const outcome = await this.#erase(key, theirs);
      if (outcome === 'edited') done.edited++;
      else if (outcome === 'pending') done.pending++;
    }
    this.#logger.info({ userKey, posts: done.edited, pending: done.pending }, 'erased a member’s prompts from the audit posts');
    if (unread !== undefined) throw unread;
    return done;
  }

  /**
   * Erases the entries `erasing` picks from a posted message's record (under `key`), then writes the message again
   * from the record as kept now, read once here: our storage keeps no erased prompt from the first step on, and the
   * record says the message is still to edit (`pending`) until the platform took the edit; then a record left with no
   * prompt goes. The message is never made of a record its caller read earlier: another member's forget (on another
   * replica) may have erased their entry since, and an edit made of the older record would write their prompt back; a
   * record gone meanwhile (every prompt erased and edited), or no longer still to edit with nothing to erase, is not
   * written again. `unkept`: a post whose record is not in the `audit-posts` space (it could not be kept), written from
   * it, and kept as still to edit if that edit fails. One edit at a time a post here.
   */
  async #erase(key: string, erasing: (entry: AuditEntry, index: number) => boolean, unkept?: AuditRecord): Promise<EraseOutcome> {
    const before = this.#editing.get(key) ?? Promise.resolve();
    const now = before.then(() => this.#eraseNow(key, erasing, unkept));
    const settled = now.catch(() => undefined);
    this.#editing.set(key, settled);
    void settled.then(() => this.#editing.get(key) === settled && this.#editing.delete(key));
    return now;
  }

  async #eraseNow(key: string, erasing: (entry: AuditEntry, index: number) => boolean, unkept: AuditRecord | undefined): Promise<EraseOutcome> {
    const posts = this.#posts;
    const kept = unkept === undefined;
    const newly = (r: AuditRecord) => r.entries.some((e, i) => erasing(e, i) && !e.erased && e.prompt !== '');
    const erased = (r: AuditRecord): AuditRecord => ({ ...r, entries: r.entries.map((e, i) => (erasing(e, i) && !e.erased ? erase(e) : e)), pending: true });
    let current: AuditRecord | undefined;
    if (!unkept) {
      if (!posts) return this.#done(key, 'gone');
      current = await posts.get(key);
      if (!current) return this.#done(key, 'gone');
      // Nothing to erase nor to edit again: left as it is (not written, so its TTL runs from its last change).
      if (!newly(current) && !current.pending) return this.#done(key, 'unchanged');
      if (newly(current)) current = (await posts.update(key, (r) => r && erased(r))).after;
      if (!current) return this.#done(key, 'gone');
    } else current = erased(unkept);
    const poster = this.#posters.get(current.platform);
    const scopeKey = scopeKeyOf(current);
    try {
      if (!poster) throw new Error('no poster for this platform in this process');
      await poster.edit({ platform: current.platform, scopeId: current.scopeId, channelId: current.channelId, locale: current.locale, entries: current.entries, skipped: current.skipped, messageId: current.messageId });
    } catch (error) {
      const code = codeOf(error);
      if (isMessageGone(error)) {
        // The message (or its channel) is gone: nothing left to edit, ever.
        this.#logger.info({ scopeKey, channelId: current.channelId, code }, 'an audit post to edit is gone; its record is dropped');
        if (posts) await posts.delete(key);
        return this.#done(key, 'gone');
      }
      if (!posts) {
        this.#logger.warn({ scopeKey, channelId: current.channelId, code }, 'could not erase a member’s prompt from an audit post');
        return 'failed';
      }
      if (!kept) {
        const put = await posts.put(key, current).then(
          () => true,
          (e: unknown) => (this.#logger.warn({ scopeKey, code: codeOf(e) }, 'could not keep an audit post still to edit; its prompt stays in the channel'), false),
        );
        if (!put) return 'failed';
      }
      const wait = this.#stillToEdit(key, current.platform, this.#pending.get(key));
      // Said when it first fails and when its tries come as rarely as they will; between, for the debug log only.
      const log = wait.first || wait.atMost ? this.#logger.warn.bind(this.#logger) : this.#logger.debug.bind(this.#logger);
      log({ scopeKey, channelId: current.channelId, code, waitMs: wait.waitMs }, wait.atMost && !wait.first ? 'an audit post still cannot be edited; tried again once an hour until its record expires' : 'could not erase a member’s prompt from an audit post; it is edited again later');
      return 'pending';
    }
    if (!posts || !kept) return this.#done(key, 'edited');
    // Released only as it was edited: another process may have erased an entry since it was read here, and this edit
    // (made of the older record) may have landed after theirs — then it stays still to edit, and is edited again now.
    const edited = current.entries;
    const { after } = await posts.update(key, (r) => r && (sameEntries(r.entries, edited) ? released(r) : { ...r, pending: true }));
    if (after?.pending) this.#stillToEdit(key, after.platform, undefined, 0);
    else if (!after && (await this.#erasedSince(key, current))) this.#stillToEdit(key, current.platform, undefined, 0);
    else this.#pending.delete(key);
    return 'edited';
  }

  /**
   * A record gone while its edit (made of `edited`) was under way: another process's forget erased its last prompts
   * and released it, maybe before this older edit landed. The prompts this edit showed whose members forgot since
   * (`forgotten`) are erased again: the record is put back, still to edit (one gone by its TTL or its bound, whose
   * members did not forget, stays gone). Answers whether it was put back.
   */
  async #erasedSince(key: string, edited: AuditRecord): Promise<boolean> {
    const forgotten = this.#forgotten;
    if (!forgotten || !this.#posts) return false;
    const asked = await Promise.all(
      edited.entries.map((e) => e.prompt !== '' && forgotten.forgotten({ platform: edited.platform, scopeId: edited.scopeId, channelId: e.channelId, userId: e.userId } as Requester, e.at)),
    );
    if (!asked.some(Boolean)) return false;
    await this.#posts.put(key, { ...edited, entries: edited.entries.map((e, i) => (asked[i] ? erase(e) : e)), pending: true });
    return true;
  }

  /** A post no longer to edit here (`outcome` is answered as it is). */
  #done(key: string, outcome: EraseOutcome): EraseOutcome {
    this.#pending.delete(key);
    return outcome;
  }

  /**
   * Keeps a post as still to edit here, tried after its own wait: `retryMs` the first time, then twice the last one,
   * up to `retryMaxMs` (`waitMs` given: that wait, once); not while its platform has no poster here. Answers its wait, whether it is its first, and whether it is the longest.
   */
  #stillToEdit(key: string, platform: Platform, before: StillToEdit | undefined, waitMs?: number): { waitMs: number; first: boolean; atMost: boolean } {
    const wait = waitMs ?? auditRetryWaitMs(before?.waitMs, AUDIT_LIMITS.retryMs);
    // A platform without its poster here is not tried here: its posts are looked for once a poster comes (the scan).
    if (this.#posters.has(platform)) this.#pending.set(key, { platform, waitMs: waitMs === undefined ? wait : (before?.waitMs ?? AUDIT_LIMITS.retryMs), nextAt: this.#now() + wait });
    else this.#pending.delete(key);
    this.#scheduleRetry();
    return { waitMs: wait, first: before === undefined, atMost: wait === AUDIT_LIMITS.retryMaxMs && before !== undefined && before.waitMs < AUDIT_LIMITS.retryMaxMs };
  }

  /** The next round of retries: when the first post still to edit here (with its poster here) is due, or a platform's scan (a retryMs after its poster came). */
  #scheduleRetry(): void {
    if (this.#closing || !this.#posts || this.#round) return;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const due = [...this.#pending.values()].filter((p) => this.#posters.has(p.platform)).map((p) => p.nextAt);
    if (this.#scanAt !== undefined) due.push(this.#scanAt);
    if (due.length === 0) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      const round = this.#retry().catch((error: unknown) => this.#logger.warn({ code: codeOf(error) }, 'could not edit again the audit posts still to edit; tried again later'));
      this.#round = round.finally(() => {
        this.#round = undefined;
        this.#scheduleRetry();
      });
    }, Math.max(0, Math.min(...due) - this.#now()));
    this.#retryTimer.unref?.();
  }

  /** One try for each post still to edit that is due, whose platform has a poster here; first, the scan for those an earlier run left. */
  async #retry(): Promise<void> {
    const posts = this.#posts;
    if (!posts) return;
    if (this.#scanAt !== undefined && this.#scanAt <= this.#now()) {
      this.#scanAt = undefined;
      const unscanned = [...this.#posters.keys()].filter((platform) => !this.#scanned.has(platform));
      for (const platform of unscanned) this.#scanned.add(platform);
      try {
        for await (const { key, value } of posts.entries()) {
          if (value.pending && unscanned.includes(value.platform) && this.#posters.has(value.platform) && !this.#pending.has(key)) this.#pending.set(key, { platform: value.platform, waitMs: AUDIT_LIMITS.retryMs, nextAt: this.#now() });
        }
      } catch (error) {
        for (const platform of unscanned) this.#scanned.delete(platform);
        this.#scanAt = this.#now() + AUDIT_LIMITS.retryMaxMs;
        this.#logger.warn({ code: codeOf(error) }, 'could not look for the audit posts an earlier run left to edit; looked for again in an hour');
      }
    }
    let unread = 0;
    let code: string | number | undefined;
    for (const [key, still] of [...this.#pending]) {
      if (this.#closing) return;
      if (!this.#posters.has(still.platform) || still.nextAt > this.#now()) continue;
      try {
        // Read once, by the edit itself: a record gone or no longer still to edit is let go of there.
        await this.#erase(key, () => false);
      } catch (error) {
        // The state failed (Redis down): this post waits its own next wait, as after a failed edit — never a tight loop.
        if (this.#pending.has(key)) this.#stillToEdit(key, still.platform, this.#pending.get(key));
        unread++;
        code = codeOf(error);
      }
    }
    if (unread > 0) this.#logger.warn({ posts: unread, code }, 'could not read or write audit posts still to edit; each is tried again after its own wait');
  }

  /**
   * The entries of `items` that still carry a prompt their member erased since (`forgotten`), by index; none without
   * `forgotten` (whose answer to a mark it cannot read is erased). One read a member
   * tells for all their entries in the post while nobody forgot: asked for their oldest entry, a member who erased
   * nothing since then erased nothing since the later ones either; only when it says erased are the others asked.
   */
  async #forgottenAmong(items: readonly Queued[]): Promise<Set<number>> {
    const forgotten = this.#forgotten;
    if (!forgotten) return new Set();
    const ask = (index: number) => forgotten.forgotten(items[index]!.requester, items[index]!.madeAt);
    const byMember = new Map<string, number[]>();
    items.forEach((item, index) => {
      if (item.entry.prompt === '') return;
      const member = `${item.requester.platform}:${item.requester.userId}`;
      byMember.set(member, [...(byMember.get(member) ?? []), index]);
    });
    const erased = await Promise.all(
      [...byMember.values()].map(async (indexes) => {
        const [oldest, ...rest] = indexes.sort((a, b) => items[a]!.madeAt - items[b]!.madeAt);
        if (!(await ask(oldest!))) return [];
        const later = await Promise.all(rest.map(async (index) => ((await ask(index)) ? [index] : [])));
        return [oldest!, ...later.flat()];
      }),
    );
    return new Set(erased.flat());
  }

  /** Entries waiting for a post (not those of a post under way). */
  get waiting(): number {
    return this.#waitingOf(() => true);
  }

  /** The refusals among `waiting`: lost at a stop (no sweep enters a refusal again). */
  get waitingRefusals(): number {
    return this.#waitingOf((item) => item.entry.type === 'refusal');
  }

  #waitingOf(counted: (item: Queued) => boolean): number {
    let entries = 0;
    for (const queue of this.#queues.values()) for (const item of [...queue.items, ...(queue.lost?.items ?? [])]) if (counted(item)) entries++;
    return entries;
  }

  /** Posts whatever waits now, and from now on what arrives later at once (the bot stops); resolves once those posts ended. */
  async flush(): Promise<void> {
    this.#closing = true;
    // Posts still to edit stay so in the audit-posts space: the next run edits them. A round under way (its edit and
    // its write) and the edits of forgets under way end before the surface and the state close.
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    await this.#round;
    await Promise.allSettled([...this.#editing.values()]);
    await Promise.allSettled([...this.#arriving]);
    const posting: Promise<void>[] = [];
    for (const [key, queue] of this.#queues) {
      if (queue.timer) clearTimeout(queue.timer);
      queue.timer = undefined;
      // After the post under way (if any), everything left, in as many posts as it takes.
      const all = (queue.posting ?? Promise.resolve()).then(() => this.#post(queue, true));
      queue.posting = all;
      posting.push(
        all.finally(() => {
          if (queue.posting === all) queue.posting = undefined;
          if (queue.items.length === 0 && queue.skipped === 0 && !queue.lost && this.#queues.get(key) === queue) this.#queues.delete(key);
        }),
      );
    }
    await Promise.allSettled(posting);
  }

  /**
   * An entry for the scope's audit channel, if it has one; `once`: a job's end by its key, entered only if it was not
   * posted before nor waits here. Resolves once it was posted or will not be.
   */
  #add(requester: Requester, entry: AuditEntry, madeAt: number, once?: string): Promise<void> {
    // A person's own scope (DMs, user installs) has no admins, nor an audit channel.
    if (isDmScope(requester.scopeId) || !this.#posters.has(requester.platform)) return Promise.resolve();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const arriving = this.#channelOf(requester)
      .then(async (channel) => {
        if (!channel) return settle();
        const first = once === undefined ? true : await this.#firstTime(requester, once, settled);
        // Entered before (nothing to wait for), or waiting here: this repeat resolves as that first entry does.
        if (first !== true) return void (first ?? Promise.resolve()).then(settle);
        this.#enqueue(requester, channel, { entry, once, settle, requester, madeAt });
      })
      .catch((error: unknown) => {
        this.#logger.warn({ scopeKey: scopeKeyOf(requester), code: codeOf(error) }, 'could not read the audit channel of a server/workspace; an entry was not posted');
        this.#settled({ entry, once: undefined, settle, requester, madeAt });
      });
    this.#arriving.add(arriving);
    void arriving.finally(() => this.#arriving.delete(arriving));
    return settled;
  }

  /**
   * Whether a job's end is to be entered (true; `settled` then waits here under its key): not once its post was kept
   * (undefined), nor while an entry of it waits here (that entry's promise, resolved once it was posted or will not
   * be: the repeat takes its outcome). One that cannot be told (the state failed) is entered: an end is never lost.
   * Two processes (replicas) recording the same end at the same moment may both read it absent and both post it.
   */
  async #firstTime(requester: Requester, once: string, settled: Promise<void>): Promise<true | Promise<void> | undefined> {
    const waiting = this.#entering.get(once);
    if (waiting) {
      this.#logger.info({ scopeKey: scopeKeyOf(requester) }, 'a job’s end waits for the audit channel here already; not entered again');
      return waiting;
    }
    this.#entering.set(once, settled);
    try {
      if ((await this.#ended?.get(once)) === undefined) return true;
      this.#entering.delete(once);
      this.#logger.info({ scopeKey: scopeKeyOf(requester) }, 'a job’s end was entered for the audit channel before; not posted again');
      return undefined;
    } catch (error) {
      this.#logger.warn({ scopeKey: scopeKeyOf(requester), code: codeOf(error) }, 'could not tell whether a job’s end was entered for the audit channel before; entered');
      return true;
    }
  }

  /** An entry that was posted (`posted`: its key kept, so a repeat is not posted again) or will not be. */
  async #settled(item: Queued, posted = false): Promise<void> {
    const { once } = item;
    if (posted && once !== undefined && this.#ended) {
      await this.#ended.put(once, true).catch((error: unknown) => this.#logger.warn({ code: codeOf(error) }, 'could not keep that a job’s end was posted to the audit channel; a repeat would post it again'));
    }
    if (once !== undefined) this.#entering.delete(once);
    item.settle();
  }

  #enqueue(requester: Requester, channel: { channelId: string; locale?: string | undefined }, item: Queued): void {
    const key = `${scopeKeyOf(requester)}:${channel.channelId}`;
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = { platform: requester.platform, scopeId: requester.scopeId, channelId: channel.channelId, locale: channel.locale, items: [], skipped: 0, timer: undefined, posting: undefined, sending: undefined, failWaitMs: undefined, lost: undefined };
      this.#queues.set(key, queue);
    }
    queue.locale = channel.locale;
    queue.items.push(item);
    this.#bound(queue);
    this.#schedule(key, queue);
  }

  /** At most `maxQueued` entries wait in a queue: the oldest go (not posted; counted, and said in the next post). */
  #bound(queue: ChannelQueue): void {
    while (queue.items.length > this.#maxQueued) {
      void this.#settled(queue.items.shift()!);
      queue.skipped++;
    }
  }

  #schedule(key: string, queue: ChannelQueue): void {
    if (queue.timer || queue.posting) return;
    // The bot stops: a channel whose post failed is not tried again in this run (`flush` tried it once); its entries
    // stay for the next start where they can (a job's end, unmarked, is entered again by the sweep).
    if (this.#closing && queue.failWaitMs !== undefined) return;
    queue.timer = setTimeout(() => {
      queue.timer = undefined;
      const posting: Promise<void> = this.#post(queue, false).finally(() => {
        // A flush may have chained its posts after this one: then it owns the queue.
        if (queue.posting !== posting) return;
        queue.posting = undefined;
        if (queue.items.length > 0 || queue.skipped > 0 || queue.lost) this.#schedule(key, queue);
        else this.#queues.delete(key);
      });
      queue.posting = posting;
    }, this.#closing ? 0 : (queue.failWaitMs ?? this.#batchMs));
    queue.timer.unref?.();
  }

  /** One post of the queue's oldest entries; `all`: every entry, in as many posts as it takes (the bot stops). */
  async #post(queue: ChannelQueue, all: boolean): Promise<void> {
    do {
      const poster = this.#posters.get(queue.platform);
      if (!poster || (queue.items.length === 0 && queue.skipped === 0 && !queue.lost)) return;
      if (!(await this.#stillChosen(queue))) return;
      // A post whose answer was lost is sent again first, as it was, while the platform still knows its nonce.
      let lost = queue.lost;
      queue.lost = undefined;
      if (lost && (poster.replayMs === undefined || this.#now() - lost.at > poster.replayMs)) {
        await this.#letGo(queue, lost, undefined);
        lost = undefined;
        if (queue.items.length === 0 && queue.skipped === 0) return;
      }
      const items = lost ? lost.items : queue.items.splice(0, Math.max(1, poster.maxEntries));
      // From here until it landed, a forget here finds these entries in `sending` (erasing them there).
      let land!: () => void;
      const sending: Sending = { items, landed: false, landing: new Promise<void>((resolve) => (land = resolve)), land, handedOver: new Set(), outcome: undefined, erased: undefined };
      queue.sending = sending;
      const landed = () => {
        sending.landed = true;
        sending.outcome ??= 'unkept';
        if (queue.sending === sending) queue.sending = undefined;
        sending.land();
      };
      // A member who erased their prompts on another replica meanwhile: that replica's forget did not see these entries.
      // Read now, not as they were queued (nor from the history's reads of the mark): they waited their batch and pace.
      for (const index of await this.#forgottenAmong(items)) items[index]!.entry = erase(items[index]!.entry);
      let skipped = queue.skipped;
      if (lost) skipped = lost.skipped;
      else queue.skipped = 0;
      // Sent again, a lost post is sent as it was (the platform answers the message it made of it, if any): an entry
      // erased since is erased by an edit once it landed, as for a forget while a post is on its way.
      const entries = lost ? lost.entries : items.map((i) => i.entry);
      const nonce = lost?.nonce ?? randomBytes(12).toString('hex');
      const post: AuditPost = { platform: queue.platform, scopeId: queue.scopeId, channelId: queue.channelId, locale: queue.locale, entries, skipped, nonce, ...(lost && { sentMsAgo: this.#now() - lost.at }) };
      const scopeKey = scopeKeyOf(queue);
      let messageId: string;
      // When this post is first sent: a replay's window counts from here, not from when its failure was seen (the
      // platform's client may have kept trying for a minute before it gave up).
      const sentAt = this.#now();
      try {
        ({ messageId } = await poster.post(post));
      } catch (error) {
        sending.outcome = 'unposted';
        landed();
        if (isMessageGone(error)) {
          // The channel is gone (deleted): no post there ever succeeds. Its entries, and those waiting, are dropped,
          // not tried again; the admins see the failures in the settings view until they choose another channel.
          const dropped = [...items, ...queue.items.splice(0)];
          queue.skipped = 0;
          queue.failWaitMs = undefined;
          this.#failed(scopeKey, queue.channelId, error, dropped.length, undefined);
          await Promise.all(dropped.map((i) => this.#settled(i)));
          return;
        }
        if (lost || error instanceof AuditPostLost) {
          // Its message may be in the channel: sent again only as it was, with its nonce, at the channel's next try
          // (within its poster's `replayMs` of its first try; never while the bot stops); else let go of, as maybe posted.
          const again: Lost = lost ?? { items, entries, skipped, nonce, at: sentAt };
          if (poster.replayMs === undefined || this.#closing) return void (await this.#letGo(queue, again, error));
          queue.lost = again;
          queue.failWaitMs = auditRetryWaitMs(queue.failWaitMs, this.#postRetryMs);
          this.#failed(scopeKey, queue.channelId, error, items.length, queue.failWaitMs);
          return;
        }
        // Refused (nothing posted): its entries wait again, first in line, for the next try after the channel's own
        // wait (never a tight loop; none while the bot stops); their job ends are not taken as posted meanwhile — at a
        // stop, not at all (the sweep posts them). A skipped note the platform showed all the same is not said again.
        queue.items.unshift(...items);
        if (!(error instanceof AuditChannelError && error.noteShown)) queue.skipped += skipped;
        this.#bound(queue);
        queue.failWaitMs = auditRetryWaitMs(queue.failWaitMs, this.#postRetryMs);
        this.#failed(scopeKey, queue.channelId, error, items.length, queue.failWaitMs);
        return;
      }
      queue.failWaitMs = undefined;
      this.#trouble.delete(scopeKey);
      const record: AuditRecord = { platform: post.platform, scopeId: post.scopeId, channelId: post.channelId, locale: post.locale, entries: post.entries, skipped: post.skipped, messageId };
      let late: Set<number>;
      let kept: boolean;
      try {
        // Posted: now (never before) its job ends are kept as entered; a crash before leaves them to be entered again.
        await Promise.all(items.map((i) => this.#settled(i, true)));
        kept = await this.#keep(record).catch((error: unknown) => (this.#logger.warn({ scopeKey, code: codeOf(error) }, 'could not keep an audit post for forget'), false));
        if (kept) sending.outcome = { kept: recordKeyOf(record) };
        // A forget marked since the read above, or run here while it was on its way (its entry changed since), may
        // have listed the posts kept before this one was: it is erased here, unless a forget of that member runs here,
        // did not hand it over, and will find this post kept (it waited for it to land, then lists the posts kept,
        // erases it and counts it). One not kept (no audit-posts space, or its write failed) no forget finds.
        late = await this.#forgottenAmong(items);
        items.forEach((item, index) => item.entry !== post.entries[index] && post.entries[index]!.prompt !== '' && late.add(index));
        for (const index of late) {
          const member = `${queue.platform}:${items[index]!.entry.userId}`;
          if (kept && this.#forgetting.has(member) && !sending.handedOver.has(member)) late.delete(index);
        }
      } finally {
        landed();
      }
      if (late.size > 0) {
        sending.erased = await this.#erase(recordKeyOf(record), (_, index) => late.has(index), kept ? undefined : record).catch((error: unknown) => (this.#logger.warn({ scopeKey, code: codeOf(error) }, 'could not erase a member’s prompt from an audit post'), 'failed' as const));
      }
    } while (all);
  }

  /**
   * A post whose answer was lost, not sent again (its platform makes a new message of each try, or too long passed
   * since its first, or the bot stops): its entries are let go of as maybe posted (a job's end is not posted again).
   */
  async #letGo(queue: ChannelQueue, lost: Lost, error: unknown): Promise<void> {
    const scopeKey = scopeKeyOf(queue);
    const code = error === undefined ? 'lost' : String(codeOf(error) ?? 'failed');
    this.#logger.warn({ scopeKey, channelId: queue.channelId, code, entries: lost.items.length }, 'an audit post’s answer was lost: it may be in the channel; not sent again');
    await Promise.all(lost.items.map((i) => this.#settled(i, true)));
  }

  /**
   * Whether the queue's channel is still the scope's audit channel: entries waiting for a channel the admins turned
   * off or replaced are dropped, never posted there. When the settings cannot be read, the channel chosen stands.
   */
  async #stillChosen(queue: ChannelQueue): Promise<boolean> {
    const current = await this.#channelOf(queue).catch(() => ({ channelId: queue.channelId }));
    if (current?.channelId === queue.channelId) return true;
    this.#logger.info({ scopeKey: scopeKeyOf(queue), channelId: queue.channelId, entries: queue.items.length }, 'the audit channel was turned off or changed; its waiting entries were dropped');
    for (const item of [...queue.items.splice(0), ...(queue.lost?.items ?? [])]) void this.#settled(item);
    queue.lost = undefined;
    queue.skipped = 0;
    return false;
  }

  /** Keeps a posted message for `forget`; answers whether it is kept (not without the space, nor with no prompt to erase). */
  async #keep(record: AuditRecord): Promise<boolean> {
    if (!this.#posts || !record.entries.some((e) => e.prompt !== '')) return false;
    await this.#posts.put(recordKeyOf(record), record);
    return true;
  }

  /** A failed post, counted for the settings view; `waitMs`: when it is tried again (undefined: its channel is gone, its entries dropped). */
  #failed(scopeKey: string, channelId: string, error: unknown, entries: number, waitMs: number | undefined): void {
    const before = this.#trouble.get(scopeKey);
    const failures = before && before.channelId === channelId ? before.failures + 1 : 1;
    const code = String(codeOf(error) ?? 'failed');
    this.#trouble.set(scopeKey, { channelId, failures, code, at: this.#now() });
    if (this.#trouble.size > 10_000) this.#trouble.delete(this.#trouble.keys().next().value!);
    const log = failures === AUDIT_LIMITS.troubleAfter ? this.#logger.error.bind(this.#logger) : this.#logger.warn.bind(this.#logger);
    const said =
      failures >= AUDIT_LIMITS.troubleAfter ? 'audit posts keep failing: the admins’ settings view says so'
      : waitMs === undefined ? 'an audit post failed: its channel is gone; its entries were dropped'
      : 'an audit post failed; its entries are posted again later';
    log({ scopeKey, channelId, code, failures, entries, ...(waitMs === undefined ? { gone: true } : { waitMs }) }, said);
  }
}

/** The key of a posted message's record in `audit-posts`. */
function recordKeyOf(record: Pick<AuditRecord, 'platform' | 'channelId' | 'messageId'>): string {
  return digestKeyOf(`${record.platform}:${record.channelId}:${record.messageId}`);
}

/** A record whose message took its edit: no longer still to edit; gone once it holds no prompt (nothing left to erase). */
function released(record: AuditRecord): AuditRecord | undefined {
  if (record.entries.every((e) => e.prompt === '')) return undefined;
  const { pending: _pending, ...rest } = record;
  return rest;
}

/** Whether two records' entries are the same (the record was not changed between them). */
function sameEntries(a: readonly AuditEntry[], b: readonly AuditEntry[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether an edit failed because nothing can ever be edited there: the posters answer `not_found` for a message or
 * channel gone (Discord's 10008, 10003; Slack's `message_not_found`). A message the bot lost access to is still
 * there, its prompt shown: not `not_found`, it stays to edit.
 */
function isMessageGone(error: unknown): boolean {
  return error instanceof AuditChannelError && error.problem === 'not_found';
}

function cut(prompt: string): string {
  return prompt.length > AUDIT_PROMPT_MAX ? `${prompt.slice(0, AUDIT_PROMPT_MAX)}…` : prompt;
}

function erase(entry: AuditEntry): AuditEntry {
  const { word: _word, ...rest } = entry;
  return { ...rest, prompt: '', erased: true };
}

/**
 * The code the log (and the admins' settings view) shows of an error, never its message: the platform's (Discord's
 * numeric code, Slack's `error`), a network code (its own, or its cause's: `fetch failed` carries `ECONNRESET`), an
 * HTTP status, `timeout` for an abort; undefined when it has none. A poster names a lost answer with it (`AuditPostLost.of`).
 */
function codeOf(error: unknown): string | number | undefined {
  if (error instanceof AuditChannelError) return error.platformCode ?? error.problem;
  const e = error as { code?: unknown; data?: { error?: unknown }; status?: unknown; name?: unknown; cause?: { code?: unknown } } | undefined;
  // Before its code: a request discord.js's REST gave up on throws the DOMException of its abort, whose `code` is 20.
  if (e?.name === 'AbortError') return 'timeout';
  if (typeof e?.data?.error === 'string') return e.data.error;
  const code = e?.code ?? e?.cause?.code;
  if (typeof code === 'string' || typeof code === 'number') return code;
  if (typeof e?.status === 'number') return e.status;
  return undefined;
}

