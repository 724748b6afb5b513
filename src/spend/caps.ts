import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ValidationError } from '../core/errors.js';
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
export function readSpendCaps(env: NodeJS.ProcessEnv): SpendCaps {
  const caps: SpendCaps = {};
  for (const [variable, field] of Object.entries(SPEND_CAP_VARIABLES)) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') {
      caps[field] = undefined;
      continue;
    }
    const usd = Number(raw.trim());
    if (!(Number.isFinite(usd) && usd >= 0)) {
      throw new ValidationError(variable, `${variable} must be a number of US dollars, 0 or more (leave it unset for no limit) (got ${JSON.stringify(raw)})`);
    }
    caps[field] = usd;
  }
  return caps;
}

/** The caps that apply to every surface of the account (the CLI has no user or scope). */
export function accountCaps(caps: SpendCaps): SpendLimits {
  return { accountDailyUsd: caps.accountDailyUsd, accountMonthlyUsd: caps.accountMonthlyUsd };
}

/** The spend guard's settings: the caps, the data folder of the file ledger (used without `REDIS_URL`), and the usage records. */
export interface SpendConfig {
  caps: SpendCaps;
  /**
   * `PICTOR_DATA_DIR`: the CLI's file ledger. Default the user's state folder
   * (`$XDG_STATE_HOME/pictor`, else `~/.local/state/pictor`), so the CLI run
   * from any folder finds the same ledger. (`npm start` keeps its own default,
   * `./.data`.)
   */
  dataDir: string;
  /** `PICTOR_USAGE_PROMPTS=1`: keep each job's prompt in its usage record. Default off. */
  recordPrompts: boolean;
  /** `PICTOR_USAGE_RETENTION_DAYS`: how long usage records are kept. Default 400. */
  usageRetentionDays: number;
}

/** `PICTOR_USAGE_RETENTION_DAYS`: whole days from 1 to 3650, default 400; a bad value is a ValidationError naming it. */
export function readUsageRetentionDays(env: NodeJS.ProcessEnv): number {
  const retention = env.PICTOR_USAGE_RETENTION_DAYS?.trim() ?? '';
  const days = retention === '' ? DEFAULT_USAGE_RETENTION_DAYS : Number(retention);
  if (!(Number.isInteger(days) && days >= 1 && days <= 3650)) {
    throw new ValidationError('PICTOR_USAGE_RETENTION_DAYS', `PICTOR_USAGE_RETENTION_DAYS must be a whole number of days from 1 to 3650 (got ${JSON.stringify(env.PICTOR_USAGE_RETENTION_DAYS)})`);
  }
  return days;
}

/** The user's state folder for Pictor: `$XDG_STATE_HOME/pictor`, else `~/.local/state/pictor` (the XDG base directory rule). */
export function userStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  // The spec says a relative XDG_STATE_HOME is invalid and to be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'pictor');
  return join(env.HOME?.trim() || homedir(), '.local', 'state', 'pictor');
}

export function readSpendConfig(env: NodeJS.ProcessEnv): SpendConfig {
  const prompts = env.PICTOR_USAGE_PROMPTS?.trim() ?? '';
  if (!['', '0', '1', 'true', 'false'].includes(prompts.toLowerCase())) {
    throw new ValidationError('PICTOR_USAGE_PROMPTS', `PICTOR_USAGE_PROMPTS must be 1 (keep prompts in usage records) or 0 (got ${JSON.stringify(env.PICTOR_USAGE_PROMPTS)})`);
  }
  const days = readUsageRetentionDays(env);
  return {
    caps: readSpendCaps(env),
    dataDir: env.PICTOR_DATA_DIR?.trim() || userStateDir(env),
    recordPrompts: prompts === '1' || prompts.toLowerCase() === 'true',
    usageRetentionDays: days,
  };
}

/** The caps in the order they are checked (the rulebook's). */
export { budgetsOf } from './rules.js';
