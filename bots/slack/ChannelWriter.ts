/** What a write task returns when, at its turn, it has nothing to write (so it costs no slot). */
export const SKIP: unique symbol = Symbol('skip');

export interface WriteTask<T> {
  /**
   * Tasks with the same key coalesce: while one is still waiting, another is
   * not queued and shares its result. Such a task must build its payload when
   * it runs, from the latest state, so the one write shows everything.
   */
  key?: string | undefined;
  /**
   * Goes before every waiting write that is not urgent (a job's first message,
   * its final images and status, private notes); progress writes wait for a
   * free slot, and coalesce meanwhile.
   */
  urgent?: boolean | undefined;
  /**
   * Counts against the workspace budget (`chat.update`, Slack's Tier 3): every
   * such write waits for a token. Urgent ones (a job's final update) come
   * first: while one waits anywhere in the workspace, no progress write takes
   * a token, so progress is what the budget sheds.
   */
  budgeted?: boolean | undefined;
  run: () => Promise<T | typeof SKIP>;
}

export interface ChannelWriterStats {
  writes: number;
  skipped: number;
  coalesced: number;
  failed: number;
}

interface Entry {
  key: string | undefined;
  urgent: boolean;
  budgeted: boolean;
  run: () => Promise<unknown>;
  promise: Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface ChannelState {
  queue: Entry[];
  running: boolean;
  /** When the last write to this channel finished. */
  lastEnd: number | undefined;
  /** A write of this channel is in flight. */
  writing: boolean;
  /** Wakes the drain loop while it waits for a workspace token (a write came that may not need one). */
  wake: (() => void) | undefined;
}

export interface ChannelWriterOptions {
  /** Least time from the end of one write to the start of the next in the same channel. */
  intervalMs: number;
  /**
   * Workspace-wide budget of budgeted writes per minute: `chat.update` is
   * Slack's Tier 3 (about 50 a minute per workspace). With the default burst
   * of 10, 40 a minute never makes more than 50 calls in any 60 s. Undefined:
   * no budget.
   */
  backgroundPerMinute?: number | undefined;
  /** Tokens the budget can save up. Default 10. */
  backgroundBurst?: number | undefined;
  /** Called when Slack refused a write (an error answer, or no answer); for metrics. */
  onFailure?: (() => void) | undefined;
}

/**
 * Paces writes to Slack channels: one at a time per channel, each starting at
 * least `intervalMs` after the previous one finished (Slack allows about one
 * message per second per channel), so a burst of jobs never draws a 429.
 * Urgent writes (new job messages, results, notes) go first; progress writes
 * coalesce by key, so a busy channel shows the latest state instead of
 * falling behind.
 */
export class ChannelWriter {
  readonly intervalMs: number;
  readonly #channels = new Map<string, ChannelState>();
  readonly #idleWaiters: (() => void)[] = [];
  readonly #stats: ChannelWriterStats = { writes: 0, skipped: 0, coalesced: 0, failed: 0 };
  readonly #perMs: number | undefined;
  readonly #burst: number;
  readonly #onFailure: (() => void) | undefined;
  #tokens: number;
  #tokensAt = Date.now();
  /** Urgent budgeted writes waiting in any channel: the tokens they need are not for progress writes. */
  #urgentWaiting = 0;

  constructor(options: ChannelWriterOptions) {
    if (!(Number.isFinite(options.intervalMs) && options.intervalMs >= 0)) throw new RangeError('intervalMs must be a number of milliseconds ≥ 0');
    const perMinute = options.backgroundPerMinute;
    if (perMinute !== undefined && !(Number.isFinite(perMinute) && perMinute > 0)) throw new RangeError('backgroundPerMinute must be a number above 0');
    this.intervalMs = options.intervalMs;
    this.#onFailure = options.onFailure;
    this.#perMs = perMinute === undefined ? undefined : perMinute / 60_000;
    this.#burst = Math.max(1, options.backgroundBurst ?? 10);
    this.#tokens = this.#burst;
  }

  /** Queues a write to a channel; resolves with its result (undefined when skipped). */
  write<T>(channel: string, task: WriteTask<T>): Promise<T | undefined> {
    let state = this.#channels.get(channel);
    if (!state) {
      state = { queue: [], running: false, writing: false, lastEnd: undefined, wake: undefined };
      this.#channels.set(channel, state);
    }
    if (task.key !== undefined) {
      const waiting = state.queue.find((e) => e.key === task.key);
      if (waiting) {
        this.#stats.coalesced++;
        return waiting.promise as Promise<T | undefined>;
      }
    }
    let resolve!: (value: unknown) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const entry = { key: task.key, urgent: task.urgent === true, budgeted: task.budgeted === true, run: task.run, promise, resolve, reject };
    state.queue.push(entry);
    if (entry.urgent && entry.budgeted && this.#perMs !== undefined) this.#urgentWaiting++;
    if (!state.running) void this.#drain(channel, state);
    else state.wake?.();
    return promise as Promise<T | undefined>;
  }

  /** Writes waiting or running, all channels together. */
  get pending(): number {
    let n = 0;
    for (const state of this.#channels.values()) n += state.queue.length + (state.writing ? 1 : 0);
    return n;
  }

  stats(): ChannelWriterStats {
    return { ...this.#stats };
  }

  /** Resolves once nothing is waiting or running (or after `timeoutMs`). */
  idle(timeoutMs = 30_000): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#idleWaiters.push(done);
    });
  }

  /** How long until a budgeted write may go (0: now); a progress write also leaves the tokens urgent ones wait for. */
  #tokenWait(urgent: boolean): number {
    if (this.#perMs === undefined) return 0;
    this.#refill();
    const needed = urgent ? 1 : 1 + this.#urgentWaiting;
    return this.#tokens >= needed ? 0 : Math.ceil((needed - this.#tokens) / this.#perMs);
  }

  #takeToken(): void {
    if (this.#perMs === undefined) return;
    this.#refill();
    this.#tokens -= 1;
  }

  #refill(): void {
    const now = Date.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#tokensAt) * this.#perMs!);
    this.#tokensAt = now;
  }

  #sleep(state: ChannelState, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        state.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      state.wake = done;
    });
  }

  async #drain(channel: string, state: ChannelState): Promise<void> {
    state.running = true;
    try {
      for (;;) {
        if (state.queue.length === 0) break;
        const wait = state.lastEnd === undefined ? 0 : state.lastEnd + this.intervalMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // Chosen after the wait: an urgent write that came meanwhile goes first;
        // then the oldest write that needs no token, or finds one.
        const urgentWait = this.#tokenWait(true);
        const progressWait = this.#tokenWait(false);
        const mayGo = (e: Entry) => !e.budgeted || (e.urgent ? urgentWait : progressWait) === 0;
        let index = state.queue.findIndex((e) => e.urgent && mayGo(e));
        if (index < 0) index = state.queue.findIndex(mayGo);
        if (index < 0) {
          const waits = state.queue.map((e) => (e.urgent ? urgentWait : progressWait));
          await this.#sleep(state, Math.max(1, Math.min(...waits)));
          continue;
        }
        const [entry] = state.queue.splice(index, 1);
        if (!entry) break;
        const took = entry.budgeted && this.#perMs !== undefined;
        if (took) {
          this.#takeToken();
          if (entry.urgent) this.#urgentWaiting--;
        }
        state.writing = true;
        try {
          const result = await entry.run();
          if (result === SKIP) {
            // Nothing was written: the token goes back.
            if (took) this.#tokens = Math.min(this.#burst, this.#tokens + 1);
            this.#stats.skipped++;
            entry.resolve(undefined);
          } else {
            this.#stats.writes++;
            state.lastEnd = Date.now();
            entry.resolve(result);
          }
        } catch (error) {
          // The request may have reached Slack: it counts against the channel.
          this.#stats.failed++;
          this.#onFailure?.();
          state.lastEnd = Date.now();
          entry.reject(error);
        } finally {
          state.writing = false;
        }
      }
    } finally {
      state.running = false;
      if (state.queue.length === 0 && state.lastEnd === undefined) this.#channels.delete(channel);
      else if (state.queue.length === 0) {
        const stale = state.lastEnd;
        setTimeout(() => {
          const current = this.#channels.get(channel);
          if (current && !current.running && current.queue.length === 0 && current.lastEnd === stale) this.#channels.delete(channel);
        }, this.intervalMs + 50).unref();
      }
      if (this.pending === 0) for (const waiter of this.#idleWaiters.splice(0)) waiter();
    }
  }
}
