import type { LoggerLike } from '../client/PictorClient.js';
import { envChoice, envText } from '../core/env.js';
import { LOG_FORMATS } from '../core/log-format.js';
import { redactSecrets, registerSecret } from '../core/redact-secrets.js';
import { cleanForTerminal } from './terminal-text.js';

/**
 * The CLI's logger. The CLI already tells the user what happens in sentences
 * (queued, retrying, written), so by default its log says nothing below
 * `error`, and says it as one human line on stderr. `PICTOR_LOG_LEVEL` set
 * explicitly shows more, still as sentences; `PICTOR_LOG_FORMAT=json` gives
 * the core's JSON log lines (pino) for machines. A command that runs as a
 * long-running server (`pictor console`) gives its own `defaultLevel`, used
 * in either format while `PICTOR_LOG_LEVEL` is not set.
 */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

export async function createCliLogger(options: {
  env: NodeJS.ProcessEnv;
  level: string;
  /** The level while `PICTOR_LOG_LEVEL` is not set; default `error` for human lines, `level` for JSON. */
  defaultLevel?: string | undefined;
  secrets: readonly (string | undefined)[];
  line: (text: string) => void;
}): Promise<LoggerLike> {
  const format = envChoice(options.env, 'PICTOR_LOG_FORMAT', LOG_FORMATS) ?? 'human';
  const chosen = envText(options.env, 'PICTOR_LOG_LEVEL') !== undefined;
  if (format === 'json') {
    const { createLogger } = await import('../core/logger.js');
    return createLogger({ level: chosen ? options.level : (options.defaultLevel ?? options.level), secrets: options.secrets });
  }
  const level = chosen ? options.level : (options.defaultLevel ?? 'error');
  const threshold = level === 'silent' ? Infinity : LEVELS.indexOf(level as (typeof LEVELS)[number]);
  // The one redaction hides them from here on, in every form a line may echo them (JSON-escaped, URL-encoded, base64),
  // in this logger's lines and in every error.
  for (const secret of options.secrets) registerSecret(secret);
  const at =
    (name: (typeof LEVELS)[number]) =>
    (fields: object, message?: string): void => {
      if (LEVELS.indexOf(name) < threshold) return;
      options.line(redactSecrets(cleanForTerminal(`pictor: ${name === 'info' || name === 'error' ? '' : `${name}: `}${message ?? ''}${describeFields(fields)}`)));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** ` (key value, …)` for the simple fields of a log call. */
function describeFields(fields: object): string {
  const parts = Object.entries(fields)
    .filter(([, value]) => value !== undefined && ['string', 'number', 'boolean'].includes(typeof value))
    .map(([key, value]) => `${key} ${String(value)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
