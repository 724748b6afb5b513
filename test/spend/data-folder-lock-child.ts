/**
 * A process that takes a data folder's lock each time it is told to (`{ take: dir }` over IPC), gives it back at once,
 * and answers how the take went: `held`, `refused` (the ValidationError naming PICTOR_DATA_DIR) or `error` (anything else).
 */
import { ValidationError } from '../../src/core/errors.js';
import { holdDataFolder } from '../../src/spend/data-folder-lock.js';

process.on('message', (message: { take: string }) => {
  void (async () => {
    try {
      const held = await holdDataFolder(message.take);
      await held.release();
      process.send!({ outcome: 'held' });
    } catch (error) {
      process.send!(error instanceof ValidationError ? { outcome: 'refused', message: error.message } : { outcome: 'error', message: String(error) });
    }
  })();
});
process.send!('ready');
