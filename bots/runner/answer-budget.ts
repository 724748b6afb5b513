import { withinDeadline } from 'pictor/internal';

/** How long before a platform's deadline its first answer is sent at the latest: the answer's own trip to the platform. */
export const ANSWER_TRIP_MS = 500;

/**
 * The one deadline of a request's first answer, on any platform: its deadline (`deadlineMs`: Discord's 3 s to answer an
 * interaction, Slack's 3 s of a trigger) less the answer's own trip (`ANSWER_TRIP_MS`), counted from when the request
 * reached this process (`arrivedAt`, ms as `Date.now()`). Not from the platform's own timestamps: that is its clock, and
 * a host clock a few seconds ahead of it would leave no time at all. Every wait before the first answer — the
 * platform's own reads, and the runner's intake (`JobIntent.answerBy` is `endsAt`) — waits only for what is left of it,
 * so however they add up, the first answer (a refusal when one ran out) goes out in time.
 */
export class AnswerBudget {
  /** When the first answer must have reached the platform (ms, as `Date.now()`). */
  readonly answerBy: number;
  /** When the waits must have ended (ms, as `Date.now()`): `answerBy` less the answer's trip. */
  readonly endsAt: number;

  constructor(arrivedAt: number, deadlineMs: number) {
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
