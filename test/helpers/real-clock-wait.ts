import type { EventEmitter } from 'node:events';

/**
 * The real clock's timers, taken when this module loads — before a test can hold the clock: a fake clock
 * (`vi.useFakeTimers`) replaces the globals (and `node:timers`' own), never these, so a give-up timer set with them
 * fires on time while a test holds its own clock — and while it fakes `Date`, whose frozen `now` would keep a
 * deadline counted on it from ever passing.
 */
export const realTimers = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
} as const;

/** How a fake says its state changed (a request answered, an interaction delivered): it emits `change`. */
export type Changes = Pick<EventEmitter, 'on' | 'off'>;

export interface RealClockWaitOptions {
  /** Gives up after this long on the real clock. */
  timeoutMs: number;
  /** The fake's changes: `probe` is asked again on each at once. */
  changes?: Changes | undefined;
  /**
   * `probe` is asked again this often too (real clock), for what no change of the fake's says: the bot's log, the
   * image service's requests.
   */
  pollMs?: number | undefined;
}

/**
 * Resolves with `probe`'s first truthy answer, asked now, on each change of the fake's, and every `pollMs` of the
 * real clock; rejects with "timed out after … waiting for `what`" once `timeoutMs` of the real clock have passed — on
 * time even while a test holds a fake clock (`realTimers`) — or with what `probe` threw.
 */
export function waitOnRealClock<T>(probe: () => T | undefined | null | false, what: string, options: RealClockWaitOptions): Promise<T> {
  const { timeoutMs, changes, pollMs = 10 } = options;
  let first: T | undefined | null | false;
  try {
    first = probe();
  } catch (error) {
    return Promise.reject(error as Error);
  }
  if (first) return Promise.resolve(first);
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      realTimers.clearInterval(poll);
      realTimers.clearTimeout(deadline);
      changes?.off('change', check);
    };
    const check = () => {
      let value: T | undefined | null | false;
      try {
        value = probe();
      } catch (error) {
        done();
        reject(error as Error);
        return;
      }
      if (!value) return;
      done();
      resolve(value);
    };
    const poll = realTimers.setInterval(check, pollMs);
    const deadline = realTimers.setTimeout(() => {
      done();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    changes?.on('change', check);
  });
}
