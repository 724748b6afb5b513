import { watch } from 'node:fs';
import type { LoggerLike } from '../client/PictorClient.js';
import { LEDGER_FILES } from '../spend/ledger-files.js';

/** How long after the last write of a burst the watch tells: one job writes the ledger and its usage record in a row. */
export const LEDGER_WRITES_SETTLE_MS = 250;

/** The files whose change may move a cap: the ledger (reservations, settles) and the usage records. */
const WATCHED: ReadonlySet<string> = new Set([LEDGER_FILES.ledger, LEDGER_FILES.usage]);

/**
 * Calls `changed` when a process writes the file ledger in `dir` (the CLI, n8n, the bots: none of them tells the
 * console), once the writes of a burst are over (`LEDGER_WRITES_SETTLE_MS`). The ledger file is replaced by a rename at
 * each write, so a watch on it would follow the old file: the folder is watched, and its events are kept for the
 * ledger's and the usage records' names (the alert log beside them, which the console writes, is not). Undefined when
 * the folder cannot be watched (said in the log): the clock's check is then the only one.
 */
export function watchLedgerFolder(dir: string, changed: () => void, logger: LoggerLike): { close(): void } | undefined {
  let timer: NodeJS.Timeout | undefined;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(changed, LEDGER_WRITES_SETTLE_MS).unref();
  };
  try {
    const watcher = watch(dir, { persistent: false }, (_event, name) => {
      if (name === null || WATCHED.has(name.toString())) later();
    });
    watcher.on('error', (error) => {
      logger.warn({ err: error, dir }, 'the console no longer watches the ledger folder: the alerts are looked at by the clock only');
      watcher.close();
    });
    return {
      close() {
        clearTimeout(timer);
        watcher.close();
      },
    };
  } catch (error) {
    logger.warn({ err: error, dir }, 'the console cannot watch the ledger folder: the alerts are looked at by the clock only');
    return undefined;
  }
}
