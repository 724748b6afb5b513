import { ValidationError } from 'pictor';
import { readRedisConfig, type RedisConfig, accountCaps, readSpendCaps, type SpendLimits } from 'pictor/internal';
import { defaultLedgerFolder, type LedgerKey } from './spend-registry.js';

/** What the node reads from its "Pictor API" credential (the Redis fields are absent on credentials saved before they existed). */
export interface PictorCredentials {
  apiKey: string;
  baseUrl: string;
  /** Empty: the limiter is this n8n process's own. */
  redisUrl?: string | undefined;
  /** One per account; empty means the core's default. */
  redisPrefix?: string | undefined;
  /** USD per UTC day / month for the whole account; empty means no cap (absent on credentials saved before they existed). */
  accountDailyUsd?: string | number | undefined;
  accountMonthlyUsd?: string | number | undefined;
  /** The file ledger's folder (without Redis); empty means the default in n8n's folder. */
  ledgerFolder?: string | undefined;
}

/** The credential fields of the account caps, by the core's variable (the one parser every surface uses). */
const CAP_FIELDS = {
  PICTOR_ACCOUNT_DAILY_USD: { field: 'accountDailyUsd', displayName: 'Account Daily Cap (USD)' },
  PICTOR_ACCOUNT_MONTHLY_USD: { field: 'accountMonthlyUsd', displayName: 'Account Monthly Cap (USD)' },
} as const;

const text = (value: unknown) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');

/** The account's caps from the credential, read by the core's `readSpendCaps`; throws its ValidationError (`param` the variable) for a bad value. */
export function capsOf(credentials: PictorCredentials): SpendLimits {
  return accountCaps(
    readSpendCaps({ PICTOR_ACCOUNT_DAILY_USD: text(credentials.accountDailyUsd), PICTOR_ACCOUNT_MONTHLY_USD: text(credentials.accountMonthlyUsd) }),
  );
}

/** Where the node counts its spending and what it enforces there (see spend-registry). */
export function ledgerOf(credentials: PictorCredentials): LedgerKey {
  const folder = text(credentials.ledgerFolder).trim();
  return { limits: capsOf(credentials), redis: sharedLimitsOf(credentials), ledgerFolder: folder === '' ? defaultLedgerFolder() : folder };
}

export const CREDENTIAL_NAME = 'pictorApi';

/**
 * Where processes sharing the account's limits meet, from the credential's
 * Redis URL and Key Prefix (checked by the core's `readRedisConfig`);
 * undefined when the Redis URL is empty. Throws the core's ValidationError
 * (`param` REDIS_URL or PICTOR_REDIS_PREFIX) for a bad value.
 */
export function sharedLimitsOf(credentials: PictorCredentials): RedisConfig | undefined {
  const url = typeof credentials.redisUrl === 'string' ? credentials.redisUrl : '';
  // The prefix has a default in the credential, so it only counts once a Redis URL is set.
  if (url.trim() === '') return undefined;
  const prefix = typeof credentials.redisPrefix === 'string' ? credentials.redisPrefix : '';
  return readRedisConfig({ REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix });
}

/** What is wrong with a credential: the message (naming the field as the form shows it) and the credential field at fault. */
export interface CredentialProblem {
  message: string;
  field: keyof PictorCredentials;
}

/** Why a credential cannot work, before anything is sent; undefined when it may. Never echoes the Redis URL (it can hold a password). */
export function credentialProblem(credentials: PictorCredentials): CredentialProblem | undefined {
  if (typeof credentials.apiKey !== 'string' || credentials.apiKey.trim() === '') return { field: 'apiKey', message: 'Pictor API credential: the API Key is empty' };
  const baseUrl = String(credentials.baseUrl ?? '');
  if (baseUrl.trim() === '') return { field: 'baseUrl', message: 'Pictor API credential: the Base URL is empty; set the address of your image service' };
  if (!(URL.canParse(baseUrl.trim()) && /^https?:$/.test(new URL(baseUrl.trim()).protocol))) {
    return { field: 'baseUrl', message: `Pictor API credential: the Base URL ${JSON.stringify(baseUrl)} is not an http(s) address` };
  }
  try {
    capsOf(credentials);
  } catch (error) {
    const cap = (error instanceof ValidationError && CAP_FIELDS[error.param as keyof typeof CAP_FIELDS]) || CAP_FIELDS.PICTOR_ACCOUNT_DAILY_USD;
    const value = cap.field === 'accountDailyUsd' ? credentials.accountDailyUsd : credentials.accountMonthlyUsd;
    return {
      field: cap.field,
      message: `Pictor API credential: the ${cap.displayName} ${JSON.stringify(value)} is not a number of US dollars; use 0 or more (e.g. 5 or 12.50), or leave it empty for no cap`,
    };
  }
  try {
    sharedLimitsOf(credentials);
  } catch (error) {
    if (error instanceof ValidationError && error.param === 'PICTOR_REDIS_PREFIX') {
      return {
        field: 'redisPrefix',
        message: `Pictor API credential: the Redis Key Prefix ${JSON.stringify(credentials.redisPrefix)} is not valid; use 1 to 64 letters, digits, _ . : or -, starting with a letter or digit`,
      };
    }
    return {
      field: 'redisUrl',
      message: 'Pictor API credential: the Redis URL is not a redis:// or rediss:// address (e.g. redis://127.0.0.1:6379); leave it empty to limit this n8n process on its own',
    };
  }
  return undefined;
}
