import { describeDuration } from '../../src/index.js';
import { JobRefusedError } from './JobRefusedError.js';

/** Jobs queued at once (waiting to be sent) when `PICTOR_MAX_QUEUED_JOBS` is not set. */
export const DEFAULT_MAX_QUEUED_JOBS = 200;

/**
 * Megabytes of edit input images the bots hold at once when `PICTOR_MAX_QUEUED_INPUT_MB`
 * is not set: those of edits being fetched, waiting to be sent, and being sent until
 * the service has taken them. A queued generate job holds a few KB; an edit holds its
 * images (up to 16 of up to 50 MB each) from their download to the moment its request
 * has left. 512 MB takes a full queue of ordinary edits (a phone photo is 2–5 MB:
 * 100–250 of them) and keeps the worst case inside the 1 GiB the Kubernetes example
 * gives the process (its own ~150 MB, each image held once, bench/RESULTS.md). It is
 * also the largest edit taken: one whose images alone pass it is refused
 * (`input_too_large`), so the bound holds for any mix of edits.
 */
export const DEFAULT_MAX_QUEUED_INPUT_MB = 512;

/** How long fetched images handed over to their submit (`InputRoomHold.handOver`) count at most, if no submit carries them. */
const HANDED_OVER_MS = 60_000;

const MB = 1024 * 1024;

/** How far back the pace at which jobs leave the queue is measured. */
const PACE_WINDOW_MS = 60_000;

/** What waits to be sent: jobs, and the bytes of the edit input images held (by them, by edits being fetched and by edits whose request has not yet left). */
export interface QueuedLoad {
  jobs: number;
  inputBytes: number;
}

/**
 * The runner's bounds on what waits to be sent: the number of jobs, and the
 * bytes of edit input images they hold. Past either a new job is refused at
 * once (`queue_full`, nothing reserved, nothing sent), so a burst cannot pile
 * up more work than the service can take before people give up on it, nor
 * memory the bot cannot give back. The refusal names the wait, from the pace
 * at which jobs left the queue over the last minute.
 */
export class QueueBound {
  readonly maxQueued: number;
  readonly maxQueuedInputBytes: number;
  readonly #now: () => number;
  /** When jobs left the queue (were sent), oldest first, within the pace window. */
  readonly #starts: number[] = [];

  constructor(options: { maxQueued: number; maxQueuedInputBytes?: number | undefined; now: () => number }) {
    this.maxQueued = options.maxQueued;
    this.maxQueuedInputBytes = options.maxQueuedInputBytes ?? DEFAULT_MAX_QUEUED_INPUT_MB * MB;
    this.#now = options.now;
  }

  /** A job left the queue (it is being sent). */
  started(): void {
    const now = this.#now();
    this.#starts.push(now);
    this.#forget(now);
  }

  /**
   * The refusal of a new job holding `inputBytes` of input images when `queued`
   * already waits (undefined while there is room). An edit is refused when its
   * images would take the held bytes past the bound (`queue_full`: it fits once
   * others have left), or when its images alone pass it (`input_too_large`: it
   * never fits); a job without input images is refused by the job count only.
   */
  refusal(queued: QueuedLoad, inputBytes = 0): JobRefusedError | undefined {
    if (inputBytes > this.maxQueuedInputBytes) {
      return new JobRefusedError('input_too_large', describeInputTooLarge(inputBytes, this.maxQueuedInputBytes), { limit: this.maxQueuedInputBytes, used: inputBytes });
    }
    const tooMany = queued.jobs >= this.maxQueued;
    const tooLarge = inputBytes > 0 && queued.inputBytes + inputBytes > this.maxQueuedInputBytes;
    if (!tooMany && !tooLarge) return undefined;
    const now = this.#now();
    this.#forget(now);
    // Jobs sent in the last minute, as a rate over the whole minute (a runner younger than that errs on the long side).
    // The input images held may all be edits still being fetched (no job queued yet): they free room about as fast as one job leaves.
    const waitMs = this.#starts.length === 0 ? undefined : (Math.max(1, queued.jobs) * PACE_WINDOW_MS) / this.#starts.length;
    if (tooMany) {
      return new JobRefusedError('queue_full', describeQueueFull({ queued: queued.jobs, maxQueued: this.maxQueued, waitMs }), { limit: this.maxQueued, used: queued.jobs });
    }
    const input = { heldBytes: queued.inputBytes, jobBytes: inputBytes, maxBytes: this.maxQueuedInputBytes };
    return new JobRefusedError('queue_full', describeQueueFull({ queued: queued.jobs, maxQueued: this.maxQueued, waitMs, input }), {
      limit: this.maxQueuedInputBytes,
      used: queued.inputBytes,
    });
  }

  #forget(now: number): void {
    while (this.#starts.length > 0 && now - this.#starts[0]! > PACE_WINDOW_MS) this.#starts.shift();
  }
}

/**
 * The sentence of a `queue_full` refusal: how many jobs wait and the bound (or,
 * refused for its input images, how many megabytes of images wait, this edit's
 * and the bound), and how long a new job would wait at the present pace (or
 * that none has left the queue for a minute).
 */
export function describeQueueFull(input: {
  queued: number;
  maxQueued: number;
  waitMs: number | undefined;
  /** Set when the edit was refused for the bytes of input images held, not for the number of jobs. */
  input?: { heldBytes: number; jobBytes: number; maxBytes: number } | undefined;
}): string {
  const held = input.input;
  const head = held
    ? `The bot is busy: the edits waiting hold ${describeMegabytes(held.heldBytes)} of images, and this one’s ${describeMegabytes(held.jobBytes)} would pass the most it keeps at once (${describeMegabytes(held.maxBytes)}), so it was not started and costs nothing;`
    : `The bot is busy: ${input.queued} jobs are waiting, the most it queues at once (${input.maxQueued}), so this one was not started and costs nothing;`;
  if (input.waitMs === undefined) return `${head} none has been sent in the last minute, so try again in a few minutes.`;
  return `${head} at the present pace a new job would wait about ${describeDuration(input.waitMs)}, so try again then.`;
}

/** The sentence of an `input_too_large` refusal: the edit's images, and the most the bot holds at once. */
export function describeInputTooLarge(jobBytes: number, maxBytes: number): string {
  return `This edit’s images come to ${describeMegabytes(jobBytes)}, more than this bot takes at once (${describeMegabytes(maxBytes)}), so it was not started and costs nothing; use fewer or smaller images.`;
}

/** Room in the queue for an edit's input images, held while they are fetched (`JobRunner.holdInputRoom`). */
export interface InputRoomHold {
  /** Gives the room back: nothing was fetched, or nothing will be submitted (once; later calls do nothing). */
  release(): void;
  /**
   * The images are here: the room held by the sizes announced is given back, and the images' own bytes count
   * instead until the `submit` that carries them counts them as its job's (for a minute at most, should none come).
   */
  handOver(images: readonly { data: Uint8Array }[]): void;
}

/**
 * The input bytes held outside a job: room for edits whose images are being
 * fetched (by the sizes Discord or Slack announced), then the fetched images
 * themselves until their submit counts them. So an edit's images are counted
 * without a gap from the start of their download to the moment its request
 * has left.
 */
export class InputRoom {
  #holding = 0;
  readonly #handedOver = new Map<Uint8Array, { bytes: number; timer: NodeJS.Timeout }>();

  /** What this counts now. */
  get bytes(): number {
    let bytes = this.#holding;
    for (const entry of this.#handedOver.values()) bytes += entry.bytes;
    return bytes;
  }

  /** Holds `bytes` of room (the caller has checked the bound). */
  hold(bytes: number): InputRoomHold {
    this.#holding += bytes;
    let open = true;
    const giveBack = () => {
      if (!open) return false;
      open = false;
      this.#holding -= bytes;
      return true;
    };
    return {
      release: () => void giveBack(),
      handOver: (images) => {
        if (!giveBack()) return;
        for (const { data } of images) {
          if (this.#handedOver.has(data)) continue;
          const timer = setTimeout(() => this.#handedOver.delete(data), HANDED_OVER_MS);
          timer.unref();
          this.#handedOver.set(data, { bytes: data.byteLength, timer });
        }
      },
    };
  }

  /** The bytes of these images that were handed over and still count here. */
  handedOverBytes(images: readonly { data: Uint8Array }[] = []): number {
    return images.reduce((sum, { data }) => sum + (this.#handedOver.get(data)?.bytes ?? 0), 0);
  }

  /** Stops counting these images here: their submit counts them now, or refused them. */
  forget(images: readonly { data: Uint8Array }[] = []): void {
    for (const { data } of images) {
      const entry = this.#handedOver.get(data);
      if (!entry) continue;
      clearTimeout(entry.timer);
      this.#handedOver.delete(data);
    }
  }
}

/** Bytes as whole megabytes (at least 1 MB for any bytes at all). */
function describeMegabytes(bytes: number): string {
  return `${bytes > 0 ? Math.max(1, Math.round(bytes / MB)) : 0} MB`;
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
