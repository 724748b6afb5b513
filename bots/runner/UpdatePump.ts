import type { LoggerLike } from 'pictor';
import type { FinalUpdate, JobUpdate, UpdateSink } from './types.js';

const isFinal = (update: JobUpdate): update is FinalUpdate =>
  update.type === 'completed' || update.type === 'failed' || update.type === 'cancelled';

/** Progress that a newer update makes stale: dropped when superseded while waiting. */
const isDroppable = (update: JobUpdate): boolean => update.type === 'queued' || update.type === 'partial';

export interface UpdatePumpOptions {
  sink: UpdateSink;
  /** Least time between two deliveries of non-final updates (`queued`, `started`, `partial`). */
  minIntervalMs: number;
  /** The clock the interval is measured with; it must advance with real time. */
  now: () => number;
  logger: LoggerLike;
  jobId: string;
}

/**
 * Delivers one job's updates to its sink, in order and one at a time.
 *
 * Non-final updates are paced: two are never delivered less than
 * `minIntervalMs` apart. A `queued` or `partial` still waiting is dropped when
 * any newer update arrives (the latest wins); `started` is never dropped for a
 * newer progress update. The final update is never paced: it waits only for
 * the delivery in progress, and drops everything still waiting (including a
 * `started` the sink has not seen yet). Nothing is delivered after it. A sink
 * that throws is logged and the next update is still delivered.
 */
export class UpdatePump {
  readonly #options: UpdatePumpOptions;
  readonly #queue: JobUpdate[] = [];
  #lastPacedAt: number | undefined;
  #finalPushed = false;
  #running = false;
  #wake: (() => void) | undefined;
  #resolveFinal!: (update: FinalUpdate) => void;
  /** Settles once the sink has been handed the final update and its call has returned. */
  readonly delivered: Promise<FinalUpdate>;

  constructor(options: UpdatePumpOptions) {
    this.#options = options;
    this.delivered = new Promise((resolve) => (this.#resolveFinal = resolve));
  }

  /** A final update has been queued. */
  get finished(): boolean {
    return this.#finalPushed;
  }

  /** Queues an update. Returns false (and drops it) once a final update has been queued. */
  push(update: JobUpdate): boolean {
    if (this.#finalPushed) return false;
    if (isFinal(update)) {
      this.#finalPushed = true;
      this.#queue.length = 0;
    } else {
      const tail = this.#queue.at(-1);
      if (tail && isDroppable(tail)) this.#queue.pop();
    }
    this.#queue.push(update);
    this.#wake?.();
    if (!this.#running) void this.#drain();
    return true;
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      for (;;) {
        const next = this.#queue[0];
        if (!next) return;
        if (!isFinal(next)) {
          const waitMs = this.#waitBefore();
          if (waitMs > 0) {
            await this.#sleepOrWake(waitMs);
            continue; // the head may have been superseded meanwhile; look again
          }
        }
        this.#queue.shift();
        await this.#deliver(next);
        if (isFinal(next)) {
          this.#resolveFinal(next);
          return;
        }
      }
    } finally {
      this.#running = false;
    }
  }

  #waitBefore(): number {
    if (this.#lastPacedAt === undefined) return 0;
    return this.#lastPacedAt + this.#options.minIntervalMs - this.#options.now();
  }

  async #deliver(update: JobUpdate): Promise<void> {
    const { sink, logger, jobId, now } = this.#options;
    let pending: void | Promise<void>;
    try {
      pending = sink(update);
    } catch (error) {
      pending = Promise.reject(error);
    }
    // Stamped once the sink has been called, so the interval also holds for a
    // clock reading the sink takes as it receives the update.
    if (!isFinal(update)) this.#lastPacedAt = now();
    try {
      await pending;
    } catch (error) {
      logger.warn({ jobId, update: update.type, err: errorSummary(error) }, 'the update sink failed; going on with the next update');
    }
  }

  #sleepOrWake(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, Math.ceil(ms)));
      this.#wake = done;
    });
  }
}

function errorSummary(error: unknown): { name: string; message: string } {
  return error instanceof Error ? { name: error.name, message: error.message } : { name: typeof error, message: String(error) };
}
