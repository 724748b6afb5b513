import { effectiveLimits } from '../spend/cap-overrides.js';
import { isChatScopeKey, isDmScopeKey, SPEND_CAP_VARIABLES } from '../spend/caps.js';
import { roundToNanoUsd } from '../spend/rules.js';
import { ACCOUNT_KEY, type ActiveJob, type BreakerState, type CapOverrides, type RefusalCounts } from '../spend/types.js';
import { nextUtcMidnight, nextUtcMonth, utcDay, utcDayBefore, utcMonth } from '../spend/utc-period.js';
import type { OperatorSettings } from './source.js';
import { rounded, type Totals, type UsageIndex } from './usage-index.js';

/**
 * Every figure of the spend page, computed in one place from the usage
 * records (`UsageIndex`) and what the ledger holds now (reservations, the
 * chat admins' caps, refusal counts). Settled amounts are the records'; a
 * cap's "used" adds what running jobs reserved, as the ledger counts it.
 */
export interface SpendFigures {
  now: number;
  today: string;
  month: string;
  /** The account: settled today and this month, what is reserved now, and the sum the caps count. */
  account: { day: PeriodUse; month: PeriodUse };
  /** Every cap that applies, with what it counts now, fullest first. */
  caps: CapUse[];
  bySurface: { day: Row[]; month: Row[] };
  /** Servers, workspaces and DM users this month. */
  byScope: Row[];
  /** Users this month (the 50 who spent most). */
  byUser: Row[];
  /** Settled per UTC day and surface, oldest first. */
  chart: { days: string[]; surfaces: { surface: string; usd: number[] }[] };
  /** Refusals by code, today and this month. */
  refusals: { code: string; day: number; month: number }[];
  /** Images asked for by the jobs settled each hour of the last 48 hours, and the account's limit per hour. */
  imagesPerHour: { hours: number[]; images: number[]; limitPerHour: number | undefined };
}

export interface PeriodUse {
  settledUsd: number;
  reservedUsd: number;
  /** Settled plus reserved: what the caps count. */
  usedUsd: number;
  jobs: number;
  images: number;
  uncertainUsd: number;
}

export interface Row extends Totals {
  key: string;
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
  /** The variable it comes from, or the chat admin who lowered it. */
  source: string;
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
}

const HOUR_MS = 60 * 60_000;
const VARIABLE_OF = Object.fromEntries(Object.entries(SPEND_CAP_VARIABLES).map(([variable, field]) => [field, variable])) as Record<string, string>;

export function spendFigures(input: FigureInputs): SpendFigures {
  const { index, operator, active, overrides, now } = input;
  const today = utcDay(now);
  const month = utcMonth(now);
  const day = index.day(today);
  const monthTotals = index.period(month);
  const reserved = reservedBy(active, today, month);

  const use = (settled: Totals | undefined, reservedUsd: number): PeriodUse => {
    const t = rounded(settled ?? { jobs: 0, images: 0, usd: 0, uncertainUsd: 0 });
    return { settledUsd: t.usd, reservedUsd: roundToNanoUsd(reservedUsd), usedUsd: roundToNanoUsd(t.usd + reservedUsd), jobs: t.jobs, images: t.images, uncertainUsd: t.uncertainUsd };
  };
  const account = { day: use(day?.total, reserved.day.get(ACCOUNT_KEY) ?? 0), month: use(monthTotals.total, reserved.month.get(ACCOUNT_KEY) ?? 0) };

  const caps: CapUse[] = [];
  const add = (owner: CapUse['owner'], key: string, period: 'day' | 'month', limitUsd: number | undefined, usedUsd: number, source: string) => {
    if (limitUsd === undefined) return;
    const resetsAt = period === 'day' ? nextUtcMidnight(now) : nextUtcMonth(now);
    caps.push({ owner, key, period, limitUsd, usedUsd: roundToNanoUsd(usedUsd), ratio: limitUsd > 0 ? usedUsd / limitUsd : usedUsd > 0 ? Infinity : 1, source, resetsAt });
  };
  const { caps: operatorCaps, dmCaps } = operator;
  add('account', ACCOUNT_KEY, 'day', operatorCaps.accountDailyUsd, account.day.usedUsd, VARIABLE_OF.accountDailyUsd!);
  add('account', ACCOUNT_KEY, 'month', operatorCaps.accountMonthlyUsd, account.month.usedUsd, VARIABLE_OF.accountMonthlyUsd!);

  const scopes = new Set<string>([...monthTotals.scopes.keys(), ...Object.keys(overrides), ...active.map((j) => j.scopeKey)]);
  for (const scopeKey of [...scopes].sort()) {
    if (!isChatScopeKey(scopeKey)) continue; // the CLI's and n8n's scopes have no scope caps
    const usedDay = rounded(day?.scopes.get(scopeKey) ?? zeroTotals()).usd + (reserved.day.get(scopeKey) ?? 0);
    const usedMonth = rounded(monthTotals.scopes.get(scopeKey) ?? zeroTotals()).usd + (reserved.month.get(scopeKey) ?? 0);
    if (isDmScopeKey(scopeKey)) {
      add('dm', scopeKey, 'day', dmCaps.dailyUsd, usedDay, 'PICTOR_DM_DAILY_USD');
      add('dm', scopeKey, 'month', dmCaps.monthlyUsd, usedMonth, 'PICTOR_DM_MONTHLY_USD');
      continue;
    }
    const own = overrides[scopeKey] ?? {};
    const limits = effectiveLimits(operatorCaps, own);
    const sourceOf = (field: 'scopeDailyUsd' | 'scopeMonthlyUsd') => {
      const chosen = own[field];
      return chosen && (operatorCaps[field] === undefined || chosen.usd < operatorCaps[field]!) ? `set by ${chosen.by} (chat admin)` : VARIABLE_OF[field]!;
    };
    add('scope', scopeKey, 'day', limits.scopeDailyUsd, usedDay, sourceOf('scopeDailyUsd'));
    add('scope', scopeKey, 'month', limits.scopeMonthlyUsd, usedMonth, sourceOf('scopeMonthlyUsd'));
  }
  if (operatorCaps.userDailyUsd !== undefined || operatorCaps.userMonthlyUsd !== undefined) {
    const users = new Set<string>([...monthTotals.users.keys(), ...active.map((j) => j.userKey)]);
    for (const userKey of users) {
      if (!userKey.startsWith('discord:') && !userKey.startsWith('slack:')) continue; // the chat users: the caps of the CLI and n8n are the account's
      const usedDay = rounded(day?.users.get(userKey) ?? zeroTotals()).usd + (reserved.day.get(userKey) ?? 0);
      const usedMonth = rounded(monthTotals.users.get(userKey) ?? zeroTotals()).usd + (reserved.month.get(userKey) ?? 0);
      add('user', userKey, 'day', operatorCaps.userDailyUsd, usedDay, VARIABLE_OF.userDailyUsd!);
      add('user', userKey, 'month', operatorCaps.userMonthlyUsd, usedMonth, VARIABLE_OF.userMonthlyUsd!);
    }
  }
  caps.sort((a, b) => (a.owner === 'account' ? -1 : 0) - (b.owner === 'account' ? -1 : 0) || b.ratio - a.ratio || a.key.localeCompare(b.key));

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
    byUser: rows(monthTotals.users).slice(0, 50),
    chart: chartOf(index, now, input.chartDays),
    refusals: [...refusals].map(([code, n]) => ({ code, ...n })).sort((a, b) => b.month - a.month || a.code.localeCompare(b.code)),
    imagesPerHour: {
      hours: hourly.map((h) => h.hour),
      images: hourly.map((h) => h.images),
      limitPerHour: operator.imagesPerMinute === undefined ? undefined : operator.imagesPerMinute * 60,
    },
  };
}

const zeroTotals = (): Totals => ({ jobs: 0, images: 0, usd: 0, uncertainUsd: 0 });

function rows(map: ReadonlyMap<string, Totals> | undefined): Row[] {
  return [...(map ?? new Map<string, Totals>())].map(([key, t]) => ({ key, ...rounded(t) })).sort((a, b) => b.usd - a.usd || a.key.localeCompare(b.key));
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
