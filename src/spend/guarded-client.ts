import { randomBytes } from 'node:crypto';
import { PictorClient, type LoggerLike, type PictorClientOptions, type RequestOptions } from '../client/PictorClient.js';
import { ImageEventStream } from '../client/event-stream.js';
import { completedEventsOf, imagesOfFailure, resultFromCompleted, type ImageJobResult, type RequestedJob } from '../client/job-result.js';
import { estimatePrice } from '../core/pricing.js';
import { isCompletedEvent, type CompletedEvent, type EditInput, type GenerationInput, type ImageStreamEvent } from '../spec/index.js';
import { parseEditRequest, parseGenerationRequest } from '../spec/validate.js';
import type { JobEnding } from './charge-rules.js';
import { BudgetExceededError, isBudgetCode } from './errors.js';
import { JobLedger, type ChargedJob } from './job-ledger.js';
import type { QuotaStore, SpendLimits } from './types.js';

export interface SpendGuardOptions {
  store: QuotaStore;
  limits: SpendLimits;
  /** Who spends and where, for the ledger (`cli:<name>`, `cli`). */
  userKey: string;
  scopeKey: string;
  now?: (() => number) | undefined;
  /** Keep each job's prompt in its usage record (`PICTOR_USAGE_PROMPTS=1`). Default false. */
  recordPrompts?: boolean | undefined;
  /** Where settles the ledger did not take are told. */
  logger?: LoggerLike | undefined;
  /** How long a settle the ledger does not take is tried again before it is kept for later. Default 30 s. */
  settleRetryMs?: number | undefined;
}

type Meta = { operation: 'generate' | 'edit'; n: number; size?: string | undefined; quality?: string | undefined; prompt?: string | undefined };

/**
 * The account's caps for one spender (the CLI's `cli:<name>`, an n8n
 * workflow): each job goes through the one lifecycle of `JobLedger` —
 * reserved before anything is sent (a refusal throws BudgetExceededError),
 * marked sent, each image counted as it arrives, and settled or released by
 * the one rule (`chargeOf`) when it ends.
 */
export class SpendGuard {
  readonly #options: SpendGuardOptions;
  readonly ledger: JobLedger;

  constructor(options: SpendGuardOptions) {
    this.#options = options;
    this.ledger = new JobLedger({ store: options.store, now: options.now, logger: options.logger, retryForMs: options.settleRetryMs });
  }

  /** Reserves the job's upper-bound price, or throws BudgetExceededError (nothing reserved, nothing sent). */
  async begin(meta: Meta): Promise<ChargedJob> {
    const { limits, userKey, scopeKey } = this.#options;
    const jobId = `${userKey}:${randomBytes(9).toString('base64url')}`;
    const begun = await this.ledger.begin({
      jobId,
      userKey,
      scopeKey,
      limits,
      request: { operation: meta.operation, n: meta.n, size: meta.size, quality: meta.quality },
      prompt: this.#options.recordPrompts ? meta.prompt : undefined,
    });
    if (!begun.ok) {
      // Counted for the console's "refusals by code" (a count that cannot be kept is no reason to hide the refusal).
      await this.#options.store.countRefusals({ [begun.code]: 1 }, (this.#options.now ?? Date.now)()).catch(() => undefined);
      const estimate = estimatePrice({ operation: meta.operation, size: meta.size as never, quality: meta.quality as never, n: meta.n });
      if (isBudgetCode(begun.code)) throw new BudgetExceededError({ ...begun, code: begun.code }, estimate.totalUsd);
      throw new Error(`the spend guard refused the job (${begun.code})`);
    }
    return begun.job;
  }
}

/**
 * A PictorClient whose every request goes through a SpendGuard: what the CLI
 * uses, so the account's caps hold there as on every other surface.
 */
export class GuardedPictorClient extends PictorClient {
  readonly #guard: SpendGuard;

  constructor(options: PictorClientOptions & { guard: SpendGuard }) {
    super(options);
    this.#guard = options.guard;
  }

  override async generate(input: GenerationInput, options: RequestOptions = {}): Promise<ImageJobResult> {
    const job = await this.#guard.begin(this.#meta('generate', input));
    return this.#complete(job, () => super.generate(input, { ...options, beforeSend: chain(options.beforeSend, job.beforeSend) }));
  }

  override async edit(input: EditInput, options: RequestOptions = {}): Promise<ImageJobResult> {
    const job = await this.#guard.begin(this.#meta('edit', input));
    return this.#complete(job, () => super.edit(input, { ...options, beforeSend: chain(options.beforeSend, job.beforeSend) }));
  }

  override generateStream(input: GenerationInput, options: RequestOptions = {}): ImageEventStream {
    const meta = this.#meta('generate', input);
    return new GuardedEventStream(meta, () => this.#guard.begin(meta), (job) => super.generateStream(input, { ...options, beforeSend: chain(options.beforeSend, job.beforeSend) }));
  }

  override editStream(input: EditInput, options: RequestOptions = {}): ImageEventStream {
    const meta = this.#meta('edit', input);
    return new GuardedEventStream(meta, () => this.#guard.begin(meta), (job) => super.editStream(input, { ...options, beforeSend: chain(options.beforeSend, job.beforeSend) }));
  }

  /** Validates (throwing ValidationError before anything is reserved) and says what the guard needs. */
  #meta(operation: 'generate' | 'edit', input: GenerationInput | EditInput): RequestedJob & { prompt: string } {
    const req = operation === 'edit' ? parseEditRequest(input as EditInput) : parseGenerationRequest(input as GenerationInput);
    return { operation, n: req.n, size: req.size, quality: req.quality, background: req.background, output_format: req.output_format, prompt: req.prompt };
  }

  async #complete(job: ChargedJob, run: () => Promise<ImageJobResult>): Promise<ImageJobResult> {
    let result: ImageJobResult;
    try {
      result = await run();
    } catch (error) {
      // The good images of a bad answer are the caller's (on the error) and charged.
      for (const image of imagesOfFailure(error)) job.onImage(image);
      job.requestId = (error as { requestId?: string }).requestId;
      await job.end({ kind: 'failed', error });
      throw error;
    }
    for (const image of completedEventsOf(result)) job.onImage(image);
    job.requestId = result.requestId;
    await job.end({ kind: 'completed' });
    return result;
  }
}

function chain(first: RequestOptions['beforeSend'], second: () => Promise<void>): () => Promise<void> {
  return first ? async () => (await first(), await second()) : second;
}

/** A stream that reserves when it is first read and settles when it ends, breaks or is left early. */
class GuardedEventStream extends ImageEventStream {
  #inner: ImageEventStream | undefined;

  constructor(
    private readonly meta: RequestedJob,
    private readonly begin: () => Promise<ChargedJob>,
    private readonly open: (job: ChargedJob) => ImageEventStream,
  ) {
    const controller = new AbortController();
    super({ controller, meta, open: () => Promise.reject(new Error('unused')), classifyBodyError: (error) => error as never });
  }

  override get requestId(): string | undefined {
    return this.#inner?.requestId;
  }

  override abort(reason?: unknown): void {
    this.#inner?.abort(reason);
  }

  override async finalResult(): Promise<ImageJobResult> {
    const completed: CompletedEvent[] = [];
    for await (const event of this) if (isCompletedEvent(event)) completed.push(event);
    return resultFromCompleted(completed, this.meta, this.requestId);
  }

  override async *[Symbol.asyncIterator](): AsyncIterator<ImageStreamEvent> {
    const job = await this.begin();
    let ending: JobEnding = { kind: 'cancelled' };
    try {
      this.#inner = this.open(job);
      for await (const event of this.#inner) {
        if (isCompletedEvent(event)) job.onImage(event);
        yield event;
      }
      ending = { kind: 'completed' };
    } catch (error) {
      ending = { kind: 'failed', error };
      throw error;
    } finally {
      // Left early by the reader (the inner stream aborted its request): a cancel.
      job.requestId = this.#inner?.requestId;
      await job.end(ending);
    }
  }
}
