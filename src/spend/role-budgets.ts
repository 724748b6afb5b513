import { boundedByOperator } from './cap-overrides.js';
import type { SpendLimits } from './types.js';

/** The caps a role's budget stands in for: each member's own, per day and per month. */
export const MEMBER_CAPS = ['userDailyUsd', 'userMonthlyUsd'] as const;
export type MemberCap = (typeof MEMBER_CAPS)[number];

/** A budget chat admins gave a role (a Discord role, a Slack user group): what each member holding it may spend, per period. Unset: that period is not the role's. */
export interface RoleBudget {
  roleId: string;
  userDailyUsd?: number | undefined;
  userMonthlyUsd?: number | undefined;
}

/**
 * Which of a scope's roles the member holds: their ids, or `unknown` when the platform could not tell (a Slack
 * workspace whose user groups cannot be read and whose last known membership is too old).
 */
export type HeldRoles = readonly string[] | 'unknown';

/**
 * A scope's role budgets as its store could read them: the budgets, or `unreadable` when they are stored and cannot
 * be read (a damaged record): which roles have one, and how much, is then unknown.
 */
export type ScopeRoleBudgets = readonly RoleBudget[] | 'unreadable';

/**
 * Where a member's cap of one period comes from: the scope's cap of each member (`scope`), the most generous of
 * their roles' budgets (`role`), or the least generous that could apply — their roles unknown (`unknown_roles`), or
 * the scope's role budgets unreadable (`unreadable_budgets`: nothing, since any budget could be a role's).
 */
export type MemberCapSource = { kind: 'scope' } | { kind: 'role'; roleId: string } | { kind: 'unknown_roles'; roleId: string } | { kind: 'unreadable_budgets' };

export interface MemberLimits {
  /** The limits of the member's jobs: the scope's, their own caps replaced as `from` says. */
  limits: SpendLimits;
  from: Record<MemberCap, MemberCapSource>;
}

/**
 * The member's own caps, the one rule of role budgets. Per period, independently:
 * - a member holding one or more roles that have a budget of that period gets the most generous of them, in place
 *   of the scope's cap of each member (higher or lower than it);
 * - a member holding none keeps the scope's cap of each member;
 * - a member whose roles are unknown gets the least generous of the scope's cap of each member and every role
 *   budget of that period: what is unknown never widens a cap;
 * - a role's budget is bounded by the operator's cap of each member as every chat admin's cap is
 *   (`boundedByOperator`): it never goes above it;
 * - where the scope's role budgets cannot be read (`unreadable`), every member gets nothing (0) of either period:
 *   any amount could be a role's budget, so the least generous that could apply is none — a damaged record never
 *   lifts a restriction it held. Its admins fix it by setting the budgets again.
 * The scope's and the account's caps (and pace) are `scopeLimits`' own and stay as they are: a role never lifts them.
 * `scopeLimits` are the scope's limits (`effectiveLimits`: the operator's lowered by its chat admins); `operator` the
 * operator's own (the environment).
 */
export function memberLimits(operator: SpendLimits, scopeLimits: SpendLimits, roleBudgets: ScopeRoleBudgets, held: HeldRoles): MemberLimits {
  const limits: SpendLimits = { ...scopeLimits };
  const from: Record<MemberCap, MemberCapSource> = { userDailyUsd: { kind: 'scope' }, userMonthlyUsd: { kind: 'scope' } };
  for (const cap of MEMBER_CAPS) {
    if (roleBudgets === 'unreadable') {
      limits[cap] = 0;
      from[cap] = { kind: 'unreadable_budgets' };
      continue;
    }
    const budgets = roleBudgets.flatMap((role) => {
      const usd = role[cap];
      return usd === undefined ? [] : [{ roleId: role.roleId, usd: boundedByOperator(operator[cap], usd) }];
    });
    if (held === 'unknown') {
      const least = budgets.reduce<(typeof budgets)[number] | undefined>((min, b) => (min === undefined || b.usd < min.usd ? b : min), undefined);
      const scope = scopeLimits[cap];
      if (least && (scope === undefined || least.usd < scope)) {
        limits[cap] = least.usd;
        from[cap] = { kind: 'unknown_roles', roleId: least.roleId };
      }
      continue;
    }
    const most = budgets.filter((b) => held.includes(b.roleId)).reduce<(typeof budgets)[number] | undefined>((max, b) => (max === undefined || b.usd > max.usd ? b : max), undefined);
    if (most) {
      limits[cap] = most.usd;
      from[cap] = { kind: 'role', roleId: most.roleId };
    }
  }
  return { limits, from };
}
