import type { webApi } from '@slack/bolt';
import { FILE_EXTENSIONS, type LoggerLike, type OutputFormat } from 'pictor';
import { sleep } from 'pictor/internal';
import { DEFAULT_LOCALE, describeKeptImages, say, type FinalUpdate, type JobUpdate, type PreviewImage, type UpdateSink } from '../runner/index.js';
import { jobEndOf, type JobEnd } from '../runner/job-history.js';
import { formatsOf } from '../runner/types.js';
import { SKIP, type ChannelWriter } from './ChannelWriter.js';
import { slackErrorCode } from './slack-error-code.js';
import { isJobActionsMessage, renderJobActions, renderJobMessage, renderResultCaption, requestLineOf, type JobViewState, type RenderedMessage } from './render-job.js';
import type { RequestStore, SavedRequest } from './RequestStore.js';
import { truncate } from './slack-text.js';
import type { SentOnceClient } from './sent-once-client.js';
import { isConversationGone, isMessageGone, isTransientSlackError, lostAnswerCode, retryAfterMsOf, retryTransient } from './slack-faults.js';
import { previewFileName, uploadFiles, type UploadedFile } from './upload-files.js';

/** Tells the person who asked something only they should see (ephemeral). */
export type Notifier = (text: string) => Promise<void>;

/** When an update became visible in Slack (for measurements); `superseded` when a later write showed it. */
export interface ShownEvent {
  jobId: string;
  type: JobUpdate['type'];
  receivedAt: number;
  shownAt: number;
  superseded: boolean;
  /**
   * For a completed job: `result` when its images and their caption were
   * shared where the job lives (or, when the channel refused them, in the
   * requester's direct messages); `actions` when its Reroll, Edit and Delete
   * can be clicked (their message is posted beside the images and the request
   * saved, or, when that message could not be posted, the job's message shows
   * them); `message` when its message shows "Done".
   */
  step?: 'result' | 'actions' | 'message' | undefined;
}

export interface SlackJobViewOptions {
  client: webApi.WebClient;
  writer: ChannelWriter;
  store: RequestStore;
  request: SavedRequest;
  inputCount: number;
  notify: Notifier;
  /** The runner's id of the job, known once the intake admitted it: its message's Cancel carries it from the first post. */
  jobId: string;
  logger: LoggerLike;
  onShown?: ((event: ShownEvent) => void) | undefined;
  /**
   * Where a completed job's images go. `channel` (default): beside the job's
   * message (in the thread the job was asked in, if any), captioned with the
   * prompt and cost, so the result shows at once; the message's own "Done"
   * (a `chat.update`, Slack's Tier 3) follows when the workspace budget allows.
   * `thread`: in the job's message's thread, as before (kept for comparison).
   * Reroll, Edit and Delete follow the images, wherever they went.
   */
  finalImagesIn?: 'channel' | 'thread' | undefined;
  /** Pauses between tries of a final write that Slack failed on its side. Default 1 s, then 3 s. */
  retryPausesMs?: readonly number[] | undefined;
  /**
   * The client of the job's own messages — its first one (`postFirst`), the message of Reroll, Edit and Delete beside
   * its images, and its end when posted anew (its message gone):
   * one that sends each call once, since Slack makes a new message of each `chat.postMessage` it gets. One whose answer
   * was lost is looked for (`conversations.history`, or `conversations.replies` in a thread) before anything is posted
   * again (`SentOnceClient`).
   */
  firstPostClient: SentOnceClient;
  /**
   * How long the job's first message may take — its turn in the channel, then Slack's answer — before the job is given
   * up (not started, nothing charged; the member told privately). Default 30 s: a burst in one channel waits its turns
   * (about one message a second per channel), and a job whose turn comes within that is not refused.
   */
  firstPostDeadlineMs?: number | undefined;
}

const DEFAULT_RETRY_PAUSES_MS = [1000, 3000];
export const DEFAULT_FIRST_POST_DEADLINE_MS = 30_000;
/**
 * How far before a post whose answer was lost its message is looked for: Slack's clock and ours may differ. Messages
 * of the conversation (or thread) read at most, newest first: past them, the look cannot tell.
 */
const LOOK_BACK_MS = 10 * 60_000;
const LOOK_LIMIT = 200;
/**
 * How long the messages of a job's end posted once (the message of Reroll, Edit and Delete, and its end posted anew in
 * its channel: all of them together) may wait in all for Slack's `Retry-After`s (429s, Slack not taking them) before
 * they are posted again: a 429 that asks for more is taken as a refusal. Slack's limits on `chat.postMessage` count by
 * the second and the minute. A repair by button starts again.
 */
export const RATE_LIMITED_WAIT_MAX_MS = 60_000;
/** A `Retry-After` below a second (0 included) is waited as one: a server that keeps asking for none is not posted to in a loop. */
export const RATE_LIMITED_WAIT_LEAST_MS = 1000;
/** How many 429s those messages may wait out in all, however short their waits: past them, a 429 is a refusal. */
export const RATE_LIMITED_WAITS_MAX = 10;
/**
 * The allowance of a job's end sent to the requester's direct messages once its channel gave up (`RATE_LIMITED_WAIT_MAX_MS`
 * and `RATE_LIMITED_WAITS_MAX` spent there, or the channel refusing it): a few more waits of its own, so a workspace
 * that rate-limits still gets its end: a job's end waits a minute and a half at most. Once the bot stops, no wait goes past
 * the stop's deadline (`ChannelWriter.stopDeadline`): an end that does not fit is tried once in the requester's
 * direct messages at once, and logged as lost when they do not take it.
 */
export const DM_RATE_LIMITED_WAIT_MAX_MS = 30_000;
export const DM_RATE_LIMITED_WAITS_MAX = 3;

/** The waits for Slack's `Retry-After` a job's end has taken, and the most it may take (see `RATE_LIMITED_WAIT_MAX_MS`). */
interface RateLimitedWaits {
  ms: number;
  count: number;
  readonly maxMs: number;
  readonly maxCount: number;
}

const channelWaits = (): RateLimitedWaits => ({ ms: 0, count: 0, maxMs: RATE_LIMITED_WAIT_MAX_MS, maxCount: RATE_LIMITED_WAITS_MAX });
const dmWaits = (): RateLimitedWaits => ({ ms: 0, count: 0, maxMs: DM_RATE_LIMITED_WAIT_MAX_MS, maxCount: DM_RATE_LIMITED_WAITS_MAX });

/**
 * A post of the buttons beside a finished job's images given up because the bot began to stop while Slack had it wait
 * (or asked it to): the job's message shows the buttons instead.
 */
class CutByStopError extends Error {
  override name = 'CutByStopError';
}

const cutByStop = () => new CutByStopError('the bot began to stop while Slack had the buttons of a finished job wait');

/** A post of a job's end given up because Slack asked it to wait past the deadline of the bot's stop. */
class PastStopDeadlineError extends Error {
  override name = 'PastStopDeadlineError';
}

/** A job's message posted (`chat.postMessage`) whose answer was lost: it may be there. */
interface UnansweredPost<S> {
  channel: string;
  threadTs: string | undefined;
  sentAt: number;
  /** What it showed, should it be found. */
  shown: S;
}

/** What a job's end posted anew shows. */
interface FinalShown {
  /** The version of the job and its rendering. */
  version: number;
  rendering: string;
  /** The job's message when it was posted (gone, or no longer the bot's to edit, but maybe still there): it is not the one looked for. */
  after: string | undefined;
}

/** A message of the job's posted once (`#postOnce`): the end posted anew, or the message of Reroll, Edit and Delete. */
interface OncePost<S> {
  channel: string;
  threadTs: string | undefined;
  /** Where a post whose answer was lost is kept until it is looked for (the end's is the view's: a repair looks again). */
  unanswered: { post?: UnansweredPost<S> | undefined };
  /** In the channel's turn, right before the call: the message, and what it shows. */
  render: () => Promise<{ message: RenderedMessage; shown: S }>;
  /** The message looked for after an answer that was lost. */
  isOwn: (message: { ts: string; blocks?: unknown }, unanswered: UnansweredPost<S>) => boolean;
  /** It is there, posted (in the channel's turn) or found. */
  posted: (channel: string, ts: string | undefined, shown: S) => Promise<void>;
  /** Logs that its answer was lost (in `channel`) and the look could not tell: it is not posted again. */
  notLookedFor: (channel: string) => void;
  /** The `Retry-After`s it may wait out, shared with the posts that count with it (taken from as it waits). */
  waits: RateLimitedWaits;
  /** A stop ends its wait for Slack's `Retry-After` (`CutByStopError`): only for a post something else stands in for. */
  cutByStop: boolean;
  /** Tried once: no try again when Slack has trouble of its own, no wait for a `Retry-After` (a 429 is a refusal). */
  oneTry?: boolean | undefined;
}

/** Slack's `ts` `a` is later than `b` (seconds, then microseconds, as numbers). */
function isLaterTs(a: string, b: string): boolean {
  const [aSeconds = '0', aMicros = '0'] = a.split('.');
  const [bSeconds = '0', bMicros = '0'] = b.split('.');
  if (Number(aSeconds) !== Number(bSeconds)) return Number(aSeconds) > Number(bSeconds);
  return Number(aMicros.padEnd(6, '0')) > Number(bMicros.padEnd(6, '0'));
}

interface Pending {
  type: JobUpdate['type'];
  receivedAt: number;
  version: number;
  imageIndex?: number | undefined;
  partialIndex?: number | undefined;
}

/**
 * Why a job's first message could not be posted, in the member's words: the bot is not in the channel (invite it), the
 * channel is archived, or anything else — a private job's direct messages included, where an invite means nothing.
 */
function cannotPostWords(code: string | undefined, inDirectMessages: boolean): 'slack.job.not_in_channel' | 'slack.job.archived' | 'slack.job.not_posted_at_all' {
  if (inDirectMessages) return 'slack.job.not_posted_at_all';
  if (code === 'not_in_channel' || code === 'channel_not_found') return 'slack.job.not_in_channel';
  return code === 'is_archived' ? 'slack.job.archived' : 'slack.job.not_posted_at_all';
}

const isFinal = (update: JobUpdate): update is FinalUpdate =>
  update.type === 'completed' || update.type === 'failed' || update.type === 'cancelled';

/**
 * Shows one job in Slack. It posts the job's message before the runner has
 * the job (`postFirst`: a job whose message Slack refuses is not started), and
 * is then the job's update sink: it updates that message's text in place as the
 * job moves on, posts previews in the message's thread, and at the end posts
 * the final images beside the message (captioned with the prompt and cost)
 * and right after them a message with Reroll, Edit and Delete. File shares and
 * `chat.postMessage` are paced per channel, not by Slack's Tier 3, so the
 * result and its buttons show within seconds however many jobs end together.
 * The job's message then says "Done" and drops its Cancel: a `chat.update`,
 * which waits for the workspace's Tier 3 budget (up to about a minute when
 * dozens of jobs end at once; a Cancel pressed meanwhile answers that the job
 * is done, see `describeFinishedJob`). Every write goes through the channel
 * writer; progress writes coalesce and render the latest state when their
 * turn comes, so a busy channel never falls behind.
 */
export class SlackJobView {
  readonly sink: UpdateSink;
  readonly #o: SlackJobViewOptions;
  readonly #state: JobViewState;
  readonly #channelId: string;
  #messageTs: string | undefined;
  /** What the job's message shows (its text and blocks), as last written. */
  #shownRendering: string | undefined;
  #posted: Promise<string | undefined> | undefined;
  #unpostable = false;
  /** When the first post's turn came and its call went to Slack (undefined: not yet). */
  #firstPostSentAt: number | undefined;
  /** The client of the posts sent once (the first, a final posted anew, the buttons): no automatic retries. */
  readonly #onceClient: SentOnceClient;
  /** A final message posted anew whose answer was lost: looked for before another is posted. */
  readonly #finalUnanswered: { post?: UnansweredPost<FinalShown> | undefined } = {};
  /** The first post was given up at its deadline: not written if its turn had not come, taken back if it lands later. */
  #firstPostLate = false;
  /** When `postFirst` gives the first post up (`firstPostDeadlineMs` after it began). */
  #firstPostDeadlineAt: number | undefined;
  /** Where the end of the job goes: its channel, or (the channel no longer takes the bot's messages) the requester's DM. */
  #where: 'channel' | 'dm' = 'channel';
  #dm: Promise<string> | undefined;
  #finalShown = false;
  /** The job's end as the runner records it, saved with the request's `ended` mark until it is recorded. */
  #end: JobEnd | undefined;
  /** The `Retry-After`s waited out by the messages of the job's end posted once in its channel, all of them together (`#postOnce`). */
  #endWaits: RateLimitedWaits = channelWaits();
  /** Those waited out by its end sent to the requester's direct messages: an allowance of its own. */
  #dmEndWaits: RateLimitedWaits = dmWaits();
  /** The job's message showing its end, once the images and their buttons no longer wait for it (see `settled`). */
  #lastly: Promise<void> = Promise.resolve();
  #resultReported = false;
  #actionsReported = false;
  #version = 0;
  #shownVersion = -1;
  readonly #pending: Pending[] = [];
  /** The latest preview of each output image, and the preview index already posted. */
  readonly #previews = new Map<number, { partialIndex: number; preview: () => Promise<PreviewImage> }>();
  readonly #previewPosted = new Map<number, number>();
  /** Every preview posted in the thread, saved with the final images so Delete can remove them too. */
  readonly #previewFiles: UploadedFile[] = [];
  /** The final images saved with the request (what Reroll, Edit and Delete read), once they are posted. */
  #imagesSaved: Promise<unknown> = Promise.resolve();

  constructor(options: SlackJobViewOptions) {
    this.#o = options;
    this.#onceClient = options.firstPostClient;
    const { request } = options;
    this.#channelId = request.channelId;
    this.#state = {
      kind: request.kind,
      prompt: request.prompt,
      options: request.options,
      userId: request.userId,
      inputCount: options.inputCount,
      requestId: request.id,
      jobId: options.jobId,
      status: 'queued',
      ahead: undefined,
      previewsShown: 0,
      locale: request.locale ?? DEFAULT_LOCALE,
    };
    this.sink = (update) => this.#receive(update);
  }

  /**
   * Posts the job's message, before the job is handed to the runner: a job is sent to the image service only once its
   * message is there. True when it is; false when Slack refused it (bot not in the channel, the channel archived, the
   * member's direct messages closed…), when its answer was lost (the message may be there: it is not sent again, but
   * looked for and deleted when found), or
   * when it took longer than `firstPostDeadlineMs` (a post that lands later is deleted): the member has been told
   * privately why, and the job must not start. The intake waits for no more than that deadline.
   */
  async postFirst(): Promise<boolean> {
    this.#firstPostDeadlineAt = Date.now() + (this.#o.firstPostDeadlineMs ?? DEFAULT_FIRST_POST_DEADLINE_MS);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.#o.firstPostDeadlineMs ?? DEFAULT_FIRST_POST_DEADLINE_MS);
    });
    try {
      if ((await Promise.race([this.#ensurePosted(), late])) !== 'late') return !this.#unpostable;
    } finally {
      clearTimeout(timer);
    }
    if (this.#messageTs) return true;
    this.#firstPostLate = true;
    await this.#cannotPost(undefined, true);
    return false;
  }

  /**
   * Cancel was pressed before the runner had the job (its images still downloading): the message shows it cancelled,
   * without its Cancel, at once; the job is dropped before it is sent (`SlackJobs`), nothing charged.
   */
  async showCancelledBeforeStart(byUserId: string): Promise<void> {
    if (!(await this.#posted) || this.#state.status === 'cancelled') return;
    this.#state.status = 'cancelled';
    this.#state.cancelled = { byUserId, reason: 'requested' };
    this.#version++;
    await this.#o.writer
      .write(this.#channelId, { urgent: true, budgeted: true, workspace: this.#o.request.teamId, run: () => this.#update() })
      .catch((error: unknown) => this.#logError(error, 'could not show a job cancelled before it started'));
  }

  /**
   * The job did not start after its message was posted (an edit's images could not be fetched, the bot began to
   * stop): the message, which would show it queued for ever, is deleted; the member is told privately why.
   */
  async withdraw(): Promise<void> {
    const ts = await this.#posted;
    if (!ts) return;
    await this.#o.writer
      .write(this.#channelId, { urgent: true, run: () => this.#o.client.chat.delete({ channel: this.#channelId, ts }) })
      .catch((error: unknown) => this.#logError(error, 'could not delete the message of a job that did not start'));
  }

  /** The thread previews and images go to: the job message's own thread, or the thread it was posted in. */
  get #threadTs(): string | undefined {
    return this.#o.request.threadTs ?? this.#messageTs;
  }

  #receive(update: JobUpdate): void | Promise<void> {
    this.#state.jobId ??= update.jobId;
    const pending: Pending = { type: update.type, receivedAt: Date.now(), version: ++this.#version };
    this.#pending.push(pending);
    if (isFinal(update)) return this.#finish(update);
    switch (update.type) {
      case 'queued':
        if (this.#state.status === 'queued') {
          this.#state.ahead = update.ahead;
          this.#state.notice = update.notice;
        }
        break;
      case 'started':
        this.#state.status = 'running';
        break;
      case 'partial':
        this.#state.status = 'running';
        pending.imageIndex = update.imageIndex;
        pending.partialIndex = update.partialIndex;
        // Encoded only when its upload's turn comes: a preview superseded while it waits is never made.
        this.#previews.set(update.imageIndex, { partialIndex: update.partialIndex, preview: update.preview });
        this.#ensurePosted();
        this.#queuePreview(update.imageIndex);
        return;
    }
    this.#ensurePosted();
    this.#queueProgress();
  }

  /** The first write of a job: its message, showing whatever the state is when the write's turn comes. */
  #ensurePosted(): Promise<string | undefined> {
    this.#posted ??= this.#postFirstMessage()
      .catch(async (error: unknown) => {
        await this.#cannotPost(error);
        // The job is not started: a message Slack made all the same would show it queued for ever.
        if (lostAnswerCode(error, this.#onceClient) !== undefined) await this.#takeBackUnanswered();
        return undefined;
      });
    return this.#posted;
  }

  /**
   * The job's message posted, once: a 429 is Slack not taking it, so it is posted again once Slack's `Retry-After` is
   * over (a second at least), while that wait ends within the first post's deadline (`firstPostDeadlineMs`, counted
   * from `postFirst`) and the bot is not stopping; otherwise the 429 is the refusal. A channel another process wrote to
   * a moment before (a restart, a replica without Redis) draws such a 429.
   */
  async #postFirstMessage(): Promise<string | undefined> {
    const deadlineAt = this.#firstPostDeadlineAt ?? Date.now() + (this.#o.firstPostDeadlineMs ?? DEFAULT_FIRST_POST_DEADLINE_MS);
    for (;;) {
      try {
        return await this.#o.writer.write(this.#channelId, {
          urgent: true,
          run: async () => {
            // Given up before its turn came: nothing is written.
            if (this.#firstPostLate) return SKIP;
            this.#firstPostSentAt = Date.now();
            const version = this.#version;
            const rendered = renderJobMessage(this.#state);
            const result = await this.#onceClient.chat.postMessage({
              channel: this.#channelId,
              text: rendered.text,
              blocks: rendered.blocks,
              ...(this.#o.request.threadTs ? { thread_ts: this.#o.request.threadTs } : {}),
            });
            if (this.#firstPostLate) {
              // Landed after the job was given up (its member told it may show up): taken back.
              if (result.ts) this.#takeBack(result.ts);
              return undefined;
            }
            this.#messageTs = result.ts;
            this.#shownRendering = JSON.stringify(rendered);
            this.#markShown(version);
            if (result.ts) await this.#o.store.update(this.#o.request.id, { messageTs: result.ts }).catch((error: unknown) => this.#logError(error, 'could not save the message of a request'));
            return result.ts;
          },
        });
      } catch (error) {
        const retryAfterMs = retryAfterMsOf(error);
        if (retryAfterMs === undefined || this.#firstPostLate) throw error;
        // Slack did not take it: nothing of it may show up.
        this.#firstPostSentAt = undefined;
        await this.#waitOutRetryAfter(retryAfterMs, {
          admit: (waitMs) => (Date.now() + waitMs > deadlineAt ? error : undefined),
          goOn: () => false,
          cut: () => error,
          log: [{ channel: this.#channelId }, 'Slack rate-limited the first message of a job: it is posted again when Slack’s Retry-After is over'],
        });
        if (this.#firstPostLate) throw error;
      }
    }
  }

  /** A progress update of the message (coalesced: one waiting write per job at most). */
  #queueProgress(): void {
    void this.#o.writer
      .write(this.#channelId, {
        key: `progress:${this.#state.jobId}`,
        budgeted: true,
        workspace: this.#o.request.teamId,
        run: async () => {
          if (!this.#messageTs || this.#isFinal() || this.#shownVersion >= this.#version) return SKIP;
          return this.#update();
        },
      })
      .catch((error: unknown) => this.#logError(error, 'could not update a job message'));
  }

  /** Posts the latest preview of one output image in the thread (coalesced per image), then updates the text. */
  #queuePreview(imageIndex: number): void {
    void this.#o.writer
      .write(this.#channelId, {
        key: `preview:${this.#state.jobId}:${imageIndex}`,
        run: async () => {
          const preview = this.#previews.get(imageIndex);
          if (!preview || !this.#messageTs || this.#isFinal() || this.#previewPosted.get(imageIndex) === preview.partialIndex) return SKIP;
          const image = await preview.preview();
          if (this.#isFinal()) return SKIP;
          const name = previewFileName(this.#state.jobId, imageIndex, preview.partialIndex, FILE_EXTENSIONS[image.format]);
          const title = say(this.#state.locale, 'slack.job.preview', { preview: preview.partialIndex + 1, images: this.#o.request.options.n ?? 1, image: imageIndex + 1 });
          const posted = await uploadFiles(this.#o.client, {
            channelId: this.#channelId,
            threadTs: this.#threadTs,
            files: [{ data: image.data, filename: name, title }],
            initialComment: `${title}…`,
          });
          this.#previewFiles.push(...posted);
          this.#previewPosted.set(imageIndex, preview.partialIndex);
          this.#state.previewsShown++;
          this.#version++;
          this.#markPreviewShown(imageIndex, preview.partialIndex);
          this.#queueProgress();
        },
      })
      .catch((error: unknown) => this.#logError(error, 'could not post a preview'));
  }

  async #finish(update: FinalUpdate): Promise<void> {
    const state = this.#state;
    this.#end = jobEndOf(update);
    switch (update.type) {
      case 'completed':
        state.status = 'completed';
        state.completed = {
          size: update.size,
          quality: update.quality,
          format: formatsOf(update, 1)[0]!,
          cost: update.cost,
          elapsedMs: update.elapsedMs,
          images: update.images.length,
          uploaded: false,
          // Until #postImages is through: a message first posted now must not say the images could not be posted.
          posting: true,
        };
        break;
      case 'failed':
        state.status = 'failed';
        state.failure = { words: update.words, retryable: update.retryable };
        state.charged = update.cost;
        break;
      case 'cancelled':
        state.status = 'cancelled';
        state.cancelled = { byUserId: update.byUserId, reason: update.reason ?? 'requested' };
        state.charged = update.cost;
        break;
    }
    const messageTs = await this.#ensurePosted();
    if (update.type === 'completed') {
      const posted = await this.#postImages(update, messageTs !== undefined);
      if (posted) await this.#postActions(posted);
    } else if (update.images?.length) await this.#postKeptImages(update.images, formatsOf(update, update.images.length), messageTs !== undefined);
    if (this.#state.completed?.actionsBeside) {
      // The member has the images and their buttons: the job is shown. Its message's "Done" follows when the workspace's budget allows.
      this.#lastly = this.#showFinal()
        .then(() => {
          if (this.#finalShown) this.#reportRest(Date.now(), true);
        })
        .catch((error: unknown) => this.#logError(error, 'could not show the end of a job in its message'));
      return;
    }
    // The buttons on the job's message read the images saved with the request.
    await this.#imagesSaved;
    if (messageTs || update.type === 'completed') await this.#showFinal();
    const now = Date.now();
    if (update.type === 'completed') {
      if (!this.#resultReported) this.#reportResult(now);
      this.#reportActions(now);
    }
    this.#reportRest(now, true);
  }

  /**
   * Settles once the job's message shows its end, or once that was given up
   * (a repair by button, or the next start's sweep, may still show it). The
   * job itself may have been delivered earlier: its images and their buttons
   * do not wait for its message's last update.
   */
  get settled(): Promise<void> {
    return this.#lastly;
  }

  /** The job has ended but its message does not show it (every route failed): any of its buttons may try again. */
  get needsRepair(): boolean {
    return this.#isFinal() && !this.#finalShown && !this.#unpostable;
  }

  /** Shows the end of the job again (a button was pressed on a message still showing it running). */
  async repair(): Promise<boolean> {
    if (!this.needsRepair) return this.#finalShown;
    // A member's click, later: Slack's `Retry-After`s are waited out afresh.
    this.#endWaits = channelWaits();
    this.#dmEndWaits = dmWaits();
    await this.#showFinal();
    return this.#finalShown;
  }

  /**
   * The job's message shows its end: updated in place (retried while Slack
   * has trouble of its own), or posted anew when the message is gone, or sent
   * to the requester's direct messages when the conversation no longer takes
   * the bot's messages (archived, bot removed). Posted anew at most once
   * (`#postFinalMessage`).
   */
  async #showFinal(): Promise<void> {
    const pauses = this.#o.retryPausesMs ?? DEFAULT_RETRY_PAUSES_MS;
    // Reroll, Edit and Delete are beside the images already: the message's end may wait, and may be left to the sweep.
    const actionsBeside = this.#state.completed?.actionsBeside === true;
    if (this.#messageTs && this.#where === 'channel') {
      try {
        await retryTransient(
          () =>
            this.#o.writer.write(this.#channelId, {
              urgent: true,
              budgeted: true,
              workspace: this.#o.request.teamId,
              deferrable: actionsBeside,
              run: async () => {
                if (this.#shownVersion >= this.#version) return SKIP;
                return this.#update();
              },
            }),
          pauses,
        );
        // Shed when the bot stopped: the request stays active, so the next start's sweep shows the end.
        if (this.#shownVersion < this.#version) return;
        this.#finalShown = true;
        this.#persistEnded();
        return;
      } catch (error) {
        this.#logError(error, 'could not show the end of a job in its message');
        // Slack kept failing on its side: the message waits for a repair (any of its buttons, see SlackJobs.repair).
        if (isTransientSlackError(error)) return;
        if (!isMessageGone(error)) this.#where = 'dm';
      }
    }
    if (actionsBeside) {
      // The message is gone, or its conversation no longer takes the bot's messages: the images, their caption and
      // their buttons say all it would, so nothing is posted in its place.
      this.#finalShown = true;
      this.#persistEnded();
      return;
    }
    // Slack asked the end to wait past the stop's deadline in its channel: the direct messages are tried once, at once.
    let pastDeadline = false;
    if (this.#where === 'channel') {
      // The message is gone (or Slack kept failing to edit it): a new message in the same place.
      try {
        await this.#postFinalMessage(this.#channelId, this.#o.request.threadTs, this.#endWaits, false);
        return;
      } catch (error) {
        pastDeadline = error instanceof PastStopDeadlineError;
        if (pastDeadline) this.#o.logger.warn({ jobId: this.#state.jobId, channel: this.#channelId }, 'Slack asked the end of a job to wait past the deadline of the bot’s stop: it is sent to the requester directly, once');
        else this.#logError(error, 'could not post the end of a job in its channel');
        this.#where = 'dm';
      }
    }
    try {
      const dm = await this.#dmChannel();
      await this.#postFinalMessage(dm, undefined, this.#dmEndWaits, pastDeadline);
    } catch (error) {
      if (pastDeadline || error instanceof PastStopDeadlineError) this.#logEndLost(error);
      else this.#logError(error, 'could not send the end of a job to the requester directly');
    }
  }

  /** The bot stops, and the job's end could be shown nowhere before the stop's deadline: what it ended as is logged. */
  #logEndLost(error: unknown): void {
    const chargedUsd = (this.#state.completed?.cost ?? this.#state.charged)?.totalUsd;
    this.#o.logger.warn(
      { jobId: this.#state.jobId, requestId: this.#o.request.id, userId: this.#state.userId, status: this.#state.status, chargedUsd, code: slackErrorCode(error) },
      'the end of a job was lost: Slack did not take it before the deadline of the bot’s stop, in its channel nor in the requester’s direct messages',
    );
  }

  /**
   * The job's end in a message of its own, posted once (`#postOnce`): after an answer that was lost it is looked for by
   * its request line, and taken as the job's message when found. The job's images are not in it — they were shared
   * before it, by their own route — so no paid image waits on it; a button pressed on the job (`repair`) looks again.
   * Slack's `Retry-After`s are waited out within `waits`, a stop or not: the next start's sweep could only edit the job's
   * message, which is gone or refused here, so what the job ended as (its failure, its charge) is said now or never —
   * but never past the stop's deadline (`PastStopDeadlineError`), when the process ends. With `oneTry`, tried once.
   * Throws when Slack refused it, or kept failing.
   */
  async #postFinalMessage(channel: string, threadTs: string | undefined, waits: RateLimitedWaits, oneTry: boolean): Promise<void> {
    const requestId = this.#o.request.id;
    await this.#postOnce<FinalShown>({
      channel,
      threadTs,
      waits,
      cutByStop: false,
      oneTry,
      unanswered: this.#finalUnanswered,
      render: async () => {
        const rendered = renderJobMessage(this.#state);
        return { message: rendered, shown: { version: this.#version, rendering: JSON.stringify(rendered), after: this.#messageTs } };
      },
      isOwn: (m, { shown: { after } }) => requestLineOf(m.blocks) === requestId && (!after || isLaterTs(m.ts, after)),
      posted: (at, ts, { version, rendering }) => this.#finalPosted(at, ts, version, rendering),
      notLookedFor: (at) => this.#o.logger.warn({ jobId: this.#state.jobId, channel: at }, 'Slack’s answer to the end of a job was lost and its message could not be looked for: it is not posted again'),
    });
  }

  /** The job's end is shown in a message of its own (`ts`, posted or found in `channel`), showing `version`. */
  async #finalPosted(channel: string, ts: string | undefined, version: number, rendering: string): Promise<void> {
    this.#markShown(version);
    this.#finalShown = true;
    if (channel === this.#channelId && ts) {
      this.#messageTs = ts;
      this.#shownRendering = rendering;
      await this.#o.store.update(this.#o.request.id, { messageTs: ts }).catch((error: unknown) => this.#logError(error, 'could not save the message of a request'));
    }
    this.#persistEnded();
  }

  /**
   * A message of the job's (`isOwn`: the job's message by its request line — for its end posted anew, one posted after
   * the job's older message, which is still there when Slack no longer lets it be edited —, or the message of its Reroll,
   * Edit and Delete) among the bot's recent messages of a conversation, or of a thread: its ts, null when it is not
   * there, undefined when that cannot be told (the look failed, or it reached back past `LOOK_LIMIT` messages). Read
   * with the client that tries each call once, tried again while Slack says it has trouble of its own. Scopes
   * `channels:history`, `groups:history`, `im:history`, `mpim:history`.
   */
  async #lookForOwnMessage(channel: string, threadTs: string | undefined, sentAt: number, isOwn: (message: { ts: string; blocks?: unknown }) => boolean): Promise<string | null | undefined> {
    const client = this.#onceClient;
    const oldest = (Math.max(0, sentAt - LOOK_BACK_MS) / 1000).toFixed(6);
    try {
      const page = await retryTransient(
        () => (threadTs ? client.conversations.replies({ channel, ts: threadTs, oldest, limit: LOOK_LIMIT }) : client.conversations.history({ channel, oldest, limit: LOOK_LIMIT })),
        this.#o.retryPausesMs ?? DEFAULT_RETRY_PAUSES_MS,
      );
      const own = page.messages?.find((m) => m.ts && isOwn({ ts: m.ts, blocks: m.blocks }));
      if (own?.ts) return own.ts;
      return page.has_more ? undefined : null;
    } catch (error) {
      this.#logError(error, 'could not look for a job message whose answer was lost');
      return undefined;
    }
  }

  /**
   * The first message whose answer was lost, of a job that did not start: looked for and deleted when found (as a late
   * one is), so the channel does not show the job queued for ever. When it cannot be looked for, it is logged: the
   * member was told that if it shows up, the job will not run.
   */
  async #takeBackUnanswered(): Promise<void> {
    const found = await this.#lookForOwnMessage(this.#channelId, this.#o.request.threadTs, this.#firstPostSentAt ?? 0, (m) => requestLineOf(m.blocks) === this.#o.request.id);
    if (found) this.#takeBack(found);
    else if (found === undefined) this.#o.logger.warn({ jobId: this.#state.jobId, channel: this.#channelId }, 'the message of a job that did not start could not be looked for: it may show the job queued');
  }

  /** The requester's direct messages with the bot (Slack opens the conversation if needed; scope im:write). */
  async #dmChannel(): Promise<string> {
    this.#dm ??= this.#o.client.conversations.open({ users: this.#state.userId }).then((result) => {
      const id = result.channel?.id;
      if (!id) throw new Error('conversations.open gave no channel');
      return id;
    });
    this.#dm.catch(() => (this.#dm = undefined));
    return this.#dm;
  }

  /**
   * The request's end, once its message shows it: a stop after it does not show it again. With the end the runner
   * records (it may not have yet), which keeps the request held until it is recorded (`endRecorded`): a stop before
   * that leaves it to the next sweep, which records that end and shows nothing. One the state refuses is owed: written
   * again until the state takes it (`RequestStore.markEnded`).
   */
  #persistEnded(): void {
    void this.#o.store.markEnded(this.#o.request.id, this.#end).catch((error: unknown) => this.#logError(error, 'could not save the end of a request'));
  }

  /**
   * The images a failed or cancelled job finished before it ended (made and charged), each named for its own format: in
   * its thread, else to the requester directly.
   */
  async #postKeptImages(images: Buffer[], formats: OutputFormat[], inChannel: boolean): Promise<void> {
    const jobId = this.#state.jobId;
    const upload = (channel: string, threadTs: string | undefined) =>
      retryTransient(
        () =>
          this.#o.writer.write(channel, {
            urgent: true,
            run: () =>
              uploadFiles(this.#o.client, {
                channelId: channel,
                threadTs,
                files: images.map((data, i) => ({ data, filename: `pictor-${jobId}${images.length > 1 ? `-${i + 1}` : ''}.${FILE_EXTENSIONS[formats[i]!]}`, title: say(this.#state.locale, 'slack.job.image', { index: i + 1 }) })),
                initialComment: say(this.#state.locale, 'slack.job.kept_images', { user: `<@${this.#state.userId}>`, kept: describeKeptImages(images.length, this.#state.locale) }),
              }),
          }),
        this.#o.retryPausesMs ?? DEFAULT_RETRY_PAUSES_MS,
      );
    if (inChannel && this.#where === 'channel') {
      try {
        await upload(this.#channelId, this.#threadTs);
        return;
      } catch (error) {
        this.#logError(error, 'could not post the finished images of a failed job in its thread');
      }
    }
    try {
      await upload(await this.#dmChannel(), undefined);
    } catch (error) {
      this.#logError(error, 'could not send the finished images of a failed job to the requester directly');
    }
  }

  /**
   * The finished images with their caption, beside the job's message (see
   * `finalImagesIn`; retried while Slack has trouble
   * of its own), or in the requester's direct messages when the channel no
   * longer takes them. They were paid for: only when every route fails does
   * the message say they could not be posted. Resolves with where they went
   * (their buttons follow them there), or undefined when nowhere.
   */
  async #postImages(update: Extract<FinalUpdate, { type: 'completed' }>, inChannel: boolean): Promise<{ channel: string; threadTs: string | undefined } | undefined> {
    const done = this.#state.completed!;
    const beside = this.#o.finalImagesIn !== 'thread';
    const formats = formatsOf(update, update.images.length);
    const title = truncate(this.#state.prompt.replace(/\s+/g, ' '), 80);
    const pauses = this.#o.retryPausesMs ?? DEFAULT_RETRY_PAUSES_MS;
    const upload = (channel: string, threadTs: string | undefined) =>
      retryTransient(
        () =>
          this.#o.writer.write(channel, {
            urgent: true,
            run: () =>
              uploadFiles(this.#o.client, {
                channelId: channel,
                threadTs,
                files: update.images.map((data, i) => ({
                  data,
                  filename: `pictor-${update.jobId}${update.images.length > 1 ? `-${i + 1}` : ''}.${FILE_EXTENSIONS[formats[i]!]}`,
                  title,
                  altText: truncate(this.#state.prompt, 1000),
                })),
                initialComment: renderResultCaption(this.#state, update.images.length),
              }),
          }),
        pauses,
      );
    let files: UploadedFile[] | undefined;
    let posted: { channel: string; threadTs: string | undefined } | undefined;
    if (inChannel) {
      try {
        const threadTs = beside ? this.#o.request.threadTs : this.#threadTs;
        files = await upload(this.#channelId, threadTs);
        done.where = threadTs ? 'thread' : 'channel';
        posted = { channel: this.#channelId, threadTs };
      } catch (error) {
        this.#logError(error, 'could not post the images of a job in its thread');
        if (isConversationGone(error)) this.#where = 'dm';
      }
    }
    if (!files) {
      try {
        const dm = await this.#dmChannel();
        files = await upload(dm, undefined);
        done.where = 'dm';
        posted = { channel: dm, threadTs: undefined };
      } catch (error) {
        this.#logError(error, 'could not send the images of a job to the requester directly');
      }
    }
    done.posting = false;
    this.#version++;
    if (!files) return undefined;
    done.uploaded = true;
    const now = Date.now();
    this.#reportRest(now, true, (p) => p.type !== 'completed');
    // The result can be read where the job lives (or in the DM) now; in the thread it waits for the message's "Done".
    if (beside || done.where === 'dm') this.#reportResult(now);
    if (files.length) {
      // Before the message shows Done and its Delete button: Delete removes the previews in the thread with the images.
      const previewFiles = this.#previewFiles.map(({ id, name }) => ({ id, name }));
      // And what the message's "Done" says: a stop before that update is made leaves the sweep able to show it.
      // (the job's end as the runner records it, should the sweep have to: its format as the job's, one of the spec's).
      const { size, quality, cost, elapsedMs, images, where } = done;
      const result = { size, quality, format: formats[0]!, cost, elapsedMs, images, where };
      // Not waited for here: their buttons' message takes its turn in the channel meanwhile, and waits for it only then.
      this.#imagesSaved = this.#o.store.update(this.#o.request.id, { outputFiles: files, previewFiles, result }).catch((error: unknown) => this.#logError(error, 'could not save the images of a request'));
    }
    return posted;
  }

  /**
   * Reroll, Edit and Delete in a message of their own right after the images
   * (in the same conversation and thread): a `chat.postMessage`, paced per
   * channel like the images, so it never waits for the workspace's budget of
   * updates. Posted once the images are saved with the request, so a click
   * finds them, and saved itself (Delete removes it with the rest) before it
   * counts as shown. When it cannot be posted, the job's message shows the
   * buttons instead, as it did before. Posted once, as the job's end posted
   * anew is: through the client that sends each call once, tried again while
   * Slack says it has trouble of its own; after an answer that was lost it is
   * looked for first, and posted again only when it is not there. When the
   * look cannot tell, it is not posted again (logged), and the job's message
   * shows the buttons.
   */
  async #postActions(where: { channel: string; threadTs: string | undefined }): Promise<void> {
    let ts: string | undefined;
    try {
      ts = await this.#postActionsOnce(where);
    } catch (error) {
      // Cut by the bot's stop, or refused: the job's message shows the buttons (its final update is not shed by a stop).
      if (error instanceof CutByStopError) this.#o.logger.info({ jobId: this.#state.jobId, channel: where.channel }, 'the bot stopped while Slack had the buttons of a finished job wait: the job’s message shows them');
      else this.#logError(error, 'could not post the buttons of a finished job beside its images');
    }
    if (!ts) return;
    await this.#o.store.update(this.#o.request.id, { actionsMessage: { channelId: where.channel, ts } }).catch((error: unknown) => this.#logError(error, 'could not save the buttons of a request'));
    this.#state.completed!.actionsBeside = true;
    this.#version++;
    const now = Date.now();
    if (!this.#resultReported) this.#reportResult(now);
    this.#reportActions(now);
  }

  /** The message of Reroll, Edit and Delete posted once (see `#postActions`): its ts, undefined when the look after a lost answer could not tell. */
  async #postActionsOnce(where: { channel: string; threadTs: string | undefined }): Promise<string | undefined> {
    const requestId = this.#o.request.id;
    return this.#postOnce<undefined>({
      ...where,
      waits: this.#endWaits,
      // The job's message shows them instead, should the stop come first.
      cutByStop: true,
      unanswered: {},
      render: async () => {
        // A click on them finds the images.
        await this.#imagesSaved;
        return { message: renderJobActions(this.#state), shown: undefined };
      },
      isOwn: (m) => isJobActionsMessage(m.blocks, requestId),
      posted: async () => undefined,
      notLookedFor: (at) => this.#o.logger.warn({ jobId: this.#state.jobId, channel: at }, 'Slack’s answer to the buttons of a finished job was lost and their message could not be looked for: it is not posted again'),
    });
  }

  /**
   * A message of the job's posted once, through the client that sends each call once: tried again while Slack says it
   * has trouble of its own; after a 429 (Slack did not take it), posted again once its `Retry-After` is over (a second at
   * least), while `post.waits` stays within its bounds (`RATE_LIMITED_WAIT_MAX_MS` and `RATE_LIMITED_WAITS_MAX` in all
   * for the posts in the job's channel; past them, a refusal). With `post.cutByStop`, a 429 while the bot stops, or a
   * stop during its wait, ends it there (`CutByStopError`): it is not posted again. After an answer that was lost the message
   * may be there: it is looked for first, and taken as posted when found; posted again only when it is not there. When
   * the look cannot tell, it is not posted again (logged, the post kept as unanswered): a message missing rather than
   * two. Its ts (posted or found); undefined when the look could not tell. Throws when Slack refused it, kept failing,
   * or kept it waiting too long.
   */
  async #postOnce<S>(post: OncePost<S>): Promise<string | undefined> {
    const { channel, threadTs, unanswered: slot } = post;
    const pauses = post.oneTry ? [] : (this.#o.retryPausesMs ?? DEFAULT_RETRY_PAUSES_MS);
    let failures = 0;
    let lastError: unknown;
    for (;;) {
      const unanswered = slot.post;
      if (unanswered) {
        const found = await this.#lookForOwnMessage(unanswered.channel, unanswered.threadTs, unanswered.sentAt, (m) => post.isOwn(m, unanswered));
        if (found === undefined) {
          post.notLookedFor(unanswered.channel);
          return undefined;
        }
        slot.post = undefined;
        if (found !== null) {
          await post.posted(unanswered.channel, found, unanswered.shown);
          return found;
        }
      }
      // Every try made: what was left was the look after the last one.
      if (failures > pauses.length) throw lastError;
      try {
        return await this.#o.writer.write(channel, {
          urgent: true,
          run: async () => {
            const { message, shown } = await post.render();
            const sentAt = Date.now();
            let result: Awaited<ReturnType<webApi.WebClient['chat']['postMessage']>>;
            try {
              result = await this.#onceClient.chat.postMessage({ channel, text: message.text, blocks: message.blocks, ...(threadTs ? { thread_ts: threadTs } : {}) });
            } catch (error) {
              if (lostAnswerCode(error, this.#onceClient) !== undefined) slot.post = { channel, threadTs, sentAt, shown };
              throw error;
            }
            await post.posted(channel, result.ts, shown);
            return result.ts;
          },
        });
      } catch (error) {
        const retryAfterMs = retryAfterMsOf(error);
        if (retryAfterMs !== undefined) {
          // Slack did not take it: posted again once its wait is over (not a try spent), or refused past the bounds.
          if (post.cutByStop && this.#o.writer.stopping.aborted) throw cutByStop();
          if (post.oneTry) throw error;
          const { waits } = post;
          await this.#waitOutRetryAfter(retryAfterMs, {
            admit: (waitMs) => {
              if (waits.count >= waits.maxCount || waits.ms + waitMs > waits.maxMs) return error;
              if (!post.cutByStop && !this.#fitsStop(Date.now() + waitMs)) return new PastStopDeadlineError('Slack asked the end of a job to wait past the deadline of the bot’s stop');
              waits.count++;
              waits.ms += waitMs;
              return undefined;
            },
            goOn: post.cutByStop ? () => false : (endsAt) => this.#fitsStop(endsAt),
            cut: post.cutByStop ? cutByStop : () => new PastStopDeadlineError('the bot began to stop while Slack had the end of a job wait past its deadline'),
            log: [{ jobId: this.#state.jobId, channel }, 'Slack rate-limited a message of a job that is sent once: it is posted again when Slack’s Retry-After is over'],
          });
          continue;
        }
        if (!isTransientSlackError(error)) throw error;
        lastError = error;
        failures++;
        if (failures <= pauses.length) await sleep(pauses[failures - 1]!);
      }
    }
  }

  /**
   * A post Slack refused with a 429 (`retryAfterMsOf`), the one way every post of the job waits it out — its first
   * message (`#postFirstMessage`) as those posted once (`#postOnce`): its `Retry-After` (a second at least,
   * `RATE_LIMITED_WAIT_LEAST_MS`) is waited out, logged, when `admit` takes it (answering undefined; else what it answers
   * is thrown: the post's bounds, its deadline); a stop cuts the wait unless `goOn` says it goes on (`#waitUnlessStopped`),
   * and what `cut` makes is thrown. Resolves once the post may be made again.
   */
  async #waitOutRetryAfter(
    retryAfterMs: number,
    wait: { admit: (waitMs: number) => unknown; goOn: (endsAt: number) => boolean; cut: () => unknown; log: [Record<string, unknown>, string] },
  ): Promise<void> {
    const waitMs = Math.max(RATE_LIMITED_WAIT_LEAST_MS, retryAfterMs);
    const refused = wait.admit(waitMs);
    if (refused !== undefined) throw refused;
    this.#o.logger.info({ ...wait.log[0], retryAfterMs, waitMs }, wait.log[1]);
    if (!(await this.#waitUnlessStopped(waitMs, wait.goOn))) throw wait.cut();
  }

  /** Whether something over at `at` (a time as `Date.now()`) is over by the deadline of the bot's stop, when it stops. */
  #fitsStop(at: number): boolean {
    const deadline = this.#o.writer.stopDeadline;
    return deadline === undefined || at <= deadline;
  }

  /**
   * Waits `ms` (the core's `sleep`), or less when the bot stops: whether the whole wait passed. `goOn` says, at the stop
   * (or at once when it has begun) and each time its deadline is brought forward after, whether the wait still goes on,
   * given when it would end: the end of a job's wait goes on while it fits the stop's deadline (`#fitsStop`), the
   * buttons' wait never does.
   */
  async #waitUnlessStopped(ms: number, goOn: (endsAt: number) => boolean): Promise<boolean> {
    const stopping = this.#o.writer.stopping;
    const endsAt = Date.now() + ms;
    const cut = new AbortController();
    const look = () => {
      if (stopping.aborted && !goOn(endsAt)) cut.abort();
    };
    look();
    stopping.addEventListener('abort', look, { once: true });
    const unwatch = this.#o.writer.onStopDeadlineMoved(look);
    try {
      await sleep(ms, cut.signal);
      return true;
    } catch (error) {
      if (cut.signal.aborted) return false;
      throw error;
    } finally {
      stopping.removeEventListener('abort', look);
      unwatch();
    }
  }

  /**
   * The job's message brought up to date; SKIP (no call, the budget's token given back) when it already shows what it
   * would: the first post, made before the runner's first update, shows the job queued as that update does.
   */
  async #update(): Promise<void | typeof SKIP> {
    const version = this.#version;
    const rendered = renderJobMessage(this.#state);
    const rendering = JSON.stringify(rendered);
    if (rendering === this.#shownRendering) {
      this.#markShown(version);
      return SKIP;
    }
    await this.#o.client.chat.update({ channel: this.#channelId, ts: this.#messageTs!, text: rendered.text, blocks: rendered.blocks });
    this.#shownRendering = rendering;
    this.#markShown(version);
  }

  /**
   * The job's first message was refused, its answer lost, or it was `late` (`postFirst`): the member is told why,
   * privately — that it may show up, when Slack may have made it —; the job is not started.
   */
  async #cannotPost(error: unknown, late = false): Promise<void> {
    if (this.#unpostable) return;
    this.#unpostable = true;
    const channel = this.#channelId;
    let words: Parameters<typeof say>[1];
    if (late) {
      const deadlineMs = this.#o.firstPostDeadlineMs ?? DEFAULT_FIRST_POST_DEADLINE_MS;
      this.#o.logger.warn({ channel, deadlineMs, sent: this.#firstPostSentAt !== undefined }, 'a job message was not posted within its deadline; the job is not started');
      words = this.#firstPostSentAt !== undefined ? 'slack.job.maybe_posted' : 'slack.job.not_posted_at_all';
    } else {
      const lost = lostAnswerCode(error, this.#onceClient);
      const code = slackErrorCode(error);
      if (lost !== undefined) this.#o.logger.warn({ channel, code: lost }, 'Slack’s answer to a job message was lost (it may have been posted, and is not sent again); the job is not started');
      else this.#o.logger.warn({ channel, code }, 'could not post a job message; the job is not started');
      words = lost !== undefined ? 'slack.job.maybe_posted' : cannotPostWords(code, this.#o.request.private === true);
    }
    await this.#o.notify(say(this.#state.locale, words)).catch((e: unknown) => this.#logError(e, 'could not tell the user that a job could not be posted'));
  }

  /** Deletes a first message that landed after its job was given up. */
  #takeBack(ts: string): void {
    void this.#o.writer
      .write(this.#channelId, { urgent: true, run: () => this.#o.client.chat.delete({ channel: this.#channelId, ts }) })
      .catch((error: unknown) => this.#logError(error, 'could not delete the message of a job that did not start'));
  }

  #isFinal(): boolean {
    return this.#state.status === 'completed' || this.#state.status === 'failed' || this.#state.status === 'cancelled';
  }

  /** Everything received up to `version` is now visible. */
  #markShown(version: number): void {
    this.#shownVersion = Math.max(this.#shownVersion, version);
    const now = Date.now();
    this.#report((p) => p.version <= version && p.type !== 'partial' && p.type !== 'completed', now, false);
  }

  #markPreviewShown(imageIndex: number, partialIndex: number): void {
    this.#report((p) => p.type === 'partial' && p.imageIndex === imageIndex && (p.partialIndex ?? 0) <= partialIndex, Date.now(), false, partialIndex);
  }

  /** The completed job's result is visible (step `result` of its final event). */
  #reportResult(now: number): void {
    const final = this.#pending.find((p) => p.type === 'completed');
    if (!final || this.#resultReported) return;
    this.#resultReported = true;
    this.#o.onShown?.({ jobId: this.#state.jobId ?? '', type: 'completed', receivedAt: final.receivedAt, shownAt: now, superseded: false, step: 'result' });
  }

  /** The completed job's Reroll, Edit and Delete can be clicked (step `actions` of its final event). */
  #reportActions(now: number): void {
    const final = this.#pending.find((p) => p.type === 'completed');
    if (!final || this.#actionsReported) return;
    this.#actionsReported = true;
    this.#o.onShown?.({ jobId: this.#state.jobId ?? '', type: 'completed', receivedAt: final.receivedAt, shownAt: now, superseded: false, step: 'actions' });
  }

  #reportRest(now: number, superseded: boolean, filter: (p: Pending) => boolean = () => true): void {
    this.#report(filter, now, superseded);
  }

  #report(match: (p: Pending) => boolean, now: number, superseded: boolean, shownPartialIndex?: number): void {
    for (let i = 0; i < this.#pending.length; ) {
      const p = this.#pending[i]!;
      if (!match(p)) {
        i++;
        continue;
      }
      this.#pending.splice(i, 1);
      const isSuperseded = superseded || (shownPartialIndex !== undefined && p.partialIndex !== shownPartialIndex);
      this.#o.onShown?.({ jobId: this.#state.jobId ?? '', type: p.type, receivedAt: p.receivedAt, shownAt: now, superseded: isSuperseded && p.type !== 'completed' && p.type !== 'failed' && p.type !== 'cancelled', ...(p.type === 'completed' ? { step: 'message' as const } : {}) });
    }
  }

  #logError(error: unknown, message: string): void {
    this.#o.logger.warn({ jobId: this.#state.jobId, channel: this.#channelId, code: slackErrorCode(error) }, message);
  }
}
