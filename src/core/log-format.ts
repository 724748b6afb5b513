/**
 * How log lines look: `human` (one readable line: time, level, message, the simple fields) or `json` (pino's lines,
 * for machines). `npm start` picks human on a terminal and JSON elsewhere unless `PICTOR_LOG_FORMAT` says which; the
 * CLI speaks human unless told `json`. Secrets are already redacted by the logger before a line gets here.
 */
export const LOG_FORMATS = ['human', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every pino line has, shown in the line's head rather than as fields. */
const HEAD_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v']);

/** One pino JSON line as a human line: `12:03:04 WARN  lost the Redis connection (redis redis://…, surface slack)`. */
export function humanLogLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.trimEnd();
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 19) : '';
  const level = (LEVEL_NAMES[Number(entry.level)] ?? String(entry.level ?? '')).padEnd(5);
  const fields: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key) || value === undefined || value === null) continue;
    fields.push(`${key} ${describeValue(value)}`);
  }
  const message = typeof entry.msg === 'string' ? entry.msg : '';
  return `${time} ${level} ${message}${fields.length ? ` (${fields.join(', ')})` : ''}`.trim();
}

function describeValue(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') {
    // An error as pino serializes it: its type and message (the stack stays in JSON logs).
    const error = value as { type?: unknown; code?: unknown; message: string };
    return `${typeof error.type === 'string' ? `${error.type}: ` : ''}${error.message}${typeof error.code === 'string' || typeof error.code === 'number' ? ` [${error.code}]` : ''}`;
  }
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A pino destination that writes each line as a human line through `write` (e.g. to stderr). */
export function humanLogDestination(write: (line: string) => void): { write(chunk: string): void } {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line.trim()) write(`${humanLogLine(line)}\n`);
    },
  };
}
