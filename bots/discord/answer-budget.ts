import type { BaseInteraction } from 'discord.js';
import { AnswerBudget } from '../runner/answer-budget.js';
import { DISCORD_LIMITS } from './discord-facts.js';

/** The budget of each interaction, from the first time it was asked for: as it arrived (interaction-action.ts), or at once. */
const budgets = new WeakMap<object, AnswerBudget>();

/**
 * The one deadline of `interaction`'s first answer (the runner's `AnswerBudget`): Discord's 3 s
 * (`DISCORD_LIMITS.acknowledgeMs`; over HTTP, the endpoint's `ackDeadlineMs`, the same number its hold of the POST is
 * counted with) less the answer's own trip (`ANSWER_TRIP_MS`), counted from when the interaction reached this process:
 * the budget it was given as it arrived (`given`, the first time it is asked for), else one counted from now. Every wait
 * before the first answer — the intake's claim, a press's job record, the member lookup of a press in a DM, a Reroll's
 * look at its kept images, a Cancel's look at who runs the job, the runner's intake (its reads and its reservation:
 * `endsAt` is the job's or the form's `answerBy`) — waits only for what is left of it, so however they add up, the
 * first answer (a refusal when one ran out) goes out in time.
 */
export function answerBudgetOf(interaction: BaseInteraction, given?: AnswerBudget): AnswerBudget {
  let budget = budgets.get(interaction);
  if (!budget) budgets.set(interaction, (budget = given ?? new AnswerBudget(Date.now(), DISCORD_LIMITS.acknowledgeMs)));
  return budget;
}
