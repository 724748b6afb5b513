import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ValidationError } from './errors.js';
import { redactSecrets } from './redact-secrets.js';
import { describeFileError, systemErrorCode } from './system-errors.js';
import { MAX_TIMER_MS } from './timer-ms.js';

/**
 * The one way settings are read from environment variables, by every config
 * reader of every entry point (`npm start`, the CLI, `npm run discord:deploy`):
 *
 * - unset or blank means "not set" (so the default, or "no limit", applies — never zero or an empty string);
 * - values are trimmed (a value read from a file often ends in a line break);
 * - a bad value is a ValidationError whose `param` is the variable and whose message says what it takes:
 *   `NAME must be <what it takes> (got "<value>")`, without the value when it may hold a secret (see `envError`).
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** The variable's value, trimmed; undefined when it is unset or blank. */
export function envText(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  return value === '' ? undefined : value;
}

/**
 * A refusal naming the variable and what it takes; the value is quoted unless it may hold a secret: a variable told
 * `secret`, or one whose line `NAME=value` the one redaction (`redactSecrets`) would change — a variable named as a
 * credential (`…_TOKEN`, `…_SECRET`, `…_PASSWORD`, `…_API_KEY`), or a value holding a credential's shape (a URL's
 * password, `https://user:pass@host`, a key, a token of a known service).
 */
export function envError(env: Env, name: string, takes: string, options: { secret?: boolean } = {}): ValidationError {
  const raw = env[name];
  const line = `${name}=${raw ?? ''}`;
  const secret = options.secret || redactSecrets(line) !== line;
  const got = !secret && typeof raw === 'string' ? ` (got ${JSON.stringify(raw)})` : '';
  return new ValidationError(name, `${name} must be ${takes}${got}`);
}

export interface NumberRule {
  /** Whole numbers only. */
  int?: boolean;
  min?: number;
  max?: number;
  /** What it takes, in words (e.g. "a number of seconds, 0 or more"); default from the rule. */
  takes?: string;
}

/**
 * A number as a person writes one: decimal digits, perhaps a sign and a decimal point (`12`, `-3`, `0.5`, `.5`). Not
 * `0x10`, `0b1`, `0o7` or `1e3`, which JavaScript's `Number` reads as 16, 1, 7 and 1000: a setting written so is a slip.
 */
const DECIMAL = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/;

/** A number within a range, written in decimal (finite; whole with `int`); undefined when unset or blank. */
export function envNumber(env: Env, name: string, rule: NumberRule = {}): number | undefined {
  const text = envText(env, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  const takes = rule.takes ?? describeNumberRule(rule);
  // A form JavaScript reads as a number but a person does not write (0x10) is named as such.
  if (!DECIMAL.test(text)) throw envError(env, name, Number.isNaN(value) ? takes : `${takes}, written in decimal digits`);
  const ok =
    Number.isFinite(value) &&
    (!rule.int || Number.isInteger(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max);
  if (!ok) throw envError(env, name, takes);
  return value;
}

/**
 * A number of seconds that a timer waits: from `min` to what a Node timer holds (2^31 − 1 ms, about 24.8 days), less
 * `plusMs` when the timer waits that much more on top (a timer given longer fires at once): the
 * bound of a setting of seconds a timer waits on; undefined when unset or blank.
 */
export function envSeconds(env: Env, name: string, rule: { min: number; plusMs?: number }): number | undefined {
  const max = Math.floor((MAX_TIMER_MS - (rule.plusMs ?? 0)) / 1000);
  return envNumber(env, name, { min: rule.min, max, takes: `a number of seconds from ${rule.min} to ${max} (about ${Math.floor(max / 86_400)} days, the longest a timer waits)` });
}

function describeNumberRule(rule: NumberRule): string {
  const kind = rule.int ? 'a whole number' : 'a number';
  if (rule.min !== undefined && rule.max !== undefined) return `${kind} from ${rule.min} to ${rule.max}`;
  if (rule.min !== undefined) return `${kind}, ${rule.min} or more`;
  if (rule.max !== undefined) return `${kind}, ${rule.max} or less`;
  return kind;
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];

/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (any case); undefined when unset or blank. */
export function envBoolean(env: Env, name: string, takes = '1 or 0'): boolean | undefined {
  const text = envText(env, name)?.toLowerCase();
  if (text === undefined) return undefined;
  if (TRUE_WORDS.includes(text)) return true;
  if (FALSE_WORDS.includes(text)) return false;
  throw envError(env, name, takes);
}

/** One of a fixed set of words (any case); undefined when unset or blank. */
export function envChoice<T extends string>(env: Env, name: string, choices: readonly T[]): T | undefined {
  const text = envText(env, name)?.toLowerCase();
  if (text === undefined) return undefined;
  const choice = choices.find((c) => c === text);
  if (choice === undefined) throw envError(env, name, `one of ${choices.join(', ')}`);
  return choice;
}

/** A list separated by commas and/or white space (empty items dropped); undefined when unset or blank. */
export function envList(env: Env, name: string, separator: RegExp = /[\s,]+/): string[] | undefined {
  const text = envText(env, name);
  if (text === undefined) return undefined;
  const items = text
    .split(separator)
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
}

/** A URL of one of `protocols` (default http and https) with a host; undefined when unset or blank. */
export function envUrl(env: Env, name: string, options: { protocols?: readonly string[]; example: string; secret?: boolean }): string | undefined {
  const text = envText(env, name);
  if (text === undefined) return undefined;
  const protocols = options.protocols ?? ['http', 'https'];
  let ok = false;
  try {
    const url = new URL(text);
    ok = protocols.includes(url.protocol.replace(/:$/, '')) && url.host !== '';
  } catch {
    ok = false;
  }
  if (!ok) {
    const kinds = protocols.length === 2 && protocols.includes('http') && protocols.includes('https') ? 'an http(s)' : `a ${protocols.map((p) => `${p}://`).join(' or ')}`;
    throw envError(env, name, `${kinds} URL, e.g. ${options.example}`, { secret: options.secret });
  }
  return text;
}

/**
 * The folder a setting names (`dir`: its value, or the program's default when it is unset), made if missing (0700,
 * with the parents it makes) and checked writable, as an absolute path: else a ValidationError naming the variable, thrown before anything runs
 * (rather than a system error from whatever first writes there).
 */
export function writableFolder(name: string, dir: string): string {
  const path = resolve(dir);
  let why: string | undefined;
  try {
    // It may hold prompts (the ledger, the bots' state): made for this user only, the parents it makes too; a folder
    // that is there keeps the mode its operator gave it.
    mkdirSync(path, { recursive: true, mode: 0o700 });
    if (!statSync(path).isDirectory()) why = 'is a file, not a folder';
    else accessSync(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = systemErrorCode(error);
    why =
      code === 'EEXIST' ? 'is a file, not a folder' : code === 'ENOTDIR' ? 'is inside a file, not a folder' : `cannot be made or written in (${describeFileError(error)})`;
  }
  if (why !== undefined) throw new ValidationError(name, `${name} must be a folder this process can write in: ${path} ${why}`);
  return path;
}
