import Bottleneck from 'bottleneck';
import { AbortedError } from './errors.js';

/**
 * Throttles requests to the image service by the two numbers the service
 * limits: images per minute (a request weighs `n`) and concurrent requests.
 *
 * Two bottleneck limiters in a row: a slot limiter (max concurrent requests,
 * weight 1) and a token bucket of images (bottleneck's reservoir, refilled one
 * image every 60000/imagesPerMinute ms up to imagesPerMinute, weight n). Both
 * can be clustered through Redis by passing bottleneck's own `datastore` /
 * `connection` options (see `bottleneck` below), so many processes share one limit.
 */
export interface ImageLimiterOptions {
  /** Images per minute for the account; `undefined` means no rate limit (429s still pause everyone). */
  imagesPerMinute?: number | undefined;
  /** Requests in flight at once. Default 4. */
  maxConcurrent?: number | undefined;
  /** Name of this limiter; processes that share one through Redis use the same id. */
  id?: string | undefined;
  /** Extra bottleneck options for both limiters, e.g. `{ datastore: 'ioredis', connection }`. */
  bottleneck?: Bottleneck.ConstructorOptions | undefined;
}

export interface ScheduleOptions {
  /** Images this request may produce (its `n`). */
  weight: number;
  signal?: AbortSignal | undefined;
  /** Called while queued with the number of requests ahead of this one, whenever it changes. */
  onQueuePosition?: ((ahead: number) => void) | undefined;
  /** Called once when the request leaves the queue and starts. */
  onStart?: (() => void) | undefined;
}

export interface LimiterStats {
  queued: number;
  running: number;
  /** Images that can start now without waiting (undefined without a rate limit). */
  imagesAvailable: number | undefined;
  pausedForMs: number;
}

interface Ticket {
  onQueuePosition?: ((ahead: number) => void) | undefined;
  lastAhead: number;
}

export class ImageLimiter {
  readonly imagesPerMinute: number | undefined;
  readonly maxConcurrent: number;
  readonly #slots: Bottleneck;
  readonly #images: Bottleneck | undefined;
  readonly #increaseIntervalMs: number | undefined;
  readonly #waiting: Ticket[] = [];
  #running = 0;
  #pausedUntil = 0;
  #stopped = false;

  constructor(options: ImageLimiterOptions = {}) {
    const id = options.id ?? 'pictor';
    this.maxConcurrent = Math.max(1, Math.floor(options.maxConcurrent ?? 4));
    this.imagesPerMinute = options.imagesPerMinute && options.imagesPerMinute > 0 ? options.imagesPerMinute : undefined;
    const shared = options.bottleneck ?? {};
    this.#slots = new Bottleneck({ ...shared, id: `${id}:slots`, maxConcurrent: this.maxConcurrent });
    if (this.imagesPerMinute !== undefined) {
      const ipm = this.imagesPerMinute;
      this.#increaseIntervalMs = Math.max(1, Math.round(60_000 / ipm));
      this.#images = new Bottleneck({
        // The heartbeat decides how late a refill can come; keep it a small part of one interval.
        heartbeatInterval: Math.min(250, Math.max(10, Math.floor(this.#increaseIntervalMs / 20))),
        ...shared,
        id: `${id}:images`,
        reservoir: ipm,
        reservoirIncreaseInterval: this.#increaseIntervalMs,
        reservoirIncreaseAmount: 1,
        reservoirIncreaseMaximum: ipm,
      } as Bottleneck.ConstructorOptions);
    }
  }

  /** The weight a request of `n` images takes: never more than the bucket holds, or it could never run. */
  weightOf(n: number): number {
    const w = Math.max(1, Math.floor(n));
    return this.imagesPerMinute === undefined ? w : Math.min(w, Math.floor(this.imagesPerMinute) || 1);
  }

  /**
   * Runs `fn` when a slot and enough images are free. Rejects with AbortedError
   * as soon as `signal` aborts while queued; the images it had reserved go back.
   */
  schedule<T>(options: ScheduleOptions, fn: () => Promise<T>): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new AbortedError('the request was cancelled before it started'));
    const weight = this.weightOf(options.weight);
    const ticket: Ticket = { onQueuePosition: options.onQueuePosition, lastAhead: -1 };
    this.#waiting.push(ticket);
    this.#notifyPositions();

    let settled = false;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (settled) return;
        settled = true;
        this.#leaveQueue(ticket);
        reject(new AbortedError('the request was cancelled while queued'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });

      const run = async (): Promise<T | undefined> => {
        if (settled) {
          // Cancelled while queued: give the reserved images back to the others.
          if (this.#images) await this.#images.incrementReservoir(weight);
          return undefined;
        }
        await this.#waitOutPause(signal);
        if (settled) {
          if (this.#images) await this.#images.incrementReservoir(weight);
          return undefined;
        }
        this.#leaveQueue(ticket);
        options.onStart?.();
        this.#running++;
        try {
          return await fn();
        } finally {
          this.#running--;
        }
      };
      const throughImages = this.#images
        ? () => this.#images!.schedule({ weight, expiration: undefined }, run)
        : run;
      this.#slots
        .schedule({ weight: 1 }, throughImages)
        .then(
          (value) => {
            if (settled) return;
            settled = true;
            signal?.removeEventListener('abort', onAbort);
            resolve(value as T);
          },
          (error: unknown) => {
            if (settled) return;
            settled = true;
            signal?.removeEventListener('abort', onAbort);
            this.#leaveQueue(ticket);
            reject(this.#stopped ? new AbortedError('the limiter was stopped', { cause: error }) : error);
          },
        );
    });
  }

  /**
   * Waits for a slot and enough images, then holds them until the returned
   * `release` is called (for work whose end is not one promise, like a stream).
   */
  acquire(options: ScheduleOptions): Promise<() => void> {
    return new Promise<() => void>((resolveAcquire, rejectAcquire) => {
      this.schedule(
        options,
        () =>
          new Promise<void>((done) => {
            let released = false;
            resolveAcquire(() => {
              if (!released) {
                released = true;
                done();
              }
            });
          }),
      ).catch(rejectAcquire);
    });
  }

  /**
   * The service said "wait" (429 with a retry time): hold every request of this
   * limiter, and of every process sharing it, for `ms`. With a rate limit the
   * bucket is also emptied, so the queue does not burst when the wait ends.
   */
  async pause(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + ms);
    if (this.#images && this.#increaseIntervalMs) {
      const debt = -Math.ceil(ms / this.#increaseIntervalMs);
      const current = await this.#images.currentReservoir();
      if (current === null || current > debt) await this.#images.updateSettings({ reservoir: debt });
    }
  }

  async stats(): Promise<LimiterStats> {
    return {
      queued: this.#waiting.length,
      running: this.#running,
      imagesAvailable: this.#images ? ((await this.#images.currentReservoir()) ?? undefined) : undefined,
      pausedForMs: Math.max(0, this.#pausedUntil - Date.now()),
    };
  }

  /** Stops both limiters; queued requests are dropped with an error. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await Promise.all([this.#slots.stop({ dropWaitingJobs: true }), this.#images?.stop({ dropWaitingJobs: true })]);
    await Promise.all([this.#slots.disconnect(), this.#images?.disconnect()]);
  }

  async #waitOutPause(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const wait = this.#pausedUntil - Date.now();
      if (wait <= 0 || signal?.aborted) return;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  #leaveQueue(ticket: Ticket): void {
    const i = this.#waiting.indexOf(ticket);
    if (i >= 0) {
      this.#waiting.splice(i, 1);
      this.#notifyPositions();
    }
  }

  #notifyPositions(): void {
    this.#waiting.forEach((t, ahead) => {
      if (t.lastAhead !== ahead) {
        t.lastAhead = ahead;
        t.onQueuePosition?.(ahead);
      }
    });
  }
}
