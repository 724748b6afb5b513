import { randomBytes } from 'node:crypto';
import { scopeKeyOf, userKeyOf } from './member-keys.js';
import {
  AbortedError,
  isCompletedEvent,
  LIMITS,
  editRequestOf,
  parseGenerationRequest,
  resultFromCompleted,
  decodeImages,
  imageBytes,
  ValidationError,
  type CompletedEvent,
  type EditRequest,
  type GenerationRequest,
  type ImageEventStream,
  type LoggerLike,
  type PartialImageEvent,
  type PictorClient,
  type PriceQuote,
  type RequestOptions,
} from 'pictor';
import { AS_VALIDATION_ERROR, endingOf, errorCodeOf, estimateOf, JobLedger, type ChargedJob, type JobEnding, type JobSettlement, NO_METRICS, timerMsOf, type JobMetrics } from 'pictor/internal';
import { ChatBudgets } from './chat-budgets.js';
import { checkUntil, imageOfPartial, waitAtMost, waitWithin, withinDeadline } from 'pictor/internal';
import { InFlight } from './in-flight.js';
import { describeFailure, logJobFailure, type FailureLogMessages } from './describe-failure.js';
import { loggableError } from './loggable-error.js';
import { isJobRefusedError, JobRefusedError } from './JobRefusedError.js';
import { refusalFromReservation, refusalFromValidation } from './describe-refusal.js';
import { mayCancel } from './may-cancel.js';
import { ScopePolicy, type OperatorControls } from './scope-policy.js';
import { settingsInState, type ScopeSettingsStore } from './scope-settings.js';
import { MemberDefaultsBook, memberDefaultsInState, type AppliedDefaults, type MemberDefaultsStore } from './member-defaults.js';
import { linkSeenBy } from './end-facts.js';
import { JobHistory, jobEndOf, type JobEnd, type JobHistoryState } from './job-history.js';
import { AuditLog, type AuditLogOptions } from './audit-log.js';
import { HouseStyles, type HouseStyleRecord, type StyledJob } from './house-styles.js';
import type { Space } from '../state/index.js';
import { DEFAULT_MAX_QUEUED_JOBS, QueueBound, QueuePositions, QueueRoom, type QueuePlace } from './queue-bound.js';
import { UpdatePump } from './UpdatePump.js';
import { PreviewEncoder } from './preview-image.js';
import { words, type Words } from './words.js';
import type {
  AcceptedJob,
  FieldNames,
  FinalUpdate,
  FormAnswers,
  ImagesToFetch,
  InputImage,
  IntakeAnswers,
  JobCost,
  JobHandle,
  JobIntent,
  JobInfo,
  JobOptions,
  JobSpec,
  JobUpdate,
  PreviewImage,
  QuotaStore,
  Requester,
  SpendLimits,
  UpdateSink,
  DmCaps,
  MessageSeenBy,
} from './types.js';

export interface JobRunnerOptions {
  client: PictorClient;
  store: QuotaStore;
  limits: SpendLimits;
  /** The operator's caps of each person's own scope (DMs and user installs: `PICTOR_DM_DAILY_USD`, `PICTOR_DM_MONTHLY_USD`). Default none. */
  dmCaps?: DmCaps | undefined;
  /** Least time between two `queued`/`partial` updates of one job. Default 1500 ms. */
  minUpdateIntervalMs?: number | undefined;
  /** Partial images asked for per image (0 to 3). Default 2. */
  partialImages?: number | undefined;
  /** Keep each job's prompt in its usage record (`PICTOR_USAGE_PROMPTS=1`). Default false. */
  recordPrompts?: boolean | undefined;
  logger?: LoggerLike | undefined;
  /** Milliseconds since the epoch; update pacing is measured with it, so it must advance with real time. Default `Date.now`. */
  now?: (() => number) | undefined;
  /** How long `shutdown` waits for running jobs before it stops them. Default 30 s. */
  shutdownGraceMs?: number | undefined;
  /** How many finished jobs `get` still knows. Default 1000. */
  keepFinishedJobs?: number | undefined;
  /** Where jobs, refusals, spending, waits and retries are counted (`PICTOR_METRICS_PORT`). Default: nowhere. */
  metrics?: JobMetrics | undefined;
  /** How long the caps chat admins set for a server/workspace are cached before the ledger is read again. Default 5 s. */
  capCacheMs?: number | undefined;
  /** How long a settle the ledger does not take is tried again before it is kept for later (`JobLedger`). Default 30 s. */
  settleRetryMs?: number | undefined;
  /** What the operator allows every server/workspace (`PICTOR_ALLOWED_SCOPES`, `PICTOR_BLOCKED_WORDS` …). Default: everything. */
  operatorControls?: OperatorControls | undefined;
  /** How long a server's/workspace's settings (its role budgets among them) are cached before the store is read again. Default 5 s. */
  settingsCacheMs?: number | undefined;
  /** Where the chat admins' settings are kept (the bots' state: `settingsInState`). Default this process's memory. */
  settings?: ScopeSettingsStore | undefined;
  /** Where the house styles are kept (the bots' state: its `house-styles` space). Default this process's memory. */
  styles?: Pick<Space<HouseStyleRecord>, 'get' | 'update'> | undefined;
  /** Where members' own defaults are kept (the bots' state: `memberDefaultsInState`). Default this process's memory. */
  memberDefaults?: MemberDefaultsStore | undefined;
  /** Where members' job history is kept (`/imagine-history`: the bots' state); without it no history is kept. */
  history?: JobHistoryState | undefined;
  /** Jobs waiting to be sent at once (`PICTOR_MAX_QUEUED_JOBS`); past it a new job is refused at once (`queue_full`). Default 200. */
  maxQueuedJobs?: number | undefined;
  /**
   * Bytes of edit input images held by jobs waiting to be sent and by edits being downloaded (`PICTOR_MAX_QUEUED_INPUT_MB`);
   * an edit that would pass it is refused at once (`queue_full`), unless no other input is held. Default 512 MB.
   */
  maxQueuedInputBytes?: number | undefined;
  /** Previews re-encoded at display size (`PICTOR_LIGHT_PREVIEWS`); false: the partials as the service sent them. Default true. */
  lightPreviews?: boolean | undefined;
  /** Where the audit channels' posts are kept for `forget` (the bots' state: its `audit-posts` space). Without it, `forget` does not reach them. */
  auditPosts?: AuditLogOptions['posts'];
  /** Where the ends of jobs entered for the audit channels are taken once (the bots' state: its `audit-ended` space). Without it, an end recorded twice is posted twice. */
  auditEnded?: AuditLogOptions['ended'];
  /** How long audit entries are collected before a post (and the least time between two posts to one channel). Default 2 s. */
  auditBatchMs?: number | undefined;
  /** How long an audit channel waits after a failed post before trying it again (twice as long after each failure, up to an hour). Default a minute. */
  auditPostRetryMs?: number | undefined;
}

interface Job {
  readonly info: JobInfo;
  /** The spec and request; an edit's input images are dropped once its request has left or the job ended (`#letGoOfInputs`). */
  spec: JobSpec;
  request: GenerationRequest | EditRequest;
  /** Its place in the queue, with the bytes of its input images: the place is held until it is sent, the bytes until the service took its request or it ended. */
  readonly place: QueuePlace;
  readonly controller: AbortController;
  readonly pump: UpdatePump;
  /** Set once the job's outcome is known: from then on it can no longer be cancelled. */
  decided: boolean;
  cancelledBy: { byUserId: string; reason: 'requested' | 'shutdown' } | undefined;
  completedImages: number;
  /** Its way through the ledger: reserved, sent, each image, settled or released. */
  readonly charged: ChargedJob;
  done: Promise<FinalUpdate>;
}

const DEFAULT_MIN_UPDATE_INTERVAL_MS = 1500;
const DEFAULT_PARTIAL_IMAGES = 2;
const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
const DEFAULT_KEEP_FINISHED_JOBS = 1000;

/** Told to a user whose job waits because the limiter shared through Redis lost its connection. */
export const QUEUE_TROUBLE_NOTICE: Words = words('job.queue_trouble');

/** Told to whoever starts a job while the bot drains for a restart. */
export const RESTARTING_MESSAGE: Words = words('refusal.restarting');

/** After the grace period, how long shutdown still waits for stopped jobs to report. */
const SHUTDOWN_DRAIN_MS = 5_000;

const noopLogger: LoggerLike = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Runs image jobs for the chat surfaces: validates and prices a job, reserves
 * its budget, streams it through the (throttled) client, and reports one
 * ordered, paced sequence of updates to the surface's sink:
 * `queued` → `started` → `partial`* → `completed` | `failed` | `cancelled`.
 */
export class JobRunner {
  readonly #client: PictorClient;
  readonly #store: QuotaStore;
  readonly #ledger: JobLedger;
  readonly #limits: SpendLimits;
  readonly #minUpdateIntervalMs: number;
  readonly #partialImages: number;
  readonly #recordPrompts: boolean;
  readonly #logger: LoggerLike;
  readonly #now: () => number;
  readonly #shutdownGraceMs: number;
  readonly #keepFinishedJobs: number;
  readonly #metrics: JobMetrics;
  /** Jobs queued or running, and finished ones whose final update is still on its way. */
  readonly #jobs = new Map<string, Job>();
  /** What is left of finished jobs (no images, no prompt), oldest first. */
  readonly #finished = new Map<string, JobInfo>();
  #closed = false;
  readonly #queueBound: QueueBound;
  /** The queue's room: a place per job from its admission until it is sent (see `QueueRoom`). */
  readonly #room: QueueRoom;
  /** Requests in the intake: being decided, answered, their images fetched (`drain` waits for them too). */
  readonly #taking = new Set<Promise<unknown>>();
  /**
   * Ends being recorded (`recordEnded`: the history entry and the audit entry), and live jobs whose end will be once their
   * final update is shown, with the surface's mark after it: `shutdown` waits for them, then posts what waits for the
   * audit channels.
   */
  readonly #recording = new InFlight();
  /** Set by `drain`: new jobs are refused (`restarting`) while the ones taken run to their end. */
  #draining = false;
  /** The caps of each server/workspace (the operator's with what its chat admins set), and the usage summaries. */
  readonly budgets: ChatBudgets;
  /** Who may generate, where and what, per server/workspace (the operator's bounds with what its chat admins chose). */
  readonly policy: ScopePolicy;
  /** The house styles of every server/workspace (defined by their admins, picked by members, applied by the intake first). */
  readonly styles: HouseStyles;
  /** Each member's own defaults (`/imagine-settings`), which the intake applies within the rules. */
  readonly members: MemberDefaultsBook;
  /** Members' last jobs, recorded by the surfaces when a job ends; undefined when no history store was given. */
  readonly history: JobHistory | undefined;
  /** Makes the preview each shown partial is uploaded as (`JobUpdate['preview']`). */
  readonly previews: PreviewEncoder;
  /** The audit channels: every ended job and every refusal by a rule or a budget, posted by the surfaces' posters (`audit.setPoster`). */
  readonly audit: AuditLog;

  constructor(options: JobRunnerOptions) {
    this.#client = options.client;
    this.#store = options.store;
    this.#limits = { ...options.limits };
    // A timer's delay (UpdatePump waits it): one past what a timer can wait would fire after 1 ms, unpaced.
    this.#minUpdateIntervalMs = timerMsOf('minUpdateIntervalMs', options.minUpdateIntervalMs ?? DEFAULT_MIN_UPDATE_INTERVAL_MS, AS_VALIDATION_ERROR);
    this.#partialImages = options.partialImages ?? DEFAULT_PARTIAL_IMAGES;
    this.#recordPrompts = options.recordPrompts ?? false;
    this.#logger = options.logger ?? noopLogger;
    this.#now = options.now ?? Date.now;
    this.#shutdownGraceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    this.#keepFinishedJobs = options.keepFinishedJobs ?? DEFAULT_KEEP_FINISHED_JOBS;
    this.#metrics = options.metrics ?? NO_METRICS;
    const maxQueued = options.maxQueuedJobs ?? DEFAULT_MAX_QUEUED_JOBS;
    if (!Number.isInteger(maxQueued) || maxQueued < 1) throw new ValidationError('maxQueuedJobs', `maxQueuedJobs must be a whole number of jobs, 1 or more, not ${maxQueued}`);
    const maxInput = options.maxQueuedInputBytes;
    if (maxInput !== undefined && !(Number.isInteger(maxInput) && maxInput >= 1)) {
      throw new ValidationError('maxQueuedInputBytes', `maxQueuedInputBytes must be a whole number of bytes, 1 or more, not ${maxInput}`);
    }
    this.#queueBound = new QueueBound({ maxQueued, maxQueuedInputBytes: maxInput, now: this.#now });
    this.#room = new QueueRoom(this.#queueBound);
    this.#ledger = new JobLedger({
      store: this.#store,
      logger: this.#logger,
      now: this.#now,
      retryForMs: options.settleRetryMs,
      onCharged: (charged) => {
        this.#metrics.spent(charged.usd);
        const { size, quality } = charged.request;
        if (charged.images > 0) this.#metrics.imagesMade(size ?? 'auto', quality ?? 'auto', charged.images);
        if (charged.reservedUsd !== undefined) this.#metrics.overReserved(charged.usd - charged.reservedUsd);
      },
    });
    // Kept in the bots' state: every process of the account applies one set (the role budgets among them).
    this.policy = new ScopePolicy({
      store: options.settings ?? settingsInState(undefined, this.#logger),
      operator: options.operatorControls,
      partialImages: this.#partialImages,
      logger: this.#logger,
      now: this.#now,
      cacheMs: options.settingsCacheMs,
    });
    // The budgets read the role budgets through the policy's cache: one read of a scope's settings a job, one copy to forget on a change.
    const settings = this.policy.settings;
    this.budgets = new ChatBudgets({ store: this.#store, limits: this.#limits, dmCaps: options.dmCaps, logger: this.#logger, now: this.#now, cacheMs: options.capCacheMs, settings });
    this.styles = new HouseStyles({ space: options.styles, logger: this.#logger, now: this.#now, cacheMs: options.settingsCacheMs });
    this.members = new MemberDefaultsBook({ store: options.memberDefaults ?? memberDefaultsInState(), policy: this.policy, logger: this.#logger });
    this.previews = new PreviewEncoder({ enabled: options.lightPreviews, logger: this.#logger });
    const history = (this.history =
      options.history &&
      new JobHistory({ state: options.history, logger: this.#logger, now: this.#now, forgetAudit: (userKey) => this.audit.forget(userKey) }));
    this.audit = new AuditLog({
      channelOf: async (scope) => (await this.policy.effective(scope)).auditChannel.value,
      posts: options.auditPosts,
      ended: options.auditEnded,
      // The one rule of a member's forget, read where the prompt is posted: only where a member can forget (a history).
      forgotten: history,
      batchMs: options.auditBatchMs,
      postRetryMs: options.auditPostRetryMs,
      logger: this.#logger,
      now: this.#now,
    });
    const { partialImagesMin, partialImagesMax } = LIMITS;
    if (!Number.isInteger(this.#partialImages) || this.#partialImages < partialImagesMin || this.#partialImages > partialImagesMax) {
      throw new ValidationError(
        'partialImages',
        `partialImages must be an integer from ${partialImagesMin} to ${partialImagesMax}, not ${options.partialImages}`,
      );
    }
  }

  /**
   * The intake: one call per person's request of a job — a command, a button,
   * a modal, a mention, an HTTP interaction. Everything that can refuse the
   * job is decided before its first public answer, in this order: the bot
   * takes jobs (not draining), the rules of the server/workspace (who, where,
   * what; they fill in its defaults), the request's fields (parsed once, here),
   * a place in the queue (with the bytes of an edit's images, as declared),
   * then the member's pace and every budget in the ledger, where the job's
   * reservation is taken. Then `answers`:
   *
   * - `refuse` — the first answer, private: nothing reserved, fetched or sent;
   * - `accept` — the public answer; it says where the updates go (undefined:
   *   it could not be given, and the job is dropped, nothing charged);
   * - then an edit's images are fetched (their room held meanwhile), checked by
   *   their content and real bytes, and the job starts; `fail` when it cannot
   *   (nothing sent or charged).
   *
   * The job's history is kept here when it ends (`AcceptedJob.historyKey`).
   * Resolves with the job's handle once it started, else undefined; refusals
   * are counted in the metrics. What `refuse` and `fail` are handed is logged
   * here, once (`#logNotTaken`): the surface only tells the member.
   */
  request(intent: JobIntent, answers: IntakeAnswers): Promise<JobHandle | undefined> {
    const taking = this.#request(intent, answers);
    this.#taking.add(taking);
    void taking.catch(() => undefined).finally(() => this.#taking.delete(taking));
    return taking;
  }

  async #request(intent: JobIntent, answers: IntakeAnswers): Promise<JobHandle | undefined> {
    // Named as it comes in: the queue and the ledger know the job by it, and so does every line about it.
    const id = newJobId();
    // The house style the job took, as the scope names it, once applied: its line names that, never what was typed.
    const applied: { style?: string | undefined } = {};
    let admission: Admission;
    try {
      admission = await this.#admit(intent, id, applied);
    } catch (error) {
      this.#countIfRefused(error, intent.requester);
      this.#logNotTaken(error, intent.requester, 'request', { jobId: id, ...(applied.style !== undefined && { style: applied.style }) });
      // A refusal by a rule or a budget goes to the audit channel (the member alone is answered).
      this.audit.refused(intent.requester, intent, error);
      await answers.refuse(error);
      return undefined;
    }
    return this.#startAdmitted(admission, answers);
  }

  /**
   * The intake of an entry point that asks for the rest of the job in a form
   * first (Discord's "Edit image" menu and Edit button, Slack's shortcut,
   * `/imagine-edit` and Edit button): before the form opens, the bot takes
   * jobs, the rules of who and where let this member in, the job the form
   * makes may be private here (`form.private`: true for the Edit of a private
   * result, whose edit is private too; unset, the member's default — the form
   * has no private option, so its refusal names none), and none of their
   * budgets is spent to the last cent (the job itself, with its price, is
   * decided when the form comes back, through `request`). Then `answers.refuse`
   * (private; counted as a refused job) or `answers.accept` (opens the form).
   * Resolves with whether the form was opened.
   */
  async requestForm(requester: Requester, answers: FormAnswers, form: { private?: boolean | undefined; answerBy?: number | undefined } = {}): Promise<boolean> {
    let refusal: JobRefusedError | undefined;
    try {
      // Its reads wait only until the surface must answer (`JobIntent.answerBy`).
      refusal = await byAnswer(form.answerBy, this.#formRefusal(requester, form), 'the checks before a form');
    } catch (error) {
      this.#logNotTaken(error, requester, 'form');
      await answers.refuse(error);
      return false;
    }
    if (refusal) {
      this.#countRefusal(refusal, requester);
      this.#logNotTaken(refusal, requester, 'form');
      // Before a form: no prompt yet.
      this.audit.refused(requester, { kind: 'edit', prompt: '' }, refusal);
      await answers.refuse(refusal);
      return false;
    }
    await answers.accept();
    return true;
  }

  /**
   * Runs a job at once: `request` with `sink` as its accepted answer. Rejects with the refusal (JobRefusedError:
   * nothing queued, nothing spent) or what stopped it. For callers without a first answer to give (tests, scripts).
   */
  async submit(spec: JobIntent, sink: UpdateSink): Promise<JobHandle> {
    let reason: unknown;
    const keep = async (error: unknown) => {
      reason = error;
    };
    const handle = await this.request(spec, { refuse: keep, accept: async () => ({ sink }), fail: keep });
    if (!handle) throw reason;
    return handle;
  }

  /**
   * What the gauges read when metrics are scraped: USD reserved by jobs queued or running, or ended with their settle
   * still being tried (their reservation still counts; a settle the ledger kept for later is no longer counted once its
   * job is retired), jobs waiting to be sent, and the input bytes the queue bound counts.
   */
  liveReadings(): { reservedUsd: () => number; queued: () => number; queuedInputBytes: () => number } {
    const jobs = () => [...this.#jobs.values()];
    return {
      reservedUsd: () => jobs().reduce((sum, j) => sum + (j.charged.reserving ? j.info.estimate.totalUsd : 0), 0),
      queued: () => jobs().filter((j) => j.info.status === 'queued').length,
      queuedInputBytes: () => this.#room.load.inputBytes,
    };
  }

  /**
   * Rules, fields, room and ledger, in that order (see `request`), for the job `id`: an admission, or a throw
   * (JobRefusedError for a refusal), which `#request` logs. `applied.style` is the house style once applied (its
   * name as the scope keeps it), for that line.
   */
  async #admit(intent: JobIntent, id: string, applied: { style?: string | undefined }): Promise<Admission> {
    this.#assertOpen();
    const { images, fieldNames, style, memberDefaults, again, inForm, answerBy, ...asked } = intent;
    // Each read waits only until the surface must answer (`JobIntent.answerBy`): a stalled store refuses, in time.
    const inTime = <T>(read: Promise<T>, who: string) => byAnswer(answerBy, read, who);
    // A house style first: every rule below sees the prompt and options as they will be sent.
    const styled = await inTime(this.styles.apply(asked, style), 'the house styles');
    applied.style = styled.style;
    // Then the member's own defaults where neither they nor the style chose (none where the request takes none, only
    // their previews on their own Reroll or Retry: the job as it was sent); each only where the rules below allow it.
    const member = await inTime(this.members.apply({ ...asked, prompt: styled.prompt, options: styled.options }, { own: memberDefaults ?? true }), 'the member’s defaults');
    // Without the style, the member's own defaults would fill what it set: what a conflict's refusal compares with;
    // then the server's/workspace's defaults (or its refusal of the job without the style): what a rule's refusal does.
    const unstyledSpec = async () => (await inTime(this.members.apply(asked, { own: memberDefaults ?? true }), 'the member’s defaults')).spec;
    const unstyled = async () => (await unstyledSpec()).options;
    const unstyledAdmitted = async () => (await inTime(this.policy.admit(await unstyledSpec(), { again, inForm }), 'the rules of the server/workspace')).spec.options;
    // The server's/workspace's rules (who, where, what) before anything is reserved or sent; they fill in its defaults.
    const { spec, previews } = await inTime(this.policy.admit(member.spec, { again, inForm }), 'the rules of the server/workspace').catch(async (error: unknown) => {
      if (!(error instanceof JobRefusedError)) throw error;
      // A blocked word the style brought in, not the member: the refusal names the style.
      const word = error.code === 'blocked_word' && styled.style !== undefined ? error.word : undefined;
      // An option the style set that a rule forbids, where the style changed it: the refusal names the style too.
      throw (word !== undefined && this.styles.blockedWordOfStyle(asked.prompt, word, styled.style!)) || (await this.styles.optionOfStyle(error, asked.options, styled, unstyledAdmitted, fieldNames)) || error;
    });
    const fields = await this.#styled(() => this.#parse(spec, member.previews ? previews : 0, fieldNames), asked.options, styled, unstyled, fieldNames);
    const toFetch = isImagesToFetch(images) ? images : undefined;
    const request = spec.kind === 'edit' && !isImagesToFetch(images) ? this.#withImages(fields, images ?? [], fieldNames) : fields;
    // What the ledger reserves and a refusal names: the one rule of a job's estimate, on what the ledger is given.
    const charging = { operation: spec.kind, n: fields.n, size: fields.size, quality: fields.quality };
    const estimate = estimateOf(charging);
    const { requester } = spec;
    // A place first (no ledger write for a job the queue cannot take), counted at once: a burst cannot all pass the bound.
    const place = this.#room.take(toFetch ? toFetch.declaredBytes : inputBytesOf(request));
    if (place instanceof JobRefusedError) throw place;
    let reservation: Awaited<ReturnType<JobLedger['begin']>>;
    try {
      const limits = await inTime(this.budgets.limitsFor(requester), 'the budgets');
      // Nothing is reserved once the first answer would come too late to say so: the ledger is not asked at all.
      let begun: ReturnType<JobLedger['begin']> | undefined;
      const begin = () =>
        (begun = this.#ledger.begin({
          jobId: id,
          userKey: userKeyOf(requester),
          scopeKey: scopeKeyOf(requester),
          limits,
          request: charging,
          prompt: this.#recordPrompts ? fields.prompt : undefined,
        }));
      reservation = await byAnswer(answerBy, begin, 'the ledger').catch((error: unknown) => {
        // Too late to answer with it: a reservation that still comes is ended at once (none is left open).
        void begun?.then(
          async (late) => {
            if (late.ok) await late.job.end({ kind: 'cancelled' }).settled;
          },
          () => undefined,
        ).catch((failure: unknown) => this.#logger.warn({ jobId: id, err: String(failure) }, 'could not end a reservation that came after its request was refused'));
        throw error;
      });
    } catch (error) {
      place.release();
      throw error;
    }
    if (!reservation.ok) {
      place.release();
      throw refusalFromReservation(reservation, { estimateUsd: estimate.totalUsd, platform: requester.platform, now: this.#now(), scopeId: requester.scopeId });
    }
    const admission: Admission = { id, intent, styled, member, spec: { ...spec, images: undefined }, fields, request: toFetch ? undefined : request, toFetch, estimate, place, charged: reservation.job };
    if (this.#closed) {
      await this.#drop(admission);
      this.#assertOpen();
    }
    // A reservation that came after the surface had to answer: dropped, and the member told (nothing reserved), with
    // the one reason of a time to answer by that has come (`withinDeadline`'s).
    return byAnswer(answerBy, async () => admission, 'the ledger').catch(async (error: unknown) => {
      await this.#drop(admission);
      throw error;
    });
  }

  /** After the intake admitted a job: its public answer, then its images, then its start (see `request`). */
  async #startAdmitted(admission: Admission, answers: IntakeAnswers): Promise<JobHandle | undefined> {
    let accepted: AcceptedJob | undefined;
    try {
      const { styled, member } = admission;
      accepted = await answers.accept({
        id: admission.id,
        estimate: admission.estimate,
        prompt: styled.prompt,
        private: admission.spec.private === true,
        options: member.spec.options,
        ignoredDefaults: member.ignored,
      });
    } finally {
      if (!accepted) await this.#drop(admission);
    }
    if (!accepted) {
      this.#logger.info({ jobId: admission.id }, 'an admitted job was dropped: its first answer could not be given');
      return undefined;
    }
    let job: Job;
    try {
      job = await this.#start(admission, accepted);
    } catch (error) {
      const { requester } = admission.spec;
      this.#logNotTaken(error, requester, 'start', { jobId: admission.id });
      await this.#drop(admission);
      this.#countIfRefused(error, requester);
      await answers.fail(error);
      return undefined;
    }
    return { id: job.info.id, submittedAt: job.info.submittedAt, done: job.done };
  }

  /** An admitted job's images (fetched now, checked by content and real bytes), the surface's last step, then the job itself, queued. */
  async #start(admission: Admission, accepted: AcceptedJob): Promise<Job> {
    const { id, spec, estimate, place, charged } = admission;
    let request = admission.request;
    if (!request) {
      const images = await admission.toFetch!.fetch();
      request = this.#withImages(admission.fields, images, admission.intent.fieldNames);
      const tooLarge = place.resize(inputBytesOf(request));
      if (tooLarge) throw tooLarge;
    }
    // The surface's last step, for either kind at this one place: one that throws is a failed start.
    await accepted.beforeStart?.();
    this.#assertOpen({ draining: false });
    const job = this.#createJob({ id, spec, request, place, estimate, submittedAt: this.#now(), sink: accepted.sink, charged });
    const { requester } = spec;
    this.#logger.info(
      { jobId: id, kind: spec.kind, platform: requester.platform, n: request.n, size: request.size, quality: request.quality, estimateUsd: estimate.totalUsd },
      'job queued',
    );
    const { kind } = admission.intent;
    const { prompt } = admission.styled;
    const { options } = admission.member.spec;
    // Its end once its final update was shown (as sent: its style applied); `shutdown` waits for it.
    // Then, only once it is recorded, the surface's mark that it was: a stop or a crash before that leaves the job
    // unmarked, for a sweep to record it again, which changes nothing.
    const ended = job.done
      .then((final) =>
        this.recordEnded(
          requester,
          { key: accepted.historyKey, kind, prompt, options, private: spec.private === true, seenBy: accepted.historyLinkSeenBy, acceptedAt: job.info.submittedAt },
          jobEndOf(final),
          accepted.historyLink,
        ),
      )
      .then(
        () => this.#markEndRecorded(id, accepted),
        (error: unknown) => this.#logger.warn({ jobId: id, err: loggableError(error) }, 'could not record the end of a job'),
      );
    // The shutdown's wait covers it from now: a job that ends during `shutdown` is kept, posted and marked too.
    this.#whileRecording(ended);
    return job;
  }

  /** The surface's mark that a job's end was recorded (`AcceptedJob.onEndRecorded`); a failure is logged. */
  async #markEndRecorded(jobId: string, accepted: AcceptedJob): Promise<void> {
    try {
      await accepted.onEndRecorded?.();
    } catch (error) {
      this.#logger.warn({ jobId, err: loggableError(error) }, 'could not save that the end of a job was recorded');
    }
  }

  /**
   * The end of a job, once its final update was shown: kept in the member's history (`/imagine-history`; given its
   * `key`, with `link` — the message it was shown in, asked once — and without its input images) and posted to the
   * audit channel, never before the member's answer and never failing it. Where the link is kept is decided by who
   * can open the message (`linkSeenBy`: a private job's is its member's, any other's `seenBy`, default `everyone`),
   * asked by the history and the audit channel themselves: the member's own history keeps it always; the audit entry
   * and the admins' view of the history only when everyone can open it (not even asked otherwise). Whether a job has a link at all is the
   * surface's: Slack's message in a direct message with the app is `member`'s (`jobMessageSeenBy`, a private job's
   * among them); a private Discord job's reply is ephemeral, which no link opens, so it is given none (`jobLinkOf`). The
   * runner calls it as each of its jobs ends (as the handle's `done` settles; it resolves once both are written, after
   * the link and a history write that waits for it) and, once it resolved, the surface's `AcceptedJob.onEndRecorded`
   * (Discord's record and Slack's request are marked `endRecorded` there). A surface calls it for a job it shows later,
   * which a stopped process left — Discord's sweep for a result made and saved but never shown, Slack's for a job whose
   * images were posted but not its "Done" — only when the job is not marked so. One order for every caller: record, then
   * mark. A crash between the two leaves the job unmarked, for a sweep to record it again, which changes nothing: the
   * history merges by the job's `key`, and the audit channel enters a job's end once by it (`AuditLog.jobEnded`).
   * `shutdown` waits for both, and for the surface's mark. A history entry that could not be written rejects (logged):
   * the end is not recorded, so the surface does not mark it, and the next start's sweep records it again; the member's
   * answer was given before and does not change. The audit entry does not reject: it is entered once its channel
   * is read (a channel that cannot be read is logged, its entry not posted), and a state that cannot tell whether it was
   * entered enters it. It resolves once the audit entry was posted (after its batch, within the channel's pace), or
   * will not be: a stop or a crash that drops a waiting entry leaves the end unmarked, for the sweep to post it then;
   * `shutdown` posts what waits at once and gives up by its stop's deadline. Both carry no prompt when its member
   * erased their prompts while it ran (`JobHistory.forgotten`, given `acceptedAt`: when the job was accepted, or for a
   * job a surface records later, when its record or request was made), asked where a prompt is written: the history
   * entry's after the links were asked and again once it was kept, the audit entry's just before and just after its
   * post (a forget on another replica may mark the member after one read, and erase before the write that follows).
   */
  recordEnded(
    requester: Requester,
    job: { key?: string | undefined; kind: JobSpec['kind']; prompt: string; options: JobOptions; private: boolean; seenBy?: MessageSeenBy | undefined; acceptedAt: number },
    final: JobEnd,
    link?: (() => Promise<string | undefined>) | undefined,
  ): Promise<void> {
    let asked: Promise<string | undefined> | undefined;
    const linkOnce = () => (asked ??= Promise.resolve().then(() => link?.()).catch(() => undefined));
    const { key, seenBy = 'everyone', acceptedAt, ...described } = job;
    const { history } = this;
    const keeps = history !== undefined && key !== undefined;
    // The audit channel's readers are the admins: a link to a message only the member can open leads them nowhere (not asked for them).
    const url = linkSeenBy(job) === 'everyone' ? linkOnce() : Promise.resolve(undefined);
    const kept = keeps ? history.recordEnd(requester, { key, ...described, seenBy, acceptedAt }, final, linkOnce()) : Promise.resolve();
    // The audit entry asks the member's mark itself, just before its post and once it was kept (`AuditLog`'s `forgotten`).
    const entry = url
      .then((auditLink) => this.audit.jobEnded(requester, { key, ...described, seenBy, acceptedAt }, final, auditLink))
      .catch((error: unknown) => this.#logger.warn({ err: loggableError(error) }, 'could not record a job for the audit channel'));
    return this.#whileRecording(Promise.all([kept, entry]).then(() => undefined));
  }

  /** An end being recorded, which `shutdown` waits for until it settled. */
  #whileRecording(recording: Promise<void>): Promise<void> {
    this.#recording.track(recording);
    return recording;
  }

  /** Gives an admitted job's reservation and place back (nothing was sent). */
  async #drop(admission: Admission): Promise<void> {
    admission.place.release();
    await admission.charged.end({ kind: 'cancelled' }).settled;
  }

  /**
   * Cancels a queued or running job (the upstream request is aborted). Only the
   * requester or an admin of the same server/workspace may; returns false when
   * not allowed, unknown, or already finished.
   */
  cancel(jobId: string, by: Requester): boolean {
    const job = this.#jobs.get(jobId);
    if (!job || job.decided || !mayCancel(job.spec.requester, by)) return false;
    // Every image has arrived: the job is billed and about to complete.
    if (job.completedImages >= job.request.n) return false;
    this.#cancel(job, { byUserId: by.userId, reason: 'requested' });
    return true;
  }

  /** What the runner knows about a job: running ones, and the last finished ones. */
  get(jobId: string): JobInfo | undefined {
    const job = this.#jobs.get(jobId);
    if (job) return { ...job.info };
    const finished = this.#finished.get(jobId);
    return finished ? { ...finished } : undefined;
  }

  /** Jobs queued or running, oldest first. */
  activeJobs(): JobInfo[] {
    return [...this.#jobs.values()].filter((j) => isActive(j.info.status)).map((j) => ({ ...j.info }));
  }

  /**
   * Stops taking jobs at once (a new submit is refused with `restarting`) and
   * waits, up to `graceMs`, for every job already taken — queued ones
   * included — to end and be shown by its surface. Nothing is cancelled: a
   * deploy lets paid work finish. Resolves with how many jobs are still
   * queued or running (0 when all ended in time); `shutdown` stops those.
   */
  async drain(graceMs: number): Promise<number> {
    this.#draining = true;
    const deadline = this.#now() + graceMs;
    // A request in the intake when the drain began (being decided, answered, its images fetched) joins the jobs waited for.
    while (this.#jobs.size > 0 || this.#taking.size > 0) {
      const left = deadline - this.#now();
      if (left <= 0) break;
      await waitAtMost(Promise.allSettled([...this.#taking, ...[...this.#jobs.values()].map((j) => j.done)]), left);
    }
    const active = this.activeJobs().length;
    this.#logger.info({ active, graceMs }, active ? 'drained the job runner; some jobs are still running' : 'drained the job runner');
    return active;
  }

  #countRefusal(refusal: JobRefusedError, requester: Requester): void {
    this.#metrics.refused(refusal.code);
    this.#metrics.jobFinished(requester.platform, 'refused');
  }

  #countIfRefused(error: unknown, requester: Requester): void {
    if (error instanceof JobRefusedError) this.#countRefusal(error, requester);
  }

  /**
   * The one line about what the intake did not take — a job or a form refused (a rule, a limit, the queue, a
   * setting), or stopped before it was sent (the ledger or the bots' state, an edit's images, a bug) — by the one rule
   * (`logJobFailure`), written here and nowhere else: the surface that tells the member only renders it. It names who
   * asked (never the prompt), `fields` (a job's id: the queue and the ledger know it by it), a refusal's limit and use,
   * and for a full queue the jobs waiting. A job whose images stopped coming because it was cancelled or the bot is
   * stopping (`aborted`: the surface's fetch, as Slack's Cancel before a job is sent) is no failure: `info`, as a cancel is.
   */
  #logNotTaken(error: unknown, requester: Requester, stage: keyof typeof NOT_TAKEN, fields: { jobId?: string; style?: string | undefined } = {}): void {
    const { platform, scopeId, userId } = requester;
    const who = { platform, scopeId, userId, ...fields };
    if (stage === 'start' && errorCodeOf(error) === 'aborted') {
      this.#logger.info(who, 'an admitted job was dropped before it was sent: cancelled while its images came, or the bot stopping');
      return;
    }
    const limits = isJobRefusedError(error) && error.limit !== undefined ? { limit: error.limit, used: error.used } : {};
    const queued = isJobRefusedError(error) && error.code === 'queue_full' ? { queued: this.#room.load.jobs } : {};
    logJobFailure(this.#logger, error, { ...who, ...limits, ...queued }, NOT_TAKEN[stage]);
  }

  /**
   * What `requestForm` refuses: a drain, the rules of who and where, the private rule for the job the form makes (private
   * as `form` says, else by the member's default: `MemberDefaultsBook.apply`, as the job will be), then a budget spent to
   * its end (`ChatBudgets.spentRefusal`).
   */
  async #formRefusal(requester: Requester, form: { private?: boolean | undefined }): Promise<JobRefusedError | undefined> {
    if (this.draining) return new JobRefusedError('restarting', RESTARTING_MESSAGE);
    const rule = await this.policy.whoWhereRefusal(requester);
    if (rule) return rule;
    let spec: JobSpec;
    try {
      ({ spec } = await this.members.apply({ kind: 'edit', prompt: '', options: {}, requester, private: form.private }));
    } catch (error) {
      // Their own defaults unreadable: the job the form makes would be refused, so the form does not open.
      if (error instanceof JobRefusedError) return error;
      throw error;
    }
    const privately = await this.policy.formPrivateRefusal(spec);
    if (privately) return privately;
    const spent = await this.budgets.spentRefusal(requester);
    if (!spent) return undefined;
    return refusalFromReservation(spent, { estimateUsd: 0, platform: requester.platform, now: this.#now(), scopeId: requester.scopeId });
  }

  /** True once `drain` or `shutdown` began: new jobs are refused. */
  get draining(): boolean {
    return this.#draining || this.#closed;
  }

  /**
   * Stops taking jobs, cancels queued ones, waits up to the grace period for
   * running ones, then stops those too. Resolves once every job has reported
   * (or a few more seconds have passed). The store is the caller's to close. `until` (a time as `Date.now()`): every
   * wait ends by then at the latest (a process whose chat surfaces and stores still have to stop after it).
   */
  async shutdown(options: { graceMs?: number | undefined; until?: number | undefined } = {}): Promise<void> {
    const until = checkUntil(options.until);
    this.#closed = true;
    const upTo = (ms: number) => waitWithin(ms, until);
    // Every job not retired yet: those queued or running, and those ended whose settle the ledger has not taken (a result
    // is shown before its settle lands), waited for within the grace: a settle lost here is charged its estimate later.
    const jobs = [...this.#jobs.values()];
    for (const job of jobs) if (job.info.status === 'queued' && !job.decided) this.#cancel(job, { byUserId: '', reason: 'shutdown' });
    const allDone = () => Promise.allSettled(jobs.map((j) => j.done));
    await waitAtMost(allDone(), upTo(options.graceMs ?? this.#shutdownGraceMs));
    for (const job of jobs) if (!job.decided) this.#cancel(job, { byUserId: '', reason: 'shutdown' });
    await waitAtMost(allDone(), upTo(SHUTDOWN_DRAIN_MS));
    // An ended job is kept in the history once its final update is shown: nothing is written after the runner is down.
    // What waits for the audit channels is posted now, and the entries of the jobs that just ended as they come, in the
    // same few seconds: each end's record resolves once its entry is posted, then the surface marks it.
    // Every history write is part of an end being recorded; one begun while this waits is waited for too.
    await waitAtMost(Promise.allSettled([this.#recording.settled(), this.audit.flush()]), upTo(SHUTDOWN_DRAIN_MS));
    // An audit channel slower than those seconds (the platforms pace a channel's posts) keeps the rest: said, not silently lost.
    if (this.audit.waiting > 0) this.#logger.warn({ entries: this.audit.waiting, refusals: this.audit.waitingRefusals }, 'audit entries were not posted before the bot stopped');
    this.#logger.info({ jobs: jobs.length }, 'job runner shut down');
  }

  /** Draining refuses new jobs (`restarting`); once shut down nothing starts, an admitted job neither. */
  #assertOpen(options: { draining?: boolean } = {}): void {
    if (this.#draining && options.draining !== false) throw new JobRefusedError('restarting', RESTARTING_MESSAGE);
    if (this.#closed) throw new AbortedError('the bot is shutting down and takes no new jobs');
  }

  /**
   * Runs a parse; a rule between two options, one of them the style's and not the member's, is refused naming the
   * style, where the style changed that option (`unstyled`: the job's options as the member's defaults fill them
   * without the style, read only then).
   */
  async #styled<T>(parse: () => T, asked: JobOptions, styled: StyledJob, unstyled: () => Promise<JobOptions>, fieldNames: FieldNames | undefined): Promise<T> {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof JobRefusedError) || styled.style === undefined) throw error;
      throw (await this.styles.conflictOfStyle(error, asked, styled, unstyled, fieldNames)) ?? error;
    }
  }

  /**
   * The job's fields through the core's schemas, once (an edit's fields are a
   * generation's; its images are checked by `#withImages`); refusals name the
   * field as the surface calls it.
   */
  #parse(spec: Omit<JobSpec, 'images'>, previews: number, fieldNames: FieldNames | undefined): GenerationRequest {
    const input: Record<string, unknown> = { prompt: spec.prompt, stream: true };
    for (const [key, value] of Object.entries(spec.options ?? {})) if (value !== undefined) input[key] = value;
    const partials = Math.min(previews, this.#partialImages);
    if (partials > 0) input.partial_images = partials;
    return asRefusal(() => parseGenerationRequest(input), fieldNames);
  }

  /** An edit of parsed fields with its images, checked by their content (the fields are not parsed again). */
  #withImages(fields: GenerationRequest, images: readonly InputImage[], fieldNames: FieldNames | undefined): EditRequest {
    return asRefusal(() => editRequestOf(fields, images.map((img) => ({ data: img.data, filename: img.filename }))), fieldNames);
  }

  #createJob(input: {
    id: string;
    spec: JobSpec;
    request: GenerationRequest | EditRequest;
    place: QueuePlace;
    estimate: PriceQuote;
    submittedAt: number;
    sink: UpdateSink;
    charged: ChargedJob;
  }): Job {
    const { id, spec, request, place, estimate, submittedAt, sink, charged } = input;
    const pump = new UpdatePump({ sink, minIntervalMs: this.#minUpdateIntervalMs, now: this.#now, logger: this.#logger, jobId: id });
    let markRan!: () => void;
    const ran = new Promise<void>((resolve) => (markRan = resolve));
    const job: Job = {
      info: { id, kind: spec.kind, status: 'queued', requester: { ...spec.requester }, submittedAt, estimate },
      spec,
      request,
      place,
      controller: new AbortController(),
      pump,
      decided: false,
      cancelledBy: undefined,
      completedImages: 0,
      charged,
      done: ran.then(() => pump.delivered),
    };
    this.#jobs.set(id, job);
    // Started on the next turn, so the caller holds the handle before the first update.
    setImmediate(() => {
      void this.#run(job)
        .catch((error: unknown) => this.#failUnexpectedly(job, error))
        .finally(markRan);
    });
    void job.done.then(() => this.#retire(job));
    return job;
  }

  /**
   * A bug of ours broke the job: the user still gets a final update, and the
   * reservation goes back — unless the request had been sent (it may be billed:
   * its estimate stays spent; a job already settled is not charged again).
   */
  async #failUnexpectedly(job: Job, error: unknown): Promise<void> {
    this.#logger.error({ jobId: job.info.id, err: loggableError(error) }, 'the job runner failed unexpectedly');
    job.decided = true;
    const { cost, settled } = this.#end(job, { kind: 'failed', error });
    if (!job.pump.finished) {
      if (job.cancelledBy) {
        this.#pushCancelled(job, cost);
      } else {
        const failure = describeFailure(error, job.spec.requester.locale);
        this.#finish(job, 'failed', this.#now());
        job.pump.push({ type: 'failed', jobId: job.info.id, code: failure.code, message: failure.message, words: failure.words, retryable: failure.retryable, ...this.#imagesOf(job), ...cost });
      }
    }
    await settled;
  }

  async #run(job: Job): Promise<void> {
    const { id } = job.info;
    // The request is read from the job, never kept here: its input images are let go once it has left.
    const { controller } = job;
    let queuedSent = false;
    let lastAhead = 0;
    /** The positions pushed to the job's updates: a few, however long the queue (`QueuePositions`). */
    const positions = new QueuePositions();
    let notice: Words | undefined;
    const options: RequestOptions = {
      signal: controller.signal,
      onQueuePosition: (ahead) => {
        if (job.info.status !== 'queued') return;
        lastAhead = ahead;
        if (!positions.worthShowing(ahead)) return;
        queuedSent = true;
        job.pump.push({ type: 'queued', jobId: id, ahead, notice });
      },
      onQueueTrouble: () => {
        if (job.info.status !== 'queued' || notice) return;
        notice = QUEUE_TROUBLE_NOTICE;
        queuedSent = true;
        positions.shown(lastAhead);
        job.pump.push({ type: 'queued', jobId: id, ahead: lastAhead, notice });
      },
      // The same two calls the spend guard's watch gives the CLI and the n8n node (`ChargedJob`: one rule of what was sent).
      // Recorded before the body leaves (after any wait in the limiter): a crash from here on settles the job at its estimate.
      beforeSend: job.charged.beforeSend,
      // The service took the request: its input images leave the bound and the job.
      onAccepted: () => this.#letGoOfInputs(job),
      // An answer that bills nothing (a 429, a 5xx) leaves the job unsent until the next attempt: a cancel in the wait is released.
      onRetry: (info) => {
        this.#metrics.retried(info.error.code);
        if (info.error.code === 'rate_limited') this.#metrics.rateLimited();
        job.charged.onRetry(info);
      },
      onStart: () => {
        if (job.info.status !== 'queued') return;
        if (!queuedSent) job.pump.push({ type: 'queued', jobId: id, ahead: 0 });
        job.info.status = 'running';
        job.info.startedAt = this.#now();
        // The limiter gave it its slot: it no longer waits its turn, so it leaves the queue. Not sent yet: the ledger's
        // mark (`beforeSend`) comes first, `onSend` when it leaves. Its images still count until the service took them
        // (a 429 or a 5xx sends them again).
        job.place.leave();
        this.#queueBound.started();
        this.#metrics.queueWait((job.info.startedAt - job.info.submittedAt) / 1000);
        job.pump.push({ type: 'started', jobId: id });
      },
    };
    const completed: CompletedEvent[] = [];
    let stream: ImageEventStream | undefined;
    const { charged } = job;
    try {
      if (controller.signal.aborted) throw new AbortedError('the job was cancelled before it was sent');
      stream =
        job.spec.kind === 'edit'
          ? this.#client.editStream(job.request as EditRequest, options)
          : this.#client.generateStream(job.request as GenerationRequest, options);
      for await (const event of stream) {
        if (isCompletedEvent(event)) {
          completed.push(event);
          charged.onImage(event);
          job.completedImages = completed.length;
        } else if (this.#partialImages > 0 && !job.cancelledBy) {
          // With partials turned off the field is not sent; a service whose default is to send some is not echoed.
          job.pump.push(this.#partialUpdate(id, event, completed.length));
        }
      }
    } catch (error) {
      charged.requestId = stream?.requestId;
      await this.#finishWithError(job, error);
      return;
    }
    charged.requestId = stream.requestId;
    if (job.decided) {
      // Cancelled while the last bytes arrived: what was produced is charged, and the cancel reported with it.
      const { cost, settled } = this.#end(job, { kind: 'cancelled' });
      this.#pushCancelled(job, cost);
      await settled;
      return;
    }
    job.decided = true;
    const operation = job.spec.kind;
    const result = resultFromCompleted(completed, { operation, size: job.request.size, quality: job.request.quality }, stream.requestId);
    // The result reaches the member at once; its settle goes on after (`done`, the history and a shutdown wait for it).
    const { settled } = this.#end(job, { kind: 'completed' });
    const finishedAt = this.#now();
    this.#finish(job, 'completed', finishedAt);
    job.pump.push({
      type: 'completed',
      jobId: id,
      images: decodeImages(result),
      // Each image's own real format (the client labels each from its bytes): an answer may mix them.
      formats: completed.map((event) => event.output_format),
      size: result.size,
      quality: result.quality,
      background: result.background,
      usage: result.usage,
      cost: result.cost,
      elapsedMs: finishedAt - job.info.submittedAt,
    });
    this.#logger.info({ jobId: id, images: completed.length, costUsd: result.cost.totalUsd, basis: result.cost.basis, elapsedMs: finishedAt - job.info.submittedAt }, 'job completed');
    await settled;
  }

  async #finishWithError(job: Job, error: unknown): Promise<void> {
    const { id } = job.info;
    const { charged } = job;
    if (job.cancelledBy) {
      // Once sent, a cancelled job is charged what it produced and, for images cut off mid-flight, their estimate — unless
      // the client saw that no byte of its body left (`endingOf` reads it from the error): then it is released.
      const told = endingOf({ kind: 'failed', error });
      const { cost, settled } = this.#end(job, told.kind === 'cancelled' ? told : { kind: 'cancelled' });
      this.#pushCancelled(job, cost);
      await settled;
      this.#logger.info({ jobId: id, reason: job.cancelledBy.reason, sent: charged.sent }, 'job cancelled');
      return;
    }
    job.decided = true;
    const failure = describeFailure(error, job.spec.requester.locale);
    // The last answer was a 429 that was not sent again (retries used up, or a wait longer than the timeout).
    if (failure.code === 'rate_limited') this.#metrics.rateLimited();
    const { cost, settled } = this.#end(job, { kind: 'failed', error });
    this.#finish(job, 'failed', this.#now());
    // The images that came before the failure were made and are charged: the user gets them with the failure.
    job.pump.push({ type: 'failed', jobId: id, code: failure.code, message: failure.message, words: failure.words, retryable: failure.retryable, ...this.#imagesOf(job), ...cost });
    const settlement = await settled;
    const mayBeBilled = settlement.action === 'settled';
    logJobFailure(this.#logger, error, { jobId: id, mayBeBilled, images: charged.images.length }, 'job failed');
  }

  /** The finished images of a job that did not complete, for its final update (none: nothing added). */
  #imagesOf(job: Job): { images?: Buffer[]; formats?: CompletedEvent['output_format'][] } {
    const images = job.charged.images;
    if (images.length === 0) return {};
    return { images: images.map(imageBytes), formats: images.map((image) => image.output_format) };
  }

  /**
   * Decides the cancel at once (nothing more is shown or sent, the request is aborted); its update is pushed by the run
   * once the request has stopped (`#pushCancelled`), with what it is charged, so the end the surface saves is the one a
   * sweep records after a stop or a crash. The member waits for the abort alone, never for the ledger (`#end`).
   */
  #cancel(job: Job, by: { byUserId: string; reason: 'requested' | 'shutdown' }): void {
    job.decided = true;
    job.cancelledBy = by;
    this.#finish(job, 'cancelled', this.#now());
    job.controller.abort(new AbortedError(by.reason === 'shutdown' ? 'the bot is shutting down' : 'the job was cancelled'));
  }

  /** A cancelled job's final update, once its request stopped: its images and what it is charged (`#end`). */
  #pushCancelled(job: Job, cost: EndCost): void {
    const by = job.cancelledBy!;
    job.pump.push({ type: 'cancelled', jobId: job.info.id, byUserId: by.byUserId, reason: by.reason, ...this.#imagesOf(job), ...cost });
  }

  #finish(job: Job, status: 'completed' | 'failed' | 'cancelled', at: number): void {
    job.info.status = status;
    job.info.finishedAt = at;
    // Its request will not be sent again: the input images need not wait for the final update to be shown.
    this.#letGoOfInputs(job);
    this.#metrics.jobFinished(job.spec.requester.platform, status);
    if (job.info.startedAt !== undefined) this.#metrics.requestDuration(job.spec.kind, true, (at - job.info.startedAt) / 1000);
  }

  /** Gives the job's place back and drops an edit's input images (once the service took its request, or the job ended): they leave the bound and can be freed. */
  #letGoOfInputs(job: Job): void {
    job.place.release();
    if ('image' in job.request && job.request.image.length > 0) job.request = { ...job.request, image: [] };
  }

  /**
   * Ends the job in the ledger (`ChargedJob.end`, by the one rule) and says at once what it is charged, as the ledger
   * decided it before its settle was taken: a final update never waits for a ledger that is slow or unreachable (a
   * settle it does not take is tried again for up to `settleRetryMs`, then kept for later, never shown to the user).
   * `settled` is that settle: the run waits for it, so `done` (and a shutdown) still do. A job whose end was begun before
   * (a bug of ours after it) says what that first end charged.
   */
  #end(job: Job, ending: JobEnding): { cost: EndCost; settled: Promise<JobSettlement> } {
    const { charge, settled } = job.charged.end(ending);
    return { cost: charge ? { cost: { totalUsd: charge.usd } } : {}, settled };
  }

  #partialUpdate(jobId: string, event: PartialImageEvent, completedSoFar: number): JobUpdate {
    let image: Buffer | undefined;
    let preview: Promise<PreviewImage> | undefined;
    const bytes = () => (image ??= Buffer.from(event.b64_json, 'base64'));
    const previews = this.previews;
    return {
      type: 'partial',
      jobId,
      imageIndex: imageOfPartial(event, completedSoFar),
      partialIndex: event.partial_image_index,
      // Decoded when a surface reads it: most partials are superseded by pacing and never shown.
      get image() {
        return bytes();
      },
      format: event.output_format,
      // Likewise encoded only for a partial a surface shows, once however often it is asked for.
      preview: () => (preview ??= previews.encode(bytes(), event.output_format, jobId)),
    };
  }

  /** Keeps only what `get` needs of a finished job, so its images and inputs can be freed. */
  #retire(job: Job): void {
    this.#jobs.delete(job.info.id);
    this.#finished.set(job.info.id, job.info);
    for (const id of this.#finished.keys()) {
      if (this.#finished.size <= this.#keepFinishedJobs) break;
      this.#finished.delete(id);
    }
  }
}

/** A job the intake admitted: its reservation and place are held until it starts or is dropped. */
interface Admission {
  id: string;
  intent: JobIntent;
  /** Its prompt and options as sent: the house style applied (the member's own without one). */
  styled: StyledJob;
  /** The member's defaults applied (the options as the member's, before the scope's defaults). */
  member: AppliedDefaults;
  /** As the rules admitted it (the scope's defaults filled in), without images. */
  spec: JobSpec;
  /** Its fields, parsed once. */
  fields: GenerationRequest;
  /** The request to send, when its images (if any) were here at admission; else they are fetched at its start. */
  request: GenerationRequest | EditRequest | undefined;
  toFetch: ImagesToFetch | undefined;
  estimate: PriceQuote;
  place: QueuePlace;
  charged: ChargedJob;
}

/** What a failed or cancelled job's final update says it cost: what the ledger charges it, or nothing when it releases it. */
type EndCost = { cost?: JobCost };

/**
 * The intake's wait for `read`: only until `answerBy` (undefined: as long as it takes); once it has come, not at all
 * (`read` given as a function is then not asked). The one rule of the intake's "no time left", so that one event has
 * one reason, whichever step it came at (`withinDeadline`'s; told as an error on the bot's side), naming `who` — the
 * step that was waited for — so the log says which one stalled.
 */
function byAnswer<T>(answerBy: number | undefined, read: Promise<T> | (() => Promise<T>), who: string): Promise<T> {
  if (answerBy === undefined) return typeof read === 'function' ? read() : read;
  return withinDeadline(answerBy, read, who);
}

function isImagesToFetch(images: JobIntent['images']): images is ImagesToFetch {
  return images !== undefined && !Array.isArray(images) && typeof (images as ImagesToFetch).fetch === 'function';
}

/** Runs a parse; a ValidationError becomes the refusal naming the field (as the surface calls it). */
function asRefusal<T>(parse: () => T, fieldNames: FieldNames | undefined): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ValidationError) throw refusalFromValidation(error, fieldNames);
    throw error;
  }
}

/** The bytes of a request's input images (0 for a generation). */
function inputBytesOf(request: GenerationRequest | EditRequest): number {
  return 'image' in request ? request.image.reduce((sum, img) => sum + img.data.byteLength, 0) : 0;
}

const isActive = (status: JobInfo['status']): boolean => status === 'queued' || status === 'running';

/** The line of what the intake did not take, by where it stopped: a request, a form, an admitted job's start. */
const NOT_TAKEN = {
  request: { refused: 'job refused', failed: 'the runner did not take a job' },
  form: { refused: 'form refused', failed: 'the runner did not open a form' },
  start: { refused: 'admitted job refused before it was sent', failed: 'an admitted job could not start' },
} as const satisfies Record<string, FailureLogMessages>;

/** 12 URL-safe characters: short enough for a Discord `custom_id` or a Slack `action_id`. */
function newJobId(): string {
  return randomBytes(9).toString('base64url');
}

