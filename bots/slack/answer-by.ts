import type { Context } from '@slack/bolt';
import { AnswerBudget } from '../runner/answer-budget.js';

/** A trigger (`trigger_id`) lasts 3 s from the member's action in Slack: a form (`views.open`) opens within it, or not at all. */
export const SLACK_TRIGGER_MS = 3_000;

/** The context key of a request's arrival (ms as `Date.now()`). */
const ARRIVED_AT = 'arrivedAt';

/**
 * When a request reached this process (`context.arrivedAt`): what an entry point's deadline is counted from. For the
 * receiver's `customPropertiesExtractor` (HTTP and Socket Mode), which runs as the request is taken in — before Bolt's
 * `authorize` (with OAuth, a read of the installation in the bots' state) and before any middleware (the replay guard,
 * the member's language: up to 1.5 s). Not from Slack's own timestamps: that is Slack's clock, and a host clock ahead
 * of it would leave no time at all.
 */
export function arrivalOf(now: () => number = Date.now): Record<string, unknown> {
  return { [ARRIVED_AT]: now() };
}

/**
 * The answer budget of a form (the runner's `AnswerBudget`): the trigger's 3 s from when the request arrived
 * (`arrivalOf`), less the form's own trip to Slack. Its `endsAt` is when the runner's intake must have decided the form
 * by (`JobIntent.answerBy`), and every read before the form waits only within it (`within`): a form not decided by then
 * is refused privately rather than opened with an expired trigger. A request not stamped (no receiver of ours took it
 * in) counts from now.
 */
export function formBudget(context: Context): AnswerBudget {
  const arrivedAt = typeof context[ARRIVED_AT] === 'number' ? context[ARRIVED_AT] : Date.now();
  return new AnswerBudget(arrivedAt, SLACK_TRIGGER_MS);
}
