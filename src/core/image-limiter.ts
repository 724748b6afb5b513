import Bottleneck from 'bottleneck';
import { AbortedError } from './errors.js';
import { bucketShape, DEFAULT_TOLERANCE_MS, LocalImageBucket, type BucketShape, type ImageBucket } from './image-bucket.js';
import { SlotSemaphore } from './SlotSemaphore.js';

/**
 * Throttles requests to the image service by the two numbers the service
 * limits: images per minute (a request weighs `n`) and concurrent requests.
 *
 * Two gates in a row: slots (max concurrent requests, weight 1) and a bucket
 * of images refilled continuously on the service's clock (`ImageBucket`, see
 * image-bucket.ts: up to imagesPerMinute, weight n, waiting requests served in
 * order). The slots can be clustered through Redis by passing bottleneck's own
 * `datastore` / `connection` options (see `bottleneck` below) and the bucket by
 * passing a shared one (`bucket`), so many processes share one limit. In one
 * process alone (no `bottleneck` options, no `coordinator`) the slots are a
 * `SlotSemaphore`, which grants a free slot at once: bottleneck's in-process
 * datastore waits for a timer in each of its operations, a few per request.
 */
export interface ImageLimiterOptions {
  /** Images per minute for the account; `undefined` means no rate limit (429s still pause everyone). */
  imagesPerMinute?: number | undefined;
  /** Requests in flight at once. Default 4. */
  maxConcurrent?: number | undefined;
  /** Name of this limiter; processes that share one through Redis use the same id. */
  id?: string | undefined;
  /**
   * Extra bottleneck options for both limiters, e.g. `{ datastore: 'ioredis', connection }`.
   * Given at all, the slots are a bottleneck limiter (with these options) rather than an in-process semaphore.
   */
  bottleneck?: Bottleneck.ConstructorOptions | undefined;
  /**
   * Where the queue order and the 429 pause live when several processes share
   * this limiter (see `shared-limiter.ts`). Default: in this process only.
   */
  coordinator?: LimiterCoordinator | undefined;
  /**
   * How long a request may take to reach the service after it leaves (a cold
   * connection, a busy machine, another process) without the service's bucket
   * being found short: the bucket lets requests leave as if this much later.
   * Costs this much waiting once per burst, nothing in the steady rate. Default 1000 ms.
   */
  toleranceMs?: number | undefined;
  /** Where the bucket lives when several processes share it (a `RedisImageBucket`). Default: in this process. */
  bucket?: ((shape: BucketShape) => ImageBucket) | undefined;
  /**
   * Longest time a request holds its slot and images (bottleneck's job
   * `expiration`; the in-process semaphore keeps the same lease). After it the
   * slot is given back even if the request still runs (its caller still gets
   * its result), so a process that dies holding slots does not keep them for
   * ever. Default: no limit.
   */
  leaseMs?: number | undefined;
  /** Errors of the limiters' datastore (e.g. a lost Redis connection); requests wait and retry meanwhile. */
  onDatastoreError?: ((error: unknown) => void) | undefined;
}

/**
 * Keeps what processes sharing one limiter must agree on beyond bottleneck's
 * own state: the order of waiting requests (for queue positions) and the 429
 * pause. Implemented over Redis by `RedisCoordinator`; one of the user's own is
 * described in docs/shared-limits.md ("A coordinator of your own").
 */
export interface LimiterCoordinator {
  /**
   * A request joined the queue. `report` is called with the number of requests
   * waiting ahead of it in every process, whenever that changes. Returns the
   * function that takes it out of the queue (when it starts or gives up).
   */
  join(report: ((ahead: number) => void) | undefined): () => void;
  /** Holds the requests of every process until `until` (ms since the epoch). */
  pauseUntil(until: number): Promise<void>;
  /** Until when requests are held (ms since the epoch; 0 or past means not held). */
  pausedUntil(): Promise<number>;
  /**
   * Leaves the shared queue and closes the datastore connection the limiters
   * use (called by `stop()` instead of disconnecting each limiter, so a
   * connection that is down is dropped at once rather than asked to unsubscribe).
   */
  close(): Promise<void>;
  /**
   * Calls `listener` once the shared datastore has been unreachable for `ms` without a break (counting the time it
   * already has been); bounds how long `stop()` waits for it. Returns what stops listening.
   */
  onUnreachableFor?(ms: number, listener: () => void): () => void;
}

export interface ScheduleOptions {
  /** Images this request may produce (its `n`). */
  weight: number;
  signal?: AbortSignal | undefined;
  /**
   * Called while queued with the number of requests ahead of this one, whenever
   * it changes. The moves of one turn of the event loop are reported together,
   * once per waiting request with its position after them (a burst of requests
   * leaving costs one pass over the queue, not one per request); so a request
   * that starts in the turn it was queued is told no position (`onStart` says
   * it started). With a coordinator, positions come from it.
   */
  onQueuePosition?: ((ahead: number) => void) | undefined;
  /** Called once when the request leaves the queue and starts. */
  onStart?: (() => void) | undefined;
  /**
   * Shared limiter only: the datastore (Redis) failed while this request was
   * waiting, so it keeps its place and waits for the connection to come back.
   * Called each time that happens; a chat surface tells the user why it takes long.
   */
  onDatastoreTrouble?: ((error: unknown) => void) | undefined;
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
  onDatastoreTrouble?: ((error: unknown) => void) | undefined;
  lastAhead: number;
  /** Takes the ticket out of the coordinator's shared queue. */
  leaveShared?: (() => void) | undefined;
  /** Rejects the request with `error` if it has not started (`stop()`): its promise never waits on the datastore. */
  drop?: ((error: Error) => void) | undefined;
}

/**
 * A queue position is only shown: a callback that throws is ignored, as it is called from a timer (an `Immediate`, or
 * the coordinator's) where its error would end the process, and with it the paid requests it runs.
 */
function displayOnly(onQueuePosition: (ahead: number) => void): (ahead: number) => void {
  return (ahead) => {
    try {
      onQueuePosition(ahead);
    } catch {
      // Nothing to do: the position is told again when it changes.
    }
  };
}

/** How long a request waits before it is queued again after its datastore failed it (doubling, capped). */
const REQUEUE_MIN_MS = 250;
const REQUEUE_MAX_MS = 5000;
/**
 * How long `stop()` keeps waiting for a shared datastore once nothing of this process runs any more (it may be
 * unreachable, or take requests and never answer), or once it has been unreachable while something still runs.
 */
const STOP_GRACE_MS = 5000;

export class ImageLimiter {
  readonly imagesPerMinute: number | undefined;
  readonly maxConcurrent: number;
  /** Slots when shared (or given bottleneck options): a bottleneck limiter. */
  readonly #slots: Bottleneck | undefined;
  /** Slots in this process alone: granted at once when free. */
  readonly #gate: SlotSemaphore | undefined;
  readonly #bucket: ImageBucket | undefined;
  /** Requests waiting for images, served in order: each waits for the one before it. */
  #imageLine: Promise<void> = Promise.resolve();
  /** Wakes every request sleeping until its images are due (stop, abort). */
  readonly #sleepers = new Set<() => void>();
  readonly #clustered: boolean;
  readonly #coordinator: LimiterCoordinator | undefined;
  readonly #leaseMs: number | undefined;
  readonly #onDatastoreError: ((error: unknown) => void) | undefined;
  #ready: Promise<void> | undefined;
  /** Requests waiting, in the order they were queued (a Set: leaving is O(1) wherever one stands). */
  readonly #waiting = new Set<Ticket>();
  /** The pass reporting positions, when one is due at the end of this turn of the event loop. */
  #positionsDue: NodeJS.Immediate | undefined;
  #running = 0;
  /** Called when the last running request of this process has ended (`#running` back to 0). */
  readonly #whenIdle = new Set<() => void>();
  #pausedUntil = 0;
  #stopped = false;

  constructor(options: ImageLimiterOptions = {}) {
    const id = options.id ?? 'pictor';
    this.maxConcurrent = Math.max(1, Math.floor(options.maxConcurrent ?? 4));
    this.imagesPerMinute = options.imagesPerMinute && options.imagesPerMinute > 0 ? options.imagesPerMinute : undefined;
    const shared = options.bottleneck ?? {};
    this.#clustered = shared.datastore === 'redis' || shared.datastore === 'ioredis' || !!shared.connection;
    this.#coordinator = options.coordinator;
    this.#leaseMs = options.leaseMs !== undefined && options.leaseMs > 0 ? options.leaseMs : undefined;
    this.#onDatastoreError = options.onDatastoreError;
    if (!this.#clustered && !this.#coordinator && options.bottleneck === undefined) this.#gate = new SlotSemaphore(this.maxConcurrent);
    else this.#slots = new Bottleneck({ ...shared, id: `${id}:slots`, maxConcurrent: this.maxConcurrent });
    if (this.imagesPerMinute !== undefined) {
      const shape = bucketShape(this.imagesPerMinute, options.toleranceMs ?? DEFAULT_TOLERANCE_MS);
      this.#bucket = options.bucket ? options.bucket(shape) : new LocalImageBucket(shape);
    }
    if (this.#onDatastoreError) this.#slots?.on('error', this.#onDatastoreError);
  }

  /**
   * Resolves once the slots have reached their datastore. With a shared (Redis)
   * datastore it also writes this limiter's concurrency into the shared state,
   * so a changed configuration takes effect: the process started last wins. (The
   * shared bucket's numbers come with each request: see RedisImageBucket.)
   */
  ready(): Promise<void> {
    this.#ready ??= this.#prepare();
    return this.#ready;
  }

  /** The weight a request of `n` images takes: never more than the bucket holds, or it could never run. */
  weightOf(n: number): number {
    const w = Math.max(1, Math.floor(n));
    return this.#bucket === undefined ? w : Math.min(w, Math.max(1, Math.floor(this.#bucket.shape.capacity)));
  }

  /**
   * Runs `fn` when a slot and enough images are free. Rejects with AbortedError
   * as soon as `signal` aborts while queued; the images it had reserved go back.
   */
  schedule<T>(options: ScheduleOptions, fn: () => Promise<T>): Promise<T> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new AbortedError('the request was cancelled before it started'));
    const weight = this.weightOf(options.weight);
    const onQueuePosition = options.onQueuePosition && displayOnly(options.onQueuePosition);
    const ticket: Ticket = { onQueuePosition, onDatastoreTrouble: options.onDatastoreTrouble, lastAhead: -1 };
    this.#waiting.add(ticket);
    if (this.#coordinator) ticket.leaveShared = this.#coordinator.join(onQueuePosition);
    else if (ticket.onQueuePosition) this.#reportPositionsSoon();

    let settled = false;
    /** Set once `fn` has been called: from then on its own outcome is the caller's. */
    let outcome: Promise<T> | undefined;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (settled) return;
        settled = true;
        this.#leaveQueue(ticket);
        reject(new AbortedError('the request was cancelled while queued'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = (apply: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        apply();
      };
      ticket.drop = (error) =>
        settle(() => {
          this.#leaveQueue(ticket);
          reject(error);
        });

      let requeueDelayMs = REQUEUE_MIN_MS;
      const attempt = () => {
        if (settled) return;
        if (this.#stopped) return ticket.drop!(new AbortedError('the limiter was stopped'));
        /** Marked when this attempt was given up for a new one; its images go back if it ever runs. */
        const current = { abandoned: false };
        const giveBack = async () => {
          if (this.#bucket) await this.#bucket.giveBack(weight);
        };
        const run = async (): Promise<T | undefined> => {
          if (settled || current.abandoned) {
            // Cancelled (or queued again) while waiting: give the reserved images back to the others.
            await giveBack();
            return undefined;
          }
          try {
            await this.#waitOutPause(signal);
          } catch (error) {
            await giveBack();
            throw error;
          }
          if (settled || current.abandoned) {
            await giveBack();
            return undefined;
          }
          this.#leaveQueue(ticket);
          options.onStart?.();
          this.#running++;
          try {
            try {
              outcome = fn();
            } catch (error) {
              outcome = Promise.reject(error);
            }
            if (this.#clustered) {
              // Shared: the caller has its result as soon as `fn` settles, not only once the datastore
              // has recorded the freed slot (it may be unreachable just then).
              outcome.then(
                (value) => settle(() => resolve(value)),
                (failure: unknown) => settle(() => reject(failure)),
              );
            }
            return await outcome;
          } finally {
            this.#running--;
            if (this.#running === 0) for (const idle of [...this.#whenIdle]) idle();
          }
        };
        const expiration = this.#leaseMs;
        const throughImages = this.#bucket ? () => this.#takeImages(weight, ticket, signal, () => settled || current.abandoned).then(run) : run;
        const slotted = this.#gate
          ? this.#throughGate(this.#gate, signal, () => settled, throughImages)
          : this.#slots!.schedule({ weight: 1, expiration }, throughImages);
        slotted.then(
          (value) => {
            if (current.abandoned) return;
            settle(() => resolve(value as T));
          },
          (error: unknown) => {
            if (current.abandoned || settled) return;
            if (outcome) {
              // The lease ran out (or the datastore failed) while the request ran: its own result still counts.
              outcome.then(
                (value) => settle(() => resolve(value)),
                (failure: unknown) => settle(() => reject(failure)),
              );
              return;
            }
            if (this.#clustered && !this.#stopped) {
              // The shared datastore failed this request before it started (connection lost, lease
              // over while waiting): queue it again; nothing was sent, so nothing can be charged twice.
              current.abandoned = true;
              this.#onDatastoreError?.(error);
              ticket.onDatastoreTrouble?.(error);
              setTimeout(attempt, requeueDelayMs);
              requeueDelayMs = Math.min(REQUEUE_MAX_MS, requeueDelayMs * 2);
              return;
            }
            settle(() => {
              this.#leaveQueue(ticket);
              reject(this.#stopped ? new AbortedError('the limiter was stopped', { cause: error }) : error);
            });
          },
        );
      };
      attempt();
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
   * bucket is also emptied until then (once, however many processes pause at
   * the same moment), so the queue does not burst when the wait ends.
   */
  async pause(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    const until = Date.now() + ms;
    this.#pausedUntil = Math.max(this.#pausedUntil, until);
    await Promise.all([this.#coordinator?.pauseUntil(until), this.#bucket?.drain(ms)]);
  }

  /**
   * The shared datastore (Redis) is unreachable: every request waiting in this
   * process is told (`onDatastoreTrouble`); they keep their places and go on
   * once the connection is back.
   */
  reportDatastoreTrouble(error: unknown): void {
    for (const ticket of [...this.#waiting]) ticket.onDatastoreTrouble?.(error);
  }

  async stats(): Promise<LimiterStats> {
    return {
      queued: this.#waiting.size,
      running: this.#running,
      imagesAvailable: this.#bucket ? await this.#bucket.available() : undefined,
      pausedForMs: Math.max(0, Math.max(this.#pausedUntil, this.#coordinator ? await this.#coordinator.pausedUntil() : 0) - Date.now()),
    };
  }

  /** Stops both limiters; queued requests are dropped with an error. Resolves once the running ones have ended (or their lease). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#positionsDue) clearImmediate(this.#positionsDue);
    this.#positionsDue = undefined;
    // The requests that have not started are dropped here, not only through the datastore: a shared one that is
    // unreachable, or lost an answer when the connection broke, would leave them waiting for ever.
    for (const ticket of [...this.#waiting]) ticket.drop?.(new AbortedError('the limiter was stopped'));
    // Requests waiting for images give their slots back.
    for (const wake of [...this.#sleepers]) wake();
    if (this.#gate) {
      this.#gate.rejectWaiting(new AbortedError('the limiter was stopped'));
      await this.#gate.whenIdle();
      return;
    }
    const slots = this.#slots!;
    const stopping = slots.stop({ dropWaitingJobs: true });
    if (this.#clustered || this.#coordinator) {
      // Stopping waits for the shared datastore to record the requests that ran. It gives up after a grace period
      // once nothing of this process runs any more (a datastore that takes requests and never answers), or once it
      // has been unreachable that long (when the coordinator can tell): closing the coordinator drops the connection,
      // failing what waits on it.
      const grace = this.#stopGrace();
      await Promise.race([stopping.catch(() => undefined), grace.over]);
      grace.end();
    } else {
      await stopping;
    }
    // A coordinator closes the shared connection itself (see LimiterCoordinator.close). Without one, bottleneck's
    // connection is dropped, not asked to quit: a datastore that never answers would never let QUIT end.
    if (this.#coordinator) await this.#coordinator.close();
    else await slots.disconnect(false);
  }

  /**
   * The grace `stop()` gives a shared datastore: `over` resolves STOP_GRACE_MS after the last running request of
   * this process has ended (from now when none runs), or once the coordinator says the datastore has been unreachable
   * that long (one of the user's own may not say it); `end` clears its timer and listeners.
   */
  #stopGrace(): { over: Promise<void>; end: () => void } {
    let idleTimer: NodeJS.Timeout | undefined;
    let resolveOver!: () => void;
    const over = new Promise<void>((resolve) => (resolveOver = resolve));
    const startIdleGrace = () => {
      this.#whenIdle.delete(startIdleGrace);
      idleTimer = setTimeout(resolveOver, STOP_GRACE_MS);
    };
    const stopListening = this.#coordinator?.onUnreachableFor?.(STOP_GRACE_MS, resolveOver) ?? (() => undefined);
    const end = () => {
      clearTimeout(idleTimer);
      this.#whenIdle.delete(startIdleGrace);
      stopListening();
      resolveOver();
    };
    if (this.#running === 0) startIdleGrace();
    else this.#whenIdle.add(startIdleGrace);
    return { over, end };
  }

  async #prepare(): Promise<void> {
    await this.#slots?.ready();
    if (!this.#clustered || !this.#slots) return;
    await this.#slots.updateSettings({ maxConcurrent: this.maxConcurrent });
  }

  /** Waits for its turn among the requests waiting for images, then until the bucket lets `weight` images leave, and takes them. */
  #takeImages(weight: number, ticket: Ticket, signal: AbortSignal | undefined, cancelled: () => boolean): Promise<void> {
    const turn = this.#imageLine.then(() => this.#waitForImages(weight, ticket, signal, cancelled));
    this.#imageLine = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  async #waitForImages(weight: number, ticket: Ticket, signal: AbortSignal | undefined, cancelled: () => boolean): Promise<void> {
    let retryMs = REQUEUE_MIN_MS;
    for (;;) {
      if (this.#stopped) throw new AbortedError('the limiter was stopped');
      if (signal?.aborted || cancelled()) throw new AbortedError('the request was cancelled while queued');
      let waitMs: number;
      try {
        waitMs = await this.#bucket!.take(weight);
        retryMs = REQUEUE_MIN_MS;
      } catch (error) {
        // The shared bucket is unreachable: keep the place in line and ask again (doubling, capped).
        this.#onDatastoreError?.(error);
        ticket.onDatastoreTrouble?.(error);
        waitMs = retryMs;
        retryMs = Math.min(REQUEUE_MAX_MS, retryMs * 2);
      }
      if (waitMs <= 0) return;
      await this.#sleep(waitMs, signal);
    }
  }

  /** Sleeps `ms`, or less if `signal` aborts or the limiter stops. */
  #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        this.#sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal?.addEventListener('abort', wake, { once: true });
      this.#sleepers.add(wake);
    });
  }

  /**
   * Runs `job` once the semaphore grants a slot, and gives the slot back when
   * the job settles, or when its lease ends: then, as bottleneck does for a
   * job past its `expiration`, the returned promise rejects while the job goes on.
   * A request cancelled or stopped before its turn gives the slot straight back.
   */
  #throughGate<T>(gate: SlotSemaphore, signal: AbortSignal | undefined, cancelled: () => boolean, job: () => Promise<T>): Promise<T | undefined> {
    return gate.take(signal).then((release) => {
      if (cancelled()) {
        release();
        return undefined;
      }
      if (this.#stopped) {
        release();
        throw new AbortedError('the limiter was stopped');
      }
      return new Promise<T>((resolve, reject) => {
        const leaseMs = this.#leaseMs;
        const lease =
          leaseMs === undefined
            ? undefined
            : setTimeout(() => {
                release();
                reject(new Bottleneck.BottleneckError(`This job timed out after ${leaseMs} ms.`));
              }, leaseMs);
        const end = () => {
          clearTimeout(lease);
          release();
        };
        job().then(
          (value) => {
            end();
            resolve(value);
          },
          (error: unknown) => {
            end();
            reject(error);
          },
        );
      });
    });
  }

  async #waitOutPause(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const shared = this.#coordinator ? await this.#coordinator.pausedUntil() : 0;
      const wait = Math.max(this.#pausedUntil, shared) - Date.now();
      if (wait <= 0 || signal?.aborted) return;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  #leaveQueue(ticket: Ticket): void {
    if (!this.#waiting.delete(ticket)) return;
    ticket.leaveShared?.();
    // Those behind it moved up: told in one pass at the end of this turn, however many leave in it.
    if (!this.#coordinator && this.#waiting.size > 0) this.#reportPositionsSoon();
  }

  #reportPositionsSoon(): void {
    if (this.#stopped) return;
    this.#positionsDue ??= setImmediate(() => {
      this.#positionsDue = undefined;
      this.#reportPositions();
    });
  }

  /** Tells each waiting request its position, if it changed since it was last told. */
  #reportPositions(): void {
    let ahead = 0;
    for (const ticket of this.#waiting) {
      if (ticket.lastAhead !== ahead) {
        ticket.lastAhead = ahead;
        ticket.onQueuePosition?.(ahead);
      }
      ahead++;
    }
  }
}
