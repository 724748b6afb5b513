import { watch } from 'node:fs';
import type { LoggerLike } from '../client/PictorClient.js';
import { LEDGER_FILES } from '../spend/ledger-files.js';

/**
 * How long after the first write of a burst the watch tells: one settle writes the ledger more than once in a row. It is
 * counted from the first write, not the last, so writes that keep coming (a busy account) still tell at this pace.
 */
export const LEDGER_WRITES_SETTLE_MS = 250;

/**
 * Calls `changed` when a process writes the file ledger in `dir` (the CLI, n8n, the bots: none of them tells the others),
 * `LEDGER_WRITES_SETTLE_MS` after the first write of a burst (the alert watcher bounds the checks these call for). The
 * ledger file is replaced by a rename at each write, so a watch on it would follow the old file: the folder is watched,
 * and its events are kept for the ledger file's name, which every settle and reservation rewrites (the other files of
 * the folder, such as the usage records or the alert log the console writes, are not followed). Undefined when the
 * folder cannot be watched (said in the log): the clock's check is then the only one. The watch holds the process
 * until `close()`. `options.watch` stands in for `fs.watch` (tests).
 */
export function watchLedgerFolder(dir: string, changed: () => void, logger: LoggerLike, options: { watch?: typeof watch } = {}): { close(): void } | undefined {
  const watchFolder = options.watch ?? watch;
  let timer: NodeJS.Timeout | undefined;
  const later = () => {
    // A timer set already tells for this write too: restarting it would starve the tell while writes keep coming.
    timer ??= setTimeout(() => {
      timer = undefined;
      changed();
    }, LEDGER_WRITES_SETTLE_MS).unref();
  };
  try {
    const watcher = watchFolder(dir, { persistent: true }, (_event, name) => {
      if (name === null || name.toString() === LEDGER_FILES.ledger) later();
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
