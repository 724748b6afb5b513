import { randomBytes } from 'node:crypto';
import { PictorClient, type PictorClientOptions, type RequestOptions } from '../client/PictorClient.js';
import { ImageEventStream } from '../client/event-stream.js';
import { resultFromCompleted, type ImageJobResult, type RequestedJob } from '../client/job-result.js';
import { isPictorError } from '../core/errors.js';
import { estimatePrice, type PriceQuote } from '../core/pricing.js';
import { isCompletedEvent, type CompletedEvent, type EditInput, type GenerationInput, type ImageStreamEvent } from '../spec/index.js';
import { parseEditRequest, parseGenerationRequest } from '../spec/validate.js';
import { interruptedCostUsd } from './charge-rules.js';
import { BudgetExceededError, isBudgetCode } from './errors.js';
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
}

type Meta = { operation: 'generate' | 'edit'; n: number; size?: string | undefined; quality?: string | undefined; prompt?: string | undefined };

/**
 * One job's way through the ledger: reserved at its upper-bound price before
 * anything is sent (a refusal throws BudgetExceededError), marked sent just
 * before the body leaves, settled at the real cost — or, when it fails, released
 * if the service cannot have billed it and charged by `interruptedCostUsd` if it may have.
 */
class GuardedJob {
  #sent = false;
  #ended = false;

  constructor(
    private readonly store: QuotaStore,
    readonly id: string,
    readonly estimate: PriceQuote,
    private readonly meta: Meta,
  ) {}

  readonly beforeSend = async (): Promise<void> => {
    await this.store.markSent(this.id);
    this.#sent = true;
  };

  async settle(usd: number, requestId?: string): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    await this.store.settle(this.id, usd, { requestId });
  }

  /** A failure or an early stop: did the service take the request (and may bill it), or refuse it, or never see it? */
  async fail(error: unknown, completed: CompletedEvent[]): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    const code = isPictorError(error) ? error.code : 'aborted';
    const mayBeBilled = this.#sent && (completed.length > 0 || code === 'stream_broken' || code === 'timeout' || code === 'aborted');
    if (mayBeBilled) await this.store.settle(this.id, interruptedCostUsd(this.estimate, completed, this.meta));
    else await this.store.release(this.id);
  }
}

export class SpendGuard {
  readonly #options: SpendGuardOptions;

  constructor(options: SpendGuardOptions) {
    this.#options = options;
  }

  /** Reserves the job's upper-bound price, or throws BudgetExceededError (nothing reserved, nothing sent). */
  async begin(meta: Meta): Promise<GuardedJob> {
    const { store, limits, userKey, scopeKey } = this.#options;
    const estimate = estimatePrice({ operation: meta.operation, size: meta.size as never, quality: meta.quality as never, n: meta.n });
    const jobId = `${userKey}:${randomBytes(9).toString('base64url')}`;
    const now = (this.#options.now ?? Date.now)();
    const job = {
      operation: meta.operation,
      n: estimate.n,
      size: meta.size ?? 'auto',
      quality: meta.quality ?? 'auto',
      ...(this.#options.recordPrompts && meta.prompt !== undefined && { prompt: meta.prompt }),
    };
    const result = await store.reserve({ jobId, userKey, scopeKey, estimateUsd: estimate.totalUsd, limits, now, job });
    if (!result.ok) {
      if (isBudgetCode(result.code)) throw new BudgetExceededError({ ...result, code: result.code }, estimate.totalUsd);
      throw new Error(`the spend guard refused the job (${result.code})`);
    }
    return new GuardedJob(store, jobId, estimate, meta);
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

  async #complete(job: GuardedJob, run: () => Promise<ImageJobResult>): Promise<ImageJobResult> {
    let result: ImageJobResult;
    try {
      result = await run();
    } catch (error) {
      await job.fail(error, []);
      throw error;
    }
    await job.settle(result.cost.totalUsd, result.requestId);
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
    private readonly begin: () => Promise<GuardedJob>,
    private readonly open: (job: GuardedJob) => ImageEventStream,
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
    const completed: CompletedEvent[] = [];
    let finished = false;
    try {
      this.#inner = this.open(job);
      for await (const event of this.#inner) {
        if (isCompletedEvent(event)) completed.push(event);
        yield event;
      }
      finished = true;
    } catch (error) {
      await job.fail(error, completed);
      throw error;
    } finally {
      if (finished) {
        await job.settle(resultFromCompleted(completed, this.meta, undefined).cost.totalUsd, this.#inner?.requestId);
      } else {
        // Left early by the reader: the inner stream aborted its request.
        await job.fail(undefined, completed);
      }
    }
  }
}
