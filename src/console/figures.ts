import { scopeLimits } from '../spend/cap-overrides.js';
import { isChatScopeKey, isDmScopeKey, SPEND_CAP_VARIABLES } from '../spend/caps.js';
import { memberLimits, type MemberCap, type MemberCapSource, type ScopeRoleBudgets } from '../spend/role-budgets.js';
import { roundToNanoUsd } from '../spend/rules.js';
import { ACCOUNT_KEY, type ActiveJob, type BreakerState, type CapOverrides, type QuotaStore, type RefusalCounts, type SpendLimits } from '../spend/types.js';
import { nextUtcMidnight, nextUtcMonth, utcDay, utcDayBefore, utcDayStart, utcMonth, utcMonthStart } from '../spend/utc-period.js';
import type { LoggerLike } from '../client/PictorClient.js';
import { capRatio } from './percent.js';
import type { ConsoleSource, OperatorSettings } from './source.js';
import { rounded, type DayTotals, type Totals, type UsageIndex } from './usage-index.js';

/**
 * Every figure of the spend page, computed in one place from the usage
 * records (`UsageIndex`) and what the ledger holds now (amounts by key,
 * reservations, the chat admins' caps, refusal counts). What the account and
 * each user spent is the ledger's (`spentMany`), the figure the caps count;
 * jobs, images and what is uncertain are counted from the usage records kept,
 * which only they have (records are dropped after
 * `PICTOR_USAGE_RETENTION_DAYS`, the ledger keeps the month's amounts).
 */
export interface SpendFigures {
  now: number;
  today: string;
  month: string;
  /** The account: settled today and this month, what is reserved now, and the sum the caps count (the ledger's, as its cap rows). */
  account: { day: PeriodUse; month: PeriodUse };
  /** Every cap that applies, with what it counts now, fullest first. */
  caps: CapUse[];
  bySurface: { day: Row[]; month: Row[] };
  /** Servers, workspaces and DM users this month. */
  byScope: Row[];
  /** Users this month (the 50 who spent most, as the ledger has it settled), those with no usage record kept included. */
  byUser: UserRow[];
  /** Settled per UTC day and surface, oldest first. */
  chart: { days: string[]; surfaces: { surface: string; usd: number[] }[] };
  /** Refusals by code, today and this month. */
  refusals: { code: string; day: number; month: number }[];
  /** Images asked for by the jobs settled each hour of the last 48 hours, and the account's limit per hour. */
  imagesPerHour: { hours: number[]; images: number[]; limitPerHour: number | undefined };
  /** Lines of the usage records damaged and skipped (a file ledger) that may be of today, of this month: another reason the records kept add up to less than the ledger settled. */
  damagedUsageLines: { day: number; month: number };
}

export interface PeriodUse {
  /** The ledger's: settled (what the caps count, less what is reserved now). */
  settledUsd: number;
  reservedUsd: number;
  /** Settled plus reserved: what the caps count (`spentMany`, as the account's cap rows). */
  usedUsd: number;
  /** From the usage records kept: the jobs settled, the images they asked for, the part charged at an estimate. */
  jobs: number;
  images: number;
  uncertainUsd: number;
  /** What the usage records kept add up to: less than `settledUsd` when records were dropped (retention) or damaged (`damagedUsageLines`). */
  recordsUsd: number;
}

export interface Row extends Totals {
  key: string;
}

/**
 * A user's month: `usd` is what the ledger has settled under their key (as their caps count it, less what is reserved
 * now); jobs and images are from their usage records kept. `recordsUsd`: what those records add up to (less when
 * records were dropped). `ledgerOnly`: no usage record of theirs is kept this month, so jobs and images are not known.
 */
export interface UserRow extends Row {
  recordsUsd: number;
  ledgerOnly?: true | undefined;
}

export interface CapUse {
  /** Whose: the account, a server/workspace, a DM user, a user. */
  owner: 'account' | 'scope' | 'dm' | 'user';
  key: string;
  period: 'day' | 'month';
  limitUsd: number;
  usedUsd: number;
  /** used / limit (1 = reached). */
  ratio: number;
  /** The variable it comes from, or the chat admin who lowered it, or the role budget that makes it. */
  source: string;
  /** A user's cap set in one server/workspace (a chat admin's cap of each member, a role's budget): that scope's key. */
  scopeKey?: string | undefined;
  /**
   * A member's cap where the scope has role budgets, which the console cannot tell are the member's (it cannot ask the
   * platform which roles they hold): `lower` — the least generous that could apply, a lower bound (a role with a
   * larger budget lifts it), never known to refuse; `unreadable` — the role budgets cannot be read, so the member's
   * jobs are reserved against nothing (0) until an admin sets them again. Absent: the cap the jobs are reserved with.
   */
  bound?: 'lower' | 'unreadable' | undefined;
  resetsAt: number;
}

export interface FigureInputs {
  index: UsageIndex;
  operator: OperatorSettings;
  active: readonly ActiveJob[];
  overrides: Readonly<Record<string, CapOverrides>>;
  refusals: RefusalCounts;
  now: number;
  /** Days of the chart: 30 or 90. */
  chartDays: number;
  /**
   * The ledger: what each cap counts (`spentMany`: `spentToday`, `spentThisMonth` of every key in one read), as the
   * caps read it when they refuse a job; and which keys have spend settled this month (`settledKeys`), for users with
   * no usage record left.
   */
  ledger: Pick<QuotaStore, 'spentMany' | 'settledKeys'>;
  /**
   * Whether the users' rows are wanted (the spend page; the default). The alerts need only the caps and spare the ledger
   * the list of every key spent under this month (`settledKeys`: on Redis a SCAN of the keyspace).
   */
  withUsers?: boolean | undefined;
  /** The budgets chat admins gave roles, by scope key (the bots' state; absent: none known). */
  roleBudgets?: Readonly<Record<string, ScopeRoleBudgets>> | undefined;
}

const HOUR_MS = 60 * 60_000;
const VARIABLE_OF = Object.fromEntries(Object.entries(SPEND_CAP_VARIABLES).map(([variable, field]) => [field, variable])) as Record<string, string>;

export async function spendFigures(input: FigureInputs): Promise<SpendFigures> {
  const { index, active, now } = input;
  const today = utcDay(now);
  const month = utcMonth(now);
  const day = index.day(today);
  const monthTotals = index.period(month);
  const reserved = reservedBy(active, today, month);

  const capRows = capRowsOf(input, monthTotals);
  const withUsers = input.withUsers ?? true;
  const ledgerUsers = withUsers ? await ledgerOnlyUsers(input, monthTotals) : [];
  // One read of the ledger for every figure of a key (a page lists thousands of users' caps): the account's row and
  // its cap rows, a user's row and theirs, are the same figure.
  const spent = await input.ledger.spentMany([...new Set([ACCOUNT_KEY, ...capRows.map((row) => row.key), ...(withUsers ? monthTotals.users.keys() : []), ...ledgerUsers])], now);
  const spentOf = (key: string, period: 'day' | 'month'): number => roundToNanoUsd(spent.get(key)?.[period] ?? 0);

  const use = (period: 'day' | 'month', records: Totals | undefined): PeriodUse => {
    const t = rounded(records ?? { jobs: 0, images: 0, usd: 0, uncertainUsd: 0 });
    const usedUsd = spentOf(ACCOUNT_KEY, period);
    const reservedUsd = roundToNanoUsd(reserved[period].get(ACCOUNT_KEY) ?? 0);
    // A job that settled between the read of the reservations and this one is counted in both: never below nothing.
    return { settledUsd: Math.max(0, roundToNanoUsd(usedUsd - reservedUsd)), reservedUsd, usedUsd, jobs: t.jobs, images: t.images, uncertainUsd: t.uncertainUsd, recordsUsd: t.usd };
  };
  const account = { day: use('day', day?.total), month: use('month', monthTotals.total) };

  const caps = capRows.map((row): CapUse => {
    const usedUsd = spentOf(row.key, row.period);
    return { ...row, usedUsd, ratio: capRatio(usedUsd, row.limitUsd) };
  });
  caps.sort((a, b) => (a.owner === 'account' ? -1 : 0) - (b.owner === 'account' ? -1 : 0) || b.ratio - a.ratio || a.key.localeCompare(b.key));

  const settledOf = (key: string): number => Math.max(0, roundToNanoUsd(spentOf(key, 'month') - (reserved.month.get(key) ?? 0)));
  const byUser: UserRow[] = !withUsers ? [] : [
    ...rows(monthTotals.users).map((r) => ({ ...r, recordsUsd: r.usd, usd: settledOf(r.key) })),
    ...ledgerUsers.map((key) => ({ key, jobs: 0, images: 0, uncertainUsd: 0, recordsUsd: 0, usd: settledOf(key), ledgerOnly: true as const })).filter((r) => r.usd > 0),
  ].sort((a, b) => b.usd - a.usd || a.key.localeCompare(b.key));

  const refusals = new Map<string, { day: number; month: number }>();
  for (const [refusalDay, counts] of Object.entries(input.refusals)) {
    if (!refusalDay.startsWith(month)) continue;
    for (const [code, n] of Object.entries(counts)) {
      const entry = refusals.get(code) ?? { day: 0, month: 0 };
      entry.month += n;
      if (refusalDay === today) entry.day += n;
      refusals.set(code, entry);
    }
  }

  const hoursFrom = Math.floor(now / HOUR_MS) * HOUR_MS - 47 * HOUR_MS;
  const hourly = index.imagesPerHour(hoursFrom, now + 1);
  return {
    now,
    today,
    month,
    account,
    caps,
    bySurface: { day: rows(day?.surfaces), month: rows(monthTotals.surfaces) },
    byScope: rows(monthTotals.scopes),
    byUser: byUser.slice(0, 50),
    chart: chartOf(index, now, input.chartDays),
    refusals: [...refusals].map(([code, n]) => ({ code, ...n })).sort((a, b) => b.month - a.month || a.code.localeCompare(b.code)),
    imagesPerHour: {
      hours: hourly.map((h) => h.hour),
      images: hourly.map((h) => h.images),
      limitPerHour: input.operator.imagesPerMinute === undefined ? undefined : input.operator.imagesPerMinute * 60,
    },
    damagedUsageLines: { day: index.damagedLinesWithin(utcDayStart(now), nextUtcMidnight(now)), month: index.damagedLinesWithin(utcMonthStart(now), nextUtcMonth(now)) },
  };
}

function rows(map: ReadonlyMap<string, Totals> | undefined): Row[] {
  return [...(map ?? new Map<string, Totals>())].map(([key, t]) => ({ key, ...rounded(t) })).sort((a, b) => b.usd - a.usd || a.key.localeCompare(b.key));
}

/**
 * The keys the ledger has spend settled under this month with no usage record kept (dropped after
 * `PICTOR_USAGE_RETENTION_DAYS`), that are not a scope the console knows: users with no row otherwise. The ledger keeps
 * amounts by key, not whose: a server or workspace that has no record, chat admin's cap, role budget or running job
 * this month cannot be told from a user, and is among them.
 */
async function ledgerOnlyUsers(input: FigureInputs, monthTotals: DayTotals): Promise<string[]> {
  const scopes = new Set<string>([
    ...monthTotals.scopes.keys(),
    ...[...monthTotals.members].map((member) => member.split(' ')[1] ?? ''),
    ...Object.keys(input.overrides),
    ...Object.keys(input.roleBudgets ?? {}),
    ...input.active.map((j) => j.scopeKey),
  ]);
  const keys = await input.ledger.settledKeys(input.now);
  // A key without a colon is the CLI's or n8n's scope (their users are `cli:<name>`, `n8n:<workflow>`); `<platform>:dm:<id>` a person's own scope.
  return keys.filter((key) => key !== ACCOUNT_KEY && !monthTotals.users.has(key) && !scopes.has(key) && isChatScopeKey(key) && !isDmScopeKey(key)).sort();
}

/**
 * Every cap that applies, with its limit from the rules the jobs are reserved with (`effectiveLimits`: the operator's
 * lowered by the scope's chat admins; `memberLimits`: a member's own caps as their roles' budgets make them); its use
 * is the ledger's (settled and reserved, `spentMany`: one read for every row), added by `spendFigures`.
 */
function capRowsOf(input: FigureInputs, monthTotals: DayTotals): Omit<CapUse, 'usedUsd' | 'ratio'>[] {
  const { operator, active, overrides, now } = input;
  const { caps: operatorCaps, dmCaps } = operator;
  const rows: Omit<CapUse, 'usedUsd' | 'ratio'>[] = [];
  const add = (owner: CapUse['owner'], key: string, period: 'day' | 'month', limitUsd: number | undefined, source: string, scopeKey?: string, bound?: CapUse['bound']) => {
    if (limitUsd === undefined) return;
    rows.push({ owner, key, period, limitUsd, source, resetsAt: period === 'day' ? nextUtcMidnight(now) : nextUtcMonth(now), ...(scopeKey !== undefined && { scopeKey }), ...(bound !== undefined && { bound }) });
  };
  add('account', ACCOUNT_KEY, 'day', operatorCaps.accountDailyUsd, VARIABLE_OF.accountDailyUsd!);
  add('account', ACCOUNT_KEY, 'month', operatorCaps.accountMonthlyUsd, VARIABLE_OF.accountMonthlyUsd!);

  const roleBudgets = input.roleBudgets ?? {};
  const scopes = new Set<string>([...monthTotals.scopes.keys(), ...Object.keys(overrides), ...Object.keys(roleBudgets), ...active.map((j) => j.scopeKey)]);
  /** Each chat scope's limits, as the job runner reserves with them (`scopeLimits`). */
  const limitsOf = new Map<string, SpendLimits>();
  for (const scopeKey of [...scopes].sort()) {
    if (!isChatScopeKey(scopeKey)) continue; // the CLI's and n8n's scopes have no scope caps
    const own = overrides[scopeKey] ?? {};
    const limits = scopeLimits(scopeKey, operatorCaps, dmCaps, own);
    limitsOf.set(scopeKey, limits);
    if (isDmScopeKey(scopeKey)) {
      add('dm', scopeKey, 'day', limits.scopeDailyUsd, 'PICTOR_DM_DAILY_USD');
      add('dm', scopeKey, 'month', limits.scopeMonthlyUsd, 'PICTOR_DM_MONTHLY_USD');
      continue;
    }
    add('scope', scopeKey, 'day', limits.scopeDailyUsd, chatAdminOr(own, limits, 'scopeDailyUsd'));
    add('scope', scopeKey, 'month', limits.scopeMonthlyUsd, chatAdminOr(own, limits, 'scopeMonthlyUsd'));
  }

  // A member's own caps are those of the scope the job runs in: one row per user and cap, and one more for each scope
  // where a chat admin or a role budget makes theirs another.
  const members = new Set<string>([...monthTotals.members, ...active.map((j) => `${j.userKey} ${j.scopeKey}`)]);
  const seen = new Set<string>();
  for (const member of [...members].sort()) {
    const [userKey = '', scopeKey = ''] = member.split(' ');
    const scopeLimits = limitsOf.get(scopeKey);
    if (!scopeLimits) continue; // not a chat user's job: the caps of the CLI and n8n are the account's
    const budgets = isDmScopeKey(scopeKey) ? [] : (roleBudgets[scopeKey] ?? []);
    // The console cannot ask the platform which roles a member holds: where the scope has role budgets of a period, the
    // least generous that could apply (the rule's own answer for roles unknown), shown as the lower bound it is.
    const { limits, from } = memberLimits(operatorCaps, scopeLimits, budgets, budgets === 'unreadable' || budgets.length === 0 ? [] : 'unknown');
    for (const [cap, period] of [
      ['userDailyUsd', 'day'],
      ['userMonthlyUsd', 'month'],
    ] as const) {
      const limit = limits[cap];
      if (limit === undefined) continue;
      const bound = budgets === 'unreadable' ? 'unreadable' : budgets.some((b) => b[cap] !== undefined) ? 'lower' : undefined;
      const source = memberSource(from[cap], cap, overrides[scopeKey] ?? {}, limits, bound === 'lower');
      const where = source === VARIABLE_OF[cap] ? undefined : scopeKey;
      const id = `${userKey} ${period} ${where ?? ''}`;
      if (seen.has(id)) continue;
      seen.add(id);
      add('user', userKey, period, limit, source, where, bound);
    }
  }

  return rows;
}

/** Where a scope's cap comes from: its chat admin, when theirs is the one in force; else the operator's variable. */
function chatAdminOr(own: CapOverrides, limits: SpendLimits, field: 'scopeDailyUsd' | 'scopeMonthlyUsd' | MemberCap): string {
  const chosen = own[field];
  return chosen && limits[field] === chosen.usd ? `set by ${chosen.by} (chat admin)` : VARIABLE_OF[field]!;
}

/** Where a member's cap comes from, in words. */
function memberSource(from: MemberCapSource, cap: MemberCap, own: CapOverrides, limits: SpendLimits, lowerBound: boolean): string {
  switch (from.kind) {
    case 'scope':
      return lowerBound ? `${chatAdminOr(own, limits, cap)}, unless the member holds a role with a larger budget (the member’s roles are not known here)` : chatAdminOr(own, limits, cap);
    case 'role':
      return `budget of role ${from.roleId}`;
    case 'unknown_roles':
      return `budget of role ${from.roleId}, the least generous, unless the member holds a role with a larger budget (the member’s roles are not known here)`;
    case 'unreadable_budgets':
      return 'role budgets cannot be read: members may spend nothing';
  }
}

/** What running jobs reserved, by key (user, scope, account) and by the day and month they count in. */
function reservedBy(active: readonly ActiveJob[], today: string, month: string): { day: Map<string, number>; month: Map<string, number> } {
  const day = new Map<string, number>();
  const inMonth = new Map<string, number>();
  for (const job of active) {
    for (const key of new Set([job.userKey, job.scopeKey, ACCOUNT_KEY])) {
      if (utcDay(job.at) === today) day.set(key, (day.get(key) ?? 0) + job.usd);
      if (utcMonth(job.at) === month) inMonth.set(key, (inMonth.get(key) ?? 0) + job.usd);
    }
  }
  return { day, month: inMonth };
}

/** Settled per day and surface for the last `days` days (today included), every day present. */
function chartOf(index: UsageIndex, now: number, days: number): SpendFigures['chart'] {
  const list: string[] = [];
  for (let i = days - 1; i >= 0; i--) list.push(utcDayBefore(now, i));
  const surfaces = new Set<string>();
  for (const d of list) for (const surface of index.day(d)?.surfaces.keys() ?? []) surfaces.add(surface);
  return {
    days: list,
    surfaces: [...surfaces].sort().map((surface) => ({ surface, usd: list.map((d) => roundToNanoUsd(index.day(d)?.surfaces.get(surface)?.usd ?? 0)) })),
  };
}

/** The state of a scope the breaker paused or that was resumed, for the pages. */
export type BreakerRow = BreakerState & { scopeKey: string };

/**
 * The budgets chat admins gave roles, of every server/workspace that has some, from the bots (`npm start`); none for
 * `pictor console`, which has no bots' state. A read that fails is logged and counts as none known.
 */
export async function roleBudgetsOf(source: ConsoleSource, logger: LoggerLike): Promise<Record<string, ScopeRoleBudgets>> {
  if (!source.bots?.roleBudgets) return {};
  return source.bots.roleBudgets().catch((err: unknown) => {
    logger.warn({ err }, 'the console could not read the role budgets');
    return {};
  });
}

/** The cap rows a page shows: `rows`, fullest first, and how many of the others were left out. */
export interface CapsShown {
  rows: CapUse[];
  /** The members' and DM users' rows not shown (past the `members` fullest, or not matching `key`). */
  hidden: number;
  /** The filter asked for (a part of a key), when one was. */
  key?: string | undefined;
}

/**
 * The cap rows a page shows of `caps` (fullest first): every account's and server's/workspace's row, and of the members'
 * and DM users' only the `members` fullest — with 5,000 members under a cap of each, every row made a page of
 * megabytes. Given `key`, only the members' and DM users' rows whose key (or the scope it applies in) contains it, the
 * fullest `members` of them.
 */
export function capsShown(caps: readonly CapUse[], options: { members: number; key?: string | undefined }): CapsShown {
  const key = options.key?.trim().slice(0, 200).toLowerCase() || undefined;
  const rows: CapUse[] = [];
  let members = 0;
  let hidden = 0;
  for (const cap of caps) {
    if (cap.owner === 'account' || cap.owner === 'scope') {
      rows.push(cap);
      continue;
    }
    const matches = key === undefined || cap.key.toLowerCase().includes(key) || (cap.scopeKey?.toLowerCase().includes(key) ?? false);
    if (matches && members < options.members) {
      rows.push(cap);
      members++;
    } else hidden++;
  }
  return { rows, hidden, key };
}
