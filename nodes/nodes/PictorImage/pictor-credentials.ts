import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ValidationError } from 'pictor';
import { checkApiKey, readRedisConfig, type RedisConfig, accountCaps, readSpendCaps, redactSecrets, registerSecret, type SpendLimits } from 'pictor/internal';
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

/**
 * The credential as the node uses it: the API Key without the spaces or line breaks a paste leaves around it, as the
 * credential's test sends it (`PictorApi.credentials.ts`), so a key that passes the test is the key every item sends.
 */
export function credentialsOf(raw: PictorCredentials): PictorCredentials {
  return typeof raw.apiKey === 'string' ? { ...raw, apiKey: raw.apiKey.trim() } : raw;
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
  return { limits: capsOf(credentials), redis: sharedLimitsOf(credentials), ledgerFolder: ledgerFolderOf(credentials) ?? defaultLedgerFolder() };
}

/**
 * The Ledger Folder as typed, with a leading `~` or `~/` meaning the home folder of the user n8n runs as (as the
 * field's placeholder shows it; no shell expands it here); undefined when empty. A relative path is kept as typed:
 * `credentialProblem` refuses it, since n8n's working folder differs between its main process and its workers.
 */
export function ledgerFolderOf(credentials: PictorCredentials, home: string = homedir()): string | undefined {
  const folder = text(credentials.ledgerFolder).trim();
  if (folder === '') return undefined;
  if (folder === '~') return home;
  if (folder.startsWith('~/')) return join(home, folder.slice(2));
  return folder;
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

/** A run of characters a key is made of, long enough to be one of no known shape (the known shapes `redactSecrets` finds). */
const KEY_LIKE = /[A-Za-z0-9_+=-]{20,}/;
/** The most characters of a field's value an error quotes: a slip of typing is shorter than a pasted key. */
const MAX_QUOTED = 80;
/** The userinfo of an address (`user:password@`), which is never shown. */
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/;

/**
 * A field's name as an error shows it, with its value quoted after it only when that is plainly harmless (an address
 * without its userinfo); a value that may be a secret pasted into the wrong field — anything `redactSecrets` would hide
 * (the API key among them, registered as a secret first), a long run of key characters, or just long — is left out,
 * and the error says why.
 */
function fieldWithValue(name: string, value: unknown): { named: string; hidden: string } {
  const shown = text(value).replace(USERINFO, '$1');
  const secret = shown.length > MAX_QUOTED || KEY_LIKE.test(shown) || redactSecrets(shown) !== shown;
  if (!secret) return { named: `${name} ${JSON.stringify(shown)}`, hidden: '' };
  return { named: name, hidden: ` (what it holds is not shown: it may be a key; the API Key has its own field)` };
}

/**
 * Why a credential cannot work, before anything is sent; undefined when it may. Never echoes the Redis URL (it can hold
 * a password), nor the API key pasted into another field: the key is registered as a secret, so that `redactSecrets`
 * hides it in every message of this process, these first (see `fieldWithValue`).
 */
export function credentialProblem(credentials: PictorCredentials): CredentialProblem | undefined {
  if (typeof credentials.apiKey !== 'string' || credentials.apiKey.trim() === '') return { field: 'apiKey', message: 'Pictor API credential: the API Key is empty' };
  const apiKey = credentials.apiKey.trim();
  registerSecret(apiKey);
  try {
    checkApiKey(apiKey, 'apiKey');
  } catch {
    return { field: 'apiKey', message: 'Pictor API credential: the API Key has a space, a line break or a non-ASCII character inside it; paste the key again' };
  }
  const baseUrl = String(credentials.baseUrl ?? '');
  if (baseUrl.trim() === '') return { field: 'baseUrl', message: 'Pictor API credential: the Base URL is empty; set the address of your image service' };
  if (!(URL.canParse(baseUrl.trim()) && /^https?:$/.test(new URL(baseUrl.trim()).protocol))) {
    const { named, hidden } = fieldWithValue('Base URL', baseUrl);
    return { field: 'baseUrl', message: `Pictor API credential: the ${named} is not an http(s) address${hidden}` };
  }
  try {
    capsOf(credentials);
  } catch (error) {
    const cap = (error instanceof ValidationError && CAP_FIELDS[error.param as keyof typeof CAP_FIELDS]) || CAP_FIELDS.PICTOR_ACCOUNT_DAILY_USD;
    const value = cap.field === 'accountDailyUsd' ? credentials.accountDailyUsd : credentials.accountMonthlyUsd;
    const { named, hidden } = fieldWithValue(cap.displayName, value);
    return {
      field: cap.field,
      message: `Pictor API credential: the ${named} is not a number of US dollars${hidden}; use 0 or more (e.g. 5 or 12.50), or leave it empty for no cap`,
    };
  }
  const folder = ledgerFolderOf(credentials);
  if (folder !== undefined && !isAbsolute(folder)) {
    const { named, hidden } = fieldWithValue('Ledger Folder', credentials.ledgerFolder);
    return {
      field: 'ledgerFolder',
      message: `Pictor API credential: the ${named} is not an absolute path${hidden}; give a full path (e.g. /home/node/.n8n/pictor or ~/.n8n/pictor), or leave it empty for pictor in n8n's folder`,
    };
  }
  try {
    sharedLimitsOf(credentials);
  } catch (error) {
    if (error instanceof ValidationError && error.param === 'PICTOR_REDIS_PREFIX') {
      return {
        field: 'redisPrefix',
        message: `Pictor API credential: the Redis Key Prefix ${redactSecrets(JSON.stringify(credentials.redisPrefix))} is not valid; use 1 to 64 letters, digits, _ . : or -, starting with a letter or digit`,
      };
    }
    return {
      field: 'redisUrl',
      message: 'Pictor API credential: the Redis URL is not a redis:// or rediss:// address whose path is empty or a database number (e.g. redis://127.0.0.1:6379 or redis://127.0.0.1:6379/2); leave it empty to limit this n8n process on its own',
    };
  }
  return undefined;
}
