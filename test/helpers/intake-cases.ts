import type { JobRunner, Requester } from '../../bots/runner/index.js';

/** The word the intake tables block, and put in every prompt. */
export const BLOCKED_WORD = 'kraken';

/** One way a member's next job is refused, and whether it applies to an entry point. */
export interface IntakeRefusal {
  code: string;
  /** A blocked word refuses only an entry point that carries a prompt (a form gets its own when it is sent). */
  appliesTo(entry: { prompted: boolean }): boolean;
  /** Makes the member's next job refused, as an admin of the server/workspace would (`elsewhere`: a channel that is not the member's). */
  apply(runner: JobRunner, admin: Requester, elsewhere: string): Promise<unknown>;
}

/** What refuses a job in the tables of entry points: the member's budget, and two rules of the server/workspace. */
export const INTAKE_REFUSALS: readonly IntakeRefusal[] = [
  { code: 'budget_user_daily', appliesTo: () => true, apply: (runner, admin) => runner.budgets.setCap(admin, 'userDailyUsd', 0) },
  { code: 'blocked_word', appliesTo: (entry) => entry.prompted, apply: (runner, admin) => runner.policy.set(admin, 'blockedWords', [BLOCKED_WORD]) },
  { code: 'channel_not_allowed', appliesTo: () => true, apply: (runner, admin, elsewhere) => runner.policy.set(admin, 'channels', [elsewhere]) },
];

/** Every entry point with every refusal that applies to it, as `it.each` rows: [entry name, code, case]. */
export function intakeCases<E extends { name: string; prompted: boolean }>(entries: readonly E[]) {
  return entries.flatMap((entry) => INTAKE_REFUSALS.filter((refusal) => refusal.appliesTo(entry)).map((refusal) => [entry.name, refusal.code, { entry, refusal }] as const));
}
