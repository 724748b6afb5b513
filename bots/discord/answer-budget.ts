import type { BaseInteraction } from 'discord.js';
import { withTimeout } from 'pictor/internal';
import { DISCORD_LIMITS } from './discord-facts.js';

/** How long before Discord's deadline an interaction's first answer is sent at the latest: its own trip to Discord. */
export const ANSWER_TRIP_MS = 500;

/**
 * The one deadline of an interaction's first answer: Discord's 3 s (`DISCORD_LIMITS.acknowledgeMs`) less the answer's
 * own trip (`ANSWER_TRIP_MS`), counted from when the interaction reached this process. Not from its id's time: that is
 * Discord's clock, and a host clock a few seconds ahead of it would leave no time to any interaction (Discord's own
 * delivery delay is small, and this process cannot measure it). Every wait before the first answer — the intake's claim, a press's job record, the
 * member lookup of a press in a DM, a Reroll's look at its kept images, a Cancel's look at who runs the job, the
 * runner's intake (its reads and its reservation: `endsAt` is the job's or the form's `answerBy`) — waits
 * only for what is left of it, so however they add up, the first answer (a refusal when one ran out) goes out in time.
 */
export class AnswerBudget {
  /** When the waits must have ended (ms, as `Date.now()`). */
  readonly endsAt: number;

  constructor(arrivedAt: number = Date.now()) {
    this.endsAt = arrivedAt + DISCORD_LIMITS.acknowledgeMs - ANSWER_TRIP_MS;
  }

  /** Ms left to wait before the first answer must go out (0 once none is). */
  timeLeft(now: number = Date.now()): number {
    return Math.max(0, this.endsAt - now);
  }

  /**
   * The outcome of `ask`, or a rejection naming `who` once no time is left to wait for it; with none left, `ask` is not
   * called at all (nothing is asked that could not be waited for).
   */
  within<T>(ask: () => Promise<T>, who: string): Promise<T> {
    const left = this.timeLeft();
    if (left <= 0) return Promise.reject(new Error(`no time was left to ask ${who} before the interaction had to be answered`));
    return withTimeout(ask(), left, `${who} did not answer before the interaction had to be answered`);
  }
}

/** The budget of each interaction, from the first time it was asked for: as it arrived (interaction-action.ts), or at once. */
const budgets = new WeakMap<object, AnswerBudget>();

/**
 * The answer budget of `interaction`: the one it was given as it arrived (`given`, the first time it is asked for),
 * else one counted from now.
 */
export function answerBudgetOf(interaction: BaseInteraction, given?: AnswerBudget): AnswerBudget {
  let budget = budgets.get(interaction);
  if (!budget) budgets.set(interaction, (budget = given ?? new AnswerBudget()));
  return budget;
}
