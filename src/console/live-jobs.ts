import type { ActiveJob, QuotaStore, UsageRecord } from '../spend/types.js';
import type { UsageIndex } from './usage-index.js';

/** One browser listening (the jobs page's EventSource): told the jobs running now, and each job as it ends. */
export interface LiveListener {
  live(jobs: readonly ActiveJob[]): void;
  finished(records: readonly UsageRecord[]): void;
}

export interface LiveJobsOptions {
  store: Pick<QuotaStore, 'activeJobs'>;
  index: UsageIndex;
  /** How often the ledger is read while someone listens. Default 1 s. */
  intervalMs?: number | undefined;
  /** Listeners at once; past it `subscribe` answers undefined. Default 20. */
  maxListeners?: number | undefined;
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * The live part of the jobs page, for every listener at once: while anyone
 * listens it reads the ledger's reservations (every process's jobs) and the
 * usage records written since, once a second, and tells the listeners what
 * changed. Nobody listening: nothing is read.
 */
export class LiveJobs {
  readonly #options: LiveJobsOptions;
  readonly #listeners = new Set<LiveListener>();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #lastLive: readonly ActiveJob[] = [];
  #lastSignature = '';
  /** The newest record already told. */
  #newest: UsageRecord | undefined;

  constructor(options: LiveJobsOptions) {
    this.#options = options;
  }

  /** Starts telling `listener` (at once: the jobs running now); undefined when too many listen already. */
  async subscribe(listener: LiveListener): Promise<(() => void) | undefined> {
    if (this.#listeners.size >= (this.#options.maxListeners ?? 20)) return undefined;
    if (this.#listeners.size === 0) {
      await this.#options.index.refresh();
      this.#newest = this.#options.index.recent(() => true, 1)[0];
      this.#lastLive = await this.#options.store.activeJobs();
      this.#lastSignature = signature(this.#lastLive);
      this.#timer = setInterval(() => void this.#poll(), this.#options.intervalMs ?? 1000).unref();
    }
    this.#listeners.add(listener);
    listener.live(this.#lastLive);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  get listeners(): number {
    return this.#listeners.size;
  }

  close(): void {
    clearInterval(this.#timer);
    this.#listeners.clear();
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#listeners.size === 0) return;
    this.#polling = true;
    try {
      const { index, store } = this.#options;
      await index.refresh();
      // Newest first; those before the newest one already told have ended since (all of them, if it is gone from the list).
      const latest = index.recent(() => true, 200);
      const newest = this.#newest;
      const seen = newest === undefined ? -1 : latest.findIndex((r) => r.jobId === newest.jobId && r.time === newest.time);
      const ended = seen >= 0 ? latest.slice(0, seen) : latest;
      if (ended.length > 0) {
        this.#newest = ended[0];
        const oldestFirst = [...ended].reverse();
        for (const listener of this.#listeners) listener.finished(oldestFirst);
      }
      const live = await store.activeJobs();
      const sig = signature(live);
      if (sig !== this.#lastSignature) {
        this.#lastSignature = sig;
        this.#lastLive = live;
        for (const listener of this.#listeners) listener.live(live);
      }
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#polling = false;
    }
  }
}

function signature(jobs: readonly ActiveJob[]): string {
  return jobs.map((j) => `${j.jobId}:${j.sent ? 1 : 0}`).join(',');
}
