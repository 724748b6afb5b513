import { JobRefusedError } from './JobRefusedError.js';
import { duration, megabytes, words, type Words } from './words.js';

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

const MB = 1024 * 1024;

/** How far back the pace at which jobs leave the queue is measured. */
const PACE_WINDOW_MS = 60_000;

/** What waits to be sent: jobs, and the bytes of the edit input images held (by them, by edits being fetched and by edits whose request has not yet been taken). */
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
 * One job's place in the queue: held from its admission until it is sent or ends, with the bytes of its input images,
 * which count until the service has taken its request (or it ended).
 */
export interface QueuePlace {
  /** The input image bytes it holds. */
  readonly bytes: number;
  /**
   * Holds `bytes` instead (an edit's images once they are here, by their real size): the `queue_full` refusal when the
   * queue has no room for them beside what the other places hold (the place keeps what it held), else undefined.
   */
  resize(bytes: number): JobRefusedError | undefined;
  /** The job is being sent: it no longer counts as waiting, its images still count (once; later calls do nothing). */
  leave(): void;
  /** Gives the place and its bytes back (once; later calls do nothing). */
  release(): void;
}

/**
 * The room of the queue: every job admitted and not yet sent holds a place
 * in it — while its budget is reserved, while its images are fetched, while
 * it waits for the image service — so what the bound counts is kept in one
 * place, and a burst cannot pass the bound between its checks.
 */
export class QueueRoom {
  readonly bound: QueueBound;
  #jobs = 0;
  #bytes = 0;

  constructor(bound: QueueBound) {
    this.bound = bound;
  }

  /** The jobs holding a place and the input bytes they hold. */
  get load(): QueuedLoad {
    return { jobs: this.#jobs, inputBytes: this.#bytes };
  }

  /** A place for a job holding `bytes` of input images (0 for a generation), or the `queue_full` refusal. */
  take(bytes: number): QueuePlace | JobRefusedError {
    let held = Math.max(0, Math.ceil(bytes));
    const full = this.bound.refusal(this.load, held);
    if (full) return full;
    this.#jobs++;
    this.#bytes += held;
    let released = false;
    let left = false;
    return {
      get bytes() {
        return held;
      },
      resize: (next) => {
        if (released) return undefined;
        const wanted = Math.max(0, Math.ceil(next));
        if (wanted > held) {
          // Never refused for the job count: this job is counted already (the others are fewer than the bound).
          const tooLarge = this.bound.refusal({ jobs: this.#jobs - (left ? 0 : 1), inputBytes: this.#bytes - held }, wanted);
          if (tooLarge) return tooLarge;
        }
        this.#bytes += wanted - held;
        held = wanted;
        return undefined;
      },
      leave: () => {
        if (released || left) return;
        left = true;
        this.#jobs--;
      },
      release: () => {
        if (released) return;
        released = true;
        if (!left) this.#jobs--;
        left = true;
        this.#bytes -= held;
      },
    };
  }
}

/**
 * The words of a `queue_full` refusal: how many jobs wait and the bound (or,
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
}): Words {
  const held = input.input;
  const pace = input.waitMs === undefined ? { known: 'no', wait: '' } : { known: 'yes', wait: duration(input.waitMs) };
  return held
    ? words('refusal.queue_full_images', { held: megabytes(held.heldBytes), job: megabytes(held.jobBytes), max: megabytes(held.maxBytes), ...pace })
    : words('refusal.queue_full', { queued: input.queued, max: input.maxQueued, ...pace });
}

/** The words of an `input_too_large` refusal: the edit's images, and the most the bot holds at once. */
export function describeInputTooLarge(jobBytes: number, maxBytes: number): Words {
  return words('refusal.input_too_large', { job: megabytes(jobBytes), max: megabytes(maxBytes) });
}

/** Positions this close to the front are all shown: the next few to go. */
const SHOW_EVERY_POSITION_BELOW = 3;
/** Further back, a position is shown each time the queue has moved by this share of the first one shown. */
const SHOW_STEPS_OF_THE_FIRST = 4;

/**
 * Which of a queued job's positions are worth an update. The first is shown,
 * then one each time the queue has moved by a quarter of that first position
 * (evenly spread over the wait), then each of the last few; a position that
 * moved back starts again from it. So a job gets at most about eight position
 * updates however long the queue: each is an edit of its reply, and a count
 * growing with the queue made every job's cost grow with the crowd.
 */
export class QueuePositions {
  #first: number | undefined;
  #last: number | undefined;

  /** The position last worth showing (undefined: none yet). */
  get last(): number | undefined {
    return this.#last;
  }

  /** Whether `ahead` is worth an update; if so it becomes the last one shown. */
  worthShowing(ahead: number): boolean {
    const last = this.#last;
    if (last === undefined || ahead > last) {
      this.#first = ahead;
      this.#last = ahead;
      return true;
    }
    if (ahead === last) return false;
    if (ahead < SHOW_EVERY_POSITION_BELOW || last - ahead >= Math.max(1, this.#first! / SHOW_STEPS_OF_THE_FIRST)) {
      this.#last = ahead;
      return true;
    }
    return false;
  }

  /** `ahead` is shown whatever it is (a notice came with it). */
  shown(ahead: number): void {
    if (this.#last === undefined || ahead > this.#last) this.#first = ahead;
    this.#last = ahead;
  }
}
