import type { Context } from '@slack/bolt';
import { ANSWER_TRIP_MS, AnswerBudget } from '../runner/answer-budget.js';

/** A trigger (`trigger_id`) lasts 3 s from the member's action in Slack: a form (`views.open`) opens within it, or not at all. */
export const SLACK_TRIGGER_MS = 3_000;

/** The context key of a request's arrival (ms as `Date.now()`). */
const ARRIVED_AT = 'arrivedAt';

/**
 * When a request reached this process (`context.arrivedAt`): what an entry point's deadline is counted from. For the
 * receiver's `customPropertiesExtractor` (HTTP and Socket Mode), which runs as the request is taken in — before Bolt's
 * `authorize` (with OAuth, a read of the installation in the bots' state) and before any middleware (the replay guard,
 * the member's language: together within `ACK_WAITS_MS`). Not from Slack's own timestamps: that is Slack's clock, and a host clock ahead
 * of it would leave no time at all.
 */
export function arrivalOf(now: () => number = Date.now): Record<string, unknown> {
  return { [ARRIVED_AT]: now() };
}

/**
 * How long after a request arrived (`arrivalOf`) every wait of Pictor's before its acknowledgement has ended, all of
 * them together: Slack's 3 s, less the acknowledgement's trip (`ANSWER_TRIP_MS`) and as much again for the listener's
 * own work on a loaded host. HTTP's replay guard (its claim in the bots' state) and the look-up of a new member's
 * language each wait only for what is left of it (`ackBudget`), whatever their own limits (1.5 s each), so however
 * many there are, their sum is bounded by this one number.
 */
export const ACK_WAITS_MS = 2_000;

/** The budget of the waits before a request's acknowledgement: its `endsAt` is `ACK_WAITS_MS` after the request arrived (from now for a request not stamped). */
export function ackBudget(context: Context): AnswerBudget {
  // An AnswerBudget takes its answer's trip off the deadline it is given: given `ACK_WAITS_MS` plus that trip, `endsAt` is `ACK_WAITS_MS` after arrival.
  return new AnswerBudget(arrivedAtOf(context), ACK_WAITS_MS + ANSWER_TRIP_MS);
}

/**
 * The answer budget of a form (the runner's `AnswerBudget`): the trigger's 3 s from when the request arrived
 * (`arrivalOf`), less the form's own trip to Slack. Its `endsAt` is when the runner's intake must have decided the form
 * by (`JobIntent.answerBy`), and every read before the form waits only within it (`within`): a form not decided by then
 * is refused privately rather than opened with an expired trigger. A request not stamped (no receiver of ours took it
 * in) counts from now.
 */
export function formBudget(context: Context): AnswerBudget {
  return new AnswerBudget(arrivedAtOf(context), SLACK_TRIGGER_MS);
}

function arrivedAtOf(context: Context): number {
  return typeof context[ARRIVED_AT] === 'number' ? context[ARRIVED_AT] : Date.now();
}
