import { destination, pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { redactSecrets, registerSecret } from './redact-secrets.js';

/**
 * Paths pino blanks out at every level: API keys, bot tokens, signing secrets
 * and Authorization headers, wherever they sit in a logged object.
 */
export const REDACT_PATHS = [
  'apiKey',
  'api_key',
  'token',
  'botToken',
  'appToken',
  'signingSecret',
  'password',
  'authorization',
  'Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.botToken',
  '*.appToken',
  '*.signingSecret',
  '*.password',
  '*.authorization',
  '*.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
];

export type { Logger };

export interface LoggerConfig {
  level?: string | undefined;
  name?: string | undefined;
  /** Where lines go; defaults to stderr so stdout stays for command output. */
  destination?: DestinationStream | undefined;
  /**
   * Known secret values to hide from every string that is logged (free-text messages, nested fields, bindings, keys):
   * they are registered with the one redaction (`registerSecret`), the process's, so errors and every other logger of
   * the process hide them too, from then on (see `redact-secrets.ts`).
   */
  secrets?: readonly (string | undefined)[] | undefined;
}

/**
 * `text` with `secrets` and every credential shape hidden: the secrets are registered with the one redaction
 * (`registerSecret`, so errors and log lines hide them from then on too) and the text goes through `redactSecrets`.
 */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  for (const secret of secrets) registerSecret(secret);
  return redactSecrets(text);
}

export function createLogger(config: LoggerConfig = {}): Logger {
  for (const secret of config.secrets ?? []) registerSecret(secret);
  const options: LoggerOptions = {
    level: config.level ?? 'info',
    name: config.name ?? 'pictor',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: { streamWrite: redactLogLine },
  };
  return pino(options, config.destination ?? destination(2));
}

/**
 * A log line (pino's JSON) with every registered secret and every credential shape `redactSecrets` knows hidden in its
 * strings — the key, a token of another service, a password field a library echoed in an error — as error messages
 * are: the line stays JSON (its strings and keys are redacted one by one, the rest as it was). A line with nothing to
 * hide is written as it is.
 */
export function redactLogLine(line: string): string {
  if (redactSecrets(line) === line) return line;
  try {
    const end = line.endsWith('\n') ? '\n' : '';
    return `${JSON.stringify(redactStrings(JSON.parse(line)))}${end}`;
  } catch {
    return redactSecrets(line);
  }
}

function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactStrings);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redactSecrets(key), redactStrings(inner)]));
  return value;
}

/** A logger that drops everything: the default for library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
