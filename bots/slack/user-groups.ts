import { definedOf } from 'pictor/internal';
import type { webApi } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import { KeyedTimers } from '../runner/keyed-timers.js';
import { slackErrorCode } from './slack-error-code.js';

/** A Slack user group as a workspace's admin names it: its id (`S0123…`), handle (`designers`) and name. */
export interface UserGroup {
  id: string;
  handle: string;
  name: string;
}

export interface UserGroupsOptions {
  /** The Web API client of a workspace (its bot token), or undefined when it is not installed. */
  clientFor: (teamId: string) => Promise<webApi.WebClient | undefined>;
  logger: LoggerLike;
  /** How long a workspace's groups are used before Slack is asked again. Default 1 minute. */
  freshMs?: number | undefined;
  /**
   * How long the last membership Slack told is still used when it cannot be asked now (the app lacks
   * `usergroups:read`, Slack is down or rate-limits): after that a member's groups are unknown and the least
   * generous group budget applies to them. Default 1 hour.
   */
  staleMs?: number | undefined;
  /**
   * How long a member's answer waits for Slack before the last membership (or none) is used; the look-up goes on and
   * is kept. Default 1 s (a form's trigger lasts 3 s). One wait a workspace at a time: members asking while a look-up
   * is under way wait only until its first asker stops waiting, and those asking after that (or while a look-up that
   * did not answer in time is retried) do not wait at all.
   */
  waitMs?: number | undefined;
  /** After a failed look-up, how long before Slack is asked again for that workspace. Default 30 s. */
  retryMs?: number | undefined;
  /**
   * How long a look-up Slack does not answer is waited for before it counts as failed (`timeout`): then it is tried
   * again in the background, `retryMs` later, doubling each time, at most `refreshAttempts` times in a row. Default 10 s.
   */
  giveUpMs?: number | undefined;
  /** Background retries in a row of a look-up Slack does not answer; after them, the next member asking starts one. Default 4. */
  refreshAttempts?: number | undefined;
  /** Workspaces kept at once; the least recently asked goes first. Default 500. */
  maxWorkspaces?: number | undefined;
  now?: (() => number) | undefined;
}

/** A workspace's look-up under way: its answer, until when members asking wait for it, and when it counts as failed. */
interface Asking {
  answer: Promise<Known | undefined>;
  waitUntil: number;
  giveUp?: NodeJS.Timeout;
  /** It counted as failed (`timeout`) before Slack's client gave up on it: its own failure, later, is no news. */
  gaveUp: boolean;
}

/** What one workspace's `usergroups.list` told: every group (for handles; the enabled ones first), and the members of the groups asked about. */
interface Known {
  at: number;
  groups: UserGroup[];
  members: Map<string, Set<string>>;
}

/**
 * Each workspace's user groups (`usergroups.list` with `include_users` and `include_disabled`, scope `usergroups:read`): one call per
 * workspace at most every `freshMs`, one at a time, whatever the number of members asking. Only the members of the
 * groups asked about (those with a budget, at most 25) are kept. What the role budgets need of Slack: which of a
 * scope's budgeted groups a member is in (`membership`), and a group by its handle (`byHandle`) for the admin command.
 */
export class UserGroups {
  readonly #o: Required<Omit<UserGroupsOptions, 'now'>> & { now: () => number };
  readonly #known = new Map<string, Known>();
  /** Each workspace's look-up under way, and until when members asking wait for it (never, for a background retry). */
  readonly #asking = new Map<string, Asking>();
  /**
   * Each workspace whose last look-up failed: Slack's error (`timeout`: no answer within `giveUpMs`), and when Slack is
   * asked again — the one answer to "when to retry": before it a member asking starts no look-up (the background
   * retry of a look-up Slack did not answer is due then, else `retryMs` after the failure).
   */
  readonly #failed = new Map<string, { code: string | undefined; retryAt: number }>();
  /** The background retry waiting, of each workspace whose look-up Slack did not answer. */
  readonly #refresh = new KeyedTimers();
  /** How many background retries of each such workspace were scheduled in a row (kept once its retry ran, until a look-up passes). */
  readonly #refreshAttempts = new Map<string, number>();
  readonly #warned = new Set<string>();
  #stopped = false;

  constructor(options: UserGroupsOptions) {
    this.#o = {
      freshMs: 60_000,
      staleMs: 60 * 60_000,
      waitMs: 1_000,
      retryMs: 30_000,
      giveUpMs: 10_000,
      refreshAttempts: 4,
      maxWorkspaces: 500,
      now: Date.now,
      ...definedOf(options),
      clientFor: options.clientFor,
      logger: options.logger,
    };
  }

  /**
   * Which of `groupIds` the member is in: from what Slack told within `freshMs`, else asked now (waiting at most
   * `waitMs`, and not at all while a look-up that did not answer in time is under way or retried), else the last
   * membership told within `staleMs`; undefined when none is known (the caller applies the least generous budget).
   */
  async membership(teamId: string, userId: string, groupIds: readonly string[]): Promise<readonly string[] | undefined> {
    const known = await this.#read(teamId, groupIds);
    return known && groupIds.filter((id) => known.members.get(id)?.has(userId));
  }

  /** A group of the workspace by its handle (`designers`, `@designers`), or undefined; `missing_scope` when the app may not read them. */
  async byHandle(teamId: string, handle: string): Promise<UserGroup | 'missing_scope' | undefined> {
    const known = await this.#read(teamId, [], { wait: true });
    if (!known) return this.#failed.get(teamId)?.code === 'missing_scope' ? 'missing_scope' : undefined;
    const wanted = handle.replace(/^@/, '').toLowerCase();
    return known.groups.find((g) => g.handle.toLowerCase() === wanted);
  }

  async #read(teamId: string, groupIds: readonly string[], options: { wait?: boolean } = {}): Promise<Known | undefined> {
    const now = this.#o.now();
    const known = this.#known.get(teamId);
    const covers = known !== undefined && groupIds.every((id) => known.members.has(id));
    if (known && covers && now - known.at < this.#o.freshMs) return known;
    const usable = known && covers && now - known.at < this.#o.staleMs ? known : undefined;
    // After a failure, Slack is asked again when it is due (a look-up it did not answer, in the background): nobody waits meanwhile.
    if (now < (this.#failed.get(teamId)?.retryAt ?? -Infinity) && !options.wait) return usable;
    // A stopped bot asks Slack nothing more: the last membership (or none) is all there is.
    if (this.#stopped) return usable;
    const asking = this.#asking.get(teamId) ?? this.#start(teamId, new Set([...groupIds, ...(known?.members.keys() ?? [])]), now + this.#o.waitMs);
    // The admin command waits its own `waitMs`; a member, until the look-up's first asker stops waiting.
    const waitMs = options.wait ? this.#o.waitMs : asking.waitUntil - now;
    if (waitMs <= 0) return usable;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
    try {
      const answer = await Promise.race([asking.answer, late]);
      const fresh = answer === 'late' ? undefined : answer;
      return fresh && groupIds.every((id) => fresh.members.has(id)) ? fresh : usable;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Starts a look-up of the workspace's groups; members asking wait for it until `waitUntil`. One Slack does not
   * answer within `giveUpMs` counts as failed (`timeout`) and is retried in the background (`#scheduleRefresh`); its
   * answer, if it comes later still, is kept all the same.
   */
  #start(teamId: string, groupIds: ReadonlySet<string>, waitUntil: number): Asking {
    const asking: Asking = { answer: Promise.resolve(undefined), waitUntil, gaveUp: false };
    asking.answer = this.#ask(teamId, groupIds, asking);
    this.#asking.set(teamId, asking);
    const giveUp = (asking.giveUp = setTimeout(() => {
      if (this.#asking.get(teamId) !== asking) return;
      this.#asking.delete(teamId);
      asking.gaveUp = true;
      this.#noteFailure(teamId, 'timeout', this.#scheduleRefresh(teamId, groupIds));
    }, this.#o.giveUpMs));
    giveUp.unref?.();
    void asking.answer.finally(() => {
      clearTimeout(giveUp);
      if (this.#asking.get(teamId) === asking) this.#asking.delete(teamId);
    });
    return asking;
  }

  /**
   * Stops every timer (the background retries, the give-ups of the look-ups under way) and asks Slack nothing more: for
   * the bot's stop. A look-up under way still ends, and what it tells is kept; members asking after get what is known.
   */
  stop(): void {
    this.#stopped = true;
    this.#refresh.clear();
    this.#refreshAttempts.clear();
    for (const asking of this.#asking.values()) clearTimeout(asking.giveUp);
    this.#asking.clear();
  }

  /**
   * Asks Slack again in the background, `retryMs` after a look-up it did not answer (doubling each time), while fewer
   * than `refreshAttempts` came before. Returns in how many ms, or undefined when none is scheduled.
   */
  #scheduleRefresh(teamId: string, groupIds: ReadonlySet<string>): number | undefined {
    if (this.#stopped) return undefined;
    const attempt = (this.#refreshAttempts.get(teamId) ?? 0) + 1;
    this.#cancelRefresh(teamId);
    if (attempt > this.#o.refreshAttempts) return undefined;
    const inMs = this.#o.retryMs * 2 ** (attempt - 1);
    this.#refresh.set(teamId, inMs, () => {
      if (this.#asking.has(teamId)) return;
      // Nobody waits for a background retry: members use the last membership (or none) meanwhile.
      this.#start(teamId, groupIds, -Infinity);
    });
    this.#refreshAttempts.set(teamId, attempt);
    if (this.#refreshAttempts.size > this.#o.maxWorkspaces) this.#cancelRefresh(this.#refreshAttempts.keys().next().value!);
    return inMs;
  }

  #cancelRefresh(teamId: string): void {
    this.#refresh.drop(teamId);
    this.#refreshAttempts.delete(teamId);
  }

  /**
   * Notes a failed look-up, Slack asked again `retryInMs` later (default `retryMs`) — never earlier than a retry already
   * due (the background retry of a look-up that timed out, whose own failure may come minutes later) — and logs its
   * reason once. The late failure of a look-up that timed out is not logged: its timeout was.
   */
  #noteFailure(teamId: string, code: string | undefined, retryInMs = this.#o.retryMs, options: { late?: boolean } = {}): void {
    const retryAt = Math.max(this.#o.now() + retryInMs, this.#failed.get(teamId)?.retryAt ?? -Infinity);
    this.#failed.delete(teamId);
    this.#failed.set(teamId, { code, retryAt });
    if (this.#failed.size > this.#o.maxWorkspaces) this.#failed.delete(this.#failed.keys().next().value!);
    const warning = `${teamId} ${code}`;
    if (!options.late && !this.#warned.has(warning) && this.#warned.size < 10_000) {
      this.#warned.add(warning);
      this.#o.logger.warn(
        { teamId, code },
        code === 'missing_scope'
          ? 'Slack did not tell a workspace’s user groups: the app lacks the usergroups:read scope (reinstall it from its manifest); members whose groups are not known get the least generous group budget'
          : code === 'timeout'
            ? 'Slack did not answer usergroups.list of a workspace in time; it is asked again in the background, and meanwhile the last membership known is used (for an hour), then members get the least generous group budget'
            : 'Slack did not tell a workspace’s user groups; the last membership known is used for an hour, then members get the least generous group budget',
      );
    }
  }

  async #ask(teamId: string, groupIds: ReadonlySet<string>, asking: Pick<Asking, 'gaveUp'>): Promise<Known | undefined> {
    try {
      const client = await this.#o.clientFor(teamId);
      if (!client) throw Object.assign(new Error('the app is not installed in this workspace'), { code: 'not_installed' });
      // Disabled groups too (Slack never deletes one): an admin names one by its handle to clear the budget it had.
      const answer = await client.usergroups.list({ include_users: true, include_disabled: true });
      const groups: UserGroup[] = [];
      const disabled: UserGroup[] = [];
      const members = new Map<string, Set<string>>(
        // A group Slack no longer lists (deleted or disabled) has no members.
        [...groupIds].map((id) => [id, new Set<string>()]),
      );
      for (const group of answer.usergroups ?? []) {
        if (typeof group.id !== 'string') continue;
        (group.date_delete ? disabled : groups).push({ id: group.id, handle: group.handle ?? '', name: group.name ?? group.handle ?? group.id });
        if (groupIds.has(group.id) && !group.date_delete) members.set(group.id, new Set(group.users ?? []));
      }
      // An enabled group first, where a disabled one has the same handle.
      const known: Known = { at: this.#o.now(), groups: [...groups, ...disabled], members };
      this.#failed.delete(teamId);
      this.#cancelRefresh(teamId);
      this.#known.delete(teamId);
      this.#known.set(teamId, known);
      for (const oldest of this.#known.keys()) {
        if (this.#known.size <= this.#o.maxWorkspaces) break;
        this.#known.delete(oldest);
      }
      return known;
    } catch (error) {
      this.#noteFailure(teamId, slackErrorCode(error), undefined, { late: asking.gaveUp });
      return undefined;
    }
  }
}
