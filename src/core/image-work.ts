import { SlotSemaphore } from './SlotSemaphore.js';

/**
 * Pieces of image work (one sharp call: `metadata()`, `toBuffer()`) running at
 * once in this process. Each holds one of the threads of Node's thread pool
 * (libuv's, 4 unless `UV_THREADPOOL_SIZE` says otherwise) while libvips works
 * on its own threads; file system calls, DNS lookups, zlib and crypto wait
 * for those same pool threads, behind every piece of image work queued before
 * them. Two at a time leave the other half of the default pool to them: the
 * bots' state in a data folder still answers within its wait (a Slack
 * request's signature, a Discord interaction's claim) however many previews
 * and fits are queued.
 */
export const IMAGE_WORK_AT_ONCE = 2;

const slots = new SlotSemaphore(IMAGE_WORK_AT_ONCE);

/**
 * Runs `work` (sharp calls one after another, never one inside another: it
 * would wait for a slot its caller holds) once a slot is free; the others wait
 * their turn, first come first served. What waits is bounded by what the
 * callers hold: the bots' jobs in flight (the runner's queue) and the embedded
 * emulator's requests in flight (its
 * `maxRequestsInFlight`, src/emulator/options.ts, each an edit's inputs and the images
 * asked for). When `signal` aborts while the work waits, it leaves the line
 * (rejecting with `signal.reason`) and never runs: a request whose caller has
 * gone keeps no place in it.
 */
export async function withImageWork<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const release = await slots.take(signal);
  try {
    return await work();
  } finally {
    release();
  }
}

/** Pieces of image work running now, and waiting for their turn. */
export function imageWorkNow(): { running: number; waiting: number } {
  return { running: slots.inUse, waiting: slots.waiting };
}
