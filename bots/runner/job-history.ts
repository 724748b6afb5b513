import { z } from 'zod';
import { DEFAULTS, type LoggerLike } from 'pictor';
import { InFlight } from '../in-flight.js';
import { historyOf, historyOfScope, keepInHistory, stateKeyOf, type BotState } from '../state/index.js';
import type { AuditForgotten } from './audit-log.js';
import { scopeKeyOf, userKeyOf } from './member-keys.js';
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
  /**
   * What it may cost (USD) at most, when its charge was not settled as its end was recorded (a job a stop cut off whose
   * reservation the ledger still held: most likely charged that much once it counts its process gone).
   */
  mayCostUsd: z.number().nonnegative().optional(),
  /** When it ended (ms since the epoch). */
  at: z.number(),
  /** A link to the result message, when the surface knows it. */
  link: z.string().max(500).optional(),
  /**
   * Its message is one only the member can open (`linkSeenBy`: a private job's, or one shown in a direct message with
   * the app), recorded as it ended whether or not its link is known: the admins' view drops its link (but an admin's
   * own) and the surfaces name no conversation for it there.
   */
  memberLink: z.boolean().optional(),
  /** Shown only to the member: in their own history, never in the server's/workspace's. */
  private: z.boolean().optional(),
});

export type HistoryEntry = z.output<typeof HistoryEntrySchema>;

const cost = JobCostSchema.optional();
/**
 * How a job ended, as the history and the audit channel keep it: only the facts they record — completed (its size,
 * quality), failed (its code) or cancelled, each with its cost when known (what the ledger charged; none when released,
 * nor in a record of an older version), or what it may cost at most (`mayCost`) when the ledger had not settled it yet
 * (a sweep's "stopped": `stoppedEndOf`). A final update is one; a sweep passes the facts it kept, not an update made up.
 */
export const JobEndSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('completed'), size: z.string().optional(), quality: z.string().optional(), cost }),
  z.object({ type: z.literal('failed'), code: z.string(), cost, mayCost: cost }),
  z.object({ type: z.literal('cancelled'), cost }),
]);
export type JobEnd = z.output<typeof JobEndSchema>;

/**
 * The end to record of a job's final update: only the facts `JobEnd` names — never its images, usage or anything else
 * the update carries, so what a store keeps of it (a request or record held until its end is recorded) stays small.
 */
export function jobEndOf(final: JobEnd): JobEnd {
  // The schema keeps exactly those (zod drops the keys it does not name, in `cost` too).
  return JobEndSchema.parse(final);
}

/**
 * What the history and the audit channel say of an ended job's size, quality and cost: a completed end's own size and
 * quality, else those the job asked for (a failed or cancelled job, a record swept from an older version); its cost
 * whenever it is known, however it ended (a failed or cancelled job the ledger charged), else what it may cost at most
 * (`mayCostUsd`: a swept job whose charge was pending).
 */
export function endFactsOf(final: JobEnd, options: Pick<JobOptions, 'size' | 'quality'>): { size: string | undefined; quality: string | undefined; costUsd?: number; mayCostUsd?: number } {
  const completed = final.type === 'completed' ? final : undefined;
  const mayCost = final.type === 'failed' && !final.cost ? final.mayCost : undefined;
  return {
    size: completed?.size || options.size,
    quality: completed?.quality || options.quality,
    ...(final.cost && { costUsd: final.cost.totalUsd }),
    ...(mayCost && { mayCostUsd: mayCost.totalUsd }),
  };
}

/**
 * Who can open a job's message through its link — the one rule for where a link is kept, asked by the history
 * (`recordEnd`) and the audit channel (`AuditLog.jobEnded`) alike: a private job's message is its member's alone,
 * whatever its surface says (Slack posts it in a direct message with the app; Discord's ephemeral reply has no link at
 * all, and `jobLinkOf` gives none); any other as its surface says (`seenBy`, default `everyone`). A `member` link is
 * kept in the member's own history only (`memberLink`: the admins' view drops it), never in the audit channel.
 */
export function linkSeenBy(job: { private?: boolean | undefined; seenBy?: MessageSeenBy | undefined }): MessageSeenBy {
  return job.private === true ? 'member' : (job.seenBy ?? 'everyone');
}

/**
 * How far apart the clocks of two replicas may be: a job accepted up to this long after its member's `forget` (by the
 * clock of the replica that was asked) still records its end without its prompt.
 */
export const FORGET_CLOCK_MARGIN_MS = 60_000;

/** Jobs a member is shown of their own history (an admin twice as many of the server's/workspace's); what is kept is `HISTORY_BOUNDS`. */
const SHOWN = 10;

/**
 * Where the history lives: the bots' state, whose history space's TTL (`PICTOR_HISTORY_RETENTION_DAYS`) is how long a job
 * is kept, and whose `forget` erases a member's prompts everywhere (their history among them).
 */
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
   * Keeps a job that has ended (`link`: its message, which the surface may still be asking for); `settled()` covers it
   * from this call. Its prompt is left out when its member erased their prompts while it ran (`forgotten`, given
   * `acceptedAt`), asked once the link is here, just before the write, and again once written with its prompt: a
   * `forget` on another replica may have marked the member after the first read and erased their history before this
   * write, which is then written again without its prompt. A failed write is logged and rejects: the job's end is not
   * recorded, and its surface must not mark it so (a sweep records it again, which merges by its key).
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
        // The member's mark is read twice here, and twice more by the audit channel (`AuditLog`'s `forgotten`, just before
        // its post and once kept): four reads of one key an end while nobody forgot, two without an audit channel — and a
        // Discord job reads it once more as it starts, once its record is written (a forget may not have found that
        // record: `start-job`), so five for its whole life, three without. Each closes a window the others
        // leave open, as a forget (mark, audit posts, then history) may land between any two steps on another replica:
        // this one keeps a prompt its member already erased from ever being written (a crash before a second write would
        // leave it); the one after the write catches a forget that marked after this read and erased the history before
        // the write; the audit's are read later (its batch, its channel's pace) for its own write. None stands for
        // another, so none goes; an end with no prompt (a sweep's of a job running at the forget) reads none.
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
      await keepInHistory(this.#state, userKeyOf(requester), [HistoryEntrySchema.parse(full)], this.#now());
    } catch (error) {
      this.#logger?.warn({ err: error, key: entry.key }, 'could not keep a job in the history');
      throw error;
    }
  }

  /** The member's last jobs (at most 10), newest first. */
  async mine(requester: Requester): Promise<HistoryEntry[]> {
    return this.#fresh(await historyOf(this.#state, userKeyOf(requester))).slice(0, SHOWN);
  }

  /**
   * An admin's view: the server's/workspace's last jobs, without the private ones (only their members see them), and
   * without a link to a message only its member can open (`memberLink`, which stays on the entry), but for the admin's
   * own jobs; undefined for anyone else.
   */
  async ofScope(requester: Requester): Promise<HistoryEntry[] | undefined> {
    if (!requester.isAdmin) return undefined;
    return this.#fresh(await historyOfScope(this.#state, scopeKeyOf(requester)))
      .filter((entry) => entry.private !== true)
      .slice(0, SHOWN * 2)
      .map(({ link, ...entry }) => (entry.memberLink && entry.userId !== requester.userId ? entry : { ...entry, ...(link !== undefined && { link }) }));
  }

  /**
   * Erases the member's prompts everywhere: the audit channels' posts first (written again with the erased marker;
   * a failure there is logged and the rest still erased), then their history and everything the bots' state and the
   * ledger keep. Answers how many history entries there were, how many audit posts were edited, and how many could
   * not be edited yet (their prompts erased from the bots' state all the same; edited again later): `describeForgotten` words it.
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
   * Whether a job's end is recorded without its prompt, which its member erased while it ran: the one rule, read as
   * its history entry is written and again once it was written with its prompt (`recordEnd`),
   * and by the audit channel before each post and once it was posted (`AuditLog`). So it is for a job accepted
   * (`acceptedAt`: by the runner's clock, or for an end a sweep records, when its record or request was made, as the
   * job started: Slack's request just before, Discord's record with the runner's own time, `JobHandle.submittedAt`) before the member's last `forget` or up to `FORGET_CLOCK_MARGIN_MS` after it, on any replica, for as
   * long as the `forgotten` space keeps the mark; a later job keeps its prompt. A swept end of a job that was running
   * at the forget carries no prompt whatever the mark says: `forget` erased it from the stored record or request. A
   * mark that cannot be read erases it (logged).
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

  /** The entries that are well formed and within the retention. */
  #fresh(entries: readonly unknown[]): HistoryEntry[] {
    const since = this.#now() - this.#state.spaces.history.ttlMs;
    return entries.flatMap((e) => HistoryEntrySchema.safeParse(e).data ?? []).filter((e) => e.at >= since);
  }
}
