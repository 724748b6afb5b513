import type { BaseInteraction } from 'discord.js';
import { withinDeadline } from 'pictor/internal';
import { DISCORD_LIMITS } from './discord-facts.js';

/** How long before Discord's deadline an interaction's first answer is sent at the latest: its own trip to Discord. */
export const ANSWER_TRIP_MS = 500;

/**
 * The one deadline of an interaction's first answer: Discord's 3 s (`DISCORD_LIMITS.acknowledgeMs`; over HTTP, the
 * endpoint's `ackDeadlineMs`, the same number its hold of the POST is counted with) less the answer's own trip
 * (`ANSWER_TRIP_MS`), counted from when the interaction reached this process. Not from its id's time: that is
 * Discord's clock, and a host clock a few seconds ahead of it would leave no time to any interaction (Discord's own
 * delivery delay is small, and this process cannot measure it). Every wait before the first answer — the intake's claim, a press's job record, the
 * member lookup of a press in a DM, a Reroll's look at its kept images, a Cancel's look at who runs the job, the
 * runner's intake (its reads and its reservation: `endsAt` is the job's or the form's `answerBy`) — waits
 * only for what is left of it, so however they add up, the first answer (a refusal when one ran out) goes out in time.
 */
export class AnswerBudget {
  /** When the first answer must have reached Discord (ms, as `Date.now()`). */
  readonly answerBy: number;
  /** When the waits must have ended (ms, as `Date.now()`): `answerBy` less the answer's trip. */
  readonly endsAt: number;

  constructor(arrivedAt: number = Date.now(), deadlineMs: number = DISCORD_LIMITS.acknowledgeMs) {
    this.answerBy = arrivedAt + deadlineMs;
    this.endsAt = this.answerBy - ANSWER_TRIP_MS;
  }

  /** Ms left to wait before the first answer must go out (0 once none is). */
  timeLeft(now: number = Date.now()): number {
    return Math.max(0, this.endsAt - now);
  }

  /**
   * The outcome of `ask` (told the ms left), or a rejection (naming `who` when given) once no time is left to wait for
   * it; with none left, `ask` is not called at all (nothing is asked that could not be waited for): `withinDeadline`.
   */
  within<T>(ask: (leftMs: number) => Promise<T>, who?: string): Promise<T> {
    return withinDeadline(this.endsAt, ask, who);
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
