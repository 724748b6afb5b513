import { LogLevel, type Logger as BoltLogger } from '@slack/bolt';
import { type LoggerLike } from 'pictor';
import { redactSecrets, scrubSecrets } from 'pictor/internal';

const RANK: Record<LogLevel, number> = { [LogLevel.DEBUG]: 10, [LogLevel.INFO]: 20, [LogLevel.WARN]: 30, [LogLevel.ERROR]: 40 };

/**
 * Bolt's logger interface over ours (a pino logger fits). Bolt and its web
 * client log free text; every known secret is scrubbed from it first, and then
 * every credential shape the project's one redaction knows (a workspace's bot
 * token, not known at start with OAuth; an app-level token; a Bearer header).
 */
export function boltLoggerFor(logger: LoggerLike, secrets: readonly (string | undefined)[]): BoltLogger {
  let level: LogLevel = LogLevel.INFO;
  let name = 'slack';
  const line = (parts: unknown[]): string =>
    redactSecrets(
      scrubSecrets(
        parts
          .map((p) => (p instanceof Error ? `${p.name}: ${p.message}` : typeof p === 'string' ? p : safeJson(p)))
          .join(' '),
        secrets,
      ),
    );
  const emit = (at: LogLevel, parts: unknown[]) => {
    if (RANK[at] < RANK[level]) return;
    const fields = { component: name };
    const text = line(parts);
    if (at === LogLevel.DEBUG) logger.debug(fields, text);
    else if (at === LogLevel.INFO) logger.info(fields, text);
    else if (at === LogLevel.WARN) logger.warn(fields, text);
    else logger.error(fields, text);
  };
  return {
    debug: (...msg: unknown[]) => emit(LogLevel.DEBUG, msg),
    info: (...msg: unknown[]) => emit(LogLevel.INFO, msg),
    warn: (...msg: unknown[]) => emit(LogLevel.WARN, msg),
    error: (...msg: unknown[]) => emit(LogLevel.ERROR, msg),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: (next: string) => {
      name = next;
    },
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
