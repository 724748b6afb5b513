import { type LoggerLike } from 'pictor';
import { waitWithin, withTimeout } from 'pictor/internal';
import type { StateStore } from './StateStore.js';

/** How long `stop` waits for a sweep under way (less when its `until` comes first). */
const STOP_WAIT_MS = 2_000;

export interface Sweeper {
  /** The first sweep (at start: what a process that is gone left unfinished). */
  readonly first: Promise<number>;
  /**
   * Stops sweeping after the entry being shown (the rest are left to the next sweep). With `track` only a sweep still
   * looking for entries is waited for here; without, the sweep is: a little while at most, never past `until`.
   */
  stop(options?: { until?: number | undefined }): Promise<void>;
}

/** Every replica runs one per space: at start, then (with Redis) every third of the lease, it sweeps what gone holders left. */
export function startSweeper<T>(options: {
  /** Whose lease sets the pace (a third of it). */
  store: Pick<StateStore, 'leaseMs'>;
  /** What is swept, in logs. */
  name: string;
  /** Claims what a gone process left (a space's `claimOrphans`, or a store's view of it). */
  claim: () => Promise<readonly T[]>;
  /** Shows one claimed job's end and releases it, resolving once shown (what takes longer goes to the surface's `track`). */
  sweep: (entry: T) => Promise<void>;
  /** Given each entry's showing as it begins, for a surface's stop to wait for within its grace. */
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
          // Stopped: the entries not begun are left for the next sweep (one shown now could be shown twice).
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
      // With `track` the entry being shown is the caller's to wait for: only a sweep still claiming entries is waited for here.
      const waitFor = options.track ? claiming : running;
      if (!waitFor) return;
      await withTimeout(waitFor, waitWithin(STOP_WAIT_MS, until), 'sweep still running').catch(() => undefined);
    },
  };
}
