import { type LoggerLike } from 'pictor';
import { scopeKeyOf, userKeyOf } from './member-keys.js';
import {
  ACCOUNT_KEY,
  budgetsOf,
  EPSILON_USD,
  evaluate,
  isDmScopeKey,
  isOverridableCap,
  leftOf,
  MEMBER_CAPS,
  memberLimits,
  resetsAt,
  scopeLimits,
  SPEND_CAP_VARIABLES,
  usageByKey,
  utcMonth,
  type BudgetCode,
  type CapOverrides,
  type CapPeriod,
  type HeldRoles,
  type LedgerSnapshot,
  type MemberCap,
  type MemberLimits,
  type OverridableCap,
  type SpendRefusal,
  definedOf,
} from 'pictor/internal';
import { SCOPE_WORDS } from './describe-refusal.js';
import { say, usd as usdOf } from './words.js';
import { ListTooLongError, settingsInState, type ScopeSettings, type ScopeSettingsStore, type StoredScopeSettings } from './scope-settings.js';
import { TtlCache } from './ttl-cache.js';
import { type DmCaps, type Platform, type QuotaStore, type Requester, type SpendLimits } from './types.js';

/** How long the caps chat admins set for a scope are kept in memory before the ledger is read again. */
export const DEFAULT_CAP_CACHE_MS = 5_000;
/** Users listed by spend in an admin's usage summary. */
export const TOP_USERS = 5;

/** The names chat admins give the caps they may change (`user-daily` …; a Slack admin may say `workspace-…`). */
export const CAP_NAMES = {
  'user-daily': 'userDailyUsd',
  'user-monthly': 'userMonthlyUsd',
  'server-daily': 'scopeDailyUsd',
  'server-monthly': 'scopeMonthlyUsd',
} as const satisfies Record<string, OverridableCap>;

export type CapName = keyof typeof CAP_NAMES;

const CAP_ALIASES: Readonly<Record<string, OverridableCap>> = {
  ...CAP_NAMES,
  'workspace-daily': 'scopeDailyUsd',
  'workspace-monthly': 'scopeMonthlyUsd',
  'scope-daily': 'scopeDailyUsd',
  'scope-monthly': 'scopeMonthlyUsd',
};

/** The cap a chat admin named (`user-daily`, `server-monthly`, `workspace-daily` …), or undefined. */
export function capOfName(name: string): OverridableCap | undefined {
  return CAP_ALIASES[name.trim().toLowerCase()];
}

/** Told when an amount cannot be read. */
export function amountHint(locale?: string): string {
  return say(locale, 'budget.amount_hint');
}

/** Words that put a cap back to the operator's setting. */
const CLEAR_WORDS = new Set(['clear', 'reset', 'default', 'none', 'unset']);

/**
 * A chat admin's amount: `2.50`, `$2.50`, `0`; `clear` for the operator's
 * setting. `{ ok: false }` for anything else — a missing amount too: a cap is
 * never lifted by a command sent before it was finished.
 */
export function parseCapAmount(text: string | undefined | null): { ok: true; usd: number | undefined } | { ok: false } {
  const value = (text ?? '').trim().toLowerCase();
  if (CLEAR_WORDS.has(value)) return { ok: true, usd: undefined };
  const match = /^\$?(\d+(?:\.\d*)?|\.\d+)$/.exec(value);
  if (!match) return { ok: false };
  const usd = Number(match[1]);
  return Number.isFinite(usd) && usd >= 0 && usd <= 1_000_000 ? { ok: true, usd } : { ok: false };
}

/** One cap that applies to the person asking, and where they stand with it. */
export interface CapStatus {
  code: BudgetCode;
  /** Whose spending it counts: the person's, their server's/workspace's, or the whole account's. */
  whose: 'user' | 'scope' | 'account';
  period: 'day' | 'month';
  limitUsd: number;
  /** Spent plus reserved (jobs running now) in the period, as the cap counts it. */
  spentUsd: number;
  leftUsd: number;
  resetsAt: number;
  /**
   * `chat`: a chat admin of this server/workspace set it; `operator`: the environment (PICTOR_…_USD); `role`: the
   * budget of one of the member's roles (`role`); `unknown_roles`: the member's roles could not be read, so the least
   * generous budget that could apply (`role` names it); `unreadable_budgets`: the scope's role budgets could not be
   * read (a damaged record), so none (0) until its admins set them again.
   */
  setBy: 'operator' | 'chat' | 'role' | 'unknown_roles' | 'unreadable_budgets';
  /** The role whose budget this is (its name as it was set), for `role` and `unknown_roles`. */
  role?: string | undefined;
}

/** A role's budget as an admin's usage view lists it. */
export interface RoleBudgetView {
  roleId: string;
  name: string;
  dailyUsd: number | undefined;
  monthlyUsd: number | undefined;
}

/** A role (Slack: a user group) as an admin names it: its id, and its name for the usage view. */
export interface NamedRole {
  id: string;
  name: string;
}

/**
 * Which of `roleIds` (roles of the requester's scope that have a budget) the member holds, as their platform tells:
 * undefined when it cannot tell now (Slack: the user groups cannot be read). For a platform whose requester does not
 * carry its roles (Slack); Discord's come with each interaction (`Requester.roleIds`).
 */
export type MemberRolesReader = (requester: Requester, roleIds: readonly string[]) => Promise<readonly string[] | undefined>;

/** What `/imagine-usage` (Discord) and `/imagine usage` (Slack) show: structured, rendered by each surface. */
export interface UsageSummary {
  platform: Platform;
  userId: string;
  scopeId: string;
  now: number;
  /** The person's spend (spent plus reserved) in the UTC day and month of `now`. */
  user: { todayUsd: number; monthUsd: number };
  /** Only the caps that are set, in the order they are checked. */
  caps: CapStatus[];
  /** Admins only: the server's/workspace's totals and its biggest spenders this month (settled jobs). */
  scope?: {
    todayUsd: number;
    monthUsd: number;
    topUsers: { userId: string; usd: number; jobs: number }[];
    /** The budgets of its roles (Slack: user groups), as set. */
    roleBudgets: RoleBudgetView[];
    /**
     * True when its role budgets are stored and cannot be read (a damaged record): every member's own budget is 0
     * until an admin sets the budgets again (`roleBudgets` is then empty).
     */
    roleBudgetsUnreadable?: boolean | undefined;
  } | undefined;
}

/** Why a cap change was refused. Stable: surfaces and tests switch on it. */
export type CapChangeRefusal = 'not_admin' | 'above_operator_cap' | 'invalid_amount' | 'not_a_member_cap' | 'too_many_roles';

export type CapChange =
  | {
      ok: true;
      cap: OverridableCap;
      /** What a chat admin had set before (undefined: the operator's setting applied). */
      previousUsd: number | undefined;
      /** What was set (undefined: cleared). */
      usd: number | undefined;
      /** `setRoleBudget`: the role budgets could not be read (a damaged record), so this change started a new list. */
      replacedUnreadable?: boolean | undefined;
      /** The operator's cap, when set. */
      operatorUsd: number | undefined;
      /** One sentence for the admin. */
      message: string;
    }
  | { ok: false; code: CapChangeRefusal; message: string };

const VARIABLE_OF: Record<OverridableCap, string> = Object.fromEntries(
  Object.entries(SPEND_CAP_VARIABLES).map(([variable, field]) => [field, variable]),
) as Record<OverridableCap, string>;

export interface ChatBudgetsOptions {
  store: QuotaStore;
  /** The operator's limits (environment): the most a chat admin can set. */
  limits: SpendLimits;
  /** The operator's caps of each person's own scope (DMs, user installs): they stand in for the server caps there. */
  dmCaps?: DmCaps | undefined;
  logger: LoggerLike;
  now?: (() => number) | undefined;
  /** Default 5 s: how soon another process sees a change of the caps in the ledger (this one sees its own at once). */
  cacheMs?: number | undefined;
  /**
   * Where the role budgets are kept: the chat admins' settings (the bots' state). Default this process's memory. Read
   * on every call, never cached here: the runner gives the one its `ScopePolicy` reads through its cache
   * (`policy.settings`), so a job reads a scope's settings once and a change made through either is seen by both.
   */
  settings?: ScopeSettingsStore | undefined;
}

/**
 * The caps of each server/workspace (the operator's, lowered by what its chat
 * admins set, kept in the ledger so every process of the account shares
 * them), and the usage summary the chat commands show. Platform-neutral: the
 * surfaces decide who is an admin and render what this answers.
 */
export class ChatBudgets {
  readonly #store: QuotaStore;
  readonly #operator: SpendLimits;
  readonly #dmCaps: DmCaps;
  readonly #logger: LoggerLike;
  readonly #now: () => number;
  /** What the ledger has of each scope's caps (`capOverrides`): the settings are the settings store's to cache. */
  readonly #cache: TtlCache<CapOverrides>;
  readonly #settings: ScopeSettingsStore;
  readonly #rolesOf = new Map<string, MemberRolesReader>();

  constructor(options: ChatBudgetsOptions) {
    this.#store = options.store;
    this.#settings = options.settings ?? settingsInState(undefined, options.logger);
    this.#operator = { ...options.limits };
    this.#dmCaps = { dailyUsd: options.dmCaps?.dailyUsd, monthlyUsd: options.dmCaps?.monthlyUsd };
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#cache = new TtlCache({ ttlMs: options.cacheMs ?? DEFAULT_CAP_CACHE_MS, now: this.#now });
  }

  /** The operator's caps (environment), unchanged by chat. */
  get operatorLimits(): SpendLimits {
    return { ...this.#operator };
  }

  /** The operator's caps of each person's own scope (`PICTOR_DM_DAILY_USD`, `PICTOR_DM_MONTHLY_USD`). */
  get dmCaps(): DmCaps {
    return { ...this.#dmCaps };
  }

  /**
   * How a platform whose requester does not carry the member's roles tells which they hold (Slack: user groups). Set
   * by the surface once at its start; without it such a member's roles are unknown (`memberLimits`' least generous).
   */
  readMemberRolesWith(platform: Platform, reader: MemberRolesReader): void {
    this.#rolesOf.set(platform, reader);
  }

  /**
   * The limits of a member's jobs — their scope's (`#capsOf`), their own caps as their roles' budgets make them
   * (`memberLimits`): the one answer the intake reserves with (`JobLedger.begin`), a form's intake checks
   * (`spentRefusal`) and the usage view shows.
   */
  async limitsFor(requester: Requester): Promise<SpendLimits> {
    return { ...(await this.#memberOf(requester)).member.limits };
  }

  /**
   * The refusal every job of this requester gets now because one of their caps
   * (theirs, their scope's, the account's) is spent to the last nano-dollar —
   * `rules.evaluate` for the least a job can cost; undefined while something is
   * left. For an entry point that opens a form first: the job itself, with its
   * price and the member's pace, is decided when it comes.
   */
  async spentRefusal(requester: Requester): Promise<SpendRefusal | undefined> {
    const now = this.#now();
    const { userKey, scopeKey } = keysOf(requester);
    const { limits } = (await this.#memberOf(requester)).member;
    const snapshot = await this.#snapshot(limits, userKey, scopeKey, this.#spending(now));
    return evaluate(snapshot, { userKey, scopeKey, limits, now, estimateUsd: EPSILON_USD });
  }

  /** The person's spend and what is left of each cap that applies to them; for admins, the scope's totals and top users. */
  async summary(requester: Requester): Promise<UsageSummary> {
    const now = this.#now();
    const { userKey, scopeKey } = keysOf(requester);
    const { caps: scopeCaps, member } = await this.#memberOf(requester);
    const { overrides } = scopeCaps;
    const roleBudgets = scopeCaps.roleBudgets === 'unreadable' ? [] : scopeCaps.roleBudgets;
    const { limits } = member;
    const spentIn = this.#spending(now);
    const snapshot = await this.#snapshot(limits, userKey, scopeKey, spentIn);
    const caps: CapStatus[] = [];
    for (const { code, field, key, period, limit } of budgetsOf(limits, userKey, scopeKey)) {
      if (limit === undefined) continue;
      const spentUsd = snapshot.used(key, period);
      const chat = isOverridableCap(field) && overrides[field] !== undefined && limit === overrides[field].usd;
      const source = isMemberCap(field) ? member.from[field] : undefined;
      const role = source && (source.kind === 'role' || source.kind === 'unknown_roles') ? source : undefined;
      caps.push({
        code,
        whose: key === ACCOUNT_KEY ? 'account' : code.startsWith('budget_user_') ? 'user' : 'scope',
        period,
        limitUsd: limit,
        spentUsd,
        leftUsd: leftOf(limit, spentUsd),
        resetsAt: resetsAt(period, now),
        setBy: source?.kind === 'unreadable_budgets' ? 'unreadable_budgets' : role ? role.kind : chat ? 'chat' : 'operator',
        ...(role && { role: roleBudgets.find((r) => r.roleId === role.roleId)?.name }),
      });
    }
    const summary: UsageSummary = {
      platform: requester.platform,
      userId: requester.userId,
      scopeId: requester.scopeId,
      now,
      user: { todayUsd: await spentIn(userKey, 'day'), monthUsd: await spentIn(userKey, 'month') },
      caps,
    };
    if (requester.isAdmin) {
      summary.scope = {
        todayUsd: await spentIn(scopeKey, 'day'),
        monthUsd: await spentIn(scopeKey, 'month'),
        topUsers: await this.#topUsers(requester.platform, scopeKey, now),
        roleBudgets: roleBudgets.map((r) => ({ roleId: r.roleId, name: r.name, dailyUsd: r.userDailyUsd, monthlyUsd: r.userMonthlyUsd })),
        roleBudgetsUnreadable: scopeCaps.roleBudgets === 'unreadable',
      };
    }
    return summary;
  }

  /**
   * A chat admin sets (or with `usd` undefined clears) one cap of their own
   * server/workspace. Refused for non-admins, and above the operator's cap when
   * the operator set one. Kept in the ledger and logged with who changed it.
   */
  async setCap(requester: Requester, cap: OverridableCap, usd: number | undefined): Promise<CapChange> {
    const { locale } = requester;
    const { scopeKey } = keysOf(requester);
    const refused = (await this.#notAdminRefusal(requester)) ?? this.#amountRefusal(requester, cap, usd);
    if (refused) return refused;
    const operatorUsd = this.#operator[cap];
    const what = capValues(cap, requester.platform);
    const changedBy = userKeyOf(requester);
    const { previousUsd } = await this.#store.setCapOverride(scopeKey, cap, usd, changedBy, this.#now());
    this.#cache.delete(scopeKey);
    this.#logger.info(
      { scopeKey, cap, changedBy, oldUsd: previousUsd ?? null, newUsd: usd ?? null, operatorUsd: operatorUsd ?? null },
      usd === undefined ? 'a chat admin cleared a budget' : 'a chat admin set a budget',
    );
    const operator = operatorUsd === undefined ? { operatorSet: 'no', operator: '' } : { operatorSet: 'yes', operator: usdOf(operatorUsd) };
    const message = usd === undefined ? say(locale, 'budget.cleared', { ...what, ...operator }) : say(locale, 'budget.set', { ...what, ...operator, usd: usdOf(usd) });
    return { ok: true, cap, previousUsd, usd, operatorUsd, message };
  }

  /**
   * A chat admin gives a role (Slack: a user group) of their server/workspace a budget of each member holding it
   * (`cap`: `userDailyUsd` or `userMonthlyUsd`), or with `usd` undefined clears it. Refused as `setCap` is (not an
   * admin, above the operator's cap of each user), for a cap that is not a member's, and past `ROLE_BUDGETS_MAX` roles
   * (also when the list stored holds more, a later version's: it is left as it is, never replaced).
   * Kept in the chat admins' settings (the bots' state), changed atomically; logged with who changed it. On budgets
   * that cannot be read (a damaged record) it starts a new list — the other roles' budgets, unknown, are none from
   * then on — and its answer says so, naming that each role that had one must be set again.
   */
  async setRoleBudget(requester: Requester, role: NamedRole, cap: OverridableCap, usd: number | undefined): Promise<CapChange> {
    const { locale, platform } = requester;
    const { scopeKey } = keysOf(requester);
    const notAdmin = await this.#notAdminRefusal(requester);
    if (notAdmin) return notAdmin;
    if (!isMemberCap(cap)) return { ok: false, code: 'not_a_member_cap', message: say(locale, 'budget.role_member_caps_only', { scope: SCOPE_WORDS[platform] }) };
    const refused = this.#amountRefusal(requester, cap, usd);
    if (refused) return refused;
    const operatorUsd = this.#operator[cap];
    const what = capValues(cap, platform);
    const changedBy = userKeyOf(requester);
    let previousUsd: number | undefined;
    let restarted = false as boolean;
    try {
      await this.#settings.update(scopeKey, 'roleBudgets', (budgets = [], { unreadable, overBound }) => {
        // A later version's longer list is no damage: a new list would erase it (repair leaves it as it is too).
        if (overBound !== undefined) throw new ListTooLongError('roleBudgets', overBound);
        restarted = unreadable;
        const at = budgets.findIndex((r) => r.roleId === role.id);
        previousUsd = budgets[at]?.[cap];
        const kept = budgets.filter((_, i) => i !== at);
        const changed = { ...budgets[at], roleId: role.id, name: role.name.slice(0, 100), [cap]: usd };
        if (changed.userDailyUsd === undefined && changed.userMonthlyUsd === undefined) return kept.length ? kept : undefined;
        return [...kept, definedOf(changed)];
      }, { by: changedBy, at: this.#now() });
    } catch (error) {
      // A role more than the list's bound holds (`LIST_MOST`, which the store alone checks), or a list stored longer than
      // it (a later version's, which a new list would erase): refused in the budget's own words, nothing written.
      if (!(error instanceof ListTooLongError && error.setting === 'roleBudgets')) throw error;
      return { ok: false, code: 'too_many_roles', message: say(locale, 'budget.too_many_roles', { scope: SCOPE_WORDS[platform], max: error.most }) };
    }
    this.#logger.info(
      { scopeKey, roleId: role.id, cap, changedBy, oldUsd: previousUsd ?? null, newUsd: usd ?? null, operatorUsd: operatorUsd ?? null, ...(restarted && { unreadableBudgetsReplaced: true }) },
      usd === undefined ? 'a chat admin cleared a role’s budget' : 'a chat admin set a role’s budget',
    );
    const operator = operatorUsd === undefined ? { operatorSet: 'no', operator: '' } : { operatorSet: 'yes', operator: usdOf(operatorUsd) };
    const values = { ...what, ...operator, role: role.name };
    const message = usd === undefined ? say(locale, 'budget.role_cleared', values) : say(locale, 'budget.role_set', { ...values, usd: usdOf(usd) });
    // The damaged list is replaced by this one: the admin is told the other roles now have none, never left to find out.
    const restart = restarted ? ` ${say(locale, 'budget.role_budgets_restarted', { scope: SCOPE_WORDS[platform] })}` : '';
    return { ok: true, cap, previousUsd, usd, operatorUsd, message: `${message}${restart}`, ...(restarted && { replacedUnreadable: true }) };
  }

  /** The refusal of a cap change (`setCap`, `setRoleBudget`) by someone who is not an admin here (or in a person's own scope, which has none). */
  async #notAdminRefusal(requester: Requester): Promise<CapChange | undefined> {
    if (requester.isAdmin && !(await this.#capsOf(scopeKeyOf(requester))).personal) return undefined;
    return { ok: false, code: 'not_admin', message: notAdminMessage(requester.platform, requester.locale) };
  }

  /** The refusal of an amount a chat admin chose (a cap, a role's budget): not an amount, or above the operator's cap of the same kind. */
  #amountRefusal(requester: Requester, cap: OverridableCap, usd: number | undefined): CapChange | undefined {
    const { locale, platform } = requester;
    if (usd === undefined) return undefined;
    if (!(Number.isFinite(usd) && usd >= 0)) return { ok: false, code: 'invalid_amount', message: amountHint(locale) };
    const operatorUsd = this.#operator[cap];
    if (operatorUsd === undefined || usd <= operatorUsd) return undefined;
    return { ok: false, code: 'above_operator_cap', message: say(locale, 'budget.above_operator_cap', { ...capValues(cap, platform), operator: usdOf(operatorUsd), variable: VARIABLE_OF[cap] }) };
  }

  /**
   * Drops the budgets of roles that are no longer in the admin's server/workspace (`existing`: the ids of every role
   * it has now, as its platform lists them): a role deleted since can be picked by no admin to clear its budget, which
   * would hold one of the `ROLE_BUDGETS_MAX` places for ever. Admins only; answers how many were dropped. Budgets
   * that cannot be read are left as they are (dropping them would make every role's none).
   */
  async forgetDeletedRoles(requester: Requester, existing: readonly string[]): Promise<number> {
    if (await this.#notAdminRefusal(requester)) return 0;
    const { scopeKey } = keysOf(requester);
    const dropped: string[] = [];
    const unreadable = new Error('unreadable role budgets');
    try {
      await this.#settings.update(scopeKey, 'roleBudgets', (budgets = [], context) => {
        if (context.unreadable) throw unreadable;
        const kept = budgets.filter((r) => existing.includes(r.roleId) || !dropped.push(r.roleId));
        return kept.length ? kept : undefined;
      }, { by: userKeyOf(requester), at: this.#now() });
    } catch (error) {
      if (error !== unreadable) throw error;
      return 0;
    }
    if (dropped.length === 0) return 0;
    this.#logger.info({ scopeKey, roleIds: dropped, changedBy: userKeyOf(requester) }, 'the budgets of roles deleted since were dropped');
    return dropped.length;
  }

  /** The member's scope caps and their own limits (`memberLimits`); the platform is asked for their roles only where the scope has role budgets. */
  async #memberOf(requester: Requester): Promise<{ caps: ScopeCaps; member: MemberLimits }> {
    const caps = await this.#capsOf(scopeKeyOf(requester));
    return { caps, member: memberLimits(this.#operator, caps.limits, caps.roleBudgets, await this.#heldRoles(requester, caps.roleBudgets)) };
  }

  /** Which of the scope's budgeted roles the member holds: none to ask about when it has no role budgets. */
  async #heldRoles(requester: Requester, roleBudgets: ScopeCaps['roleBudgets']): Promise<HeldRoles> {
    // Unreadable budgets give every member none, whatever their roles.
    if (roleBudgets === 'unreadable' || roleBudgets.length === 0) return [];
    const reader = this.#rolesOf.get(requester.platform);
    return requester.roleIds ?? (reader ? await reader(requester, roleBudgets.map((r) => r.roleId)) : undefined) ?? 'unknown';
  }

  /**
   * The caps of a scope, its limits by the core's rule (`scopeLimits`): a person's own scope (DMs, user installs:
   * `discord:dm:<user>`) has no chat admin's caps and no role budgets, so none are read; another scope's chat admins'
   * caps are the ledger's (cached `cacheMs`; a change made here applies at once) and the budgets of its roles the
   * settings store's (as it caches them).
   */
  async #capsOf(scopeKey: string): Promise<ScopeCaps> {
    if (isDmScopeKey(scopeKey)) return { limits: scopeLimits(scopeKey, this.#operator, this.#dmCaps, {}), overrides: {}, roleBudgets: [], personal: true };
    const [overrides, settings] = await Promise.all([this.#cache.get(scopeKey, () => this.#store.capOverrides(scopeKey)), this.#settings.get(scopeKey)]);
    return { limits: scopeLimits(scopeKey, this.#operator, this.#dmCaps, overrides), overrides, roleBudgets: roleBudgetsOf(settings), personal: false };
  }

  /** Reads spend from the ledger at `now`, each key and period once. */
  #spending(now: number): (key: string, period: CapPeriod) => Promise<number> {
    const read = new Map<string, Promise<number>>();
    return (key, period) => {
      const id = `${period} ${key}`;
      let usd = read.get(id);
      if (!usd) read.set(id, (usd = period === 'day' ? this.#store.spentToday(key, now) : this.#store.spentThisMonth(key, now)));
      return usd;
    };
  }

  /** What the ledger has under every cap set for these keys, as the rulebook reads it (pace not counted). */
  async #snapshot(limits: SpendLimits, userKey: string, scopeKey: string, spentIn: (key: string, period: CapPeriod) => Promise<number>): Promise<LedgerSnapshot> {
    const used = new Map<string, number>();
    for (const { key, period, limit } of budgetsOf(limits, userKey, scopeKey)) {
      if (limit !== undefined) used.set(`${period} ${key}`, await spentIn(key, period));
    }
    return { activeJobsOfUser: 0, lastJobAt: undefined, used: (key, period) => used.get(`${period} ${key}`) ?? 0 };
  }

  /** The scope's users by what their settled jobs cost this month (UTC, the month each job was reserved in), biggest first. */
  async #topUsers(platform: Platform, scopeKey: string, now: number): Promise<{ userId: string; usd: number; jobs: number }[]> {
    const month = utcMonth(now);
    const records = await this.#store.usage({ since: Date.parse(`${month}-01T00:00:00Z`), scopeKey });
    const prefix = `${platform}:`;
    return usageByKey(
      records.filter((r) => r.day.slice(0, 7) === month),
      (r) => r.userKey,
    )
      .map((row) => ({ userId: row.key.startsWith(prefix) ? row.key.slice(prefix.length) : row.key, usd: row.usd, jobs: row.jobs }))
      .slice(0, TOP_USERS);
  }
}

/** A scope's caps (`ChatBudgets.#capsOf`). */
interface ScopeCaps {
  limits: SpendLimits;
  /** What its chat admins set (none in a person's own scope). */
  overrides: CapOverrides;
  /** The budgets its chat admins gave its roles (none in a person's own scope); `unreadable` when stored and damaged. */
  roleBudgets: NonNullable<ScopeSettings['roleBudgets']> | 'unreadable';
  /** A person's own scope (DMs, user installs): no chat admin, the operator's DM caps. */
  personal: boolean;
}

/**
 * A scope's role budgets as stored, or `unreadable` when they are stored and cannot be read: never taken for "none",
 * which would give a restricted role's members the more generous cap of each user (`memberLimits` gives them nothing
 * instead). The one answer to "can its role budgets be read": the member's caps and the console's view of the scope
 * both ask it. The settings store logs it (once a scope while it stays so).
 */
export function roleBudgetsOf(settings: StoredScopeSettings): ScopeCaps['roleBudgets'] {
  return settings.unreadable?.includes('roleBudgets') ? 'unreadable' : (settings.values.roleBudgets ?? []);
}

function keysOf(requester: Pick<Requester, 'platform' | 'userId' | 'scopeId'>): { userKey: string; scopeKey: string } {
  return { userKey: userKeyOf(requester), scopeKey: scopeKeyOf(requester) };
}

function isMemberCap(cap: string): cap is MemberCap {
  return (MEMBER_CAPS as readonly string[]).includes(cap);
}


/** Told to someone who is not an admin and tries to change a budget. */
export function notAdminMessage(platform: Platform, locale?: string): string {
  return say(locale, 'budget.not_admin', { scope: SCOPE_WORDS[platform] });
}

/** Which cap a sentence is about: whose (each user's, or the scope's), the period, and what the scope is called. */
function capValues(cap: OverridableCap, platform: Platform): { whose: 'user' | 'scope'; period: 'day' | 'month'; scope: string } {
  return { whose: cap.startsWith('user') ? 'user' : 'scope', period: cap === 'userDailyUsd' || cap === 'scopeDailyUsd' ? 'day' : 'month', scope: SCOPE_WORDS[platform] };
}
