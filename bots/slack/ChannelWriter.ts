import { ValidationError } from 'pictor';
import { LocalImageBucket } from 'pictor';
import { AS_VALIDATION_ERROR, MAX_TIMER_MS, timerMsOf, type BucketShape } from 'pictor/internal';
import type { StopBudget } from '../runner/stop-once.js';
import type { SharedWriteBuckets } from './shared-write-buckets.js';

/** The deadline of the bot's stop, as the stop keeps it (`stopOnce`'s budget): the one place its earliest `until` is kept. */
export type StopDeadline = Pick<StopBudget, 'until' | 'onBroughtForward'>;

/** What a write task returns when, at its turn, it has nothing to write (so it costs no slot). */
export const SKIP: unique symbol = Symbol('skip');

interface WriteTaskBase<T> {
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
  run: () => Promise<T | typeof SKIP>;
}

/**
 * Counts against its workspace's budget (`chat.update`, Slack's Tier 3, which
 * Slack counts per app per workspace): every such write waits for a token of
 * `workspace`'s bucket. Urgent ones (a job's final update) come first: while
 * one waits in the workspace, no progress write of that workspace takes a
 * token, so progress is what the budget sheds.
 */
interface BudgetedWriteTask<T> extends WriteTaskBase<T> {
  budgeted: true;
  /**
   * The workspace Slack counts the call against: the team id of the workspace
   * the message is in (for an Enterprise Grid org-wide install too: the
   * workspace of the request, never the organization's id).
   */
  workspace: string;
  /**
   * Can wait: an urgent one goes after the channel's other urgent writes
   * (still before its progress writes, and still first for its workspace's
   * tokens), and it is dropped when the bot stops (`shedProgress`): what it
   * would show is left to the next process's start-up sweep. A finished job's
   * "Done", whose Reroll, Edit and Delete are already posted beside its images.
   */
  deferrable?: boolean | undefined;
}

interface UnbudgetedWriteTask<T> extends WriteTaskBase<T> {
  budgeted?: false | undefined;
  workspace?: string | undefined;
  deferrable?: false | undefined;
}

export type WriteTask<T> = BudgetedWriteTask<T> | UnbudgetedWriteTask<T>;

export interface ChannelWriterStats {
  writes: number;
  skipped: number;
  coalesced: number;
  failed: number;
}

interface Entry {
  key: string | undefined;
  urgent: boolean;
  /** The workspace whose budget a budgeted write takes a token of; undefined for a write outside the budget. */
  workspace: string | undefined;
  /** After the channel's other urgent writes; shed when the bot stops, with the progress writes. */
  deferrable: boolean;
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
  /** Wakes the drain loop while it waits for a token (a write came that may not need one). */
  wake: (() => void) | undefined;
  /** Writes queued so far: one that came while the loop was choosing is looked at before it sleeps. */
  added: number;
}

/** One workspace's budget as this process keeps it. */
interface WorkspaceBudget {
  /** The tokens, when the budget is not shared (or the shared one cannot be reached). */
  local: LocalImageBucket;
  /** Urgent budgeted writes of the workspace waiting in any channel: the tokens they need are not for progress writes. */
  urgentWaiting: number;
  /** When a token was last taken: a budget unused for a whole refill is full again, and can be forgotten. */
  usedAt: number;
}

/** Where a write's token came from, to give it back if the write wrote nothing. */
type TokenFrom = 'local' | 'shared' | undefined;

/** A budget of writes a minute as given — a finite number above 0 — or a `ValidationError` naming the option. */
function writesPerMinuteOf(option: string, perMinute: unknown): number {
  if (typeof perMinute === 'number' && Number.isFinite(perMinute) && perMinute > 0) return perMinute;
  throw new ValidationError(option, `${option} must be a number of writes a minute above 0, not ${String(perMinute)}`);
}

/** A count of writes as given — a whole number, `least` or more — or a `ValidationError` naming the option. */
function wholeWritesOf(option: string, writes: unknown, least: 0 | 1): number {
  if (typeof writes === 'number' && Number.isSafeInteger(writes) && writes >= least) return writes;
  throw new ValidationError(option, `${option} must be a whole number of writes, ${least} or more, not ${String(writes)}`);
}

/**
 * The writer's options, named as `startSlackBot` takes them. The writer checks them when it is made (a `ValidationError`
 * naming the option): a pace past what a timer can wait would leave writes unpaced, a budget of none would hold every
 * budgeted write for ever, one not finite would budget none, a headroom not a whole number (NaN) reached the shared bucket as it was.
 */
export interface ChannelWriterOptions {
  /** Least time from the end of one write to the start of the next in the same channel: a delay a timer can wait (`timerMsOf`). */
  channelWriteIntervalMs: number;
  /**
   * Each workspace's budget of budgeted writes per minute, a number above 0: `chat.update` is Slack's Tier 3 (about 50
   * a minute per app per workspace). Default 40.
   */
  progressWritesPerMinute?: number | undefined;
  /** Tokens each workspace's budget can save up: a whole number, 1 or more. Default 10. */
  progressWritesBurst?: number | undefined;
  /**
   * Buckets shared with the other replicas (Redis): each workspace's budget,
   * and each channel's pace (one write start per `channelWriteIntervalMs` across all
   * replicas, on top of this process's own pace). Undefined: this process
   * counts alone. When they cannot be reached, the process paces with its own.
   */
  shared?: SharedWriteBuckets | undefined;
  /**
   * With a shared budget: tokens a progress write leaves in the bucket for the
   * final updates of the other replicas, which this process does not see
   * waiting: a whole number, 0 or more. Default 3.
   */
  sharedHeadroom?: number | undefined;
  /** Called when Slack refused a write (an error answer, or no answer); for metrics. */
  onFailure?: (() => void) | undefined;
  /** The clock of the budgets and pace (tests). Default Date.now. */
  now?: (() => number) | undefined;
}

/** Workspace budgets kept before the full ones are forgotten. */
const KEPT_BUDGETS = 1000;
const DEFAULT_SHARED_HEADROOM = 3;
/**
 * The default budget of a workspace's updates: 40 a minute, 10 saved up. A full bucket and a minute's refill are never
 * more than 10 + 40 = 50 calls in any 60 s, Slack's Tier 3 for `chat.update`.
 */
const DEFAULT_PROGRESS_WRITES_PER_MINUTE = 40;
const DEFAULT_BURST = 10;

/**
 * Paces writes to Slack channels: one at a time per channel, each starting at
 * least `channelWriteIntervalMs` after the previous one finished (Slack allows about one
 * message per second per channel), so a burst of jobs never draws a 429.
 * Urgent writes (new job messages, results, notes) go first; progress writes
 * coalesce by key, so a busy channel shows the latest state instead of
 * falling behind. Message updates also wait for their workspace's budget
 * (`progressWritesPerMinute`), one bucket per workspace, kept by the rule of the
 * image bucket (src/core/image-bucket.ts) with weight 1; with `shared`, the
 * replicas keep each bucket together in Redis.
 */
export class ChannelWriter {
  readonly intervalMs: number;
  readonly #channels = new Map<string, ChannelState>();
  readonly #idleWaiters: (() => void)[] = [];
  readonly #stats: ChannelWriterStats = { writes: 0, skipped: 0, coalesced: 0, failed: 0 };
  readonly #budgetShape: BucketShape;
  readonly #paceShape: BucketShape;
  readonly #budgets = new Map<string, WorkspaceBudget>();
  readonly #shared: SharedWriteBuckets | undefined;
  readonly #sharedHeadroom: number;
  readonly #onFailure: (() => void) | undefined;
  readonly #now: () => number;
  /** `shedProgress` was called: the bot is stopping, and sheds the writes it would also shed later. */
  #shedding = false;
  readonly #stopping = new AbortController();
  /** The bot's stop, once it sheds (`shedProgress`): its deadline is read there, never kept a second time here. */
  #stop: StopDeadline | undefined;
  /** Past when the stop no longer waits for the jobs' ends, however late its `until` (`shedProgress`). */
  #drainUntil: number | undefined;
  /** Told each time the stop's deadline is brought forward (`onStopDeadlineMoved`). */
  readonly #stopDeadlineMoved = new EventTarget();

  constructor(options: ChannelWriterOptions) {
    this.intervalMs = timerMsOf('channelWriteIntervalMs', options.channelWriteIntervalMs, AS_VALIDATION_ERROR);
    const perMinute = options.progressWritesPerMinute === undefined ? DEFAULT_PROGRESS_WRITES_PER_MINUTE : writesPerMinuteOf('progressWritesPerMinute', options.progressWritesPerMinute);
    const burst = options.progressWritesBurst === undefined ? DEFAULT_BURST : wholeWritesOf('progressWritesBurst', options.progressWritesBurst, 1);
    this.#onFailure = options.onFailure;
    this.#now = options.now ?? Date.now;
    this.#budgetShape = { capacity: burst, intervalMs: 60_000 / perMinute, toleranceMs: 0 };
    this.#paceShape = { capacity: 1, intervalMs: this.intervalMs, toleranceMs: 0 };
    this.#shared = options.shared;
    this.#sharedHeadroom = options.sharedHeadroom === undefined ? DEFAULT_SHARED_HEADROOM : wholeWritesOf('sharedHeadroom', options.sharedHeadroom, 0);
  }

  /** Queues a write to a channel; resolves with its result (undefined when skipped). */
  write<T>(channel: string, task: WriteTask<T>): Promise<T | undefined> {
    if (task.budgeted === true && typeof task.workspace !== 'string') return Promise.reject(new TypeError('a budgeted write needs the workspace Slack counts it against'));
    if (this.#shedding && task.budgeted === true && (task.urgent !== true || task.deferrable === true)) {
      this.#stats.skipped++;
      return Promise.resolve(undefined);
    }
    let state = this.#channels.get(channel);
    if (!state) {
      state = { queue: [], running: false, writing: false, lastEnd: undefined, wake: undefined, added: 0 };
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
    const workspace = task.budgeted === true ? task.workspace : undefined;
    const entry: Entry = { key: task.key, urgent: task.urgent === true, workspace, deferrable: task.deferrable === true, run: task.run, promise, resolve, reject };
    state.queue.push(entry);
    state.added++;
    if (entry.urgent && workspace !== undefined) this.#budget(workspace).urgentWaiting++;
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

  /**
   * Drops the progress writes waiting for a workspace token (budgeted, not
   * urgent), and the deferrable ones: resolved as skipped, and so are those
   * that come later. For a bot that stops: its jobs have ended, so a progress
   * update would only be skipped once its token came, waiting for those
   * tokens would hold the stop for nothing, and a deferrable write is left to
   * the next start's sweep. Other final updates, messages and uploads still
   * wait their turn. The stop begins here (`stopping`): `stop` is the bot's
   * stop, whose `until` (the earliest its calls gave) bounds the jobs' ends,
   * and `drainUntil` when it no longer waits for them, whatever that `until`
   * (`stopDeadline`).
   */
  shedProgress(stop: { budget?: StopDeadline; drainUntil?: number } = {}): void {
    if (!this.#shedding && stop.budget) {
      this.#stop = stop.budget;
      stop.budget.onBroughtForward(() => this.#stopDeadlineMoved.dispatchEvent(new Event('moved')));
    }
    this.#shedding = true;
    this.#drainUntil = stop.drainUntil;
    this.#stopping.abort();
    for (const state of this.#channels.values()) {
      for (let i = state.queue.length - 1; i >= 0; i--) {
        const entry = state.queue[i]!;
        if (entry.workspace === undefined || (entry.urgent && !entry.deferrable)) continue;
        state.queue.splice(i, 1);
        if (entry.urgent) this.#budget(entry.workspace).urgentWaiting--;
        this.#stats.skipped++;
        entry.resolve(undefined);
      }
      state.wake?.();
    }
    this.#settleIfIdle();
  }

  /**
   * Aborted once the bot begins to stop (`shedProgress`): a wait between writes (Slack's `Retry-After`) ends there, and
   * leaves what it waited to write to the next start's sweep, as a shed write does.
   */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  /**
   * Once the bot has begun to stop (`stopping`): past when it no longer waits for the jobs' ends — the stop's `until`
   * (`StopBudget.until`: the earliest its calls gave, a later one bringing it forward, never back), and no later than
   * the drain's bound when `shedProgress` gave one. Undefined before, and while no call gave an `until`: a job's end
   * then waits within its own bounds, and the stop waits for the writes and the jobs up to 10 s each (the bot's
   * `STOP_DRAIN_MS`), then stops waiting for them.
   */
  get stopDeadline(): number | undefined {
    const until = this.#stop?.until();
    if (!this.#stopping.signal.aborted || until === undefined) return undefined;
    return this.#drainUntil === undefined ? until : Math.min(until, this.#drainUntil);
  }

  /** Calls `listener` each time the stop's deadline is brought forward (`StopBudget.onBroughtForward`); answers how to stop calling it. */
  onStopDeadlineMoved(listener: () => void): () => void {
    this.#stopDeadlineMoved.addEventListener('moved', listener);
    return () => this.#stopDeadlineMoved.removeEventListener('moved', listener);
  }

  /** Answers every `idle()` caller once nothing is waiting or running. */
  #settleIfIdle(): void {
    if (this.pending === 0) for (const waiter of this.#idleWaiters.splice(0)) waiter();
  }

  /**
   * Resolves once nothing is waiting or running, or when `signal` aborts: a caller that stops waiting sooner (a stop
   * given up at its deadline) aborts it, and its waiter is gone — nothing of it is left in a writer that lives on.
   */
  idle(signal?: AbortSignal): Promise<void> {
    if (this.pending === 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.#idleWaiters;
      const done = () => {
        signal?.removeEventListener('abort', stopWaiting);
        resolve();
      };
      const stopWaiting = () => {
        const at = waiters.indexOf(done);
        if (at >= 0) waiters.splice(at, 1);
        resolve();
      };
      signal?.addEventListener('abort', stopWaiting, { once: true });
      waiters.push(done);
    });
  }

  #budget(workspace: string): WorkspaceBudget {
    let budget = this.#budgets.get(workspace);
    if (!budget) {
      if (this.#budgets.size >= KEPT_BUDGETS) this.#forgetFullBudgets();
      budget = { local: new LocalImageBucket(this.#budgetShape, this.#now), urgentWaiting: 0, usedAt: Number.NEGATIVE_INFINITY };
      this.#budgets.set(workspace, budget);
    }
    return budget;
  }

  /** Budgets nobody waits for whose bucket is full again: a new one starts full, the same. */
  #forgetFullBudgets(): void {
    const { capacity, intervalMs } = this.#budgetShape;
    const fullSince = this.#now() - capacity * intervalMs;
    for (const [workspace, budget] of this.#budgets) if (budget.urgentWaiting === 0 && budget.usedAt <= fullSince) this.#budgets.delete(workspace);
  }

  /**
   * Takes a token of the workspace's budget for a write: wait 0 and where it came from, or how long until one may be
   * taken. A progress write leaves the tokens the workspace's waiting urgent writes need, and, when the budget is
   * shared, `sharedHeadroom` more for the urgent writes of other replicas.
   */
  async #takeToken(workspace: string, urgent: boolean): Promise<{ waitMs: number; from: TokenFrom }> {
    const budget = this.#budget(workspace);
    const headroom = urgent ? 0 : budget.urgentWaiting;
    // The urgent writes waiting here need every token the bucket can hold: they take the next ones.
    if (headroom >= this.#budgetShape.capacity) return { waitMs: Math.ceil(this.#budgetShape.intervalMs), from: undefined };
    let waitMs = await this.#shared?.take(`updates:${workspace}`, this.#budgetShape, urgent ? 0 : headroom + this.#sharedHeadroom);
    let from: TokenFrom = 'shared';
    if (waitMs === undefined) {
      waitMs = await budget.local.take(1, headroom);
      from = 'local';
    }
    if (waitMs > 0) return { waitMs, from: undefined };
    budget.usedAt = this.#now();
    return { waitMs: 0, from };
  }

  #giveTokenBack(workspace: string, from: TokenFrom): void {
    if (from === 'shared') void this.#shared!.giveBack(`updates:${workspace}`, this.#budgetShape);
    else if (from === 'local') void this.#budget(workspace).local.giveBack(1);
  }

  /**
   * The write to run next, its token taken: an urgent write that may go first (a deferrable one after the others),
   * then the oldest write that needs no token or finds one. Otherwise how long until one may.
   */
  async #choose(state: ChannelState): Promise<{ entry: Entry; from: TokenFrom } | { entry: undefined; waitMs: number }> {
    const tried = new Set<string>();
    let waitMs = Number.POSITIVE_INFINITY;
    const { queue } = state;
    for (const entry of [...queue.filter((e) => e.urgent && !e.deferrable), ...queue.filter((e) => e.urgent && e.deferrable), ...queue.filter((e) => !e.urgent)]) {
      if (entry.workspace === undefined) return { entry, from: undefined };
      const kind = `${entry.urgent ? 'urgent' : 'progress'}:${entry.workspace}`;
      if (tried.has(kind)) continue;
      tried.add(kind);
      const token = await this.#takeToken(entry.workspace, entry.urgent);
      if (token.waitMs === 0) return { entry, from: token.from };
      waitMs = Math.min(waitMs, token.waitMs);
    }
    return { entry: undefined, waitMs };
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
    const paceName = `channel:${channel}`;
    try {
      for (;;) {
        if (state.queue.length === 0) break;
        const wait = state.lastEnd === undefined ? 0 : state.lastEnd + this.intervalMs - this.#now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // With replicas: this channel's turn among all of them (when Redis cannot answer, this process's pace alone).
        let paced = false;
        if (this.#shared && this.intervalMs > 0) {
          const paceWait = await this.#shared.take(paceName, this.#paceShape);
          if (paceWait !== undefined && paceWait > 0) {
            await this.#sleep(state, paceWait);
            continue;
          }
          paced = paceWait === 0;
        }
        // Chosen after the waits: an urgent write that came meanwhile goes first.
        const added = state.added;
        const chosen = await this.#choose(state);
        if (!chosen.entry) {
          if (paced) void this.#shared!.giveBack(paceName, this.#paceShape);
          // A write that came while the tokens were asked for may need none: looked at before sleeping.
          if (state.added === added) await this.#sleep(state, Math.max(1, Math.min(chosen.waitMs, 60_000)));
          continue;
        }
        const { entry, from } = chosen;
        const at = state.queue.indexOf(entry);
        if (at < 0) {
          // Shed (`shedProgress`) while its token was being asked for: it is settled already; its token and turn go back.
          if (entry.workspace !== undefined) this.#giveTokenBack(entry.workspace, from);
          if (paced) void this.#shared!.giveBack(paceName, this.#paceShape);
          continue;
        }
        state.queue.splice(at, 1);
        if (entry.urgent && entry.workspace !== undefined) this.#budget(entry.workspace).urgentWaiting--;
        state.writing = true;
        try {
          const result = await entry.run();
          if (result === SKIP) {
            // Nothing was written: the token and the channel's turn go back.
            if (entry.workspace !== undefined) this.#giveTokenBack(entry.workspace, from);
            if (paced) void this.#shared!.giveBack(paceName, this.#paceShape);
            this.#stats.skipped++;
            entry.resolve(undefined);
          } else {
            this.#stats.writes++;
            state.lastEnd = this.#now();
            entry.resolve(result);
          }
        } catch (error) {
          // The request may have reached Slack: it counts against the channel.
          this.#stats.failed++;
          this.#onFailure?.();
          state.lastEnd = this.#now();
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
        // Its pace forgotten once it has passed: never sooner, not even for the longest pace a timer can wait.
        setTimeout(() => {
          const current = this.#channels.get(channel);
          if (current && !current.running && current.queue.length === 0 && current.lastEnd === stale) this.#channels.delete(channel);
        }, Math.min(this.intervalMs + 50, MAX_TIMER_MS)).unref();
      }
      this.#settleIfIdle();
    }
  }
}
