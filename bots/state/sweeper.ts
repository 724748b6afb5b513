import { type LoggerLike } from 'pictor';
import { withTimeout } from 'pictor/internal';
import type { StateStore } from './StateStore.js';
import { waitWithin } from 'pictor/internal';

/** How long `stop` waits for a sweep under way (less when its `until` comes first). */
const STOP_WAIT_MS = 2_000;

export interface Sweeper {
  /** The first sweep (at start: what a process that is gone left unfinished). */
  readonly first: Promise<number>;
  /**
   * Stops sweeping: a sweep under way ends after the entry it is showing (the claimed entries it has not begun are left
   * to the next sweep, once this process's lease is gone). With `track`, the entry being shown is the caller's to wait
   * for, and only a sweep still looking for entries is waited for here; without, the sweep is. Either a little while
   * at most, and never past `until` (a time as `Date.now()`).
   */
  stop(options?: { until?: number | undefined }): Promise<void>;
}

/**
 * Every replica runs one per space: at start, then (with Redis) every third of the lease, it claims the records whose
 * holder is gone and hands each to `sweep` (one process gets each claim, so a message is edited once).
 */
export function startSweeper<T>(options: {
  /** Whose lease sets the pace (a third of it). */
  store: Pick<StateStore, 'leaseMs'>;
  /** What is swept, in logs. */
  name: string;
  /** Claims what a gone process left (a space's `claimOrphans`, or a store's view of it). */
  claim: () => Promise<readonly T[]>;
  /**
   * Shows one claimed job's end (interrupted, or the result it had made), and releases it. It resolves once shown: the
   * entries are shown one at a time, so what may take long after the showing (recording the job's end, which waits for
   * its audit post) is handed to the surface's `track` (Discord: `ctx.track`), not awaited, and a stop's grace waits for it.
   */
  sweep: (entry: T) => Promise<void>;
  /**
   * Given the showing of each claimed entry as it begins (of the first sweep and of each later one): a surface's stop
   * waits for them within its grace. A sweep still looking for entries (waiting on a storage that went away) shows
   * nothing yet: it is not given, and `stop` waits for it instead.
   */
  track?: ((showing: Promise<void>) => void) | undefined;
  logger: LoggerLike;
  /** Default a third of the store's lease. */
  intervalMs?: number | undefined;
}): Sweeper {
  const { store, name, logger } = options;
  let running: Promise<number> | undefined;
  /** The claim of the sweep under way, until it answered. */
  let claiming: Promise<unknown> | undefined;
  let stopped = false;
  const once = (): Promise<number> => {
    if (running) return running;
    running = (async () => {
      let swept = 0;
      try {
        const claimed = options.claim();
        claiming = claimed;
        const entries = await claimed.finally(() => (claiming = undefined));
        for (const entry of entries) {
          // Stopped: the entries not begun are left claimed, for the next sweep once this process's lease is gone — one
          // shown now could be shown again by the replica that takes them then.
          if (stopped) break;
          try {
            const showing = options.sweep(entry);
            options.track?.(showing);
            await showing;
            swept++;
          } catch (error) {
            logger.warn({ err: error, swept: name }, 'could not show the end of a job left by a stopped process');
          }
        }
      } catch (error) {
        logger.warn({ err: error, swept: name }, 'could not look for jobs left by a stopped process');
      } finally {
        running = undefined;
      }
      return swept;
    })();
    return running;
  };
  const first = once();
  const intervalMs = options.intervalMs ?? store.leaseMs / 3;
  const timer = Number.isFinite(intervalMs) ? setInterval(() => void once(), Math.max(50, intervalMs)) : undefined;
  timer?.unref();
  return {
    first,
    async stop({ until } = {}) {
      stopped = true;
      clearInterval(timer);
      // A sweep waiting for a storage that went away is not waited for long: the next process sweeps again. An entry
      // being shown is, by whoever tracks it: not waited for twice.
      const waitFor = options.track ? claiming : running;
      if (!waitFor) return;
      await withTimeout(waitFor, waitWithin(STOP_WAIT_MS, until), 'sweep still running').catch(() => undefined);
    },
  };
}
