import type { LoggerLike } from 'pictor';
import { DISCORD_ERRORS, discordErrorCode } from './discord-facts.js';

/**
 * `ok`: we answered. `already`: Discord says the interaction was answered
 * before (40060, e.g. an earlier try of ours whose answer got lost): the reply
 * exists, carry on. `expired`: too late or gone (10062): nothing can be shown,
 * so nothing is started.
 */
export type Acknowledgement = 'ok' | 'already' | 'expired';

/** Runs an interaction's first answer (defer, reply, modal, update) and turns 10062/40060 into outcomes instead of errors. */
export async function acknowledge(what: string, answer: () => Promise<unknown>, logger: LoggerLike): Promise<Acknowledgement> {
  try {
    await answer();
    return 'ok';
  } catch (error) {
    const code = discordErrorCode(error);
    if (code === DISCORD_ERRORS.unknownInteraction) {
      logger.warn({ what, code }, 'the interaction expired before it could be answered (over 3 s, or unknown); nothing was started');
      return 'expired';
    }
    if (code === DISCORD_ERRORS.alreadyAcknowledged) {
      logger.info({ what, code }, 'the interaction was already acknowledged; carrying on with its reply');
      return 'already';
    }
    throw error;
  }
}
