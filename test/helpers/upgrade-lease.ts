import type { LoggerLike } from '../../src/index.js';

/**
 * A logger for a start, silent but for one event: `gaveUp` resolves once the start logged that it gave the upgrade from
 * 0.1 up as its lease could not be kept (a test deletes the lease key to make it so), which it does as it stops its steps.
 */
export function upgradeGiveUpHeard(): { logger: LoggerLike; gaveUp: Promise<void> } {
  let heard!: () => void;
  const gaveUp = new Promise<void>((resolve) => (heard = resolve));
  const quiet = () => {};
  const logger: LoggerLike = {
    debug: quiet,
    info: quiet,
    warn: (_obj, msg) => void (msg?.startsWith('gave up the upgrade from 0.1') && heard()),
    error: quiet,
  };
  return { logger, gaveUp };
}
