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
  /**
   * The job ledger to go through, shared by every guard over `store` in this process (the n8n node makes a guard per
   * request): a settle one job's guard could not land is tried again before any later job is reserved. Default: a new
   * one over `store`, with `now`, `logger` and `settleRetryMs`.
   */
  ledger?: JobLedger | undefined;
}

/** What a job asks, as the ledger prices it, and its prompt (kept only with `recordPrompts`). */
type Meta = ChargedRequest & { prompt?: string | undefined };

/** The watch the guard gives the client for a job it reserved: also says how the ledger ended the job. */
export interface SpendWatch extends RequestWatch {
  /**
   * The job's settle or release as the ledger took it (or kept it for later); never rejects. Undefined until the job
   * ended: the client ends it before it hands over the result or the error, so from then on it is always there (the
   * CLI says what a cancelled job was charged, the n8n node what a failed item was). A job the guard refused, or whose
   * reservation failed, has no watch at all: no settle is coming.
   */
  readonly settled: Promise<JobSettlement> | undefined;
  /** The settle (or release) begins once `kept` has settled: the caller keeps the result first (`ChargedJob.settleAfter`). */
  settleAfter(kept: PromiseLike<unknown>): void;
}

/**
 * The account's caps for one spender (the CLI's `cli:<name>`, an n8n
 * workflow), as the client's request hook: `new PictorClient({ onRequest: guard.onRequest })`.
 * Each job goes through the one lifecycle of `JobLedger` — reserved before it is
 * queued (a refusal throws BudgetExceededError: nothing is sent), marked sent
 * just before its body leaves, each image counted as it reaches the caller, and
 * settled or released by the one rule (`chargeOf`) when it ends: billing is
 * decided by what reached the service. The caller never waits for that settle; the watch's `settled` tells how it
 * went, for a caller that wants to say so.
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
  readonly onRequest = async (request: HookedRequest): Promise<SpendWatch> => {
    const job = await this.begin(request);
    let settled: Promise<JobSettlement> | undefined;
    return {
      beforeSend: job.beforeSend,
      onRetry: job.onRetry,
      onImage: (image) => job.onImage(image),
      // The charge is decided at once and given back; the settle that records it goes on without the caller, who gets the
      // result now, whatever the ledger does (its lock busy, Redis away): `settled` says once it lands or is kept.
      // Not async: `settled` is there as soon as the client has called `end`, before the caller gets anything.
      end: ({ requestId, ...ending }: RequestEnding) => {
        job.requestId = requestId;
        const ended = job.end(endingOf(ending));
        settled ??= ended.settled;
        return Promise.resolve(ended.charge);
      },
      get settled() {
        return settled;
      },
      settleAfter: (kept) => job.settleAfter(kept),
    };
  };

  /** Resolves once every job's settle under way has landed in the ledger or been kept for later (bounded by `settleRetryMs`). */
  settlesUnderWay(): Promise<void> {
    return this.ledger.settlesUnderWay();
  }
}
