import { z } from 'zod';
import { isDmScopeKey } from './caps.js';
import { toNanos } from './rules.js';
import type { CapOverrides, OverridableCap, SpendLimits } from './types.js';

/** The caps a chat admin may change, in the order they are checked. */
export const OVERRIDABLE_CAPS = ['userDailyUsd', 'userMonthlyUsd', 'scopeDailyUsd', 'scopeMonthlyUsd'] as const satisfies readonly OverridableCap[];

export function isOverridableCap(value: string): value is OverridableCap {
  return (OVERRIDABLE_CAPS as readonly string[]).includes(value);
}

/** What a chat admin may set, on either store: one of their scope's caps, at a non-negative amount in nano-dollars (undefined: none). */
export function capOverrideNanos(cap: string, usd: number | undefined): number | undefined {
  if (!isOverridableCap(cap)) throw new RangeError(`${cap} cannot be changed from chat`);
  return usd === undefined ? undefined : toNanos('usd', usd);
}

export const CapOverrideSchema = z.object({ usd: z.number().nonnegative(), by: z.string(), at: z.number() });

export const ScopeSettingEntrySchema = z.object({ value: z.json(), by: z.string(), at: z.number() });

/**
 * `cap-overrides.json` beside the file ledger: the chat admins' caps per scope
 * key, and their other settings per scope key (`settings`, absent in files
 * written before there were any).
 */
export const CapOverridesFileSchema = z.object({
  version: z.literal(1),
  scopes: z.record(z.string(), z.partialRecord(z.enum(OVERRIDABLE_CAPS), CapOverrideSchema)),
  settings: z.record(z.string(), z.record(z.string(), ScopeSettingEntrySchema)).optional(),
});

export type CapOverridesFile = z.output<typeof CapOverridesFileSchema>;

/**
 * The caps that apply to a scope's jobs: the operator's, each lowered to what a
 * chat admin of that scope set. An admin's cap never raises the operator's (if
 * the operator lowers theirs below it later, the operator's wins); where the
 * operator set none, the admin's applies as it is.
 */
export function effectiveLimits(operator: SpendLimits, overrides: CapOverrides): SpendLimits {
  const limits: SpendLimits = { ...operator };
  for (const cap of OVERRIDABLE_CAPS) {
    const chosen = overrides[cap]?.usd;
    if (chosen !== undefined) limits[cap] = boundedByOperator(operator[cap], chosen);
  }
  return limits;
}

/**
 * The limits a chat scope's jobs are reserved with: the one place a person's own scope (Discord DMs and user installs,
 * `<platform>:dm:<user id>`) is told apart. It has the operator's DM caps (`PICTOR_DM_DAILY_USD`,
 * `PICTOR_DM_MONTHLY_USD`) as its scope caps and no chat admin's (`overrides` is not read); any other scope has the
 * operator's caps lowered by what its chat admins set (`effectiveLimits`). The account's and each user's caps are the
 * operator's in both.
 */
export function scopeLimits(scopeKey: string, operator: SpendLimits, dmCaps: { dailyUsd?: number | undefined; monthlyUsd?: number | undefined }, overrides: CapOverrides): SpendLimits {
  if (isDmScopeKey(scopeKey)) return { ...operator, scopeDailyUsd: dmCaps.dailyUsd, scopeMonthlyUsd: dmCaps.monthlyUsd };
  return effectiveLimits(operator, overrides);
}

/**
 * What a chat admin chose (a cap, a role's budget) as it applies: never above the operator's cap of the same kind;
 * where the operator set none, as chosen. The one rule of "an admin can lower, not raise".
 */
export function boundedByOperator(operatorUsd: number | undefined, chosenUsd: number): number {
  return operatorUsd === undefined ? chosenUsd : Math.min(operatorUsd, chosenUsd);
}
