import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { envBoolean, envNumber, envText, type Env } from '../core/env.js';
import type { SpendLimits } from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS } from './usage-records.js';

/** The spending caps an operator sets, in USD. Undefined means no cap. */
export type SpendCaps = Pick<
  SpendLimits,
  'accountDailyUsd' | 'accountMonthlyUsd' | 'userDailyUsd' | 'userMonthlyUsd' | 'scopeDailyUsd' | 'scopeMonthlyUsd'
>;

/** Which variable sets which cap. */
export const SPEND_CAP_VARIABLES = {
  PICTOR_ACCOUNT_DAILY_USD: 'accountDailyUsd',
  PICTOR_ACCOUNT_MONTHLY_USD: 'accountMonthlyUsd',
  PICTOR_USER_DAILY_USD: 'userDailyUsd',
  PICTOR_USER_MONTHLY_USD: 'userMonthlyUsd',
  PICTOR_SCOPE_DAILY_USD: 'scopeDailyUsd',
  PICTOR_SCOPE_MONTHLY_USD: 'scopeMonthlyUsd',
} as const satisfies Record<string, keyof SpendCaps>;

/**
 * Reads every spending cap from the environment: the one parser of these
 * variables, for every entry point (CLI, `npm start`). Unset or blank means no
 * cap (never zero); a bad value is a ValidationError naming the variable.
 */
export function readSpendCaps(env: Env): SpendCaps {
  const caps: SpendCaps = {};
  for (const [variable, field] of Object.entries(SPEND_CAP_VARIABLES)) caps[field] = readCap(env, variable);
  return caps;
}

/**
 * The chat bots' budget for each person outside servers and workspaces (Discord
 * DMs and user installs): `PICTOR_DM_DAILY_USD`, `PICTOR_DM_MONTHLY_USD`, read
 * as every other cap is.
 */
export function readDmCaps(env: Env): { dailyUsd: number | undefined; monthlyUsd: number | undefined } {
  return { dailyUsd: readCap(env, 'PICTOR_DM_DAILY_USD'), monthlyUsd: readCap(env, 'PICTOR_DM_MONTHLY_USD') };
}

/**
 * A person's own scope (Discord DMs and user installs) has the scope id `dm:<user id>`, so its scope key is
 * `<platform>:dm:<user id>`: its jobs count against the DM caps instead of a server's.
 */
export const DM_SCOPE_PREFIX = 'dm:';

/** Whether a scope key is a chat's (`<platform>:<id>`: a Discord server, a Slack workspace, a DM), not the CLI's or n8n's. */
export function isChatScopeKey(scopeKey: string): boolean {
  return scopeKey.includes(':');
}

/** Whether a scope key (`discord:dm:123`) is a person's own scope. */
export function isDmScopeKey(scopeKey: string): boolean {
  return scopeKey.slice(scopeKey.indexOf(':') + 1).startsWith(DM_SCOPE_PREFIX);
}

/** One cap: dollars, 0 or more; unset or blank is no cap (never zero). */
function readCap(env: Env, variable: string): number | undefined {
  return envNumber(env, variable, { min: 0, takes: 'a number of US dollars, 0 or more (leave it unset for no limit)' });
}

/** The caps that apply to every surface of the account (the CLI has no user or scope). */
export function accountCaps(caps: SpendCaps): SpendLimits {
  return { accountDailyUsd: caps.accountDailyUsd, accountMonthlyUsd: caps.accountMonthlyUsd };
}

/** The spend guard's settings: the caps, the data folder of the file ledger (used without `REDIS_URL`), and the usage records. */
export interface SpendConfig {
  caps: SpendCaps;
  /**
   * `PICTOR_DATA_DIR`: the file ledger's folder (and, for `npm start`, the bots' state). Default the program's own:
   * for the CLI the user's state folder (`$XDG_STATE_HOME/pictor`, else `~/.local/state/pictor`), so the CLI run
   * from any folder finds the same ledger; for `npm start`, `./.data`.
   */
  dataDir: string;
  /** `PICTOR_USAGE_PROMPTS=1`: keep each job's prompt in its usage record. Default off. */
  recordPrompts: boolean;
  /** `PICTOR_USAGE_RETENTION_DAYS`: how long usage records are kept. Default 400. */
  usageRetentionDays: number;
}

/** `PICTOR_USAGE_RETENTION_DAYS`: whole days from 1 to 3650, default 400; a bad value is a ValidationError naming it. */
export function readUsageRetentionDays(env: Env): number {
  return (
    envNumber(env, 'PICTOR_USAGE_RETENTION_DAYS', { int: true, min: 1, max: 3650, takes: 'a whole number of days from 1 to 3650' }) ??
    DEFAULT_USAGE_RETENTION_DAYS
  );
}

/** The user's state folder for Pictor: `$XDG_STATE_HOME/pictor`, else `~/.local/state/pictor` (the XDG base directory rule). */
export function userStateDir(env: Env): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  // The spec says a relative XDG_STATE_HOME is invalid and to be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'pictor');
  return join(env.HOME?.trim() || homedir(), '.local', 'state', 'pictor');
}

export function readSpendConfig(env: Env, defaultDataDir: string = userStateDir(env)): SpendConfig {
  const recordPrompts = envBoolean(env, 'PICTOR_USAGE_PROMPTS', '1 (keep prompts in usage records) or 0') ?? false;
  const days = readUsageRetentionDays(env);
  return {
    caps: readSpendCaps(env),
    dataDir: envText(env, 'PICTOR_DATA_DIR') ?? defaultDataDir,
    recordPrompts,
    usageRetentionDays: days,
  };
}
