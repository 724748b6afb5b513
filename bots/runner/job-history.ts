import { z } from 'zod';
import { DEFAULTS, type LoggerLike } from 'pictor';
import { InFlight } from './in-flight.js';
import { historyOf, historyOfScope, keepInHistory, stateKeyOf, type BotState } from '../state/index.js';
import type { AuditForgotten } from './audit-log.js';
import { scopeKeyOf, userKeyOf } from './member-keys.js';
import { endFactsOf, linkSeenBy } from './end-facts.js';
import { JobCostSchema, type JobOptions, type JobSpec, type MessageSeenBy, type Requester } from './types.js';

/** What `/imagine-history` (Discord) and `/imagine history` (Slack) show of a member's last jobs, kept `PICTOR_HISTORY_RETENTION_DAYS`. */
export const HistoryEntrySchema = z.object({
  /** The surface's key of the job (its buttons use it: Reroll from the history). */
  key: z.string().max(100),
  scopeKey: z.string().max(200),
  userId: z.string().max(100),
  channelId: z.string().max(100),
  kind: z.enum(['generate', 'edit']),
  prompt: z.string().max(40_000),
  n: z.number().int(),
  size: z.string().max(20).optional(),
  quality: z.string().max(20).optional(),
  status: z.enum(['completed', 'failed', 'cancelled']),
  /** What it cost (USD), when known. */
  costUsd: z.number().nonnegative().optional(),
  /** What it may cost (USD) at most, when a stop cut it off before the ledger settled its charge. */
  mayCostUsd: z.number().nonnegative().optional(),
  /** When it ended (ms since the epoch). */
  at: z.number(),
  /** A link to the result message, when the surface knows it. */
  link: z.string().max(500).optional(),
  /** Only the member can open its message (`linkSeenBy`), link known or not: the admins' view drops the link and names no conversation. */
  memberLink: z.boolean().optional(),
  /** Shown only to the member: in their own history, never in the server's/workspace's. */
  private: z.boolean().optional(),
});

export type HistoryEntry = z.output<typeof HistoryEntrySchema>;

const cost = JobCostSchema.optional();
/**
 * How a job ended, as the history and the audit channel keep it: only the facts they record, with its cost when known
 * (none when released), or what it may cost at most (`mayCost`: a sweep's "stopped" before the ledger settled it).
 */
export const JobEndSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('completed'), size: z.string().optional(), quality: z.string().optional(), cost }),
  z.object({ type: z.literal('failed'), code: z.string(), cost, mayCost: cost }),
  z.object({ type: z.literal('cancelled'), cost }),
]);
export type JobEnd = z.output<typeof JobEndSchema>;

/** The end to record of a final update: only what `JobEnd` names (zod drops the rest), so a stored record stays small. */
export function jobEndOf(final: JobEnd): JobEnd {
  return JobEndSchema.parse(final);
}

/**
 * How far apart the clocks of two replicas may be: a job accepted up to this long after its member's `forget` (by the
 * clock of the replica that was asked) still records its end without its prompt.
 */
export const FORGET_CLOCK_MARGIN_MS = 60_000;

/** Jobs a member is shown of their own history (an admin twice as many of the server's/workspace's); what is kept is `HISTORY_BOUNDS`. */
const SHOWN = 10;

/** Where the history lives: the bots' state (its history space's TTL is the retention; its `forget` erases everywhere). */
export type JobHistoryState = Pick<BotState, 'store' | 'spaces' | 'forget'>;

export interface JobHistoryOptions {
  state: JobHistoryState;
  logger?: LoggerLike | undefined;
  now?: (() => number) | undefined;
  /** Erases the member's prompts from the audit channels' posts (`AuditLog.forget`) before the rest; answers how many posts changed. */
  forgetAudit?: ((userKey: string) => Promise<AuditForgotten>) | undefined;
}

/** The members' job history: recorded by the surfaces when a job ends, shown privately, erased on request. */
export class JobHistory {
  readonly #state: JobHistoryState;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  readonly #forgetAudit: JobHistoryOptions['forgetAudit'];
  /** Entries being kept: the runner's shutdown waits for them, so none is written after the bot stops. */
  readonly #pending = new InFlight();

  constructor(options: JobHistoryOptions) {
    this.#state = options.state;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#forgetAudit = options.forgetAudit;
  }

  /**
   * Keeps a job that has ended (`link`: its message, maybe still being asked for); `settled()` covers it from this call.
   * Its prompt is left out when its member forgot while it ran (`forgotten`), asked just before the write and again
   * after it (a forget on another replica may land between). A failed write is logged and rejects: the surface must not
   * mark the end recorded (a sweep records it again, merged by its key).
   */
  recordEnd(
    requester: Requester,
    job: { key: string; kind: JobSpec['kind']; prompt: string; options: JobOptions; private?: boolean | undefined; seenBy?: MessageSeenBy | undefined; acceptedAt: number },
    final: JobEnd,
    link?: Promise<string | undefined> | string | undefined,
  ): Promise<void> {
    const kept = Promise.resolve(link)
      .catch(() => undefined)
      .then(async (url) => {
        // Each read of the mark closes a window the others leave open (a forget may land between any two steps on
        // another replica): this one keeps an erased prompt from ever being written, the one after the write catches a
        // forget that erased the history meanwhile. An end with no prompt reads none.
        const erased = job.prompt === '' || (await this.forgotten(requester, job.acceptedAt));
        const entry = {
          key: job.key,
          kind: job.kind,
          prompt: erased ? '' : job.prompt,
          n: job.options.n ?? DEFAULTS.n,
          ...endFactsOf(final, job.options),
          status: final.type,
          ...(url && { link: url }),
          ...(linkSeenBy(job) === 'member' && { memberLink: true }),
          ...(job.private && { private: true }),
        };
        await this.#keep(requester, entry);
        if (entry.prompt !== '' && (await this.forgotten(requester, job.acceptedAt))) await this.#keep(requester, { ...entry, prompt: '' });
      });
    this.#pending.track(kept);
    return kept;
  }

  /** Resolves once every entry being kept is written (or has failed, which is logged). */
  settled(): Promise<void> {
    return this.#pending.settled();
  }

  /** Keeps one ended job; a failure is logged, then thrown. */
  async #keep(requester: Requester, entry: Omit<HistoryEntry, 'scopeKey' | 'userId' | 'channelId' | 'at'>): Promise<void> {
    const full: HistoryEntry = { ...entry, scopeKey: scopeKeyOf(requester), userId: requester.userId, channelId: requester.channelId, at: this.#now() };
    try {
      await keepInHistory(this.#state, userKeyOf(requester), [HistoryEntrySchema.parse(full)], this.#now(), this.#damaged);
    } catch (error) {
      this.#logger?.warn({ err: error, key: entry.key }, 'could not keep a job in the history');
      throw error;
    }
  }

  /** The member's last jobs (at most 10), newest first. */
  async mine(requester: Requester): Promise<HistoryEntry[]> {
    return this.#fresh(await historyOf(this.#state, userKeyOf(requester), this.#damaged)).slice(0, SHOWN);
  }

  /** An admin's view of the server's/workspace's last jobs: no private ones, no member-only links but their own; undefined for others. */
  async ofScope(requester: Requester): Promise<HistoryEntry[] | undefined> {
    if (!requester.isAdmin) return undefined;
    return this.#fresh(await historyOfScope(this.#state, scopeKeyOf(requester), this.#damaged))
      .filter((entry) => entry.private !== true)
      .slice(0, SHOWN * 2)
      .map(({ link, ...entry }) => (entry.memberLink && entry.userId !== requester.userId ? entry : { ...entry, ...(link !== undefined && { link }) }));
  }

  /**
   * Erases the member's prompts everywhere: the mark, the audit posts (a failure logged, the rest still erased), then the
   * bots' state and the ledger. Answers the history entries erased and the audit posts edited and still to edit.
   */
  async forgetEverywhere(requester: Requester): Promise<{ entries: number; auditPosts: number; auditPending: number }> {
    const userKey = userKeyOf(requester);
    // First the mark, which every process reads as a job ends: a job running now, wherever, records its end with no prompt.
    await this.#marks().put(stateKeyOf(userKey), this.#now());
    const audit = await (this.#forgetAudit?.(userKey) ?? Promise.resolve({ edited: 0, pending: 0 })).catch((error: unknown) => {
      this.#logger?.warn({ userKey, code: (error as { code?: unknown }).code }, 'could not erase a member’s prompts from the audit posts');
      return { edited: 0, pending: 0 };
    });
    const entries = await this.#state.forget(userKey);
    this.#logger?.info({ userKey, count: entries, auditPosts: audit.edited, auditPending: audit.pending }, 'a member erased their history');
    return { entries, auditPosts: audit.edited, auditPending: audit.pending };
  }

  /**
   * Whether a job's end is recorded without its prompt, the one rule (`recordEnd`, `AuditLog`): a job accepted
   * (`acceptedAt`, as its record or request was made) before its member's last `forget`, or up to
   * `FORGET_CLOCK_MARGIN_MS` after it, while the `forgotten` space keeps the mark. A mark that cannot be read erases it.
   */
  async forgotten(requester: Requester, acceptedAt: number): Promise<boolean> {
    const userKey = userKeyOf(requester);
    try {
      const at = await this.#marks().get(stateKeyOf(userKey));
      return at !== undefined && acceptedAt <= at + FORGET_CLOCK_MARGIN_MS;
    } catch (error) {
      this.#logger?.warn({ userKey, err: error }, 'could not read whether a member erased their prompts; a job’s end is recorded without its prompt');
      return true;
    }
  }

  #marks() {
    return this.#state.store.space<number>(this.#state.spaces.forgotten);
  }

  /** A kept history list that is no list (a hand edit): skipped, written anew with the next job's end. */
  readonly #damaged = (key: string): void => void this.#logger?.warn({ key }, 'a kept history list is damaged: skipped, and written anew with the next job’s end');

  /** The entries that are well formed and within the retention. */
  #fresh(entries: readonly unknown[]): HistoryEntry[] {
    const since = this.#now() - this.#state.spaces.history.ttlMs;
    return entries.flatMap((e) => HistoryEntrySchema.safeParse(e).data ?? []).filter((e) => e.at >= since);
  }
}
