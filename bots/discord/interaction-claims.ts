import type { Interaction } from 'discord.js';
import { type LoggerLike } from 'pictor';
import { RecentKeys } from '../runner/index.js';
import { claimWithin, type Space } from '../state/index.js';
import type { AnswerBudget } from '../runner/answer-budget.js';
import { answerBudgetOf } from './answer-budget.js';
import { interactionAge } from './interaction-age.js';
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
 * state (`claimOnce` in the `discord-interactions` space, waiting only for what is left of its answer budget: see
 * answer-budget.ts), by every replica and across restarts, before anything is answered, reserved or sent. Only the
 * process whose claim took it goes on; one that finds it taken, or cannot ask the state in time, does nothing with it
 * (it may be a paid job another replica runs).
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

  /** Takes interaction `id` once for every replica, within what is left of its `budget`; logs why when it is not this process's to run. */
  async take(id: string, budget: AnswerBudget): Promise<InteractionTaken> {
    let first = this.#recent.first(id);
    if (first) {
      try {
        // Its own wait ends with the budget's: a claim that comes later is given back (claimWithin).
        first = await budget.within((waitMs) => claimWithin(this.taken, id, { waitMs }));
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

/**
 * The gateway's intake: runs each interaction it delivers once this process took it (`claims`), within its answer
 * budget; one another replica took first, or whose claim could not be answered in time, is left alone. One made longer
 * ago than its token lives (delivered late, a replay) is dropped before it is claimed: nothing can be shown to the
 * member any more, so nothing is run, reserved or answered (the HTTP endpoint refuses these before claiming them too).
 * The claims go out at once, and the interactions are routed in the order the gateway delivered them (a double click's
 * two presses), whatever order the claims are answered in.
 */
export function gatewayIntake(claims: InteractionClaims, route: (interaction: Interaction) => Promise<void>): (interaction: Interaction) => Promise<void> {
  /** The claim of the interaction the gateway delivered last: each is routed after the one before it (never rejects). */
  let lastClaim: Promise<unknown> = Promise.resolve();
  return async (interaction) => {
    const age = interactionAge(interaction.createdTimestamp);
    if (age !== 'fresh') {
      claims.logger.warn({ id: interaction.id, type: interaction.type, age, createdAt: new Date(interaction.createdTimestamp).toISOString() }, 'dropped an interaction made longer ago than its token lives (or stamped ahead)');
      return;
    }
    const claimed = claims.take(interaction.id, answerBudgetOf(interaction));
    const inTurn = lastClaim.then(() => claimed);
    lastClaim = inTurn;
    if ((await inTurn) === 'first') await route(interaction);
  };
}
