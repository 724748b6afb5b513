import type { LoggerLike } from '../client/PictorClient.js';
import type { PriceQuote } from '../core/pricing.js';
import type { CompletedEvent } from '../spec/index.js';
import { estimateOf } from '../core/pricing.js';
import { waitAtMost, withTimeout } from '../core/with-timeout.js';
import { chargeOf, leftNothing, mayBeBilled, type Charge, type ChargedRequest, type JobEnding } from './charge-rules.js';
import { exceedsReservation } from './rules.js';
import type { ChargeBasis, JobDetails, QuotaStore, SpendLimits, SpendRefusal } from './types.js';

/**
 * One job's way through the ledger, the same on every surface (the chat bots'
 * job runner, the CLI, the n8n node):
 *
 *   begin (check the caps, reserve the upper-bound price)
 *   → beforeSend (mark sent: from here on it may be billed)
 *   → onImage (each finished image, handed to the user as it comes)
 *   → end (decide at once what it may have been billed — `chargeOf` — then settle it, or release)
 *
 * A settle or release the ledger does not take (its lock busy, Redis away) is
 * tried again with backoff for `retryForMs`, each try given `attemptTimeoutMs`; then it is kept and tried again
 * every `retryForMs` and before the next `begin` (which waits for that at most
 * `NEXT_JOB_SETTLE_WAIT_MS`, joining a try of them already under way and trying its own user's at once), so the
 * user's concurrency slot is freed once the ledger answers. Never lost: until it lands, the
 * reservation stays in the ledger (renewed by this process's lease), and if
 * this process dies first, reconcile charges its estimate (`uncertain`) —
 * once, since a settle of a job already ended charges nothing.
 */
export interface JobLedgerOptions {
  store: QuotaStore;
  logger?: LoggerLike | undefined;
  now?: (() => number) | undefined;
  /** How long a settle or release is tried before it is kept for later. Default 30 s. */
  retryForMs?: number | undefined;
  /** The first wait between two tries; doubled each time, up to 5 s. Default 200 ms. */
  retryDelayMs?: number | undefined;
  /**
   * How long one try may take before it counts as refused (a ledger whose lock another process holds, a Redis that
   * queues commands while it is away): the next try, or keeping it, follows. Default 5 s (at most `retryForMs`).
   */
  attemptTimeoutMs?: number | undefined;
  /** Told of every settle that charged the ledger (for metrics). */
  onCharged?: ((charged: ChargedSettle) => void) | undefined;
}

/** A settle that charged the ledger. */
export interface ChargedSettle {
  jobId: string;
  usd: number;
  basis: ChargeBasis;
  /** The images that came back, and what was asked. */
  images: number;
  request: ChargedRequest;
  /** Set when the charge exceeded the reservation (the service reported a dearer job than reserved). */
  reservedUsd?: number | undefined;
}

export interface BeginInput {
  jobId: string;
  /** Who spends and where (`discord:<id>`, `discord:<guild>`; `cli:<name>`, `cli`; `n8n:<workflow>`, `n8n`). */
  userKey: string;
  scopeKey: string;
  limits: SpendLimits;
  request: ChargedRequest;
  /** Kept in the usage record only when given (`PICTOR_USAGE_PROMPTS=1`). */
  prompt?: string | undefined;
}

/** How a job's end went through the ledger. */
export interface JobSettlement {
  /** `settled`: charged `usd`; `released`: nothing can have been billed. */
  action: 'settled' | 'released';
  usd: number;
  basis: ChargeBasis | undefined;
  /** False when the ledger did not take it yet (kept and tried again), or the job had already been ended elsewhere. */
  recorded: boolean;
  /** The ledger stayed unreachable: the settle or release is kept and tried again later. */
  deferred: boolean;
  /**
   * Why a release charged nothing: `not_sent`, no attempt ever left; `answered`, every attempt that left was answered
   * with an error that bills nothing (the job ended in a retry wait, or on that error). Absent for a settle.
   */
  released?: 'not_sent' | 'answered' | undefined;
}

/**
 * A job's end: what it is charged, decided when `end` is called, and the settle or release that records it. A surface
 * tells the user `charge` at once; `settled` may wait for a ledger that is slow or unreachable.
 */
export interface JobEnd {
  /** What the job is charged (`chargeOf`), the amount its settle charges; undefined when it is released (nothing can have been billed). */
  readonly charge: Charge | undefined;
  /** The settle or release as the ledger took it (or kept it for later). Never rejects. */
  readonly settled: Promise<JobSettlement>;
}

const DEFAULT_RETRY_FOR_MS = 30_000;
/**
 * How long a user's next job waits, in all, for that user's settles still under way and for the kept ones tried again
 * before it is decided. `begin` runs before a chat's first answer (Discord gives 3 s), so a ledger in trouble must not
 * hold it: past this, the job is decided on the reservation still held.
 */
export const NEXT_JOB_SETTLE_WAIT_MS = 1_000;
const DEFAULT_RETRY_DELAY_MS = 200;
/** How long one settle's try is given by default. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 5_000;
const MAX_RETRY_DELAY_MS = 5_000;
/** A settle or release the ledger did not take in time, and the user whose slot its reservation holds. */
interface KeptSettle {
  userKey: string;
  commit: () => Promise<unknown>;
}

/** One try of every kept settle: the job ids it has tried (or a next job tried beside it), and those tries beside it. */
interface FlushRound {
  readonly tried: Set<string>;
  readonly beside: Promise<void>[];
  done: Promise<void>;
}

const noopLogger: LoggerLike = { debug() {}, info() {}, warn() {}, error() {} };

export class JobLedger {
  readonly store: QuotaStore;
  readonly #logger: LoggerLike;
  readonly #now: () => number;
  readonly #retryForMs: number;
  readonly #retryDelayMs: number;
  readonly #attemptTimeoutMs: number;
  readonly #onCharged: ((charged: ChargedSettle) => void) | undefined;
  /** Settles and releases the ledger did not take in time, by job id, with the user whose slot each one holds. */
  readonly #kept = new Map<string, KeptSettle>();
  #keptTimer: NodeJS.Timeout | undefined;
  /** Settles and releases under way (not yet taken or kept), by user key. */
  readonly #settling = new Map<string, Set<Promise<unknown>>>();
  readonly #settleWaitMs: number;
  /** The try of every kept settle under way (`flushKept`), joined by every caller until it ends. */
  #flushing: FlushRound | undefined;

  constructor(options: JobLedgerOptions) {
    this.store = options.store;
    this.#logger = options.logger ?? noopLogger;
    this.#now = options.now ?? Date.now;
    this.#retryForMs = options.retryForMs ?? DEFAULT_RETRY_FOR_MS;
    this.#retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    this.#attemptTimeoutMs = Math.max(1, Math.min(this.#retryForMs, options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS));
    this.#settleWaitMs = Math.min(this.#retryForMs, NEXT_JOB_SETTLE_WAIT_MS);
    this.#onCharged = options.onCharged;
  }

  /**
   * Checks the caps and reserves the job's upper-bound price; a refusal reserves nothing. First the user's settles and
   * releases under way are waited for, then those kept (every user's: one may hold this user's slot; the user's own
   * at once, even while a try of the others is under way) are tried again —
   * both together up to `NEXT_JOB_SETTLE_WAIT_MS` (or `retryForMs` if shorter): a job asked for as the last one's result
   * shows (a reroll) is decided on what that one cost, not on its reservation still holding the user's slot. Past that
   * wait (a ledger in trouble), it is decided on the reservations still held; the tries go on behind.
   */
  async begin(input: BeginInput): Promise<{ ok: true; job: ChargedJob } | SpendRefusal> {
    await this.#beforeNextJob(input.userKey);
    const { request } = input;
    const estimate = estimateOf(request);
    const job: JobDetails = {
      operation: request.operation,
      n: estimate.n,
      size: request.size ?? 'auto',
      quality: request.quality ?? 'auto',
      ...(input.prompt !== undefined && { prompt: input.prompt }),
    };
    const reserved = await this.store.reserve({
      jobId: input.jobId,
      userKey: input.userKey,
      scopeKey: input.scopeKey,
      estimateUsd: estimate.totalUsd,
      limits: input.limits,
      now: this.#now(),
      job,
    });
    if (!reserved.ok) return reserved;
    return { ok: true, job: new ChargedJob(this, input.jobId, input.userKey, estimate, request) };
  }

  /** @internal Follows a job's settle or release until the ledger took it (or kept it), for the user's next `begin`. */
  settling<T>(userKey: string, settle: Promise<T>): Promise<T> {
    const under = this.#settling.get(userKey) ?? new Set<Promise<unknown>>();
    this.#settling.set(userKey, under.add(settle));
    const done = () => {
      under.delete(settle);
      if (under.size === 0 && this.#settling.get(userKey) === under) this.#settling.delete(userKey);
    };
    void settle.then(done, done);
    return settle;
  }

  /**
   * The user's settles under way, then the kept ones tried again (joining a try under way): at most `#settleWaitMs` in
   * all. The user's own kept ones that try has not reached yet are tried at once, beside it: one that try is stalled
   * behind (another job's, each given `attemptTimeoutMs`) is not left untried while this job is decided.
   */
  async #beforeNextJob(userKey: string): Promise<void> {
    const under = this.#settling.get(userKey);
    if (!under && this.#kept.size === 0 && !this.#flushing) return;
    const settled = async () => {
      if (under) await Promise.allSettled(under);
      const round = this.#flushRound();
      const own: Promise<void>[] = [];
      for (const [jobId, kept] of this.#kept) {
        if (kept.userKey !== userKey || round.tried.has(jobId)) continue;
        round.tried.add(jobId);
        own.push(this.#tryKept(jobId, kept));
      }
      round.beside.push(...own);
      await Promise.all([round.done, ...own]);
    };
    await waitAtMost(settled(), this.#settleWaitMs);
  }

  /**
   * Resolves once every settle and release under way has been taken by the ledger or kept for later (each is bounded
   * by `retryForMs`, once what it waits for, `ChargedJob.settleAfter`, has settled). A process that closes its ledger
   * waits for this first, so no charge is cut off by the close.
   */
  async settlesUnderWay(): Promise<void> {
    while (this.#settling.size > 0) await Promise.allSettled([...this.#settling.values()].flatMap((under) => [...under]));
  }

  /** How many settles or releases wait for the ledger. */
  get kept(): number {
    return this.#kept.size;
  }

  /**
   * Tries once more every settle or release the ledger did not take, one at a time; those it still refuses stay kept.
   * One kept while this try is under way is tried by it too: it ends once no kept one is left that it has not tried,
   * each tried once. A call while such a try is under way joins it rather than starting another (each kept one may
   * take `attemptTimeoutMs` against a ledger that stalls).
   */
  flushKept(): Promise<void> {
    return this.#flushRound().done;
  }

  #flushRound(): FlushRound {
    if (this.#flushing) return this.#flushing;
    const round: FlushRound = { tried: new Set(), beside: [], done: Promise.resolve() };
    this.#flushing = round;
    round.done = this.#flushAll(round);
    return round;
  }

  async #flushAll(round: FlushRound): Promise<void> {
    try {
      for (;;) {
        const next = [...this.#kept].find(([jobId]) => !round.tried.has(jobId));
        if (next) {
          round.tried.add(next[0]);
          await this.#tryKept(...next);
        } else if (round.beside.length > 0) {
          await Promise.all(round.beside.splice(0));
        } else {
          break;
        }
      }
    } finally {
      // Cleared as the round ends, in the same step: a caller from here on starts a new one rather than joining this.
      if (this.#flushing === round) this.#flushing = undefined;
    }
    if (this.#kept.size === 0 && this.#keptTimer) {
      clearInterval(this.#keptTimer);
      this.#keptTimer = undefined;
    }
  }

  /** One try of a kept settle or release; never rejects. */
  async #tryKept(jobId: string, kept: KeptSettle): Promise<void> {
    try {
      await kept.commit();
      if (this.#kept.get(jobId) === kept) this.#kept.delete(jobId);
      this.#logger.info({ jobId }, 'a kept settle reached the spend ledger');
    } catch (error) {
      this.#logger.warn({ jobId, err: error }, 'the spend ledger still refuses a kept settle');
    }
  }

  /** @internal Ends a job in the ledger: retried with backoff, then kept. */
  async commit(jobId: string, userKey: string, what: 'settle' | 'release', untimed: () => Promise<unknown>): Promise<{ result: unknown; deferred: boolean }> {
    const deadline = this.#now() + this.#retryForMs;
    let delay = this.#retryDelayMs;
    const commit = this.#oneAtATime(untimed);
    for (let attempt = 1; ; attempt++) {
      try {
        return { result: await commit(), deferred: false };
      } catch (error) {
        if (this.#now() + delay > deadline) {
          this.#logger.error({ jobId, action: what, attempts: attempt, err: error }, 'the spend ledger did not take a finished job: kept, and tried again later');
          this.#keep(jobId, { userKey, commit });
          return { result: undefined, deferred: true };
        }
        this.#logger.warn({ jobId, action: what, attempt, err: error }, 'the spend ledger did not take a finished job: trying again');
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS);
      }
    }
  }

  /**
   * A settle or release tried one at a time, each try given `attemptTimeoutMs`. A try that does not answer in time counts
   * as refused, but it may still land (a Redis back from away runs the commands it queued): no new one is sent while it
   * is under way — the next try waits for that one again — and once one has landed, every later try answers with its
   * result. So a job is never settled twice, however long its ledger stayed silent.
   */
  #oneAtATime(commit: () => Promise<unknown>): () => Promise<unknown> {
    let current: Promise<unknown> | undefined;
    let landed: { value: unknown } | undefined;
    const ms = this.#attemptTimeoutMs;
    return () => {
      if (landed) return Promise.resolve(landed.value);
      if (!current) {
        const attempt = commit();
        current = attempt;
        attempt.then(
          (value) => void (landed = { value }),
          () => void (current === attempt && (current = undefined)),
        );
      }
      return withTimeout(current, ms, `the spend ledger did not answer within ${ms} ms`);
    };
  }

  /** @internal */
  charged(settle: ChargedSettle): void {
    if (settle.reservedUsd !== undefined) {
      this.#logger.warn(
        { jobId: settle.jobId, usd: settle.usd, reservedUsd: settle.reservedUsd },
        'a job cost more than its reservation (the service reported a dearer job than asked): counted in full, past the caps',
      );
    }
    this.#onCharged?.(settle);
  }

  /** @internal */
  get logger(): LoggerLike {
    return this.#logger;
  }

  #keep(jobId: string, kept: KeptSettle): void {
    this.#kept.set(jobId, kept);
    this.#keptTimer ??= setInterval(() => void this.flushKept(), Math.max(1000, this.#retryForMs)).unref();
  }

  /** Stops trying kept settles (a process that stops leaves them to reconcile: their estimate, marked uncertain). */
  close(): void {
    if (this.#keptTimer) clearInterval(this.#keptTimer);
    this.#keptTimer = undefined;
  }
}

/**
 * One reserved job. `beforeSend` goes to the client (awaited before each
 * attempt leaves), `onImage` is called with each finished image as it is
 * handed to the user, and `end` once, however the job ended.
 */
export class ChargedJob {
  #sent = false;
  /** An attempt left at least once (whatever it was answered). */
  #everSent = false;
  /** An attempt was answered with an error that bills nothing and the request was to be sent again (`onRetry`). */
  #retried = false;
  #ended: JobEnd | undefined;
  #taken = false;
  #requestId: string | undefined;
  /** The store's "not sent" mark of the last retry wait, written before the next `markSent`. */
  #unsent: Promise<void> | undefined;
  /** What the settle or release waits for before it begins (`settleAfter`). */
  #after: Promise<unknown> | undefined;
  readonly #images: CompletedEvent[] = [];

  constructor(
    private readonly ledger: JobLedger,
    readonly id: string,
    readonly userKey: string,
    /** The upper-bound price reserved. */
    readonly estimate: PriceQuote,
    readonly request: ChargedRequest,
  ) {}

  /** Recorded before the body leaves: a crash from here on charges the job its estimate. If recording fails, nothing is sent. */
  readonly beforeSend = async (): Promise<void> => {
    await this.#unsent;
    await this.ledger.store.markSent(this.id);
    this.#sent = true;
    this.#everSent = true;
  };

  /**
   * The attempt sent ended with this error and the request waits to be sent again. An answer that bills nothing
   * (`mayBeBilled`: a 429, a 5xx) leaves nothing at the service: until the next `beforeSend` the job counts as not sent,
   * so a cancel in the wait is released. The store is told too (`markUnsent`, begun at once and landed before the next
   * `markSent`), so a process that dies in the wait leaves the job to reconcile as not sent: released. If the store does
   * not take it, it keeps its `markSent` mark, and such a reconcile charges the estimate (`uncertain`).
   *
   * The client retries only an attempt whose answer it has not accepted (an error status, or no answer), and only on
   * codes that bill nothing (`isRetryable`), with no image yet: no earlier attempt can have been billed, so there is no
   * billed attempt to remember here.
   */
  readonly onRetry = ({ error }: { error: unknown }): void => {
    this.#sent = mayBeBilled({ ending: { kind: 'failed', error }, sent: this.#sent, completed: this.#images });
    this.#retried = true;
    if (this.#sent) return;
    const { id, ledger } = this;
    this.#unsent = ledger.store.markUnsent(id).catch((err: unknown) => {
      ledger.logger.warn({ jobId: id, err }, 'the spend ledger did not take that a refused attempt billed nothing: if this process dies before the next one, its estimate is charged');
    });
  };

  /** Sent, and not since answered with an error that bills nothing (a retry still waiting to go). */
  get sent(): boolean {
    return this.#sent;
  }

  /** The finished images so far, in order. */
  get images(): readonly CompletedEvent[] {
    return this.#images;
  }

  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** Its reservation still counts in the ledger: the job has not ended, or the ledger has not taken its settle or release yet. */
  get reserving(): boolean {
    return !this.#taken;
  }

  /** A finished image reached the user (or is about to): it is charged whatever happens next. */
  onImage(event: CompletedEvent): void {
    if (this.#ended === undefined) this.#images.push(event);
  }

  /** The service's id of the request, for the usage record. */
  set requestId(id: string | undefined) {
    this.#requestId ??= id;
  }

  /**
   * The settle or release of `end` begins only once `kept` has settled (resolved or rejected): the caller keeps what the
   * job made first (the CLI puts its image files in place), so a process killed in between leaves the images and the
   * job to a later reconcile, never a charge without them. The charge is decided at `end` all the same. Given before `end`;
   * the caller must settle it (its settle waits, and so does `JobLedger.settlesUnderWay`).
   */
  settleAfter(kept: PromiseLike<unknown>): void {
    this.#after = Promise.resolve(kept).catch(() => undefined);
  }

  /**
   * Decides at once what the job may have been billed (`chargeOf`: the images
   * that came back, plus the estimate of each one that may have been made and
   * did not arrive) and settles it, or releases it. The charge is known before
   * the ledger answers (`JobEnd.charge`); the settle never rejects: a ledger
   * that stays unreachable keeps it for later. Only the first call counts: a
   * later one gets the first end.
   */
  end(ending: JobEnding): JobEnd {
    if (this.#ended) return this.#ended;
    const charge = chargeOf({ ending, sent: this.#sent, completed: this.#images }, this.estimate, this.request);
    this.#ended = { charge, settled: this.ledger.settling(this.userKey, this.#record(ending, charge)) };
    return this.#ended;
  }

  async #record(ending: JobEnding, charge: Charge | undefined): Promise<JobSettlement> {
    const { ledger, id, userKey } = this;
    if (this.#after) await this.#after;
    if (!charge) {
      const { deferred } = await ledger.commit(id, userKey, 'release', async () => {
        const released = await ledger.store.release(id);
        // Taken now, or by a kept try later: its reservation no longer counts from then on.
        this.#taken = true;
        return released;
      });
      // A job whose only attempt left nothing (a cancel before any byte of it left) was never sent either.
      const sentSomething = this.#everSent && (this.#retried || !leftNothing(ending));
      return { action: 'released', usd: 0, basis: undefined, recorded: !deferred, deferred, released: sentSomething ? 'answered' : 'not_sent' };
    }
    const reservedUsd = exceedsReservation({ usd: this.estimate.totalUsd }, charge.usd) ? this.estimate.totalUsd : undefined;
    // The record keeps the size and quality the service reported making (what it is charged for), not those asked.
    const info = { requestId: this.#requestId, basis: charge.basis, outcome: ending.kind, images: this.#images.length, ...charge.made };
    const { result, deferred } = await ledger.commit(id, userKey, 'settle', async () => {
      const charged = await ledger.store.settle(id, charge.usd, info);
      this.#taken = true;
      // Told once, by whichever try (now, or a kept one later) charged it.
      if (charged) ledger.charged({ jobId: id, usd: charge.usd, basis: charge.basis, images: this.#images.length, request: this.request, reservedUsd });
      return charged;
    });
    return { action: 'settled', usd: charge.usd, basis: charge.basis, recorded: result === true, deferred };
  }
}
