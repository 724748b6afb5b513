import { randomBytes } from 'node:crypto';
import {
  AbortedError,
  estimatePrice,
  isCompletedEvent,
  LIMITS,
  parseEditRequest,
  parseGenerationRequest,
  resultFromCompleted,
  decodeImages,
  imageBytes,
  ValidationError,
  JobLedger,
  budgetsOf,
  nextUtcMidnight,
  nextUtcMonth,
  type ChargedJob,
  type CompletedEvent,
  type EditRequest,
  type JobEnding,
  type JobSettlement,
  type GenerationRequest,
  type ImageEventStream,
  type LoggerLike,
  type PartialImageEvent,
  type PictorClient,
  type PriceQuote,
  type RequestOptions,
  NO_METRICS,
  type JobMetrics,
} from '../../src/index.js';
import { ChatBudgets } from './chat-budgets.js';
import { describeFailure } from './describe-failure.js';
import { JobRefusedError } from './JobRefusedError.js';
import { refusalFromReservation, refusalFromValidation } from './describe-refusal.js';
import { mayCancel } from './may-cancel.js';
import { ScopePolicy, type OperatorControls } from './scope-policy.js';
import { settingsInState, type ScopeSettingsStore } from './scope-settings.js';
import { JobHistory, type JobHistoryStore } from './job-history.js';
import { DEFAULT_MAX_QUEUED_JOBS, positionWorthShowing, QueueBound, type QueuedLoad } from './queue-bound.js';
import { UpdatePump } from './UpdatePump.js';
import { PreviewEncoder } from './preview-image.js';
import type {
  FinalUpdate,
  JobHandle,
  JobInfo,
  JobSpec,
  JobUpdate,
  PreviewImage,
  QuotaStore,
  Requester,
  SpendLimits,
  UpdateSink,
  DmCaps,
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
  /** How long a server's/workspace's settings are cached before the store is read again. Default 5 s. */
  settingsCacheMs?: number | undefined;
  /** Where the chat admins' settings are kept (the bots' state: `settingsInState`). Default this process's memory. */
  settings?: ScopeSettingsStore | undefined;
  /** Where members' job history is kept (`/imagine-history`); without it no history is kept. */
  history?: JobHistoryStore | undefined;
  /** Days a job stays in the history (`PICTOR_HISTORY_RETENTION_DAYS`). Default 30. */
  historyRetentionDays?: number | undefined;
  /** Jobs waiting to be sent at once (`PICTOR_MAX_QUEUED_JOBS`); past it a new job is refused at once (`queue_full`). Default 200. */
  maxQueuedJobs?: number | undefined;
  /**
   * Bytes of edit input images held by jobs waiting to be sent and by edits being downloaded (`PICTOR_MAX_QUEUED_INPUT_MB`);
   * an edit that would pass it is refused at once (`queue_full`), unless no other input is held. Default 512 MB.
   */
  maxQueuedInputBytes?: number | undefined;
  /** Previews re-encoded at display size (`PICTOR_LIGHT_PREVIEWS`); false: the partials as the service sent them. Default true. */
  lightPreviews?: boolean | undefined;
}

interface Job {
  readonly info: JobInfo;
  /** The spec and request; an edit's input images are dropped from both once the job has finished (`#finish`). */
  spec: JobSpec;
  request: GenerationRequest | EditRequest;
  /** Bytes of its input images (0 for a generation): held against the queue's input bound while it is queued. */
  readonly inputBytes: number;
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
export const QUEUE_TROUBLE_NOTICE =
  'The shared queue is unreachable for a moment, so this takes longer than usual; your job keeps its place and nothing is charged until it runs.';

/** Told to whoever starts a job while the bot drains for a restart. */
export const RESTARTING_MESSAGE = 'The bot is restarting; try again in a minute.';

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
  /** Submits past the queue bound's check that have not yet queued their job (their budget is being reserved). */
  #submitting = 0;
  /** The input bytes of those submits. */
  #submittingBytes = 0;
  /** Input bytes held for edits whose images are being downloaded or read (`holdInputRoom`). */
  #roomBytes = 0;
  /** Set by `drain`: new jobs are refused (`restarting`) while the ones taken run to their end. */
  #draining = false;
  /** The caps of each server/workspace (the operator's with what its chat admins set), and the usage summaries. */
  readonly budgets: ChatBudgets;
  /** Who may generate, where and what, per server/workspace (the operator's bounds with what its chat admins chose). */
  readonly policy: ScopePolicy;
  /** Members' last jobs, recorded by the surfaces when a job ends; undefined when no history store was given. */
  readonly history: JobHistory | undefined;
  /** Makes the preview each shown partial is uploaded as (`JobUpdate['preview']`). */
  readonly previews: PreviewEncoder;

  constructor(options: JobRunnerOptions) {
    this.#client = options.client;
    this.#store = options.store;
    this.#limits = { ...options.limits };
    this.#minUpdateIntervalMs = options.minUpdateIntervalMs ?? DEFAULT_MIN_UPDATE_INTERVAL_MS;
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
    this.budgets = new ChatBudgets({ store: this.#store, limits: this.#limits, dmCaps: options.dmCaps, logger: this.#logger, now: this.#now, cacheMs: options.capCacheMs });
    this.policy = new ScopePolicy({
      // Kept in the bots' state: every process of the account applies one set.
      store: options.settings ?? settingsInState(undefined, this.#logger),
      operator: options.operatorControls,
      partialImages: this.#partialImages,
      logger: this.#logger,
      now: this.#now,
      cacheMs: options.settingsCacheMs,
    });
    this.previews = new PreviewEncoder({ enabled: options.lightPreviews, logger: this.#logger });
    this.history = options.history && new JobHistory({ store: options.history, retentionDays: options.historyRetentionDays, logger: this.#logger, now: this.#now });
    if (!(Number.isFinite(this.#minUpdateIntervalMs) && this.#minUpdateIntervalMs >= 0)) {
      throw new ValidationError('minUpdateIntervalMs', `minUpdateIntervalMs must be a number of milliseconds ≥ 0, not ${options.minUpdateIntervalMs}`);
    }
    const { partialImagesMin, partialImagesMax } = LIMITS;
    if (!Number.isInteger(this.#partialImages) || this.#partialImages < partialImagesMin || this.#partialImages > partialImagesMax) {
      throw new ValidationError(
        'partialImages',
        `partialImages must be an integer from ${partialImagesMin} to ${partialImagesMax}, not ${options.partialImages}`,
      );
    }
  }

  /**
   * Validates, prices and reserves a job, then queues it and returns at once.
   * Rejects with JobRefusedError (nothing queued, nothing spent) when the
   * request is invalid or a limit is reached.
   */
  async submit(spec: JobSpec, sink: UpdateSink): Promise<JobHandle> {
    try {
      return await this.#submit(spec, sink);
    } catch (error) {
      if (error instanceof JobRefusedError) this.#countRefusal(error, spec.requester);
      throw error;
    }
  }

  /**
   * Holds room in the queue for an edit's input images of about `bytes` (the
   * sizes the chat reported) while the surface downloads or reads them, so a
   * burst of edits is refused before it downloads more than the queue would
   * take. Returns the `queue_full` refusal (counted as a refused job; nothing
   * held) when the queue has no room for them, or a hold the surface releases
   * once it has the images, before it submits the job (`submit` checks the
   * bound again with the real bytes).
   */
  holdInputRoom(requester: Requester, bytes: number): JobRefusedError | InputRoomHold {
    const held = Math.max(0, Math.ceil(bytes));
    const full = this.#queueBound.refusal(this.#queuedLoad(), held);
    if (full) {
      this.#logger.warn({ code: full.code, queued: this.#queuedCount(), inputBytes: held }, 'edit refused before its images were fetched: the queue is full');
      this.#countRefusal(full, requester);
      return full;
    }
    this.#roomBytes += held;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#roomBytes -= held;
      },
    };
  }

  /** What the gauges read when metrics are scraped: USD reserved by jobs queued or running, jobs waiting to be sent, and the input bytes the queue bound counts. */
  liveReadings(): { reservedUsd: () => number; queued: () => number; queuedInputBytes: () => number } {
    const active = () => [...this.#jobs.values()].filter((j) => isActive(j.info.status));
    return {
      reservedUsd: () => active().reduce((sum, j) => sum + j.info.estimate.totalUsd, 0),
      queued: () => active().filter((j) => j.info.status === 'queued').length,
      queuedInputBytes: () => this.#queuedLoad().inputBytes,
    };
  }

  async #submit(asked: JobSpec, sink: UpdateSink): Promise<JobHandle> {
    this.#assertOpen();
    // The server's/workspace's rules (who, where, what) before anything is reserved or sent; they fill in its defaults.
    const { spec, previews } = await this.policy.admit(asked);
    const request = this.#validate(spec, previews);
    const estimate = estimatePrice({ operation: spec.kind, size: request.size, quality: request.quality, n: request.n });
    const id = newJobId();
    const submittedAt = this.#now();
    const { requester } = spec;
    const scopeKey = `${requester.platform}:${requester.scopeId}`;
    const inputBytes = inputBytesOf(request);
    // Counted with the jobs still reserving their budget, so a burst of submits cannot all pass the bound at once.
    const full = this.#queueBound.refusal(this.#queuedLoad(), inputBytes);
    if (full) {
      this.#logger.warn({ jobId: id, code: full.code, queued: this.#queuedCount() + this.#submitting, inputBytes, limit: full.limit, used: full.used }, 'job refused: the queue is full');
      throw full;
    }
    this.#submitting++;
    this.#submittingBytes += inputBytes;
    let reservation: Awaited<ReturnType<JobLedger['begin']>>;
    try {
      reservation = await this.#ledger.begin({
        jobId: id,
        userKey: `${requester.platform}:${requester.userId}`,
        scopeKey,
        limits: await this.budgets.limitsFor(scopeKey),
        request: { operation: spec.kind, n: request.n, size: request.size, quality: request.quality },
        prompt: this.#recordPrompts ? request.prompt : undefined,
      });
    } finally {
      this.#submitting--;
      this.#submittingBytes -= inputBytes;
    }
    if (!reservation.ok) {
      const refusal = refusalFromReservation(reservation, { estimateUsd: estimate.totalUsd, platform: requester.platform, now: submittedAt, scopeId: requester.scopeId });
      this.#logger.info({ jobId: id, code: refusal.code, limit: reservation.limit, used: reservation.used }, 'job refused by a limit');
      throw refusal;
    }
    if (this.#closed) {
      await reservation.job.end({ kind: 'cancelled' });
      this.#assertOpen();
    }

    const job = this.#createJob({ id, spec, request, inputBytes, estimate, submittedAt, sink, charged: reservation.job });
    this.#logger.info(
      { jobId: id, kind: spec.kind, platform: requester.platform, n: request.n, size: request.size, quality: request.quality, estimateUsd: estimate.totalUsd },
      'job queued',
    );
    return { id, done: job.done };
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
    // A submit that passed its check just before the drain began joins the jobs waited for.
    while (this.#jobs.size > 0) {
      const left = deadline - this.#now();
      if (left <= 0) break;
      await raceTimeout(Promise.allSettled([...this.#jobs.values()].map((j) => j.done)), left);
    }
    const active = this.activeJobs().length;
    this.#logger.info({ active, graceMs }, active ? 'drained the job runner; some jobs are still running' : 'drained the job runner');
    return active;
  }

  /**
   * The refusal a job of this requester would get because their (or their
   * server's/workspace's, or the account's) daily or monthly budget is already
   * spent, so a surface can refuse before it fetches anything for the job
   * (nothing is reserved; the refusal is counted in the metrics as a refused
   * job). Undefined when some budget is left (the job may still be refused at `submit`).
   */
  async budgetRefusal(requester: Requester): Promise<JobRefusedError | undefined> {
    const refusal = await this.#budgetRefusal(requester);
    // A surface that asks refuses the job with it, so it counts as a refused job (as a refusal by `submit` does).
    if (refusal) this.#countRefusal(refusal, requester);
    return refusal;
  }

  /**
   * The refusal this job would get from the rules of its server/workspace
   * (who, where, what), so a surface can refuse privately before it answers in
   * public; counted as a refused job. Undefined when the rules let it through
   * (budgets are checked at `submit`).
   */
  async policyRefusal(spec: JobSpec): Promise<JobRefusedError | undefined> {
    try {
      await this.policy.admit(spec);
      return undefined;
    } catch (error) {
      if (!(error instanceof JobRefusedError)) throw error;
      this.#countRefusal(error, spec.requester);
      return error;
    }
  }

  #countRefusal(refusal: JobRefusedError, requester: Requester): void {
    this.#metrics.refused(refusal.code);
    this.#metrics.jobFinished(requester.platform, 'refused');
  }

  async #budgetRefusal(requester: Requester): Promise<JobRefusedError | undefined> {
    if (this.draining) return new JobRefusedError('restarting', RESTARTING_MESSAGE);
    const rule = await this.policy.whoWhereRefusal(requester);
    if (rule) return rule;
    const now = this.#now();
    const userKey = `${requester.platform}:${requester.userId}`;
    const scopeKey = `${requester.platform}:${requester.scopeId}`;
    for (const { code, key, period, limit } of budgetsOf(await this.budgets.limitsFor(scopeKey), userKey, scopeKey)) {
      if (limit === undefined) continue;
      const used = period === 'day' ? await this.#store.spentToday(key, now) : await this.#store.spentThisMonth(key, now);
      if (used >= limit) {
        const resetsAt = period === 'day' ? nextUtcMidnight(now) : nextUtcMonth(now);
        return refusalFromReservation({ ok: false, code, limit, used, resetsAt }, { estimateUsd: 0, platform: requester.platform, now, scopeId: requester.scopeId });
      }
    }
    return undefined;
  }

  /** True once `drain` or `shutdown` began: new jobs are refused. */
  get draining(): boolean {
    return this.#draining || this.#closed;
  }

  /**
   * Stops taking jobs, cancels queued ones, waits up to the grace period for
   * running ones, then stops those too. Resolves once every job has reported
   * (or a few more seconds have passed). The store is the caller's to close.
   */
  async shutdown(options: { graceMs?: number | undefined } = {}): Promise<void> {
    this.#closed = true;
    const active = [...this.#jobs.values()].filter((j) => isActive(j.info.status));
    for (const job of active) if (job.info.status === 'queued' && !job.decided) this.#cancel(job, { byUserId: '', reason: 'shutdown' });
    const allDone = () => Promise.allSettled(active.map((j) => j.done));
    await raceTimeout(allDone(), options.graceMs ?? this.#shutdownGraceMs);
    for (const job of active) if (!job.decided) this.#cancel(job, { byUserId: '', reason: 'shutdown' });
    await raceTimeout(allDone(), SHUTDOWN_DRAIN_MS);
    // The surfaces keep an ended job in the history as its `done` resolves: nothing is written after the runner is down.
    await raceTimeout(this.history?.settled() ?? Promise.resolve(), SHUTDOWN_DRAIN_MS);
    this.#logger.info({ jobs: active.length }, 'job runner shut down');
  }

  /** Jobs taken and not yet sent. */
  #queuedCount(): number {
    let queued = 0;
    for (const job of this.#jobs.values()) if (job.info.status === 'queued') queued++;
    return queued;
  }

  /**
   * What the queue bound counts: jobs not yet sent, with the submits still
   * reserving their budget; and the input bytes those hold, with the edits
   * whose images are being fetched. A job's bytes stop counting once it is
   * sent, cancelled or failed (its status is no longer `queued`).
   */
  #queuedLoad(): QueuedLoad {
    let jobs = this.#submitting;
    let inputBytes = this.#submittingBytes + this.#roomBytes;
    for (const job of this.#jobs.values()) {
      if (job.info.status !== 'queued') continue;
      jobs++;
      inputBytes += job.inputBytes;
    }
    return { jobs, inputBytes };
  }

  #assertOpen(): void {
    if (this.#draining) throw new JobRefusedError('restarting', RESTARTING_MESSAGE);
    if (this.#closed) throw new AbortedError('the bot is shutting down and takes no new jobs');
  }

  /** The spec's fields through the core's schemas, images checked by content; refusals name the field. */
  #validate(spec: JobSpec, previews = this.#partialImages): GenerationRequest | EditRequest {
    const input: Record<string, unknown> = { prompt: spec.prompt, stream: true };
    for (const [key, value] of Object.entries(spec.options ?? {})) if (value !== undefined) input[key] = value;
    const partials = Math.min(previews, this.#partialImages);
    if (partials > 0) input.partial_images = partials;
    try {
      if (spec.kind === 'edit') {
        input.image = (spec.images ?? []).map((img) => ({ data: img.data, filename: img.filename }));
        return parseEditRequest(input);
      }
      return parseGenerationRequest(input);
    } catch (error) {
      if (error instanceof ValidationError) throw refusalFromValidation(error);
      throw error;
    }
  }

  #createJob(input: {
    id: string;
    spec: JobSpec;
    request: GenerationRequest | EditRequest;
    inputBytes: number;
    estimate: PriceQuote;
    submittedAt: number;
    sink: UpdateSink;
    charged: ChargedJob;
  }): Job {
    const { id, spec, request, inputBytes, estimate, submittedAt, sink, charged } = input;
    const pump = new UpdatePump({ sink, minIntervalMs: this.#minUpdateIntervalMs, now: this.#now, logger: this.#logger, jobId: id });
    let markRan!: () => void;
    const ran = new Promise<void>((resolve) => (markRan = resolve));
    const job: Job = {
      info: { id, kind: spec.kind, status: 'queued', requester: { ...spec.requester }, submittedAt, estimate },
      spec,
      request,
      inputBytes,
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
    this.#logger.error({ jobId: job.info.id, err: error }, 'the job runner failed unexpectedly');
    job.decided = true;
    await this.#end(job, { kind: 'failed', error });
    if (job.pump.finished) return;
    const failure = describeFailure(error);
    this.#finish(job, 'failed', this.#now());
    job.pump.push({ type: 'failed', jobId: job.info.id, code: failure.code, message: failure.message, retryable: failure.retryable, ...this.#imagesOf(job) });
  }

  async #run(job: Job): Promise<void> {
    const { id } = job.info;
    const { request, controller } = job;
    let queuedSent = false;
    let lastAhead = 0;
    /** The position last pushed to the job's updates (a long queue's moves are thinned: `positionWorthShowing`). */
    let shownAhead: number | undefined;
    let notice: string | undefined;
    const options: RequestOptions = {
      signal: controller.signal,
      onQueuePosition: (ahead) => {
        if (job.info.status !== 'queued') return;
        lastAhead = ahead;
        if (!positionWorthShowing(shownAhead, ahead)) return;
        queuedSent = true;
        shownAhead = ahead;
        job.pump.push({ type: 'queued', jobId: id, ahead, notice });
      },
      onQueueTrouble: () => {
        if (job.info.status !== 'queued' || notice) return;
        notice = QUEUE_TROUBLE_NOTICE;
        queuedSent = true;
        shownAhead = lastAhead;
        job.pump.push({ type: 'queued', jobId: id, ahead: lastAhead, notice });
      },
      // Recorded before the body leaves (after any wait in the limiter): a crash from here on settles the job at its estimate.
      beforeSend: job.charged.beforeSend,
      onRetry: ({ error }) => {
        this.#metrics.retried(error.code);
        if (error.code === 'rate_limited') this.#metrics.rateLimited();
      },
      onStart: () => {
        if (job.info.status !== 'queued') return;
        if (!queuedSent) job.pump.push({ type: 'queued', jobId: id, ahead: 0 });
        job.info.status = 'running';
        job.info.startedAt = this.#now();
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
          ? this.#client.editStream(request as EditRequest, options)
          : this.#client.generateStream(request as GenerationRequest, options);
      for await (const event of stream) {
        if (isCompletedEvent(event)) {
          completed.push(event);
          charged.onImage(event);
          job.completedImages = completed.length;
        } else if (this.#partialImages > 0) {
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
      // Cancelled while the last bytes arrived: the cancel has been reported, and what was produced is charged.
      await this.#end(job, { kind: 'cancelled' });
      return;
    }
    job.decided = true;
    const operation = job.spec.kind;
    const result = resultFromCompleted(completed, { operation, size: request.size, quality: request.quality }, stream.requestId);
    await this.#end(job, { kind: 'completed' });
    const finishedAt = this.#now();
    this.#finish(job, 'completed', finishedAt);
    const first = completed[0]!;
    job.pump.push({
      type: 'completed',
      jobId: id,
      images: decodeImages(result),
      format: first.output_format,
      size: result.size,
      quality: result.quality,
      background: result.background,
      usage: result.usage,
      cost: result.cost,
      elapsedMs: finishedAt - job.info.submittedAt,
    });
    this.#logger.info({ jobId: id, images: completed.length, costUsd: result.cost.totalUsd, basis: result.cost.basis, elapsedMs: finishedAt - job.info.submittedAt }, 'job completed');
  }

  async #finishWithError(job: Job, error: unknown): Promise<void> {
    const { id } = job.info;
    const { charged } = job;
    if (job.cancelledBy) {
      // Once sent, a cancelled job is charged what it produced and, for images cut off mid-flight, their estimate.
      await this.#end(job, { kind: 'cancelled' });
      this.#logger.info({ jobId: id, reason: job.cancelledBy.reason, sent: charged.sent }, 'job cancelled');
      return;
    }
    job.decided = true;
    const failure = describeFailure(error);
    // The last answer was a 429 that was not sent again (retries used up, or a wait longer than the timeout).
    if (failure.code === 'rate_limited') this.#metrics.rateLimited();
    const settlement = await this.#end(job, { kind: 'failed', error });
    this.#finish(job, 'failed', this.#now());
    // The images that came before the failure were made and are charged: the user gets them with the failure.
    job.pump.push({ type: 'failed', jobId: id, code: failure.code, message: failure.message, retryable: failure.retryable, ...this.#imagesOf(job) });
    const log = failure.code === 'internal_error' ? this.#logger.error.bind(this.#logger) : this.#logger.warn.bind(this.#logger);
    const mayBeBilled = settlement.action === 'settled';
    log({ jobId: id, code: failure.code, mayBeBilled, images: charged.images.length, err: failure.code === 'internal_error' ? error : undefined }, 'job failed');
  }

  /** The finished images of a job that did not complete, for its final update (none: nothing added). */
  #imagesOf(job: Job): { images?: Buffer[]; format?: CompletedEvent['output_format'] } {
    const images = job.charged.images;
    if (images.length === 0) return {};
    return { images: images.map(imageBytes), format: images[0]!.output_format };
  }

  #cancel(job: Job, by: { byUserId: string; reason: 'requested' | 'shutdown' }): void {
    job.decided = true;
    job.cancelledBy = by;
    this.#finish(job, 'cancelled', this.#now());
    job.pump.push({ type: 'cancelled', jobId: job.info.id, byUserId: by.byUserId, reason: by.reason, ...this.#imagesOf(job) });
    job.controller.abort(new AbortedError(by.reason === 'shutdown' ? 'the bot is shutting down' : 'the job was cancelled'));
  }

  #finish(job: Job, status: 'completed' | 'failed' | 'cancelled', at: number): void {
    job.info.status = status;
    job.info.finishedAt = at;
    // Its request will not be sent again: the input images need not wait for the final update to be shown.
    if (job.inputBytes > 0) {
      job.spec = { ...job.spec, images: undefined };
      job.request = { ...(job.request as EditRequest), image: [] };
    }
    this.#metrics.jobFinished(job.spec.requester.platform, status);
    if (job.info.startedAt !== undefined) this.#metrics.requestDuration(job.spec.kind, true, (at - job.info.startedAt) / 1000);
  }

  /** Ends the job in the ledger by the one rule (`chargeOf`); a ledger that stays unreachable keeps the settle for later, never shown to the user. */
  #end(job: Job, ending: JobEnding): Promise<JobSettlement> {
    return job.charged.end(ending);
  }

  #partialUpdate(jobId: string, event: PartialImageEvent, completedSoFar: number): JobUpdate {
    let image: Buffer | undefined;
    let preview: Promise<PreviewImage> | undefined;
    const bytes = () => (image ??= Buffer.from(event.b64_json, 'base64'));
    const previews = this.previews;
    return {
      type: 'partial',
      jobId,
      imageIndex: imageIndexOf(event, completedSoFar),
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

/** Holds room in the queue for an edit's input images while they are fetched (`JobRunner.holdInputRoom`). */
export interface InputRoomHold {
  /** Gives the room back (once; later calls do nothing). */
  release(): void;
}

/** The bytes of a request's input images (0 for a generation). */
function inputBytesOf(request: GenerationRequest | EditRequest): number {
  return 'image' in request ? request.image.reduce((sum, img) => sum + img.data.byteLength, 0) : 0;
}

const isActive = (status: JobInfo['status']): boolean => status === 'queued' || status === 'running';

/** 12 URL-safe characters: short enough for a Discord `custom_id` or a Slack `action_id`. */
function newJobId(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * Which output image a partial belongs to. The events carry no image number
 * (wire-format.md); images stream one after the other, so a partial belongs to
 * the image after the ones already completed, unless the service says otherwise.
 */
function imageIndexOf(event: PartialImageEvent, completedSoFar: number): number {
  const explicit = (event as Record<string, unknown>).image_index ?? (event as Record<string, unknown>).output_index;
  return typeof explicit === 'number' && Number.isInteger(explicit) && explicit >= 0 ? explicit : completedSoFar;
}

function raceTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void promise.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
