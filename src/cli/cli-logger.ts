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

/** A field's value is cut after this many characters, and a list after this many items: a log line stays a line. */
const MAX_VALUE_CHARS = 300;
const MAX_LIST_ITEMS = 10;

/**
 * ` (key value, …)` for the fields of a log call: simple values as they are, an error as its code and message
 * (`err EISDIR: …`), a list as `[a, b, …]`. Each value is redacted before it is cut, so a cut never leaves part of a
 * secret showing; other objects are left out.
 */
function describeFields(fields: object): string {
  const parts = Object.entries(fields).flatMap(([key, value]) => {
    const text = describeValue(value);
    return text === undefined ? [] : [`${key} ${text}`];
  });
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function describeValue(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_LIST_ITEMS).map((item) => (Array.isArray(item) ? undefined : describeValue(item)) ?? '…');
    const more = value.length > MAX_LIST_ITEMS ? `, … (${value.length} in all)` : '';
    return bounded(`[${items.join(', ')}${more}]`);
  }
  if (value instanceof Error) return bounded(describeError(value));
  if (['string', 'number', 'boolean', 'bigint'].includes(typeof value)) return bounded(String(value));
  return undefined;
}

/** `code: message`, the code being the error's stable `code` (ours, or Node's `EISDIR`…), else its name when not plain `Error`. */
function describeError(error: Error): string {
  const code = (error as { code?: unknown }).code;
  const label = typeof code === 'string' || typeof code === 'number' ? String(code) : error.name !== 'Error' ? error.name : undefined;
  const message = error.message || '(no message)';
  return label === undefined || message.startsWith(label) ? message : `${label}: ${message}`;
}

function bounded(text: string): string {
  const hidden = redactSecrets(text);
  return hidden.length > MAX_VALUE_CHARS ? `${hidden.slice(0, MAX_VALUE_CHARS - 1)}…` : hidden;
}
