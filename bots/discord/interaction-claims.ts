import { type LoggerLike } from 'pictor';
import { RecentKeys } from '../runner/index.js';
import { claimWithin, type Space } from '../state/index.js';
import { loggableError } from './loggable-error.js';

/**
 * Interaction ids a process remembers having taken, before it asks the state: Discord sends each interaction once, so
 * another arrival of one (a POST replayed, a proxy that retries, a second replica on the gateway) is refused instead of
 * run twice. As long as the state keeps it (the `discord-interactions` space's TTL: a token lives 15 minutes), and at
 * most this many (the oldest forgotten first).
 */
export const TAKEN_INTERACTIONS = { max: 10_000 } as const;

/** What taking an interaction answered: this process runs it; another arrival (here or on a replica) took it first; the state could not tell. */
export type InteractionTaken = 'first' | 'taken-before' | 'unavailable';

/**
 * The one intake of every Discord interaction, over HTTP and on the gateway alike: its id is taken once in the bots'
 * state (`claimOnce` in the `discord-interactions` space, waiting at most `CLAIM_WAIT_MS`), by every replica and
 * across restarts, before anything is answered, reserved or sent. Only the process whose claim took it goes on; one
 * that finds it taken, or cannot ask the state, does nothing with it (it may be a paid job another replica runs).
 */
export class InteractionClaims {
  readonly #recent: RecentKeys;

  constructor(
    readonly taken: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim' | 'definition'>,
    readonly logger: LoggerLike,
  ) {
    // Remembered here as long as the state keeps it: one TTL, the space's (a space without one keeps it until `max`).
    this.#recent = new RecentKeys(TAKEN_INTERACTIONS.max, taken.definition.ttlMs ?? Infinity);
  }

  /** Takes interaction `id` once for every replica; logs why when it is not this process's to run. */
  async take(id: string): Promise<InteractionTaken> {
    let first = this.#recent.first(id);
    if (first) {
      try {
        first = await claimWithin(this.taken, id);
      } catch (error) {
        // Not taken here either: the same interaction sent again (a proxy's retry) is checked again.
        this.#recent.drop(id);
        this.logger.warn({ id, err: loggableError(error) }, 'refused an interaction: could not check that no other replica took it');
        return 'unavailable';
      }
    }
    if (!first) {
      this.logger.warn({ id }, 'refused an interaction received before (a replay, a retry by a proxy, or another replica took it)');
      return 'taken-before';
    }
    return 'first';
  }
}
