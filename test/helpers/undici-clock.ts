import { createRequire } from 'node:module';

/**
 * undici times a connection's headers and body (the client's idle timeout) on a clock of its own: one shared timer
 * ticking every half second, made once per process with whatever `setTimeout` was there then, so fake timers do not
 * move it. undici exports a way to move that clock for tests (`tick`, in `lib/util/timers.js`, which its own tests use);
 * this is it, for the copy of undici the client loads.
 */
const undiciTimers = createRequire(import.meta.url)('undici/lib/util/timers.js') as { tick(delay?: number): void };

/**
 * Moves undici's clock on by `ms`: a headers or body timeout of at most `ms` that started before the call fires within
 * it, as undici would after that long of silence. (undici counts a timeout from the first tick after it was started or
 * refreshed: the first move starts it, the second moves it on by `ms` and a tick's worth more.)
 */
export function advanceUndiciClock(ms: number): void {
  undiciTimers.tick(0);
  undiciTimers.tick(ms + 1_000);
}
