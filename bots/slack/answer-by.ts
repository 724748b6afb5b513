import type { Context, Middleware, AnyMiddlewareArgs } from '@slack/bolt';

/** A trigger (`trigger_id`) lasts 3 s from the member's action in Slack: a form (`views.open`) opens within it, or not at all. */
export const SLACK_TRIGGER_MS = 3_000;
/** How long before the trigger expires the intake must have decided at the latest: the form's own trip to Slack. */
export const TRIGGER_TRIP_MS = 500;

/**
 * Notes when each request reached this process (`context.arrivedAt`), before any other middleware (the replay guard, the
 * member's language: up to 1.5 s) runs: what an entry point's deadline is counted from. Not from Slack's own
 * timestamps: that is Slack's clock, and a host clock ahead of it would leave no time at all.
 */
export function arrivalMiddleware(now: () => number = Date.now): Middleware<AnyMiddlewareArgs> {
  return async ({ context, next }) => {
    context.arrivedAt = now();
    await next();
  };
}

/**
 * When the runner's intake must have decided a form by (`JobIntent.answerBy`, ms as `Date.now()`): the trigger's 3 s
 * from when the request arrived, less the form's trip. A form not decided by then is refused privately rather than
 * opened with an expired trigger. A request not stamped (no middleware ran) counts from now.
 */
export function formAnswerBy(context: Context): number {
  const arrivedAt = typeof context.arrivedAt === 'number' ? context.arrivedAt : Date.now();
  return arrivedAt + SLACK_TRIGGER_MS - TRIGGER_TRIP_MS;
}
