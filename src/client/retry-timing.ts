/** Every form of "wait before retrying", parsed in one place. */

/**
 * An HTTP-date as `retry-after` may carry it (RFC 9110: IMF-fixdate, or the
 * obsolete RFC 850 and asctime forms). Anything else is not a date, however
 * leniently `Date.parse` would read it (`-5` and `abc 12` parse as years).
 */
const HTTP_DATE = [
  /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/**
 * `retry-after-ms`, then `retry-after` (delay-seconds or an HTTP-date);
 * undefined when neither says anything valid. Negative, fractional-garbage or
 * non-numeric values are ignored, so the caller falls back to its backoff.
 * No upper clamp: a caller compares a long wait with the time it has left.
 */
function retryAfterFromHeaders(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms']?.trim();
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) {
    const value = Number(ms);
    if (Number.isFinite(value)) return value;
  }
  const after = headers['retry-after']?.trim();
  if (after !== undefined) {
    if (/^\d+(\.\d+)?$/.test(after)) {
      const seconds = Number(after);
      if (Number.isFinite(seconds)) return seconds * 1000;
    }
    if (HTTP_DATE.some((re) => re.test(after))) {
      const date = Date.parse(after);
      if (Number.isFinite(date)) return Math.max(0, date - now);
    }
  }
  return undefined;
}

/**
 * The wait the service named in an answer: `retry-after-ms`, then `retry-after` (`retryAfterFromHeaders`), then
 * `x-ratelimit-reset-requests`, the time until its requests limit resets (a duration such as `1s` or `6m0s`). The
 * reset counts only while that limit has no request left (`x-ratelimit-remaining-requests` is 0 or not sent): the
 * service sends it on every answer, and the reset of a limit with requests to spare names no wait. The client's
 * retries and the chat bots' words read this one function, so the n8n node (`stoppedFor`) and a chat member are told
 * the same wait.
 */
export function serviceWaitFromHeaders(headers: Record<string, string>, now = Date.now()): number | undefined {
  const asked = retryAfterFromHeaders(headers, now);
  if (asked !== undefined) return asked;
  const remaining = headers['x-ratelimit-remaining-requests']?.trim();
  const reset = headers['x-ratelimit-reset-requests'];
  if (reset === undefined || (remaining !== undefined && remaining !== '0')) return undefined;
  return parseResetDuration(reset);
}

/**
 * The wait an answered error carries: the one its `RateLimitError` holds (`retryAfterMs`, read from the same headers
 * when the client made it), else the one its headers name.
 */
export function serviceWaitOf(error: { retryAfterMs?: number | undefined; headers?: Record<string, string> | undefined }): number | undefined {
  return error.retryAfterMs ?? (error.headers ? serviceWaitFromHeaders(error.headers) : undefined);
}

/** 0.5 s × 2^attempt, at most 8 s, with up to 25 % jitter taken off. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(500 * 2 ** attempt, 8000);
  return Math.round(base * (1 - random() * 0.25));
}

/** "1s", "6m0s", "1h2m3.5s", "250ms" → milliseconds (the x-ratelimit-reset-* form). */
export function parseResetDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = false;
  for (const m of text.matchAll(re)) {
    matched = true;
    const value = Number(m[1]);
    total += m[2] === 'h' ? value * 3_600_000 : m[2] === 'm' ? value * 60_000 : m[2] === 's' ? value * 1000 : value;
  }
  return matched ? total : undefined;
}
