import { destination, pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { redactSecrets } from './redact-secrets.js';

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
  /** Known secret values to scrub from any string that is logged (for free-text messages). */
  secrets?: readonly (string | undefined)[] | undefined;
}

/** Replaces every known secret value in a string. */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}

export function createLogger(config: LoggerConfig = {}): Logger {
  const secrets = (config.secrets ?? []).filter((s): s is string => !!s && s.length >= 4);
  const options: LoggerOptions = {
    level: config.level ?? 'info',
    name: config.name ?? 'pictor',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: {
      ...(secrets.length && {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a, secrets) : a)) as typeof args;
          method.apply(this, scrubbed);
        },
      }),
      streamWrite: redactLogLine,
    },
    formatters: secrets.length
      ? {
          log(object) {
            return JSON.parse(scrubSecrets(JSON.stringify(object), secrets)) as Record<string, unknown>;
          },
        }
      : {},
  };
  return pino(options, config.destination ?? destination(2));
}

/**
 * A log line (pino's JSON) with every credential shape `redactSecrets` knows hidden in its strings — a token of
 * another service, a password field a library echoed in an error — as error messages are: the line stays JSON (the
 * strings are redacted one by one, the keys and the rest as they were). A line with nothing to hide is written as it is.
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
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactStrings(inner)]));
  return value;
}

/** A logger that drops everything: the default for library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
