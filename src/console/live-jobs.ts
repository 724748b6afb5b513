import { LATE, within } from '../core/with-timeout.js';
import type { ActiveJob, UsageRecord } from '../spend/types.js';
import type { LedgerNow } from './ledger-now.js';
import type { UsageIndex } from './usage-index.js';

/** One browser listening (the jobs page's EventSource): told the jobs running now, and each job as it ends. */
export interface LiveListener {
  live(jobs: readonly ActiveJob[]): void;
  finished(records: readonly UsageRecord[]): void;
}

export interface LiveJobsOptions {
  /** The ledger read in the console's one order (gone processes ended, then the usage index, then the reservations). */
  ledger: Pick<LedgerNow, 'read'>;
  /** The usage index `ledger` brings up to date: the jobs that ended are taken from it. */
  index: Pick<UsageIndex, 'recent' | 'refresh' | 'ready'>;
  /** How often the ledger is read while someone listens. Default 1 s. */
  intervalMs?: number | undefined;
  /** How long one read may take: past it the next read runs (what the late one brings is dropped). The console's one backend wait. */
  readWaitMs: number;
  /** Listeners at once, those waiting for the first read included; past it `subscribe` answers undefined. Default 20. */
  maxListeners?: number | undefined;
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * The live part of the jobs page, for every listener at once: while anyone
 * listens it reads the ledger's reservations (every process's jobs) and the
 * usage records written since, once a second, and tells the listeners what
 * changed. Nobody listening: nothing is read. The first listener's first read
 * is shared by every listener arriving meanwhile; one read at a time, each
 * given `readWaitMs`.
 */
export class LiveJobs {
  readonly #options: LiveJobsOptions;
  readonly #listeners = new Set<LiveListener>();
  #timer: NodeJS.Timeout | undefined;
  /** The first read under way (nobody listening yet), shared by all who subscribe meanwhile: it answers the jobs it found ended. */
  #starting: Promise<readonly UsageRecord[]> | undefined;
  /** Subscribers waiting for the first read: they count toward `maxListeners`. */
  #waiting = 0;
  #polling = false;
  /** The read whose answer is taken: a later one makes an earlier (late) one's answer dropped. */
  #read = 0;
  #lastLive: readonly ActiveJob[] = [];
  #lastSignature = '';
  /** The newest record already told. */
  #newest: UsageRecord | undefined;
  /** Closed: nothing more is read, nobody more is taken (a first read under way when it closed included). */
  #closed = false;

  constructor(options: LiveJobsOptions) {
    this.#options = options;
  }

  /**
   * Starts telling `listener` (at once: the jobs that ended in the first read, if it waited for one, then the jobs
   * running now); undefined when too many listen already, or once closed.
   */
  async subscribe(listener: LiveListener): Promise<(() => void) | undefined> {
    if (this.#closed || this.#listeners.size + this.#waiting >= (this.#options.maxListeners ?? 20)) return undefined;
    let ended: readonly UsageRecord[] = [];
    if (this.#timer === undefined) {
      this.#waiting++;
      try {
        ended = await (this.#starting ??= this.#start().finally(() => (this.#starting = undefined)));
      } finally {
        this.#waiting--;
      }
      // Closed during the first read.
      if (this.#closed) return undefined;
    }
    this.#listeners.add(listener);
    // As at each tick: a job leaving the running ones is told ended first, so it is never in neither list.
    if (ended.length > 0) listener.finished(ended);
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
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#listeners.clear();
  }

  /** The first read (nobody listens yet), then one interval for everyone; answers the jobs it found ended, oldest first. */
  async #start(): Promise<readonly UsageRecord[]> {
    const { index, ledger } = this.#options;
    const read = ++this.#read;
    // The newest record told is taken before this read's reconcile can end a job: taken after, the record of a job it
    // ended would count as told, while the job is gone from the running ones (in neither list). Records newer than what
    // the page showed are told as ended by this read, with its running jobs (the page puts a job told twice in one row).
    if (!index.ready) await index.refresh();
    const newest = index.recent(() => true, 1)[0];
    const live = await ledger.read();
    let ended: readonly UsageRecord[] = [];
    if (read === this.#read) {
      this.#newest = newest;
      ended = this.#endedSinceTold();
      this.#lastLive = live;
      this.#lastSignature = signature(live);
    }
    if (this.#closed) return [];
    this.#timer ??= setInterval(() => void this.#poll(), this.#options.intervalMs ?? 1000).unref();
    return ended;
  }

  /** One read, given `readWaitMs`: a read that stalls does not stop the next one. */
  async #poll(): Promise<void> {
    if (this.#polling || this.#listeners.size === 0) return;
    this.#polling = true;
    const read = ++this.#read;
    const waitMs = this.#options.readWaitMs;
    try {
      if ((await within(this.#readOnce(read), waitMs)) === LATE) this.#options.onError?.(new Error(`the ledger did not answer the live read within ${waitMs} ms; read again at the next tick`));
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#polling = false;
    }
  }

  /** Reads and tells what changed, unless a later read has begun meanwhile (this one was late). */
  async #readOnce(read: number): Promise<void> {
    const { ledger } = this.#options;
    const live = await ledger.read();
    if (read !== this.#read) return;
    const ended = this.#endedSinceTold();
    if (ended.length > 0) for (const listener of this.#listeners) listener.finished(ended);
    const sig = signature(live);
    if (sig !== this.#lastSignature) {
      this.#lastSignature = sig;
      this.#lastLive = live;
      for (const listener of this.#listeners) listener.live(live);
    }
  }

  /** The records newer than the newest one told, oldest first, now counted as told: the jobs that ended since. */
  #endedSinceTold(): UsageRecord[] {
    // Newest first; those before the newest one already told have ended since (all of them, if it is gone from the list).
    const latest = this.#options.index.recent(() => true, 200);
    const newest = this.#newest;
    const seen = newest === undefined ? -1 : latest.findIndex((r) => r.jobId === newest.jobId && r.time === newest.time);
    const ended = seen >= 0 ? latest.slice(0, seen) : latest;
    if (ended.length > 0) this.#newest = ended[0];
    return ended.reverse();
  }
}

function signature(jobs: readonly ActiveJob[]): string {
  return jobs.map((j) => `${j.jobId}:${j.sent ? 1 : 0}`).join(',');
}
