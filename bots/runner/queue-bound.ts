import { describeDuration } from '../../src/index.js';
import { JobRefusedError } from './JobRefusedError.js';

/** Jobs queued at once (waiting to be sent) when `PICTOR_MAX_QUEUED_JOBS` is not set. */
export const DEFAULT_MAX_QUEUED_JOBS = 200;

/** How far back the pace at which jobs leave the queue is measured. */
const PACE_WINDOW_MS = 60_000;

/**
 * The runner's bound on jobs waiting to be sent. Past it a new job is refused
 * at once (`queue_full`, nothing reserved, nothing sent), so a burst cannot
 * pile up more work than the service can take before people give up on it,
 * nor memory the bot cannot give back. The refusal names the wait, from the
 * pace at which jobs left the queue over the last minute.
 */
export class QueueBound {
  readonly maxQueued: number;
  readonly #now: () => number;
  /** When jobs left the queue (were sent), oldest first, within the pace window. */
  readonly #starts: number[] = [];

  constructor(options: { maxQueued: number; now: () => number }) {
    this.maxQueued = options.maxQueued;
    this.#now = options.now;
  }

  /** A job left the queue (it is being sent). */
  started(): void {
    const now = this.#now();
    this.#starts.push(now);
    this.#forget(now);
  }

  /** The refusal of a new job when `queued` jobs already wait (undefined while there is room). */
  refusal(queued: number): JobRefusedError | undefined {
    if (queued < this.maxQueued) return undefined;
    const now = this.#now();
    this.#forget(now);
    // Jobs sent in the last minute, as a rate over the whole minute (a runner younger than that errs on the long side).
    const waitMs = this.#starts.length === 0 ? undefined : (queued * PACE_WINDOW_MS) / this.#starts.length;
    return new JobRefusedError('queue_full', describeQueueFull({ queued, maxQueued: this.maxQueued, waitMs }), { limit: this.maxQueued, used: queued });
  }

  #forget(now: number): void {
    while (this.#starts.length > 0 && now - this.#starts[0]! > PACE_WINDOW_MS) this.#starts.shift();
  }
}

/**
 * The sentence of a `queue_full` refusal: how many jobs wait, the bound, and
 * how long a new job would wait at the present pace (or that none has left the
 * queue for a minute).
 */
export function describeQueueFull(input: { queued: number; maxQueued: number; waitMs: number | undefined }): string {
  const head = `The bot is busy: ${input.queued} jobs are waiting, the most it queues at once (${input.maxQueued}), so this one was not started and costs nothing;`;
  if (input.waitMs === undefined) return `${head} none has been sent in the last minute, so try again in a few minutes.`;
  return `${head} at the present pace a new job would wait about ${describeDuration(input.waitMs)}, so try again then.`;
}

/** Positions this close to the front are all shown: each is a few seconds of waiting. */
const SHOW_EVERY_POSITION_BELOW = 10;
/** Further back, a new position is shown once the number ahead has fallen to this share of the one last shown. */
const SHOW_AFTER_FALLING_TO = 0.8;

/**
 * Whether a queued job's new position (`ahead`) is worth an update, given the
 * one it was last shown (undefined: none yet). The first is always shown, then
 * every position near the front, and further back only steps of a fifth: a job
 * that waits behind n others gets O(log n) updates instead of one per job that
 * leaves the queue, so a long queue does not cost every waiting job an edit on
 * each move (which made the work per job grow with the queue).
 */
export function positionWorthShowing(lastShown: number | undefined, ahead: number): boolean {
  if (lastShown === undefined || ahead > lastShown) return true;
  if (ahead === lastShown) return false;
  return ahead < SHOW_EVERY_POSITION_BELOW || ahead <= lastShown * SHOW_AFTER_FALLING_TO;
}
