import { randomBytes } from 'node:crypto';
import type { LoggerLike } from '../client/PictorClient.js';
import type { HookedRequest, RequestEnding, RequestWatch } from '../client/request-hook.js';
import { estimateOf } from '../core/pricing.js';
import { endingOf, type ChargedRequest } from './charge-rules.js';
import { BudgetExceededError, isBudgetCode } from './errors.js';
import { JobLedger, type ChargedJob, type JobSettlement } from './job-ledger.js';
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
  /** Told how each job ended in the ledger, once its settle landed or was kept (the CLI says what a cancelled job was charged). */
  onEnded?: ((settlement: JobSettlement) => void) | undefined;
  /**
   * The job ledger to go through, shared by every guard over `store` in this process (the n8n node makes a guard per
   * request): a settle one job's guard could not land is tried again before any later job is reserved. Default: a new
   * one over `store`, with `now`, `logger` and `settleRetryMs`.
   */
  ledger?: JobLedger | undefined;
}

/** What a job asks, as the ledger prices it, and its prompt (kept only with `recordPrompts`). */
type Meta = ChargedRequest & { prompt?: string | undefined };

/**
 * The account's caps for one spender (the CLI's `cli:<name>`, an n8n
 * workflow), as the client's request hook: `new PictorClient({ onRequest: guard.onRequest })`.
 * Each job goes through the one lifecycle of `JobLedger` — reserved before it is
 * queued (a refusal throws BudgetExceededError: nothing is sent), marked sent
 * just before its body leaves, each image counted as it reaches the caller, and
 * settled or released by the one rule (`chargeOf`) when it ends: billing is
 * decided by what reached the service. The caller never waits for that settle.
 */
export class SpendGuard {
  readonly #options: SpendGuardOptions;
  readonly ledger: JobLedger;

  constructor(options: SpendGuardOptions) {
    this.#options = options;
    this.ledger = options.ledger ?? new JobLedger({ store: options.store, now: options.now, logger: options.logger, retryForMs: options.settleRetryMs });
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
      const estimate = estimateOf(meta);
      if (isBudgetCode(begun.code)) throw new BudgetExceededError({ ...begun, code: begun.code }, estimate.totalUsd);
      throw new Error(`the spend guard refused the job (${begun.code})`);
    }
    return begun.job;
  }

  /** The client's `onRequest` hook: reserves the request, and gives the watch that marks it sent and settles it. */
  readonly onRequest = async (request: HookedRequest): Promise<RequestWatch> => {
    const job = await this.begin(request);
    return {
      beforeSend: job.beforeSend,
      onRetry: job.onRetry,
      onImage: (image) => job.onImage(image),
      // The charge is decided at once and given back; the settle that records it goes on without the caller, who gets the
      // result now, whatever the ledger does (its lock busy, Redis away): `onEnded` is told once it lands or is kept.
      end: async ({ requestId, ...ending }: RequestEnding) => {
        job.requestId = requestId;
        const ended = job.end(endingOf(ending));
        void ended.settled
          .then((settlement) => this.#options.onEnded?.(settlement))
          .catch((err: unknown) => this.#options.logger?.error({ err, jobId: job.id }, 'the spend guard could not tell how a job ended in the ledger'));
        return ended.charge;
      },
    };
  };

  /** Resolves once every job's settle under way has landed in the ledger or been kept for later (bounded by `settleRetryMs`). */
  settlesUnderWay(): Promise<void> {
    return this.ledger.settlesUnderWay();
  }
}
