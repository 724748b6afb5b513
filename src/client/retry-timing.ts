/** Every form of "wait before retrying", parsed in one place. */

const MAX_WAIT_MS = 5 * 60_000;

/** `retry-after-ms`, then `retry-after` (seconds or an HTTP date); undefined when neither says. */
export function retryAfterFromHeaders(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return Math.min(value, MAX_WAIT_MS);
  }
  const after = headers['retry-after'];
  if (after !== undefined) {
    const seconds = Number.parseFloat(after);
    if (Number.isFinite(seconds) && /^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.min(Math.max(0, seconds * 1000), MAX_WAIT_MS);
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.min(Math.max(0, date - now), MAX_WAIT_MS);
  }
  return undefined;
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

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
