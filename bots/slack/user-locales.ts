import { definedOf } from 'pictor/internal';
import Bottleneck from 'bottleneck';
import type { AnyMiddlewareArgs, Context, Middleware, webApi } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import { ackBudget } from './answer-by.js';
import { slackErrorCode } from './slack-error-code.js';

export interface UserLocalesOptions {
  logger: LoggerLike;
  /** People whose locale is kept at once; the least recently asked goes first. Default 10,000. */
  maxEntries?: number | undefined;
  /** How long a locale is kept before Slack is asked again (a person may change their language). Default 1 hour. */
  ttlMs?: number | undefined;
  /** How long an answer waits for a look-up before it goes out in English (the look-up goes on and is kept). Default 1.5 s. */
  waitMs?: number | undefined;
  /** Look-ups per minute, at most (Slack's `users.info` is Tier 4: 100+ a minute per workspace). Default 100. */
  perMinute?: number | undefined;
  now?: (() => number) | undefined;
}

/**
 * Each Slack member's language (`users.info` with `include_locale`: `de-DE`, `ja-JP` …), asked once and kept —
 * bounded in count and time —, paced (at most `perMinute` look-ups a minute and 4 at once, one per person however
 * many of their requests come together), and never holding an answer back past `waitMs`: a member whose locale is not
 * known in time is answered in English until it is (their look-up goes on, and its answer is kept). A look-up that
 * failed is not kept: their next request asks again. A workspace whose app lacks `users:read` is answered in English
 * (kept, and logged once).
 */
export class UserLocales {
  readonly #o: Required<Omit<UserLocalesOptions, 'now'>> & { now: () => number };
  readonly #known = new Map<string, { locale: string | undefined; at: number }>();
  readonly #asking = new Map<string, Promise<string | undefined>>();
  readonly #limiter: Bottleneck;
  #warned = false;

  constructor(options: UserLocalesOptions) {
    this.#o = { maxEntries: 10_000, ttlMs: 60 * 60_000, waitMs: 1_500, perMinute: 100, now: Date.now, ...definedOf(options), logger: options.logger };
    this.#limiter = new Bottleneck({
      maxConcurrent: 4,
      reservoir: this.#o.perMinute,
      reservoirRefreshAmount: this.#o.perMinute,
      reservoirRefreshInterval: 60_000,
    });
  }

  /** The member's locale as Slack tells it, or undefined (not known within `waitMs` — default the option's —, not allowed, not a person). */
  async of(client: webApi.WebClient, teamId: string | undefined, userId: string, waitMs: number = this.#o.waitMs): Promise<string | undefined> {
    const key = `${teamId ?? ''}:${userId}`;
    const now = this.#o.now();
    const known = this.#known.get(key);
    if (known && now - known.at < this.#o.ttlMs) {
      this.#known.delete(key);
      this.#known.set(key, known);
      return known.locale;
    }
    let asking = this.#asking.get(key);
    if (!asking) {
      asking = this.#ask(client, userId).then((answer) => {
        // Slack's answer (a locale, none, or that the app may not ask) is kept; a failure is not: the next request asks again.
        if (answer.kept) this.#keep(key, answer.locale);
        return answer.locale;
      });
      this.#asking.set(key, asking);
      void asking.finally(() => this.#asking.delete(key));
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.min(waitMs, this.#o.waitMs))));
    try {
      return await Promise.race([asking, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A Bolt middleware: `context.locale` is the member's locale for every request that has a member (Bolt's
   * `context.userId`). It runs before the request's acknowledgement, so it waits for a look-up only for what is left of
   * the acknowledgement's budget (`ackBudget`: the replay guard's claim may have taken some), at most `waitMs`.
   */
  middleware(clientOf: (context: Context) => webApi.WebClient | undefined): Middleware<AnyMiddlewareArgs> {
    return async ({ context, next }) => {
      const client = context.userId && context.botUserId !== context.userId ? clientOf(context) : undefined;
      if (client && context.userId) context.locale = await this.of(client, context.teamId, context.userId, ackBudget(context).timeLeft());
      await next();
    };
  }

  /** The member's locale, and whether it is Slack's answer to keep (a failure, but for `missing_scope`, is not). */
  async #ask(client: webApi.WebClient, userId: string): Promise<{ locale: string | undefined; kept: boolean }> {
    try {
      const answer = await this.#limiter.schedule(() => client.users.info({ user: userId, include_locale: true }));
      return { locale: typeof answer.user?.locale === 'string' ? answer.user.locale : undefined, kept: true };
    } catch (error) {
      const code = slackErrorCode(error);
      if (!this.#warned) {
        this.#warned = true;
        this.#o.logger.warn({ code }, code === 'missing_scope' ? 'Slack did not tell a member’s language: the app lacks the users:read scope (reinstall it from its manifest); answering in English' : 'Slack did not tell a member’s language; answering in English');
      }
      return { locale: undefined, kept: code === 'missing_scope' };
    }
  }

  #keep(key: string, locale: string | undefined): void {
    this.#known.delete(key);
    this.#known.set(key, { locale, at: this.#o.now() });
    for (const oldest of this.#known.keys()) {
      if (this.#known.size <= this.#o.maxEntries) break;
      this.#known.delete(oldest);
    }
  }

  /** Stops pacing (nothing is asked after this). */
  async stop(): Promise<void> {
    await this.#limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
  }
}

/** The member's locale the middleware found for this request (undefined: English). */
export function localeIn(context: Context): string | undefined {
  return typeof context.locale === 'string' ? context.locale : undefined;
}

