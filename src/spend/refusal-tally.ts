import type { LoggerLike } from '../client/PictorClient.js';
import { withTimeout } from '../core/with-timeout.js';
import { MAX_TIMER_MS, waitWithin } from '../core/timer-ms.js';
import type { QuotaStore } from './types.js';

/**
 * Counts refused jobs by code for the console ("refusals by code"), in the
 * ledger every process shares: added up in memory and written every few
 * seconds (and at `close`), so a burst of refusals costs one ledger write, not
 * one each. A count that cannot be written is kept and tried again with the next.
 */
export class RefusalTally {
  readonly #store: Pick<QuotaStore, 'countRefusals'>;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  #counts: Record<string, number> = {};
  #timer: NodeJS.Timeout | undefined;
  readonly #everyMs: number;
  #writing: Promise<void> | undefined;

  constructor(options: { store: Pick<QuotaStore, 'countRefusals'>; logger?: LoggerLike | undefined; now?: (() => number) | undefined; everyMs?: number | undefined }) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#everyMs = options.everyMs ?? 5_000;
  }

  add(code: string): void {
    this.#counts[code] = (this.#counts[code] ?? 0) + 1;
    this.#timer ??= setTimeout(() => void this.flush(), this.#everyMs).unref();
  }

  /** Writes what was counted (a day's counts count on the day they are written, at most a few seconds late). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#writing;
    const counts = this.#counts;
    if (Object.keys(counts).length === 0) return;
    this.#counts = {};
    this.#writing = this.#store.countRefusals(counts, this.#now()).catch((error: unknown) => {
      this.#logger?.warn({ err: error }, 'could not count refusals in the ledger; kept for the next try');
      for (const [code, n] of Object.entries(counts)) this.#counts[code] = (this.#counts[code] ?? 0) + n;
    });
    await this.#writing;
  }

  /**
   * Writes what is left and stops; with `until` (a time as `Date.now()`), the write is not waited for past it: a
   * ledger that went away would hold it for ever, and those last counts are dropped (the console misses them).
   */
  async close(options: { until?: number | undefined } = {}): Promise<void> {
    const { until } = options;
    const written = this.flush();
    if (until === undefined) await written;
    else await withTimeout(written, waitWithin(MAX_TIMER_MS, until), 'the last refusal counts were not written').catch(() => undefined);
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
